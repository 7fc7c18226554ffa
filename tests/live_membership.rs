//! Live membership tests against the harness broker (scripts/test.sh starts it): joining,
//! splitting tasks, leaving, fencing by session timeout, missing topics, application shutdown,
//! and a busy application. Heartbeat interval 500 ms, session timeout 3 s (scripts/kafka.sh).

mod common;

use common::member::{wait_for, Member};

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use kafka_streams_group::{
    StreamsGroupConfig, StreamsGroupSession, StreamsGroupState, StreamsStatusCode, StreamsTaskId,
    StreamsTopology, Subtopology,
};

const LIVE: &str = common::LIVE;

fn simple_topology(input: &str) -> StreamsTopology {
    StreamsTopology::new().subtopology(Subtopology::new("0").source_topic(input))
}

fn all_tasks(subtopologies: &[&str], partitions: i32) -> BTreeSet<StreamsTaskId> {
    subtopologies
        .iter()
        .flat_map(|s| (0..partitions).map(move |p| StreamsTaskId::new(*s, p)))
        .collect()
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn join_with_missing_source_topic_reports_missing_source_topics_then_tasks_once_created() {
    let _ = LIVE;
    common::init_logging();
    let cluster = common::Cluster::get();
    let group = common::unique_name("ksg-missing");
    let input = common::unique_name("ksg-late-topic");
    let config = StreamsGroupConfig::new(cluster.plaintext(), &group, simple_topology(&input))
        .join_timeout(Duration::from_secs(30));
    let mut session = StreamsGroupSession::join(config).expect("join");
    assert!(session.member_epoch() > 0, "joined with a positive epoch");
    assert_eq!(session.member_id().len(), 22, "Java-style member id");
    let assignment = session.heartbeat().expect("heartbeat");
    let codes: Vec<_> = assignment.statuses.iter().map(|s| s.code).collect();
    assert!(
        codes.contains(&StreamsStatusCode::MissingSourceTopics),
        "statuses: {:?}",
        assignment.statuses
    );
    assert!(!assignment.is_group_ready);
    assert_eq!(assignment.active().count(), 0);

    // Once the topic exists, the same member gets its tasks without rejoining.
    let member_id = session.member_id().to_string();
    common::create_topic(&cluster, &input, 3);
    let deadline = Instant::now() + Duration::from_secs(20);
    let assignment = loop {
        let a = session.heartbeat().expect("heartbeat");
        if a.active().count() == 3 {
            break a;
        }
        assert!(
            Instant::now() < deadline,
            "no tasks after topic creation: {a:?}"
        );
        std::thread::sleep(session.heartbeat_interval());
    };
    assert!(assignment.is_group_ready, "{:?}", assignment.statuses);
    assert_eq!(session.member_id(), member_id);
    session.close().expect("leave");
    assert!(session.is_closed());
    assert!(matches!(session.state(), StreamsGroupState::Closed));
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn one_member_gets_every_task_and_the_broker_creates_internal_topics() {
    common::init_logging();
    let cluster = common::Cluster::get();
    let group = common::unique_name("ksg-one");
    let input = common::unique_name("ksg-in");
    common::create_topic(&cluster, &input, 4);
    let config = StreamsGroupConfig::new(
        cluster.plaintext(),
        &group,
        common::counts_topology(&group, &input),
    );
    let mut m = Member::join("m", config);
    let expected = all_tasks(&["0", "1"], 4);
    let took = wait_for(
        &mut [&mut m],
        Duration::from_secs(30),
        "all 8 tasks",
        |ms| ms[0].active() == expected && ms[0].handle.assignment().is_group_ready,
    );
    eprintln!("one member: all {} tasks after {took:?}", expected.len());
    assert!(matches!(
        m.handle.state(),
        StreamsGroupState::Stable | StreamsGroupState::Reconciling
    ));

    // The broker created the repartition and changelog topics with the input's partitions.
    let mut client = kafka_streams_group::client::Client::connect(
        kafka_streams_group::client::ClientOptions::new([cluster.plaintext_first()]),
        Instant::now() + Duration::from_secs(10),
    )
    .expect("client");
    let repartition = format!("{group}-counts-repartition");
    let changelog = format!("{group}-counts-changelog");
    let md = client
        .metadata(
            Some(&[repartition.as_str(), changelog.as_str()]),
            Instant::now() + Duration::from_secs(10),
        )
        .expect("metadata");
    for name in [&repartition, &changelog] {
        let t = md.topic(name).unwrap_or_else(|| panic!("{name} missing"));
        assert_eq!(t.error_code, 0, "{name}: error {}", t.error_code);
        assert_eq!(t.partitions.len(), 4, "{name} partitions");
    }
    m.close();
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn two_members_split_then_one_leaves_and_the_other_takes_everything() {
    common::init_logging();
    let cluster = common::Cluster::get();
    let group = common::unique_name("ksg-two");
    let input = common::unique_name("ksg-in");
    common::create_topic(&cluster, &input, 4);
    let topology = common::counts_topology(&group, &input);
    let mut a = Member::join(
        "a",
        StreamsGroupConfig::new(cluster.plaintext(), &group, topology.clone()),
    );
    let mut b = Member::join(
        "b",
        StreamsGroupConfig::new(cluster.plaintext(), &group, topology),
    );
    let expected = all_tasks(&["0", "1"], 4);
    let took = wait_for(
        &mut [&mut a, &mut b],
        Duration::from_secs(30),
        "an even split",
        |ms| {
            let (x, y) = (ms[0].active(), ms[1].active());
            x.len() == 4
                && y.len() == 4
                && x.is_disjoint(&y)
                && x.union(&y).cloned().collect::<BTreeSet<_>>() == expected
        },
    );
    eprintln!("two members: split 4/4 after {took:?}");

    // A leaves: B holds everything within a few heartbeat intervals.
    a.close();
    let start = Instant::now();
    wait_for(
        &mut [&mut b],
        Duration::from_secs(10),
        "b holds all",
        |ms| ms[0].active() == expected,
    );
    let took = start.elapsed();
    eprintln!("after a left: b holds all 8 tasks after {took:?}");
    assert!(took < Duration::from_secs(5), "takeover took {took:?}");
    b.close();
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn a_member_that_stops_heartbeating_is_fenced_and_the_other_takes_over() {
    common::init_logging();
    let cluster = common::Cluster::get();
    let group = common::unique_name("ksg-fence");
    let input = common::unique_name("ksg-in");
    common::create_topic(&cluster, &input, 4);
    let topology = simple_topology(&input);
    let mut a = Member::join(
        "a",
        StreamsGroupConfig::new(cluster.plaintext(), &group, topology.clone()),
    );
    let mut b = Member::join(
        "b",
        StreamsGroupConfig::new(cluster.plaintext(), &group, topology),
    );
    wait_for(
        &mut [&mut a, &mut b],
        Duration::from_secs(30),
        "a split",
        |ms| ms[0].active().len() == 2 && ms[1].active().len() == 2,
    );
    // Dropping the handle stops the heartbeat thread without a leave: the broker must expire
    // the member after the session timeout (3 s) and hand its tasks to b.
    let Member { handle, .. } = a;
    let dropped = Instant::now();
    drop(handle);
    assert!(
        dropped.elapsed() < Duration::from_millis(1500),
        "drop took {:?}",
        dropped.elapsed()
    );
    let took = wait_for(
        &mut [&mut b],
        Duration::from_secs(15),
        "b holds all",
        |ms| ms[0].active().len() == 4,
    );
    eprintln!("a stopped heartbeating; b holds all 4 tasks after {took:?}");
    assert!(
        took >= Duration::from_secs(2),
        "takeover before the session timeout: {took:?}"
    );
    b.close();
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn a_shutdown_request_reaches_the_other_member() {
    common::init_logging();
    let cluster = common::Cluster::get();
    let group = common::unique_name("ksg-shutdown");
    let input = common::unique_name("ksg-in");
    common::create_topic(&cluster, &input, 2);
    let topology = simple_topology(&input);
    let mut a = Member::join(
        "a",
        StreamsGroupConfig::new(cluster.plaintext(), &group, topology.clone()),
    );
    let mut b = Member::join(
        "b",
        StreamsGroupConfig::new(cluster.plaintext(), &group, topology),
    );
    wait_for(
        &mut [&mut a, &mut b],
        Duration::from_secs(30),
        "a split",
        |ms| ms[0].active().len() == 1 && ms[1].active().len() == 1,
    );
    a.handle
        .request_application_shutdown()
        .expect("request shutdown");
    let mut changes = b.handle.subscribe_assignment();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let assignment = changes
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .expect("b sees SHUTDOWN_APPLICATION before the deadline");
        if assignment
            .statuses
            .iter()
            .any(|s| s.code == StreamsStatusCode::ShutdownApplication)
        {
            assert!(assignment.shutdown_requested());
            break;
        }
    }
    a.close();
    b.close();
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn the_heartbeat_thread_keeps_a_busy_member_stable() {
    common::init_logging();
    let cluster = common::Cluster::get();
    let group = common::unique_name("ksg-busy");
    let input = common::unique_name("ksg-in");
    common::create_topic(&cluster, &input, 4);
    let mut m = Member::join(
        "m",
        StreamsGroupConfig::new(cluster.plaintext(), &group, simple_topology(&input)),
    );
    // Wait until the member *runs* all four tasks and the broker has seen that (Stable): the
    // target alone can arrive a moment before the application reconciled it.
    wait_for(
        &mut [&mut m],
        Duration::from_secs(30),
        "all tasks running, stable",
        |ms| {
            ms[0].active().len() == 4
                && ms[0].running_active().len() == 4
                && matches!(ms[0].handle.state(), StreamsGroupState::Stable)
        },
    );
    let epoch = m.handle.member_epoch();
    let member_id = m.handle.member_id();
    let heartbeats_before = m.handle.metrics().heartbeats;
    // 4 s (8 heartbeat intervals, more than the session timeout) of set_task_state at
    // about 200 calls per second.
    let start = Instant::now();
    let mut calls = 0u32;
    while start.elapsed() < Duration::from_secs(4) {
        m.handle
            .set_task_state(m.runtime.owned_assignment())
            .expect("set_task_state");
        calls += 1;
        std::thread::sleep(Duration::from_millis(5));
    }
    let metrics = m.handle.metrics();
    eprintln!(
        "busy member: {calls} set_task_state calls, {} heartbeats, latency max {:?} mean {:?}",
        metrics.heartbeats - heartbeats_before,
        metrics.heartbeat_latency_max,
        metrics.heartbeat_latency_mean
    );
    assert!(matches!(m.handle.state(), StreamsGroupState::Stable));
    assert_eq!(m.handle.member_epoch(), epoch, "no rebalance while busy");
    assert_eq!(m.handle.member_id(), member_id);
    assert_eq!(m.active().len(), 4);
    assert_eq!(metrics.rejoins, 0);
    // Unchanged task state must not turn every call into a heartbeat.
    assert!(
        metrics.heartbeats - heartbeats_before < 40,
        "{} heartbeats in 4 s",
        metrics.heartbeats - heartbeats_before
    );
    m.close();
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn static_membership_works_on_4_4_and_fails_at_join_naming_the_version_before() {
    common::init_logging();
    let cluster = common::Cluster::get();
    let group = common::unique_name("ksg-static");
    let input = common::unique_name("ksg-in");
    common::create_topic(&cluster, &input, 2);
    let instance = common::unique_name("instance");
    let config = || {
        StreamsGroupConfig::new(cluster.plaintext(), &group, simple_topology(&input))
            .instance_id(instance.clone())
            .join_timeout(Duration::from_secs(30))
    };
    if cluster.kafka_version() < (4, 4, 0) {
        let err = StreamsGroupSession::join(config()).expect_err("static membership needs 4.4");
        let text = err.to_string();
        eprintln!("Kafka {:?}: {text}", cluster.kafka_version());
        assert!(text.contains("4.4") && text.contains(&instance), "{text}");
        return;
    }
    // 4.4+: join, own both tasks, leave as a static member (epoch -2), then the same
    // instance id comes back (any member id) and gets its tasks again.
    let mut m = Member::join("m", config());
    wait_for(&mut [&mut m], Duration::from_secs(30), "both tasks", |ms| {
        ms[0].active().len() == 2
    });
    let first_member_id = m.handle.member_id();
    m.close();
    let mut again = Member::join("again", config());
    wait_for(
        &mut [&mut again],
        Duration::from_secs(30),
        "both tasks again",
        |ms| ms[0].active().len() == 2,
    );
    assert_ne!(
        again.handle.member_id(),
        first_member_id,
        "a new process, a new member id"
    );
    again.close();
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn task_offsets_reach_4_4_brokers_and_are_withheld_from_older_ones() {
    common::init_logging();
    let cluster = common::Cluster::get();
    let group = common::unique_name("ksg-offsets");
    let input = common::unique_name("ksg-in");
    common::create_topic(&cluster, &input, 2);
    let mut m = Member::join(
        "m",
        StreamsGroupConfig::new(cluster.plaintext(), &group, simple_topology(&input)),
    );
    wait_for(
        &mut [&mut m],
        Duration::from_secs(30),
        "both tasks running, stable",
        |ms| {
            ms[0].active().len() == 2
                && ms[0].running_active().len() == 2
                && matches!(ms[0].handle.state(), StreamsGroupState::Stable)
        },
    );
    let mut offsets = kafka_streams_group::StreamsTaskOffsets::new();
    for t in m.active() {
        offsets = offsets.offset(t.clone(), 42).end_offset(t, 100);
    }
    // A 4.2/4.3 broker answers INVALID_REQUEST to any task offsets, which would stop the
    // member; a 4.4 broker accepts them. Either way the member must stay stable.
    m.handle
        .set_task_state_with_optional_offsets(m.runtime.owned_assignment(), Some(offsets))
        .expect("set_task_state_with_optional_offsets");
    for _ in 0..3 {
        m.handle
            .heartbeat_now()
            .expect("heartbeat after reporting offsets");
    }
    assert!(
        matches!(m.handle.state(), StreamsGroupState::Stable),
        "{:?}",
        m.handle.state()
    );
    m.close();
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn join_with_a_wrong_password_fails_fast_with_a_typed_error() {
    common::init_logging();
    let cluster = common::Cluster::get();
    let client =
        kafka_streams_group::ClientConfig::new(cluster.value("KSG_BOOTSTRAP_SASL_PLAINTEXT"))
            .security_protocol(kafka_streams_group::SecurityProtocol::SaslPlaintext)
            .sasl(kafka_streams_group::SaslConfig::scram_sha512(
                cluster.value("KSG_SCRAM_USERNAME"),
                "not-the-password",
            ));
    let config = StreamsGroupConfig::new(
        "unused:1",
        common::unique_name("ksg-badpw"),
        simple_topology("t"),
    )
    .client_config(client)
    .join_timeout(Duration::from_secs(30));
    let started = Instant::now();
    let err = StreamsGroupSession::join(config).expect_err("wrong password");
    let took = started.elapsed();
    eprintln!("wrong password: {err} after {took:?}");
    assert!(
        matches!(err, kafka_streams_group::Error::SaslAuthentication { .. }),
        "{err:?}"
    );
    assert!(!err.is_retriable());
    assert!(
        took < Duration::from_secs(5),
        "a refused login must not be retried until the join timeout: {took:?}"
    );
    assert!(!err.to_string().contains("not-the-password"));
}
