//! Live interoperability with real Java Kafka Streams 4.4 (testing/streams-peer): a Java
//! instance and a Rust member in one Streams group, with the same topology
//! (`common::counts_topology`), splitting tasks, handing them over on leave, crash and session
//! expiry, passing application shutdowns both ways, seeing each other's endpoints, and
//! `describe_streams_group` agreeing with Kafka's own `kafka-streams-groups.sh`.
//!
//! The peer is started as a child process (`$KSG_STREAMS_PEER run …`, default
//! `scripts/streams-peer.sh`) and driven over stdin/stdout; it is killed when its [`Peer`] is
//! dropped, so a failing test leaves no JVM behind. Brokers older than 4.2 are skipped (no
//! GA Streams rebalance protocol). Broker settings: heartbeat 500 ms, session timeout 3 s.

mod common;

use common::member::Member;
use common::peer::{json_string_field, parse_task_list, Peer, PeerOptions};

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use kafka_streams_group::{
    describe_streams_group, describe_streams_groups, ClientConfig, DescribedGroupState, Error,
    StreamsGroupConfig, StreamsGroupDescription, StreamsStatusCode, StreamsTaskId,
};

// ---------------------------------------------------------------------------------------------
// Helpers.

/// A fresh group with an input topic; `None` (test skipped) before Kafka 4.2.
struct Setup {
    cluster: common::Cluster,
    group: String,
    input: String,
    all: BTreeSet<StreamsTaskId>,
}

fn setup(prefix: &str, partitions: i32) -> Option<Setup> {
    common::init_logging();
    let cluster = common::Cluster::get();
    let v = cluster.kafka_version();
    if v < (4, 2, 0) {
        eprintln!(
            "SKIPPED: Kafka {}.{}.{} has no GA Streams rebalance protocol (needs 4.2+)",
            v.0, v.1, v.2
        );
        return None;
    }
    let group = common::unique_name(prefix);
    let input = common::unique_name("ksg-interop-in");
    common::create_topic(&cluster, &input, partitions);
    let all = ["0", "1"]
        .iter()
        .flat_map(|s| (0..partitions).map(move |p| StreamsTaskId::new(*s, p)))
        .collect();
    Some(Setup {
        cluster,
        group,
        input,
        all,
    })
}

impl Setup {
    fn peer(&self, app_server: Option<String>) -> Peer {
        Peer::start(
            &self.cluster,
            PeerOptions {
                group: &self.group,
                input: &self.input,
                app_server,
                tags: vec![("zone", "java")],
            },
        )
    }

    fn rust_config(&self) -> StreamsGroupConfig {
        StreamsGroupConfig::new(
            self.cluster.plaintext(),
            &self.group,
            common::counts_topology(&self.group, &self.input),
        )
        .client_tags([("zone", "rust")])
    }

    fn describe(&self) -> StreamsGroupDescription {
        describe_streams_group(
            &ClientConfig::new(self.cluster.plaintext()),
            &self.group,
            Duration::from_secs(10),
        )
        .expect("describe_streams_group")
    }
}

/// A free local port for a user endpoint (nothing listens on it; it is only advertised).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

