//! What application code sees while it processes a record: its task, the stores of its task
//! and a way to send records to sink topics.

use crate::consumer::RecordHeaders;
use crate::error::Error;
use crate::producer::{ProducerRecord, RecordRef};
use crate::protocol::records::Header;
use crate::streams::StreamsTaskId;

use super::collector::RecordCollector;
use super::state_manager::Stores;
use super::task::InputRecord;
use crate::state::{KeyValueStore, StateStore};

/// Application code for one task: gets each input record of the task, in timestamp order
/// across the task's partitions.
///
/// Made per task by the factory given to [`StreamsApp`](super::StreamsApp). Its life, as
/// Kafka Streams' `Processor`: [`init`](Self::init) once the task's stores are restored,
/// before its first record; [`process`](Self::process) per record;
/// [`close`](Self::close) when the task stops here (revoked, lost, or the runtime closed),
/// before its offsets are committed and before the member leaves the group, so nothing it
/// does overlaps with the task's next owner. A returned error stops the runtime (Kafka
/// Streams' default `LogAndFailProcessingExceptionHandler`).
pub trait Processor: Send {
    /// Called once before the first record, with the task's stores restored. Does nothing
    /// by default.
    fn init(&mut self, ctx: &mut TaskContext<'_>) -> Result<(), Error> {
        let _ = ctx;
        Ok(())
    }

    /// Processes one record.
    fn process(&mut self, ctx: &mut TaskContext<'_>, record: &InputRecord) -> Result<(), Error>;

    /// Called once when the task stops on this member, after its last record. Does nothing
    /// by default.
    fn close(&mut self) {}
}

/// Headers of a record: `(key, value)` pairs in order, a `None` value is a null header.
pub type Headers = [(Vec<u8>, Option<Vec<u8>>)];

/// Headers a record can be sent with: a list of `(key, value)` pairs ([`Headers`], a `Vec`
/// or an array of them, `&[]` for none) or an input record's [`RecordHeaders`], which are
/// forwarded without a copy of their own (the producer writes them into its batch).
pub trait SendHeaders {
    /// Calls `f` with each header, in order.
    fn for_each_header(&self, f: &mut dyn FnMut(Header<'_>));
}

impl SendHeaders for Headers {
    fn for_each_header(&self, f: &mut dyn FnMut(Header<'_>)) {
        for (key, value) in self {
            f(Header {
                key,
                value: value.as_deref(),
            });
        }
    }
}

impl<const N: usize> SendHeaders for [(Vec<u8>, Option<Vec<u8>>); N] {
    fn for_each_header(&self, f: &mut dyn FnMut(Header<'_>)) {
        self[..].for_each_header(f)
    }
}

impl SendHeaders for Vec<(Vec<u8>, Option<Vec<u8>>)> {
    fn for_each_header(&self, f: &mut dyn FnMut(Header<'_>)) {
        self[..].for_each_header(f)
    }
}

impl SendHeaders for RecordHeaders {
    fn for_each_header(&self, f: &mut dyn FnMut(Header<'_>)) {
        for h in self {
            f(h);
        }
    }
}

/// The task's view of the runtime while one record is processed.
pub struct TaskContext<'a> {
    pub(crate) task: &'a StreamsTaskId,
    pub(crate) collector: &'a mut RecordCollector,
    pub(crate) stores: &'a mut Stores,
}

impl TaskContext<'_> {
    /// The task being processed.
    pub fn task(&self) -> &StreamsTaskId {
        self.task
    }

    /// Sends a record to `topic`, partitioned as Kafka Streams does by default: Java's
    /// murmur2 partitioner on the key bytes (any partition for a null key). Returns the
    /// partition. Delivery is confirmed at the next commit (the producer is flushed before
    /// offsets are committed). `headers`: see [`SendHeaders`] (`&record.headers` forwards
    /// an input record's).
    pub fn send<H: SendHeaders + ?Sized>(
        &mut self,
        topic: &str,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        timestamp: i64,
        headers: &H,
    ) -> Result<i32, Error> {
        self.send_record(topic, None, key, value, timestamp, headers)
    }

    /// Like [`send`](Self::send) to an explicit partition.
    pub fn send_to_partition<H: SendHeaders + ?Sized>(
        &mut self,
        topic: &str,
        partition: i32,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        timestamp: i64,
        headers: &H,
    ) -> Result<i32, Error> {
        self.send_record(topic, Some(partition), key, value, timestamp, headers)
    }

    fn send_record(
        &mut self,
        topic: &str,
        partition: Option<i32>,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        timestamp: i64,
        headers: &(impl SendHeaders + ?Sized),
    ) -> Result<i32, Error> {
        let mut any = false;
        headers.for_each_header(&mut |_| any = true);
        if !any {
            // The usual case: the record is lent to the producer, nothing copied.
            return self.collector.send_ref(RecordRef {
                topic,
                partition,
                key,
                value,
                headers: &[],
                timestamp: Some(timestamp),
            });
        }
        let mut r = ProducerRecord::new(topic, key, value).timestamp(timestamp);
        r.partition = partition;
        headers.for_each_header(&mut |h| {
            r.headers
                .push((h.key.to_vec(), h.value.map(<[u8]>::to_vec)))
        });
        self.collector.send(r)
    }

    /// The task's key-value store named `name` (restored before the first record); every
    /// write is sent to its changelog partition (= the task's partition) after this record.
    /// The store is found by name through [`state_store`](Self::state_store).
    pub fn store(&mut self, name: &str) -> Result<&mut KeyValueStore, Error> {
        let task = self.task;
        self.state_store(name)?
            .as_any_mut()
            .downcast_mut::<KeyValueStore>()
            .ok_or_else(|| Error::InvalidConfiguration {
                field: "store",
                reason: format!(
                    "store {name:?} of task {task} is not a key-value store: reach it with \
                     TaskContext::state_store and its own type"
                ),
            })
    }

    /// The task's store named `name`, whatever its kind (Java's
    /// `ProcessorContext#getStateStore`); [`store`](Self::store) is the typed accessor of
    /// the key-value store.
    pub fn state_store(&mut self, name: &str) -> Result<&mut dyn StateStore, Error> {
        let task = self.task;
        match self.stores.get_mut(name) {
            Some(s) => Ok(&mut *s.store),
            None => Err(Error::InvalidConfiguration {
                field: "store",
                reason: format!(
                    "task {task} has no store named {name:?}: declare it with \
                     StreamsApp::store for subtopology {}",
                    task.subtopology_id
                ),
            }),
        }
    }
}
