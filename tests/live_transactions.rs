//! The transactional producer against a real broker (issue 24): committed records are
//! visible to a `read_committed` fetcher and aborted ones are not; a second producer with the
//! same `transactional.id` fences the first; offsets sent in a transaction become visible
//! (OffsetFetch) only when it commits. Each scenario runs under the transaction version the
//! broker finalised by default (4.4.0 and 4.2.2: 2) and again under version 1 after a
//! `kafka-features downgrade --feature transaction.version=1` (restored afterwards).
//!
//! Run: `KSG_CLUSTER_ENV=.kafka/run/cluster.env cargo test --test live_transactions -- --ignored`.

mod common;

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::{create_topic, unique_name, Cluster, LIVE};
use kafka_streams_group::client::{BrokerTarget, Client, ClientOptions};
use kafka_streams_group::consumer::{Fetcher, FetcherConfig, IsolationLevel, OffsetReset};
use kafka_streams_group::producer::transaction::{GroupMetadata, TxnState, TxnVersion};
use kafka_streams_group::producer::{Producer, ProducerConfig, ProducerRecord};
use kafka_streams_group::protocol::api::offset_fetch::{
    OffsetFetchRequest, OffsetFetchRequestGroup, OffsetFetchRequestTopic,
};
use kafka_streams_group::streams::commit::TopicPartition as FetchTp;
use kafka_streams_group::{BrokerErrorKind, ClientConfig};

type Tp = kafka_streams_group::producer::accumulator::TopicPartition;

const PARTITIONS: i32 = 3;
const T: Duration = Duration::from_secs(30);

/// The scenarios change the cluster's transaction.version: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

fn producer(cluster: &Cluster, id: &str) -> Producer {
    let config = ProducerConfig::new(ClientConfig::new(cluster.plaintext()).client_id("ksg-txn"))
        .transactional_id(id)
        .linger(Duration::from_millis(5))
        .max_block(T);
    Producer::new(config).expect("producer")
}

/// Every record value of `topic` a fetcher with `isolation` reads from the start: at least
/// `want` records (the COMMIT markers are written after EndTxn answered, so committed
/// records reach `read_committed` readers a little later), then until 4 polls in a row
/// bring nothing more (or 30 s).
fn read_all(cluster: &Cluster, topic: &str, isolation: IsolationLevel, want: usize) -> Vec<String> {
    let config = FetcherConfig::new(ClientConfig::new(cluster.plaintext()))
        .auto_offset_reset(OffsetReset::Earliest)
        .isolation_level(isolation)
        .fetch_max_wait(Duration::from_millis(100));
    let mut f = Fetcher::connect(config, Duration::from_secs(10)).expect("fetcher");
    f.assign((0..PARTITIONS).map(|p| FetchTp::new(topic.to_string(), p)));
    let mut got = Vec::new();
    let until = Instant::now() + T;
    let mut quiet = 0;
    while (got.len() < want || quiet < 4) && Instant::now() < until {
        let parts = f
            .poll(Instant::now() + Duration::from_millis(300))
            .expect("poll");
        let before = got.len();
        for part in parts {
            part.for_each_record(|r| {
                got.push(String::from_utf8_lossy(r.value.unwrap_or_default()).to_string())
            })
            .expect("decode");
        }
        quiet = if got.len() == before { quiet + 1 } else { 0 };
    }
    got.sort();
    got
}

fn send_all(p: &mut Producer, topic: &str, prefix: &str, n: usize) {
    for i in 0..n {
        let v = format!("{prefix}-{i:02}");
        p.send(ProducerRecord::new(
            topic,
            Some(v.as_bytes()),
            Some(v.as_bytes()),
        ))
        .expect("send");
    }
}

fn names(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}-{i:02}")).collect()
}

