//! Live: a DSL join + aggregation application (`examples/order_totals_dsl/app.rs`: orders
//! re-keyed by customer, joined with the customers table, summed per region) with two Java
//! instances (the streams peer's `--topology ordertotals`) and two Rust instances in one
//! group (issue 23):
//!
//! * the Rust program derives Java's heartbeat topology (three subtopologies, two
//!   repartition topics, two changelogs, a copartition group);
//! * every instance, Java and Rust, is restarted cleanly in turn while orders flow, and the
//!   last total per region on the output topic is exact (no order lost, none counted twice);
//! * then, from each Rust instance, every region is found: a key one of its active tasks
//!   holds is read from its store with the interactive-query API (`ProcessingRuntime::store`,
//!   read from the test thread while the runtime runs on its own), and the metadata names
//!   that instance; a key it does not hold is named by `query_metadata_for_key` with its
//!   host's `application.server`, and that host really runs the task (the other Rust
//!   instance's store, read the same way with `with_partition`, holds the same total; a Java
//!   instance lists the task as active).
//!
//! Run: `KSG_CLUSTER_ENV=.kafka/run/cluster.env cargo test --test live_order_totals --
//! --ignored` (after `scripts/streams-peer.sh build`).

mod common;
mod word_count_support;

#[path = "../examples/order_totals_dsl/app.rs"]
mod order_totals;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::channel;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use common::peer::{Peer, PeerOptions};
use common::{create_topic, init_logging, unique_name, Cluster, LIVE};
use kafka_streams_group::processing::{
    ProcessingConfig, ProcessingRuntime, ProcessingStats, ReadOnlyKeyValueStore, StoreQueryError,
    StoreQueryHandle, StoreQueryParameters, StreamsMetadataHandle, StringSerde,
};
use kafka_streams_group::producer::{Producer, ProducerConfig, ProducerRecord};
use kafka_streams_group::protocol::records::partition_for_key;
use kafka_streams_group::streams::UserEndpoint;
use kafka_streams_group::{ClientConfig, StreamsTaskId};
use serde_json::Value;
use word_count_support::{diff, wait_for, Counts, Rng};

const PARTITIONS: i32 = 4;
const CUSTOMERS: usize = 40;
const REGIONS: usize = 8;
/// The subtopology of the aggregation (and its store): the third one.
const AGGREGATION: &str = "2";

fn region_of(customer: usize) -> String {
    format!("region-{}", customer % REGIONS)
}

/// The topics of one run.
struct Topics {
    orders: String,
    customers: String,
    output: String,
}

/// A Rust instance of the application on its own thread, with `application.server`
/// `endpoint`; the test thread reads its `region-totals` stores with the interactive-query
/// API while its runtime runs (`ProcessingRuntime::store`).
struct RustMember {
    name: String,
    endpoint: UserEndpoint,
    metadata: StreamsMetadataHandle,
    stores: StoreQueryHandle,
    /// The totals of the instance's active tasks.
    totals: ReadOnlyKeyValueStore<String, i64>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<ProcessingStats>>,
}

