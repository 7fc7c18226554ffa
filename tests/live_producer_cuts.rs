//! The producer through the fault proxy, on a broker of its own (issue 15): idempotence
//! while every connection is cut every 25 ms, `delivery.timeout.ms` through a dead proxy, and
//! `buffer.memory`/`max.block.ms` through a paused one.
//!
//! Run: `KSG_CLUSTER_ENV=.kafka/run/cluster.env KSG_PRODUCER_PORT_BASE=<free base>
//! cargo test --test live_producer_cuts -- --ignored` (the broker's version is taken from
//! `KSG_CLUSTER_ENV`'s).

#[path = "support/fault_proxy.rs"]
mod fault_proxy;
#[path = "support/producer_read.rs"]
mod producer_read;

mod common;

use std::collections::BTreeMap;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::{unique_name, Cluster};
use fault_proxy::FaultProxy;
use kafka_streams_group::producer::{Producer, ProducerConfig, ProducerRecord};
use kafka_streams_group::protocol::records::Compression;
use kafka_streams_group::protocol::BrokerErrorKind;
use kafka_streams_group::ClientConfig;
use producer_read::{assert_each_partition_holds, read_back_partitions};

const PARTITIONS: i32 = 3;

/// The test's own broker (stopped when dropped) whose client listener is reached only
/// through the fault proxy: `PROXIED` on base+1 (in place of the SSL listener, so that every
/// port stays in this helper's range) advertised at the proxy's port. Kafka answers Metadata
/// with the endpoints of the listener a request came in on, so a producer bootstrapped at
/// the proxy sends every byte through it (the design of tests/soak_churn.rs).
struct ProxiedBroker {
    run_dir: String,
}

impl ProxiedBroker {
    /// Starts it; the pid of the running `scripts/kafka.sh start` is kept in `starting`
    /// (0 once it returned), for the watchdog.
    fn start(
        run_dir: &str,
        base: u16,
        version: &str,
        proxy_port: u16,
        starting: &AtomicU32,
    ) -> ProxiedBroker {
        let p = |off: u16| base + off;
        let config = format!(
            "listeners=PLAINTEXT://127.0.0.1:{},PROXIED://127.0.0.1:{},SASL_PLAINTEXT://127.0.0.1:{},\
             SASL_SSL://127.0.0.1:{},CONTROLLER://127.0.0.1:{};\
             advertised.listeners=PLAINTEXT://127.0.0.1:{},PROXIED://127.0.0.1:{proxy_port},\
             SASL_PLAINTEXT://127.0.0.1:{},SASL_SSL://localhost:{};\
             listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,\
             SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL,PROXIED:PLAINTEXT",
            p(0),
            p(1),
            p(2),
            p(3),
            p(4),
            p(0),
            p(2),
            p(3),
        );
        let broker = ProxiedBroker {
            run_dir: run_dir.to_string(),
        };
        common::kafka_sh_with(
            run_dir,
            &["start", "--kafka", version],
            &[
                ("KSG_PORT_BASE", base.to_string()),
                ("KSG_BROKER_CONFIG", config),
            ],
            |pid| starting.store(pid, Ordering::SeqCst),
        );
        starting.store(0, Ordering::SeqCst);
        broker
    }
}

impl Drop for ProxiedBroker {
    fn drop(&mut self) {
        stop_broker(&self.run_dir);
    }
}

/// `scripts/kafka.sh stop` for the broker in `run_dir` (no output kept, no failure raised).
fn stop_broker(run_dir: &str) {
    let _ = Command::new("bash")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/kafka.sh"))
        .arg("stop")
        .env("KSG_RUN_DIR", run_dir)
        .output();
}

/// Sets a flag when dropped, so that a scoped helper thread looping on it ends even when
/// the scope's body panics (`std::thread::scope` joins its threads before it unwinds).
struct SetOnDrop<'a>(&'a AtomicBool);

