use super::*;
use crate::protocol::api::test_util::*;
use crate::protocol::codec::{decode_message, encode_message, DecodeError, EncodeError};
use crate::protocol::BrokerErrorKind;
use proptest::prelude::*;

fn req_expected(m: &FetchRequest, v: i16) -> Option<FetchRequest> {
    let partitions = || m.topics.iter().flat_map(|t| &t.partitions);
    if (v >= 15 && m.replica_id != -1)
        || (v < 15 && m.replica_state != ReplicaState::default())
        || (v < 7 && !m.forgotten_topics_data.is_empty())
        || (v < 12 && partitions().any(|p| p.last_fetched_epoch != -1))
    {
        return None;
    }
    let mut e = m.clone();
    if v < 12 {
        e.cluster_id = None;
    }
    if v < 7 {
        e.session_id = 0;
        e.session_epoch = -1;
    }
    if v < 11 {
        e.rack_id.clear();
    }
    for t in &mut e.topics {
        if v <= 12 {
            t.topic_id = Uuid::ZERO;
        } else {
            t.topic.clear();
        }
        for p in &mut t.partitions {
            if v < 9 {
                p.current_leader_epoch = -1;
            }
            if v < 5 {
                p.log_start_offset = -1;
            }
            if v < 17 {
                p.replica_directory_id = Uuid::ZERO;
            }
            if v < 18 {
                p.high_watermark = i64::MAX;
            }
        }
    }
    for t in &mut e.forgotten_topics_data {
        if v <= 12 {
            t.topic_id = Uuid::ZERO;
        } else {
            t.topic.clear();
        }
    }
    Some(e)
}

fn resp_expected(m: &FetchResponse, v: i16) -> Option<FetchResponse> {
    let partitions = || m.responses.iter().flat_map(|t| &t.partitions);
    if (v < 7 && m.session_id != 0)
        || (v < 16 && !m.node_endpoints.is_empty())
        || (v < 11 && partitions().any(|p| p.preferred_read_replica != -1))
        || (v < 12
            && partitions().any(|p| {
                p.diverging_epoch != EpochEndOffset::default()
                    || p.current_leader != LeaderIdAndEpoch::default()
                    || p.snapshot_id != SnapshotId::default()
            }))
    {
        return None;
    }
    let mut e = m.clone();
    if v < 7 {
        e.error_code = 0;
    }
    for t in &mut e.responses {
        if v <= 12 {
            t.topic_id = Uuid::ZERO;
        } else {
            t.topic.clear();
        }
        for p in &mut t.partitions {
            if v < 5 {
                p.log_start_offset = -1;
            }
        }
    }
    Some(e)
}

/// Makes `m` representable at `v` without touching ignorable fields.
fn shape_req(m: &FetchRequest, v: i16) -> FetchRequest {
    let mut s = m.clone();
    if v >= 15 {
        s.replica_id = -1;
    } else {
        s.replica_state = ReplicaState::default();
    }
    if v < 7 {
        s.forgotten_topics_data.clear();
    }
    if v < 12 {
        s.topics
            .iter_mut()
            .flat_map(|t| &mut t.partitions)
            .for_each(|p| p.last_fetched_epoch = -1);
    }
    s
}

fn shape_resp(m: &FetchResponse, v: i16) -> FetchResponse {
    let mut s = m.clone();
    if v < 7 {
        s.session_id = 0;
    }
    if v < 16 {
        s.node_endpoints.clear();
    }
    for p in s.responses.iter_mut().flat_map(|t| &mut t.partitions) {
        if v < 11 {
            p.preferred_read_replica = -1;
        }
        if v < 12 {
            p.diverging_epoch = EpochEndOffset::default();
            p.current_leader = LeaderIdAndEpoch::default();
            p.snapshot_id = SnapshotId::default();
        }
    }
    s
}

