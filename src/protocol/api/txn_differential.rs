//! The transaction messages against the `kafka-protocol` crate (a dev-dependency), version
//! by version: our request bytes equal its encoding of the same request, and it decodes our
//! responses to the same fields.

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages as k;
use kafka_protocol::protocol::{Decodable as KpDecodable, Encodable as KpEncodable, StrBytes};

use super::add_offsets_to_txn::*;
use super::add_partitions_to_txn::*;
use super::end_txn::*;
use super::txn_offset_commit::*;
use crate::protocol::codec::{encode_message, ApiMessage};

fn ours<M: ApiMessage>(m: &M, v: i16) -> Vec<u8> {
    let mut b = Vec::new();
    encode_message(&mut b, m, v).expect("encode");
    b
}

fn theirs<T: KpEncodable>(m: &T, v: i16) -> Vec<u8> {
    let mut b = BytesMut::new();
    m.encode(&mut b, v).expect("kafka-protocol encodes");
    b.to_vec()
}

fn decode<T: KpDecodable>(bytes: Vec<u8>, v: i16) -> T {
    let mut b = Bytes::from(bytes);
    let r = T::decode(&mut b, v).expect("kafka-protocol decodes our bytes");
    assert!(b.is_empty(), "kafka-protocol left bytes unread");
    r
}

fn s(x: &str) -> StrBytes {
    StrBytes::from_string(x.to_string())
}

#[test]
fn end_txn_matches_kafka_protocol() {
    let r = EndTxnRequest {
        transactional_id: "app-1".into(),
        producer_id: 4242,
        producer_epoch: 7,
        committed: true,
    };
    let mut t = k::EndTxnRequest::default();
    t.transactional_id = k::TransactionalId(s("app-1"));
    t.producer_id = k::ProducerId(4242);
    t.producer_epoch = 7;
    t.committed = true;
    for v in 0..=5 {
        assert_eq!(ours(&r, v), theirs(&t, v), "EndTxnRequest v{v}");
        let resp = EndTxnResponse {
            throttle_time_ms: 3,
            error_code: 51,
            producer_id: if v >= 5 { 4242 } else { -1 },
            producer_epoch: if v >= 5 { 8 } else { -1 },
        };
        let d: k::EndTxnResponse = decode(ours(&resp, v), v);
        assert_eq!((d.throttle_time_ms, d.error_code), (3, 51), "v{v}");
        if v >= 5 {
            assert_eq!((d.producer_id.0, d.producer_epoch), (4242, 8));
        }
    }
}

#[test]
fn add_offsets_to_txn_matches_kafka_protocol() {
    let r = AddOffsetsToTxnRequest {
        transactional_id: "app-1".into(),
        producer_id: 9,
        producer_epoch: 2,
        group_id: "group".into(),
    };
    let mut t = k::AddOffsetsToTxnRequest::default();
    t.transactional_id = k::TransactionalId(s("app-1"));
    t.producer_id = k::ProducerId(9);
    t.producer_epoch = 2;
    t.group_id = k::GroupId(s("group"));
    for v in 0..=4 {
        assert_eq!(ours(&r, v), theirs(&t, v), "AddOffsetsToTxnRequest v{v}");
        let resp = AddOffsetsToTxnResponse {
            throttle_time_ms: 1,
            error_code: 15,
        };
        let d: k::AddOffsetsToTxnResponse = decode(ours(&resp, v), v);
        assert_eq!((d.throttle_time_ms, d.error_code), (1, 15));
    }
}