/// Observes the Java peer and the Rust member (either may be absent) every ~100 ms until
/// `done(java_active, rust_running_active)` holds; asserts on every observation that no task
/// runs active on both. The Rust side is read first: its running set only changes in
/// `reconcile`, so a task in both observations was running on both at the moment Java answered,
/// unless Java's thread metadata lagged (see `Peer::active_tasks_disjoint_from`).
fn watch(
    java: Option<&mut Peer>,
    rust: Option<&mut Member>,
    timeout: Duration,
    what: &str,
    done: impl Fn(&BTreeSet<StreamsTaskId>, &BTreeSet<StreamsTaskId>) -> bool,
) -> Duration {
    let start = Instant::now();
    let mut java = java;
    let mut rust = rust;
    loop {
        let r = match rust.as_deref_mut() {
            Some(m) => {
                m.reconcile();
                m.running_active()
            }
            None => BTreeSet::new(),
        };
        let j = match java.as_deref_mut() {
            Some(p) => p.active_tasks_disjoint_from(&r),
            None => BTreeSet::new(),
        };
        if done(&j, &r) {
            return start.elapsed();
        }
        assert!(
            start.elapsed() < timeout,
            "timed out after {timeout:?} waiting for {what}: java {j:?}, rust {r:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The disjoint split of `all` between two non-empty sides.
fn split(
    all: &BTreeSet<StreamsTaskId>,
) -> impl Fn(&BTreeSet<StreamsTaskId>, &BTreeSet<StreamsTaskId>) -> bool + '_ {
    move |j, r| {
        !j.is_empty()
            && !r.is_empty()
            && j.is_disjoint(r)
            && j.union(r).cloned().collect::<BTreeSet<_>>() == *all
    }
}

/// One member line of `kafka-streams-groups.sh --describe --members --verbose`.
#[derive(Debug)]
struct ToolMember {
    member_id: String,
    process_id: String,
    client_id: String,
    active: BTreeSet<StreamsTaskId>,
}

/// Runs Kafka's StreamsGroupCommand on the harness broker's jars.
fn kafka_streams_groups_describe(cluster: &common::Cluster, group: &str) -> String {
    common::kafka_tool(
        cluster,
        "org.apache.kafka.tools.streams.StreamsGroupCommand",
        &[
            "--bootstrap-server",
            cluster.plaintext(),
            "--describe",
            "--group",
            group,
            "--members",
            "--verbose",
        ],
    )
}

/// Parses the member table: `GROUP TARGET-ASSIGNMENT-EPOCH TOPOLOGY-EPOCH MEMBER
/// MEMBER-PROTOCOL MEMBER-EPOCH PROCESS CLIENT-ID ASSIGNMENTS…`, where ASSIGNMENTS reads
/// `ACTIVE: 0:[0,1]; 1:[2]; TARGET-ACTIVE: …` (sections STANDBY:, WARMUP: … as present).
fn parse_tool_members(out: &str, group: &str) -> Vec<ToolMember> {
    let mut lines = out.lines().skip_while(|l| !l.starts_with("GROUP "));
    let header = lines
        .next()
        .unwrap_or_else(|| panic!("no table in:\n{out}"));
    let cols: Vec<&str> = header.split_whitespace().collect();
    let col = |name: &str| {
        cols.iter()
            .position(|c| *c == name)
            .unwrap_or_else(|| panic!("no column {name} in {header:?}"))
    };
    let (member, process, client, assignments) = (
        col("MEMBER"),
        col("PROCESS"),
        col("CLIENT-ID"),
        col("ASSIGNMENTS"),
    );
    lines
        .filter(|l| l.split_whitespace().next() == Some(group))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let rest = f[assignments..].join(" ");
            ToolMember {
                member_id: f[member].to_string(),
                process_id: f[process].to_string(),
                client_id: f[client].to_string(),
                active: parse_tool_section(&rest, "ACTIVE:"),
            }
        })
        .collect()
}

/// The tasks of one section (`ACTIVE:` but not `TARGET-ACTIVE:`) of an ASSIGNMENTS cell.
fn parse_tool_section(cell: &str, section: &str) -> BTreeSet<StreamsTaskId> {
    let mut tasks = BTreeSet::new();
    let words: Vec<&str> = cell.split_whitespace().collect();
    let Some(start) = words.iter().position(|w| *w == section) else {
        return tasks;
    };
    for w in &words[start + 1..] {
        if w.ends_with(':') && !w.contains('[') {
            break; // the next section
        }
        let w = w.trim_end_matches(';');
        let Some((sub, parts)) = w.split_once(":[") else {
            continue;
        };
        for p in parts
            .trim_end_matches(']')
            .split(',')
            .filter(|p| !p.is_empty())
        {
            tasks.insert(StreamsTaskId::new(sub, p.parse().expect("partition")));
        }
    }
    tasks
}

// ---------------------------------------------------------------------------------------------
// Tests.

