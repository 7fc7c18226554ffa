//! Benchmark helper binary (issue 15); `scripts/bench-clients.sh` drives it against Kafka's
//! own `ProducerPerformance` / `ConsumerPerformance`. Not part of the tests.
//!
//! ```text
//! bench_clients produce BOOTSTRAP TOPIC RECORDS RECORD_SIZE COMPRESSION BATCH_SIZE LINGER_MS [MAX_IN_FLIGHT]
//! bench_clients fetch   BOOTSTRAP TOPIC RECORDS PARTITIONS
//! ```
//!
//! `produce` sends RECORDS records with a null key and one fixed RECORD_SIZE-byte payload of
//! random capital letters (what `kafka-producer-perf-test` sends), idempotent, `acks=all`,
//! with `max.in.flight.requests.per.connection` MAX_IN_FLIGHT (default 5), then flushes. `fetch` reads RECORDS records from the earliest offset of partitions
//! 0..PARTITIONS. Each prints one line: `records=… bytes=… secs=… mb_per_s=… rss_kb=…`
//! where bytes counts keys and values and MB is 2^20 bytes (the tools' unit) and `rss_kb` is
//! the process's peak resident set (`VmHWM`).

use std::time::{Duration, Instant};

use kafka_streams_group::consumer::{Fetcher, FetcherConfig, OffsetReset};
use kafka_streams_group::producer::{Producer, ProducerConfig, ProducerRecord};
use kafka_streams_group::protocol::records::Compression;
use kafka_streams_group::streams::commit::TopicPartition;
use kafka_streams_group::ClientConfig;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| -> &str {
        args.get(i)
            .map(String::as_str)
            .unwrap_or_else(|| panic!("missing argument {i}; see the module docs"))
    };
    let num = |i: usize| -> usize { arg(i).parse().expect("a number") };
    let (records, bytes, secs) = match arg(0) {
        "produce" => produce(
            arg(1),
            arg(2),
            num(3),
            num(4),
            Batching {
                compression: Compression::from_name(arg(5))
                    .expect("none, gzip, snappy, lz4 or zstd"),
                batch_size: num(6),
                linger_ms: num(7) as u64,
                max_in_flight: args.get(8).map_or(5, |v| v.parse().expect("a number")),
            },
        ),
        "fetch" => fetch(arg(1), arg(2), num(3), num(4) as i32),
        other => panic!("unknown mode {other:?}: produce or fetch"),
    };
    println!(
        "records={records} bytes={bytes} secs={secs:.3} mb_per_s={:.2} rss_kb={}",
        bytes as f64 / (1 << 20) as f64 / secs,
        peak_rss_kb()
    );
}

/// The producer settings `produce` takes from the command line.
struct Batching {
    compression: Compression,
    batch_size: usize,
    linger_ms: u64,
    max_in_flight: usize,
}

fn produce(
    bootstrap: &str,
    topic: &str,
    n: usize,
    size: usize,
    b: Batching,
) -> (usize, usize, f64) {
    let payload: Vec<u8> = (0..size)
        .map(|_| b'A' + rand::random_range(0..26u8))
        .collect();
    let config = ProducerConfig::new(ClientConfig::new(bootstrap).client_id("bench-producer"))
        .compression(b.compression)
        .batch_size(b.batch_size)
        .linger(Duration::from_millis(b.linger_ms))
        .max_in_flight(b.max_in_flight);
    let mut p = Producer::new(config).expect("producer");
    let started = Instant::now();
    for _ in 0..n {
        p.send(ProducerRecord::new(topic, None, Some(&payload)))
            .expect("send");
    }
    p.flush(Instant::now() + Duration::from_secs(300))
        .expect("flush");
    (n, n * size, started.elapsed().as_secs_f64())
}

fn fetch(bootstrap: &str, topic: &str, n: usize, partitions: i32) -> (usize, usize, f64) {
    let config = FetcherConfig::new(ClientConfig::new(bootstrap).client_id("bench-fetcher"))
        .auto_offset_reset(OffsetReset::Earliest);
    let mut f = Fetcher::connect(config, Duration::from_secs(10)).expect("fetcher");
    f.assign((0..partitions).map(|p| TopicPartition::new(topic.to_string(), p)));
    let started = Instant::now();
    let until = started + Duration::from_secs(300);
    let (mut records, mut bytes) = (0, 0);
    while records < n {
        assert!(Instant::now() < until, "only {records} of {n} records");
        for part in f
            .poll(Instant::now() + Duration::from_secs(1))
            .expect("poll")
        {
            records += part
                .for_each_record(|r| {
                    bytes += r.key.map_or(0, <[u8]>::len) + r.value.map_or(0, <[u8]>::len);
                })
                .expect("decode");
        }
    }
    (records, bytes, started.elapsed().as_secs_f64())
}

fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}
