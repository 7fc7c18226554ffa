//! State stores and changelogs against a real broker (issue 16): a store written here
//! restores here equal (and resumes, and a standby catches up); a changelog written here is
//! restored by Java Kafka Streams and a changelog written by Java is restored here, with the
//! counts and timestamps Java computed; DeleteRecords moves the log start and a store whose
//! changelog offset fell below it is rebuilt.
//!
//! Run: `KSG_CLUSTER_ENV=.kafka/run/cluster.env cargo test --test live_state -- --ignored`
//! (the Java test needs `scripts/streams-peer.sh build` first).

mod common;

use std::collections::BTreeMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::peer::{Peer, PeerOptions};
use common::{create_topic, unique_name, Cluster, LIVE};
use kafka_streams_group::admin::{create_topics, NewTopic};
use kafka_streams_group::client::{BrokerConnectOptions, BrokerConnection};
use kafka_streams_group::consumer::{Fetcher, FetcherConfig, IsolationLevel, OffsetReset};
use kafka_streams_group::processing::{
    changelog_topic, ChangelogReader, ChangelogRecord, KeyValueStore, LongSerde, RecordPurger,
    Serde, StoreFormat, StringSerde,
};
use kafka_streams_group::producer::{Producer, ProducerConfig, ProducerRecord};
use kafka_streams_group::protocol::api::delete_records::DeleteRecordsRequest;
use kafka_streams_group::protocol::records::partition_for_key;
use kafka_streams_group::protocol::BrokerErrorKind;
use kafka_streams_group::{ClientConfig, Error, TopicPartition};

