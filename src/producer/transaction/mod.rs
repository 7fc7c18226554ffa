//! The transactional producer's state machine, after Java's `TransactionManager`, sans I/O:
//! it says which request goes next to which coordinator and what each answer does to it;
//! the blocking [`Producer`](super::Producer) sends them.
//!
//! ```text
//!   Uninitialized ─initialize→ Initializing ─InitProducerId→ Ready ─begin→ InTransaction
//!   InTransaction ─begin_commit→ CommittingTransaction ─EndTxn(commit)→ Ready
//!   InTransaction | AbortableError ─begin_abort→ AbortingTransaction ─EndTxn(abort)→ Ready
//!                                               (or → Initializing: an epoch bump first)
//!   any ─fenced, unauthorized, unexpected→ FatalError   (only dropping the producer helps)
//!   InTransaction | Committing ─abortable error→ AbortableError  (the caller must abort)
//! ```
//!
//! Transaction version 1 adds every partition with AddPartitionsToTxn before its first batch
//! and a group's offsets with AddOffsetsToTxn before TxnOffsetCommit. Version 2 (KIP-890, the
//! broker finalised `transaction.version` >= 2) adds partitions implicitly with Produce v12+,
//! sends TxnOffsetCommit v5 alone and gets a new epoch from every EndTxn (v5).
//!
//! Answers are classified as Java's handlers do: a coordinator that moved
//! (`NOT_COORDINATOR`, `COORDINATOR_NOT_AVAILABLE`) is looked up again and the request
//! resent; other retriable codes (`CONCURRENT_TRANSACTIONS`, loading, timeouts) resend it;
//! `PRODUCER_FENCED` / `INVALID_PRODUCER_EPOCH` are fatal (another producer with the same
//! transactional id took over); authorization failures and `INVALID_TXN_STATE` are fatal;
//! group mismatches (`UNKNOWN_MEMBER_ID`, `ILLEGAL_GENERATION`, `FENCED_INSTANCE_ID`),
//! `TRANSACTION_ABORTABLE` and failed batches are abortable.

use std::collections::{BTreeMap, BTreeSet};

use super::idempotence::ProducerIdentity;
use crate::common::TopicPartition;
use crate::protocol::api::add_offsets_to_txn::AddOffsetsToTxnRequest;
use crate::protocol::api::add_partitions_to_txn::{
    AddPartitionsToTxnRequest, AddPartitionsToTxnTopic,
};
use crate::protocol::api::end_txn::EndTxnRequest;
use crate::protocol::api::init_producer_id::InitProducerIdRequest;
use crate::protocol::api::txn_offset_commit::{
    TxnOffsetCommitRequest, TxnOffsetCommitRequestPartition, TxnOffsetCommitRequestTopic,
};
use crate::protocol::BrokerErrorKind;
use crate::streams::commit::CommitOffset;

mod error;
mod handlers;
pub use error::{TxnError, TxnErrorClass};

/// The states of Java's `TransactionManager.State`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnState {
    /// No producer id yet: `init_transactions` has not run.
    Uninitialized,
    /// InitProducerId is under way (first time, or an epoch bump after an abort).
    Initializing,
    /// Between transactions.
    Ready,
    /// A transaction is open.
    InTransaction,
    /// EndTxn(commit) is under way.
    CommittingTransaction,
    /// EndTxn(abort) is under way.
    AbortingTransaction,
    /// The open transaction failed: the caller must abort it.
    AbortableError,
    /// The producer cannot go on (fenced, unauthorized, unexpected): drop it.
    FatalError,
}

impl TxnState {
    /// Java's `isTransitionValid`: whether `self → to` is a legal move.
    pub fn can_move_to(self, to: TxnState) -> bool {
        use TxnState::*;
        match to {
            Initializing => matches!(self, Uninitialized | AbortingTransaction),
            Ready => matches!(
                self,
                Initializing | CommittingTransaction | AbortingTransaction
            ),
            InTransaction => self == Ready,
            CommittingTransaction => self == InTransaction,
            AbortingTransaction => matches!(self, InTransaction | AbortableError),
            AbortableError => matches!(
                self,
                InTransaction | CommittingTransaction | AbortableError | Initializing
            ),
            FatalError => true,
            Uninitialized => false,
        }
    }
}

