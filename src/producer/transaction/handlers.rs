//! What each answer does to the [`TransactionManager`], as Java's `TransactionManager`
//! handlers (`InitProducerIdHandler`, `AddPartitionsToTxnHandler`, `AddOffsetsToTxnHandler`,
//! `TxnOffsetCommitHandler`, `EndTxnHandler`) and its failed-batch rule decide.

use super::{Step, TransactionManager, TxnError, TxnErrorClass, TxnState, TxnVersion};
use crate::common::TopicPartition;
use crate::producer::idempotence::ProducerIdentity;
use crate::protocol::api::add_offsets_to_txn::AddOffsetsToTxnResponse;
use crate::protocol::api::add_partitions_to_txn::AddPartitionsToTxnResponse;
use crate::protocol::api::end_txn::EndTxnResponse;
use crate::protocol::api::init_producer_id::InitProducerIdResponse;
use crate::protocol::api::txn_offset_commit::TxnOffsetCommitResponse;
use crate::protocol::BrokerErrorKind;

impl TransactionManager {
    /// An answer to InitProducerId.
    pub fn on_init_producer_id(&mut self, r: &InitProducerIdResponse) -> Step {
        use BrokerErrorKind as K;
        match r.error() {
            K::None => {
                self.identity = Some(ProducerIdentity {
                    producer_id: r.producer_id,
                    producer_epoch: r.producer_epoch,
                });
                self.bump_required = false;
                self.last_error = None;
                self.state = TxnState::Ready;
                Step::Done
            }
            K::TransactionalIdAuthorizationFailed | K::ClusterAuthorizationFailed => self.fail(
                TxnError::new(TxnErrorClass::Abortable, "InitProducerId", r.error()),
            ),
            k => self.common("InitProducerId", k),
        }
    }

    /// The classification shared by every transaction-coordinator answer.
    fn common(&mut self, api: &'static str, k: BrokerErrorKind) -> Step {
        use BrokerErrorKind as K;
        match k {
            K::NotCoordinator | K::CoordinatorNotAvailable => Step::Retry {
                lookup: true,
                kind: k,
            },
            k if k.is_retriable() => Step::Retry {
                lookup: false,
                kind: k,
            },
            K::InvalidProducerEpoch | K::ProducerFenced => {
                self.fail(TxnError::new(TxnErrorClass::Fenced, api, k))
            }
            K::UnknownProducerId | K::InvalidProducerIdMapping => {
                // Java's abortableErrorIfPossible: abort, then bump the epoch.
                self.bump_required = true;
                self.fail(TxnError::new(TxnErrorClass::Abortable, api, k))
            }
            K::TransactionAbortable | K::GroupAuthorizationFailed => {
                self.fail(TxnError::new(TxnErrorClass::Abortable, api, k))
            }
            _ => self.fail(TxnError::new(TxnErrorClass::Fatal, api, k)),
        }
    }

    /// An answer to AddPartitionsToTxn.
    pub fn on_add_partitions(&mut self, r: &AddPartitionsToTxnResponse) -> Step {
        use BrokerErrorKind as K;
        let mut failed: Option<BrokerErrorKind> = None;
        for (_, _, k) in r.errors() {
            match k {
                K::None => {}
                K::TopicAuthorizationFailed | K::OperationNotAttempted => {
                    failed.get_or_insert(k);
                }
                k if k.is_retriable()
                    || matches!(k, K::NotCoordinator | K::CoordinatorNotAvailable) =>
                {
                    return self.common("AddPartitionsToTxn", k)
                }
                k if matches!(
                    k,
                    K::InvalidProducerEpoch
                        | K::ProducerFenced
                        | K::UnknownProducerId
                        | K::InvalidProducerIdMapping
                        | K::TransactionAbortable
                ) =>
                {
                    return self.common("AddPartitionsToTxn", k)
                }
                K::TransactionalIdAuthorizationFailed | K::InvalidTxnState => {
                    return self.fail(TxnError::new(TxnErrorClass::Fatal, "AddPartitionsToTxn", k))
                }
                k => {
                    failed.get_or_insert(k);
                }
            }
        }
        if let Some(k) = failed {
            self.new_partitions.clear();
            return self.fail(TxnError::new(
                TxnErrorClass::Abortable,
                "AddPartitionsToTxn",
                k,
            ));
        }
        let added = std::mem::take(&mut self.new_partitions);
        self.started |= !added.is_empty();
        self.in_txn.extend(added);
        Step::Done
    }

