//! Live: one set of broker connections per processing member (issue 22).
//!
//! * a [`Fetcher`] and a [`Producer`] made `with_client` on one [`SharedClient`] produce and
//!   read back through one connection per broker;
//! * a [`ProcessingRuntime`] holds at most two connections per broker: the one its
//!   processing thread's fetcher, changelog reader, producer, purger and offset commits
//!   share, and the heartbeat thread's (before, every component had its own: 5 on one
//!   broker; then 3 while the offset commits kept their own).
//!
//! Run: `KSG_CLUSTER_ENV=.kafka/run/cluster.env cargo test --test live_shared_client -- --ignored`

mod common;

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::{create_topic, init_logging, unique_name, Cluster, LIVE};
use kafka_streams_group::client::SharedClient;
use kafka_streams_group::consumer::{Fetcher, FetcherConfig, OffsetReset};
use kafka_streams_group::processing::{
    InputRecord, ProcessingConfig, ProcessingRuntime, Processor, StreamsApp, TaskContext,
};
use kafka_streams_group::producer::{Producer, ProducerConfig, ProducerRecord};
use kafka_streams_group::TopicPartition;
use kafka_streams_group::{ClientConfig, Error, StreamsTaskId, StreamsTopology, Subtopology};

/// The tests count this process's sockets: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// This process's established TCP connections, per remote port, among `ports`.
fn connections_to(ports: &[u16]) -> BTreeMap<u16, usize> {
    let inodes: Vec<String> = std::fs::read_dir("/proc/self/fd")
        .expect("/proc/self/fd")
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter_map(|l| {
            let l = l.to_string_lossy().into_owned();
            Some(l.strip_prefix("socket:[")?.strip_suffix(']')?.to_string())
        })
        .collect();
    let mut out: BTreeMap<u16, usize> = ports.iter().map(|p| (*p, 0)).collect();
    for table in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
        let text = std::fs::read_to_string(table).unwrap_or_default();
        for line in text.lines().skip(1) {
            let cols: Vec<&str> = line.split_whitespace().collect();
            let (Some(remote), Some(state), Some(inode)) = (cols.get(2), cols.get(3), cols.get(9))
            else {
                continue;
            };
            let port = remote
                .rsplit_once(':')
                .and_then(|(_, p)| u16::from_str_radix(p, 16).ok());
            if *state != "01" || !inodes.iter().any(|i| i == inode) {
                continue;
            }
            if let Some(n) = port.and_then(|p| out.get_mut(&p)) {
                *n += 1;
            }
        }
    }
    out
}

fn broker_ports(cluster: &Cluster) -> Vec<u16> {
    cluster
        .plaintext()
        .split(',')
        .filter_map(|a| a.rsplit_once(':')?.1.parse().ok())
        .collect()
}

/// A fetcher and a producer on one shared client: 50 records out and back, one connection
/// per broker (the partition's leader, found through the bootstrap connection it reuses on
/// one broker), three users of the client.
#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn a_fetcher_and_a_producer_share_one_connection_per_broker() {
    let _ = LIVE;
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    init_logging();
    let cluster = Cluster::get();
    let topic = unique_name("shared-client");
    create_topic(&cluster, &topic, 1);
    let config = ClientConfig::new(cluster.plaintext());
    let shared = SharedClient::connect(&config, Duration::from_secs(30)).expect("connect");
    let mut producer =
        Producer::with_client(shared.clone(), ProducerConfig::new(config.clone())).expect("p");
    let mut fetcher = Fetcher::with_client(
        shared.clone(),
        FetcherConfig::new(config)
            .auto_offset_reset(OffsetReset::Earliest)
            .fetch_max_wait(Duration::from_millis(100)),
    );
    assert_eq!(shared.users(), 3);
    fetcher.assign([TopicPartition::new(&topic, 0)]);
    // A first poll (empty topic) before the sends: the fetch long-poll and the produce
    // then go over the same connection, one after the other.
    let _ = fetcher
        .poll(Instant::now() + Duration::from_millis(200))
        .expect("poll");
    for i in 0..50 {
        let k = format!("k{i}");
        producer
            .send(ProducerRecord::new(&topic, Some(k.as_bytes()), Some(b"v")))
            .expect("send");
    }
    producer
        .flush(Instant::now() + Duration::from_secs(30))
        .expect("flush");
    let mut got = 0;
    let end = Instant::now() + Duration::from_secs(30);
    while got < 50 && Instant::now() < end {
        for part in fetcher
            .poll(Instant::now() + Duration::from_millis(500))
            .expect("poll")
        {
            got += part.for_each_record(|_| {}).expect("decode");
        }
    }
    assert_eq!(got, 50, "every record read back");
    let ports = broker_ports(&cluster);
    let open = shared.lock().connection_count();
    let counted = connections_to(&ports);
    eprintln!("shared client: {open} connection(s); sockets per broker port {counted:?}");
    assert!(open >= 1 && open <= ports.len(), "{open} connections");
    assert!(counted.values().all(|n| *n <= 1), "{counted:?}");
    assert_eq!(counted.values().sum::<usize>(), open, "{counted:?}");
}

