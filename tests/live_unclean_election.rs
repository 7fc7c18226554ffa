//! Issue 21 item 2 (KIP-320) on a real 3-node cluster (`KSG_CLUSTER3_ENV`): an unclean
//! leader election truncates the log under the fetcher's position, and the fetcher says so
//! with `ConsumerError::LogTruncation` instead of reading on over the lost records.
//!
//! The topic has 2 replicas (leader L, follower F; the third node keeps the controller
//! quorum), `min.insync.replicas=1` and `unclean.leader.election.enable=true`. F is stopped
//! (SIGSTOP) until the controller drops it from the ISR; records written then live on L
//! only, and the fetcher reads them. L is SIGKILLed and F resumed: the only live replica,
//! out of sync, is elected leader, with a log that ends where F stopped.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::{unique_name, Cluster};
use kafka_streams_group::client::Client;
use kafka_streams_group::consumer::{ConsumerError, Fetcher, FetcherConfig, OffsetReset};
use kafka_streams_group::producer::{Producer, ProducerConfig, ProducerRecord};
use kafka_streams_group::streams::commit::TopicPartition;
use kafka_streams_group::{ClientConfig, Error};

fn secs(n: u64) -> Instant {
    Instant::now() + Duration::from_secs(n)
}

/// The PLAINTEXT addresses of the nodes other than `skip` (a stopped node accepts
/// connections but never answers: a client bootstrapping from it would wait its timeout).
fn bootstrap_without(cluster: &Cluster, skip: &[i32]) -> String {
    let addrs: Vec<&str> = cluster
        .plaintext()
        .split(',')
        .enumerate()
        .filter(|(i, _)| !skip.contains(&(*i as i32 + 1)))
        .map(|(_, a)| a)
        .collect();
    addrs.join(",")
}

/// (leader, replicas, ISR, leader epoch) of partition 0 of `topic`, by a fresh Metadata
/// from `bootstrap`.
fn partition_state(bootstrap: &str, topic: &str) -> Option<(i32, Vec<i32>, Vec<i32>, i32)> {
    let mut client =
        Client::from_config(&ClientConfig::new(bootstrap), Duration::from_secs(5)).ok()?;
    let md = client.metadata(Some(&[topic]), secs(5)).ok()?;
    let p = md.topic(topic)?.partitions.first()?.clone();
    Some((
        p.leader_id,
        p.replica_nodes.to_vec(),
        p.isr_nodes.to_vec(),
        p.leader_epoch,
    ))
}

/// Polls the metadata of `topic` until `done` holds or `limit` passes.
fn wait_state(
    bootstrap: &str,
    topic: &str,
    limit: Duration,
    done: impl Fn(&(i32, Vec<i32>, Vec<i32>, i32)) -> bool,
) -> Option<(i32, Vec<i32>, Vec<i32>, i32)> {
    let until = Instant::now() + limit;
    let mut last = None;
    while Instant::now() < until {
        last = partition_state(bootstrap, topic);
        if last.as_ref().is_some_and(&done) {
            return last;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    eprintln!("last state of {topic}: {last:?}");
    None
}

/// The pid of node `n` from `scripts/kafka.sh nodes`.
fn node_pid(run_dir: &str, n: i32) -> String {
    let out = Command::new("bash")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/kafka.sh"))
        .arg("nodes")
        .env("KSG_RUN_DIR", run_dir)
        .output()
        .expect("kafka.sh nodes");
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w.first() == Some(&"node") && w.get(1) == Some(&n.to_string().as_str()))
                .then(|| w.get(3).map(|p| p.to_string()))
                .flatten()
        })
        .unwrap_or_else(|| panic!("no pid for node {n} in: {text}"))
}

/// Sends `sig` (STOP/CONT) to `pid`.
fn signal(pid: &str, sig: &str) {
    let ok = Command::new("kill")
        .args([&format!("-{sig}"), pid])
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "kill -{sig} {pid}");
}

/// Resumes a stopped node when the test ends, whatever happens.
struct Resume(String);

impl Drop for Resume {
    fn drop(&mut self) {
        let _ = Command::new("kill").args(["-CONT", &self.0]).status();
    }
}

fn produce(bootstrap: &str, topic: &str, tag: &str, range: std::ops::Range<usize>) {
    let mut p = Producer::new(ProducerConfig::new(
        ClientConfig::new(bootstrap)
            .client_id("ksg-live-unclean")
            .request_timeout(Duration::from_secs(5)),
    ))
    .expect("producer");
    for i in range {
        let value = format!("{tag}{i}");
        p.send(ProducerRecord::new(topic, None, Some(value.as_bytes())).partition(0))
            .expect("send");
    }
    p.flush(secs(30)).expect("flush");
}