impl Drop for SetOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Idempotence: every connection of the producer is cut (RST and FIN, alternately) every
/// few tens of milliseconds while it produces; afterwards each partition holds exactly the
/// records sent to it, in order, once. Each value is its global sequence number, so a
/// duplicate or a gap shows by position.
///
/// Starts its own broker (same version as `KSG_CLUSTER_ENV`'s) at `KSG_PRODUCER_PORT_BASE`
/// (default 29102). `KSG_MUTANT_NO_IDEMPOTENCE=1` turns idempotence off to show the test
/// fails without it (observed: 10317 records read for 5346 sent on one partition).
///
/// It once hung CI for 50+ minutes: under load a cut reset the connection of `send`'s
/// metadata lookup, `send` returned `Io(ConnectionReset)` (now retried until
/// `max.block.ms`), the `expect` panicked inside `std::thread::scope`, and the scope waited
/// forever for the cutter thread, whose stop flag was never set. The flag is now set on
/// unwinding too, and a watchdog ends the process (naming the step) after 5 minutes.
#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn connection_cuts_mid_produce_give_no_duplicate_and_no_loss() {
    common::init_logging();
    let cluster = Cluster::get();
    let (a, b, c) = cluster.kafka_version();
    let version = format!("{a}.{b}.{c}");
    let base: u16 = std::env::var("KSG_PRODUCER_PORT_BASE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(29102);
    let run_dir = format!(
        "{}/.kafka/producer-proxied-{base}",
        env!("CARGO_MANIFEST_DIR")
    );
    // The pid of a `kafka.sh start` still running: the watchdog ends it before stopping the
    // broker, or the script would go on and leave a broker behind.
    let starting = std::sync::Arc::new(AtomicU32::new(0));
    let watchdog = {
        let run_dir = run_dir.clone();
        let starting = std::sync::Arc::clone(&starting);
        common::Watchdog::start(
            "connection_cuts_mid_produce_give_no_duplicate_and_no_loss",
            Duration::from_secs(
                std::env::var("KSG_PRODUCER_WATCHDOG_SECS")
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(300),
            ),
            move || {
                let pid = starting.load(Ordering::SeqCst);
                if pid != 0 {
                    let _ = Command::new("kill").arg(pid.to_string()).status();
                }
                stop_broker(&run_dir);
            },
        )
    };
    let proxy = FaultProxy::start(format!("127.0.0.1:{}", base + 1).parse().expect("addr"));
    watchdog.step(format!(
        "start the proxied Kafka {version} broker at port base {base}"
    ));
    let _broker = ProxiedBroker::start(&run_dir, base, &version, proxy.addr().port(), &starting);
    let direct = format!("127.0.0.1:{base}");
    let topic = unique_name("ksg-producer-cuts");
    watchdog.step("create the topic");
    kafka_streams_group::admin::create_topics(
        &ClientConfig::new(direct.as_str()),
        &[kafka_streams_group::admin::NewTopic::new(
            &topic, PARTITIONS,
        )],
        Duration::from_secs(30),
    )
    .expect("create topic");

    let config = ProducerConfig::new(
        ClientConfig::new(proxy.addr().to_string())
            .client_id("ksg-live-producer-cuts")
            .request_timeout(Duration::from_secs(5))
            .retry_backoff(Duration::from_millis(20), Duration::from_millis(200))
            // The reconnect backoff on the scale of the cuts, not of a broker outage. A
            // connection cut before its handshake (TCP, two ApiVersions round trips on 4.2.2)
            // is done counts as a failed attempt (as in Java), and the cutter gives every
            // connection 25 ms at most; under load (average 20+ on 2 cores) most handshakes
            // take longer, so with the default curve (50 ms doubling to 1 s) the producer
            // tried about once a second, nearly every try was cut, and 17343 of 20000
            // records were still unacknowledged after the 60 s flush (CI, Kafka 4.2.2).
            // Capped at two cut periods, attempts stay frequent enough that some fall in a
            // window long enough to finish a round trip; the growth of the curve itself is
            // covered by src/client/backoff.rs's unit tests.
            .reconnect_backoff(Duration::from_millis(20), Duration::from_millis(50)),
    )
    .compression(Compression::Lz4)
    .linger(Duration::from_millis(1))
    .batch_size(4 * 1024)
    .idempotence(std::env::var("KSG_MUTANT_NO_IDEMPOTENCE").is_err());
    watchdog.step("create the producer");
    let mut producer = Producer::new(config).expect("producer");
    const N: usize = 20_000;
    let stop = AtomicBool::new(false);
    let cuts = AtomicUsize::new(0);
    let mut expected: BTreeMap<i32, Vec<Vec<u8>>> = BTreeMap::new();
    let started = Instant::now();
    std::thread::scope(|s| {
        let _stop_cuts = SetOnDrop(&stop);
        s.spawn(|| {
            while !stop.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(25));
                if cuts.fetch_add(1, Ordering::SeqCst).is_multiple_of(2) {
                    proxy.reset_all();
                } else {
                    proxy.disconnect_all();
                }
            }
        });
        for i in 0..N {
            if i % 5_000 == 0 {
                watchdog.step(format!("send records {i}.. through the cuts"));
            }
            let value = format!("{i:08}").into_bytes();
            let key = format!("k{}", i % 101).into_bytes();
            let p = producer
                .send(ProducerRecord::new(&topic, Some(&key), Some(&value)))
                .unwrap_or_else(|e| panic!("send record {i}: {e}"));
            expected.entry(p).or_default().push(value);
        }
        watchdog.step("flush through the cuts");
        let r = producer.flush(Instant::now() + Duration::from_secs(60));
        stop.store(true, Ordering::SeqCst);
        r.expect("flush through the cuts");
    });
    let produced = started.elapsed();
    let snapshot = producer.config().client().get_metrics().snapshot();
    eprintln!(
        "{N} records in {produced:?}, {} cuts, {} proxied connections, producer {:?}, \
         metrics {snapshot:?}",
        cuts.load(Ordering::SeqCst),
        proxy.accepted(),
        producer.identity(),
    );
    assert!(
        proxy.accepted() > 3,
        "the cuts reached the producer's connections: {} accepted",
        proxy.accepted()
    );
    watchdog.step("delivery timeout through a dead proxy");
    delivery_timeout_through_a_dead_proxy(&proxy, &topic);
    watchdog.step("buffer.memory through a paused proxy");
    buffer_memory_through_a_paused_proxy(&proxy, &direct);
    watchdog.step("read back");
    let got = read_back_partitions(&direct, &topic, PARTITIONS);
    assert_each_partition_holds(&expected, &got, PARTITIONS);
}

