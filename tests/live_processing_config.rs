//! Live: what `ProcessingConfig` settings do to a running processing member (issue 21):
//!
//! * `default.deserialization.exception.handler`: under `LogAndFail` a record whose value
//!   does not deserialize fails the runtime and is read again by the next instance; under
//!   `LogAndContinue` it is skipped, counted in `dropped_records` and committed past, so a
//!   restarted instance does not read it again.
//!
//! Run: `KSG_CLUSTER_ENV=.kafka/run/cluster.env cargo test --test live_processing_config --
//! --ignored`

mod common;

use std::time::{Duration, Instant};

use common::{create_topic, init_logging, unique_name, Cluster, LIVE};
use kafka_streams_group::processing::{
    DeserializationHandler, InputRecord, LongSerde, ProcessingConfig, ProcessingRuntime,
    ProcessingStats, Processor, Serde, StreamsApp, TaskContext,
};
use kafka_streams_group::producer::{Producer, ProducerConfig, ProducerRecord};
use kafka_streams_group::{ClientConfig, Error, StreamsTaskId, StreamsTopology, Subtopology};

/// Reads each value as a Kafka `Long` (the typed error on bad bytes) and sends it on.
struct Longs {
    output: String,
}

impl Processor for Longs {
    fn process(&mut self, ctx: &mut TaskContext<'_>, record: &InputRecord) -> Result<(), Error> {
        let Some(n) = record.value_with(&LongSerde)? else {
            return Ok(());
        };
        let value = LongSerde.serialize(&n);
        ctx.send(&self.output, None, Some(&value), record.timestamp, &[])?;
        Ok(())
    }
}

fn longs_app(input: &str, output: &str) -> StreamsApp {
    let topology = StreamsTopology::new().subtopology(Subtopology::new("0").source_topic(input));
    let output = output.to_string();
    StreamsApp::new(topology, move |_t: &StreamsTaskId| {
        Ok(Box::new(Longs {
            output: output.clone(),
        }) as Box<dyn Processor>)
    })
}

fn feed(cluster: &Cluster, topic: &str, values: &[Vec<u8>]) {
    let mut p = Producer::new(ProducerConfig::new(ClientConfig::new(cluster.plaintext())))
        .expect("producer");
    for v in values {
        p.send(ProducerRecord::new(topic, None, Some(v)))
            .expect("send");
    }
    p.flush(Instant::now() + Duration::from_secs(30))
        .expect("flush");
}

fn start_longs(
    cluster: &Cluster,
    app: &str,
    input: &str,
    handler: DeserializationHandler,
) -> ProcessingRuntime {
    let config = ProcessingConfig::new(cluster.plaintext(), app)
        .commit_interval(Duration::from_millis(200))
        .poll_wait(Duration::from_millis(100))
        .deserialization_handler(handler);
    ProcessingRuntime::start(config, longs_app(input, &format!("{app}-out"))).expect("start")
}

/// Runs `rt` until `done` (at most 60 s) or an error, which is returned.
fn run_until(
    rt: &mut ProcessingRuntime,
    mut done: impl FnMut(&ProcessingStats) -> bool,
) -> Result<(), Error> {
    let end = Instant::now() + Duration::from_secs(60);
    while !done(&rt.stats()) {
        assert!(Instant::now() < end, "not done in 60 s: {:?}", rt.stats());
        rt.run_once()?;
    }
    Ok(())
}

/// Offsets 0..=2 hold Longs, offset 3 (the last) holds 3 bytes. `LogAndFail`: the runtime fails
/// at offset 3 with the typed error; a second `LogAndFail` instance fails at offset 3 again
/// (re-delivered). A `LogAndContinue` instance then skips it (dropped 1), commits past it
/// and closes; a last instance, fed one more record, processes only that one: the bad
/// record is not read again.
#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn a_skipped_record_is_committed_past_and_a_failed_one_is_read_again() {
    let _ = LIVE;
    init_logging();
    let cluster = Cluster::get();
    let app = unique_name("deser");
    let input = format!("{app}-in");
    create_topic(&cluster, &input, 1);
    create_topic(&cluster, &format!("{app}-out"), 1);
    let long = |n: i64| n.to_be_bytes().to_vec();
    feed(
        &cluster,
        &input,
        &[long(0), long(1), long(2), vec![1, 2, 3]],
    );

    for attempt in 0..2 {
        let mut rt = start_longs(&cluster, &app, &input, DeserializationHandler::LogAndFail);
        let e = run_until(&mut rt, |_| false).expect_err("fails on offset 3");
        eprintln!("LogAndFail attempt {attempt}: {e}; {:?}", rt.stats());
        match &e {
            Error::Deserialization {
                topic,
                partition: 0,
                offset: 3,
                part: "value",
                message,
            } => {
                assert_eq!(topic, &input);
                assert!(message.contains("is not 8"), "{message}");
            }
            other => panic!("not the typed error: {other:?}"),
        }
        assert_eq!(rt.stats().dropped_records, 0);
        rt.close().expect("close");
    }

    let mut rt = start_longs(
        &cluster,
        &app,
        &input,
        DeserializationHandler::LogAndContinue,
    );
    run_until(&mut rt, |s| s.dropped_records == 1).expect("skips");
    let stats = rt.stats();
    eprintln!("LogAndContinue: {stats:?}");
    // Nothing follows the bad record: only its own skip moves the committed position.
    assert_eq!((stats.processed, stats.dropped_records), (3, 1));
    rt.close().expect("close commits past the skipped record");

    feed(&cluster, &input, &[long(5)]);
    let mut rt = start_longs(&cluster, &app, &input, DeserializationHandler::LogAndFail);
    run_until(&mut rt, |s| s.processed >= 1).expect("no error: offset 3 is not read again");
    // Give a re-delivered offset 3 a chance to show up.
    let settle = Instant::now() + Duration::from_secs(1);
    while Instant::now() < settle {
        rt.run_once().expect("offset 3 not read again");
    }
    let stats = rt.stats();
    eprintln!("after the restart: {stats:?}");
    assert_eq!((stats.processed, stats.dropped_records), (1, 0));
    rt.close().expect("close");
}