/// Commit, abort, commit: `read_committed` sees exactly the committed records,
/// `read_uncommitted` all of them.
fn committed_visible_aborted_not(cluster: &Cluster, expect: TxnVersion) {
    let topic = unique_name("ksg-txn-visibility");
    create_topic(cluster, &topic, PARTITIONS);
    let mut p = producer(cluster, &unique_name("ksg-txn-vis"));
    p.init_transactions().expect("init_transactions");
    assert_eq!(p.transaction_version(), Some(expect));
    let first = p.identity().expect("a producer id");
    p.begin_transaction().unwrap();
    send_all(&mut p, &topic, "commit1", 10);
    p.commit_transaction().expect("commit");
    p.begin_transaction().unwrap();
    send_all(&mut p, &topic, "abort", 10);
    p.flush(Instant::now() + T)
        .expect("the aborted records were written");
    p.abort_transaction().expect("abort");
    p.begin_transaction().unwrap();
    send_all(&mut p, &topic, "commit2", 5);
    p.commit_transaction().expect("commit");
    assert_eq!(p.transaction_state(), Some(TxnState::Ready));
    let last = p.identity().unwrap();
    eprintln!("{expect:?}: producer id/epoch {first:?} -> {last:?}");
    assert_eq!(last.producer_id, first.producer_id);
    match expect {
        // KIP-890: every EndTxn bumps the epoch (three transactions).
        TxnVersion::V2 => assert_eq!(last.producer_epoch, first.producer_epoch + 3),
        TxnVersion::V1 => assert_eq!(last.producer_epoch, first.producer_epoch),
    }
    let mut want = names("commit1", 10);
    want.extend(names("commit2", 5));
    want.sort();
    assert_eq!(
        read_all(cluster, &topic, IsolationLevel::ReadCommitted, want.len()),
        want
    );
    let mut all = want.clone();
    all.extend(names("abort", 10));
    all.sort();
    assert_eq!(
        read_all(cluster, &topic, IsolationLevel::ReadUncommitted, all.len()),
        all,
        "read_uncommitted sees the aborted records too"
    );
}

/// A second producer with the same transactional.id fences the first: its open
/// transaction is aborted and its next call fails as fenced.
fn second_producer_fences_the_first(cluster: &Cluster, expect: TxnVersion) {
    let topic = unique_name("ksg-txn-fence");
    create_topic(cluster, &topic, PARTITIONS);
    let id = unique_name("ksg-txn-fence");
    let mut old = producer(cluster, &id);
    old.init_transactions().expect("init old");
    old.begin_transaction().unwrap();
    send_all(&mut old, &topic, "zombie", 6);
    old.flush(Instant::now() + T)
        .expect("written, not committed");
    let mut new = producer(cluster, &id);
    new.init_transactions()
        .expect("init new (fences the old one)");
    assert_eq!(new.transaction_version(), Some(expect));
    assert!(new.identity().unwrap().producer_epoch > old.identity().unwrap().producer_epoch);
    new.begin_transaction().unwrap();
    send_all(&mut new, &topic, "new", 4);
    let e = old
        .commit_transaction()
        .expect_err("the old producer is fenced");
    eprintln!("{expect:?}: old producer: {e}");
    assert!(e.is_fenced(), "{e:?}");
    assert_eq!(old.transaction_state(), Some(TxnState::FatalError));
    new.commit_transaction().expect("the new producer commits");
    assert_eq!(
        read_all(cluster, &topic, IsolationLevel::ReadCommitted, 4),
        names("new", 4),
        "nothing of the fenced producer is visible"
    );
}