/// (a) one group, Java + Rust, same topology: the broker splits the tasks, never one task
/// active on both, the union is everything — seen through StreamsGroupDescribe and through
/// Java's `tasks`; (g) each side sees the other's endpoint; (h) our describe agrees with
/// `kafka-streams-groups.sh`; (b) Java closes → Rust holds everything within a few
/// heartbeat intervals.
#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn java_and_rust_share_a_group_then_java_leaves_and_rust_takes_all() {
    let Some(s) = setup("ksg-interop-split", 4) else {
        return;
    };
    let t0 = Instant::now();
    let java_port = free_port();
    let rust_port = free_port();
    let mut java = s.peer(Some(format!("127.0.0.1:{java_port}")));
    let mut rust = Member::join(
        "rust",
        s.rust_config().user_endpoint("127.0.0.1", rust_port),
    );
    let took = watch(
        Some(&mut java),
        Some(&mut rust),
        Duration::from_secs(30),
        "a Java/Rust split of all tasks",
        split(&s.all),
    );
    eprintln!("split between Java and Rust after {took:?}");

    // (a) through StreamsGroupDescribe: two members, disjoint, complete. The broker's view
    // catches up with one more heartbeat each, so poll briefly.
    let java_process = java.info_field("processId");
    let deadline = Instant::now() + Duration::from_secs(10);
    let d = loop {
        let d = s.describe();
        let mut seen = BTreeMap::new();
        let mut clash = None;
        for (t, m) in d.active_tasks() {
            if let Some(other) = seen.insert(t.clone(), m.member_id.clone()) {
                clash = Some((t.clone(), other, m.member_id.clone()));
            }
        }
        assert!(
            clash.is_none(),
            "task on two members in describe: {clash:?}"
        );
        let complete = seen.keys().cloned().collect::<BTreeSet<_>>() == s.all;
        if d.members.len() == 2 && complete {
            break d;
        }
        assert!(Instant::now() < deadline, "describe never complete: {d:#?}");
        std::thread::sleep(Duration::from_millis(200));
    };
    let rust_desc = d
        .member(&rust.handle.member_id())
        .expect("rust member described");
    assert_eq!(rust_desc.process_id, rust.process_id);
    assert_eq!(
        rust_desc.user_endpoint.as_ref().map(|e| e.port),
        Some(rust_port)
    );
    assert_eq!(
        rust_desc.client_tags.get("zone").map(String::as_str),
        Some("rust")
    );
    let java_desc = d
        .members
        .iter()
        .find(|m| m.process_id == java_process)
        .unwrap_or_else(|| panic!("Java process {java_process} not described: {d:#?}"));
    assert_eq!(
        java_desc.user_endpoint.as_ref().map(|e| e.port),
        Some(java_port)
    );
    assert_eq!(
        java_desc.client_tags.get("zone").map(String::as_str),
        Some("java")
    );
    assert_eq!(java_desc.assignment.active, java.active_tasks());
    assert!(
        matches!(
            d.state,
            DescribedGroupState::Stable | DescribedGroupState::Reconciling
        ),
        "{:?}",
        d.state
    );
    assert!(d.group_epoch >= d.target_assignment_epoch && d.target_assignment_epoch > 0);
    // The initialised topology is the one both sides sent, with partition counts resolved.
    let topology = d.topology.as_ref().expect("topology initialised");
    let sent = common::counts_topology(&s.group, &s.input);
    assert_eq!(topology.subtopologies.len(), 2, "{topology:#?}");
    for (got, want) in topology.subtopologies.iter().zip(&sent.subtopologies) {
        assert_eq!(got.id, want.id);
        assert_eq!(got.source_topics, want.source_topics);
        assert_eq!(got.repartition_sink_topics, want.repartition_sink_topics);
        let names = |ts: &[kafka_streams_group::TopicInfo]| {
            ts.iter().map(|t| t.name.clone()).collect::<Vec<_>>()
        };
        assert_eq!(
            names(&got.repartition_source_topics),
            names(&want.repartition_source_topics)
        );
        assert_eq!(
            names(&got.state_changelog_topics),
            names(&want.state_changelog_topics)
        );
        for t in got
            .repartition_source_topics
            .iter()
            .chain(&got.state_changelog_topics)
        {
            assert_eq!(
                t.partitions, 4,
                "{} resolved to the input's partitions",
                t.name
            );
        }
    }
    assert!(d
        .members
        .iter()
        .all(|m| m.topology_epoch == d.topology_epoch));

    // (g) endpoints: Rust sees Java's endpoint with its partitions; Java's metadata lists the
    // Rust member's endpoint.
    let java_ep = kafka_streams_group::UserEndpoint::new("127.0.0.1", java_port);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let a = rust.handle.assignment();
        if let Some(parts) = a.partitions_by_user_endpoint.get(&java_ep) {
            let java_tasks = java.active_tasks();
            let input_parts: BTreeSet<i32> = java_tasks
                .iter()
                .filter(|t| t.subtopology_id == "0")
                .map(|t| t.partition)
                .collect();
            let repartition_parts: BTreeSet<i32> = java_tasks
                .iter()
                .filter(|t| t.subtopology_id == "1")
                .map(|t| t.partition)
                .collect();
            let repartition = format!("{}-counts-repartition", s.group);
            if parts.active.get(&s.input) == Some(&input_parts)
                && parts.active.get(&repartition) == Some(&repartition_parts)
            {
                break;
            }
        }
        assert!(
            Instant::now() < deadline,
            "rust never saw Java's endpoint partitions: {:?}",
            a.partitions_by_user_endpoint
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let md = java.command("metadata");
        if md.contains(&format!("\"endpoint\":\"127.0.0.1:{rust_port}\"")) {
            // The Rust member's input partitions are listed under its endpoint.
            let rust_parts = rust.running_active();
            let first = rust_parts
                .iter()
                .find(|t| t.subtopology_id == "0")
                .map(|t| format!("{}-{}", s.input, t.partition));
            if first.is_none_or(|p| md.contains(&p)) {
                break;
            }
        }
        assert!(
            Instant::now() < deadline,
            "Java never listed the Rust endpoint: {md}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }

    // (h) kafka-streams-groups.sh agrees with describe_streams_group.
    let tool = kafka_streams_groups_describe(&s.cluster, &s.group);
    let ours = s.describe();
    let theirs = parse_tool_members(&tool, &s.group);
    let ours_by_id: BTreeMap<_, _> = ours.members.iter().map(|m| (&m.member_id, m)).collect();
    assert_eq!(
        theirs.iter().map(|m| &m.member_id).collect::<BTreeSet<_>>(),
        ours_by_id.keys().copied().collect::<BTreeSet<_>>(),
        "members differ; tool output:\n{tool}"
    );
    for m in &theirs {
        let o = ours_by_id[&m.member_id];
        assert_eq!(m.process_id, o.process_id, "process of {}", m.member_id);
        assert_eq!(m.client_id, o.client_id, "client id of {}", m.member_id);
        assert_eq!(
            m.active, o.assignment.active,
            "tasks of {}\n{tool}",
            m.member_id
        );
    }
    eprintln!(
        "kafka-streams-groups.sh agrees: {} members, {} active tasks",
        theirs.len(),
        theirs.iter().map(|m| m.active.len()).sum::<usize>()
    );

    // (b) Java leaves gracefully: Rust holds all within a few heartbeat intervals.
    let closing = Instant::now();
    java.close();
    let took = watch(
        None,
        Some(&mut rust),
        Duration::from_secs(10),
        "Rust holds all after Java closed",
        |_, r| r == &s.all,
    );
    eprintln!(
        "Java closed in {:?}; Rust holds all {} tasks {took:?} after close returned",
        closing.elapsed() - took,
        s.all.len()
    );
    assert!(took < Duration::from_secs(3), "takeover took {took:?}");
    rust.close();
    eprintln!("test took {:?}", t0.elapsed());
}

/// (c) Rust leaves → Java holds all; (d) a Rust member that stops heartbeating without
/// leaving (handle dropped) → Java takes over after the session timeout.
#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn rust_leaves_or_vanishes_and_java_takes_all() {
    let Some(s) = setup("ksg-interop-rust-leaves", 2) else {
        return;
    };
    let t0 = Instant::now();
    let mut java = s.peer(None);
    let mut rust = Member::join("rust", s.rust_config());
    watch(
        Some(&mut java),
        Some(&mut rust),
        Duration::from_secs(30),
        "a split",
        split(&s.all),
    );
    // (c)
    let leaving = Instant::now();
    rust.close();
    let took = watch(
        Some(&mut java),
        None,
        Duration::from_secs(10),
        "Java holds all after Rust left",
        |j, _| j == &s.all,
    );
    eprintln!(
        "Rust left (close took {:?}); Java holds all {took:?} after that",
        leaving.elapsed() - took
    );
    assert!(took < Duration::from_secs(5), "Java took {took:?}");

    // (d)
    let mut rust = Member::join("rust", s.rust_config());
    watch(
        Some(&mut java),
        Some(&mut rust),
        Duration::from_secs(30),
        "a second split",
        split(&s.all),
    );
    let Member { handle, .. } = rust;
    let dropped = Instant::now();
    drop(handle);
    let took = watch(
        Some(&mut java),
        None,
        Duration::from_secs(15),
        "Java holds all after the Rust member expired",
        |j, _| j == &s.all,
    );
    eprintln!("Rust member dropped; Java holds all {took:?} later (session timeout 3 s)");
    assert!(
        took >= Duration::from_secs(2),
        "takeover before the session timeout: {took:?} (since drop {:?})",
        dropped.elapsed()
    );
    java.close();
    eprintln!("test took {:?}", t0.elapsed());
}

