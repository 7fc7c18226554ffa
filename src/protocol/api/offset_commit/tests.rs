use super::*;
use crate::protocol::api::test_util::*;
use proptest::prelude::*;

fn shape_topic_names(name: &mut String, id: &mut Uuid, v: i16) {
    if v <= 9 {
        *id = Uuid::ZERO;
    } else {
        name.clear();
    }
}

fn req_expected(m: &OffsetCommitRequest, v: i16) -> Option<OffsetCommitRequest> {
    (v >= 7 || m.group_instance_id.is_none()).then(|| {
        let mut e = m.clone();
        if v > 4 {
            e.retention_time_ms = -1;
        }
        for t in &mut e.topics {
            shape_topic_names(&mut t.name, &mut t.topic_id, v);
            for p in &mut t.partitions {
                if v < 6 {
                    p.committed_leader_epoch = -1;
                }
            }
        }
        e
    })
}

fn resp_expected(m: &OffsetCommitResponse, v: i16) -> Option<OffsetCommitResponse> {
    let mut e = m.clone();
    if v < 3 {
        e.throttle_time_ms = 0;
    }
    for t in &mut e.topics {
        shape_topic_names(&mut t.name, &mut t.topic_id, v);
    }
    Some(e)
}

#[test]
fn request_golden_v9_and_v10() {
    let mut r = OffsetCommitRequest {
        group_id: "g".into(),
        generation_id_or_member_epoch: 5,
        member_id: "m".into(),
        topics: vec![OffsetCommitRequestTopic {
            name: "t".into(),
            topic_id: Uuid::ZERO,
            partitions: vec![OffsetCommitRequestPartition {
                partition_index: 1,
                committed_offset: 42,
                committed_leader_epoch: -1,
                committed_metadata: Some(String::new()),
            }],
        }],
        ..Default::default()
    };
    let v9: Vec<u8> = [
        &[2, b'g'][..],
        &[0, 0, 0, 5],
        &[2, b'm'],
        &[0], // GroupInstanceId null
        &[2],
        &[2, b't'],
        &[2],
        &[0, 0, 0, 1],
        &[0, 0, 0, 0, 0, 0, 0, 42],
        &[0xff, 0xff, 0xff, 0xff],
        &[1],       // "" metadata
        &[0, 0, 0], // partition, topic, request tags
    ]
    .concat();
    golden(&r, 9, &v9);
    r.topics[0].name.clear();
    r.topics[0].topic_id = Uuid([7; 16]);
    let mut v10: Vec<u8> = v9[..10].to_vec();
    v10.extend_from_slice(&[7; 16]);
    v10.extend_from_slice(&v9[12..]);
    golden(&r, 10, &v10);
}

#[test]
fn request_v2_keeps_retention() {
    let r = OffsetCommitRequest {
        group_id: "g".into(),
        retention_time_ms: 9,
        ..Default::default()
    };
    golden(
        &r,
        2,
        &[
            0, 1, b'g', 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0,
        ],
    );
}

#[test]
fn response_golden_v9() {
    let r = OffsetCommitResponse {
        throttle_time_ms: 0,
        topics: vec![OffsetCommitResponseTopic {
            name: "t".into(),
            topic_id: Uuid::ZERO,
            partitions: vec![OffsetCommitResponsePartition {
                partition_index: 0,
                error_code: 113,
            }],
        }],
    };
    golden(
        &r,
        9,
        &[0, 0, 0, 0, 2, 2, b't', 2, 0, 0, 0, 0, 0, 113, 0, 0, 0],
    );
    assert_eq!(
        r.topics[0].partitions[0].error(),
        BrokerErrorKind::StaleMemberEpoch
    );
}

proptest! {
    #![proptest_config(prop_config(128))]

    #[test]
    fn prop_request(m in any::<OffsetCommitRequest>()) {
        for v in 2..=10 {
            prop_assert_eq!(lossy_or_rejected(&m, req_expected(&m, v), v), Ok(()));
            let mut shaped = m.clone();
            if v < 7 { shaped.group_instance_id = None; }
            prop_assert_eq!(lossy_or_rejected(&shaped, req_expected(&shaped, v), v), Ok(()));
        }
    }

    #[test]
    fn prop_response(m in any::<OffsetCommitResponse>()) {
        for v in 2..=10 {
            prop_assert_eq!(lossy_or_rejected(&m, resp_expected(&m, v), v), Ok(()));
        }
    }
}
