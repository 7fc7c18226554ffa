//! The blocking shell around the [`Accumulator`]: the public calls, metadata and
//! InitProducerId, on the crate's [`Client`] with its deadlines; the Produce requests are
//! [`super::sender`]'s.

use std::collections::VecDeque;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::accumulator::{
    Accumulator, BatchSettings, ProducerIdentity, ProducerRecord, Room, TopicPartition,
};
use super::config::ProducerConfig;
use super::sender::InFlightProduce;
use super::transaction::TransactionManager;
use crate::client::{Client, ClientError, NodeRotation, SharedClient};
use crate::connect::client_error;
use crate::error::{BrokerErrorContext, Error};
use crate::protocol::api::init_producer_id::InitProducerIdRequest;
use crate::protocol::records::{partition_for_key, Header, RecordSpec, RecordsError};
use crate::protocol::{BrokerErrorKind, Uuid};
use crate::transport::TransportError;
use rustc_hash::FxHashMap as FastHashMap;

/// A record lent to [`Producer::send_ref`]: the processing runtime's records, sent without
/// an owned [`ProducerRecord`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct RecordRef<'a> {
    /// The topic.
    pub(crate) topic: &'a str,
    /// An explicit partition, or `None` for the partitioner.
    pub(crate) partition: Option<i32>,
    /// The key, `None` for null.
    pub(crate) key: Option<&'a [u8]>,
    /// The value, `None` for null.
    pub(crate) value: Option<&'a [u8]>,
    /// The headers, in order.
    pub(crate) headers: &'a [Header<'a>],
    /// Milliseconds since the epoch; `None` = the time of the send.
    pub(crate) timestamp: Option<i64>,
}

impl RecordRef<'_> {
    /// An owned copy (for a producer port that keeps records).
    pub(crate) fn to_owned_record(self) -> ProducerRecord {
        ProducerRecord {
            topic: self.topic.to_string(),
            partition: self.partition,
            key: self.key.map(<[u8]>::to_vec),
            value: self.value.map(<[u8]>::to_vec),
            headers: self
                .headers
                .iter()
                .map(|h| (h.key.to_vec(), h.value.map(<[u8]>::to_vec)))
                .collect(),
            timestamp: self.timestamp,
        }
    }
}

/// What the producer knows of a topic: its id and each partition's leader (`-1` unknown).
#[derive(Debug, Clone)]
pub(super) struct TopicInfo {
    pub(super) id: Uuid,
    pub(super) leaders: Vec<i32>,
}

/// A blocking, idempotent Kafka producer.
///
/// [`send`](Producer::send) picks the partition (explicit, Java's murmur2 partitioner for a
/// key, a sticky random partition for a null key), appends the record to that partition's
/// batch and returns the partition; when some batch is full or has waited `linger.ms`, it
/// also sends what is ready (blocking for that round trip). [`flush`](Producer::flush)
/// sends everything and waits for the acknowledgements (`acks=all`) until its deadline.
///
/// With idempotence (the default) the producer takes a producer id (InitProducerId) and
/// stamps each partition's batches with consecutive sequences. Up to
/// `max.in.flight.requests.per.connection` (5) Produce requests per broker are in flight at
/// once: `send` writes what is ready and returns without waiting for the answer (it waits
/// for the oldest one when that many are out), `flush` reads them. A batch whose answer is
/// lost is resent with the same bytes, after every batch before it in its partition is
/// settled, so a connection cut after the broker wrote a batch gives no duplicate and no
/// reordering. A sequence the broker rejects
/// (OUT_OF_ORDER_SEQUENCE_NUMBER, UNKNOWN_PRODUCER_ID) or a batch that failed for good bumps
/// the epoch and restarts that partition at sequence 0, as Java's idempotent producer does.
/// A batch not acknowledged within `delivery.timeout.ms` of its creation fails
/// ([`Error::Timeout`], reported by [`flush`](Producer::flush)) instead of being retried
/// forever.
///
/// Memory is bounded as in Java: the batches not yet acknowledged hold at most
/// `buffer.memory` bytes; a `send` that would pass it waits (sending meanwhile) for at most
/// `max.block.ms`, which also bounds its wait for a new topic's metadata.
///
/// With `transactional.id` it is transactional: see
/// [`init_transactions`](Producer::init_transactions) and the [module docs](super).
///
/// Dropping a producer does not flush: call [`flush`](Producer::flush) first.
pub struct Producer {
    pub(super) config: ProducerConfig,
    pub(super) client: Option<SharedClient>,
    pub(super) acc: Accumulator,
    pub(super) topics: FastHashMap<String, TopicInfo>,
    sticky: FastHashMap<String, i32>,
    /// Failures not yet reported by [`Producer::flush`].
    pub(super) failures: Vec<(TopicPartition, Error)>,
    /// The transaction state machine (with `transactional.id`).
    pub(super) txn: Option<TransactionManager>,
    /// Produce requests written and not yet answered, oldest first.
    pub(super) in_flight: VecDeque<InFlightProduce>,
}

