//! Heap allocations per record on the processing data path (issue 22): what one record of
//! WordCount's counting subtopology costs from the fetched batch to the produce batch.
//!
//! The stream thread's ports are crate-private, so this drives the public pieces in the
//! order the runtime calls them for one record: a Fetch answer is handled by a
//! [`FetcherCore`] and its records become [`InputRecord`]s as the input port makes them
//! ([`PartitionRecords::for_each_shared`] and [`InputRecord::from_fetched`]: shares of the
//! fetched bytes, the partition name shared), `Count` reads and writes its timestamped store
//! and sends the new count (as [`TaskContext::send`] does), the record collector sends the
//! store's changelog records, and the producer appends each record to its partition's batch
//! (as `Producer::send_ref`, the runtime's path, does once the topic's metadata is known:
//! the record lent, encoded straight into the batch).
//!
//! The counters are process-wide: this runs inside the one test function of
//! `tests/alloc_limits.rs`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use kafka_streams_group::common::TopicPartition;
use kafka_streams_group::consumer::{FetchSettings, FetcherCore, PartitionRecords};
use kafka_streams_group::processing::{
    changelog_topic, ChangelogRecord, InputRecord, KeyValueStore, LongSerde, Serde, StoreFormat,
};
use kafka_streams_group::producer::accumulator::{Accumulator, BatchSettings};
use kafka_streams_group::protocol::api::fetch::{
    FetchResponse, FetchableTopicResponse, PartitionData,
};
use kafka_streams_group::protocol::api::metadata::{
    MetadataResponse, MetadataResponsePartition, MetadataResponseTopic,
};
use kafka_streams_group::protocol::records::{
    partition_for_key, BatchBuilder, Compression, RecordSpec,
};
use kafka_streams_group::protocol::Uuid;

/// Records measured (after a warm-up pass that inserts every word once).
const RECORDS: usize = 20_000;
/// Distinct words: every measured record updates a key the store already holds.
const WORDS: usize = 100;
/// Records per fetched batch (the WordCount repartition topic's batches are of this order).
const PER_BATCH: usize = 100;
/// The most heap allocations one record may cost (18 before issue 22; 12 once a store
/// update reuses its entry, the changelog queue keeps its capacity and the changelog topic
/// is named once per store; 10 once the producer moves a record's topic into its
/// partition key instead of copying it; 7.01 once the input record is a share of the
/// fetched batch instead of a copy of key, value and topic name; 3.01 once records are lent
/// to the producer (`Producer::send_ref`: no `ProducerRecord` with its topic, key and value
/// copies, for the output and the changelog record alike). The 3 left: the count's
/// serialized `Long` and the change log's key and value copies).
const MAX_ALLOCATIONS_PER_RECORD: f64 = 3.2;
/// The most bytes allocated per record: 62.5 measured, most of it the batch decode's record
/// index (about 40 bytes per record, made once per batch); 236.7 before records were lent
/// to the producer and its batches sized for `batch.size` at once.
const MAX_BYTES_PER_RECORD: f64 = 80.0;
const TOPIC_ID: Uuid = Uuid([9; 16]);

/// The counting subtopology of one task, with the producer's accumulator behind it.
struct Path {
    input: TopicPartition,
    store: KeyValueStore,
    changelog_topic: String,
    changelog_buffer: Vec<ChangelogRecord>,
    output: String,
    acc: Accumulator,
    now: Instant,
}

impl Path {
    fn new() -> Self {
        Path {
            input: TopicPartition::new("wc-counts-repartition", 0),
            store: KeyValueStore::new("counts", StoreFormat::TimestampedKeyValue),
            changelog_topic: changelog_topic("wc", "counts"),
            changelog_buffer: Vec::new(),
            output: "streams-wordcount-output".to_string(),
            acc: Accumulator::new(BatchSettings {
                linger: Duration::from_secs(60),
                batch_size: 1 << 30,
                compression: Compression::None,
                buffer_memory: 1 << 31,
            }),
            now: Instant::now(),
        }
    }

    /// What the producer does with a record lent to it (`Producer::send_ref`, the
    /// runtime's path) once the topic's metadata is known.
    fn produce(
        acc: &mut Accumulator,
        now: Instant,
        topic: &str,
        partition: Option<i32>,
        key: &[u8],
        value: Option<&[u8]>,
        timestamp: i64,
    ) {
        let spec = RecordSpec::new(Some(key), value, timestamp);
        acc.room_spec(&spec).expect("room");
        let partition = partition.unwrap_or_else(|| partition_for_key(key, 4).unwrap_or(0));
        acc.has_ready(now, false);
        acc.append_spec(topic, partition, &spec, now)
            .expect("append");
    }

