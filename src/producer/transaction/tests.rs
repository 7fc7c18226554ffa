//! The transaction state machine alone: legal moves, the request each state asks for, and
//! what every answer does, for both transaction versions.

use super::*;
use crate::protocol::api::add_offsets_to_txn::AddOffsetsToTxnResponse;
use crate::protocol::api::add_partitions_to_txn::AddPartitionsToTxnResponse;
use crate::protocol::api::add_partitions_to_txn::{
    AddPartitionsToTxnPartitionResult, AddPartitionsToTxnTopicResult,
};
use crate::protocol::api::end_txn::EndTxnResponse;
use crate::protocol::api::init_producer_id::InitProducerIdResponse;
use crate::protocol::api::txn_offset_commit::TxnOffsetCommitResponse;
use crate::protocol::api::txn_offset_commit::{
    TxnOffsetCommitResponsePartition, TxnOffsetCommitResponseTopic,
};
use BrokerErrorKind as K;

const ID: ProducerIdentity = ProducerIdentity {
    producer_id: 42,
    producer_epoch: 5,
};

fn tp(p: i32) -> TopicPartition {
    TopicPartition::new("out", p)
}

fn init_ok() -> InitProducerIdResponse {
    InitProducerIdResponse {
        producer_id: ID.producer_id,
        producer_epoch: ID.producer_epoch,
        ..Default::default()
    }
}

fn init_err(k: BrokerErrorKind) -> InitProducerIdResponse {
    InitProducerIdResponse {
        error_code: k.code(),
        ..Default::default()
    }
}

fn end(k: BrokerErrorKind) -> EndTxnResponse {
    EndTxnResponse {
        error_code: k.code(),
        ..Default::default()
    }
}

fn add_parts(errors: &[(i32, BrokerErrorKind)]) -> AddPartitionsToTxnResponse {
    AddPartitionsToTxnResponse {
        throttle_time_ms: 0,
        results: vec![AddPartitionsToTxnTopicResult {
            name: "out".into(),
            results_by_partition: errors
                .iter()
                .map(|&(p, k)| AddPartitionsToTxnPartitionResult {
                    partition_index: p,
                    partition_error_code: k.code(),
                })
                .collect(),
        }],
    }
}

fn offsets_resp(k: BrokerErrorKind) -> TxnOffsetCommitResponse {
    TxnOffsetCommitResponse {
        throttle_time_ms: 0,
        topics: vec![TxnOffsetCommitResponseTopic {
            name: "in".into(),
            partitions: vec![TxnOffsetCommitResponsePartition {
                partition_index: 0,
                error_code: k.code(),
            }],
            ..Default::default()
        }],
    }
}

/// A manager that took its producer id, in `version`.
fn ready(version: TxnVersion) -> TransactionManager {
    let mut m = TransactionManager::new("tx", 60_000);
    m.set_version(version);
    m.initialize().unwrap();
    let Some(TxnRequest::InitProducerId(r)) = m.next_request() else {
        panic!("InitProducerId first");
    };
    assert_eq!(r.transactional_id.as_deref(), Some("tx"));
    assert_eq!(r.transaction_timeout_ms, 60_000);
    assert_eq!((r.producer_id, r.producer_epoch), (-1, -1));
    assert_eq!(m.on_init_producer_id(&init_ok()), Step::Done);
    assert_eq!(m.state(), TxnState::Ready);
    assert_eq!(m.identity(), Some(ID));
    assert_eq!(m.next_request(), None);
    m
}

/// A v1 transaction with partition 0 added.
fn in_txn_v1() -> TransactionManager {
    let mut m = ready(TxnVersion::V1);
    m.begin().unwrap();
    m.add_partition(&tp(0)).unwrap();
    assert!(!m.may_send(&tp(0)), "v1: not before AddPartitionsToTxn");
    let Some(TxnRequest::AddPartitions(r)) = m.next_request() else {
        panic!("AddPartitionsToTxn");
    };
    assert_eq!((r.producer_id, r.producer_epoch), (42, 5));
    assert_eq!(r.topics[0].partitions, vec![0]);
    assert_eq!(m.on_add_partitions(&add_parts(&[(0, K::None)])), Step::Done);
    assert!(m.may_send(&tp(0)));
    m
}