impl RustMember {
    fn start(name: &str, cluster: &Cluster, app: &str, topics: &Topics, port: u16) -> RustMember {
        let endpoint = UserEndpoint::new("127.0.0.1", port);
        let config = ProcessingConfig::new(cluster.plaintext(), app)
            .commit_interval(Duration::from_millis(500))
            .poll_wait(Duration::from_millis(100))
            .user_endpoint(endpoint.host.clone(), endpoint.port);
        let program = order_totals::app(app, &topics.orders, &topics.customers, &topics.output)
            .expect("the DSL program runs");
        let (handle_tx, handle_rx) = channel();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let n = name.to_string();
        let thread = std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || {
                let mut rt = ProcessingRuntime::start(config, program).expect("start");
                eprintln!("{n}: joined as {}", rt.handle().member_id());
                // Typed by the DSL store's own serdes (String keys, Long totals).
                let totals = rt
                    .store::<String, i64>(order_totals::STORE)
                    .expect("the program's store");
                let handles = (rt.metadata_handle(), rt.store_query_handle(), totals);
                handle_tx.send(handles).expect("send handles");
                while !flag.load(Ordering::SeqCst) {
                    rt.run_once().unwrap_or_else(|e| panic!("{n}: {e}"));
                }
                let stats = rt.stats();
                rt.close().unwrap_or_else(|e| panic!("{n}: close: {e}"));
                eprintln!("{n}: closed ({stats:?})");
                stats
            })
            .expect("spawn");
        let (metadata, stores, totals) = handle_rx
            .recv_timeout(Duration::from_secs(60))
            .expect("started");
        RustMember {
            name: name.to_string(),
            endpoint,
            metadata,
            stores,
            totals,
            stop,
            thread: Some(thread),
        }
    }

    /// `key`'s total in the instance's active task of `partition`, read from this thread
    /// (an error if that task is not local now).
    fn local(&self, key: &str, partition: i32) -> Result<Option<i64>, StoreQueryError> {
        let params = StoreQueryParameters::from_name(order_totals::STORE).with_partition(partition);
        self.stores
            .key_value_store::<String, i64>(params)?
            .get(&key.to_string())
    }

    fn close(mut self) -> ProcessingStats {
        self.stop.store(true, Ordering::SeqCst);
        let t = self.thread.take().expect("running");
        t.join()
            .unwrap_or_else(|_| panic!("{} panicked", self.name))
    }
}

impl Drop for RustMember {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

fn java(cluster: &Cluster, app: &str, topics: &Topics, port: u16, n: u32) -> Peer {
    let log = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("{app}-java{port}-{n}.log"));
    let mut peer = Peer::start_with(
        cluster,
        PeerOptions {
            group: app,
            input: &topics.orders,
            app_server: Some(format!("127.0.0.1:{port}")),
            tags: Vec::new(),
        },
        &[
            "--topology",
            "ordertotals",
            "--table",
            &topics.customers,
            "--output",
            &topics.output,
            "--commit-ms",
            "500",
            "--log-file",
            &log.to_string_lossy(),
        ],
    );
    peer.wait_state(Duration::from_secs(90), |s| s == "RUNNING");
    peer
}

/// Writes orders (`o<n>` → `"c<customer>:<amount>"`) from a thread, 25 every 150 ms, until
/// `stop`; returns (customer, amount) of every order acknowledged.
fn feed_orders(
    cluster: &Cluster,
    topic: &str,
    stop: Arc<AtomicBool>,
) -> JoinHandle<Vec<(usize, i64)>> {
    let bootstrap = cluster.plaintext().to_string();
    let topic = topic.to_string();
    std::thread::spawn(move || {
        let mut p =
            Producer::new(ProducerConfig::new(ClientConfig::new(bootstrap))).expect("producer");
        let mut rng = Rng::new(2323);
        let mut sent = Vec::new();
        while !stop.load(Ordering::SeqCst) {
            for _ in 0..25 {
                let customer = rng.below(CUSTOMERS as u64) as usize;
                let amount = 1 + rng.below(1000) as i64;
                let key = format!("o{}", sent.len());
                let value = format!("c{customer}:{amount}");
                p.send(ProducerRecord::new(
                    topic.clone(),
                    Some(key.as_bytes()),
                    Some(value.as_bytes()),
                ))
                .expect("send an order");
                sent.push((customer, amount));
            }
            p.flush(Instant::now() + Duration::from_secs(60))
                .expect("flush the orders");
            std::thread::sleep(Duration::from_millis(150));
        }
        sent
    })
}

/// The Java program's heartbeat topology (`--print-topology`), as JSON.
fn java_topology(app: &str, topics: &Topics) -> Value {
    let script = std::env::var_os("KSG_STREAMS_PEER")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/streams-peer.sh")
        });
    let out = std::process::Command::new("bash")
        .arg(&script)
        .args([
            "print-topology",
            "--group",
            app,
            "--topology",
            "ordertotals",
        ])
        .args(["--input", &topics.orders, "--table", &topics.customers])
        .args(["--output", &topics.output])
        .output()
        .expect("run the streams peer");
    assert!(out.status.success(), "print-topology: {out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().last().expect("a topology line");
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}"))
}