fn consumer_fetch() -> FetchRequest {
    FetchRequest {
        max_wait_ms: 500,
        min_bytes: 1,
        max_bytes: 0x0320_0000,
        topics: vec![FetchTopic {
            topic: "t".into(),
            topic_id: Uuid([5; 16]),
            partitions: vec![FetchPartition {
                partition: 0,
                current_leader_epoch: 2,
                fetch_offset: 7,
                partition_max_bytes: 0x0010_0000,
                ..Default::default()
            }],
        }],
        ..Default::default()
    }
}

#[test]
fn request_golden() {
    let mut r = consumer_fetch();
    r.topics[0].topic_id = Uuid::ZERO;
    r.topics[0].partitions[0].current_leader_epoch = -1;
    #[rustfmt::skip]
    golden(&r, 4, &[
        0xff, 0xff, 0xff, 0xff,             // ReplicaId -1
        0, 0, 0x01, 0xf4, 0, 0, 0, 1,       // MaxWaitMs 500, MinBytes 1
        0x03, 0x20, 0, 0, 0,                // MaxBytes, IsolationLevel
        0, 0, 0, 1, 0, 1, b't',             // Topics: 1, Topic
        0, 0, 0, 1, 0, 0, 0, 0,             // Partitions: 1, Partition 0
        0, 0, 0, 0, 0, 0, 0, 7,             // FetchOffset
        0, 0x10, 0, 0,                      // PartitionMaxBytes
    ]);
    let mut r = FetchRequest {
        cluster_id: Some("c".into()),
        ..consumer_fetch()
    };
    r.topics[0].topic.clear(); // names are not carried from v13
    let mut want = vec![
        0, 0, 0x01, 0xf4, 0, 0, 0, 1, 0x03, 0x20, 0, 0, 0, // no ReplicaId at v15
        0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, // SessionId 0, SessionEpoch -1
        2,    // Topics
    ];
    want.extend_from_slice(&[5; 16]); // TopicId
    #[rustfmt::skip]
    want.extend_from_slice(&[
        2, 0, 0, 0, 0, 0, 0, 0, 2,          // Partitions, Partition, CurrentLeaderEpoch 2
        0, 0, 0, 0, 0, 0, 0, 7,             // FetchOffset
        0xff, 0xff, 0xff, 0xff,             // LastFetchedEpoch -1
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // LogStartOffset -1
        0, 0x10, 0, 0, 0,                   // PartitionMaxBytes, tags
        0,                                  // topic tags
        1,                                  // ForgottenTopicsData []
        1,                                  // RackId ""
        1, 0, 2, 2, b'c',                   // tag 0: ClusterId "c"
    ]);
    golden(&r, 15, &want);
    // A follower's replica id cannot be written after v14.
    let mut buf = Vec::new();
    let follower = FetchRequest {
        replica_id: 1,
        ..consumer_fetch()
    };
    assert_eq!(
        encode_message(&mut buf, &follower, 15),
        Err(EncodeError::FieldNotInVersion {
            api: "FetchRequest",
            version: 15,
            field: "ReplicaId"
        })
    );
    assert!(buf.is_empty());
}