/// (e) the Java instance is killed (SIGKILL) → the Rust member takes over after the session
/// timeout.
#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn java_killed_and_rust_takes_over_after_the_session_timeout() {
    let Some(s) = setup("ksg-interop-kill", 2) else {
        return;
    };
    let t0 = Instant::now();
    let mut java = s.peer(None);
    let mut rust = Member::join("rust", s.rust_config());
    watch(
        Some(&mut java),
        Some(&mut rust),
        Duration::from_secs(30),
        "a split",
        split(&s.all),
    );
    let killed = Instant::now();
    java.kill_hard();
    let took = watch(
        None,
        Some(&mut rust),
        Duration::from_secs(15),
        "Rust holds all after Java was killed",
        |_, r| r == &s.all,
    );
    eprintln!(
        "Java killed; Rust holds all {took:?} later ({:?} since the kill)",
        killed.elapsed()
    );
    assert!(
        took >= Duration::from_secs(2),
        "takeover before the session timeout: {took:?}"
    );
    // The dead member is gone from the group (asked through the member's own handle).
    let d = rust
        .handle
        .describe_group(Duration::from_secs(10))
        .expect("describe_group");
    assert_eq!(d.members.len(), 1, "{d:#?}");
    assert_eq!(d.members[0].member_id, rust.handle.member_id());
    rust.close();
    eprintln!("test took {:?}", t0.elapsed());
}

