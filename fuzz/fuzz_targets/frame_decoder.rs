//! Fuzz target `frame_decoder`: see `harness` for the properties checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let check =
        kafka_streams_group_fuzz::harness::target("frame_decoder").expect("target is registered");
    check(data);
});
