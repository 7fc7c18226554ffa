//! [`DslTestDriver`]: a DSL program without a broker, as Java's `TopologyTestDriver`.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::Duration;

use crate::common::TopicPartition;
use crate::dsl::serdes::default_serde;
use crate::dsl::DslTopology;
use crate::error::Error;
use crate::streams::StreamsTaskId;
use crate::topology::HeartbeatTopologyOptions;

use super::super::deserialization::DeserializationHandler;
use super::super::task::InputRecord;
use super::queues::TopicQueues;
use super::run::{Deferred, Emit};
use super::DslProgram;
use crate::consumer::RecordHeaders;
use crate::state::{ChangelogRecord, KeyValueStore, StoreFormat};

/// A record the program wrote, as read from its topic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestRecord {
    /// The topic (internal ones with the application id before them).
    pub topic: String,
    /// Its offset in the topic (the driver has one partition per topic, 0).
    pub offset: i64,
    /// The key bytes (`None`: null).
    pub key: Option<Vec<u8>>,
    /// The value bytes (`None`: null).
    pub value: Option<Vec<u8>>,
    /// The timestamp.
    pub timestamp: i64,
    /// The headers.
    pub headers: Vec<(Vec<u8>, Option<Vec<u8>>)>,
}

/// Runs a DSL program on records given by the test, without a broker, as Java's
/// `TopologyTestDriver`: one partition (0) per topic and one task per subtopology; the
/// records the program writes to topics it reads (its repartition topics) are processed
/// before [`pipe_input`](Self::pipe_input) returns, taken from the topics in the order of
/// Java's `PartitionGroup` (the earliest first record first; see `dsl_runner::queues` for
/// ties). As there, the record cache of a cached store
/// (Java's default) is flushed after every record: several updates of one key by one
/// record forward and log only the last, after the record's other output, and a delete of
/// a key the store did not hold goes nowhere. Every topic's written records are kept for
/// [`read_output`](Self::read_output), the stores for [`store_entries`](Self::store_entries)
/// and their changelog records for [`take_changelog`](Self::take_changelog).
///
/// ```
/// use kafka_streams_group::dsl::StreamsBuilder;
/// use kafka_streams_group::processing::DslTestDriver;
///
/// let builder = StreamsBuilder::new();
/// builder
///     .stream::<Option<String>, String>("lines")
///     .flat_map_values(|l: &String| l.split(' ').map(str::to_string).collect::<Vec<_>>())
///     .group_by(|_, word: &String| word.clone())
///     .count()
///     .to_stream()
///     .to("counts");
/// let mut driver = DslTestDriver::new(&builder.build().unwrap(), "wc")?;
/// driver.pipe("lines", &None::<String>, &"a b a".to_string(), 10)?;
/// let counts = driver.read_typed::<String, i64>("counts")?;
/// let counts: Vec<_> = counts.into_iter().map(|(k, v, _)| (k, v)).collect();
/// assert_eq!(counts, [("a".into(), 1), ("b".into(), 1), ("a".into(), 2)]);
/// # Ok::<(), kafka_streams_group::Error>(())
/// ```
#[derive(Debug)]
pub struct DslTestDriver {
    program: DslProgram,
    stores: BTreeMap<String, KeyValueStore>,
    outputs: BTreeMap<String, VecDeque<TestRecord>>,
    offsets: BTreeMap<String, i64>,
    changelogs: BTreeMap<String, Vec<ChangelogRecord>>,
    handler: DeserializationHandler,
    wall_clock_ms: i64,
    stream_time: i64,
}

/// The driver's view for one record: its stores, the records sent, and the updates of
/// cached stores waiting for the flush (in the order of their last update, one per key).
struct Sink<'a> {
    stores: &'a mut BTreeMap<String, KeyValueStore>,
    sent: Vec<TestRecord>,
    deferred: Vec<Deferred>,
}

impl Emit for Sink<'_> {
    fn send(
        &mut self,
        topic: &str,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        timestamp: i64,
        headers: &RecordHeaders,
    ) -> Result<(), Error> {
        self.sent.push(TestRecord {
            topic: topic.to_string(),
            offset: 0,
            key: key.map(<[u8]>::to_vec),
            value: value.map(<[u8]>::to_vec),
            timestamp,
            headers: headers.to_vec(),
        });
        Ok(())
    }

    fn store(&mut self, name: &str) -> Result<&mut KeyValueStore, Error> {
        self.stores
            .get_mut(name)
            .ok_or_else(|| Error::InvalidConfiguration {
                field: "store",
                reason: format!("the program has no store named {name:?}"),
            })
    }

    fn caching(&self) -> bool {
        true
    }

    /// Java's `NamedCache.put` of a dirty key: the entry moves to the end; whether the
    /// store held the key before the record, and its value then, are the first update's
    /// answer.
    fn defer(&mut self, mut update: Deferred) {
        let same = |d: &Deferred| d.store == update.store && d.key == update.key;
        if let Some(i) = self.deferred.iter().position(same) {
            let first = self.deferred.remove(i);
            update.existed = first.existed;
            update.old = first.old;
        }
        self.deferred.push(update);
    }
}