    /// One input record, from the input port to the produce batches.
    fn process(&mut self, record: InputRecord) {
        // WordCount's Count processor.
        let key = record.key.as_deref().expect("key");
        let (old, old_ts) = match self.store.get_with_timestamp(key) {
            Some((bytes, ts)) => (LongSerde.deserialize(bytes).expect("long"), Some(ts)),
            None => (0, None),
        };
        let ts = old_ts.map_or(record.timestamp, |t| t.max(record.timestamp));
        let value = LongSerde.serialize(&(old + 1));
        self.store.put(key, Some(&value), ts);
        // TaskContext::send: the record lent to the producer.
        Self::produce(
            &mut self.acc,
            self.now,
            &self.output,
            None,
            key,
            Some(&value),
            ts,
        );
        // RecordCollector::send_changelog: the changelog topic named once per store, the
        // queued records drained into a reused buffer and lent to the producer.
        let mut changelog = std::mem::take(&mut self.changelog_buffer);
        self.store.drain_changelog_into(&mut changelog);
        for c in changelog.drain(..) {
            Self::produce(
                &mut self.acc,
                self.now,
                &self.changelog_topic,
                Some(self.input.partition),
                &c.key,
                c.value.as_deref(),
                c.timestamp,
            );
        }
        self.changelog_buffer = changelog;
    }
}

/// A Fetch answer of the input partition holding `words[i % WORDS]` as key and value at
/// offsets `first..first + n`, in batches of [`PER_BATCH`], handled by a fetcher.
fn fetched(input: &TopicPartition, words: &[Vec<u8>], first: usize, n: usize) -> PartitionRecords {
    let mut records = Vec::new();
    for b in (0..n).step_by(PER_BATCH) {
        let mut batch = BatchBuilder::new(Compression::None).base_offset((first + b) as i64);
        for i in b..(b + PER_BATCH).min(n) {
            let w = &words[i % WORDS];
            let spec = RecordSpec::new(Some(w), Some(w), (i - b) as i64);
            batch.push(&spec).expect("push");
        }
        batch.finish(&mut records).expect("finish");
    }
    let mut core = FetcherCore::new(FetchSettings::default());
    core.assign([input.clone()]);
    core.update_metadata(&MetadataResponse {
        topics: vec![MetadataResponseTopic {
            name: Some(input.topic.clone()),
            topic_id: TOPIC_ID,
            partitions: vec![MetadataResponsePartition {
                partition_index: input.partition,
                leader_id: 1,
                leader_epoch: 0,
                ..MetadataResponsePartition::default()
            }],
            ..MetadataResponseTopic::default()
        }],
        ..MetadataResponse::default()
    });
    core.seek(input, first as i64).expect("seek");
    let mut parts = core.handle_fetch(FetchResponse {
        responses: vec![FetchableTopicResponse {
            topic: String::new(),
            topic_id: TOPIC_ID,
            partitions: vec![PartitionData {
                partition_index: input.partition,
                high_watermark: (first + n) as i64,
                records: Some(records),
                ..PartitionData::default()
            }],
        }],
        ..FetchResponse::default()
    });
    assert_eq!(parts.len(), 1, "one partition fetched");
    parts.remove(0)
}

/// Runs every record of `part` through the path as the input port hands them out; returns
/// how many there were.
fn run(path: &mut Path, name: &Arc<TopicPartition>, part: &PartitionRecords) -> usize {
    part.for_each_shared(|r| path.process(InputRecord::from_fetched(Arc::clone(name), r)))
        .expect("decode")
}

/// Allocations per record of the counting path; fails above [`MAX_ALLOCATIONS_PER_RECORD`]
/// or [`MAX_BYTES_PER_RECORD`].
pub fn check(failures: &mut Vec<String>) {
    let words: Vec<Vec<u8>> = (0..WORDS)
        .map(|i| format!("word{i}").into_bytes())
        .collect();
    let mut path = Path::new();
    // The input port makes the partition's name once per assignment.
    let name = Arc::new(path.input.clone());
    let warm_up = fetched(&path.input, &words, 0, WORDS);
    let measured = fetched(&path.input, &words, WORDS, RECORDS);
    // Keep the batch buffers from growing while measuring: a warm-up batch of the same size.
    run(&mut path, &name, &warm_up);
    let before = dhat::HeapStats::get();
    let n = run(&mut path, &name, &measured);
    let after = dhat::HeapStats::get();
    drop(measured);
    if n != RECORDS {
        failures.push(format!(
            "word count path: {n} records fetched, expected {RECORDS}"
        ));
    }
    let blocks = (after.total_blocks - before.total_blocks) as f64 / RECORDS as f64;
    let bytes = (after.total_bytes - before.total_bytes) as f64 / RECORDS as f64;
    eprintln!(
        "word count path: {blocks:.2} allocations and {bytes:.1} bytes allocated per record \
         ({RECORDS} records over {WORDS} words in batches of {PER_BATCH}; the batch decode \
         and the produce batch buffers' growth included)"
    );
    if blocks > MAX_ALLOCATIONS_PER_RECORD {
        failures.push(format!(
            "word count path: {blocks:.2} allocations per record (limit \
             {MAX_ALLOCATIONS_PER_RECORD})"
        ));
    }
    if bytes > MAX_BYTES_PER_RECORD {
        failures.push(format!(
            "word count path: {bytes:.1} bytes allocated per record (limit \
             {MAX_BYTES_PER_RECORD})"
        ));
    }
    // The records reached the batches.
    if path.acc.outstanding() != 2 * (RECORDS + WORDS) {
        failures.push(format!(
            "word count path: {} records queued, expected {}",
            path.acc.outstanding(),
            2 * (RECORDS + WORDS)
        ));
    }
}