    /// An answer to AddOffsetsToTxn.
    pub fn on_add_offsets(&mut self, r: &AddOffsetsToTxnResponse) -> Step {
        match r.error() {
            BrokerErrorKind::None => {
                if let Some(p) = &mut self.offsets {
                    p.added = true;
                }
                self.started = true;
                Step::Done
            }
            k => self.common("AddOffsetsToTxn", k),
        }
    }

    /// An answer to TxnOffsetCommit (from the group coordinator).
    pub fn on_txn_offset_commit(&mut self, r: &TxnOffsetCommitResponse) -> Step {
        use BrokerErrorKind as K;
        let mut retry: Option<Step> = None;
        for (topic, partition, k) in r.errors() {
            match k {
                K::None => {
                    if let Some(p) = &mut self.offsets {
                        p.offsets.remove(&TopicPartition::new(topic, partition));
                    }
                }
                K::NotCoordinator | K::CoordinatorNotAvailable | K::RequestTimedOut => {
                    retry = Some(Step::Retry {
                        lookup: true,
                        kind: k,
                    });
                }
                k if k.is_retriable() => {
                    retry.get_or_insert(Step::Retry {
                        lookup: false,
                        kind: k,
                    });
                }
                K::GroupAuthorizationFailed
                | K::FencedInstanceId
                | K::TransactionAbortable
                | K::UnknownMemberId
                | K::IllegalGeneration
                | K::StaleMemberEpoch => {
                    self.offsets = None;
                    return self.fail(TxnError::new(
                        TxnErrorClass::Abortable,
                        "TxnOffsetCommit",
                        k,
                    ));
                }
                K::InvalidProducerEpoch | K::ProducerFenced => {
                    return self.fail(TxnError::new(TxnErrorClass::Fenced, "TxnOffsetCommit", k))
                }
                k => return self.fail(TxnError::new(TxnErrorClass::Fatal, "TxnOffsetCommit", k)),
            }
        }
        if let Some(step) = retry {
            return step;
        }
        self.started = true;
        self.offsets = None;
        Step::Done
    }

    /// An answer to EndTxn. With version 2 (EndTxn v5) the answer carries the producer id
    /// and the epoch for the next transaction.
    pub fn on_end_txn(&mut self, r: &EndTxnResponse) -> Step {
        match r.error() {
            BrokerErrorKind::None => {
                if self.version == TxnVersion::V2 && r.producer_id >= 0 && r.producer_epoch >= 0 {
                    self.identity = Some(ProducerIdentity {
                        producer_id: r.producer_id,
                        producer_epoch: r.producer_epoch,
                    });
                    // The coordinator bumped the epoch: sequences restart, no bump of ours.
                    self.bump_required = false;
                }
                self.complete();
                Step::Done
            }
            BrokerErrorKind::InvalidTxnState => {
                self.fail(TxnError::new(TxnErrorClass::Fatal, "EndTxn", r.error()))
            }
            k => self.common("EndTxn", k),
        }
    }

    /// The round trip of `request` failed without an answer (connection lost, timed out):
    /// Java looks the coordinator up again and resends. The broker may have applied it;
    /// every transactional request is safe to resend (the coordinator recognises a retried
    /// EndTxn of a transaction it already ended).
    pub fn on_no_answer(&mut self) -> Step {
        Step::Retry {
            lookup: true,
            kind: BrokerErrorKind::NetworkException,
        }
    }

    /// A batch of `tp` failed for good with `kind` (after the producer's own retries), or
    /// could not be delivered in time: the transaction cannot commit. Fenced epochs and
    /// authorization failures are fatal; everything else is abortable (a sequence gap is
    /// closed by an epoch bump after the abort, version 1).
    pub fn on_batch_failed(&mut self, tp: &TopicPartition, kind: BrokerErrorKind) -> Step {
        use BrokerErrorKind as K;
        let class = match kind {
            K::InvalidProducerEpoch | K::ProducerFenced => TxnErrorClass::Fenced,
            K::TransactionalIdAuthorizationFailed | K::ClusterAuthorizationFailed => {
                TxnErrorClass::Fatal
            }
            _ => TxnErrorClass::Abortable,
        };
        if self.version == TxnVersion::V1 {
            self.bump_required = true;
        }
        let mut e = TxnError::new(class, "Produce", kind);
        e.detail = Some(format!("a batch for {}-{} failed", tp.topic, tp.partition));
        if self.state == TxnState::FatalError {
            return Step::Failed(e);
        }
        self.fail(e)
    }
}