/// The committed offset of `tp` in `group` as an admin sees it (-1: none). With
/// `stable`, as Java's consumers ask (KIP-447 `require_stable`): the coordinator answers
/// UNSTABLE_OFFSET_COMMIT while a transaction's offsets are pending, which includes the
/// moment after EndTxn answered and before the COMMIT marker reached `__consumer_offsets`
/// (the coordinator writes markers after it answers); that answer is asked again.
fn committed(cluster: &Cluster, group: &str, tp: &Tp, stable: bool) -> i64 {
    let deadline = Instant::now() + T;
    let mut client =
        Client::connect(ClientOptions::new([cluster.plaintext()]), deadline).expect("connect");
    let coordinator = client
        .find_coordinator(group, deadline)
        .expect("coordinator");
    let request = OffsetFetchRequest {
        groups: vec![OffsetFetchRequestGroup {
            group_id: group.to_string(),
            member_id: None,
            member_epoch: -1,
            topics: Some(vec![OffsetFetchRequestTopic {
                name: tp.topic.clone(),
                partition_indexes: vec![tp.partition],
                ..Default::default()
            }]),
        }],
        require_stable: stable,
        ..Default::default()
    };
    loop {
        let response = client
            .send_at(
                BrokerTarget::Node(coordinator.node_id),
                &request,
                9,
                deadline,
            )
            .expect("OffsetFetch");
        let g = &response.groups[0];
        let p = g.topics.first().and_then(|t| t.partitions.first());
        let unstable = BrokerErrorKind::UnstableOffsetCommit.code();
        if g.error_code == unstable || p.is_some_and(|p| p.error_code == unstable) {
            assert!(
                Instant::now() < deadline,
                "offsets stayed unstable: {response:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
            continue;
        }
        assert_eq!(g.error_code, 0, "{response:?}");
        return p.map_or(-1, |p| p.committed_offset);
    }
}

/// Offsets sent in a transaction: invisible while it is open, visible once it commits,
/// never if it aborts.
fn offsets_visible_only_on_commit(cluster: &Cluster, expect: TxnVersion) {
    let topic = unique_name("ksg-txn-offsets-out");
    create_topic(cluster, &topic, PARTITIONS);
    let group = unique_name("ksg-txn-group");
    // The group coordinator checks the partition exists (UNKNOWN_TOPIC_OR_PARTITION).
    let input = Tp::new(unique_name("ksg-txn-input"), 1);
    create_topic(cluster, &input.topic, PARTITIONS);
    let mut p = producer(cluster, &unique_name("ksg-txn-off"));
    p.init_transactions().expect("init");
    assert_eq!(p.transaction_version(), Some(expect));
    let meta = GroupMetadata::new(group.clone());
    p.begin_transaction().unwrap();
    send_all(&mut p, &topic, "out", 3);
    p.send_offsets_to_transaction(&BTreeMap::from([(input.clone(), 42)]), &meta)
        .expect("send_offsets_to_transaction");
    assert_eq!(
        committed(cluster, &group, &input, false),
        -1,
        "not before the commit"
    );
    p.commit_transaction().expect("commit");
    assert_eq!(
        committed(cluster, &group, &input, true),
        42,
        "visible after the commit"
    );
    p.begin_transaction().unwrap();
    p.send_offsets_to_transaction(&BTreeMap::from([(input.clone(), 50)]), &meta)
        .expect("send_offsets_to_transaction");
    p.abort_transaction().expect("abort");
    assert_eq!(
        committed(cluster, &group, &input, true),
        42,
        "an aborted commit leaves it"
    );
}

fn default_version(cluster: &Cluster) -> TxnVersion {
    // Apache Kafka 4.x formats new clusters with transaction.version=2.
    let _ = cluster;
    TxnVersion::V2
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn committed_records_are_visible_to_read_committed_and_aborted_ones_are_not() {
    let _ = LIVE;
    let _g = serial();
    common::init_logging();
    let cluster = Cluster::get();
    committed_visible_aborted_not(&cluster, default_version(&cluster));
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn a_second_producer_with_the_same_transactional_id_fences_the_first() {
    let _g = serial();
    common::init_logging();
    let cluster = Cluster::get();
    second_producer_fences_the_first(&cluster, default_version(&cluster));
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn offsets_sent_in_a_transaction_become_visible_only_on_commit() {
    let _g = serial();
    common::init_logging();
    let cluster = Cluster::get();
    offsets_visible_only_on_commit(&cluster, default_version(&cluster));
}

fn set_transaction_version(cluster: &Cluster, level: &str) {
    let verb = if level == "1" { "downgrade" } else { "upgrade" };
    let out = common::kafka_tool(
        cluster,
        "org.apache.kafka.tools.FeatureCommand",
        &[
            "--bootstrap-server",
            cluster.plaintext(),
            verb,
            "--feature",
            &format!("transaction.version={level}"),
        ],
    );
    eprintln!("{verb} transaction.version={level}: {}", out.trim());
}

/// Restores transaction.version=2 when the v1 test ends, panicking or not.
struct Restore<'a>(&'a Cluster);

impl Drop for Restore<'_> {
    fn drop(&mut self) {
        set_transaction_version(self.0, "2");
    }
}

/// The same three scenarios under transaction version 1 (AddPartitionsToTxn,
/// AddOffsetsToTxn, no epoch bump per transaction) after a feature downgrade.
#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn transaction_version_1_after_a_feature_downgrade() {
    let _g = serial();
    common::init_logging();
    let cluster = Cluster::get();
    set_transaction_version(&cluster, "1");
    let _restore = Restore(&cluster);
    // The finalised level reaches the brokers' ApiVersions through the metadata log.
    let until = Instant::now() + T;
    loop {
        let mut p = producer(&cluster, &unique_name("ksg-txn-probe"));
        p.init_transactions().expect("init");
        if p.transaction_version() == Some(TxnVersion::V1) {
            break;
        }
        assert!(Instant::now() < until, "transaction.version=1 never showed");
        std::thread::sleep(Duration::from_millis(200));
    }
    committed_visible_aborted_not(&cluster, TxnVersion::V1);
    second_producer_fences_the_first(&cluster, TxnVersion::V1);
    offsets_visible_only_on_commit(&cluster, TxnVersion::V1);
}
