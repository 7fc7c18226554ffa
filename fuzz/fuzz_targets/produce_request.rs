//! Fuzz target `produce_request`: see `harness` for the properties checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let check = kafka_streams_group_fuzz::harness::target("produce_request")
        .expect("target is registered");
    check(data);
});
