//! The sending half of the [`Producer`] (Java's `Sender`): rounds that seal what is ready,
//! write one Produce per leader without waiting for its answer, keep up to
//! `max.in.flight.requests.per.connection` of them in flight per broker, and apply the
//! answers as they are read.
//!
//! ```text
//!   round(deadline, flushing)
//!     expire                       batches past delivery.timeout.ms fail
//!     identity_until               InitProducerId (idempotence)
//!     drain → start_produce        per leader: wait for its oldest answer first when
//!                                  max in flight are out; then write the request
//!     await_oldest                 when flushing: read one answer, apply it per batch
//! ```
//!
//! A connection lost with requests in flight fails them all: their batches go again, each
//! only once every batch before it in its partition is settled (see the
//! [accumulator](super::accumulator)), so the broker's sequence check keeps them in order
//! and written once.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Instant;

use super::accumulator::{classify, BatchOutcome, Expired, SealedBatch, TopicPartition};
use super::shell::fatal;
use super::Producer;
use crate::client::{BrokerTarget, PendingRequest};
use crate::connect::client_error;
use crate::error::{BrokerErrorContext, Error};
use crate::protocol::api::produce::{
    PartitionProduceData, ProduceRequest, ProduceResponse, TopicProduceData, ACKS_ALL,
};
use crate::protocol::{BrokerErrorKind, Uuid};

/// A Produce request written to a leader and not yet answered.
#[derive(Debug)]
pub(super) struct InFlightProduce {
    leader: i32,
    pending: PendingRequest,
    /// `request.timeout.ms` after it was written: its answer is not awaited longer.
    deadline: Instant,
    /// Its batches: partition, batch id, records.
    batches: Vec<(TopicPartition, u64, i32)>,
}

/// What applying answers did: some batch settled, a metadata refresh is due, some batch is
/// to be retried.
#[derive(Debug, Default, Clone, Copy)]
struct Effect {
    progress: bool,
    refresh: bool,
    retried: bool,
}

impl Effect {
    fn add(&mut self, o: Effect) {
        self.progress |= o.progress;
        self.refresh |= o.refresh;
        self.retried |= o.retried;
    }
}

impl Producer {
    /// One round: seal what is ready, one Produce per leader per drain (up to
    /// `max.in.flight.requests.per.connection` drains), and, when `flushing`, read the
    /// oldest answer.
    pub(super) fn round(&mut self, deadline: Instant, flushing: bool) -> Result<(), Error> {
        self.expire();
        if self.acc.outstanding() == 0 {
            return Ok(());
        }
        // InitProducerId is retried no longer than the first batch may wait: past that,
        // the next round fails the batch (delivery.timeout.ms) instead.
        let until = self.acc.oldest_batch().map_or(deadline, |t| {
            deadline.min(t + self.config.get_delivery_timeout())
        });
        match self.identity_until(until) {
            Ok(_) => {}
            Err(Error::Timeout { .. }) if until < deadline => return Ok(()),
            Err(e) => return Err(e),
        }
        // Transaction version 1: the partitions go into the transaction before their batches.
        self.add_partitions_to_txn(deadline)?;
        let mut effect = Effect::default();
        let mut sent = false;
        for _ in 0..self.config.get_max_in_flight() {
            let (any, e) = self.send_drained(deadline, flushing)?;
            sent |= any;
            effect.add(e);
            if !any || e.refresh {
                break;
            }
        }
        let awaited = flushing && !self.in_flight.is_empty();
        if awaited {
            effect.add(self.await_oldest(None, deadline)?);
        }
        if effect.refresh {
            self.refresh_busy(deadline);
        }
        let idle = flushing && !sent && !awaited;
        if (effect.retried || idle) && !effect.progress && self.acc.outstanding() > 0 {
            let pause = self
                .backoff()
                .min(deadline.saturating_duration_since(Instant::now()));
            std::thread::sleep(pause);
        }
        Ok(())
    }

