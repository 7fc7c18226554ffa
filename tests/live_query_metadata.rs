//! Live: which instance hosts a key (issue 23, interactive-query metadata).
//!
//! * Two Rust members with different `application.server`, a 4-partition input: for every
//!   key written, the metadata from either member names the member whose local tasks hold
//!   the key's partition (and whose store holds the key), and both members agree.
//! * A Rust WordCount member and the Java WordCount (streams-peer, `--app-server`) in one
//!   group: the Rust member's `query_metadata_for_key` equals Java's
//!   `KafkaStreams#queryMetadataForKey` for the same words, and its
//!   `metadata_for_all_streams_clients` equals Java's `metadataForAllStreamsClients`.
//!
//! Run: `KSG_CLUSTER_ENV=.kafka/run/cluster.env cargo test --test live_query_metadata --
//! --ignored` (the Java test needs `scripts/streams-peer.sh build` first).

mod common;
mod word_count_support;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::channel;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use common::peer::{Peer, PeerOptions};
use common::{create_topic, init_logging, unique_name, Cluster, LIVE};
use kafka_streams_group::processing::query::StreamsClientMetadata;
use kafka_streams_group::processing::{
    changelog_topic, InputRecord, ProcessingConfig, ProcessingRuntime, Processor, StoreFormat,
    StreamsApp, StreamsMetadataHandle, StringSerde, TaskContext,
};
use kafka_streams_group::producer::{Producer, ProducerConfig, ProducerRecord};
use kafka_streams_group::protocol::records::partition_for_key;
use kafka_streams_group::streams::{StreamsTaskRole, TopicInfo, UserEndpoint};
use kafka_streams_group::{ClientConfig, Error, StreamsTaskId, StreamsTopology, Subtopology};
use word_count_support::word_count;

const PARTITIONS: i32 = 4;
const STORE: &str = "s";

/// Puts every record's key into store `s`.
struct Keep;

impl Processor for Keep {
    fn process(&mut self, ctx: &mut TaskContext<'_>, r: &InputRecord) -> Result<(), Error> {
        if let Some(k) = r.key.as_deref() {
            ctx.store(STORE)?.put(k, r.value.as_deref(), r.timestamp);
        }
        Ok(())
    }
}

fn keep_app(app: &str, input: &str) -> StreamsApp {
    let topology = StreamsTopology::new().subtopology(
        Subtopology::new("0")
            .source_topic(input)
            .state_changelog_topic(TopicInfo::new(changelog_topic(app, STORE))),
    );
    StreamsApp::new(topology, |_: &StreamsTaskId| {
        Ok(Box::new(Keep) as Box<dyn Processor>)
    })
    .store("0", STORE, StoreFormat::KeyValue)
}

/// What a member holds, as its own thread last saw it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Held {
    /// Input partitions of its active tasks.
    partitions: BTreeSet<i32>,
    /// Keys in the stores of its active tasks.
    keys: BTreeSet<String>,
}

