//! Tests of the fetcher core without I/O: answers built by hand, batches by `BatchBuilder`.

use super::*;
use crate::error::Error;
use crate::protocol::api::fetch::{
    AbortedTransaction as WireAborted, FetchResponse, FetchableTopicResponse, PartitionData,
};
use crate::protocol::api::list_offsets::{
    ListOffsetsPartitionResponse, ListOffsetsResponse, ListOffsetsTopicResponse,
    EARLIEST_TIMESTAMP, LATEST_TIMESTAMP,
};
use crate::protocol::api::metadata::{
    MetadataResponse, MetadataResponsePartition, MetadataResponseTopic,
};
use crate::protocol::records::{
    BatchBuilder, Compression, ControlRecord, ControlRecordType, RecordSpec,
};
use crate::protocol::{BrokerErrorKind, Uuid};
use crate::streams::commit::TopicPartition;

const ID: Uuid = Uuid([7; 16]);

fn tp(p: i32) -> TopicPartition {
    TopicPartition::new("t", p)
}

fn metadata(leaders: &[(i32, i32)]) -> MetadataResponse {
    MetadataResponse {
        topics: vec![MetadataResponseTopic {
            name: Some("t".into()),
            topic_id: ID,
            partitions: leaders
                .iter()
                .enumerate()
                .map(|(i, (node, epoch))| MetadataResponsePartition {
                    partition_index: i as i32,
                    leader_id: *node,
                    leader_epoch: *epoch,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn core(reset: OffsetReset, isolation: IsolationLevel) -> FetcherCore {
    let mut c = FetcherCore::new(FetchSettings {
        reset,
        isolation,
        ..FetchSettings::default()
    });
    c.assign([tp(0), tp(1)]);
    assert!(c.needs_metadata());
    c.update_metadata(&metadata(&[(1, 5), (2, 7)]));
    assert!(!c.needs_metadata());
    c
}

/// One batch at `base` with `values`.
fn batch(out: &mut Vec<u8>, base: i64, values: &[&str], codec: Compression) {
    let mut b = BatchBuilder::new(codec).base_offset(base);
    for v in values {
        b.push(&RecordSpec::new(None, Some(v.as_bytes()), 1))
            .unwrap();
    }
    b.finish(out).unwrap();
}

fn answer(partition: i32, records: Vec<u8>, error: BrokerErrorKind) -> FetchResponse {
    FetchResponse {
        responses: vec![FetchableTopicResponse {
            topic: String::new(),
            topic_id: ID,
            partitions: vec![PartitionData {
                partition_index: partition,
                error_code: error.code(),
                high_watermark: 100,
                records: Some(records),
                ..Default::default()
            }],
        }],
        ..Default::default()
    }
}

fn values(parts: &[PartitionRecords]) -> Vec<(i64, String)> {
    let mut out = Vec::new();
    for p in parts {
        p.for_each_record(|r| {
            out.push((
                r.offset,
                String::from_utf8(r.value.unwrap_or_default().to_vec()).unwrap(),
            ))
        })
        .unwrap();
    }
    out
}

#[test]
fn reset_by_policy_then_one_fetch_per_leader() {
    let mut c = core(OffsetReset::Earliest, IsolationLevel::ReadUncommitted);
    assert!(c.fetch_nodes().is_empty(), "no position, no fetch");
    let reqs = c.reset_requests().unwrap();
    assert_eq!(reqs.iter().map(|r| r.0).collect::<Vec<_>>(), [1, 2]);
    let p = &reqs[0].1.topics[0].partitions[0];
    assert_eq!(
        (p.timestamp, p.current_leader_epoch),
        (EARLIEST_TIMESTAMP, 5)
    );
    c.seek_to(&tp(1), OffsetReset::Latest).unwrap();
    let reqs = c.reset_requests().unwrap();
    assert_eq!(
        reqs[1].1.topics[0].partitions[0].timestamp,
        LATEST_TIMESTAMP
    );
    c.handle_list_offsets(&ListOffsetsResponse {
        topics: vec![ListOffsetsTopicResponse {
            name: "t".into(),
            partitions: vec![
                ListOffsetsPartitionResponse {
                    partition_index: 0,
                    offset: 4,
                    ..Default::default()
                },
                ListOffsetsPartitionResponse {
                    partition_index: 1,
                    error_code: BrokerErrorKind::NotLeaderOrFollower.code(),
                    ..Default::default()
                },
            ],
        }],
        ..Default::default()
    });
    assert_eq!(c.position(&tp(0)), Some(4));
    assert_eq!(c.position(&tp(1)), None);
    assert!(c.needs_metadata(), "a leader error refreshes metadata");
    assert_eq!(c.fetch_nodes(), [1]);
    let by_id = c.fetch_request(1, 13, 250);
    assert_eq!(by_id.topics.len(), 1);
    assert_eq!(
        (by_id.topics[0].topic.as_str(), by_id.topics[0].topic_id),
        ("", ID)
    );
    let fp = &by_id.topics[0].partitions[0];
    assert_eq!((fp.fetch_offset, fp.current_leader_epoch), (4, 5));
    assert_eq!(
        (by_id.max_wait_ms, by_id.session_id, by_id.session_epoch),
        (250, 0, -1)
    );
    let by_name = c.fetch_request(1, 12, 0);
    assert_eq!(by_name.topics[0].topic, "t");
    assert!(c.fetch_request(2, 13, 0).topics.is_empty());
}

#[test]
fn none_policy_is_an_error_naming_the_partition() {
    let mut c = core(OffsetReset::None, IsolationLevel::ReadUncommitted);
    let e = c.reset_requests().unwrap_err();
    assert!(matches!(&e, Error::InvalidConfiguration { reason, .. } if reason.contains("t-0")));
    c.seek(&tp(0), 7).unwrap();
    c.seek(&tp(1), 7).unwrap();
    assert!(c.reset_requests().unwrap().is_empty());
    let out = c.handle_fetch(answer(0, Vec::new(), BrokerErrorKind::OffsetOutOfRange));
    assert!(out.is_empty());
    assert_eq!(c.position(&tp(0)), None);
    let e = c.reset_requests().unwrap_err().to_string();
    assert!(e.contains("offset 7 of t-0 is out of range"), "{e}");
    assert!(c.seek(&TopicPartition::new("other", 0), 1).is_err());
    assert!(c.seek(&tp(0), -1).is_err());
}

#[test]
fn answer_skips_records_below_the_position_and_advances() {
    let mut c = core(OffsetReset::Earliest, IsolationLevel::ReadUncommitted);
    c.seek(&tp(0), 2).unwrap();
    let mut wire = Vec::new();
    batch(&mut wire, 0, &["a", "b"], Compression::None); // below the position: dropped
    batch(&mut wire, 2, &["c", "d", "e"], Compression::Lz4);
    batch(&mut wire, 5, &["f"], Compression::Zstd);
    let full = wire.len();
    batch(&mut wire, 6, &["g"], Compression::None);
    wire.truncate(full + 10); // a partial trailing batch is not an error
    c.seek(&tp(0), 3).unwrap();
    let out = c.handle_fetch(answer(0, wire, BrokerErrorKind::None));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].batch_count(), 2);
    assert_eq!((out[0].first_offset(), out[0].next_offset()), (3, 6));
    assert_eq!(
        values(&out),
        [(3, "d".into()), (4, "e".into()), (5, "f".into())]
    );
    assert_eq!(c.position(&tp(0)), Some(6));
    assert!(c.take_error().is_none());
    // An answer for a partition paused meanwhile is dropped; the position stays.
    let mut wire = Vec::new();
    batch(&mut wire, 6, &["g"], Compression::None);
    c.set_paused(&tp(0), true).unwrap();
    assert!(c
        .handle_fetch(answer(0, wire, BrokerErrorKind::None))
        .is_empty());
    assert_eq!(c.position(&tp(0)), Some(6));
    assert_eq!(c.paused().collect::<Vec<_>>(), [&tp(0)]);
    assert!(
        c.fetch_request(1, 13, 0).topics.is_empty(),
        "paused: not fetched"
    );
}

#[test]
fn leader_errors_refresh_metadata_and_fatal_errors_surface() {
    let mut c = core(OffsetReset::Earliest, IsolationLevel::ReadUncommitted);
    c.seek(&tp(0), 0).unwrap();
    for kind in [
        BrokerErrorKind::NotLeaderOrFollower,
        BrokerErrorKind::FencedLeaderEpoch,
        BrokerErrorKind::UnknownTopicId,
    ] {
        c.update_metadata(&metadata(&[(1, 5), (2, 7)]));
        assert!(c.handle_fetch(answer(0, Vec::new(), kind)).is_empty());
        assert!(c.needs_metadata(), "{kind:?}");
        assert_eq!(c.position(&tp(0)), Some(0));
    }
    c.update_metadata(&metadata(&[(3, 6), (2, 7)]));
    assert_eq!(c.fetch_nodes(), [3], "the new leader");
    assert!(c
        .handle_fetch(answer(
            0,
            Vec::new(),
            BrokerErrorKind::TopicAuthorizationFailed
        ))
        .is_empty());
    assert!(matches!(
        c.take_error(),
        Some(Error::Broker {
            kind: BrokerErrorKind::TopicAuthorizationFailed,
            ..
        })
    ));
    // A partition without a leader keeps metadata stale.
    c.update_metadata(&metadata(&[(-1, 6), (2, 7)]));
    assert!(c.needs_metadata());
}

#[test]
fn read_committed_drops_aborted_data_and_markers() {
    let mut c = core(OffsetReset::Earliest, IsolationLevel::ReadCommitted);
    c.seek(&tp(1), 0).unwrap();
    let mut wire = Vec::new();
    let txn = |pid: i64, base: i64, v: &str, wire: &mut Vec<u8>| {
        let mut b = BatchBuilder::new(Compression::None)
            .base_offset(base)
            .producer(pid, 0, 0)
            .transactional(true);
        b.push(&RecordSpec::new(None, Some(v.as_bytes()), 1))
            .unwrap();
        b.finish(wire).unwrap();
    };
    let marker = |pid: i64, base: i64, kind: ControlRecordType, wire: &mut Vec<u8>| {
        let mut b = BatchBuilder::new(Compression::None)
            .base_offset(base)
            .producer(pid, 0, 0)
            .transactional(true)
            .control(true);
        let key = ControlRecord::key_bytes(kind);
        b.push(&RecordSpec::new(Some(&key), Some(&[0, 0, 0, 0, 0, 0]), 1))
            .unwrap();
        b.finish(wire).unwrap();
    };
    txn(7, 0, "aborted", &mut wire);
    marker(7, 1, ControlRecordType::Abort, &mut wire);
    txn(8, 2, "committed", &mut wire);
    marker(8, 3, ControlRecordType::Commit, &mut wire);
    let mut resp = answer(1, wire, BrokerErrorKind::None);
    resp.responses[0].partitions[0].aborted_transactions = Some(vec![WireAborted {
        producer_id: 7,
        first_offset: 0,
    }]);
    let out = c.handle_fetch(resp);
    assert_eq!(values(&out), [(2, "committed".into())]);
    assert_eq!(c.position(&tp(1)), Some(4), "past the last marker");
    assert_eq!(c.fetch_request(2, 18, 0).isolation_level, 1);
}

#[test]
fn corrupt_batch_is_an_error_after_the_good_ones() {
    let mut c = core(OffsetReset::Earliest, IsolationLevel::ReadUncommitted);
    c.seek(&tp(0), 0).unwrap();
    let mut wire = Vec::new();
    batch(&mut wire, 0, &["a"], Compression::None);
    batch(&mut wire, 1, &["b"], Compression::None);
    let last = wire.len() - 1;
    wire[last] ^= 0xff; // CRC no longer matches
    let out = c.handle_fetch(answer(0, wire, BrokerErrorKind::None));
    assert_eq!(values(&out), [(0, "a".into())]);
    assert_eq!(c.position(&tp(0)), Some(1));
    let e = c.take_error().expect("corrupt batch reported").to_string();
    assert!(e.contains("corrupt record batch in t-0"), "{e}");
}

#[test]
fn properties_map_java_keys() {
    let c = FetcherConfig::from_properties([
        ("bootstrap.servers", "h:1"),
        ("auto.offset.reset", "none"),
        ("isolation.level", "read_committed"),
        ("fetch.max.wait.ms", "250"),
        ("max.partition.fetch.bytes", "4096"),
        ("fetch.max.bytes", "8192"),
    ])
    .unwrap();
    let s = c.settings();
    assert_eq!(s.reset, OffsetReset::None);
    assert_eq!(s.isolation, IsolationLevel::ReadCommitted);
    assert_eq!(s.max_wait, std::time::Duration::from_millis(250));
    assert_eq!((s.partition_max_bytes, s.max_bytes), (4096, 8192));
    assert!(FetcherConfig::from_properties([
        ("bootstrap.servers", "h:1"),
        ("auto.offset.reset", "smallest")
    ])
    .is_err());
    assert!(FetcherConfig::from_properties([
        ("bootstrap.servers", "h:1"),
        ("fetch.min.bytes", "-1")
    ])
    .is_err());
    assert!(FetcherConfig::from_properties([
        ("bootstrap.servers", "h:1"),
        ("fetch.minbytes", "1")
    ])
    .is_err());
}

#[test]
fn end_offsets_of_any_partition_per_leader_without_touching_positions() {
    let mut c = FetcherCore::new(FetchSettings::default());
    // Nothing assigned: the leaders come from metadata loaded for the lookup.
    c.update_metadata(&metadata(&[(1, 5), (2, 7), (1, 9)]));
    assert!(c.leaders_known(&[tp(0), tp(2)]));
    assert!(!c.leaders_known(&[tp(3)]));
    let reqs = c.offsets_requests(
        &[tp(0), tp(1), tp(2), tp(3)],
        LATEST_TIMESTAMP,
        IsolationLevel::ReadUncommitted,
    );
    assert_eq!(reqs.iter().map(|(n, _)| *n).collect::<Vec<_>>(), vec![1, 2]);
    let (_, r1) = &reqs[0];
    assert_eq!(r1.isolation_level, 0, "read_uncommitted");
    let asked: Vec<(i32, i32, i64)> = r1.topics[0]
        .partitions
        .iter()
        .map(|p| (p.partition_index, p.current_leader_epoch, p.timestamp))
        .collect();
    assert_eq!(
        asked,
        vec![(0, 5, LATEST_TIMESTAMP), (2, 9, LATEST_TIMESTAMP)]
    );
    let committed = c.offsets_requests(&[tp(1)], LATEST_TIMESTAMP, IsolationLevel::ReadCommitted);
    assert_eq!(committed[0].1.isolation_level, 1);

    let part = |i, code: BrokerErrorKind, offset| ListOffsetsPartitionResponse {
        partition_index: i,
        error_code: code.code(),
        offset,
        ..Default::default()
    };
    let resp = ListOffsetsResponse {
        topics: vec![ListOffsetsTopicResponse {
            name: "t".into(),
            partitions: vec![
                part(0, BrokerErrorKind::None, 17),
                part(2, BrokerErrorKind::NotLeaderOrFollower, -1),
            ],
        }],
        ..Default::default()
    };
    let mut found = std::collections::BTreeMap::new();
    c.handle_offsets(&resp, &mut found).unwrap();
    assert_eq!(found.get(&tp(0)), Some(&17));
    assert!(!found.contains_key(&tp(2)), "leader error: ask again");
    assert!(c.needs_metadata());
    assert_eq!(c.position(&tp(0)), None, "not assigned, no position set");

    let denied = ListOffsetsResponse {
        topics: vec![ListOffsetsTopicResponse {
            name: "t".into(),
            partitions: vec![part(1, BrokerErrorKind::TopicAuthorizationFailed, -1)],
        }],
        ..Default::default()
    };
    let e = c.handle_offsets(&denied, &mut found).unwrap_err();
    assert_eq!(
        e.broker_error_kind(),
        Some(BrokerErrorKind::TopicAuthorizationFailed)
    );
    assert!(e.to_string().contains("t-1"), "{e}");
}

/// Issue 21 item 7: bytes without a complete batch are fetched again when an earlier
/// partition of the same answer carried data (the broker cut them at `fetch.max.bytes`), and
/// an error naming partition, offset and sizes when they are the answer's first data (the
/// broker guarantees one whole batch there, so fetching again would loop forever).
#[test]
fn bytes_without_a_complete_batch_are_a_cut_or_an_error() {
    let mut c = core(OffsetReset::Earliest, IsolationLevel::ReadUncommitted);
    c.update_metadata(&metadata(&[(1, 5), (1, 7)]));
    c.seek(&tp(0), 0).unwrap();
    c.seek(&tp(1), 3).unwrap();
    let mut whole = Vec::new();
    batch(&mut whole, 0, &["a", "b"], Compression::None);
    let mut cut = Vec::new();
    batch(&mut cut, 3, &["c", "d"], Compression::None);
    cut.truncate(30);
    let mut resp = answer(0, whole, BrokerErrorKind::None);
    let mut second = answer(1, cut.clone(), BrokerErrorKind::None);
    resp.responses[0]
        .partitions
        .append(&mut second.responses[0].partitions);
    let out = c.handle_fetch(resp);
    assert_eq!(values(&out), [(0, "a".into()), (1, "b".into())]);
    assert!(
        c.take_error().is_none(),
        "a cut after data is fetched again"
    );
    assert_eq!(c.position(&tp(1)), Some(3));
    // Alone (the first data of the answer): an error, the position kept.
    assert!(c
        .handle_fetch(answer(1, cut, BrokerErrorKind::None))
        .is_empty());
    let e = c.take_error().expect("no complete batch reported");
    assert!(
        matches!(
            &e,
            Error::Consumer(ConsumerError::NoCompleteBatch { partition, offset: 3, bytes: 30, .. })
                if *partition == tp(1)
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("max.partition.fetch.bytes"), "{e}");
    assert_eq!(c.position(&tp(1)), Some(3));
    // Empty data is no error.
    assert!(c
        .handle_fetch(answer(1, Vec::new(), BrokerErrorKind::None))
        .is_empty());
    assert!(c.take_error().is_none());
}
