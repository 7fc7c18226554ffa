//! The fetcher (`consumer::Fetcher`) against an in-process mock cluster
//! (tests/support/mock_fetch_cluster.rs), for answers a real broker does not give on demand:
//!
//! * issue 21 item 3: a poll whose Fetch to one leader fails for good after another leader's
//!   records arrived returns those records, and the error on the next poll (it dropped them
//!   while their position had moved: a silent gap);
//! * issue 21 item 7: a partition whose answer holds bytes but no complete batch is an error
//!   naming partition, offset and sizes (it was fetched again forever);
//! * issue 21 item 2: an unclean leader election (KIP-320) played by the mock: a truncation
//!   under the position is detected with OffsetForLeaderEpoch and reported or repaired.

#[path = "support/mock_fetch_cluster.rs"]
mod mock_fetch_cluster;

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kafka_streams_group::consumer::{ConsumerError, Fetcher, FetcherConfig, OffsetReset};
use kafka_streams_group::protocol::api::fetch::{
    FetchRequest, FetchResponse, FetchableTopicResponse, PartitionData,
};
use kafka_streams_group::protocol::api::offset_for_leader_epoch::{
    EpochEndOffset, OffsetForLeaderEpochResponse, OffsetForLeaderTopicResult,
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

/// `n` records from `base` written under leader epoch `epoch`, values "<tag><offset>".
fn epoch_batch(base: i64, n: i64, epoch: i32, tag: &str) -> Vec<u8> {
    let mut b = BatchBuilder::new(Compression::None)
        .base_offset(base)
        .partition_leader_epoch(epoch);
    for o in base..base + n {
        b.push(&RecordSpec::new(
            None,
            Some(format!("{tag}{o}").as_bytes()),
            1,
        ))
        .expect("push");
    }
    let mut out = Vec::new();
    b.finish(&mut out).expect("finish");
    out
}

/// What the mock saw of the KIP-320 exchange.
#[derive(Default)]
struct Seen {
    /// (node, fetch offset, current leader epoch, last fetched epoch) of every Fetch.
    fetches: Vec<(i32, i64, i32, i32)>,
    /// (node, current leader epoch, epoch asked) of every OffsetForLeaderEpoch partition.
    epochs: Vec<(i32, i32, i32)>,
}

/// An unclean leader election, played by the mock: node 1 leads partition 0 at epoch 3 and
/// serves "old0".."old5"; then node 2 leads at epoch 4 with a log that holds epoch 3 only up
/// to offset 4 and "new4".. after it (records 4 and 5 the fetcher returned are gone).
fn unclean_election(reset: OffsetReset) -> (MockFetchCluster, Fetcher, Arc<Mutex<Seen>>) {
    let mock = MockFetchCluster::start(2, &[(1, 3)]);
    let seen = Arc::new(Mutex::new(Seen::default()));
    let moved = Arc::new(AtomicBool::new(false));
    let (s, m) = (seen.clone(), moved.clone());
    mock.on_fetch(move |node, req| {
        let p = &req.topics[0].partitions[0];
        s.lock().unwrap().fetches.push((
            node,
            p.fetch_offset,
            p.current_leader_epoch,
            p.last_fetched_epoch,
        ));
        let mut resp = answer(req, 6, |_, from| match node {
            1 if from < 6 => epoch_batch(from, 6 - from, 3, "old"),
            2 if from < 8 => epoch_batch(from, 8 - from, 4, "new"),
            _ => Vec::new(),
        });
        if node == 1 && m.load(Ordering::SeqCst) {
            resp.responses[0].partitions[0].records = None;
            resp.responses[0].partitions[0].error_code = 6; // NOT_LEADER_OR_FOLLOWER
        }
        resp
    });
    let s = seen.clone();
    mock.on_epochs(move |node, req| {
        let t = &req.topics[0];
        let p = t.partitions[0];
        s.lock()
            .unwrap()
            .epochs
            .push((node, p.current_leader_epoch, p.leader_epoch));
        OffsetForLeaderEpochResponse {
            topics: vec![OffsetForLeaderTopicResult {
                topic: t.topic.clone(),
                partitions: vec![EpochEndOffset {
                    error_code: 0,
                    partition: p.partition,
                    leader_epoch: 3,
                    end_offset: 4,
                }],
            }],
            ..Default::default()
        }
    });
    let config = FetcherConfig::new(
        ClientConfig::new(mock.bootstrap())
            .client_id("fetcher-mock-unclean")
            .request_timeout(Duration::from_secs(5))
            .retry_backoff(Duration::from_millis(20), Duration::from_millis(200)),
    )
    .auto_offset_reset(reset)
    .fetch_max_wait(Duration::from_millis(50));
    common::init_logging();
    let mut f = Fetcher::connect(config, Duration::from_secs(5)).expect("connect");
    f.assign([tp(0)]);
    f.seek(&tp(0), 0).expect("seek");
    let mut got = Vec::new();
    let until = Instant::now() + Duration::from_secs(10);
    while got.len() < 6 && Instant::now() < until {
        got.extend(values(
            &f.poll(Instant::now() + Duration::from_millis(300))
                .expect("poll"),
        ));
    }
    assert_eq!(got, (0..6).map(|o| format!("old{o}")).collect::<Vec<_>>());
    assert_eq!(f.position(&tp(0)), Some(6));
    mock.set_leaders(&[(2, 4)]);
    moved.store(true, Ordering::SeqCst);
    (mock, f, seen)
}

/// Values of the records of every part.
fn values(parts: &[kafka_streams_group::consumer::PartitionRecords]) -> Vec<String> {
    let mut out = Vec::new();
    for p in parts {
        p.for_each_record(|r| {
            out.push(String::from_utf8_lossy(r.value.unwrap_or_default()).into_owned())
        })
        .expect("decode");
    }
    out
}

/// Item 2 (KIP-320), `auto.offset.reset=none`: after the leader change the fetcher asks the
/// new leader where epoch 3 ends (4), finds its position 6 truncated and fails with
/// `ConsumerError::LogTruncation` { t-0, fetch offset 6, truncation offset 4 }, fetching
/// nothing from the new log until the caller seeks. (Before, every Fetch carried epoch -1,
/// no OffsetForLeaderEpoch was sent and "new6", "new7" were read over the lost records.)
#[test]
fn an_unclean_election_is_a_log_truncation_error_under_reset_none() {
    let (mock, mut f, seen) = unclean_election(OffsetReset::None);
    let until = Instant::now() + Duration::from_secs(10);
    let e = loop {
        match f.poll(Instant::now() + Duration::from_millis(300)) {
            Ok(parts) => assert!(
                parts.is_empty(),
                "read over the truncation: {:?}",
                values(&parts)
            ),
            Err(e) => break e,
        }
        assert!(Instant::now() < until, "no truncation detected");
    };
    eprintln!("{e}");
    assert!(
        matches!(
            &e,
            Error::Consumer(ConsumerError::LogTruncation {
                partition,
                fetch_offset: 6,
                truncation_offset: Some(4),
            }) if *partition == tp(0)
        ),
        "{e:?}"
    );
    assert_eq!(f.position(&tp(0)), Some(6));
    {
        let seen = seen.lock().unwrap();
        let first = seen.fetches[0];
        assert_eq!(first, (1, 0, 3, -1), "after a seek the epoch is unknown");
        let later: Vec<_> = seen
            .fetches
            .iter()
            .filter(|f| f.0 == 1 && f.1 > 0)
            .collect();
        assert!(
            !later.is_empty() && later.iter().all(|f| (f.2, f.3) == (3, 3)),
            "Fetches past offset 0 carry the current epoch and the last fetched epoch 3: {:?}",
            seen.fetches
        );
        assert_eq!(seen.epochs.first(), Some(&(2, 4, 3)), "{:?}", seen.epochs);
        assert!(
            !seen.fetches.iter().any(|&(n, ..)| n == 2),
            "nothing fetched from the new leader before the caller seeks"
        );
    }
    // The caller seeks to the truncation offset: the new history from there.
    f.seek(&tp(0), 4).expect("seek");
    let mut got = Vec::new();
    while got.len() < 4 && Instant::now() < until {
        got.extend(values(
            &f.poll(Instant::now() + Duration::from_millis(300))
                .expect("poll"),
        ));
    }
    assert_eq!(got, ["new4", "new5", "new6", "new7"]);
    drop(mock);
}

/// Item 2 with `auto.offset.reset=earliest`: as Java's consumer, the position moves back to
/// the first offset known to diverge (4), not to the log start, and the new history is read
/// from there without an error.
#[test]
fn an_unclean_election_moves_the_position_back_to_the_divergence_under_a_reset_policy() {
    let (_mock, mut f, seen) = unclean_election(OffsetReset::Earliest);
    let mut got = Vec::new();
    let until = Instant::now() + Duration::from_secs(10);
    while got.len() < 4 && Instant::now() < until {
        got.extend(values(
            &f.poll(Instant::now() + Duration::from_millis(300))
                .expect("poll"),
        ));
    }
    assert_eq!(got, ["new4", "new5", "new6", "new7"]);
    assert_eq!(f.position(&tp(0)), Some(8));
    let seen = seen.lock().unwrap();
    assert_eq!(seen.epochs.first(), Some(&(2, 4, 3)), "{:?}", seen.epochs);
    let first_new = seen.fetches.iter().find(|f| f.0 == 2).copied();
    assert_eq!(
        first_new,
        Some((2, 4, 4, 3)),
        "fetch from 4 at leader epoch 4, last epoch 3"
    );
}

/// A fetcher on `mock` with `client` applied to its client settings (reset `none`, 50 ms
/// fetch wait).
fn fetcher_with(
    mock: &MockFetchCluster,
    client: impl FnOnce(ClientConfig) -> ClientConfig,
) -> Fetcher {
    common::init_logging();
    let config = FetcherConfig::new(client(
        ClientConfig::new(mock.bootstrap())
            .client_id("fetcher-mock")
            .request_timeout(Duration::from_secs(5))
            .retry_backoff(Duration::from_millis(20), Duration::from_millis(200)),
    ))
    .auto_offset_reset(OffsetReset::None)
    .fetch_max_wait(Duration::from_millis(50));
    Fetcher::connect(config, Duration::from_secs(5)).expect("connect")
}

/// Every partition asked has 3 records from its fetch offset on.
fn always_three(_: i32, req: &FetchRequest) -> FetchResponse {
    answer(req, 1_000_000, |_, from| batch(from, 3))
}

/// Issue 25: Fetches to different leaders are in flight at the same time. Partition 0 is
/// led by node 1, partition 1 by node 2, and each node holds its answer `D`: a poll over
/// both takes about `D`, not `2 D` (one leader after the other, as before).
#[test]
fn fetches_to_two_leaders_are_in_flight_together() {
    const D: Duration = Duration::from_millis(400);
    let mock = MockFetchCluster::start(2, &[(1, 0), (2, 0)]);
    mock.on_fetch(always_three);
    let mut f = fetcher(&mock, 1 << 20);
    f.assign([tp(0), tp(1)]);
    f.seek(&tp(0), 0).expect("seek");
    f.seek(&tp(1), 0).expect("seek");
    // Warm up: metadata and both connections.
    let mut warm = Vec::new();
    let until = Instant::now() + Duration::from_secs(5);
    while warm
        .iter()
        .map(|(p, _)| *p)
        .collect::<std::collections::BTreeSet<_>>()
        .len()
        < 2
        && Instant::now() < until
    {
        warm.extend(offsets(
            &f.poll(Instant::now() + Duration::from_secs(2))
                .expect("poll"),
        ));
    }
    mock.delay_fetch(1, D);
    mock.delay_fetch(2, D);
    let start = Instant::now();
    let parts = f
        .poll(Instant::now() + Duration::from_secs(5))
        .expect("poll");
    let took = start.elapsed();
    let partitions: Vec<i32> = parts
        .iter()
        .map(|p| p.topic_partition().partition)
        .collect();
    eprintln!("poll over two leaders holding {D:?} each: {took:?}, partitions {partitions:?}");
    assert_eq!(
        partitions.len(),
        2,
        "both leaders' records in one poll: {partitions:?}"
    );
    assert!(
        took < D.mul_f64(1.6),
        "a poll over two leaders took {took:?}; each holds its answer {D:?}, so in flight \
         together it takes about {D:?} (one after the other: {:?})",
        D * 2
    );
    // The second leader's exchanges run on pooled worker threads, not one new thread per
    // poll: 50 more polls leave no more workers than exchanges ever ran at once in this
    // test binary (one per test at most).
    mock.delay_fetch(1, Duration::ZERO);
    mock.delay_fetch(2, Duration::ZERO);
    for _ in 0..50 {
        f.poll(Instant::now() + Duration::from_secs(2))
            .expect("poll");
    }
    if let Some(workers) = worker_threads() {
        eprintln!("ksg-send worker threads after 50 polls: {workers}");
        assert!(workers <= 8, "{workers} worker threads after 50 polls");
    }
}

/// The process's threads named `ksg-send` (Linux; `None` elsewhere).
fn worker_threads() -> Option<usize> {
    let tasks = std::fs::read_dir("/proc/self/task").ok()?;
    Some(
        tasks
            .filter_map(Result::ok)
            .filter_map(|t| std::fs::read_to_string(t.path().join("comm")).ok())
            .filter(|name| name.trim() == "ksg-send")
            .count(),
    )
}

/// Issue 25 (issue 21 follow-up): a leader in reconnect backoff does not delay the healthy
/// ones. Partition 0 is led by node 1 (answers at once), partition 1 by node 3, which the
/// metadata advertises where nothing listens. After the first refused connection node 3 is
/// in a ~1 s backoff; every later poll still returns node 1's records at once (it waited for
/// node 3's backoff before: up to 1 s per poll).
#[test]
fn a_leader_in_reconnect_backoff_does_not_delay_the_others() {
    let mock = MockFetchCluster::start(1, &[(1, 0), (3, 0)]);
    mock.add_dead_node(3);
    mock.on_fetch(always_three);
    let mut f = fetcher_with(&mock, |c| {
        c.reconnect_backoff(Duration::from_secs(1), Duration::from_secs(1))
    });
    f.assign([tp(0), tp(1)]);
    f.seek(&tp(0), 0).expect("seek");
    f.seek(&tp(1), 0).expect("seek");
    let first = f
        .poll(Instant::now() + Duration::from_secs(5))
        .expect("poll");
    assert_eq!(offsets(&first).first(), Some(&(0, 0)), "node 1's records");
    let mut slowest = Duration::ZERO;
    for _ in 0..3 {
        let start = Instant::now();
        let parts = f
            .poll(Instant::now() + Duration::from_secs(5))
            .expect("poll");
        slowest = slowest.max(start.elapsed());
        assert!(
            parts.iter().all(|p| p.topic_partition().partition == 0) && !parts.is_empty(),
            "node 1's records only"
        );
    }
    eprintln!("slowest poll while node 3 is in backoff: {slowest:?}");
    assert!(
        slowest < Duration::from_millis(400),
        "a poll took {slowest:?} while the other leader was in its ~1 s reconnect backoff"
    );
    assert_eq!(f.position(&tp(1)), Some(0), "nothing of partition 1");
}

/// Issue 25: the partition order of Fetch requests rotates as Java's does (a partition whose
/// records were returned moves to the end). The mock plays a broker whose `fetch.max.bytes`
/// the first partition of each request fills: it answers records for that partition only.
/// Three polls over three partitions of one leader give each partition its records (before,
/// partition 0 was always listed first and the others starved).
#[test]
fn the_partition_order_rotates_so_no_partition_starves() {
    let mock = MockFetchCluster::start(1, &[(1, 0), (1, 0), (1, 0)]);
    let firsts = Arc::new(Mutex::new(Vec::new()));
    let seen = firsts.clone();
    mock.on_fetch(move |_, req| {
        let first = req.topics.first().and_then(|t| t.partitions.first());
        let first = first.map_or(-1, |p| p.partition);
        seen.lock().expect("lock").push(first);
        answer(req, 1_000_000, |p, from| {
            if p == first {
                batch(from, 3)
            } else {
                Vec::new()
            }
        })
    });
    let mut f = fetcher(&mock, 1 << 20);
    f.assign([tp(0), tp(1), tp(2)]);
    for p in 0..3 {
        f.seek(&tp(p), 0).expect("seek");
    }
    let mut got = std::collections::BTreeSet::new();
    for _ in 0..3 {
        let parts = f
            .poll(Instant::now() + Duration::from_secs(2))
            .expect("poll");
        got.extend(parts.iter().map(|p| p.topic_partition().partition));
    }
    eprintln!(
        "first partition of each Fetch: {:?}",
        firsts.lock().expect("lock")
    );
    assert_eq!(
        got.into_iter().collect::<Vec<_>>(),
        vec![0, 1, 2],
        "every partition got records within three polls"
    );
}

/// Issue 25: the first Fetch round without a wait is only for several leaders (so that one
/// idle leader's wait does not hold another's records); one leader alone answers as soon as
/// it has data, so an idle poll over it sends only Fetches with the wait (no extra round
/// trip per poll).
#[test]
fn one_leader_alone_is_asked_with_the_wait_at_once() {
    let mock = MockFetchCluster::start(1, &[(1, 0)]);
    let waits = Arc::new(Mutex::new(Vec::new()));
    let seen = waits.clone();
    mock.on_fetch(move |_, req| {
        seen.lock().expect("lock").push(req.max_wait_ms);
        answer(req, 0, |_, _| Vec::new())
    });
    let mut f = fetcher(&mock, 1 << 20);
    f.assign([tp(0)]);
    f.seek(&tp(0), 0).expect("seek");
    let parts = f
        .poll(Instant::now() + Duration::from_millis(300))
        .expect("poll");
    assert!(parts.is_empty());
    let waits = waits.lock().expect("lock").clone();
    // (The mock answers an empty Fetch at once instead of waiting, so there are many.)
    let zero = waits.iter().filter(|&&w| w == 0).count();
    eprintln!("{} Fetches, {zero} without a wait", waits.len());
    assert!(!waits.is_empty());
    assert!(
        zero == 0,
        "an idle poll over one leader sent {zero} Fetch(es) without a wait"
    );
}