/// A runtime on its own thread, publishing what it holds every 100 ms.
struct Member {
    endpoint: UserEndpoint,
    metadata: StreamsMetadataHandle,
    held: Arc<Mutex<Held>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Member {
    fn start(config: ProcessingConfig, app: StreamsApp, endpoint: UserEndpoint) -> Member {
        let config = config.user_endpoint(endpoint.host.clone(), endpoint.port);
        let (tx, rx) = channel();
        let held = Arc::new(Mutex::new(Held::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let (h, s) = (held.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            let mut rt = ProcessingRuntime::start(config, app).expect("start");
            tx.send(rt.metadata_handle()).expect("send handle");
            let mut last = Instant::now();
            while !s.load(Ordering::SeqCst) {
                rt.run_once().expect("run_once");
                if last.elapsed() >= Duration::from_millis(100) {
                    last = Instant::now();
                    *h.lock().unwrap() = held_by(&rt);
                }
            }
            rt.close().expect("close");
        });
        let metadata = rx.recv_timeout(Duration::from_secs(60)).expect("started");
        Member {
            endpoint,
            metadata,
            held,
            stop,
            thread: Some(thread),
        }
    }

    fn held(&self) -> Held {
        self.held.lock().unwrap().clone()
    }

    fn close(mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            t.join().expect("member thread");
        }
    }
}

fn held_by(rt: &ProcessingRuntime) -> Held {
    let partitions = rt
        .local_tasks()
        .into_iter()
        .filter(|t| t.role == StreamsTaskRole::Active)
        .flat_map(|t| t.partitions.into_iter().map(|tp| tp.partition))
        .collect();
    let keys = rt
        .task_stores()
        .filter(|(_, role, _)| *role == StreamsTaskRole::Active)
        .flat_map(|(_, _, s)| {
            s.iter()
                .map(|(k, _)| String::from_utf8_lossy(k).into_owned())
                .collect::<Vec<_>>()
        })
        .collect();
    Held { partitions, keys }
}

fn feed(cluster: &Cluster, topic: &str, keys: &[String]) {
    let mut p = Producer::new(ProducerConfig::new(ClientConfig::new(cluster.plaintext())))
        .expect("producer");
    for k in keys {
        p.send(ProducerRecord::new(topic, Some(k.as_bytes()), Some(b"v")))
            .expect("send");
    }
    p.flush(Instant::now() + Duration::from_secs(30))
        .expect("flush");
}

/// Retries `check` (every 200 ms) until it passes, at most `limit`; panics with its last
/// complaint.
fn eventually(limit: Duration, mut check: impl FnMut() -> Result<(), String>) {
    let end = Instant::now() + limit;
    loop {
        match check() {
            Ok(()) => return,
            Err(e) if Instant::now() >= end => panic!("not within {limit:?}: {e}"),
            Err(_) => std::thread::sleep(Duration::from_millis(200)),
        }
    }
}

/// Every key against both members' metadata and what the members hold.
fn check_keys(members: &[&Member], keys: &[String]) -> Result<(), String> {
    let before: Vec<Held> = members.iter().map(|m| m.held()).collect();
    let all: BTreeSet<i32> = before.iter().flat_map(|h| h.partitions.clone()).collect();
    if all.len() != PARTITIONS as usize || before.iter().any(|h| h.partitions.is_empty()) {
        return Err(format!("not settled: {before:?}"));
    }
    for key in keys {
        let answers: Vec<_> = members
            .iter()
            .map(|m| {
                m.metadata
                    .query_metadata_for_key(STORE, key.as_str(), &StringSerde)
            })
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())?;
        if answers.iter().any(|a| a != &answers[0]) {
            return Err(format!("{key}: the members disagree: {answers:?}"));
        }
        let p = partition_for_key(key.as_bytes(), PARTITIONS).expect("partitions");
        let owner = before
            .iter()
            .position(|h| h.partitions.contains(&p))
            .expect("every partition held");
        let want = Some(members[owner].endpoint.clone());
        let got = &answers[0];
        if got.partition != Some(p) || got.active_host != want {
            return Err(format!("{key} (partition {p}, held by {want:?}): {got:?}"));
        }
        if !before[owner].keys.contains(key) {
            return Err(format!("{key}: not yet in the store of {want:?}"));
        }
    }
    let after: Vec<Held> = members.iter().map(|m| m.held()).collect();
    if after
        .iter()
        .map(|h| &h.partitions)
        .ne(before.iter().map(|h| &h.partitions))
    {
        return Err("the assignment moved during the check".into());
    }
    Ok(())
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn either_member_names_the_member_that_holds_each_key() {
    let _ = LIVE;
    init_logging();
    let cluster = Cluster::get();
    let app = unique_name("iq");
    let input = format!("{app}-in");
    create_topic(&cluster, &input, PARTITIONS);
    let keys: Vec<String> = (0..200).map(|i| format!("key-{i}")).collect();
    feed(&cluster, &input, &keys);
    let config = || {
        ProcessingConfig::new(cluster.plaintext(), &app)
            .commit_interval(Duration::from_millis(500))
            .poll_wait(Duration::from_millis(100))
    };
    let a = Member::start(
        config(),
        keep_app(&app, &input),
        UserEndpoint::new("127.0.0.1", 27150),
    );
    let b = Member::start(
        config(),
        keep_app(&app, &input),
        UserEndpoint::new("localhost", 27151),
    );
    eventually(Duration::from_secs(120), || check_keys(&[&a, &b], &keys));
    // The clients' metadata: both endpoints, each with exactly its local partitions.
    let held: BTreeMap<UserEndpoint, BTreeSet<i32>> = [&a, &b]
        .iter()
        .map(|m| (m.endpoint.clone(), m.held().partitions))
        .collect();
    for m in [&a, &b] {
        let all = m
            .metadata
            .metadata_for_all_streams_clients()
            .expect("metadata");
        let listed: BTreeMap<UserEndpoint, BTreeSet<i32>> = all
            .iter()
            .map(|c| {
                (
                    c.host.clone(),
                    c.topic_partitions.iter().map(|tp| tp.partition).collect(),
                )
            })
            .collect();
        assert_eq!(listed, held);
        assert!(all.iter().all(|c| c.state_store_names.contains(STORE)));
        assert_eq!(
            m.metadata
                .streams_metadata_for_store(STORE)
                .expect("store")
                .len(),
            2
        );
    }
    eprintln!("{} keys placed; partitions held: {held:?}", keys.len());
    let after_close = a.metadata.clone();
    a.close();
    b.close();
    assert!(
        after_close
            .query_metadata_for_key(STORE, "key-0", &StringSerde)
            .is_err(),
        "a closed member answers no more"
    );
}

/// Java's `metadata` line as comparable values: endpoint → (active, standby, stores).
type Clients = BTreeMap<String, (Vec<String>, Vec<String>, Vec<String>)>;

fn java_clients(peer: &mut Peer) -> Clients {
    let line = peer.command("metadata");
    let json: serde_json::Value =
        serde_json::from_str(line.trim_start_matches("metadata ")).expect("metadata json");
    let list = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    json.as_array()
        .expect("array")
        .iter()
        .map(|c| {
            (
                c["endpoint"].as_str().unwrap_or_default().to_string(),
                (list(&c["active"]), list(&c["standby"]), list(&c["stores"])),
            )
        })
        .collect()
}

fn rust_clients(all: &[StreamsClientMetadata]) -> Clients {
    all.iter()
        .map(|c| {
            let tps = |s: &BTreeSet<kafka_streams_group::TopicPartition>| {
                let mut v: Vec<String> = s.iter().map(|tp| tp.to_string()).collect();
                v.sort();
                v
            };
            (
                c.host.to_string(),
                (
                    tps(&c.topic_partitions),
                    tps(&c.standby_topic_partitions),
                    c.state_store_names.iter().cloned().collect(),
                ),
            )
        })
        .collect()
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn a_rust_member_answers_as_java_does() {
    init_logging();
    let cluster = Cluster::get();
    let app = unique_name("iqj");
    let (input, output) = (format!("{app}-in"), format!("{app}-out"));
    create_topic(&cluster, &input, PARTITIONS);
    create_topic(&cluster, &output, PARTITIONS);
    let mut peer = Peer::start_with(
        &cluster,
        PeerOptions {
            group: &app,
            input: &input,
            app_server: Some("127.0.0.1:27160".into()),
            tags: Vec::new(),
        },
        &["--topology", "wordcount", "--output", &output],
    );
    let rust = Member::start(
        ProcessingConfig::new(cluster.plaintext(), &app).poll_wait(Duration::from_millis(100)),
        word_count::app(&app, &input, &output, None),
        UserEndpoint::new("127.0.0.1", 27161),
    );
    let words: Vec<String> = (0..100).map(|i| format!("word{i}")).collect();
    let mut compared = 0;
    eventually(Duration::from_secs(120), || {
        let java = java_clients(&mut peer);
        let mine = rust_clients(
            &rust
                .metadata
                .metadata_for_all_streams_clients()
                .map_err(|e| e.to_string())?,
        );
        if java.len() != 2 || java != mine {
            return Err(format!("clients differ:\n java {java:?}\n rust {mine:?}"));
        }
        for w in &words {
            let reply = peer.command(&format!("key-metadata {} {w}", word_count::STORE));
            let j: serde_json::Value =
                serde_json::from_str(reply.trim_start_matches("key-metadata "))
                    .map_err(|e| format!("{reply}: {e}"))?;
            let r = rust
                .metadata
                .query_metadata_for_key(word_count::STORE, w.as_str(), &StringSerde)
                .map_err(|e| e.to_string())?;
            if r.active_host.is_none() {
                return Err(format!("{w}: not placed yet: {r:?}"));
            }
            let active = r
                .active_host
                .as_ref()
                .map_or("unavailable:-1".to_string(), |h| h.to_string());
            let standby: Vec<String> = r.standby_hosts.iter().map(|h| h.to_string()).collect();
            let java_standby: Vec<String> = j["standby"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|s| s.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            if j["active"] != active.as_str()
                || j["partition"] != r.partition.unwrap_or(-1)
                || java_standby != standby
            {
                return Err(format!("{w}: java {j} rust {r:?}"));
            }
        }
        if java_clients(&mut peer) != java {
            return Err("the assignment moved during the check".into());
        }
        compared = words.len();
        Ok(())
    });
    eprintln!("{compared} words: Rust and Java give the same key metadata");
    rust.close();
    peer.close();
}