#[test]
fn legal_transitions_are_javas() {
    use TxnState::*;
    let all = [
        Uninitialized,
        Initializing,
        Ready,
        InTransaction,
        CommittingTransaction,
        AbortingTransaction,
        AbortableError,
        FatalError,
    ];
    let legal = [
        (Uninitialized, Initializing),
        (AbortingTransaction, Initializing),
        (Initializing, Ready),
        (CommittingTransaction, Ready),
        (AbortingTransaction, Ready),
        (Ready, InTransaction),
        (InTransaction, CommittingTransaction),
        (InTransaction, AbortingTransaction),
        (AbortableError, AbortingTransaction),
        (InTransaction, AbortableError),
        (CommittingTransaction, AbortableError),
        (AbortableError, AbortableError),
        (Initializing, AbortableError),
    ];
    for from in all {
        for to in all {
            let expected = to == FatalError || legal.contains(&(from, to));
            assert_eq!(from.can_move_to(to), expected, "{from:?} -> {to:?}");
        }
    }
}

#[test]
fn calls_out_of_order_are_refused_and_change_nothing() {
    let mut m = TransactionManager::new("tx", 1000);
    assert!(m.begin().is_err(), "begin before init");
    assert!(m.begin_commit().is_err());
    assert!(m.add_partition(&tp(0)).is_err());
    assert_eq!(m.state(), TxnState::Uninitialized);
    let mut m = ready(TxnVersion::V1);
    assert!(m.initialize().is_err(), "init twice");
    let e = m
        .send_offsets(BTreeMap::new(), GroupMetadata::new("g"))
        .unwrap_err();
    assert!(e.to_string().contains("begin_transaction"), "{e}");
    m.begin().unwrap();
    assert!(m.begin().is_err(), "nested begin");
    assert_eq!(m.state(), TxnState::InTransaction);
}

#[test]
fn init_retries_moves_and_fails_as_java() {
    for (k, lookup) in [
        (K::NotCoordinator, true),
        (K::CoordinatorNotAvailable, true),
        (K::CoordinatorLoadInProgress, false),
        (K::ConcurrentTransactions, false),
    ] {
        let mut m = TransactionManager::new("tx", 1000);
        m.initialize().unwrap();
        assert_eq!(
            m.on_init_producer_id(&init_err(k)),
            Step::Retry { lookup, kind: k }
        );
        assert_eq!(m.state(), TxnState::Initializing);
        assert!(matches!(
            m.next_request(),
            Some(TxnRequest::InitProducerId(_))
        ));
    }
    for k in [K::ProducerFenced, K::InvalidProducerEpoch] {
        let mut m = TransactionManager::new("tx", 1000);
        m.initialize().unwrap();
        let Step::Failed(e) = m.on_init_producer_id(&init_err(k)) else {
            panic!("{k}")
        };
        assert!(e.is_fenced());
        assert_eq!(m.state(), TxnState::FatalError);
        assert!(m.begin().is_err());
        assert_eq!(m.next_request(), None);
    }
    let mut m = TransactionManager::new("tx", 1000);
    m.initialize().unwrap();
    let Step::Failed(e) = m.on_init_producer_id(&init_err(K::TransactionalIdAuthorizationFailed))
    else {
        panic!()
    };
    assert!(e.is_abortable(), "Java: abortable authorization error");
    let mut m = TransactionManager::new("tx", 1000);
    m.initialize().unwrap();
    assert!(matches!(
        m.on_init_producer_id(&init_err(K::InvalidRequest)),
        Step::Failed(TxnError {
            class: TxnErrorClass::Fatal,
            ..
        })
    ));
}