/// Copies each record to `output`.
struct Copy {
    output: String,
}

impl Processor for Copy {
    fn process(&mut self, ctx: &mut TaskContext<'_>, record: &InputRecord) -> Result<(), Error> {
        ctx.send(
            &self.output,
            record.key.as_deref(),
            record.value.as_deref(),
            record.timestamp,
            &record.headers,
        )?;
        Ok(())
    }
}

/// A processing member that fetched, produced and committed holds at most two connections
/// per broker: the processing thread's shared one (fetcher, changelog reader, producer,
/// purger, offset commits and fetches) and the heartbeat thread's, kept apart on purpose (its
/// deadlines must not wait behind a Fetch). Before, the fetcher, changelog reader and
/// producer each had their own (five on the input partition's leader), then the offset
/// commits still had their own (three).
#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn a_processing_member_holds_two_connections_per_broker() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    init_logging();
    let cluster = Cluster::get();
    let app = unique_name("shared-rt");
    let (input, output) = (format!("{app}-in"), format!("{app}-out"));
    create_topic(&cluster, &input, 1);
    create_topic(&cluster, &output, 1);
    {
        let mut p = Producer::new(ProducerConfig::new(ClientConfig::new(cluster.plaintext())))
            .expect("producer");
        for i in 0..20 {
            let k = format!("k{i}");
            p.send(ProducerRecord::new(&input, Some(k.as_bytes()), Some(b"v")))
                .expect("send");
        }
        p.flush(Instant::now() + Duration::from_secs(30))
            .expect("flush");
    }
    let ports = broker_ports(&cluster);
    let before = connections_to(&ports);
    assert!(before.values().all(|n| *n == 0), "left over: {before:?}");
    let topology = StreamsTopology::new().subtopology(Subtopology::new("0").source_topic(&input));
    let out = output.clone();
    let app_def = StreamsApp::new(topology, move |_t: &StreamsTaskId| {
        Ok(Box::new(Copy {
            output: out.clone(),
        }) as Box<dyn Processor>)
    });
    let config = ProcessingConfig::new(cluster.plaintext(), &app)
        .commit_interval(Duration::from_millis(200))
        .poll_wait(Duration::from_millis(100));
    let mut rt = ProcessingRuntime::start(config, app_def).expect("start");
    let end = Instant::now() + Duration::from_secs(60);
    while rt.stats().processed < 20 || rt.stats().commits == 0 {
        assert!(Instant::now() < end, "not done: {:?}", rt.stats());
        rt.run_once().expect("run_once");
    }
    rt.commit_all().expect("commit");
    let during = connections_to(&ports);
    let stats = rt.stats();
    rt.close().expect("close");
    eprintln!("processing member: sockets per broker port {during:?}; {stats:?}");
    assert!(stats.sent >= 20, "{stats:?}");
    assert!(during.values().all(|n| *n <= 2), "{during:?}");
    assert!(during.values().sum::<usize>() >= 2, "{during:?}");
}