#[path = "support/heartbeat_json.rs"]
mod heartbeat_json;

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn dsl_join_and_aggregation_with_java_through_rolling_restarts() {
    let _ = LIVE;
    init_logging();
    let started = Instant::now();
    let cluster = Cluster::get();
    let app = unique_name("ordertotals");
    let topics = Topics {
        orders: format!("{app}-orders"),
        customers: format!("{app}-customers"),
        output: format!("{app}-out"),
    };
    for t in [&topics.orders, &topics.customers, &topics.output] {
        create_topic(&cluster, t, PARTITIONS);
    }
    // The Rust program derives the topology Java's program derives.
    let rust_topology = order_totals::program(&topics.orders, &topics.customers, &topics.output)
        .expect("program")
        .streams_topology(&kafka_streams_group::topology::HeartbeatTopologyOptions::new(&app))
        .expect("topology");
    assert_eq!(rust_topology.subtopologies.len(), 3);
    let ours = heartbeat_json::to_json(&rust_topology);
    let theirs = java_topology(&app, &topics);
    if let Some(d) = heartbeat_json::first_difference(&ours, &theirs, "") {
        panic!("the Rust and Java programs derive different topologies: {d}\nrust {ours}\njava {theirs}");
    }
    // The customers first: customer c<i> lives in region-<i mod 8>.
    let mut p = Producer::new(ProducerConfig::new(ClientConfig::new(cluster.plaintext())))
        .expect("producer");
    for c in 0..CUSTOMERS {
        let (key, region) = (format!("c{c}"), region_of(c));
        p.send(ProducerRecord::new(
            topics.customers.as_str(),
            Some(key.as_bytes()),
            Some(region.as_bytes()),
        ))
        .expect("send a customer");
    }
    p.flush(Instant::now() + Duration::from_secs(30))
        .expect("flush");
    let ports = [27231u16, 27232, 27233, 27234];
    let mut j1 = java(&cluster, &app, &topics, ports[0], 0);
    let mut r1 = RustMember::start("rust-1", &cluster, &app, &topics, ports[1]);
    let mut j2 = java(&cluster, &app, &topics, ports[2], 0);
    let mut r2 = RustMember::start("rust-2", &cluster, &app, &topics, ports[3]);
    eprintln!("4 instances up after {:?}", started.elapsed());
    let stop = Arc::new(AtomicBool::new(false));
    let feeder = feed_orders(&cluster, &topics.orders, stop.clone());
    let mut totals = Counts::new(cluster.plaintext(), &topics.output, PARTITIONS);
    // (answers, retriable refusals, slowest answer) of `all()` on the Rust instances while
    // orders flow.
    let mut flowing = (0u32, 0u32, Duration::ZERO);
    let progress = |totals: &mut Counts, what: &str| {
        let want = totals.updates + 100;
        wait_for(what, Duration::from_secs(60), || {
            totals.read(Duration::from_millis(300));
            totals.updates >= want
        });
        eprintln!(
            "{what}: {} updates at {:?}",
            totals.updates,
            started.elapsed()
        );
    };
    progress(&mut totals, "first totals");
    read_while_flowing(&[&r1, &r2], &mut flowing);
    let mut rust_stats = Vec::new();
    // Rolling restarts, each instance in turn, while the orders flow.
    j1.close();
    j1 = java(&cluster, &app, &topics, ports[0], 1);
    progress(&mut totals, "java-1 restarted");
    read_while_flowing(&[&r1, &r2], &mut flowing);
    rust_stats.push(r1.close());
    r1 = RustMember::start("rust-1", &cluster, &app, &topics, ports[1]);
    progress(&mut totals, "rust-1 restarted");
    read_while_flowing(&[&r1, &r2], &mut flowing);
    j2.close();
    j2 = java(&cluster, &app, &topics, ports[2], 1);
    progress(&mut totals, "java-2 restarted");
    read_while_flowing(&[&r1, &r2], &mut flowing);
    rust_stats.push(r2.close());
    r2 = RustMember::start("rust-2", &cluster, &app, &topics, ports[3]);
    progress(&mut totals, "rust-2 restarted");
    read_while_flowing(&[&r1, &r2], &mut flowing);
    stop.store(true, Ordering::SeqCst);
    eprintln!(
        "while orders flowed: {} answers of all(), {} retriable refusals, slowest {:?}",
        flowing.0, flowing.1, flowing.2
    );
    assert!(flowing.0 > 0, "{flowing:?}");
    let orders = feeder.join().expect("feeder");
    let mut expected: BTreeMap<String, i64> = BTreeMap::new();
    for (customer, amount) in &orders {
        *expected.entry(region_of(*customer)).or_default() += amount;
    }
    assert_eq!(expected.len(), REGIONS);
    let exact = totals.settle_exact(&expected, Duration::from_secs(3), Duration::from_secs(90));
    assert!(
        exact,
        "{} orders: {}",
        orders.len(),
        diff(&totals.last, &expected)
    );
    // Every order joined a customer and updated one total, once.
    assert_eq!(totals.updates, orders.len() as u64, "one update per order");
    eprintln!(
        "exact: {} orders, {} regions, {} updates, total {} (at {:?})",
        orders.len(),
        expected.len(),
        totals.updates,
        expected.values().sum::<i64>(),
        started.elapsed()
    );

    // Interactive queries from each Rust instance: every region found in its own store or
    // on the host it names.
    let rust = [&r1, &r2];
    let mut javas = [(ports[0], &mut j1), (ports[2], &mut j2)];
    let mut local_reads = 0;
    for asking in rust {
        let found = find_every_region(asking, &expected, &rust, &mut javas);
        local_reads += found
            .values()
            .filter(|w| w.starts_with(&asking.name))
            .count();
        eprintln!("{}: every region found: {found:?}", asking.name);
        assert_eq!(found.len(), REGIONS);
    }
    // Each Rust instance's whole store, read from this thread: its regions hold the
    // exact totals, and together with the Java instances' every region is somewhere.
    for r in rust {
        let all = match r.totals.all() {
            Ok(all) => all,
            // The instance holds no aggregation task (its tasks are the other subtopologies').
            Err(e @ StoreQueryError::NotLocal { .. }) => {
                eprintln!("{}: {e}", r.name);
                continue;
            }
            Err(e) => panic!("{}: all(): {e}", r.name),
        };
        eprintln!("{}: all() = {all:?}", r.name);
        for (region, total) in &all {
            assert_eq!(expected.get(region), Some(total), "{}: {region}", r.name);
        }
    }
    rust_stats.push(r1.close());
    rust_stats.push(r2.close());
    j1.close();
    j2.close();
    assert!(
        rust_stats.iter().any(|s| s.restored > 0),
        "a restarted Rust instance restored state: {rust_stats:?}"
    );
    assert!(rust_stats.iter().all(|s| s.processed > 0), "{rust_stats:?}");
    eprintln!(
        "done in {:?} ({local_reads} of {} answers read in the asking instance's own store)",
        started.elapsed(),
        2 * REGIONS
    );
}