/// A cached store's changelog records of one record as Java's flush writes them: one per
/// key (the last), in the order of the keys' last updates, without deletes of keys the
/// store did not hold before the record.
fn cached_changelog(log: Vec<ChangelogRecord>, flushed: &[&Deferred]) -> Vec<ChangelogRecord> {
    let absent = |key: &[u8]| flushed.iter().any(|d| d.key == key && !d.existed);
    let last: HashMap<&[u8], usize> = log
        .iter()
        .enumerate()
        .map(|(i, c)| (c.key.as_slice(), i))
        .collect();
    let keep: Vec<bool> = log
        .iter()
        .enumerate()
        .map(|(i, c)| {
            last.get(c.key.as_slice()) == Some(&i) && !(c.value.is_none() && absent(&c.key))
        })
        .collect();
    log.into_iter()
        .zip(keep)
        .filter_map(|(c, k)| k.then_some(c))
        .collect()
}

fn no_serde(what: &str, ty: &str) -> Error {
    Error::InvalidConfiguration {
        field: "dsl",
        reason: format!("{what} type {ty} has no built-in serde: use the raw methods"),
    }
}

impl DslTestDriver {
    /// A driver of `program` as application `application_id` (which prefixes its
    /// repartition topics); every operation must be one the runner executes.
    pub fn new(program: &DslTopology, application_id: &str) -> Result<Self, Error> {
        let options = HeartbeatTopologyOptions::new(application_id);
        let program = DslProgram::lower(program, &options)?;
        let stores = program
            .stores
            .values()
            .flatten()
            .map(|s| {
                (
                    s.clone(),
                    KeyValueStore::new(s, StoreFormat::TimestampedKeyValue),
                )
            })
            .collect();
        Ok(Self {
            program,
            stores,
            outputs: BTreeMap::new(),
            offsets: BTreeMap::new(),
            changelogs: BTreeMap::new(),
            handler: DeserializationHandler::LogAndFail,
            wall_clock_ms: 0,
            stream_time: -1,
        })
    }

    /// Sets `default.deserialization.exception.handler` (default: log and fail).
    pub fn deserialization_handler(mut self, handler: DeserializationHandler) -> Self {
        self.handler = handler;
        self
    }

    /// Pipes a record (raw bytes) into `topic` and processes it, and what it writes to
    /// topics the program reads, to the end.
    pub fn pipe_input(
        &mut self,
        topic: &str,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        timestamp: i64,
    ) -> Result<(), Error> {
        self.pipe_input_with_headers(topic, key, value, timestamp, Vec::new())
    }

    /// [`pipe_input`](Self::pipe_input) with headers (name, value; `None`: a null value),
    /// which the program's sinks pass on as Java's do.
    pub fn pipe_input_with_headers(
        &mut self,
        topic: &str,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        timestamp: i64,
        headers: Vec<(Vec<u8>, Option<Vec<u8>>)>,
    ) -> Result<(), Error> {
        let offset = self.next_offset(topic);
        let mut first =
            InputRecord::new(TopicPartition::new(topic, 0), offset, timestamp, key, value);
        first.headers = headers.into();
        let mut queue = TopicQueues::default();
        queue.add(first);
        while let Some(record) = queue.pop() {
            for mut r in self.process_one(&record)? {
                r.offset = self.next_offset(&r.topic);
                if self.program.reads(&r.topic) {
                    let mut next = InputRecord::new(
                        TopicPartition::new(&r.topic, 0),
                        r.offset,
                        r.timestamp,
                        r.key.as_deref(),
                        r.value.as_deref(),
                    );
                    next.headers = r.headers.clone().into();
                    queue.add(next);
                }
                self.outputs
                    .entry(r.topic.clone())
                    .or_default()
                    .push_back(r);
            }
        }
        Ok(())
    }

    fn next_offset(&mut self, topic: &str) -> i64 {
        let o = self.offsets.entry(topic.to_string()).or_insert(0);
        *o += 1;
        *o - 1
    }

    /// Processes one record; its sends, or nothing if the handler skipped it.
    fn process_one(&mut self, record: &InputRecord) -> Result<Vec<TestRecord>, Error> {
        let topic = &record.partition.topic;
        let Some((_, sub)) = self.program.sources.get(topic).cloned() else {
            return Err(Error::InvalidConfiguration {
                field: "topic",
                reason: format!("the program reads no topic {topic:?}"),
            });
        };
        self.stream_time = self.stream_time.max(record.timestamp);
        let mut sink = Sink {
            stores: &mut self.stores,
            sent: Vec::new(),
            deferred: Vec::new(),
        };
        let mut result = self.program.process(&sub, &mut sink, record);
        // TopologyTestDriver commits after every record: the record caches flush, and
        // what a flush forwards into other cached stores flushes next.
        let mut flushed = Vec::new();
        while result.is_ok() && !sink.deferred.is_empty() {
            let updates = std::mem::take(&mut sink.deferred);
            result = self.program.flush(&mut sink, record, updates.clone());
            flushed.extend(updates);
        }
        let sent = std::mem::take(&mut sink.sent);
        let task = StreamsTaskId::new(sub.clone(), 0);
        let skipped = self.handler.decide(result, &task, record)?;
        for (name, store) in &mut self.stores {
            let mut log = store.take_changelog();
            if !self.program.is_logged(name) {
                // Java's store without change-logging writes nothing to a topic.
                continue;
            }
            let mine: Vec<&Deferred> = flushed.iter().filter(|d| &d.store == name).collect();
            if self.program.is_cached(name) {
                log = cached_changelog(log, &mine);
            }
            self.changelogs.entry(name.clone()).or_default().extend(log);
        }
        Ok(if skipped { Vec::new() } else { sent })
    }

