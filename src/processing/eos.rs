//! `processing.guarantee=exactly_once_v2` (KIP-447): the stream thread's one transactional
//! producer (Kafka Streams' `StreamsProducer` under EOS v2) and the pure rules the record
//! collector and the task manager follow.
//!
//! * Every record sent (sinks, repartition topics, changelogs) opens a transaction if none
//!   is open (`maybeBeginTransaction`).
//! * A commit puts the input offsets into the open transaction (TxnOffsetCommit with the
//!   group's member id, member epoch and instance id, so a member the group fenced cannot
//!   commit) and commits it; a commit with offsets but no record opens one first.
//! * A failed commit or send is classified by [`on_failure`]: the tasks migrated (the
//!   producer was fenced, its epoch is stale, or the group refused the member) → the open
//!   transaction is aborted (or, if the producer cannot abort, the producer re-initialised,
//!   which aborts it at the coordinator) and every active task is closed dirty: its stores
//!   are dropped and rebuilt from the committed changelog (`read_committed`), its input
//!   resumes at the committed offsets. A timeout does the same with a new producer (the
//!   transaction's state is unknown); anything else fails the thread.

use std::collections::BTreeMap;
use std::time::Instant;

use crate::error::Error;
use crate::producer::transaction::GroupMetadata;
use crate::producer::{Producer, ProducerRecord, RecordRef, TransactionError};
use crate::protocol::BrokerErrorKind;
use crate::streams::commit::{CommitOffset, TopicPartition};

use super::ports::ProducePort;

/// The transactional side of the produce port.
pub(crate) trait TransactionPort {
    /// Whether a transaction is open (a record was sent since the last commit or abort).
    fn in_transaction(&self) -> bool;
    /// Adds `offsets` (next offset to read per input partition, with Kafka Streams'
    /// metadata: the partition time) for `group` to the open transaction (opening one if
    /// none is) and commits it: records sent before and the offsets become visible together.
    fn commit(
        &mut self,
        offsets: &BTreeMap<TopicPartition, CommitOffset>,
        group: &GroupMetadata,
    ) -> Result<(), TransactionError>;
    /// Aborts the open transaction (nothing if none is open): unsent records are dropped,
    /// sent ones are never visible to `read_committed` readers.
    fn abort(&mut self) -> Result<(), TransactionError>;
    /// Replaces the producer by a new one with the same `transactional.id` and initialises
    /// it (InitProducerId: a new epoch, which aborts whatever the old one left open).
    fn reset(&mut self) -> Result<(), Error>;
}

/// What a failed transactional call means for the thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Failure {
    /// Java's `TaskMigratedException`: abort, close every active task dirty, revive them
    /// from committed state; the producer must be re-initialised first if `reset`.
    TaskMigrated {
        /// The producer cannot abort (fenced, a stale epoch, fatal): make a new one.
        reset: bool,
    },
    /// The thread cannot go on (unauthorized, an illegal call).
    Fatal,
}

/// Classifies a transactional call's failure as Kafka Streams' `StreamsProducer` does:
/// fenced producers, invalid producer epochs and producer id mappings, and commits the group
/// refused (unknown member, stale or fenced member epoch, fenced instance id) all mean the
/// tasks migrated; other abortable errors (a record that failed, `TRANSACTION_ABORTABLE`)
/// abort and revive the tasks too, as Java's `TaskCorruptedException` path does.
pub(crate) fn on_failure(e: &TransactionError) -> Failure {
    use BrokerErrorKind as K;
    match e {
        // A timeout or a lost connection leaves the transaction's state unknown: a new
        // producer epoch aborts whatever it left open.
        TransactionError::Other(_) => Failure::TaskMigrated { reset: true },
        TransactionError::Txn(t) if t.is_abortable() => Failure::TaskMigrated { reset: false },
        TransactionError::Txn(t) if t.is_fenced() => Failure::TaskMigrated { reset: true },
        TransactionError::Txn(t) => match t.kind {
            K::InvalidProducerEpoch
            | K::ProducerFenced
            | K::InvalidProducerIdMapping
            | K::UnknownMemberId
            | K::IllegalGeneration
            | K::FencedMemberEpoch
            | K::StaleMemberEpoch
            | K::FencedInstanceId
            | K::TransactionAbortable => Failure::TaskMigrated { reset: true },
            _ => Failure::Fatal,
        },
    }
}