    /// Drains once and writes one Produce per leader, first reading a leader's oldest answer
    /// when its requests in flight are at the limit. Returns whether something was drained.
    fn send_drained(&mut self, deadline: Instant, flushing: bool) -> Result<(bool, Effect), Error> {
        let batches =
            self.acc
                .drain(Instant::now(), flushing)
                .map_err(|e| Error::InvalidConfiguration {
                    field: "record",
                    reason: format!("cannot encode a batch: {e}"),
                })?;
        if batches.is_empty() {
            return Ok((false, Effect::default()));
        }
        let mut effect = Effect::default();
        let mut by_leader: BTreeMap<i32, Vec<(TopicPartition, SealedBatch)>> = BTreeMap::new();
        for (tp, b) in batches {
            match self
                .topics
                .get(&tp.topic)
                .and_then(|t| t.leaders.get(tp.partition as usize))
            {
                Some(&leader) if leader >= 0 => by_leader.entry(leader).or_default().push((tp, b)),
                _ => {
                    // No leader known: back to the queue until metadata names one.
                    self.acc
                        .complete_batch(&tp, b.id, &BatchOutcome::Retry { refresh: true });
                    effect.refresh = true;
                    effect.retried = true;
                }
            }
        }
        let max = self.config.get_max_in_flight();
        for (leader, batches) in by_leader {
            while self.in_flight.iter().filter(|f| f.leader == leader).count() >= max {
                effect.add(self.await_oldest(Some(leader), deadline)?);
            }
            effect.add(self.start_produce(leader, batches, deadline)?);
        }
        Ok((true, effect))
    }

    /// Refreshes the metadata of the topics with records queued or in flight.
    fn refresh_busy(&mut self, deadline: Instant) {
        let mut busy: Vec<String> = self
            .acc
            .busy_partitions()
            .map(|tp| tp.topic.clone())
            .collect();
        busy.dedup();
        if let Err(e) = self.refresh(&busy, deadline) {
            log::debug!("metadata refresh failed: {e}; retrying");
        }
    }

    /// Fails the batches past `delivery.timeout.ms`, keeping an error per partition for
    /// [`flush`](Self::flush).
    fn expire(&mut self) {
        let timeout = self.config.get_delivery_timeout();
        for Expired {
            tp,
            records,
            sent,
            attempts,
            last_error,
        } in self.acc.expire(Instant::now(), timeout)
        {
            let what = if sent {
                format!(
                    "{attempts} sends, last error: {}; the last batch may have been written",
                    last_error.as_deref().unwrap_or("none")
                )
            } else {
                "never sent: no broker answered".to_string()
            };
            log::warn!(
                "{records} records for {}-{} not acknowledged within delivery.timeout.ms ({what})",
                tp.topic,
                tp.partition
            );
            if let Some(txn) = &mut self.txn {
                txn.on_batch_failed(&tp, BrokerErrorKind::RequestTimedOut);
            }
            self.failures.push((
                tp.clone(),
                Error::Timeout {
                    operation: format!(
                        "delivering {records} records to {}-{} ({what}; check the brokers \
                         and the topic, or raise delivery.timeout.ms)",
                        tp.topic, tp.partition
                    ),
                    limit: timeout,
                },
            ));
        }
    }

    /// Writes one Produce with `batches` to `leader` without waiting for the answer.
    fn start_produce(
        &mut self,
        leader: i32,
        batches: Vec<(TopicPartition, SealedBatch)>,
        deadline: Instant,
    ) -> Result<Effect, Error> {
        let request_deadline = self.request_deadline(deadline);
        let req = self.produce_request(&batches, request_deadline);
        let metrics = self.config.client().get_metrics().clone();
        let cap = self.produce_version_cap();
        let started = self.client(request_deadline).map(|mut c| {
            let v = c
                .connection(BrokerTarget::Node(leader), request_deadline)
                .and_then(|conn| conn.pick_version::<ProduceRequest>());
            v.and_then(|v| c.start_on(leader, &req, v.min(cap), request_deadline))
        })?;
        if let Some(txn) = &mut self.txn {
            for (tp, _) in &batches {
                txn.on_batch_sent(tp);
            }
        }
        let ids = batches.iter().map(|(tp, b)| (tp.clone(), b.id, b.records));
        match started {
            Ok(pending) => {
                self.in_flight.push_back(InFlightProduce {
                    leader,
                    pending,
                    deadline: Instant::now() + self.config.client().get_request_timeout(),
                    batches: ids.collect(),
                });
                Ok(Effect::default())
            }
            Err(e) if !fatal(&e) => {
                metrics.record_retry();
                let ids: Vec<_> = ids.collect();
                Ok(self.lost(leader, &ids, &e.to_string()))
            }
            Err(e) => Err(client_error(e)),
        }
    }

