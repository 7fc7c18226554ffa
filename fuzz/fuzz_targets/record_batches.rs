//! Fuzz target `record_batches`: see `harness::record_batches` for the properties checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let check =
        kafka_streams_group_fuzz::harness::target("record_batches").expect("target is registered");
    check(data);
});
