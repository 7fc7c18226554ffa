//! InitProducerId right after a node restart, on a real 3-node cluster (`KSG_CLUSTER3_ENV`).
//!
//! A broker gets producer ids from the controller in blocks (AllocateProducerIds, Kafka's
//! `RPCProducerIdManager`); until its first block arrives it answers InitProducerId with
//! COORDINATOR_LOAD_IN_PROGRESS, and while its AllocateProducerIds is in flight it sends no
//! other. An idempotent producer whose InitProducerId went to such a broker, and whose
//! retries went to it again, failed its first flush (the CI flake of live_unclean_election
//! right after live_fetcher's leader_move restarted a node).
//!
//! * `a_producer_gets_its_id_while_a_restarted_node_waits_for_its_block` (the proof, in
//!   scripts/test.sh): node R (not the KRaft leader) is SIGKILLed and restarted, then the
//!   active controller L is SIGSTOPped and R is asked for a producer id once: R's
//!   AllocateProducerIds goes to the stopped L and hangs, so R answers
//!   COORDINATOR_LOAD_IN_PROGRESS for as long as that request lives. An idempotent producer
//!   whose only bootstrap address is R flushes one record to a partition led by the third
//!   node T: its InitProducerId goes to any known node and each retry to another, so it gets
//!   its id from T within seconds (before, every try went to R until the flush deadline).
//! * `restarted_node_answers_init_producer_id` (figures only): SIGKILL and restart node 2
//!   (or, with `KSG_INIT_PID_NO_KILL=1`, take the cluster as it is), then ask every node for
//!   a producer id every 50 ms and print what each answered and when it first gave an id.

mod common;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use common::{unique_name, Cluster};
use kafka_streams_group::client::{BrokerTarget, Client};
use kafka_streams_group::producer::{Producer, ProducerConfig, ProducerRecord};
use kafka_streams_group::protocol::api::init_producer_id::InitProducerIdRequest;
use kafka_streams_group::protocol::BrokerErrorKind;
use kafka_streams_group::ClientConfig;

/// The node that is killed and restarted.
const NODE: i32 = 2;

fn cluster(test: &str) -> Option<(Cluster, String)> {
    let cluster = Cluster::from_var("KSG_CLUSTER3_ENV", test)?;
    common::init_logging();
    assert_eq!(cluster.value("KSG_NODES"), "3", "needs 3 nodes");
    let run_dir = cluster.value("KSG_RUN_DIR").to_string();
    Some((cluster, run_dir))
}

/// The PLAINTEXT address of node `n` (1-based).
fn node_addr(cluster: &Cluster, n: i32) -> String {
    let addrs: Vec<&str> = cluster.plaintext().split(',').collect();
    addrs[(n - 1) as usize].to_string()
}

/// SIGKILLs node `n` and starts it again (kafka.sh waits until it is back in the cluster).
fn kill_and_restart(run_dir: &str, n: i32) -> Duration {
    common::kafka_sh(run_dir, &["kill-node", &n.to_string()], &[]);
    let restart = common::kafka_sh(run_dir, &["restart-node", &n.to_string()], &[]);
    eprintln!("node {n} SIGKILLed and restarted in {restart:?}");
    restart
}

/// One InitProducerId (no transactional id) to the broker at `addr`: its error, or the
/// transport error's text.
fn init_pid_at(addr: &str) -> Result<BrokerErrorKind, String> {
    let mut client = Client::from_config(&ClientConfig::new(addr), Duration::from_secs(5))
        .map_err(|e| e.to_string())?;
    let req = InitProducerIdRequest {
        transaction_timeout_ms: 60_000,
        ..Default::default()
    };
    client
        .send(
            BrokerTarget::Any,
            &req,
            Instant::now() + Duration::from_secs(5),
        )
        .map(|r| r.error())
        .map_err(|e| e.to_string())
}

#[test]
#[ignore = "live: needs a 3-node Kafka cluster (KSG_CLUSTER3_ENV)"]
fn restarted_node_answers_init_producer_id() {
    let Some((cluster, run_dir)) = cluster("restarted_node_answers_init_producer_id") else {
        return;
    };
    // KSG_INIT_PID_NO_KILL=1: probe the cluster as it is (e.g. right after another test
    // restarted a node).
    if std::env::var_os("KSG_INIT_PID_NO_KILL").is_none() {
        kill_and_restart(&run_dir, NODE);
    }
    let started = Instant::now();
    // Per node: (answer, first seen, last seen) in order, and when it first gave an id.
    let mut answers: BTreeMap<i32, Vec<(String, Duration, Duration)>> = BTreeMap::new();
    let mut first_id: BTreeMap<i32, Duration> = BTreeMap::new();
    while first_id.len() < 3 && started.elapsed() < Duration::from_secs(90) {
        for n in 1..=3 {
            if first_id.contains_key(&n) {
                continue;
            }
            let answer = match init_pid_at(&node_addr(&cluster, n)) {
                Ok(BrokerErrorKind::None) => "id".to_string(),
                Ok(kind) => format!("{kind:?}"),
                Err(e) => format!("error: {e}"),
            };
            let at = started.elapsed();
            let seen = answers.entry(n).or_default();
            match seen.last_mut() {
                Some(last) if last.0 == answer => last.2 = at,
                _ => seen.push((answer.clone(), at, at)),
            }
            if answer == "id" {
                first_id.insert(n, at);
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    for (n, seen) in &answers {
        eprintln!("node {n}: first id at {:?}", first_id.get(n));
        for (answer, from, to) in seen {
            eprintln!("  {answer} from {from:?} to {to:?}");
        }
    }
    assert_eq!(first_id.len(), 3, "every node gave an id within 90 s");
}

/// The KRaft leader as node `n`'s quorum-state file says.
fn kraft_leader(run_dir: &str, n: i32) -> i32 {
    let path = format!("{run_dir}/node-{n}/data/__cluster_metadata-0/quorum-state");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let after = text
        .split("\"leaderId\":")
        .nth(1)
        .unwrap_or_else(|| panic!("no leaderId in {path}: {text}"));
    let digits: String = after
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '-')
        .collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("leaderId in {path}: {text}"))
}

/// Sends `sig` (STOP/CONT) to node `n`'s process.
fn signal_node(run_dir: &str, n: i32, sig: &str) {
    let pid_file = format!("{run_dir}/node-{n}/broker.pid");
    let pid = std::fs::read_to_string(&pid_file).unwrap_or_else(|e| panic!("{pid_file}: {e}"));
    let ok = std::process::Command::new("kill")
        .args([format!("-{sig}"), pid.trim().to_string()])
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "kill -{sig} node {n}");
}