/// Polls `f` until `n` records arrived; returns their (offset, value).
fn read(f: &mut Fetcher, n: usize) -> Vec<(i64, String)> {
    let mut got = Vec::new();
    let until = secs(20);
    while got.len() < n {
        assert!(Instant::now() < until, "read {} of {n}", got.len());
        for part in f
            .poll(Instant::now() + Duration::from_secs(1))
            .expect("poll")
        {
            part.for_each_record(|r| {
                let v = String::from_utf8_lossy(r.value.unwrap_or_default()).into_owned();
                got.push((r.offset, v));
            })
            .expect("decode");
        }
    }
    got
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn unclean_election_under_the_position_is_a_log_truncation_error() {
    let Some(cluster) = Cluster::from_var(
        "KSG_CLUSTER3_ENV",
        "unclean_election_under_the_position_is_a_log_truncation_error",
    ) else {
        return;
    };
    common::init_logging();
    assert_eq!(cluster.value("KSG_NODES"), "3", "needs 3 nodes");
    let run_dir = cluster.value("KSG_RUN_DIR").to_string();
    let started = Instant::now();
    let topic = unique_name("ksg-unclean");
    kafka_streams_group::admin::create_topics(
        &ClientConfig::new(cluster.plaintext()),
        &[kafka_streams_group::admin::NewTopic::new(&topic, 1)
            .replication_factor(2)
            .config("min.insync.replicas", "1")
            .config("unclean.leader.election.enable", "true")],
        Duration::from_secs(30),
    )
    .expect("create topic");
    let (leader, replicas, _, epoch0) =
        wait_state(cluster.plaintext(), &topic, Duration::from_secs(30), |s| {
            s.0 >= 0 && s.2.len() == 2
        })
        .expect("both replicas in sync");
    let follower = *replicas.iter().find(|r| **r != leader).expect("follower");
    produce(cluster.plaintext(), &topic, "both", 0..10);
    let without_f = bootstrap_without(&cluster, &[follower]);

    // F stops; once the controller fenced it (broker session timeout) the ISR is L alone.
    let resume = Resume(node_pid(&run_dir, follower));
    signal(&resume.0, "STOP");
    wait_state(&without_f, &topic, Duration::from_secs(40), |s| {
        s.2 == [leader]
    })
    .expect("the stopped follower leaves the ISR");
    produce(&without_f, &topic, "only-leader", 10..20);

    let tp = TopicPartition::new(topic.clone(), 0);
    let config = FetcherConfig::new(ClientConfig::new(&without_f))
        .auto_offset_reset(OffsetReset::None)
        .fetch_max_wait(Duration::from_millis(100));
    let mut f = Fetcher::connect(config, Duration::from_secs(10)).expect("fetcher");
    f.assign([tp.clone()]);
    f.seek(&tp, 0).expect("seek");
    let got = read(&mut f, 20);
    assert_eq!(got.last().map(|r| r.0), Some(19));
    assert_eq!(f.position(&tp), Some(20));

    // L dies, F resumes: F, out of sync, is the only live replica.
    common::kafka_sh(&run_dir, &["kill-node", &leader.to_string()], &[]);
    signal(&resume.0, "CONT");
    let without_l = bootstrap_without(&cluster, &[leader]);
    let elected = wait_state(&without_l, &topic, Duration::from_secs(30), |s| {
        s.0 == follower
    });
    if elected.is_none() {
        eprintln!("no unclean election by the controller yet; asking for one");
        common::kafka_tool(
            &cluster,
            "org.apache.kafka.tools.LeaderElectionCommand",
            &[
                "--bootstrap-server",
                &without_l,
                "--election-type",
                "unclean",
                "--topic",
                &topic,
                "--partition",
                "0",
            ],
        );
    }
    let (_, _, _, epoch1) = wait_state(&without_l, &topic, Duration::from_secs(30), |s| {
        s.0 == follower
    })
    .expect("the out-of-sync follower is elected leader");
    eprintln!(
        "leader {leader} (epoch {epoch0}) killed; {follower} leads at epoch {epoch1} after {:?}",
        started.elapsed()
    );

    let until = secs(30);
    let e = loop {
        match f.poll(Instant::now() + Duration::from_secs(1)) {
            Ok(parts) => {
                let n: usize = parts
                    .iter()
                    .map(|p| p.for_each_record(|_| {}).unwrap_or(0))
                    .sum();
                assert_eq!(n, 0, "records read over the truncation");
            }
            Err(e) => break e,
        }
        assert!(Instant::now() < until, "no truncation reported");
    };
    eprintln!("{e}");
    assert!(
        matches!(
            &e,
            Error::Consumer(ConsumerError::LogTruncation {
                partition,
                fetch_offset: 20,
                truncation_offset: Some(10),
            }) if *partition == tp
        ),
        "{e:?}"
    );
    assert_eq!(
        f.position(&tp),
        Some(20),
        "the position stays until the caller seeks"
    );

    // The caller seeks to the truncation offset: the new leader's history goes on there.
    f.seek(&tp, 10).expect("seek");
    produce(&without_l, &topic, "after", 10..15);
    let got = read(&mut f, 5);
    let want: Vec<(i64, String)> = (10..15).map(|i| (i, format!("after{i}"))).collect();
    assert_eq!(got, want);
    drop(resume);
    common::kafka_sh(&run_dir, &["restart-node", &leader.to_string()], &[]);
    eprintln!("done in {:?}", started.elapsed());
}
