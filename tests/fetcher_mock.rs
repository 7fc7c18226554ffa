//! The fetcher (`consumer::Fetcher`) against an in-process mock cluster
//! (tests/support/mock_fetch_cluster.rs), for answers a real broker does not give on demand:
//!
//! * issue 21 item 3: a poll whose Fetch to one leader fails for good after another leader's
//!   records arrived returns those records, and the error on the next poll (it dropped them
//!   while their position had moved: a silent gap);
//! * issue 21 item 7: a partition whose answer holds bytes but no complete batch is an error
//!   naming partition, offset and sizes (it was fetched again forever).

#[path = "support/mock_fetch_cluster.rs"]
mod mock_fetch_cluster;

mod common;

use std::time::{Duration, Instant};

use kafka_streams_group::consumer::{Fetcher, FetcherConfig, OffsetReset};
use kafka_streams_group::protocol::api::fetch::{
    FetchRequest, FetchResponse, FetchableTopicResponse, PartitionData,
};
use kafka_streams_group::protocol::records::{BatchBuilder, Compression, RecordSpec};
use kafka_streams_group::streams::commit::TopicPartition;
use kafka_streams_group::{ClientConfig, Error};
use mock_fetch_cluster::{MockFetchCluster, TOPIC_ID};

fn tp(p: i32) -> TopicPartition {
    TopicPartition::new("t", p)
}

fn fetcher(mock: &MockFetchCluster, max_partition_bytes: i32) -> Fetcher {
    common::init_logging();
    let config = FetcherConfig::new(
        ClientConfig::new(mock.bootstrap())
            .client_id("fetcher-mock")
            .request_timeout(Duration::from_secs(5))
            .retry_backoff(Duration::from_millis(20), Duration::from_millis(200)),
    )
    .auto_offset_reset(OffsetReset::None)
    .max_partition_fetch_bytes(max_partition_bytes)
    .fetch_max_wait(Duration::from_millis(50));
    Fetcher::connect(config, Duration::from_secs(5)).expect("connect")
}

/// A batch of `n` records from `base`, values "v<offset>".
fn batch(base: i64, n: i64) -> Vec<u8> {
    let mut b = BatchBuilder::new(Compression::None).base_offset(base);
    for o in base..base + n {
        b.push(&RecordSpec::new(None, Some(format!("v{o}").as_bytes()), 1))
            .expect("push");
    }
    let mut out = Vec::new();
    b.finish(&mut out).expect("finish");
    out
}

/// An answer with `records` for every partition the request asked, high watermark `hw`.
fn answer(req: &FetchRequest, hw: i64, records: impl Fn(i32, i64) -> Vec<u8>) -> FetchResponse {
    FetchResponse {
        responses: req
            .topics
            .iter()
            .map(|t| FetchableTopicResponse {
                topic: t.topic.clone(),
                topic_id: t.topic_id,
                partitions: t
                    .partitions
                    .iter()
                    .map(|p| PartitionData {
                        partition_index: p.partition,
                        high_watermark: hw,
                        last_stable_offset: hw,
                        records: Some(records(p.partition, p.fetch_offset)),
                        ..PartitionData::default()
                    })
                    .collect(),
            })
            .collect(),
        ..FetchResponse::default()
    }
}

/// Offsets of the records of every part.
fn offsets(parts: &[kafka_streams_group::consumer::PartitionRecords]) -> Vec<(i32, i64)> {
    let mut out = Vec::new();
    for p in parts {
        let partition = p.topic_partition().partition;
        p.for_each_record(|r| out.push((partition, r.offset)))
            .expect("decode");
    }
    out
}

/// Item 3. Partition 0 is led by node 1, which answers records; partition 1 by node 2,
/// which cannot be sent a Fetch at all (it does not advertise the API: a non-retriable
/// error). The first poll returns node 1's records; the next poll returns the error; no
/// record of partition 0 is lost. (Before the fix the first poll returned the error and
/// dropped the records while position 0 had already moved to 3.)
#[test]
fn records_fetched_before_a_fatal_error_are_returned_and_the_error_follows() {
    let mock = MockFetchCluster::start(2, &[(1, 0), (2, 0)]);
    assert_eq!(TOPIC_ID, mock_fetch_cluster::TOPIC_ID);
    mock.without_fetch(2);
    mock.on_fetch(|_, req| {
        answer(
            req,
            6,
            |_, from| {
                if from < 6 {
                    batch(from, 3)
                } else {
                    Vec::new()
                }
            },
        )
    });
    let mut f = fetcher(&mock, 1 << 20);
    f.assign([tp(0), tp(1)]);
    f.seek(&tp(0), 0).expect("seek");
    f.seek(&tp(1), 0).expect("seek");
    let mut got = Vec::new();
    let mut errors = Vec::new();
    let until = Instant::now() + Duration::from_secs(10);
    while got.len() < 6 && Instant::now() < until {
        match f.poll(Instant::now() + Duration::from_millis(500)) {
            Ok(parts) => got.extend(offsets(&parts)),
            Err(e) => errors.push(e.to_string()),
        }
    }
    eprintln!("got {got:?}; errors {errors:?}");
    assert_eq!(
        got,
        (0..6).map(|o| (0, o)).collect::<Vec<_>>(),
        "every record of partition 0 once, in order"
    );
    assert!(!errors.is_empty(), "node 2's failure is reported");
    assert!(
        errors.iter().all(|e| e.contains("Fetch")),
        "the error names the API: {errors:?}"
    );
    assert_eq!(f.position(&tp(0)), Some(6));
}

/// Item 7. Partition 0's answer holds 20 bytes of a batch but no complete batch, as the
/// first (and only) partition with data, so not a cut by `fetch.max.bytes`: the poll fails
/// naming the partition, the offset, the bytes and `max.partition.fetch.bytes`, instead of
/// fetching the same bytes again forever.
#[test]
fn bytes_without_a_complete_batch_are_an_error_naming_partition_offset_and_sizes() {
    let mock = MockFetchCluster::start(1, &[(1, 0)]);
    mock.on_fetch(|_, req| answer(req, 10, |_, from| batch(from, 5)[..20].to_vec()));
    let mut f = fetcher(&mock, 4096);
    f.assign([tp(0)]);
    f.seek(&tp(0), 4).expect("seek");
    let started = Instant::now();
    let e = loop {
        match f.poll(Instant::now() + Duration::from_millis(500)) {
            Ok(parts) => assert!(parts.is_empty(), "no record can be delivered"),
            Err(e) => break e,
        }
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "no error: the partition is fetched again and again ({} Fetch requests)",
            mock.count(<FetchRequest as kafka_streams_group::protocol::ApiMessage>::API_KEY)
        );
    };
    let text = e.to_string();
    eprintln!("{text}");
    assert!(!e.is_retriable(), "{e:?}");
    for part in [
        "t-0",
        "offset 4",
        "20 bytes",
        "max.partition.fetch.bytes",
        "4096",
    ] {
        assert!(text.contains(part), "{part:?} missing in: {text}");
    }
    assert!(
        matches!(e, Error::Protocol { .. } | Error::Consumer(_)),
        "{e:?}"
    );
    assert_eq!(f.position(&tp(0)), Some(4), "the position stays");
}
