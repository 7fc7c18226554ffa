//! Heap allocations per record on the processing data path (issue 22): what one record of
//! WordCount's counting subtopology costs from the fetched batch to the produce batch.
//!
//! The stream thread's ports are crate-private, so this drives the public pieces in the
//! order the runtime calls them for one record: the fetched record becomes an
//! [`InputRecord`] (as the input port does), `Count` reads and writes its timestamped store
//! and sends the new count (as [`TaskContext::send`] does), the record collector sends the
//! store's changelog records, and the producer appends each record to its partition's batch
//! (as `Producer::send` does once the topic's metadata is known).
//!
//! The counters are process-wide: this runs inside the one test function of
//! `tests/alloc_limits.rs`.

use std::time::{Duration, Instant};

use kafka_streams_group::common::TopicPartition;
use kafka_streams_group::processing::{
    changelog_topic, ChangelogRecord, InputRecord, KeyValueStore, LongSerde, Serde, StoreFormat,
};
use kafka_streams_group::producer::accumulator::{Accumulator, BatchSettings};
use kafka_streams_group::producer::ProducerRecord;
use kafka_streams_group::protocol::records::{partition_for_key, Compression};

/// Records measured (after a warm-up pass that inserts every word once).
const RECORDS: usize = 20_000;
/// Distinct words: every measured record updates a key the store already holds.
const WORDS: usize = 100;
/// The most heap allocations one record may cost (18 before issue 22; 12 once a store
/// update reuses its entry, the changelog queue keeps its capacity and the changelog topic
/// is named once per store; 10 once the producer moves a record's topic into its
/// partition key instead of copying it).
const MAX_ALLOCATIONS_PER_RECORD: f64 = 10.5;

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

    /// What `Producer::send` does with a record once the topic's metadata is known.
    fn produce(&mut self, mut record: ProducerRecord) {
        let timestamp = record.timestamp.unwrap_or(0);
        self.acc.room(&record, timestamp).expect("room");
        let partition = match (record.partition, &record.key) {
            (Some(p), _) => p,
            (None, Some(key)) => partition_for_key(key, 4).unwrap_or(0),
            (None, None) => 0,
        };
        let tp = TopicPartition::new(std::mem::take(&mut record.topic), partition);
        self.acc
            .append(&tp, &record, timestamp, self.now)
            .expect("append");
    }

    /// One fetched record, from the input port to the produce batches.
    fn process(&mut self, offset: i64, key: &[u8], value: &[u8], timestamp: i64) {
        // The input port.
        let record = InputRecord {
            partition: self.input.clone(),
            offset,
            timestamp,
            key: Some(key.to_vec()),
            value: Some(value.to_vec()),
            headers: Vec::new(),
        };
        // WordCount's Count processor.
        let key = record.key.as_deref().expect("key");
        let (old, old_ts) = match self.store.get_with_timestamp(key) {
            Some((bytes, ts)) => (LongSerde.deserialize(bytes).expect("long"), Some(ts)),
            None => (0, None),
        };
        let ts = old_ts.map_or(record.timestamp, |t| t.max(record.timestamp));
        let value = LongSerde.serialize(&(old + 1));
        self.store.put(key, Some(&value), ts);
        // TaskContext::send.
        let out = ProducerRecord::new(self.output.as_str(), Some(key), Some(&value)).timestamp(ts);
        self.produce(out);
        // RecordCollector::send_changelog: the changelog topic named once per store, the
        // queued records drained into a reused buffer and moved into the producer.
        let mut changelog = std::mem::take(&mut self.changelog_buffer);
        self.store.drain_changelog_into(&mut changelog);
        for c in changelog.drain(..) {
            let r = c.into_producer_record_for(&self.changelog_topic, self.input.partition);
            self.produce(r);
        }
        self.changelog_buffer = changelog;
    }
}

/// Allocations per record of the counting path; fails above [`MAX_ALLOCATIONS_PER_RECORD`].
pub fn check(failures: &mut Vec<String>) {
    let words: Vec<Vec<u8>> = (0..WORDS)
        .map(|i| format!("word{i}").into_bytes())
        .collect();
    let mut path = Path::new();
    // Keep the batch buffers from growing while measuring: a warm-up batch of the same size.
    for (i, w) in words.iter().enumerate() {
        path.process(i as i64, w, w, 1_000);
    }
    let before = dhat::HeapStats::get();
    for i in 0..RECORDS {
        let w = &words[i % WORDS];
        path.process((WORDS + i) as i64, w, w, 1_000 + i as i64);
    }
    let after = dhat::HeapStats::get();
    let blocks = (after.total_blocks - before.total_blocks) as f64 / RECORDS as f64;
    let bytes = (after.total_bytes - before.total_bytes) as f64 / RECORDS as f64;
    eprintln!(
        "word count path: {blocks:.2} allocations and {bytes:.1} bytes allocated per record \
         ({RECORDS} records over {WORDS} words; the batch buffers' growth included)"
    );
    if blocks > MAX_ALLOCATIONS_PER_RECORD {
        failures.push(format!(
            "word count path: {blocks:.2} allocations per record (limit \
             {MAX_ALLOCATIONS_PER_RECORD})"
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
