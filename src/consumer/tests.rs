//! Tests of the fetcher core without I/O: answers built by hand, batches by `BatchBuilder`.

use super::*;
use crate::common::TopicPartition;
use crate::error::Error;
use crate::protocol::api::fetch::{
    AbortedTransaction as WireAborted, EpochEndOffset as FetchEpochEnd, FetchResponse,
    FetchableTopicResponse, PartitionData,
};
use crate::protocol::api::list_offsets::{
    ListOffsetsPartitionResponse, ListOffsetsResponse, ListOffsetsTopicResponse,
    EARLIEST_TIMESTAMP, LATEST_TIMESTAMP,
};
use crate::protocol::api::metadata::{
    MetadataResponse, MetadataResponsePartition, MetadataResponseTopic,
};
use crate::protocol::api::offset_for_leader_epoch::{
    EpochEndOffset, OffsetForLeaderEpochResponse, OffsetForLeaderPartition,
    OffsetForLeaderTopicResult,
};
use crate::protocol::records::{
    BatchBuilder, Compression, ControlRecord, ControlRecordType, RecordSpec,
};
use crate::protocol::{BrokerErrorKind, Uuid};

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

/// Java's `Consumer#currentLag`: the last answer's high watermark (last stable offset under
/// read_committed) minus the position; unknown before an answer, 0 once caught up, and
/// kept by an answer without records.
#[test]
fn fetched_lag_follows_the_answers_end_and_the_position() {
    for (isolation, want) in [
        (IsolationLevel::ReadUncommitted, 100 - 3),
        (IsolationLevel::ReadCommitted, 40 - 3),
    ] {
        let mut c = core(OffsetReset::Earliest, isolation);
        c.seek(&tp(0), 0).unwrap();
        assert_eq!(c.fetched_lag(&tp(0)), None, "no answer yet");
        let mut wire = Vec::new();
        batch(&mut wire, 0, &["a", "b", "c"], Compression::None);
        let mut a = answer(0, wire, BrokerErrorKind::None);
        a.responses[0].partitions[0].last_stable_offset = 40;
        assert_eq!(c.handle_fetch(a).len(), 1);
        assert_eq!(c.fetched_lag(&tp(0)), Some(want), "{isolation:?}");
        c.seek(&tp(0), 100).unwrap();
        let mut a = answer(0, Vec::new(), BrokerErrorKind::None);
        a.responses[0].partitions[0].last_stable_offset = 100;
        assert!(c.handle_fetch(a).is_empty());
        assert_eq!(c.fetched_lag(&tp(0)), Some(0), "caught up");
    }
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

/// `n` records from `base` in one batch written under leader epoch `epoch`.
fn epoch_batch(base: i64, n: i64, epoch: i32) -> Vec<u8> {
    let mut b = BatchBuilder::new(Compression::None)
        .base_offset(base)
        .partition_leader_epoch(epoch);
    for o in base..base + n {
        b.push(&RecordSpec::new(None, Some(format!("v{o}").as_bytes()), 1))
            .unwrap();
    }
    let mut out = Vec::new();
    b.finish(&mut out).unwrap();
    out
}

/// Partition 0 (leader 1 at epoch 5) read to offset 10 from batches of epochs 4 and 5.
fn consumed_to_10(reset: OffsetReset) -> FetcherCore {
    let mut c = core(reset, IsolationLevel::ReadUncommitted);
    c.seek(&tp(0), 0).unwrap();
    c.seek(&tp(1), 0).unwrap();
    assert_eq!(
        c.fetch_request(1, 18, 0).topics[0].partitions[0].last_fetched_epoch,
        -1,
        "no epoch after a seek"
    );
    let mut wire = epoch_batch(0, 6, 4);
    wire.extend(epoch_batch(6, 4, 5));
    assert_eq!(
        values(&c.handle_fetch(answer(0, wire, BrokerErrorKind::None))).len(),
        10
    );
    assert_eq!(c.position(&tp(0)), Some(10));
    let fp = c.fetch_request(1, 18, 0).topics[0].partitions[0];
    assert_eq!((fp.fetch_offset, fp.current_leader_epoch), (10, 5));
    assert_eq!(
        fp.last_fetched_epoch, 5,
        "the epoch of the last record consumed"
    );
    c
}

fn epoch_answer(
    partition: i32,
    error: BrokerErrorKind,
    epoch: i32,
    end_offset: i64,
) -> OffsetForLeaderEpochResponse {
    OffsetForLeaderEpochResponse {
        topics: vec![OffsetForLeaderTopicResult {
            topic: "t".into(),
            partitions: vec![EpochEndOffset {
                error_code: error.code(),
                partition,
                leader_epoch: epoch,
                end_offset,
            }],
        }],
        ..Default::default()
    }
}

/// Issue 21 item 2 (KIP-320): a leader change stops fetching the partition until
/// OffsetForLeaderEpoch validated its position; an end at or past it lets it go on.
#[test]
fn a_leader_change_validates_the_position_before_fetching_again() {
    let mut c = consumed_to_10(OffsetReset::Earliest);
    assert!(c.validation_requests().is_empty());
    // The same epoch again: no validation.
    c.update_metadata(&metadata(&[(1, 5), (2, 7)]));
    assert!(c.validation_requests().is_empty());
    c.update_metadata(&metadata(&[(3, 6), (2, 7)]));
    assert_eq!(c.fetch_nodes(), [2], "partition 0 waits for its validation");
    let reqs = c.validation_requests();
    assert_eq!(reqs.len(), 1);
    let (node, req) = &reqs[0];
    assert_eq!(*node, 3, "asks the new leader");
    assert_eq!(req.replica_id, -1);
    assert_eq!(
        req.topics[0].partitions[0],
        OffsetForLeaderPartition {
            partition: 0,
            current_leader_epoch: 6,
            leader_epoch: 5
        }
    );
    // A leader error: metadata again, still validating.
    c.handle_validation(&epoch_answer(0, BrokerErrorKind::FencedLeaderEpoch, -1, -1));
    assert!(c.needs_metadata());
    assert_eq!(c.validation_requests().len(), 1);
    c.handle_validation(&epoch_answer(0, BrokerErrorKind::None, 5, 10));
    assert!(c.take_error().is_none());
    assert!(c.validation_requests().is_empty());
    assert_eq!(c.fetch_nodes(), [2, 3]);
    assert_eq!(c.position(&tp(0)), Some(10));
}

/// The new leader's epoch 5 ends at 7 < 10: records 7..10 were truncated. With a reset
/// policy the position moves back to 7 (not to earliest); under `none` it is a typed error
/// naming partition, fetch offset and truncation offset, and the partition is not fetched
/// until the caller seeks.
#[test]
fn a_truncated_log_moves_the_position_back_or_is_a_typed_error() {
    let mut c = consumed_to_10(OffsetReset::Earliest);
    c.update_metadata(&metadata(&[(3, 6), (2, 7)]));
    c.handle_validation(&epoch_answer(0, BrokerErrorKind::None, 5, 7));
    assert!(c.take_error().is_none());
    assert_eq!(c.position(&tp(0)), Some(7), "back to the divergence");
    let fp = c.fetch_request(3, 18, 0).topics[0].partitions[0];
    assert_eq!((fp.fetch_offset, fp.last_fetched_epoch), (7, 5));

    let mut c = consumed_to_10(OffsetReset::None);
    c.update_metadata(&metadata(&[(3, 6), (2, 7)]));
    c.handle_validation(&epoch_answer(0, BrokerErrorKind::None, 5, 7));
    let e = c.take_error().expect("truncation reported");
    assert!(
        e.to_string().contains("log truncation detected for t-0"),
        "{e}"
    );
    assert!(matches!(
        e,
        Error::Consumer(ConsumerError::LogTruncation {
            ref partition,
            fetch_offset: 10,
            truncation_offset: Some(7)
        }) if *partition == tp(0)
    ));
    assert_eq!(c.position(&tp(0)), Some(10), "the position stays");
    assert!(!c.fetch_nodes().contains(&3), "not fetched until a seek");
    assert_eq!(
        c.validation_requests().len(),
        1,
        "asked again by the next poll"
    );
    // An epoch the leader does not know: no valid position; under none an error without an
    // offset, under earliest a reset by the policy.
    c.handle_validation(&epoch_answer(0, BrokerErrorKind::None, -1, -1));
    assert!(matches!(
        c.take_error(),
        Some(Error::Consumer(ConsumerError::LogTruncation {
            truncation_offset: None,
            ..
        }))
    ));
    c.seek(&tp(0), 7).unwrap();
    assert_eq!(c.fetch_nodes(), [2, 3], "a seek ends the validation");

    let mut c = consumed_to_10(OffsetReset::Earliest);
    c.update_metadata(&metadata(&[(3, 6), (2, 7)]));
    c.handle_validation(&epoch_answer(0, BrokerErrorKind::None, -1, -1));
    assert_eq!(c.position(&tp(0)), None, "reset by the policy");
    assert_eq!(
        c.reset_requests().unwrap()[0].1.topics[0].partitions[0].timestamp,
        EARLIEST_TIMESTAMP
    );
}

/// A Fetch answer's diverging epoch (Fetch v12+, the broker compared our last fetched
/// epoch): the same decision without an OffsetForLeaderEpoch round trip; FENCED_LEADER_EPOCH
/// asks for a validation.
#[test]
fn a_diverging_epoch_in_a_fetch_answer_is_a_truncation() {
    let mut c = consumed_to_10(OffsetReset::Latest);
    let mut resp = answer(0, epoch_batch(10, 2, 6), BrokerErrorKind::None);
    resp.responses[0].partitions[0].diverging_epoch = FetchEpochEnd {
        epoch: 5,
        end_offset: 8,
    };
    assert!(
        c.handle_fetch(resp).is_empty(),
        "no record from a diverged log"
    );
    assert_eq!(c.position(&tp(0)), Some(8));
    assert_eq!(
        c.fetch_request(1, 18, 0).topics[0].partitions[0].last_fetched_epoch,
        5
    );

    let mut c = consumed_to_10(OffsetReset::None);
    let mut resp = answer(0, Vec::new(), BrokerErrorKind::None);
    resp.responses[0].partitions[0].diverging_epoch = FetchEpochEnd {
        epoch: 5,
        end_offset: 8,
    };
    c.handle_fetch(resp);
    assert!(matches!(
        c.take_error(),
        Some(Error::Consumer(ConsumerError::LogTruncation {
            fetch_offset: 10,
            truncation_offset: Some(8),
            ..
        }))
    ));

    let mut c = consumed_to_10(OffsetReset::Earliest);
    c.handle_fetch(answer(0, Vec::new(), BrokerErrorKind::FencedLeaderEpoch));
    assert!(c.needs_metadata());
    assert_eq!(c.validation_requests().len(), 1);
    assert_eq!(c.position(&tp(0)), Some(10));
}

/// Issue 25: a position reset by ListOffsets takes its leader epoch from the answer (as
/// Java's consumer does), so the first Fetch already sends it and a leader change before the
/// first record is validated; it was unknown until the first record.
#[test]
fn a_reset_position_carries_the_list_offsets_leader_epoch() {
    let mut c = core(OffsetReset::Earliest, IsolationLevel::ReadUncommitted);
    assert_eq!(c.reset_requests().unwrap().len(), 2);
    c.handle_list_offsets(&ListOffsetsResponse {
        topics: vec![ListOffsetsTopicResponse {
            name: "t".into(),
            partitions: vec![
                ListOffsetsPartitionResponse {
                    partition_index: 0,
                    offset: 4,
                    leader_epoch: 5,
                    ..Default::default()
                },
                ListOffsetsPartitionResponse {
                    partition_index: 1,
                    offset: 0,
                    leader_epoch: -1,
                    ..Default::default()
                },
            ],
        }],
        ..Default::default()
    });
    let req = c.fetch_request(1, 13, 0);
    assert_eq!(req.topics[0].partitions[0].last_fetched_epoch, 5);
    let req = c.fetch_request(2, 13, 0);
    assert_eq!(
        req.topics[0].partitions[0].last_fetched_epoch, -1,
        "no epoch in the answer (ListOffsets < v4): unknown"
    );
    c.update_metadata(&metadata(&[(3, 6), (2, 7)]));
    let reqs = c.validation_requests();
    assert_eq!(
        reqs.len(),
        1,
        "the reset position is validated after a leader change"
    );
    assert_eq!(reqs[0].1.topics[0].partitions[0].leader_epoch, 5);
}

/// The records of partition 0 in `records` fetched at position `from` (for the shared
/// record tests).
pub(super) fn partition_records(records: Vec<u8>, from: i64) -> PartitionRecords {
    let mut c = core(OffsetReset::Earliest, IsolationLevel::ReadUncommitted);
    c.seek(&tp(0), from).unwrap();
    let mut parts = c.handle_fetch(answer(0, records, BrokerErrorKind::None));
    assert_eq!(parts.len(), 1);
    parts.remove(0)
}
