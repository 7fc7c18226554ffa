//! Fuzz target `delete_records_response`: see `harness` for the properties checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let check = kafka_streams_group_fuzz::harness::target("delete_records_response")
        .expect("target is registered");
    check(data);
});