/// Makes the thread's producer: same `transactional.id`, on the thread's shared client.
pub(crate) type ProducerMaker = Box<dyn FnMut() -> Result<Producer, Error> + Send>;

/// The stream thread's transactional producer (Java's `StreamsProducer` under EOS v2).
pub(crate) struct EosProducer {
    producer: Producer,
    make: ProducerMaker,
    open: bool,
}

impl EosProducer {
    /// Makes the producer and initialises its transactions (fencing an older instance with
    /// the same `transactional.id`).
    pub(crate) fn start(mut make: ProducerMaker) -> Result<Self, Error> {
        let mut producer = make()?;
        producer.init_transactions()?;
        Ok(EosProducer {
            producer,
            make,
            open: false,
        })
    }

    fn begin(&mut self) -> Result<(), Error> {
        if !self.open {
            self.producer.begin_transaction()?;
            self.open = true;
        }
        Ok(())
    }
}

impl ProducePort for EosProducer {
    fn send(&mut self, record: ProducerRecord) -> Result<i32, Error> {
        self.begin()?;
        self.producer.send(record)
    }

    fn send_ref(&mut self, record: RecordRef<'_>) -> Result<i32, Error> {
        self.begin()?;
        self.producer.send_ref(record)
    }

    fn send_ready(&mut self, deadline: Instant) -> Result<(), Error> {
        self.producer.send_ready(deadline).map(|_| ())
    }

    fn flush(&mut self, deadline: Instant) -> Result<(), Error> {
        self.producer.flush(deadline)
    }

    fn transactions(&mut self) -> Option<&mut dyn TransactionPort> {
        Some(self)
    }
}

impl TransactionPort for EosProducer {
    fn in_transaction(&self) -> bool {
        self.open
    }

    fn commit(
        &mut self,
        offsets: &BTreeMap<TopicPartition, CommitOffset>,
        group: &GroupMetadata,
    ) -> Result<(), TransactionError> {
        self.begin()?;
        if !offsets.is_empty() {
            self.producer.send_offsets_to_transaction(offsets, group)?;
        }
        self.producer.commit_transaction()?;
        self.open = false;
        Ok(())
    }

    fn abort(&mut self) -> Result<(), TransactionError> {
        if self.open {
            self.producer.abort_transaction()?;
            self.open = false;
        }
        Ok(())
    }

    fn reset(&mut self) -> Result<(), Error> {
        let mut producer = (self.make)()?;
        producer.init_transactions()?;
        self.producer = producer;
        self.open = false;
        Ok(())
    }
}

/// The transactional id of stream thread `thread` (1-based) of process `process_id`
/// (Java's `StreamThread`: `<application.id>-<processId>-<thread index>`).
pub(crate) fn transactional_id(app_id: &str, process_id: &str, thread: usize) -> String {
    format!("{app_id}-{process_id}-{thread}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::producer::transaction::{TxnError, TxnErrorClass};
    use std::time::Duration;

    fn txn(class: TxnErrorClass, kind: BrokerErrorKind) -> TransactionError {
        TransactionError::Txn(TxnError::new(class, "EndTxn", kind))
    }

    #[test]
    fn failures_are_classified_as_streams_producer_does() {
        use BrokerErrorKind as K;
        use TxnErrorClass::*;
        let migrated = |reset| Failure::TaskMigrated { reset };
        assert_eq!(on_failure(&txn(Fenced, K::ProducerFenced)), migrated(true));
        assert_eq!(
            on_failure(&txn(Fatal, K::InvalidProducerEpoch)),
            migrated(true)
        );
        assert_eq!(
            on_failure(&txn(Abortable, K::UnknownMemberId)),
            migrated(false)
        );
        assert_eq!(
            on_failure(&txn(Fatal, K::FencedMemberEpoch)),
            migrated(true)
        );
        assert_eq!(
            on_failure(&txn(Fatal, K::TransactionalIdAuthorizationFailed)),
            Failure::Fatal
        );
        let timeout = TransactionError::Other(Error::Timeout {
            operation: "commit_transaction".into(),
            limit: Duration::from_secs(1),
        });
        assert_eq!(on_failure(&timeout), migrated(true));
    }

    #[test]
    fn transactional_id_is_javas() {
        assert_eq!(transactional_id("wc", "p-1", 2), "wc-p-1-2");
    }
}
