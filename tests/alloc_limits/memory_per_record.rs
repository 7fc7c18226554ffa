//! Bytes of heap per buffered input record and per stored key (issue 25): what the memory of
//! a processing member grows by with its queued input and with its state, measured as the
//! allocator's live bytes (`dhat`'s `curr_bytes`) before and after, divided by the count.
//!
//! * A buffered record: the WordCount input (null key, a line of up to 7 Zipf words as the
//!   value, as `scripts/bench-wordcount.sh` writes it), fetched in batches of 100 as a Fetch
//!   answer is, each record made an [`InputRecord`] (a share of the fetched buffer) and queued
//!   in a `VecDeque` as a task's partition queue does: the fetched bytes, the batch index and
//!   the queue slot, all per record.
//! * A stored key: `KeyValueStore` (timestamped, as WordCount's `count()`) holding 100,000
//!   keys `w0..w99999` with 8-byte counts (the restore benchmark's changelog), without and
//!   with the record cache in front of it (the cache's entries kept too, as after a flush).
//!
//! The counters are process-wide: this runs inside the one test function of
//! `tests/alloc_limits.rs`.

use std::collections::VecDeque;
use std::sync::Arc;

use kafka_streams_group::common::TopicPartition;
use kafka_streams_group::consumer::{FetchSettings, FetcherCore};
use kafka_streams_group::processing::{InputRecord, KeyValueStore, StoreFormat};
use kafka_streams_group::protocol::api::fetch::{
    FetchResponse, FetchableTopicResponse, PartitionData,
};
use kafka_streams_group::protocol::api::metadata::{
    MetadataResponse, MetadataResponsePartition, MetadataResponseTopic,
};
use kafka_streams_group::protocol::records::{BatchBuilder, Compression, RecordSpec};
use kafka_streams_group::protocol::Uuid;
use kafka_streams_group::state::ThreadCache;

/// Records buffered.
const RECORDS: usize = 20_000;
/// Keys stored.
const KEYS: usize = 100_000;
/// Most heap bytes per buffered WordCount line (177 measured: see BENCHMARKS.md).
const MAX_BYTES_PER_BUFFERED_RECORD: f64 = 200.0;
/// Most heap bytes per stored key, store alone / store and record cache (108 / 285
/// measured).
const MAX_BYTES_PER_KEY: f64 = 120.0;
const MAX_BYTES_PER_CACHED_KEY: f64 = 320.0;

fn live() -> i64 {
    dhat::HeapStats::get().curr_bytes as i64
}

/// The WordCount input generator's line `i` (deterministic, Zipf-like words `w1..w1000`).
fn line(i: usize) -> String {
    let mut x = (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % 1_000_000) as f64 / 1_000_000.0
    };
    let k = 1 + (next() * 7.0) as usize;
    (0..k)
        .map(|_| format!("w{}", (1.0 / (next() * 0.999 + 0.001)) as u64))
        .collect::<Vec<_>>()
        .join(" ")
}

fn buffered_record() -> (f64, f64) {
    let input = TopicPartition::new("bench-wc-in", 0);
    let topic_id = Uuid([7; 16]);
    let lines: Vec<String> = (0..RECORDS).map(line).collect();
    let wire: usize = lines.iter().map(String::len).sum();
    let before = live();
    let mut records = Vec::new();
    for b in (0..RECORDS).step_by(100) {
        let mut batch = BatchBuilder::new(Compression::None).base_offset(b as i64);
        for (i, l) in lines.iter().enumerate().skip(b).take(100) {
            batch
                .push(&RecordSpec::new(None, Some(l.as_bytes()), i as i64))
                .expect("push");
        }
        batch.finish(&mut records).expect("finish");
    }
    records.shrink_to_fit();
    let mut core = FetcherCore::new(FetchSettings::default());
    core.assign([input.clone()]);
    core.update_metadata(&MetadataResponse {
        topics: vec![MetadataResponseTopic {
            name: Some(input.topic.clone()),
            topic_id,
            partitions: vec![MetadataResponsePartition {
                partition_index: 0,
                leader_id: 1,
                ..MetadataResponsePartition::default()
            }],
            ..MetadataResponseTopic::default()
        }],
        ..MetadataResponse::default()
    });
    core.seek(&input, 0).expect("seek");
    let mut parts = core.handle_fetch(FetchResponse {
        responses: vec![FetchableTopicResponse {
            topic: String::new(),
            topic_id,
            partitions: vec![PartitionData {
                partition_index: 0,
                high_watermark: RECORDS as i64,
                records: Some(records),
                ..PartitionData::default()
            }],
        }],
        ..FetchResponse::default()
    });
    let part = parts.remove(0);
    let before_queue = live();
    let name = Arc::new(input);
    let mut queue = VecDeque::new();
    part.for_each_shared(|r| queue.push_back(InputRecord::from_fetched(Arc::clone(&name), r)))
        .expect("decode");
    drop(part);
    drop(core);
    let after = live();
    assert_eq!(queue.len(), RECORDS);
    let per = (after - before) as f64 / RECORDS as f64;
    let queue_only = (after - before_queue) as f64 / RECORDS as f64;
    eprintln!(
        "buffered record: {per:.1} heap bytes per WordCount line ({:.1} of them the line itself, \
         {queue_only:.1} the queue's InputRecord of {} bytes and the decode index), \
         {RECORDS} records in batches of 100",
        wire as f64 / RECORDS as f64,
        std::mem::size_of::<InputRecord>()
    );
    drop(queue);
    (per, queue_only)
}

fn stored_key(cached: bool) -> f64 {
    let keys: Vec<String> = (0..KEYS).map(|i| format!("w{i}")).collect();
    let cache = ThreadCache::new(1 << 30);
    let before = live();
    let mut store = KeyValueStore::new("counts", StoreFormat::TimestampedKeyValue);
    if cached {
        store = store.with_cache(&cache);
    }
    for (i, k) in keys.iter().enumerate() {
        store.put(k.as_bytes(), Some(&(i as i64).to_be_bytes()), i as i64);
    }
    // What a commit does: the cache's dirty entries written through (they stay cached) and
    // the changelog records sent (dropped here).
    store.flush_cache();
    drop(store.take_changelog());
    let after = live();
    assert_eq!(store.len(), KEYS);
    let per = (after - before) as f64 / KEYS as f64;
    eprintln!(
        "stored key ({}): {per:.1} heap bytes per key ({KEYS} keys of 2-6 bytes, 8-byte \
         values, timestamped)",
        if cached {
            "store and record cache"
        } else {
            "store"
        }
    );
    drop(store);
    per
}

/// Bytes per buffered record and per stored key; fails above the limits.
pub fn check(failures: &mut Vec<String>) {
    let (per, _) = buffered_record();
    if per > MAX_BYTES_PER_BUFFERED_RECORD {
        failures.push(format!(
            "buffered record: {per:.1} bytes (limit {MAX_BYTES_PER_BUFFERED_RECORD})"
        ));
    }
    let plain = stored_key(false);
    if plain > MAX_BYTES_PER_KEY {
        failures.push(format!(
            "stored key: {plain:.1} bytes (limit {MAX_BYTES_PER_KEY})"
        ));
    }
    let cached = stored_key(true);
    if cached > MAX_BYTES_PER_CACHED_KEY {
        failures.push(format!(
            "stored key with the cache: {cached:.1} bytes (limit {MAX_BYTES_PER_CACHED_KEY})"
        ));
    }
}
