use super::*;
use crate::protocol::api::test_util::*;
use proptest::prelude::*;

fn shape_names(name: &mut String, id: &mut Uuid, v: i16) {
    if v <= 9 {
        *id = Uuid::ZERO;
    } else {
        name.clear();
    }
}

fn req_expected(m: &OffsetFetchRequest, v: i16) -> Option<OffsetFetchRequest> {
    let ok = if v <= 7 {
        m.groups.is_empty() && (v >= 2 || m.topics.is_some())
    } else {
        m.group_id.is_empty() && m.topics.as_ref().is_some_and(Vec::is_empty)
    } && (v >= 7 || !m.require_stable);
    ok.then(|| {
        let mut e = m.clone();
        for t in e.topics.iter_mut().flatten() {
            shape_names(&mut t.name, &mut t.topic_id, v);
        }
        for g in &mut e.groups {
            if v < 9 {
                g.member_id = None;
                g.member_epoch = -1;
            }
            for t in g.topics.iter_mut().flatten() {
                shape_names(&mut t.name, &mut t.topic_id, v);
            }
        }
        e
    })
}

fn shape_resp_topics(topics: &mut [OffsetFetchResponseTopic], v: i16) {
    for t in topics {
        shape_names(&mut t.name, &mut t.topic_id, v);
        for p in &mut t.partitions {
            if v < 5 {
                p.committed_leader_epoch = -1;
            }
        }
    }
}

fn resp_expected(m: &OffsetFetchResponse, v: i16) -> Option<OffsetFetchResponse> {
    let ok = if v <= 7 {
        m.groups.is_empty()
    } else {
        m.topics.is_empty()
    };
    ok.then(|| {
        let mut e = m.clone();
        if v < 3 {
            e.throttle_time_ms = 0;
        }
        if !(2..=7).contains(&v) {
            e.error_code = 0;
        }
        shape_resp_topics(&mut e.topics, v);
        for g in &mut e.groups {
            shape_resp_topics(&mut g.topics, v);
        }
        e
    })
}

#[test]
fn request_golden_v9_member() {
    let r = OffsetFetchRequest {
        groups: vec![OffsetFetchRequestGroup {
            group_id: "g".into(),
            member_id: Some("m".into()),
            member_epoch: 3,
            topics: Some(vec![OffsetFetchRequestTopic {
                name: "t".into(),
                topic_id: Uuid::ZERO,
                partition_indexes: vec![0, 2],
            }]),
        }],
        require_stable: true,
        ..Default::default()
    };
    golden(
        &r,
        9,
        &[
            2, // groups
            2, b'g', 2, b'm', 0, 0, 0, 3, // group, member, epoch
            2, 2, b't', 3, 0, 0, 0, 0, 0, 0, 0, 2, 0, // one topic, two partitions, tags
            0, // group tags
            1, // require stable
            0,
        ],
    );
}

#[test]
fn request_golden_v1_and_all_topics() {
    let r = OffsetFetchRequest {
        group_id: "g".into(),
        topics: Some(vec![OffsetFetchRequestTopic {
            name: "t".into(),
            topic_id: Uuid::ZERO,
            partition_indexes: vec![1],
        }]),
        ..Default::default()
    };
    golden(
        &r,
        1,
        &[0, 1, b'g', 0, 0, 0, 1, 0, 1, b't', 0, 0, 0, 1, 0, 0, 0, 1],
    );
    let all = OffsetFetchRequest {
        group_id: "g".into(),
        topics: None,
        ..Default::default()
    };
    golden(&all, 2, &[0, 1, b'g', 0xff, 0xff, 0xff, 0xff]);
    let mut buf = Vec::new();
    assert!(matches!(
        crate::protocol::codec::encode_message(&mut buf, &all, 1),
        Err(EncodeError::NullNotAllowed {
            field: "Topics",
            ..
        })
    ));
}

#[test]
fn response_golden_v9() {
    let r = OffsetFetchResponse {
        groups: vec![OffsetFetchResponseGroup {
            group_id: "g".into(),
            topics: vec![OffsetFetchResponseTopic {
                name: "t".into(),
                topic_id: Uuid::ZERO,
                partitions: vec![OffsetFetchResponsePartition {
                    partition_index: 0,
                    committed_offset: 7,
                    committed_leader_epoch: -1,
                    metadata: Some(String::new()),
                    error_code: 0,
                }],
            }],
            error_code: 0,
        }],
        ..Default::default()
    };
    golden(
        &r,
        9,
        &[
            0, 0, 0, 0, // throttle
            2, 2, b'g', // group
            2, 2, b't', // topic
            2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7, 0xff, 0xff, 0xff, 0xff, 1, 0, 0,
            0, // partition
            0, // topic tags
            0, 0, 0, // group error + tags
            0,
        ],
    );
}

proptest! {
    #![proptest_config(prop_config(128))]

    #[test]
    fn prop_request(m in any::<OffsetFetchRequest>()) {
        for v in 1..=10 {
            prop_assert_eq!(lossy_or_rejected(&m, req_expected(&m, v), v), Ok(()));
            let mut shaped = m.clone();
            if v <= 7 {
                shaped.groups.clear();
                if shaped.topics.is_none() && v < 2 { shaped.topics = Some(Vec::new()); }
            } else {
                shaped.group_id.clear();
                shaped.topics = Some(Vec::new());
            }
            if v < 7 { shaped.require_stable = false; }
            prop_assert_eq!(lossy_or_rejected(&shaped, req_expected(&shaped, v), v), Ok(()));
            prop_assert!(req_expected(&shaped, v).is_some());
        }
    }

    #[test]
    fn prop_response(m in any::<OffsetFetchResponse>()) {
        for v in 1..=10 {
            prop_assert_eq!(lossy_or_rejected(&m, resp_expected(&m, v), v), Ok(()));
            let mut shaped = m.clone();
            if v <= 7 { shaped.groups.clear(); } else { shaped.topics.clear(); }
            prop_assert_eq!(lossy_or_rejected(&shaped, resp_expected(&shaped, v), v), Ok(()));
        }
    }
}