/// (f) a shutdown request from Rust shuts the Java application down (PENDING_ERROR/ERROR).
#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn a_shutdown_request_from_rust_shuts_the_java_application_down() {
    let Some(s) = setup("ksg-interop-shutdown-r2j", 2) else {
        return;
    };
    let t0 = Instant::now();
    // Rust → Java.
    let mut java = s.peer(None);
    let mut rust = Member::join("rust", s.rust_config());
    watch(
        Some(&mut java),
        Some(&mut rust),
        Duration::from_secs(30),
        "a split",
        split(&s.all),
    );
    let asked = Instant::now();
    rust.handle
        .request_application_shutdown()
        .expect("request shutdown");
    let state = java.wait_state(Duration::from_secs(15), |st| {
        matches!(st, "PENDING_ERROR" | "ERROR")
    });
    eprintln!(
        "Rust asked for shutdown; Java went {state} after {:?}",
        asked.elapsed()
    );
    java.wait_state(Duration::from_secs(15), |st| st == "ERROR");
    eprintln!("Java reached ERROR after {:?}", asked.elapsed());
    rust.close();
    let closing = Instant::now();
    java.close();
    eprintln!(
        "Java closed in {:?}; test took {:?}",
        closing.elapsed(),
        t0.elapsed()
    );
}

/// (f) Java's `shutdown-application` reaches the Rust member as SHUTDOWN_APPLICATION.
#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn a_shutdown_request_from_java_reaches_the_rust_member() {
    let Some(s2) = setup("ksg-interop-shutdown-j2r", 2) else {
        return;
    };
    let t0 = Instant::now();
    let mut java = s2.peer(None);
    let mut rust = Member::join("rust", s2.rust_config());
    watch(
        Some(&mut java),
        Some(&mut rust),
        Duration::from_secs(30),
        "a split",
        split(&s2.all),
    );
    let mut changes = rust.handle.subscribe_assignment();
    let asked = Instant::now();
    let reply = java.command("shutdown-application");
    assert!(reply.starts_with("ok shutdown-application"), "{reply}");
    let deadline = asked + Duration::from_secs(15);
    loop {
        let a = changes
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .expect("Rust sees SHUTDOWN_APPLICATION before the deadline");
        if a.statuses
            .iter()
            .any(|st| st.code == StreamsStatusCode::ShutdownApplication)
        {
            assert!(a.shutdown_requested());
            break;
        }
    }
    eprintln!(
        "Java asked for shutdown; Rust saw SHUTDOWN_APPLICATION after {:?}",
        asked.elapsed()
    );
    java.wait_state(Duration::from_secs(15), |st| st == "ERROR");
    let _ = rust.leave();
    java.close();
    eprintln!("test took {:?}", t0.elapsed());
}