fn deadline(secs: u64) -> Instant {
    Instant::now() + Duration::from_secs(secs)
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

fn client(cluster: &Cluster) -> ClientConfig {
    ClientConfig::new(cluster.plaintext()).client_id("ksg-live-state")
}

fn producer(cluster: &Cluster) -> Producer {
    Producer::new(ProducerConfig::new(client(cluster)).linger(Duration::from_millis(5)))
        .expect("producer")
}

fn reader(cluster: &Cluster) -> ChangelogReader {
    ChangelogReader::connect(client(cluster), Duration::from_secs(10)).expect("changelog reader")
}

/// Sends a store's changelog records to `tp` as the runtime does: explicit partition, the
/// record timestamp, no headers.
fn send_changelog(p: &mut Producer, tp: &TopicPartition, records: Vec<ChangelogRecord>) {
    for r in records {
        p.send(r.into_producer_record(tp))
            .expect("send changelog record");
    }
    p.flush(deadline(30)).expect("flush");
}

/// Every key with its value and timestamp.
fn contents(s: &KeyValueStore) -> Vec<(Vec<u8>, Vec<u8>, i64)> {
    s.iter()
        .map(|(k, _)| {
            let (v, ts) = s.get_with_timestamp(k).expect("listed key");
            (k.to_vec(), v.to_vec(), ts)
        })
        .collect()
}

/// The timestamp of the first update [`churn`] writes: an hour before this process started.
/// Not a fixed date: changelog records stamped older than retention.ms (7 days by default)
/// are deleted by the broker's next retention check, under the test.
fn churn_base() -> i64 {
    static BASE: std::sync::OnceLock<i64> = std::sync::OnceLock::new();
    *BASE.get_or_init(|| now_ms() - 3_600_000)
}

/// Writes `n` updates (puts, overwrites, deletes) into `s` starting at `from`.
fn churn(s: &mut KeyValueStore, from: usize, n: usize) {
    for i in from..from + n {
        let key = format!("k{}", (i * 7919) % 997);
        let ts = churn_base() + i as i64;
        if i % 11 == 0 {
            s.put(key.as_bytes(), None, ts);
        } else {
            s.put(key.as_bytes(), Some(&(i as i64).to_be_bytes()), ts);
        }
    }
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn a_store_written_here_restores_here_equal_resumes_and_a_standby_catches_up() {
    let _ = LIVE;
    common::init_logging();
    let cluster = Cluster::get();
    let app = unique_name("ksg-state");
    let topic = changelog_topic(&app, "s");
    create_topic(&cluster, &topic, 2);
    let mut p = producer(&cluster);
    let mut rd = reader(&cluster);

    for (partition, format) in [
        (0, StoreFormat::TimestampedKeyValue),
        (1, StoreFormat::KeyValue),
    ] {
        let tp = TopicPartition::new(&topic, partition);
        let mut written = KeyValueStore::new("s", format);
        churn(&mut written, 0, 5_000);
        send_changelog(&mut p, &tp, written.take_changelog());

        let mut restored = KeyValueStore::new("s", format);
        let sum = rd
            .restore(&tp, &mut restored, deadline(60))
            .expect("restore");
        assert_eq!(
            (sum.records, sum.start, sum.end),
            (5_000, 0, 5_000),
            "{format:?}"
        );
        assert_eq!(restored.changelog_offset(), Some(4_999));
        assert_eq!(contents(&restored), contents(&written), "{format:?}");
        assert!(
            restored.take_changelog().is_empty(),
            "restoring writes nothing back"
        );
        assert!(restored.len() > 900, "{}", restored.len());

        // A standby follows the same partition from the start.
        let mut standby = KeyValueStore::new("s", format);
        let mut applied = 0;
        let until = deadline(60);
        while standby.changelog_offset() != Some(4_999) {
            assert!(
                Instant::now() < until,
                "standby stuck at {:?}",
                standby.changelog_offset()
            );
            let mut stores = [(&tp, &mut standby)];
            applied += rd.catch_up(&mut stores, deadline(2)).expect("catch up");
        }
        assert_eq!(applied, 5_000);
        assert_eq!(contents(&standby), contents(&written));

        // More updates: a second restore resumes after the last offset applied, and the
        // standby picks them up from where it stood.
        churn(&mut written, 5_000, 1_000);
        send_changelog(&mut p, &tp, written.take_changelog());
        let sum = rd
            .restore(&tp, &mut restored, deadline(60))
            .expect("resume");
        assert_eq!((sum.records, sum.start, sum.end), (1_000, 5_000, 6_000));
        assert_eq!(contents(&restored), contents(&written), "{format:?}");
        let until = deadline(60);
        let mut applied = 0;
        while standby.changelog_offset() != Some(5_999) {
            assert!(
                Instant::now() < until,
                "standby stuck at {:?}",
                standby.changelog_offset()
            );
            let mut stores = [(&tp, &mut standby)];
            applied += rd.catch_up(&mut stores, deadline(2)).expect("catch up");
        }
        assert_eq!(applied, 1_000, "only the new records");
        assert_eq!(contents(&standby), contents(&written));

        // Restoring a store that is already at the end reads nothing.
        let sum = rd.restore(&tp, &mut restored, deadline(30)).expect("no-op");
        assert_eq!((sum.records, sum.start, sum.end), (0, 6_000, 6_000));
    }

    // An empty changelog partition restores to an empty store at once.
    let empty = TopicPartition::new(&topic, 0);
    let other = unique_name("ksg-state-empty");
    create_topic(&cluster, &other, 1);
    let mut s = KeyValueStore::new("e", StoreFormat::TimestampedKeyValue);
    let sum = rd
        .restore(&TopicPartition::new(&other, 0), &mut s, deadline(30))
        .expect("empty restore");
    assert_eq!((sum.records, sum.start, sum.end), (0, 0, 0));
    assert!(s.is_empty());
    // A deadline already past is a timeout naming the partition, not a hang.
    let mut late = KeyValueStore::new("s", StoreFormat::TimestampedKeyValue);
    let e = rd.restore(&empty, &mut late, Instant::now()).unwrap_err();
    assert!(matches!(e, Error::Timeout { .. }), "{e}");
    assert!(e.to_string().contains(&empty.to_string()), "{e}");
}

/// The input of the Java test: `(word, timestamp)`, skewed frequencies, unicode words.
fn input_words(n: usize, base_ts: i64) -> Vec<(String, i64)> {
    let vocab: Vec<String> = (0..150)
        .map(|i| match i % 5 {
            0 => format!("wörd{i}"),
            1 => format!("日本{i}"),
            2 => format!("καφές{i}"),
            3 => format!("emoji🦀{i}"),
            _ => format!("w{i}"),
        })
        .collect();
    (0..n)
        .map(|i| {
            let x = ((i * 7919) % 1000) as f64 / 1000.0;
            let idx = ((x * x * x) * vocab.len() as f64) as usize;
            (vocab[idx].clone(), base_ts + i as i64)
        })
        .collect()
}

/// Reads `topic` (String keys, Long values) until the last value of every word of `want`
/// equals it, or panics at `until` naming what differs.
fn await_counts(cluster: &Cluster, topic: &str, partitions: i32, want: &BTreeMap<String, i64>) {
    let config = FetcherConfig::new(client(cluster)).auto_offset_reset(OffsetReset::Earliest);
    let mut f = Fetcher::connect(config, Duration::from_secs(10)).expect("fetcher");
    f.assign((0..partitions).map(|p| TopicPartition::new(topic, p)));
    let mut last: BTreeMap<String, i64> = BTreeMap::new();
    let until = deadline(120);
    while &last != want {
        assert!(
            Instant::now() < until,
            "output {topic} never reached the expected counts: {} of {} words equal",
            want.iter().filter(|(w, c)| last.get(*w) == Some(c)).count(),
            want.len()
        );
        for part in f.poll(deadline(2)).expect("poll output") {
            part.for_each_record(|r| {
                let word = StringSerde.deserialize(r.key.unwrap_or_default()).unwrap();
                let count = LongSerde
                    .deserialize(r.value.unwrap_or_default())
                    .expect("Long count");
                last.insert(word, count);
            })
            .expect("decode output");
        }
    }
}

#[test]
#[ignore = "live: needs a Kafka broker and the Java peer (scripts/streams-peer.sh build)"]
fn java_restores_a_changelog_written_here_and_its_changelog_restores_here() {
    common::init_logging();
    let cluster = Cluster::get();
    const PARTITIONS: i32 = 2;
    let group = unique_name("ksg-state-java");
    let input = format!("{group}-in");
    let output = format!("{group}-out");
    let changelog = changelog_topic(&group, "counts");
    create_topic(&cluster, &input, PARTITIONS);
    create_topic(&cluster, &output, PARTITIONS);
    // The changelog exists before the group does, written here: what the Java store must
    // start from. Same configs as Kafka Streams asks for.
    create_topics(
        &client(&cluster),
        &[NewTopic::new(&changelog, PARTITIONS)
            .config("cleanup.policy", "compact")
            .config("message.timestamp.type", "CreateTime")],
        Duration::from_secs(30),
    )
    .expect("create changelog");

    let base_ts = now_ms() - 3_600_000;
    let words = input_words(3_000, base_ts);
    // Preloaded counts for a third of the vocabulary, in the store of the task owning the word
    // (task 1_p reads repartition partition p = murmur2(word) % partitions).
    let mut preload: BTreeMap<String, i64> = BTreeMap::new();
    for (w, _) in &words {
        if w.len() % 3 == 0 {
            preload.insert(w.clone(), 1_000 + w.len() as i64);
        }
    }
    let mut p = producer(&cluster);
    let mut stores: Vec<KeyValueStore> = (0..PARTITIONS)
        .map(|_| KeyValueStore::new("counts", StoreFormat::TimestampedKeyValue))
        .collect();
    for (w, c) in &preload {
        let key = StringSerde.serialize(w);
        let part = partition_for_key(&key, PARTITIONS).expect("partitions > 0") as usize;
        stores[part].put(&key, Some(&LongSerde.serialize(c)), base_ts - 1_000);
    }
    for (part, s) in stores.iter_mut().enumerate() {
        let tp = TopicPartition::new(&changelog, part as i32);
        send_changelog(&mut p, &tp, s.take_changelog());
    }

    let mut expected = preload.clone();
    let mut max_ts: BTreeMap<String, i64> = BTreeMap::new();
    for (w, ts) in &words {
        *expected.entry(w.clone()).or_default() += 1;
        let m = max_ts.entry(w.clone()).or_insert(*ts);
        *m = (*m).max(*ts);
    }

    let started = Instant::now();
    let peer = Peer::start(
        &cluster,
        PeerOptions {
            group: &group,
            input: &input,
            app_server: None,
            tags: Vec::new(),
        },
    );
    for (i, (w, ts)) in words.iter().enumerate() {
        let value = StringSerde.serialize(w);
        let rec = ProducerRecord::new(&input, None, Some(&value))
            .partition(i as i32 % PARTITIONS)
            .timestamp(*ts);
        p.send(rec).expect("send input");
    }
    p.flush(deadline(30)).expect("flush input");
    // Java's counts include what it restored from the changelog written here.
    let want: BTreeMap<String, i64> = words
        .iter()
        .map(|(w, _)| (w.clone(), expected[w]))
        .collect();
    eprintln!("peer started, input written: {:?}", started.elapsed());
    await_counts(&cluster, &output, PARTITIONS, &want);
    eprintln!("Java's output counts reached: {:?}", started.elapsed());
    peer.close();
    eprintln!("peer closed: {:?}", started.elapsed());

    // And the changelog Java wrote restores here to those counts, with Java's aggregate
    // timestamps (max of the input timestamps of the word).
    let mut rd = reader(&cluster);
    let mut restored: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    let mut java_records = 0;
    for part in 0..PARTITIONS {
        let tp = TopicPartition::new(&changelog, part);
        let mut s = KeyValueStore::new("counts", StoreFormat::TimestampedKeyValue);
        let sum = rd
            .restore(&tp, &mut s, deadline(60))
            .expect("restore Java's changelog");
        java_records += sum.records;
        for (k, _) in s.iter() {
            let (v, ts) = s.get_with_timestamp(k).expect("listed");
            let word = StringSerde.deserialize(k).unwrap();
            assert_eq!(
                partition_for_key(k, PARTITIONS),
                Some(part),
                "{word:?} in the changelog partition of its task"
            );
            restored.insert(word, (LongSerde.deserialize(v).expect("Long"), ts));
        }
    }
    assert!(
        java_records >= words.len() as u64,
        "one changelog record per update at least: {java_records}"
    );
    for (w, count) in &expected {
        let (got, ts) = restored
            .get(w)
            .unwrap_or_else(|| panic!("{w:?} missing from the restored store"));
        assert_eq!(got, count, "{w:?}");
        match max_ts.get(w) {
            Some(m) => assert_eq!(ts, m, "{w:?}: aggregate timestamp"),
            None => assert_eq!(*ts, base_ts - 1_000, "{w:?}: preloaded only"),
        }
    }
    assert_eq!(restored.len(), expected.len());
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn delete_records_moves_the_log_start_and_a_store_behind_it_is_rebuilt() {
    common::init_logging();
    let cluster = Cluster::get();
    let topic = unique_name("ksg-state-purge");
    create_topic(&cluster, &topic, 2);
    let (tp0, tp1) = (
        TopicPartition::new(&topic, 0),
        TopicPartition::new(&topic, 1),
    );
    let mut p = producer(&cluster);
    let mut written = KeyValueStore::new("s", StoreFormat::TimestampedKeyValue);
    churn(&mut written, 0, 10);
    let records = written.take_changelog();
    send_changelog(&mut p, &tp0, records.clone());
    send_changelog(&mut p, &tp1, records);

    // Which DeleteRecords versions the broker takes (the purger uses the highest shared).
    let conn = BrokerConnection::connect(
        cluster.plaintext_first(),
        &BrokerConnectOptions::default(),
        deadline(10),
    )
    .expect("connect");
    let range = conn
        .api_versions()
        .range(21)
        .expect("DeleteRecords offered");
    eprintln!(
        "broker {:?}: DeleteRecords v{}-{}",
        cluster.kafka_version(),
        range.0,
        range.1
    );
    assert_eq!(
        conn.pick_version::<DeleteRecordsRequest>()
            .expect("a shared version"),
        2,
        "the flexible version"
    );
    drop(conn);

    let mut purger = RecordPurger::new(client(&cluster));
    let offsets = BTreeMap::from([(tp0.clone(), 6), (tp1.clone(), 10)]);
    let r = purger
        .delete_records_before(&offsets, deadline(30))
        .expect("purge");
    assert_eq!(r.get(&tp0), Some(&Ok(6)));
    assert_eq!(r.get(&tp1), Some(&Ok(10)));

    let mut rd = reader(&cluster);
    let config = FetcherConfig::new(client(&cluster));
    let mut f = Fetcher::connect(config, Duration::from_secs(10)).expect("fetcher");
    let starts = f
        .beginning_offsets(&[tp0.clone(), tp1.clone()], deadline(30))
        .expect("log starts");
    assert_eq!(
        starts,
        BTreeMap::from([(tp0.clone(), 6), (tp1.clone(), 10)])
    );

    // Purging again below the log start changes nothing; past the end is refused.
    let again = purger
        .delete_records_before(&BTreeMap::from([(tp0.clone(), 3)]), deadline(30))
        .expect("purge below start");
    assert_eq!(again.get(&tp0), Some(&Ok(6)));
    let past = purger
        .delete_records_before(&BTreeMap::from([(tp0.clone(), 11)]), deadline(30))
        .expect("purge past end");
    assert_eq!(
        past.get(&tp0),
        Some(&Err(BrokerErrorKind::OffsetOutOfRange))
    );
    let missing = TopicPartition::new(unique_name("ksg-state-nope"), 0);
    let r = purger
        .delete_records_before(&BTreeMap::from([(missing.clone(), 1)]), deadline(3))
        .expect("purge unknown topic");
    assert_eq!(
        r.get(&missing),
        Some(&Err(BrokerErrorKind::UnknownTopicOrPartition))
    );

    // A store that had applied up to offset 2 cannot go on at 3 (deleted): it is cleared and
    // rebuilt from the log start, as Java wipes a corrupted task.
    let mut behind = KeyValueStore::new("s", StoreFormat::TimestampedKeyValue);
    behind.apply_changelog(2, b"stale", Some(b"x"), 1);
    let sum = rd
        .restore(&tp0, &mut behind, deadline(30))
        .expect("rebuild");
    assert_eq!((sum.records, sum.start, sum.end), (4, 6, 10));
    assert_eq!(behind.get(b"stale"), None, "cleared first");
    let mut from_start = KeyValueStore::new("s", StoreFormat::TimestampedKeyValue);
    rd.restore(&tp0, &mut from_start, deadline(30))
        .expect("fresh");
    assert_eq!(contents(&behind), contents(&from_start));
    // A fully purged partition restores nothing, and a store past its end is rebuilt too.
    let mut ahead = KeyValueStore::new("s", StoreFormat::TimestampedKeyValue);
    ahead.apply_changelog(50, b"future", Some(b"x"), 1);
    let sum = rd.restore(&tp1, &mut ahead, deadline(30)).expect("ahead");
    assert_eq!((sum.records, sum.start, sum.end), (0, 10, 10));
    assert!(ahead.is_empty());
}

/// A changelog that ends in a transaction marker (written by Kafka's own transactional
/// ProducerPerformance after keyed records from here): the restore ends at the
/// `read_uncommitted` end, past the marker, having applied every keyed record (the tool's
/// records have null keys and are skipped, as they carry nothing to store).
#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn a_changelog_ending_in_a_transaction_marker_restores_to_its_end() {
    common::init_logging();
    let cluster = Cluster::get();
    let topic = unique_name("ksg-state-markers");
    create_topic(&cluster, &topic, 1);
    let tp = TopicPartition::new(&topic, 0);
    let mut written = KeyValueStore::new("s", StoreFormat::TimestampedKeyValue);
    churn(&mut written, 0, 300);
    let mut p = producer(&cluster);
    send_changelog(&mut p, &tp, written.take_changelog());

    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/kafka.sh");
    let out = std::process::Command::new("bash")
        .args([script, "tool", "org.apache.kafka.tools.ProducerPerformance"])
        .args([
            "--topic",
            &topic,
            "--num-records",
            "50",
            "--record-size",
            "10",
        ])
        .args(["--throughput", "-1", "--transactional-id", &topic])
        .args(["--transaction-duration-ms", "100000"])
        .args([
            "--producer-props",
            &format!("bootstrap.servers={}", cluster.plaintext()),
        ])
        .env("KSG_RUN_DIR", cluster.value("KSG_RUN_DIR"))
        .env("KSG_KAFKA_VERSION", cluster.value("KSG_KAFKA_VERSION"))
        .output()
        .expect("run ProducerPerformance");
    assert!(
        out.status.success(),
        "ProducerPerformance: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );

    // The coordinator writes the commit marker after the producer's commit returned: wait
    // until the transaction is complete (last stable offset = high watermark).
    let config = FetcherConfig::new(client(&cluster));
    let mut f = Fetcher::connect(config, Duration::from_secs(10)).expect("fetcher");
    let parts = [tp.clone()];
    let until = deadline(30);
    let end = loop {
        let hw = f.end_offsets(&parts, IsolationLevel::ReadUncommitted, deadline(10));
        let lso = f.end_offsets(&parts, IsolationLevel::ReadCommitted, deadline(10));
        let (hw, lso) = (hw.expect("high watermark")[&tp], lso.expect("LSO")[&tp]);
        if hw == lso && hw > 350 {
            break hw;
        }
        assert!(
            Instant::now() < until,
            "transaction never completed: HW {hw}, LSO {lso}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut rd = reader(&cluster);
    assert_eq!(rd.end_offset(&tp, deadline(30)).expect("end"), end);
    // 300 records, 50 transactional ones, then at least one commit marker.
    assert!(
        end > 350,
        "end {end}: no transaction marker after the records"
    );
    let mut s = KeyValueStore::new("s", StoreFormat::TimestampedKeyValue);
    let sum = rd.restore(&tp, &mut s, deadline(30)).expect("restore");
    assert_eq!((sum.records, sum.start, sum.end), (300, 0, end));
    assert_eq!(contents(&s), contents(&written));
    assert_eq!(s.changelog_offset(), Some(299), "the last keyed record");
    assert!(
        rd.fetcher().position(&tp).is_none(),
        "not followed after a restore"
    );

    // A store whose last record is the transaction's last one: only the marker is left to
    // read, a fetch that returns no record. The restore sees the position pass the end
    // instead of waiting for records until its deadline.
    let mut resumed = KeyValueStore::new("s", StoreFormat::TimestampedKeyValue);
    resumed.apply_changelog(end - 2, b"k", Some(b"v"), 1);
    let until = deadline(20);
    let sum = rd
        .restore(&tp, &mut resumed, until)
        .expect("resume at the marker");
    assert_eq!((sum.records, sum.start, sum.end), (0, end - 1, end));
    assert!(
        Instant::now() < until,
        "the restore waited for its whole deadline at a marker-only tail"
    );
}