#[test]
fn add_partitions_to_txn_matches_kafka_protocol() {
    let r = AddPartitionsToTxnRequest {
        transactional_id: "app-1".into(),
        producer_id: 9,
        producer_epoch: 2,
        topics: vec![
            AddPartitionsToTxnTopic {
                name: "a".into(),
                partitions: vec![0, 3],
            },
            AddPartitionsToTxnTopic {
                name: "b".into(),
                partitions: vec![1],
            },
        ],
    };
    let mut t = k::AddPartitionsToTxnRequest::default();
    t.v3_and_below_transactional_id = k::TransactionalId(s("app-1"));
    t.v3_and_below_producer_id = k::ProducerId(9);
    t.v3_and_below_producer_epoch = 2;
    for (name, parts) in [("a", vec![0, 3]), ("b", vec![1])] {
        let mut topic = k::add_partitions_to_txn_request::AddPartitionsToTxnTopic::default();
        topic.name = k::TopicName(s(name));
        topic.partitions = parts;
        t.v3_and_below_topics.push(topic);
    }
    for v in 0..=3 {
        assert_eq!(ours(&r, v), theirs(&t, v), "AddPartitionsToTxnRequest v{v}");
        let resp = AddPartitionsToTxnResponse {
            throttle_time_ms: 0,
            results: vec![AddPartitionsToTxnTopicResult {
                name: "a".into(),
                results_by_partition: vec![
                    AddPartitionsToTxnPartitionResult {
                        partition_index: 0,
                        partition_error_code: 0,
                    },
                    AddPartitionsToTxnPartitionResult {
                        partition_index: 3,
                        partition_error_code: 51,
                    },
                ],
            }],
        };
        let d: k::AddPartitionsToTxnResponse = decode(ours(&resp, v), v);
        let topic = &d.results_by_topic_v3_and_below[0];
        assert_eq!(topic.name.0.as_str(), "a");
        let got: Vec<(i32, i16)> = topic
            .results_by_partition
            .iter()
            .map(|p| (p.partition_index, p.partition_error_code))
            .collect();
        assert_eq!(got, vec![(0, 0), (3, 51)], "v{v}");
    }
}

#[test]
fn txn_offset_commit_matches_kafka_protocol() {
    for v in 0..=5 {
        let member = v >= 3;
        let r = TxnOffsetCommitRequest {
            transactional_id: "app-1".into(),
            group_id: "group".into(),
            producer_id: 9,
            producer_epoch: 2,
            generation_id_or_member_epoch: if member { 12 } else { -1 },
            member_id: if member { "m-1".into() } else { String::new() },
            group_instance_id: member.then(|| "i-1".to_string()),
            topics: vec![TxnOffsetCommitRequestTopic {
                name: "in".into(),
                partitions: vec![TxnOffsetCommitRequestPartition {
                    partition_index: 2,
                    committed_offset: 100,
                    committed_leader_epoch: if v >= 2 { 5 } else { -1 },
                    committed_metadata: Some("meta".into()),
                }],
                ..Default::default()
            }],
        };
        let mut t = k::TxnOffsetCommitRequest::default();
        t.transactional_id = k::TransactionalId(s("app-1"));
        t.group_id = k::GroupId(s("group"));
        t.producer_id = k::ProducerId(9);
        t.producer_epoch = 2;
        if member {
            t.generation_id = 12;
            t.member_id = s("m-1");
            t.group_instance_id = Some(s("i-1"));
        }
        let mut p = k::txn_offset_commit_request::TxnOffsetCommitRequestPartition::default();
        p.partition_index = 2;
        p.committed_offset = 100;
        p.committed_leader_epoch = if v >= 2 { 5 } else { -1 };
        p.committed_metadata = Some(s("meta"));
        let mut topic = k::txn_offset_commit_request::TxnOffsetCommitRequestTopic::default();
        topic.name = k::TopicName(s("in"));
        topic.partitions.push(p);
        t.topics.push(topic);
        assert_eq!(ours(&r, v), theirs(&t, v), "TxnOffsetCommitRequest v{v}");
        let resp = TxnOffsetCommitResponse {
            throttle_time_ms: 4,
            topics: vec![TxnOffsetCommitResponseTopic {
                name: "in".into(),
                partitions: vec![TxnOffsetCommitResponsePartition {
                    partition_index: 2,
                    error_code: 22,
                }],
                ..Default::default()
            }],
        };
        let d: k::TxnOffsetCommitResponse = decode(ours(&resp, v), v);
        assert_eq!(d.throttle_time_ms, 4);
        assert_eq!(d.topics[0].name.0.as_str(), "in");
        assert_eq!(
            (
                d.topics[0].partitions[0].partition_index,
                d.topics[0].partitions[0].error_code
            ),
            (2, 22)
        );
    }
}