/// Issue 21 items 8 and 9: a processing member started from a Java instance's properties
/// (`application.server`, `group.instance.id`, `client.rack`, `client.tag.zone`,
/// `replication.factor`, and keys that mean nothing here) is described by the broker with
/// that endpoint, instance id, rack and tag, and its changelog topic with that replication
/// factor. (Before, `from_properties` refused these keys and the runtime joined with none
/// of them.) Static membership needs Kafka 4.4+: on older brokers the instance id is left
/// out and the rest is checked.
#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn a_processing_members_settings_reach_the_broker() {
    init_logging();
    let cluster = Cluster::get();
    let app = unique_name("pcfg");
    let input = format!("{app}-in");
    create_topic(&cluster, &input, 2);
    let instance = format!("{app}-instance-1");
    let static_member = cluster.kafka_version() >= (4, 4, 0);
    let mut props = vec![
        ("application.id", app.as_str()),
        ("bootstrap.servers", cluster.plaintext()),
        ("application.server", "127.0.0.1:7077"),
        ("client.rack", "rack-a"),
        ("client.tag.zone", "zone-1"),
        ("replication.factor", "1"),
        ("num.stream.threads", "1"),
        ("state.dir", "/tmp/kafka-streams"),
        (
            "default.key.serde",
            "org.apache.kafka.common.serialization.Serdes$StringSerde",
        ),
        ("poll.ms", "50"),
    ];
    if static_member {
        props.push(("group.instance.id", instance.as_str()));
    }
    let config = ProcessingConfig::from_properties(props).expect("a Java instance's properties");
    let changelog = format!("{app}-store-changelog");
    let topology = StreamsTopology::new().subtopology(
        Subtopology::new("0")
            .source_topic(&input)
            .state_changelog_topic(kafka_streams_group::TopicInfo::new(&changelog)),
    );
    let app_def = StreamsApp::new(topology, |_t: &StreamsTaskId| {
        Ok(Box::new(Longs {
            output: "unused".into(),
        }) as Box<dyn Processor>)
    });
    let mut rt = ProcessingRuntime::start(config, app_def).expect("start");
    let end = Instant::now() + Duration::from_secs(60);
    let (d, member) = loop {
        assert!(Instant::now() < end, "not described in 60 s");
        rt.run_once().expect("run_once");
        let d = rt
            .handle()
            .describe_group(Duration::from_secs(10))
            .expect("describe");
        let member = d.member(&rt.handle().member_id()).cloned();
        if let (Some(m), Some(_)) = (member, &d.topology) {
            break (d, m);
        }
    };
    eprintln!("described member: {member:#?}");
    let endpoint = member.user_endpoint.as_ref().expect("endpoint");
    assert_eq!((endpoint.host.as_str(), endpoint.port), ("127.0.0.1", 7077));
    // Java's getMainConsumerConfigs suffixes the thread index, for one thread too.
    let suffixed = format!("{instance}-1");
    let want_instance = static_member.then_some(suffixed.as_str());
    assert_eq!(member.instance_id.as_deref(), want_instance);
    assert_eq!(member.rack_id.as_deref(), Some("rack-a"));
    assert_eq!(
        member.client_tags.get("zone").map(String::as_str),
        Some("zone-1")
    );
    let described = d.topology.expect("topology");
    let sub = described.subtopology_by_id("0").expect("subtopology 0");
    eprintln!(
        "described changelog topics: {:?}",
        sub.state_changelog_topics
    );
    assert_eq!(sub.state_changelog_topics[0].name, changelog);
    assert_eq!(sub.state_changelog_topics[0].replication_factor, 1);
    rt.close().expect("close");
}