#[test]
fn v1_commit_adds_partitions_then_offsets_then_ends() {
    let mut m = in_txn_v1();
    // Partition 1 added later, offsets sent: AddPartitions, AddOffsets, TxnOffsetCommit.
    m.add_partition(&tp(1)).unwrap();
    m.add_partition(&tp(0)).unwrap(); // already in: nothing to add
    let group = GroupMetadata {
        group_id: "app".into(),
        member_id: "m-1".into(),
        member_epoch: 7,
        group_instance_id: Some("i-1".into()),
    };
    // Kafka Streams' offset: the partition time as metadata (TopicPartitionMetadata).
    let offset = CommitOffset::new(100)
        .leader_epoch(3)
        .partition_time(1_700_000_000_000);
    let offsets = BTreeMap::from([(TopicPartition::new("in", 0), offset)]);
    m.send_offsets(offsets, group).unwrap();
    let Some(TxnRequest::AddPartitions(r)) = m.next_request() else {
        panic!()
    };
    assert_eq!(r.topics[0].partitions, vec![1]);
    assert_eq!(m.on_add_partitions(&add_parts(&[(1, K::None)])), Step::Done);
    let Some(TxnRequest::AddOffsets(r)) = m.next_request() else {
        panic!()
    };
    assert_eq!(r.group_id, "app");
    assert_eq!(
        m.on_add_offsets(&AddOffsetsToTxnResponse::default()),
        Step::Done
    );
    let req = m.next_request().unwrap();
    assert_eq!(req.coordinator(), TxnCoordinator::Group("app".into()));
    let TxnRequest::TxnOffsetCommit(r) = req else {
        panic!()
    };
    assert_eq!(
        (
            r.member_id.as_str(),
            r.generation_id_or_member_epoch,
            r.group_instance_id.as_deref()
        ),
        ("m-1", 7, Some("i-1"))
    );
    let p = &r.topics[0].partitions[0];
    assert_eq!(
        (
            p.committed_offset,
            p.committed_leader_epoch,
            p.committed_metadata.as_deref()
        ),
        (100, 3, Some("AgAAAYvP5WgA")),
        "offset, leader epoch and Java's metadata bytes"
    );
    assert_eq!(m.on_txn_offset_commit(&offsets_resp(K::None)), Step::Done);
    assert!(!m.offsets_pending());
    assert_eq!(
        m.next_request(),
        None,
        "in a transaction: waits for the caller"
    );
    m.begin_commit().unwrap();
    let Some(TxnRequest::EndTxn(r)) = m.next_request() else {
        panic!()
    };
    assert!(r.committed);
    assert_eq!((r.producer_id, r.producer_epoch), (42, 5));
    assert_eq!(m.on_end_txn(&end(K::None)), Step::Done);
    assert_eq!(m.state(), TxnState::Ready);
    assert_eq!(m.identity(), Some(ID), "v1: the epoch stays");
    assert!(!m.may_send(&tp(0)), "the next transaction adds again");
}

#[test]
fn v2_adds_nothing_explicitly_and_takes_the_epoch_from_end_txn() {
    let mut m = ready(TxnVersion::V2);
    m.begin().unwrap();
    m.add_partition(&tp(0)).unwrap();
    assert!(m.may_send(&tp(0)), "v2: Produce v12+ adds the partition");
    assert!(!m.partitions_pending());
    m.on_batch_sent(&tp(0));
    m.send_offsets(
        BTreeMap::from([(TopicPartition::new("in", 0), CommitOffset::new(5))]),
        GroupMetadata::new("app"),
    )
    .unwrap();
    assert!(
        matches!(m.next_request(), Some(TxnRequest::TxnOffsetCommit(_))),
        "v2: no AddOffsetsToTxn"
    );
    assert_eq!(m.on_txn_offset_commit(&offsets_resp(K::None)), Step::Done);
    m.begin_commit().unwrap();
    assert!(matches!(m.next_request(), Some(TxnRequest::EndTxn(_))));
    let bumped = EndTxnResponse {
        producer_id: 42,
        producer_epoch: 6,
        ..Default::default()
    };
    assert_eq!(m.on_end_txn(&bumped), Step::Done);
    assert_eq!(
        m.identity(),
        Some(ProducerIdentity {
            producer_id: 42,
            producer_epoch: 6
        })
    );
    assert_eq!(m.state(), TxnState::Ready);
    // The version cannot change inside a transaction, only between.
    m.begin().unwrap();
    m.set_version(TxnVersion::V1);
    assert_eq!(m.version(), TxnVersion::V2);
}

#[test]
fn an_empty_transaction_ends_without_end_txn() {
    let mut m = ready(TxnVersion::V1);
    m.begin().unwrap();
    m.begin_commit().unwrap();
    assert_eq!(m.next_request(), None);
    assert_eq!(m.state(), TxnState::Ready);
    let mut m = ready(TxnVersion::V2);
    m.begin().unwrap();
    m.add_partition(&tp(0)).unwrap(); // a record queued, never sent
    m.begin_abort(false).unwrap();
    assert_eq!(m.next_request(), None);
    assert_eq!(m.state(), TxnState::Ready);
}

#[test]
fn end_txn_retries_on_moved_coordinator_and_concurrent_transactions() {
    for (k, lookup) in [
        (K::NotCoordinator, true),
        (K::CoordinatorNotAvailable, true),
        (K::ConcurrentTransactions, false),
        (K::CoordinatorLoadInProgress, false),
        (K::RequestTimedOut, false),
    ] {
        let mut m = in_txn_v1();
        m.begin_commit().unwrap();
        let first = m.next_request().unwrap();
        assert_eq!(m.on_end_txn(&end(k)), Step::Retry { lookup, kind: k });
        assert_eq!(m.state(), TxnState::CommittingTransaction);
        assert_eq!(m.next_request(), Some(first), "the same EndTxn again");
        // A timeout: the same request again too.
        assert!(matches!(m.on_no_answer(), Step::Retry { lookup: true, .. }));
        assert_eq!(m.on_end_txn(&end(K::None)), Step::Done);
        assert_eq!(m.state(), TxnState::Ready);
    }
}