/// Transaction protocol version in use (from the broker's finalised `transaction.version`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TxnVersion {
    /// AddPartitionsToTxn and AddOffsetsToTxn; the epoch stays across transactions.
    V1,
    /// KIP-890: implicit partition add with Produce v12+, TxnOffsetCommit v5 alone, an epoch
    /// bump at every EndTxn.
    V2,
}

impl TxnVersion {
    /// The version for a finalised `transaction.version` feature level (`None`: not
    /// finalised, i.e. level 0).
    pub fn from_feature_level(level: Option<i16>) -> TxnVersion {
        if level.unwrap_or(0) >= 2 {
            TxnVersion::V2
        } else {
            TxnVersion::V1
        }
    }
}

/// The group a transaction commits offsets for, as Java's `ConsumerGroupMetadata`: the
/// coordinator checks the member like an OffsetCommit (KIP-447).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupMetadata {
    /// The group id.
    pub group_id: String,
    /// The member id (empty: not checked).
    pub member_id: String,
    /// The member epoch (Streams/consumer protocol) or generation (classic); -1: not checked.
    pub member_epoch: i32,
    /// The static member's instance id.
    pub group_instance_id: Option<String>,
}

impl GroupMetadata {
    /// A group without member checks (member id "", epoch -1).
    pub fn new(group_id: impl Into<String>) -> Self {
        GroupMetadata {
            group_id: group_id.into(),
            member_id: String::new(),
            member_epoch: -1,
            group_instance_id: None,
        }
    }
}

/// The coordinator a request goes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TxnCoordinator {
    /// The transaction coordinator of the transactional id.
    Transaction,
    /// The group coordinator of this group id (TxnOffsetCommit).
    Group(String),
}

/// The next request to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TxnRequest {
    /// Take (or bump) the producer id and epoch.
    InitProducerId(InitProducerIdRequest),
    /// Version 1: add partitions before their first batch.
    AddPartitions(AddPartitionsToTxnRequest),
    /// Version 1: add a group's offsets to the transaction.
    AddOffsets(AddOffsetsToTxnRequest),
    /// Commit offsets inside the transaction (to the group coordinator).
    TxnOffsetCommit(TxnOffsetCommitRequest),
    /// Commit or abort.
    EndTxn(EndTxnRequest),
}

impl TxnRequest {
    /// Where it goes.
    pub fn coordinator(&self) -> TxnCoordinator {
        match self {
            TxnRequest::TxnOffsetCommit(r) => TxnCoordinator::Group(r.group_id.clone()),
            _ => TxnCoordinator::Transaction,
        }
    }

    /// Kafka's name of the API.
    pub fn api(&self) -> &'static str {
        match self {
            TxnRequest::InitProducerId(_) => "InitProducerId",
            TxnRequest::AddPartitions(_) => "AddPartitionsToTxn",
            TxnRequest::AddOffsets(_) => "AddOffsetsToTxn",
            TxnRequest::TxnOffsetCommit(_) => "TxnOffsetCommit",
            TxnRequest::EndTxn(_) => "EndTxn",
        }
    }
}

/// What an answer (or a failed round trip) means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Applied: ask [`TransactionManager::next_request`] again.
    Done,
    /// Send the request again after a backoff; look the coordinator up again first when
    /// `lookup` (it moved, or the connection to it broke).
    Retry {
        /// The coordinator moved.
        lookup: bool,
        /// The code that asked for it.
        kind: BrokerErrorKind,
    },
    /// The request failed; the state is now [`TxnState::AbortableError`] or
    /// [`TxnState::FatalError`].
    Failed(TxnError),
}

/// Offsets waiting to be committed in the transaction.
#[derive(Debug, Clone)]
struct PendingOffsets {
    group: GroupMetadata,
    offsets: BTreeMap<TopicPartition, CommitOffset>,
    /// Version 1: AddOffsetsToTxn answered.
    added: bool,
}