    /// The Produce request carrying `batches`, answered by the broker within the time left
    /// to `request_deadline`.
    fn produce_request(
        &self,
        batches: &[(TopicPartition, SealedBatch)],
        request_deadline: Instant,
    ) -> ProduceRequest {
        let timeout_ms = request_deadline
            .saturating_duration_since(Instant::now())
            .as_millis()
            .clamp(1, i32::MAX as u128) as i32;
        let mut topic_data: BTreeMap<&str, TopicProduceData> = BTreeMap::new();
        for (tp, b) in batches {
            let id = self.topics.get(&tp.topic).map_or(Uuid::ZERO, |t| t.id);
            topic_data
                .entry(tp.topic.as_str())
                .or_insert_with(|| TopicProduceData {
                    name: tp.topic.clone(),
                    topic_id: id,
                    partition_data: Vec::new(),
                })
                .partition_data
                .push(PartitionProduceData {
                    index: tp.partition,
                    records: Some(b.bytes.clone()),
                });
        }
        ProduceRequest {
            transactional_id: self.txn.as_ref().map(|t| t.transactional_id().to_string()),
            acks: ACKS_ALL,
            timeout_ms,
            topic_data: topic_data.into_values().collect(),
        }
    }

    /// The batches of a request whose answer is lost (connection cut, timeout): they may or
    /// may not be written, so they go again with the same sequences, and the broker's
    /// idempotence check sorts it out.
    fn lost(&mut self, leader: i32, batches: &[(TopicPartition, u64, i32)], why: &str) -> Effect {
        log::debug!("Produce to node {leader} failed: {why}; retrying");
        for (tp, id, _) in batches {
            self.acc
                .note_batch_retry(tp, *id, format!("Produce to node {leader}: {why}"));
            self.acc
                .complete_batch(tp, *id, &BatchOutcome::Retry { refresh: true });
        }
        Effect {
            progress: false,
            refresh: true,
            retried: true,
        }
    }

    /// Reads the answer of the oldest request in flight (to `leader`, or to any broker) and
    /// applies it, waiting until `deadline` or the request's own timeout.
    fn await_oldest(&mut self, leader: Option<i32>, deadline: Instant) -> Result<Effect, Error> {
        let at = self
            .in_flight
            .iter()
            .position(|f| leader.is_none_or(|l| f.leader == l));
        let Some(f) = at.and_then(|at| self.in_flight.remove(at)) else {
            return Ok(Effect::default());
        };
        let until = deadline.min(f.deadline);
        let answer = self
            .client(until)?
            .finish_on::<ProduceRequest>(f.leader, f.pending, until);
        match answer {
            Ok(resp) => Ok(self.apply_answer(f.leader, &f.batches, &resp)),
            Err(e) if !fatal(&e) => {
                self.config.client().get_metrics().record_retry();
                Ok(self.lost(f.leader, &f.batches, &e.to_string()))
            }
            Err(e) => Err(client_error(e)),
        }
    }

    /// Reads every answer in flight (within `deadline`), applying those that come.
    pub(super) fn await_all(&mut self, deadline: Instant) -> Result<(), Error> {
        while !self.in_flight.is_empty() {
            self.await_oldest(None, deadline)?;
        }
        Ok(())
    }