#[test]
fn end_txn_errors_fence_fail_or_abort() {
    for (k, class) in [
        (K::ProducerFenced, TxnErrorClass::Fenced),
        (K::InvalidProducerEpoch, TxnErrorClass::Fenced),
        (K::InvalidTxnState, TxnErrorClass::Fatal),
        (K::TransactionalIdAuthorizationFailed, TxnErrorClass::Fatal),
        (K::UnknownProducerId, TxnErrorClass::Abortable),
        (K::InvalidProducerIdMapping, TxnErrorClass::Abortable),
        (K::TransactionAbortable, TxnErrorClass::Abortable),
        (K::InvalidRequest, TxnErrorClass::Fatal),
    ] {
        let mut m = in_txn_v1();
        m.begin_commit().unwrap();
        m.next_request();
        let Step::Failed(e) = m.on_end_txn(&end(k)) else {
            panic!("{k}")
        };
        assert_eq!(e.class, class, "{k}");
        assert_eq!(e.kind, k);
        let expect = if class == TxnErrorClass::Abortable {
            TxnState::AbortableError
        } else {
            TxnState::FatalError
        };
        assert_eq!(m.state(), expect, "{k}");
    }
}

#[test]
fn an_abortable_error_must_be_aborted_and_a_pid_error_bumps_the_epoch_after() {
    let mut m = in_txn_v1();
    m.begin_commit().unwrap();
    m.next_request();
    let Step::Failed(_) = m.on_end_txn(&end(K::UnknownProducerId)) else {
        panic!()
    };
    let e = m.begin_commit().unwrap_err();
    assert!(
        e.is_abortable() && e.to_string().contains("abort_transaction"),
        "{e}"
    );
    assert!(
        m.add_partition(&tp(3)).is_err(),
        "nothing more in a failed transaction"
    );
    m.begin_abort(false).unwrap();
    let Some(TxnRequest::EndTxn(r)) = m.next_request() else {
        panic!()
    };
    assert!(!r.committed);
    assert_eq!(m.on_end_txn(&end(K::None)), Step::Done);
    // KIP-360: InitProducerId with the current id and epoch bumps the epoch.
    assert_eq!(m.state(), TxnState::Initializing);
    let Some(TxnRequest::InitProducerId(r)) = m.next_request() else {
        panic!()
    };
    assert_eq!((r.producer_id, r.producer_epoch), (42, 5));
    let bumped = InitProducerIdResponse {
        producer_id: 42,
        producer_epoch: 6,
        ..Default::default()
    };
    assert_eq!(m.on_init_producer_id(&bumped), Step::Done);
    assert_eq!(m.state(), TxnState::Ready);
    assert_eq!(m.identity().unwrap().producer_epoch, 6);
}

#[test]
fn add_partitions_answers_as_java() {
    let cases = [
        (K::ConcurrentTransactions, false),
        (K::NotCoordinator, true),
        (K::CoordinatorLoadInProgress, false),
        (K::UnknownTopicOrPartition, false),
    ];
    for (k, lookup) in cases {
        let mut m = ready(TxnVersion::V1);
        m.begin().unwrap();
        m.add_partition(&tp(0)).unwrap();
        m.next_request();
        assert_eq!(
            m.on_add_partitions(&add_parts(&[(0, k)])),
            Step::Retry { lookup, kind: k },
            "{k}"
        );
        assert!(m.partitions_pending(), "{k}: asked again");
    }
    for (k, class) in [
        (K::ProducerFenced, TxnErrorClass::Fenced),
        (K::InvalidProducerEpoch, TxnErrorClass::Fenced),
        (K::InvalidTxnState, TxnErrorClass::Fatal),
        (K::TransactionalIdAuthorizationFailed, TxnErrorClass::Fatal),
        (K::TopicAuthorizationFailed, TxnErrorClass::Abortable),
        (K::TransactionAbortable, TxnErrorClass::Abortable),
        (K::UnknownProducerId, TxnErrorClass::Abortable),
        (K::InvalidRecord, TxnErrorClass::Abortable),
    ] {
        let mut m = ready(TxnVersion::V1);
        m.begin().unwrap();
        m.add_partition(&tp(0)).unwrap();
        m.add_partition(&tp(1)).unwrap();
        m.next_request();
        let r = add_parts(&[(0, K::OperationNotAttempted), (1, k)]);
        let Step::Failed(e) = m.on_add_partitions(&r) else {
            panic!("{k}")
        };
        assert_eq!(e.class, class, "{k}");
        assert!(!m.may_send(&tp(0)), "{k}");
    }
}

