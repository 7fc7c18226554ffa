use super::*;
use crate::protocol::api::test_util::*;
use crate::protocol::codec::{decode_message, encode_message, EncodeError};
use proptest::prelude::*;

fn req_expected(m: &TxnOffsetCommitRequest, v: i16) -> Option<TxnOffsetCommitRequest> {
    if v < 3
        && (m.generation_id_or_member_epoch != -1
            || !m.member_id.is_empty()
            || m.group_instance_id.is_some())
    {
        return None;
    }
    let mut e = m.clone();
    for t in &mut e.topics {
        if v <= 5 {
            t.topic_id = Uuid::ZERO;
        } else {
            t.name.clear();
        }
        for p in &mut t.partitions {
            if v < 2 {
                p.committed_leader_epoch = -1;
            }
        }
    }
    Some(e)
}

fn resp_expected(m: &TxnOffsetCommitResponse, v: i16) -> TxnOffsetCommitResponse {
    let mut e = m.clone();
    for t in &mut e.topics {
        if v <= 5 {
            t.topic_id = Uuid::ZERO;
        } else {
            t.name.clear();
        }
    }
    e
}

#[test]
fn request_golden() {
    let r = TxnOffsetCommitRequest {
        transactional_id: "t".into(),
        group_id: "g".into(),
        producer_id: 7,
        producer_epoch: 3,
        generation_id_or_member_epoch: 5,
        member_id: "m".into(),
        group_instance_id: None,
        topics: vec![TxnOffsetCommitRequestTopic {
            name: "a".into(),
            topic_id: Uuid::ZERO,
            partitions: vec![TxnOffsetCommitRequestPartition {
                partition_index: 1,
                committed_offset: 42,
                committed_leader_epoch: -1,
                committed_metadata: None,
            }],
        }],
    };
    #[rustfmt::skip]
    golden(&r, 5, &[
        2, b't', 2, b'g', 0, 0, 0, 0, 0, 0, 0, 7, 0, 3,
        0, 0, 0, 5, 2, b'm', 0,
        2, 2, b'a', 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 42, 0xff, 0xff, 0xff, 0xff, 0, 0, 0,
        0,
    ]);
    // Before v3 the member fields do not exist and are not ignorable.
    let mut buf = Vec::new();
    assert_eq!(
        encode_message(&mut buf, &r, 2),
        Err(EncodeError::FieldNotInVersion {
            api: "TxnOffsetCommitRequest",
            version: 2,
            field: "GenerationIdOrMemberEpoch"
        })
    );
}

#[test]
fn response_golden() {
    let r = TxnOffsetCommitResponse {
        throttle_time_ms: 0,
        topics: vec![TxnOffsetCommitResponseTopic {
            name: "a".into(),
            topic_id: Uuid::ZERO,
            partitions: vec![TxnOffsetCommitResponsePartition {
                partition_index: 1,
                error_code: 22,
            }],
        }],
    };
    #[rustfmt::skip]
    golden(&r, 0, &[0, 0, 0, 0, 0, 0, 0, 1, 0, 1, b'a', 0, 0, 0, 1, 0, 0, 0, 1, 0, 22]);
    assert_eq!(
        r.errors().collect::<Vec<_>>(),
        vec![("a", 1, BrokerErrorKind::IllegalGeneration)]
    );
}

proptest! {
    #![proptest_config(prop_config(128))]

    #[test]
    fn prop_request(m in any::<TxnOffsetCommitRequest>()) {
        for v in 0..=6 {
            prop_assert_eq!(lossy_or_rejected(&m, req_expected(&m, v), v), Ok(()));
        }
    }

    #[test]
    fn prop_response(m in any::<TxnOffsetCommitResponse>()) {
        for v in 0..=6 {
            prop_assert_eq!(lossy_or_rejected(&m, Some(resp_expected(&m, v)), v), Ok(()));
        }
    }

    #[test]
    fn prop_garbage(b in proptest::collection::vec(any::<u8>(), 0..60)) {
        for v in 0..=6 {
            let _ = decode_message::<TxnOffsetCommitResponse>(&b, v);
            let _ = decode_message::<TxnOffsetCommitRequest>(&b, v);
        }
    }
}