    /// Applies a Produce answer from `leader` to the batches of its request.
    fn apply_answer(
        &mut self,
        leader: i32,
        batches: &[(TopicPartition, u64, i32)],
        resp: &ProduceResponse,
    ) -> Effect {
        let by_id: HashMap<Uuid, &str> = self
            .topics
            .iter()
            .map(|(name, t)| (t.id, name.as_str()))
            .collect();
        let mut effect = Effect::default();
        let mut answered = HashSet::new();
        let metrics = self.config.client().get_metrics().clone();
        for t in &resp.responses {
            let name = if t.name.is_empty() {
                by_id
                    .get(&t.topic_id)
                    .map_or(String::new(), |n| n.to_string())
            } else {
                t.name.clone()
            };
            for p in &t.partition_responses {
                let tp = TopicPartition::new(name.clone(), p.index);
                let Some(&(_, id, records)) = batches.iter().find(|(b, _, _)| *b == tp) else {
                    continue;
                };
                answered.insert(tp.clone());
                let outcome = match classify(p.error(), p.base_offset) {
                    // A transactional producer does not bump its epoch itself: the oldest
                    // batch fails the transaction (Java), which must be aborted; a later one
                    // is retried (the gap before it may close).
                    BatchOutcome::RetryWithNewEpoch if self.txn.is_some() => {
                        if self.acc.is_oldest(&tp, id) {
                            BatchOutcome::Failed(p.error())
                        } else {
                            BatchOutcome::Retry { refresh: false }
                        }
                    }
                    o => o,
                };
                match &outcome {
                    BatchOutcome::Written(_) => effect.progress = true,
                    BatchOutcome::Retry { refresh: r } => {
                        log::debug!(
                            "Produce {}-{} (node {leader}): {}; retrying",
                            tp.topic,
                            tp.partition,
                            p.error()
                        );
                        metrics.record_retry();
                        self.acc.note_batch_retry(&tp, id, p.error().name());
                        effect.refresh |= *r;
                        effect.retried = true;
                    }
                    BatchOutcome::RetryWithNewEpoch => {
                        log::info!(
                            "Produce {}-{}: {}; retrying (under a bumped producer epoch from \
                             sequence 0 if it is the oldest batch in flight, as Java's \
                             idempotent producer does)",
                            tp.topic,
                            tp.partition,
                            p.error()
                        );
                        metrics.record_retry();
                        self.acc.note_batch_retry(&tp, id, p.error().name());
                        effect.retried = true;
                    }
                    BatchOutcome::Failed(kind) => {
                        effect.progress = true;
                        if let Some(txn) = &mut self.txn {
                            txn.on_batch_failed(&tp, *kind);
                        }
                        let message = format!(
                            "batch of {records} records for {}-{} not written{}",
                            tp.topic,
                            tp.partition,
                            p.error_message
                                .as_deref()
                                .map(|m| format!(": {m}"))
                                .unwrap_or_default()
                        );
                        self.failures.push((
                            tp.clone(),
                            Error::Broker {
                                kind: *kind,
                                code: p.error_code,
                                message: Some(message),
                                context: BrokerErrorContext::api("Produce"),
                            },
                        ));
                    }
                }
                self.acc.complete_batch(&tp, id, &outcome);
            }
        }
        for (tp, id, _) in batches.iter().filter(|(tp, _, _)| !answered.contains(tp)) {
            // A partition the broker did not answer: send it again.
            self.acc
                .complete_batch(tp, *id, &BatchOutcome::Retry { refresh: true });
            effect.refresh = true;
            effect.retried = true;
        }
        effect
    }

    /// Gives up on every request in flight (their answers are dropped when read): the
    /// producer goes away.
    pub(super) fn abandon_in_flight(&mut self) {
        if self.in_flight.is_empty() {
            return;
        }
        if let Some(client) = &self.client {
            let mut c = client.lock();
            for f in self.in_flight.drain(..) {
                c.abandon_on(f.leader, f.pending);
            }
        }
    }
}

impl Drop for Producer {
    fn drop(&mut self) {
        self.abandon_in_flight();
    }
}