/// The transaction state machine; see the module docs.
#[derive(Debug)]
pub struct TransactionManager {
    transactional_id: String,
    timeout_ms: i32,
    version: TxnVersion,
    state: TxnState,
    identity: Option<ProducerIdentity>,
    /// Partitions the coordinator knows are in the transaction.
    in_txn: BTreeSet<TopicPartition>,
    /// Version 1: partitions to add before their batches go.
    new_partitions: BTreeSet<TopicPartition>,
    offsets: Option<PendingOffsets>,
    /// Something is in the transaction at the coordinator (EndTxn is skipped otherwise).
    started: bool,
    /// After the abort, InitProducerId with the current id and epoch bumps the epoch.
    bump_required: bool,
    last_error: Option<TxnError>,
}

impl TransactionManager {
    /// A manager for `transactional_id` with `transaction.timeout.ms` = `timeout_ms`.
    pub fn new(transactional_id: impl Into<String>, timeout_ms: i32) -> Self {
        TransactionManager {
            transactional_id: transactional_id.into(),
            timeout_ms,
            version: TxnVersion::V1,
            state: TxnState::Uninitialized,
            identity: None,
            in_txn: BTreeSet::new(),
            new_partitions: BTreeSet::new(),
            offsets: None,
            started: false,
            bump_required: false,
            last_error: None,
        }
    }

    /// The transactional id.
    pub fn transactional_id(&self) -> &str {
        &self.transactional_id
    }

    /// The state.
    pub fn state(&self) -> TxnState {
        self.state
    }

    /// The transaction version in use.
    pub fn version(&self) -> TxnVersion {
        self.version
    }

    /// Sets the transaction version (from the coordinator's finalised features), between
    /// transactions only: a transaction keeps the version it began with.
    pub fn set_version(&mut self, version: TxnVersion) {
        if matches!(
            self.state,
            TxnState::Uninitialized | TxnState::Initializing | TxnState::Ready
        ) {
            self.version = version;
        }
    }

    /// The producer id and epoch (`None` before InitProducerId answered).
    pub fn identity(&self) -> Option<ProducerIdentity> {
        self.identity
    }

    /// The error that put the manager in an error state.
    pub fn last_error(&self) -> Option<&TxnError> {
        self.last_error.as_ref()
    }

    /// Whether the transaction holds anything at the coordinator yet.
    pub fn started(&self) -> bool {
        self.started
    }

    fn transition(&mut self, to: TxnState) -> Result<(), TxnError> {
        if let Some(e) = self.fatal_error() {
            return Err(e);
        }
        if !self.state.can_move_to(to) {
            return Err(TxnError::illegal_state(self.state, to));
        }
        log::debug!(
            "transaction {}: {:?} -> {to:?}",
            self.transactional_id,
            self.state
        );
        self.state = to;
        Ok(())
    }

    fn fatal_error(&self) -> Option<TxnError> {
        (self.state == TxnState::FatalError).then(|| {
            self.last_error
                .clone()
                .unwrap_or_else(|| TxnError::illegal_state(self.state, self.state))
        })
    }

    /// `initTransactions`: asks for the producer id (InitProducerId with the transactional
    /// id, which also fences older producers of the same id and aborts their transaction).
    pub fn initialize(&mut self) -> Result<(), TxnError> {
        if self.state == TxnState::Initializing {
            return Ok(()); // a retry after a timeout continues
        }
        if self.state != TxnState::Uninitialized {
            return Err(TxnError::illegal_state(self.state, TxnState::Initializing));
        }
        self.transition(TxnState::Initializing)
    }

    /// `beginTransaction`.
    pub fn begin(&mut self) -> Result<(), TxnError> {
        self.transition(TxnState::InTransaction)
    }

    /// Notes a record for `tp` in the open transaction (Java's `maybeAddPartition`).
    pub fn add_partition(&mut self, tp: &TopicPartition) -> Result<(), TxnError> {
        self.require_in_transaction("send")?;
        if !self.in_txn.contains(tp) {
            match self.version {
                TxnVersion::V1 => {
                    self.new_partitions.insert(tp.clone());
                }
                TxnVersion::V2 => {
                    self.in_txn.insert(tp.clone());
                }
            }
        }
        Ok(())
    }

    /// Whether batches for `tp` may be sent (version 1: once the partition was added).
    pub fn may_send(&self, tp: &TopicPartition) -> bool {
        self.state != TxnState::FatalError && self.in_txn.contains(tp)
    }