#[test]
fn txn_offset_commit_answers_as_java() {
    for (k, lookup) in [
        (K::NotCoordinator, true),
        (K::CoordinatorNotAvailable, true),
        (K::RequestTimedOut, true),
        (K::CoordinatorLoadInProgress, false),
        (K::UnknownTopicOrPartition, false),
        (K::ConcurrentTransactions, false),
    ] {
        let mut m = ready(TxnVersion::V2);
        m.begin().unwrap();
        m.send_offsets(
            BTreeMap::from([(TopicPartition::new("in", 0), CommitOffset::new(1))]),
            GroupMetadata::new("g"),
        )
        .unwrap();
        m.next_request();
        assert_eq!(
            m.on_txn_offset_commit(&offsets_resp(k)),
            Step::Retry { lookup, kind: k }
        );
        assert!(m.offsets_pending());
        assert!(matches!(
            m.next_request(),
            Some(TxnRequest::TxnOffsetCommit(_))
        ));
    }
    for (k, class) in [
        (K::UnknownMemberId, TxnErrorClass::Abortable),
        (K::IllegalGeneration, TxnErrorClass::Abortable),
        (K::StaleMemberEpoch, TxnErrorClass::Abortable),
        (K::FencedInstanceId, TxnErrorClass::Abortable),
        (K::GroupAuthorizationFailed, TxnErrorClass::Abortable),
        (K::ProducerFenced, TxnErrorClass::Fenced),
        (K::InvalidProducerEpoch, TxnErrorClass::Fenced),
        (K::TransactionalIdAuthorizationFailed, TxnErrorClass::Fatal),
    ] {
        let mut m = ready(TxnVersion::V2);
        m.begin().unwrap();
        m.send_offsets(
            BTreeMap::from([(TopicPartition::new("in", 0), CommitOffset::new(1))]),
            GroupMetadata::new("g"),
        )
        .unwrap();
        m.next_request();
        let Step::Failed(e) = m.on_txn_offset_commit(&offsets_resp(k)) else {
            panic!("{k}")
        };
        assert_eq!(e.class, class, "{k}");
    }
}

#[test]
fn failed_batches_abort_or_fence_the_transaction() {
    let mut m = in_txn_v1();
    let Step::Failed(e) = m.on_batch_failed(&tp(0), K::OutOfOrderSequenceNumber) else {
        panic!()
    };
    assert!(e.is_abortable());
    assert!(e.to_string().contains("out-0"), "{e}");
    assert_eq!(m.state(), TxnState::AbortableError);
    m.begin_abort(true).unwrap();
    assert!(matches!(m.next_request(), Some(TxnRequest::EndTxn(_))));
    m.on_end_txn(&end(K::None));
    assert_eq!(m.state(), TxnState::Initializing, "v1: bump after a gap");

    let mut m = in_txn_v1();
    let Step::Failed(e) = m.on_batch_failed(&tp(0), K::ProducerFenced) else {
        panic!()
    };
    assert!(e.is_fenced());
    assert_eq!(m.state(), TxnState::FatalError);
    assert!(m.begin_abort(false).is_err(), "fenced: not even an abort");
}

#[test]
fn an_abort_while_aborting_ignores_further_abortable_errors() {
    let mut m = in_txn_v1();
    m.begin_abort(false).unwrap();
    m.next_request();
    let Step::Failed(_) = m.on_end_txn(&end(K::TransactionAbortable)) else {
        panic!()
    };
    assert_eq!(m.state(), TxnState::AbortingTransaction);
    assert!(matches!(m.next_request(), Some(TxnRequest::EndTxn(_))));
}

#[test]
fn feature_levels_pick_the_version() {
    assert_eq!(TxnVersion::from_feature_level(None), TxnVersion::V1);
    assert_eq!(TxnVersion::from_feature_level(Some(0)), TxnVersion::V1);
    assert_eq!(TxnVersion::from_feature_level(Some(1)), TxnVersion::V1);
    assert_eq!(TxnVersion::from_feature_level(Some(2)), TxnVersion::V2);
}