/// `delivery.timeout.ms`: a producer whose every connection is reset (the fault proxy in
/// `Reset` mode) fails its batch once the timeout has passed, with an error that names the
/// partition, the last error and the setting, instead of retrying until the flush deadline;
/// nothing stays queued. (The record is not written: nothing reaches the broker.)
fn delivery_timeout_through_a_dead_proxy(proxy: &FaultProxy, topic: &str) {
    use fault_proxy::Fault;
    use kafka_streams_group::Error;
    let delivery_timeout = Duration::from_secs(3);
    let config = ProducerConfig::new(
        ClientConfig::new(proxy.addr().to_string())
            .client_id("ksg-live-producer-timeout")
            .request_timeout(Duration::from_secs(1))
            .retry_backoff(Duration::from_millis(50), Duration::from_millis(200)),
    )
    .linger(Duration::from_secs(60))
    .delivery_timeout(delivery_timeout);
    let mut p = Producer::new(config).expect("producer");
    // Metadata through the healthy proxy; the batch waits for its linger.
    p.send(ProducerRecord::new(
        topic,
        Some(b"timeout"),
        Some(b"never written"),
    ))
    .expect("send");
    proxy.set_fault(Fault::Reset);
    let started = Instant::now();
    let e = p
        .flush(Instant::now() + Duration::from_secs(30))
        .expect_err("no broker is reachable");
    let elapsed = started.elapsed();
    proxy.set_fault(Fault::PassThrough);
    let text = e.to_string();
    eprintln!("delivery timeout after {elapsed:?}: {text}");
    assert!(
        matches!(e, Error::Timeout { limit, .. } if limit == delivery_timeout),
        "{e:?}"
    );
    assert!(
        text.contains(&format!("{topic}-")) && text.contains("delivery.timeout.ms"),
        "the error names the partition and the setting: {text}"
    );
    assert!(
        elapsed < delivery_timeout * 4,
        "failed by delivery.timeout.ms, not the flush deadline: {elapsed:?}"
    );
    assert_eq!(p.outstanding(), 0, "nothing left queued");
}