#[test]
fn response_golden() {
    let r = FetchResponse {
        session_id: 0,
        responses: vec![FetchableTopicResponse {
            topic: "t".into(),
            topic_id: Uuid::ZERO,
            partitions: vec![PartitionData {
                partition_index: 0,
                error_code: 74, // FENCED_LEADER_EPOCH
                high_watermark: 10,
                last_stable_offset: 10,
                log_start_offset: 0,
                current_leader: LeaderIdAndEpoch {
                    leader_id: 3,
                    leader_epoch: 4,
                },
                records: Some(vec![1, 2, 3]),
                ..Default::default()
            }],
        }],
        ..Default::default()
    };
    assert_eq!(
        r.responses[0].partitions[0].error(),
        BrokerErrorKind::FencedLeaderEpoch
    );
    #[rustfmt::skip]
    golden(&r, 12, &[
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0,       // ThrottleTimeMs, ErrorCode, SessionId
        2, 2, b't', 2,                      // Responses, Topic, Partitions
        0, 0, 0, 0, 0, 74,                  // PartitionIndex, ErrorCode
        0, 0, 0, 0, 0, 0, 0, 10,            // HighWatermark
        0, 0, 0, 0, 0, 0, 0, 10,            // LastStableOffset
        0, 0, 0, 0, 0, 0, 0, 0,             // LogStartOffset
        0,                                  // AbortedTransactions null
        0xff, 0xff, 0xff, 0xff,             // PreferredReadReplica -1
        4, 1, 2, 3,                         // Records
        1, 1, 9, 0, 0, 0, 3, 0, 0, 0, 4, 0, // tag 1: CurrentLeader {3, 4}
        0,                                  // topic tags
        0,                                  // tags
    ]);
    assert_eq!(r.responses[0].partitions[0].records_bytes(), &[1, 2, 3]);
    assert_eq!(PartitionData::default().records_bytes(), &[] as &[u8]);
    let mut buf = Vec::new();
    assert!(matches!(
        encode_message(&mut buf, &r, 11),
        Err(EncodeError::FieldNotInVersion {
            field: "CurrentLeader",
            ..
        })
    ));
}

#[test]
fn hostile_records_and_tags() {
    // v4 partition whose Records claims 2^31-1 bytes.
    #[rustfmt::skip]
    let bytes = [
        0, 0, 0, 0,                         // ThrottleTimeMs
        0, 0, 0, 1, 0, 1, b't',             // Responses: 1, Topic
        0, 0, 0, 1, 0, 0, 0, 0, 0, 0,       // Partitions: 1, index, error
        0, 0, 0, 0, 0, 0, 0, 0,             // HighWatermark
        0, 0, 0, 0, 0, 0, 0, 0,             // LastStableOffset
        0xff, 0xff, 0xff, 0xff,             // AbortedTransactions null
        0x7f, 0xff, 0xff, 0xff, 1,          // Records
    ];
    let e = decode_message::<FetchResponse>(&bytes, 4).unwrap_err();
    assert!(
        matches!(
            e,
            DecodeError::InvalidLength {
                field: "Records",
                ..
            }
        ),
        "{e}"
    );
    // A v12 CurrentLeader tag whose body is shorter than the struct.
    #[rustfmt::skip]
    let bytes = [
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2, b't', 2,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0,
        1, 1, 3, 0, 0, 0,                   // tag 1 with 3 bytes
        0, 0,
    ];
    assert!(decode_message::<FetchResponse>(&bytes, 12).is_err());
}

proptest! {
    #![proptest_config(prop_config(64))]

    #[test]
    fn prop_request(m in any::<FetchRequest>()) {
        for v in 4..=18 {
            prop_assert_eq!(lossy_or_rejected(&m, req_expected(&m, v), v), Ok(()));
            let s = shape_req(&m, v);
            prop_assert_eq!(lossy_or_rejected(&s, req_expected(&s, v), v), Ok(()));
            prop_assert!(req_expected(&s, v).is_some());
        }
    }

    #[test]
    fn prop_response(m in any::<FetchResponse>()) {
        for v in 4..=18 {
            prop_assert_eq!(lossy_or_rejected(&m, resp_expected(&m, v), v), Ok(()));
            let s = shape_resp(&m, v);
            prop_assert_eq!(lossy_or_rejected(&s, resp_expected(&s, v), v), Ok(()));
            prop_assert!(resp_expected(&s, v).is_some());
        }
    }

    #[test]
    fn prop_garbage(b in proptest::collection::vec(any::<u8>(), 0..160)) {
        for v in 4..=18 {
            let _ = decode_message::<FetchResponse>(&b, v);
            let _ = decode_message::<FetchRequest>(&b, v);
        }
    }
}