    /// A batch for `tp` went out: with version 2 this is what adds the partition, so the
    /// transaction has something to end.
    pub fn on_batch_sent(&mut self, tp: &TopicPartition) {
        if self.in_txn.contains(tp) {
            self.started = true;
        }
    }

    /// `sendOffsetsToTransaction`: commits `offsets` (next offset to read per partition, with
    /// its leader epoch and metadata, as Java's `OffsetAndMetadata`) of `group` when the
    /// transaction commits.
    pub fn send_offsets(
        &mut self,
        offsets: BTreeMap<TopicPartition, CommitOffset>,
        group: GroupMetadata,
    ) -> Result<(), TxnError> {
        self.require_in_transaction("send_offsets_to_transaction")?;
        self.offsets = Some(PendingOffsets {
            group,
            offsets,
            added: false,
        });
        Ok(())
    }

    /// Whether offsets wait to be committed (the call that queued them waits for this).
    pub fn offsets_pending(&self) -> bool {
        self.offsets.is_some()
    }

    /// Whether partitions wait for AddPartitionsToTxn (version 1).
    pub fn partitions_pending(&self) -> bool {
        !self.new_partitions.is_empty()
    }

    fn require_in_transaction(&self, operation: &'static str) -> Result<(), TxnError> {
        match self.state {
            TxnState::InTransaction => Ok(()),
            TxnState::AbortableError | TxnState::FatalError => Err(self
                .last_error
                .clone()
                .unwrap_or_else(|| TxnError::not_in_transaction(operation, self.state))),
            s => Err(TxnError::not_in_transaction(operation, s)),
        }
    }

    /// `commitTransaction`: the records are flushed; EndTxn(commit) comes next. In
    /// [`TxnState::AbortableError`] it fails with the error: the caller must abort.
    pub fn begin_commit(&mut self) -> Result<(), TxnError> {
        if self.state == TxnState::CommittingTransaction {
            return Ok(()); // a retry after a timeout continues
        }
        if self.state == TxnState::AbortableError {
            return Err(self.last_error.clone().unwrap_or_else(|| {
                TxnError::illegal_state(self.state, TxnState::CommittingTransaction)
            }));
        }
        self.transition(TxnState::CommittingTransaction)
    }

    /// `abortTransaction`: nothing more is added; EndTxn(abort) comes next. `dropped_sealed`:
    /// the producer dropped batches that had sequence numbers (a gap the epoch bump after
    /// the abort closes, version 1).
    pub fn begin_abort(&mut self, dropped_sealed: bool) -> Result<(), TxnError> {
        if self.state == TxnState::AbortingTransaction {
            return Ok(());
        }
        self.transition(TxnState::AbortingTransaction)?;
        self.new_partitions.clear();
        self.offsets = None;
        if dropped_sealed && self.version == TxnVersion::V1 {
            self.bump_required = true;
        }
        Ok(())
    }

    /// The request to send now, if any. `None` in a state that waits for the caller
    /// (Ready, InTransaction with nothing pending, an error state).
    pub fn next_request(&mut self) -> Option<TxnRequest> {
        match self.state {
            TxnState::Initializing => Some(self.init_request()),
            TxnState::InTransaction | TxnState::CommittingTransaction => {
                if let Some(r) = self.add_partitions_request() {
                    return Some(r);
                }
                if let Some(r) = self.offsets_request() {
                    return Some(r);
                }
                if self.state == TxnState::CommittingTransaction {
                    self.end_request(true)
                } else {
                    None
                }
            }
            TxnState::AbortingTransaction => self.end_request(false),
            _ => None,
        }
    }

    fn init_request(&self) -> TxnRequest {
        let (producer_id, producer_epoch) = match (self.bump_required, self.identity) {
            (true, Some(i)) => (i.producer_id, i.producer_epoch),
            _ => (-1, -1),
        };
        TxnRequest::InitProducerId(InitProducerIdRequest {
            transactional_id: Some(self.transactional_id.clone()),
            transaction_timeout_ms: self.timeout_ms,
            producer_id,
            producer_epoch,
            ..Default::default()
        })
    }

    fn id(&self) -> ProducerIdentity {
        self.identity.unwrap_or(ProducerIdentity::NONE)
    }