/// `buffer.memory` and `max.block.ms` (Java semantics) on a 4 KiB buffer: a record larger
/// than the buffer fails at once (MESSAGE_TOO_LARGE, nothing sent); while the broker answers,
/// `send` makes room by sending (the queued bytes never pass the limit); while the proxy
/// swallows everything (`Blackhole`), `send` blocks and fails after `max.block.ms` with a
/// timeout naming both settings; once the proxy passes traffic again the same `send`
/// succeeds, and every accepted record is written once, in order.
fn buffer_memory_through_a_paused_proxy(proxy: &FaultProxy, direct: &str) {
    use fault_proxy::Fault;
    use kafka_streams_group::Error;
    let topic = unique_name("ksg-producer-buffer-memory");
    kafka_streams_group::admin::create_topics(
        &ClientConfig::new(direct),
        &[kafka_streams_group::admin::NewTopic::new(&topic, 1)],
        Duration::from_secs(30),
    )
    .expect("create topic");
    let (buffer, max_block) = (4096, Duration::from_secs(2));
    let config = ProducerConfig::new(
        ClientConfig::new(proxy.addr().to_string())
            .client_id("ksg-live-producer-buffer-memory")
            .request_timeout(Duration::from_secs(1))
            .retry_backoff(Duration::from_millis(50), Duration::from_millis(200)),
    )
    .linger(Duration::from_secs(60))
    .buffer_memory(buffer)
    .max_block(max_block);
    let mut p = Producer::new(config).expect("producer");
    let record = |i: usize| ProducerRecord::new(&topic, None, Some(&[b'a' + (i % 26) as u8; 1000]));

    let started = Instant::now();
    let e = p
        .send(ProducerRecord::new(&topic, None, Some(&[0u8; 5000])))
        .expect_err("a record over buffer.memory");
    let took = started.elapsed();
    eprintln!("record over buffer.memory: refused after {took:?}: {e}");
    assert!(
        matches!(
            e,
            Error::Broker {
                kind: BrokerErrorKind::MessageTooLarge,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("buffer.memory"), "{e}");
    assert!(took < Duration::from_millis(500), "at once: {took:?}");
    assert_eq!(p.outstanding(), 0);

    // The broker answers: 40 KB through a 4 KiB buffer, never more than 4 KiB queued.
    let mut accepted = Vec::new();
    let started = Instant::now();
    let mut most = 0;
    for i in 0..40 {
        p.send(record(i)).expect("send makes room by sending");
        accepted.push(i);
        most = most.max(p.queued_bytes());
    }
    eprintln!(
        "40 records of 1000 bytes through buffer.memory={buffer} in {:?}; at most {most} \
         bytes queued",
        started.elapsed()
    );
    assert!(most <= buffer && most > buffer / 2, "{most}");

    // The broker is unreachable (every byte swallowed): send blocks, then fails.
    proxy.set_fault(Fault::Blackhole);
    let mut i = accepted.len();
    let first = i;
    let (e, took) = loop {
        let started = Instant::now();
        match p.send(record(i)) {
            Ok(_) => {
                accepted.push(i);
                i += 1;
                assert!(i < first + 10, "the buffer never filled up");
            }
            Err(e) => break (e, started.elapsed()),
        }
    };
    eprintln!("send through a swallowing proxy: failed after {took:?}: {e}");
    assert!(matches!(e, Error::Timeout { .. }), "{e:?}");
    let text = e.to_string();
    assert!(
        text.contains("buffer.memory") && text.contains("max.block.ms") && text.contains("queued"),
        "{text}"
    );
    assert!(
        took >= max_block - Duration::from_millis(100) && took < max_block * 3,
        "blocked for max.block.ms: {took:?}"
    );

    // The broker answers again: the same record goes.
    proxy.set_fault(Fault::PassThrough);
    let started = Instant::now();
    p.send(record(i)).expect("send once the broker answers");
    accepted.push(i);
    eprintln!("send after the proxy passes again: {:?}", started.elapsed());
    p.flush(Instant::now() + Duration::from_secs(30))
        .expect("flush");
    assert_eq!(p.queued_bytes(), 0);
    let got: Vec<Vec<u8>> = read_back_partitions(direct, &topic, 1)
        .remove(&0)
        .unwrap_or_default()
        .into_iter()
        .map(|r| r.value.unwrap_or_default())
        .collect();
    let want: Vec<Vec<u8>> = accepted
        .iter()
        .map(|&i| record(i).value.unwrap_or_default())
        .collect();
    assert_eq!(got.len(), want.len(), "every accepted record once");
    assert!(got == want, "in order");
}