/// Several groups in one call come back in the order asked; an unknown group is a typed
/// `GROUP_ID_NOT_FOUND` naming the group; an empty group keeps its topology.
#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn describe_several_groups_and_typed_errors() {
    let Some(s) = setup("ksg-interop-describe-a", 2) else {
        return;
    };
    let b = common::unique_name("ksg-interop-describe-b");
    let config = ClientConfig::new(s.cluster.plaintext());
    let ma = Member::join("ma", s.rust_config());
    let mb = Member::join(
        "mb",
        StreamsGroupConfig::new(
            s.cluster.plaintext(),
            &b,
            common::counts_topology(&b, &s.input),
        ),
    );
    let started = Instant::now();
    let ds = describe_streams_groups(
        &config,
        &[b.as_str(), s.group.as_str(), b.as_str()],
        Duration::from_secs(10),
    )
    .expect("describe two groups");
    eprintln!("described 2 groups in {:?}", started.elapsed());
    assert_eq!(
        ds.iter().map(|d| d.group_id.as_str()).collect::<Vec<_>>(),
        [b.as_str(), s.group.as_str()]
    );
    assert_eq!(ds[0].members.len(), 1);
    assert_eq!(ds[0].members[0].member_id, mb.handle.member_id());
    assert_eq!(ds[1].members[0].member_id, ma.handle.member_id());
    assert_eq!(
        ds[1].members[0].client_tags.get("zone").map(String::as_str),
        Some("rust")
    );

    let missing = common::unique_name("ksg-interop-no-such-group");
    let err = describe_streams_groups(
        &config,
        &[s.group.as_str(), missing.as_str()],
        Duration::from_secs(10),
    )
    .expect_err("unknown group");
    match &err {
        Error::Broker { kind, context, .. } => {
            assert_eq!(*kind, kafka_streams_group::BrokerErrorKind::GroupIdNotFound);
            assert_eq!(context.group.as_deref(), Some(missing.as_str()));
        }
        other => panic!("expected a broker error, got {other:?}"),
    }
    eprintln!("unknown group: {err}");

    // Both leave: the group is Empty, with no members but its topology still initialised.
    ma.close();
    mb.close();
    let d = s.describe();
    assert_eq!(d.state, DescribedGroupState::Empty, "{d:#?}");
    assert!(d.members.is_empty());
    eprintln!(
        "empty group: epoch {}, topology epoch {}, topology kept: {}",
        d.group_epoch,
        d.topology_epoch,
        d.topology.is_some()
    );
}

#[test]
fn tool_output_parsing() {
    let out = "\nGROUP  TARGET-ASSIGNMENT-EPOCH TOPOLOGY-EPOCH MEMBER MEMBER-PROTOCOL MEMBER-EPOCH PROCESS CLIENT-ID ASSIGNMENTS\n\
               g 3 0 m1 streams 3 p1 c1 ACTIVE: 0:[0,1]; 1:[0]; TARGET-ACTIVE: 0:[0,1]; 1:[0,1]; \n\
               g 3 0 m2 streams 3 p2 c2 ACTIVE: 1:[1]; STANDBY: 0:[2]; TARGET-ACTIVE: 1:[1]; \n";
    let ms = parse_tool_members(out, "g");
    assert_eq!(ms.len(), 2);
    assert_eq!(ms[0].member_id, "m1");
    assert_eq!(ms[0].process_id, "p1");
    assert_eq!(ms[0].client_id, "c1");
    assert_eq!(ms[0].active, parse_task_list("0_0,0_1,1_0"));
    assert_eq!(ms[1].active, parse_task_list("1_1"));
    assert_eq!(
        parse_tool_section("ACTIVE: 1:[1]; STANDBY: 0:[2];", "STANDBY:"),
        parse_task_list("0_2")
    );
    assert_eq!(
        json_string_field(r#"info {"processId":"abc","x":1}"#, "processId").as_deref(),
        Some("abc")
    );
}