impl std::fmt::Debug for Producer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Producer")
            .field("identity", &self.acc.current_identity())
            .field("outstanding", &self.acc.outstanding())
            .finish()
    }
}

impl Producer {
    /// Checks `config` and connects to the cluster within its request timeout.
    pub fn new(config: ProducerConfig) -> Result<Producer, Error> {
        config.validate()?;
        let client = Client::from_config(config.client(), config.client().get_request_timeout())?;
        Producer::with_client(SharedClient::new(client), config)
    }

    /// Checks `config` and makes a producer on `client`, shared with other users on the same
    /// thread (e.g. a fetcher): no connection of its own. `config.client()` still gives the
    /// request timeout, retry backoff and metrics; the connection settings are `client`'s.
    /// The producer's metadata, batches and idempotent identity stay its own.
    pub fn with_client(client: SharedClient, config: ProducerConfig) -> Result<Producer, Error> {
        config.validate()?;
        let acc = Accumulator::new(BatchSettings {
            linger: config.get_linger(),
            batch_size: config.get_batch_size(),
            compression: config.get_compression(),
            buffer_memory: config.get_buffer_memory(),
        });
        let mut acc = acc;
        acc.set_max_in_flight(config.get_max_in_flight());
        let txn = config.get_transactional_id().map(|id| {
            acc.set_transactional(true);
            let timeout = config.get_transaction_timeout().as_millis();
            TransactionManager::new(id, timeout.min(i32::MAX as u128) as i32)
        });
        Ok(Producer {
            config,
            client: Some(client),
            acc,
            topics: FastHashMap::default(),
            sticky: FastHashMap::default(),
            failures: Vec::new(),
            txn,
            in_flight: VecDeque::new(),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &ProducerConfig {
        &self.config
    }

    /// The producer id and epoch in use (`None` before the first batch, or without
    /// idempotence).
    pub fn identity(&self) -> Option<ProducerIdentity> {
        self.acc.current_identity().filter(|i| i.producer_id >= 0)
    }

    /// Records sent to the producer and not yet acknowledged or failed.
    pub fn outstanding(&self) -> usize {
        self.acc.outstanding()
    }

    /// Bytes queued and not yet acknowledged or failed (what `buffer.memory` bounds).
    pub fn queued_bytes(&self) -> usize {
        self.acc.queued_bytes()
    }

    /// Queues `record` and returns its partition; blocks for at most `max.block.ms` in all.
    ///
    /// Looks the topic up first if it is new, retrying lost connections and missing metadata
    /// until `max.block.ms` (then [`Error::Broker`] with the topic's error, or the last
    /// connection error). If the record would take the queued bytes past `buffer.memory`,
    /// sends every queued batch and waits for acknowledgements, failing with
    /// [`Error::Timeout`] (naming `buffer.memory`, `max.block.ms` and the bytes queued) if
    /// no room is made by then; a record larger than `buffer.memory` itself fails at once
    /// ([`Error::Broker`] with [`BrokerErrorKind::MessageTooLarge`], Java's
    /// `RecordTooLargeException`). Once queued, ready batches (full or past `linger.ms`) are
    /// sent before returning; a failed send (connection lost, broker busy) is retried by
    /// later calls and, for good, reported by [`flush`](Self::flush). Only an error that
    /// retrying cannot fix (authentication, TLS, an unsupported broker) is returned then,
    /// and the record stays queued.
    pub fn send(&mut self, record: ProducerRecord) -> Result<i32, Error> {
        let headers: Vec<Header<'_>> = record
            .headers
            .iter()
            .map(|(key, value)| Header {
                key,
                value: value.as_deref(),
            })
            .collect();
        self.send_ref(RecordRef {
            topic: &record.topic,
            partition: record.partition,
            key: record.key.as_deref(),
            value: record.value.as_deref(),
            headers: &headers,
            timestamp: record.timestamp,
        })
    }

    /// [`send`](Self::send) of a borrowed record: the processing runtime's per-record path.
    /// Nothing of the record is copied but its encoding into its partition's batch, and the
    /// topic is found without building a key for it.
    pub(crate) fn send_ref(&mut self, r: RecordRef<'_>) -> Result<i32, Error> {
        let now = Instant::now();
        let timestamp = r.timestamp.unwrap_or_else(now_ms);
        let spec = RecordSpec::new(r.key, r.value, timestamp).with_headers(r.headers);
        let room = self.acc.room_spec(&spec).map_err(encode_error)?;
        if let Room::TooLarge { needed } = room {
            return Err(too_large(r.topic, needed, self.config.get_buffer_memory()));
        }
        let block_deadline = now + self.config.get_max_block();
        let partitions = self.partitions_of(r.topic, block_deadline)?;
        let partition = match (r.partition, r.key) {
            (Some(p), _) if p >= 0 && p < partitions => p,
            (Some(p), _) => {
                return Err(Error::InvalidConfiguration {
                    field: "partition",
                    reason: format!(
                        "topic {:?} has {partitions} partitions, so partition {p} does not exist",
                        r.topic
                    ),
                })
            }
            (None, Some(key)) => partition_for_key(key, partitions).unwrap_or(0),
            (None, None) => match self.sticky.get(r.topic) {
                Some(p) => *p,
                None => {
                    let p = rand::random_range(0..partitions);
                    self.sticky.insert(r.topic.to_string(), p);
                    p
                }
            },
        };
        if room != Room::Fits {
            self.wait_for_room(r.topic, &spec, now, block_deadline)?;
        }
        if let Some(txn) = &mut self.txn {
            // Java's maybeAddPartition: only inside a transaction.
            txn.add_partition(&TopicPartition::new(r.topic, partition))
                .map_err(Error::from)?;
        }
        let filled = self
            .acc
            .append_spec(r.topic, partition, &spec, now)
            .map_err(encode_error)?;
        if filled && r.partition.is_none() && r.key.is_none() {
            // Java's sticky partitioner moves on once a batch is full.
            self.sticky.remove(r.topic);
        }
        if self.acc.has_ready(now, false) {
            // Within max.block.ms too: what does not go out now goes with a later call.
            match self.round(block_deadline, false) {
                Ok(()) => {}
                Err(e) if transient(&e) => {
                    log::debug!("send: sending ready batches failed: {e}; retried later");
                }
                Err(e) => return Err(e),
            }
        }
        Ok(partition)
    }

    /// Waits until `spec` (a record for `topic`) fits in `buffer.memory`, sending every
    /// queued batch meanwhile (Java marks all batches ready while a `send` waits for
    /// memory), until `deadline`.
    fn wait_for_room(
        &mut self,
        topic: &str,
        spec: &RecordSpec<'_>,
        started: Instant,
        deadline: Instant,
    ) -> Result<(), Error> {
        loop {
            let room = self.acc.room_spec(spec).map_err(encode_error)?;
            let (queued, needed) = match room {
                Room::Fits => return Ok(()),
                Room::TooLarge { needed } => {
                    return Err(too_large(topic, needed, self.config.get_buffer_memory()))
                }
                Room::Wait { queued, needed } => (queued, needed),
            };
            if Instant::now() >= deadline {
                return Err(Error::Timeout {
                    operation: format!(
                        "send to {topic:?}: waiting for room in buffer.memory ({queued} bytes \
                         queued and not acknowledged, {needed} more needed, buffer.memory {}; \
                         max.block.ms passed: check the brokers, or raise buffer.memory or \
                         max.block.ms)",
                        self.config.get_buffer_memory()
                    ),
                    limit: deadline.saturating_duration_since(started),
                });
            }
            match self.round(deadline, true) {
                Ok(()) => {}
                Err(e) if transient(&e) => {
                    log::debug!("send: waiting for buffer.memory: {e}; retrying");
                    let pause = self
                        .backoff()
                        .min(deadline.saturating_duration_since(Instant::now()));
                    std::thread::sleep(pause);
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Sends every queued record and waits until all are acknowledged, or `deadline`.
    ///
    /// Retriable failures (leader moved, connection lost, timeouts) are retried with the
    /// same batches until each batch's `delivery.timeout.ms` has passed, when it fails
    /// ([`Error::Timeout`] naming the partition and the last error). If `deadline` comes
    /// first, [`Error::Timeout`] is returned and the records stay queued (a later `flush`
    /// continues). A batch that failed (e.g. MESSAGE_TOO_LARGE, or its delivery timeout) is
    /// reported here once, as the first such error.
    pub fn flush(&mut self, deadline: Instant) -> Result<(), Error> {
        let start = Instant::now();
        while self.acc.outstanding() > 0 {
            if Instant::now() >= deadline {
                return Err(Error::Timeout {
                    operation: format!(
                        "flush ({} records not acknowledged)",
                        self.acc.outstanding()
                    ),
                    limit: deadline.saturating_duration_since(start),
                });
            }
            self.round(deadline, true)?;
        }
        if self.failures.is_empty() {
            Ok(())
        } else {
            let n = self.failures.len();
            let (TopicPartition { topic, partition }, e) = self.failures.remove(0);
            self.failures.clear();
            log::warn!("flush: {n} batch(es) failed; first: {topic}-{partition}: {e}");
            Err(e)
        }
    }

    /// Sends the batches that are ready (full, or open for `linger.ms`) and applies the
    /// answers, returning by `deadline`; does nothing (and does not block) if none is
    /// ready. Returns true if something was sent.
    ///
    /// Java's producer sends a batch as soon as `linger.ms` passed, from its I/O thread;
    /// this blocking producer has none, so a caller that may not `send` again for a while
    /// (a processing loop waiting for input) calls this regularly, with a short deadline,
    /// for its lingered records to go out. A failed send (connection lost, broker busy) is
    /// logged and retried by later calls and, for good, reported by [`flush`](Self::flush);
    /// only an error that retrying cannot fix (authentication, TLS, an unsupported broker)
    /// is returned.
    pub fn send_ready(&mut self, deadline: Instant) -> Result<bool, Error> {
        if !self.acc.has_ready(Instant::now(), false) {
            return Ok(false);
        }
        match self.round(deadline, false) {
            Ok(()) => Ok(true),
            Err(e) if transient(&e) => {
                log::debug!("send_ready: sending ready batches failed: {e}; retried later");
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    pub(super) fn client(
        &mut self,
        deadline: Instant,
    ) -> Result<parking_lot::MutexGuard<'_, Client>, Error> {
        if self.client.is_none() {
            let left = deadline.saturating_duration_since(Instant::now());
            self.client = Some(SharedClient::connect(self.config.client(), left)?);
        }
        self.client
            .as_ref()
            .map(SharedClient::lock)
            .ok_or(Error::Closed)
    }

    /// The partition count of `topic`, from metadata (fetched and waited for if new).
    fn partitions_of(&mut self, topic: &str, deadline: Instant) -> Result<i32, Error> {
        if let Some(t) = self.topics.get(topic) {
            return Ok(t.leaders.len() as i32);
        }
        // The topic's error in the last answer that had one.
        let mut answered = None;
        loop {
            let kind = match self.refresh(&[topic.to_string()], deadline) {
                Ok(kind) => kind,
                Err(e) if transient(&e) && Instant::now() + self.backoff() < deadline => {
                    // A cut or reset connection (or one cut mid-handshake): the client
                    // reconnects on the next try.
                    log::debug!("metadata for {topic:?}: {e}; retrying");
                    BrokerErrorKind::None
                }
                // The last try ran out of time (under load a backoff sleep can leave it a
                // few ms): the topic's own error says more than that timeout.
                Err(e) if transient(&e) => {
                    return Err(answered.map_or(e, |k| no_metadata(topic, k)))
                }
                Err(e) => return Err(e),
            };
            if let Some(t) = self.topics.get(topic) {
                return Ok(t.leaders.len() as i32);
            }
            if kind != BrokerErrorKind::None {
                answered = Some(kind);
            }
            if Instant::now() + self.backoff() >= deadline {
                return Err(no_metadata(topic, kind));
            }
            std::thread::sleep(self.backoff());
        }
    }

    /// The deadline of one request: `request.timeout.ms` from now, or `deadline` if sooner
    /// (a connection that stopped answering is given up and retried, as Java does, instead of
    /// holding the whole `max.block.ms` / `delivery.timeout.ms`).
    pub(super) fn request_deadline(&self, deadline: Instant) -> Instant {
        deadline.min(Instant::now() + self.config.client().get_request_timeout())
    }

    /// [`ensure_identity`](Self::ensure_identity) for the sender (kept apart so that
    /// function stays as it is).
    pub(super) fn identity_until(&mut self, deadline: Instant) -> Result<ProducerIdentity, Error> {
        self.ensure_identity(deadline)
    }

    pub(super) fn backoff(&self) -> Duration {
        self.config.client().get_retry_backoff().0
    }

    /// Refreshes metadata for `topics`; returns the error of the last topic that had one
    /// (None if all are fine).
    pub(super) fn refresh(
        &mut self,
        topics: &[String],
        deadline: Instant,
    ) -> Result<BrokerErrorKind, Error> {
        let names: Vec<&str> = topics.iter().map(String::as_str).collect();
        let request_deadline = self.request_deadline(deadline);
        let md = self
            .client(deadline)?
            .metadata(Some(&names), request_deadline)
            .map_err(client_error)?;
        let mut kind = BrokerErrorKind::None;
        for t in &md.topics {
            let Some(name) = t.name.clone() else { continue };
            if t.error() != BrokerErrorKind::None || t.partitions.is_empty() {
                kind = t.error();
                continue;
            }
            let n = t
                .partitions
                .iter()
                .map(|p| p.partition_index + 1)
                .max()
                .unwrap_or(0)
                .max(0) as usize;
            let mut leaders = vec![-1; n];
            for p in &t.partitions {
                if p.partition_index >= 0 && p.error_code == 0 {
                    leaders[p.partition_index as usize] = p.leader_id;
                }
            }
            self.topics.insert(
                name,
                TopicInfo {
                    id: t.topic_id,
                    leaders,
                },
            );
        }
        Ok(kind)
    }

    /// Takes a producer id (idempotence) if there is none, retrying the broker's "try again"
    /// answers until `deadline`.
    fn ensure_identity(&mut self, deadline: Instant) -> Result<ProducerIdentity, Error> {
        if let Some(i) = self.acc.identity() {
            return Ok(i);
        }
        if self.txn.is_some() {
            return Err(Error::InvalidConfiguration {
                field: "transactional.id",
                reason: "a transactional producer sends nothing before init_transactions \
                         succeeded: call Producer::init_transactions first"
                    .to_string(),
            });
        }
        if !self.config.get_idempotence() {
            self.acc.set_identity(ProducerIdentity::NONE);
            return Ok(ProducerIdentity::NONE);
        }
        let req = InitProducerIdRequest {
            transaction_timeout_ms: 60_000,
            ..Default::default()
        };
        let started = Instant::now();
        let mut rotation = NodeRotation::new(); // Java: leastLoadedNode, retries elsewhere
        loop {
            let backoff = self.backoff();
            let request_deadline = self.request_deadline(deadline);
            let (target, r) = self
                .client(deadline)?
                .send_to_any(&rotation, &req, request_deadline);
            let retry = match r {
                Ok(resp) if resp.error() == BrokerErrorKind::None => {
                    let id = ProducerIdentity {
                        producer_id: resp.producer_id,
                        producer_epoch: resp.producer_epoch,
                    };
                    log::debug!("producer id {} epoch {}", id.producer_id, id.producer_epoch);
                    self.acc.set_identity(id);
                    return Ok(id);
                }
                Ok(resp) if resp.error().is_retriable() => format!("{}", resp.error()),
                Ok(resp) => {
                    return Err(Error::Broker {
                        kind: resp.error(),
                        code: resp.error_code,
                        message: None,
                        context: BrokerErrorContext::api("InitProducerId"),
                    })
                }
                Err(e) if !fatal(&e) => e.to_string(),
                Err(e) => return Err(client_error(e)),
            };
            if Instant::now() + backoff >= deadline {
                return Err(Error::Timeout {
                    operation: format!("InitProducerId (last answer: {retry})"),
                    // The time really waited (not the backoff it would have slept next).
                    limit: started.elapsed(),
                });
            }
            log::debug!("InitProducerId to {target:?}: {retry}; retrying on another node");
            rotation.failed(target);
            self.config.client().get_metrics().record_retry();
            std::thread::sleep(backoff);
        }
    }
}

/// Errors that retrying cannot fix (credentials, certificates, an API the broker lacks, a
/// request that cannot be encoded). Everything else, a connection cut mid-handshake or
/// mid-frame included, is retried until the caller's deadline.
pub(super) fn fatal(e: &ClientError) -> bool {
    matches!(
        e,
        ClientError::Encode { .. }
            | ClientError::UnsupportedApi { .. }
            | ClientError::Sasl { .. }
            | ClientError::SaslRefused { .. }
            | ClientError::Transport(TransportError::Tls { .. } | TransportError::NotTls { .. })
    )
}

/// Failures that a later try may not meet: lost or reset connections, timeouts, a frame
/// cut mid-way (decode and protocol errors of a cut stream), retriable broker codes.
fn transient(e: &Error) -> bool {
    e.is_retriable() || matches!(e, Error::Protocol { .. } | Error::Decode(_))
}

/// The error of a topic without usable metadata by `max.block.ms`.
fn no_metadata(topic: &str, kind: BrokerErrorKind) -> Error {
    Error::Broker {
        kind,
        code: kind.code(),
        message: Some(format!(
            "topic {topic:?} has no usable metadata within max.block.ms: create it, or check \
             the name"
        )),
        context: BrokerErrorContext::api("Metadata"),
    }
}

/// Java's `RecordTooLargeException` for a record `buffer.memory` cannot hold.
fn too_large(topic: &str, needed: usize, buffer_memory: usize) -> Error {
    Error::Broker {
        kind: BrokerErrorKind::MessageTooLarge,
        code: BrokerErrorKind::MessageTooLarge.code(),
        message: Some(format!(
            "a record for {topic:?} takes up to {needed} bytes, more than buffer.memory \
             ({buffer_memory}): it can never be queued (refused by the client, not sent)"
        )),
        context: BrokerErrorContext::api("Produce"),
    }
}

/// A record the batch encoding refuses.
fn encode_error(e: RecordsError) -> Error {
    Error::InvalidConfiguration {
        field: "record",
        reason: format!("cannot encode the record: {e}"),
    }
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