    fn add_partitions_request(&self) -> Option<TxnRequest> {
        if self.new_partitions.is_empty() {
            return None;
        }
        let mut topics: Vec<AddPartitionsToTxnTopic> = Vec::new();
        for tp in &self.new_partitions {
            match topics.last_mut() {
                Some(t) if t.name == tp.topic => t.partitions.push(tp.partition),
                _ => topics.push(AddPartitionsToTxnTopic {
                    name: tp.topic.clone(),
                    partitions: vec![tp.partition],
                }),
            }
        }
        Some(TxnRequest::AddPartitions(AddPartitionsToTxnRequest {
            transactional_id: self.transactional_id.clone(),
            producer_id: self.id().producer_id,
            producer_epoch: self.id().producer_epoch,
            topics,
        }))
    }

    fn offsets_request(&self) -> Option<TxnRequest> {
        let pending = self.offsets.as_ref()?;
        if self.version == TxnVersion::V1 && !pending.added {
            return Some(TxnRequest::AddOffsets(AddOffsetsToTxnRequest {
                transactional_id: self.transactional_id.clone(),
                producer_id: self.id().producer_id,
                producer_epoch: self.id().producer_epoch,
                group_id: pending.group.group_id.clone(),
            }));
        }
        let mut topics: Vec<TxnOffsetCommitRequestTopic> = Vec::new();
        for (tp, o) in &pending.offsets {
            let p = TxnOffsetCommitRequestPartition {
                partition_index: tp.partition,
                committed_offset: o.offset,
                committed_leader_epoch: o.leader_epoch.unwrap_or(-1),
                committed_metadata: o.metadata.clone(),
            };
            match topics.last_mut() {
                Some(t) if t.name == tp.topic => t.partitions.push(p),
                _ => topics.push(TxnOffsetCommitRequestTopic {
                    name: tp.topic.clone(),
                    partitions: vec![p],
                    ..Default::default()
                }),
            }
        }
        let g = &pending.group;
        Some(TxnRequest::TxnOffsetCommit(TxnOffsetCommitRequest {
            transactional_id: self.transactional_id.clone(),
            group_id: g.group_id.clone(),
            producer_id: self.id().producer_id,
            producer_epoch: self.id().producer_epoch,
            generation_id_or_member_epoch: g.member_epoch,
            member_id: g.member_id.clone(),
            group_instance_id: g.group_instance_id.clone(),
            topics,
        }))
    }

    fn end_request(&mut self, committed: bool) -> Option<TxnRequest> {
        if !self.started {
            // Nothing reached the coordinator: there is nothing to end (Java skips the
            // EndTxn too; the coordinator would answer INVALID_TXN_STATE).
            self.complete();
            return self.next_request();
        }
        Some(TxnRequest::EndTxn(EndTxnRequest {
            transactional_id: self.transactional_id.clone(),
            producer_id: self.id().producer_id,
            producer_epoch: self.id().producer_epoch,
            committed,
        }))
    }

    /// The transaction ended: back to Ready, or to Initializing for an epoch bump.
    fn complete(&mut self) {
        self.state = if self.bump_required {
            TxnState::Initializing
        } else {
            TxnState::Ready
        };
        self.in_txn.clear();
        self.new_partitions.clear();
        self.offsets = None;
        self.started = false;
        self.last_error = None;
    }

    fn fail(&mut self, e: TxnError) -> Step {
        match e.class {
            TxnErrorClass::Abortable => {
                if self.state == TxnState::AbortingTransaction {
                    // Java: already aborting, the abort goes on.
                    log::debug!("transaction {}: {e} while aborting", self.transactional_id);
                } else if self.state.can_move_to(TxnState::AbortableError) {
                    self.state = TxnState::AbortableError;
                    self.last_error = Some(e.clone());
                } else {
                    self.state = TxnState::FatalError;
                    self.last_error = Some(e.clone());
                }
            }
            TxnErrorClass::Fenced | TxnErrorClass::Fatal => {
                self.state = TxnState::FatalError;
                self.last_error = Some(e.clone());
            }
        }
        log::warn!("transaction {}: {e}", self.transactional_id);
        Step::Failed(e)
    }
}

#[cfg(test)]
mod tests;
