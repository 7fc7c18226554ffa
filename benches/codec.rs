//! Issue 8, item 1: StreamsGroupHeartbeat codec against hand-written floors.
//!
//! * join request (10 subtopologies, every optional member field set) — encode
//! * steady-state request (epoch > 0, every optional field null) — encode
//! * a large response (64 active + 64 standby `TaskIds` of 4 partitions each, 8 endpoints) —
//!   decode, both fresh (`ours`: a new value, ~300 allocations) and in place (`ours_into`:
//!   `decode_message_into` a reused value, 0 allocations, the like-for-like comparison with the
//!   flat floor, which reuses its buffers too)
//!
//! Each is compared with a FLOOR: a hand-written writer that produces the same bytes with
//! direct slice copies (byte equality is asserted before measuring), a flat hand-written
//! decoder of the same bytes into a few flat Vecs, and a plain memcpy of the frame.
//!
//! `cargo bench --bench codec -- --warm-up-time 1 --measurement-time 3`

// criterion_group!/criterion_main! generate undocumented public functions.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use kafka_streams_group::protocol::api::streams_group_heartbeat::StreamsGroupHeartbeatResponse;
use kafka_streams_group::protocol::codec::{decode_message, decode_message_into, encode_message};

#[path = "support/codec_cases.rs"]
mod cases;

use cases::*;

fn bench(c: &mut Criterion) {
    // ---- byte-equality of the floors, checked before anything is measured ----
    let join = join_request();
    let steady = steady_request();
    let resp = big_response();
    let mut ours = Vec::new();
    let mut floor = Vec::new();
    for r in [&join, &steady] {
        ours.clear();
        floor.clear();
        encode_message(&mut ours, r, V).expect("encode");
        floor_encode_request(&mut floor, r);
        assert_eq!(ours, floor, "floor writer must produce the same bytes");
    }
    let mut join_bytes = Vec::new();
    encode_message(&mut join_bytes, &join, V).expect("encode");
    let mut steady_bytes = Vec::new();
    encode_message(&mut steady_bytes, &steady, V).expect("encode");
    let mut resp_bytes = Vec::new();
    encode_message(&mut resp_bytes, &resp, V).expect("encode");
    let mut flat = FlatResponse::default();
    floor_decode_response(&resp_bytes, &mut flat).expect("floor decodes the response");
    let decoded: StreamsGroupHeartbeatResponse = decode_message(&resp_bytes, V).expect("decode");
    assert_eq!(decoded, resp);
    // `ours_into` decodes into a reused value, like the flat floor reuses its buffers. Start it
    // from a different response (the join-time shape: everything empty) and check that the
    // in-place decode gives exactly the fresh result, twice (the second time fully reusing).
    let mut reused = StreamsGroupHeartbeatResponse::default();
    for _ in 0..2 {
        decode_message_into(&resp_bytes, V, &mut reused).expect("decode_into");
        assert_eq!(reused, decoded, "decode_into must equal a fresh decode");
    }
    let partitions: usize = resp
        .active_tasks
        .iter()
        .chain(resp.standby_tasks.iter())
        .flatten()
        .map(|t| t.partitions.len())
        .sum();
    assert_eq!(
        flat.lists
            .iter()
            .filter(|l| l.0 < 2)
            .map(|l| l.2 as usize)
            .sum::<usize>(),
        partitions
    );
    eprintln!(
        "sizes: join request {} B, steady request {} B, response {} B",
        join_bytes.len(),
        steady_bytes.len(),
        resp_bytes.len()
    );

    let mut buf: Vec<u8> = Vec::with_capacity(64 * 1024);

    let mut g = c.benchmark_group("sgh_steady_request_encode");
    g.throughput(Throughput::Bytes(steady_bytes.len() as u64));
    g.bench_function("ours", |b| {
        b.iter(|| {
            buf.clear();
            encode_message(&mut buf, black_box(&steady), V).expect("encode");
            black_box(buf.len())
        })
    });
    g.bench_function("floor", |b| {
        b.iter(|| {
            buf.clear();
            floor_encode_request(&mut buf, black_box(&steady));
            black_box(buf.len())
        })
    });
    g.bench_function("memcpy", |b| {
        b.iter(|| {
            buf.clear();
            buf.extend_from_slice(black_box(&steady_bytes));
            black_box(buf.len())
        })
    });
    g.finish();

    let mut g = c.benchmark_group("sgh_join_request_encode");
    g.throughput(Throughput::Bytes(join_bytes.len() as u64));
    g.bench_function("ours", |b| {
        b.iter(|| {
            buf.clear();
            encode_message(&mut buf, black_box(&join), V).expect("encode");
            black_box(buf.len())
        })
    });
    g.bench_function("floor", |b| {
        b.iter(|| {
            buf.clear();
            floor_encode_request(&mut buf, black_box(&join));
            black_box(buf.len())
        })
    });
    g.bench_function("memcpy", |b| {
        b.iter(|| {
            buf.clear();
            buf.extend_from_slice(black_box(&join_bytes));
            black_box(buf.len())
        })
    });
    g.finish();

    let mut g = c.benchmark_group("sgh_response_decode");
    g.throughput(Throughput::Bytes(resp_bytes.len() as u64));
    g.bench_function("ours", |b| {
        b.iter(|| {
            let r: StreamsGroupHeartbeatResponse =
                decode_message(black_box(&resp_bytes), V).expect("decode");
            black_box(r)
        })
    });
    g.bench_function("ours_into", |b| {
        b.iter(|| {
            decode_message_into(black_box(&resp_bytes), V, &mut reused).expect("decode");
            black_box(reused.member_epoch)
        })
    });
    g.bench_function("flat_floor", |b| {
        b.iter(|| {
            floor_decode_response(black_box(&resp_bytes), &mut flat).expect("decode");
            black_box(flat.ints.len())
        })
    });
    g.bench_function("memcpy", |b| {
        b.iter(|| {
            buf.clear();
            buf.extend_from_slice(black_box(&resp_bytes));
            black_box(buf.len())
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(std::time::Duration::from_secs(1))
        .measurement_time(std::time::Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
