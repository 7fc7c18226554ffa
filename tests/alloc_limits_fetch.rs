//! Heap allocations per fetched record (issue 25), measured with a counting global allocator
//! (`dhat`, in testing mode). A separate test binary from `tests/alloc_limits.rs`: the
//! counters are process-wide, so this one runs everything in ONE test function as well.
//!
//! A Fetch answer of 10,000 records (100 batches of 100, 10-byte keys, 100-byte values) is
//! handled by a `FetcherCore`; then its records are taken two ways:
//!
//! * copied, as a caller that keeps records past the next poll had to (the processing
//!   runtime's input port copied key and value into `Vec`s and cloned the partition name
//!   until issue 22 made its records shares of the batch): about 3 allocations per record;
//! * shared: `PartitionRecords::for_each_shared` gives `FetchedRecord`s that hold a share of
//!   their batch's bytes: at most a few allocations per *batch* (the batch index, and for a
//!   compressed batch its decompressed buffer and that buffer's handle), none per record.

use kafka_streams_group::common::TopicPartition;
use kafka_streams_group::consumer::{FetchSettings, FetcherCore, PartitionRecords};
use kafka_streams_group::protocol::api::fetch::{
    FetchResponse, FetchableTopicResponse, PartitionData,
};
use kafka_streams_group::protocol::api::metadata::{
    MetadataResponse, MetadataResponsePartition, MetadataResponseTopic,
};
use kafka_streams_group::protocol::records::{BatchBuilder, Compression, RecordSpec};
use kafka_streams_group::protocol::Uuid;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

const BATCHES: i64 = 100;
const PER_BATCH: i64 = 100;
const RECORDS: f64 = (BATCHES * PER_BATCH) as f64;
/// The most allocations one shared record may cost, amortised over its batch of 100: the
/// batch index and, for a compressed batch, the codec's own buffers (lz4: 5 per batch) and
/// the decompressed buffer's handle. Measured: none 0.011, lz4 0.061, zstd 0.041.
const MAX_SHARED_PER_RECORD: f64 = 0.1;
const ID: Uuid = Uuid([7; 16]);

fn allocations<R>(f: impl FnOnce() -> R) -> (R, u64) {
    let before = dhat::HeapStats::get();
    let r = f();
    let after = dhat::HeapStats::get();
    (r, after.total_blocks - before.total_blocks)
}

fn answer(codec: Compression) -> FetchResponse {
    let mut records = Vec::new();
    let value = [b'v'; 100];
    for b in 0..BATCHES {
        let mut batch = BatchBuilder::new(codec).base_offset(b * PER_BATCH);
        for o in 0..PER_BATCH {
            let key = format!("key-{:06}", b * PER_BATCH + o);
            batch
                .push(&RecordSpec::new(Some(key.as_bytes()), Some(&value), 1))
                .expect("push");
        }
        batch.finish(&mut records).expect("finish");
    }
    FetchResponse {
        responses: vec![FetchableTopicResponse {
            topic: String::new(),
            topic_id: ID,
            partitions: vec![PartitionData {
                partition_index: 0,
                high_watermark: BATCHES * PER_BATCH,
                records: Some(records),
                ..PartitionData::default()
            }],
        }],
        ..FetchResponse::default()
    }
}

fn fetched(codec: Compression) -> PartitionRecords {
    let tp = TopicPartition::new("t", 0);
    let mut core = FetcherCore::new(FetchSettings::default());
    core.assign([tp.clone()]);
    core.update_metadata(&MetadataResponse {
        topics: vec![MetadataResponseTopic {
            name: Some("t".into()),
            topic_id: ID,
            partitions: vec![MetadataResponsePartition {
                partition_index: 0,
                leader_id: 1,
                leader_epoch: 0,
                ..MetadataResponsePartition::default()
            }],
            ..MetadataResponseTopic::default()
        }],
        ..MetadataResponse::default()
    });
    core.seek(&tp, 0).expect("seek");
    let mut parts = core.handle_fetch(answer(codec));
    assert_eq!(parts.len(), 1);
    parts.remove(0)
}

type Copied = (TopicPartition, Option<Vec<u8>>, Option<Vec<u8>>);

/// (copied, shared) allocations per record for batches compressed with `codec`.
fn per_record(codec: Compression) -> (f64, f64) {
    let part = fetched(codec);
    let tp = part.topic_partition().clone();
    let mut copies: Vec<Copied> = Vec::with_capacity(RECORDS as usize);
    let (n, copy_blocks) = allocations(|| {
        part.for_each_record(|r| {
            copies.push((
                tp.clone(),
                r.key.map(<[u8]>::to_vec),
                r.value.map(<[u8]>::to_vec),
            ))
        })
        .expect("decode")
    });
    assert_eq!(n as f64, RECORDS);
    let mut shared = Vec::with_capacity(RECORDS as usize);
    let (n, shared_blocks) =
        allocations(|| part.for_each_shared(|r| shared.push(r)).expect("decode"));
    assert_eq!(n as f64, RECORDS);
    drop(part);
    // The shared records outlive their answer and read the same bytes as the copies.
    for (c, s) in copies.iter().zip(&shared) {
        assert_eq!(c.1.as_deref(), s.key());
        assert_eq!(c.2.as_deref(), s.value());
    }
    (copy_blocks as f64 / RECORDS, shared_blocks as f64 / RECORDS)
}

#[test]
fn allocations_per_fetched_record() {
    let _profiler = dhat::Profiler::builder().testing().build();
    let mut failures = Vec::new();
    for codec in [Compression::None, Compression::Lz4, Compression::Zstd] {
        let (copied, shared) = per_record(codec);
        eprintln!(
            "{codec:?}: {copied:.3} allocations per record copied, {shared:.3} shared \
             ({} records in {BATCHES} batches)",
            RECORDS
        );
        if copied < 2.0 {
            failures.push(format!(
                "{codec:?}: the copy path counted {copied:.3} allocations per record: is the \
                 counting allocator live?"
            ));
        }
        if shared > MAX_SHARED_PER_RECORD {
            failures.push(format!(
                "{codec:?}: {shared:.3} allocations per shared record (at most \
                 {MAX_SHARED_PER_RECORD})"
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