    /// Pipes `key` and `value` written with their types' built-in serdes (see
    /// [`crate::dsl::serdes`]; `None` of an `Option` type is a null).
    pub fn pipe<K: 'static, V: 'static>(
        &mut self,
        topic: &str,
        key: &K,
        value: &V,
        timestamp: i64,
    ) -> Result<(), Error> {
        let ks = default_serde::<K>().ok_or_else(|| no_serde("key", std::any::type_name::<K>()))?;
        let vs =
            default_serde::<V>().ok_or_else(|| no_serde("value", std::any::type_name::<V>()))?;
        let bad = |e: String| Error::InvalidConfiguration {
            field: "dsl",
            reason: e,
        };
        let k = ks.serialize(key).map_err(bad)?;
        let v = vs.serialize(value).map_err(bad)?;
        self.pipe_input(topic, k.as_deref(), v.as_deref(), timestamp)
    }

    /// The records written to `topic` since the last read, oldest first.
    pub fn read_output(&mut self, topic: &str) -> Vec<TestRecord> {
        self.outputs
            .get_mut(topic)
            .map(|q| q.drain(..).collect())
            .unwrap_or_default()
    }

    /// [`read_output`](Self::read_output) read with the built-in serdes of `K` and `V`:
    /// `(key, value, timestamp)`; a null where the type cannot hold it is an error.
    pub fn read_typed<K: 'static, V: 'static>(
        &mut self,
        topic: &str,
    ) -> Result<Vec<(K, V, i64)>, Error> {
        let ks = default_serde::<K>().ok_or_else(|| no_serde("key", std::any::type_name::<K>()))?;
        let vs =
            default_serde::<V>().ok_or_else(|| no_serde("value", std::any::type_name::<V>()))?;
        let read = |serde: &crate::dsl::serdes::AnySerde, bytes: Option<&[u8]>, part: &str| {
            let v = serde.deserialize(bytes).map_err(Error::Serde)?;
            v.ok_or_else(|| Error::InvalidConfiguration {
                field: "dsl",
                reason: format!("a null {part} in {topic}: read it as an Option"),
            })
        };
        let mut out = Vec::new();
        for r in self.read_output(topic) {
            let k = read(&ks, r.key.as_deref(), "key")?;
            let v = read(&vs, r.value.as_deref(), "value")?;
            match (k.downcast::<K>(), v.downcast::<V>()) {
                (Ok(k), Ok(v)) => out.push((*k, *v, r.timestamp)),
                _ => return Err(no_serde("key or value", "(mismatch)")),
            }
        }
        Ok(out)
    }

    /// The entries of store `store`, in key order: key, value (without the timestamp
    /// prefix) and timestamp.
    pub fn store_entries(&self, store: &str) -> Vec<(Vec<u8>, Vec<u8>, i64)> {
        let Some(s) = self.stores.get(store) else {
            return Vec::new();
        };
        s.iter()
            .filter_map(|(k, _)| {
                let (v, ts) = s.get_with_timestamp(k)?;
                Some((k.to_vec(), v.to_vec(), ts))
            })
            .collect()
    }

    /// The topics records were written to (internal ones with the application id before
    /// them; changelogs not included: see [`take_changelog`](Self::take_changelog)), sorted.
    pub fn output_topics(&self) -> Vec<String> {
        self.outputs.keys().cloned().collect()
    }

    /// The names of the program's stores, sorted.
    pub fn store_names(&self) -> Vec<String> {
        self.stores.keys().cloned().collect()
    }

    /// The changelog records store `store` wrote since the last call, in order.
    pub fn take_changelog(&mut self, store: &str) -> Vec<ChangelogRecord> {
        self.changelogs.remove(store).unwrap_or_default()
    }

    /// Moves the wall clock on (the program has no punctuations yet: nothing runs on it).
    pub fn advance_wall_clock_time(&mut self, by: Duration) {
        let ms = i64::try_from(by.as_millis()).unwrap_or(i64::MAX);
        self.wall_clock_ms = self.wall_clock_ms.saturating_add(ms);
    }

    /// The wall clock, in milliseconds since the driver started.
    pub fn wall_clock_time(&self) -> i64 {
        self.wall_clock_ms
    }

    /// The stream time: the largest timestamp processed (-1 before the first record).
    pub fn stream_time(&self) -> i64 {
        self.stream_time
    }
}