/// Resumes a SIGSTOPped node when dropped (also when the test fails).
struct Resume<'a>(&'a str, i32);

impl Drop for Resume<'_> {
    fn drop(&mut self) {
        signal_node(self.0, self.1, "CONT");
    }
}

/// Polls `f` every 100 ms until it holds or `limit` passes; whether it held.
fn wait_until(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

/// Creates `topic` with one partition on node `node` only.
fn create_topic_on(cluster: &Cluster, topic: &str, node: i32) {
    use kafka_streams_group::protocol::api::create_topics::{
        CreatableReplicaAssignment, CreatableTopic, CreateTopicsRequest,
    };
    let mut client = Client::from_config(
        &ClientConfig::new(cluster.plaintext()),
        Duration::from_secs(10),
    )
    .expect("client");
    let req = CreateTopicsRequest {
        topics: vec![CreatableTopic {
            name: topic.to_string(),
            num_partitions: -1,
            replication_factor: -1,
            assignments: vec![CreatableReplicaAssignment {
                partition_index: 0,
                broker_ids: vec![node],
            }],
            ..Default::default()
        }],
        timeout_ms: 30_000,
        validate_only: false,
    };
    let resp = client
        .create_topics(&req, Instant::now() + Duration::from_secs(30))
        .expect("create topic");
    let code = resp.topics.first().map(|t| t.error_code);
    assert_eq!(code, Some(0), "create {topic} on node {node}: {resp:?}");
}

#[test]
#[ignore = "live: needs a 3-node Kafka cluster (KSG_CLUSTER3_ENV)"]
fn a_producer_gets_its_id_while_a_restarted_node_waits_for_its_block() {
    let Some((cluster, run_dir)) =
        cluster("a_producer_gets_its_id_while_a_restarted_node_waits_for_its_block")
    else {
        return;
    };
    let started = Instant::now();
    let leader = kraft_leader(&run_dir, 1);
    let restarted = (1..=3).find(|n| *n != leader).expect("a follower");
    let third = (1..=3)
        .find(|n| *n != leader && *n != restarted)
        .expect("the third node");
    // The third node holds a producer id block before the controller stops.
    assert!(
        wait_until(Duration::from_secs(30), || init_pid_at(&node_addr(
            &cluster, third
        )) == Ok(BrokerErrorKind::None)),
        "node {third} gives producer ids"
    );
    let topic = unique_name("ksg-init-pid");
    create_topic_on(&cluster, &topic, third);
    kill_and_restart(&run_dir, restarted);
    let leader_now = kraft_leader(&run_dir, third);
    assert_ne!(
        leader_now, restarted,
        "the restarted node leads the KRaft quorum: the scenario needs another leader"
    );

    signal_node(&run_dir, leader_now, "STOP");
    let resume = Resume(&run_dir, leader_now);
    let r_addr = node_addr(&cluster, restarted);
    let first = init_pid_at(&r_addr);
    eprintln!(
        "KRaft leader {leader_now} stopped; restarted node {restarted} answers {first:?}; \
         node {third} leads the topic"
    );
    assert_eq!(
        first,
        Ok(BrokerErrorKind::CoordinatorLoadInProgress),
        "node {restarted} has no producer id block yet"
    );

    let flush_started = Instant::now();
    let mut p = Producer::new(ProducerConfig::new(
        ClientConfig::new(&r_addr)
            .client_id("ksg-live-init-pid")
            .request_timeout(Duration::from_secs(3)),
    ))
    .expect("producer");
    p.send(ProducerRecord::new(&topic, None, Some(b"v")).partition(0))
        .expect("send");
    let flushed = p.flush(Instant::now() + Duration::from_secs(20));
    let took = flush_started.elapsed();
    // Still waiting for its block: the producer did not get its id from it.
    let after = init_pid_at(&r_addr);
    eprintln!(
        "producer bootstrapped from node {restarted}: {flushed:?} after {took:?}; node \
         {restarted} then answers {after:?}"
    );
    drop(resume);
    flushed.expect("flush: a producer id from a node that has a block");
    assert!(took < Duration::from_secs(10), "{took:?}");
    assert_eq!(
        after,
        Ok(BrokerErrorKind::CoordinatorLoadInProgress),
        "the scenario held: node {restarted} still had no block"
    );

    // The stopped node is back in the cluster before the next test.
    assert!(
        wait_until(Duration::from_secs(60), || {
            let config = ClientConfig::new(cluster.plaintext());
            let Ok(mut c) = Client::from_config(&config, Duration::from_secs(5)) else {
                return false;
            };
            c.metadata(Some(&[]), Instant::now() + Duration::from_secs(5))
                .is_ok_and(|md| md.brokers.len() == 3)
        }),
        "node {leader_now} back among the brokers"
    );
    eprintln!("whole test: {:?}", started.elapsed());
}