/// Reads every Rust instance's whole store from this thread while orders flow: an answer
/// (totals only grow from zero: every one positive) or a retriable refusal (a rebalance in
/// flight), never another error.
fn read_while_flowing(rust: &[&RustMember], seen: &mut (u32, u32, Duration)) {
    for r in rust {
        let asked = Instant::now();
        let answer = r.totals.all();
        seen.2 = seen.2.max(asked.elapsed());
        match answer {
            Ok(all) => {
                assert!(all.iter().all(|(_, t)| *t > 0), "{}: {all:?}", r.name);
                seen.0 += 1;
            }
            Err(e) if e.is_retriable() => {
                eprintln!("{}: {e}", r.name);
                seen.1 += 1;
            }
            Err(e) => panic!("{}: {e}", r.name),
        }
    }
}

/// From `asking`, every region of `expected`: read in its own store from this thread if
/// one of its active tasks holds it, else on the host `query_metadata_for_key` names (retried
/// for up to 60 s while a rebalance moves a task).
fn find_every_region(
    asking: &RustMember,
    expected: &BTreeMap<String, i64>,
    rust: &[&RustMember],
    javas: &mut [(u16, &mut Peer)],
) -> BTreeMap<String, String> {
    let mut found = BTreeMap::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    for (region, want) in expected {
        let partition = partition_for_key(region.as_bytes(), PARTITIONS).expect("partition");
        let task = StreamsTaskId::new(AGGREGATION, partition);
        loop {
            let m = asking
                .metadata
                .query_metadata_for_key(order_totals::STORE, region.as_str(), &StringSerde)
                .expect("query metadata");
            assert_eq!(m.partition, Some(partition), "{region}: {m:?}");
            let here = match asking.totals.get(region) {
                Ok(total) => Ok(total),
                // No local task holds the store (this instance runs other subtopologies'
                // tasks only): the key is elsewhere, as when the store answers `None`.
                Err(StoreQueryError::NotLocal { .. }) => Ok(None),
                Err(e) if e.is_retriable() => Err(format!("{region}: {e}")),
                Err(e) => panic!("{}: {region}: {e}", asking.name),
            };
            let named_here = m.active_host.as_ref() == Some(&asking.endpoint);
            let check = match here {
                // Local: the metadata must name this instance too.
                Ok(Some(total)) if total == *want && named_here => {
                    Ok(format!("{} (own store: {total})", asking.name))
                }
                Ok(Some(total)) => Err(format!(
                    "{region}: {} holds {total} (want {want}), metadata names {:?}",
                    asking.name, m.active_host
                )),
                Ok(None) if named_here => Err(format!(
                    "{region}: the metadata names {} but its stores do not hold it",
                    asking.name
                )),
                // Not here: the host the metadata names.
                Ok(None) => match m.active_host.clone() {
                    Some(host) => where_hosted(region, *want, partition, &task, &host, rust, javas),
                    None => Err(format!("{region}: no host named: {m:?}")),
                },
                Err(e) => Err(e),
            };
            match check {
                Ok(where_) => {
                    found.insert(region.clone(), where_);
                    break;
                }
                // Only a rebalance in flight moves a task; it settles.
                Err(e) if Instant::now() < deadline => {
                    eprintln!("retrying: {e}");
                    std::thread::sleep(Duration::from_millis(300));
                }
                Err(e) => panic!("{} asking: {e}", asking.name),
            }
        }
    }
    found
}

/// Where `region` (total `want`, in `task` of `partition`) is, as `host` was named for it:
/// the other Rust instance's store (read from this thread), or a Java instance that runs
/// the task.
fn where_hosted(
    region: &str,
    want: i64,
    partition: i32,
    task: &StreamsTaskId,
    host: &UserEndpoint,
    rust: &[&RustMember],
    javas: &mut [(u16, &mut Peer)],
) -> Result<String, String> {
    if let Some(r) = rust.iter().find(|r| r.endpoint == *host) {
        match r.local(region, partition) {
            Ok(Some(t)) if t == want => Ok(format!("{} (its store: {t})", r.name)),
            other => Err(format!("{region}: {} named, its store: {other:?}", r.name)),
        }
    } else if let Some((port, j)) = javas.iter_mut().find(|(p, _)| host.port == *p) {
        let active = j.active_tasks();
        match active.contains(task) {
            true => Ok(format!("java at {port} (runs {task:?})")),
            false => Err(format!("{region}: java {port} named, runs {active:?}")),
        }
    } else {
        panic!("{region}: an unknown host {host:?}");
    }
}
