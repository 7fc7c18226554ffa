//! Live: offset commits and fetches as a Streams member, and the two-phase handover.
//!
//!     KSG_CLUSTER_ENV=.kafka/run/cluster.env cargo test --test live_offsets -- --ignored --nocapture

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use kafka_streams_group::client::{BrokerTarget, Client, ClientOptions};
use kafka_streams_group::protocol::api::offset_fetch::{
    OffsetFetchRequest, OffsetFetchRequestGroup, OffsetFetchRequestTopic,
};
use kafka_streams_group::{
    BrokerErrorKind, ClientMetrics, CommitOffset, OffsetCommitOutcome, OffsetFetchOutcome,
    StreamsGroupConfig, StreamsGroupSession, StreamsGroupSessionHandle, StreamsTaskId,
    StreamsTaskRole, StreamsTaskRuntime, StreamsTopology, Subtopology, TopicPartition,
};

const T: Duration = Duration::from_secs(20);

fn config(cluster: &common::Cluster, group: &str, input: &str) -> StreamsGroupConfig {
    StreamsGroupConfig::new(
        cluster.plaintext(),
        group,
        StreamsTopology::new().subtopology(Subtopology::new("0").source_topic(input)),
    )
}

fn now_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0)
}

fn task(p: i32) -> StreamsTaskId {
    StreamsTaskId::new("0", p)
}

fn active_of(rt: &StreamsTaskRuntime) -> BTreeSet<StreamsTaskId> {
    rt.owned_assignment().active().cloned().collect()
}

fn offsets(input: &str, list: &[(i32, i64)]) -> BTreeMap<TopicPartition, CommitOffset> {
    list.iter()
        .map(|&(p, o)| (TopicPartition::new(input, p), CommitOffset::new(o)))
        .collect()
}

fn fetched(outcome: OffsetFetchOutcome) -> BTreeMap<TopicPartition, Option<i64>> {
    match outcome {
        OffsetFetchOutcome::Fetched(m) => m
            .into_iter()
            .map(|(tp, c)| (tp, c.map(|c| c.offset)))
            .collect(),
        other => panic!("fetch: {other:?}"),
    }
}

/// The safe two-phase reconcile with no application work: release, then acknowledge.
fn reconcile(handle: &StreamsGroupSessionHandle, rt: &mut StreamsTaskRuntime) {
    let step = handle.begin_reconciliation(rt).expect("plan");
    handle.release_revoked(rt, &step).expect("release");
    handle.acknowledge_assigned(rt, &step).expect("acknowledge");
}

/// Reconciles until the runtime runs exactly `want` as active tasks (and the broker knows).
fn reconcile_until(
    handle: &StreamsGroupSessionHandle,
    rt: &mut StreamsTaskRuntime,
    want: &BTreeSet<StreamsTaskId>,
    what: &str,
) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        reconcile(handle, rt);
        if active_of(rt) == *want
            && matches!(
                handle.state(),
                kafka_streams_group::StreamsGroupState::Stable
            )
        {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: runtime has {:?}, target {:?}, state {:?}",
            active_of(rt),
            handle.assignment().active().collect::<Vec<_>>(),
            handle.state()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The committed offsets of `partitions` as an admin (no member id, epoch -1) sees them.
fn admin_fetch(cluster: &common::Cluster, group: &str, input: &str, parts: &[i32]) -> Vec<i64> {
    let deadline = Instant::now() + T;
    let mut client =
        Client::connect(ClientOptions::new([cluster.plaintext()]), deadline).expect("connect");
    let coordinator = client
        .find_coordinator(group, deadline)
        .expect("coordinator");
    let request = OffsetFetchRequest {
        groups: vec![OffsetFetchRequestGroup {
            group_id: group.to_string(),
            member_id: None,
            member_epoch: -1,
            topics: Some(vec![OffsetFetchRequestTopic {
                name: input.to_string(),
                partition_indexes: parts.to_vec(),
                ..Default::default()
            }]),
        }],
        ..Default::default()
    };
    let response = client
        .send_at(
            BrokerTarget::Node(coordinator.node_id),
            &request,
            9,
            deadline,
        )
        .expect("admin OffsetFetch");
    let group = &response.groups[0];
    assert_eq!(group.error_code, 0, "admin fetch: {response:?}");
    parts
        .iter()
        .map(|p| {
            group.topics[0]
                .partitions
                .iter()
                .find(|x| x.partition_index == *p)
                .map(|x| x.committed_offset)
                .unwrap_or(-1)
        })
        .collect()
}

/// `kafka-streams-groups.sh --describe --offsets` from the broker's own jars.
fn tool_describe_offsets(cluster: &common::Cluster, group: &str) -> String {
    common::kafka_tool(
        cluster,
        "org.apache.kafka.tools.streams.StreamsGroupCommand",
        &[
            "--bootstrap-server",
            cluster.plaintext(),
            "--describe",
            "--group",
            group,
            "--offsets",
            "--verbose",
        ],
    )
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn commit_then_fetch_round_trip_and_refusals() {
    common::init_logging();
    let cluster = common::Cluster::get();
    let group = common::unique_name("ksg-offsets");
    let input = common::unique_name("ksg-offsets-in");
    common::create_topic(&cluster, &input, 2);
    let metrics = ClientMetrics::new();
    let handle = StreamsGroupSession::join(
        config(&cluster, &group, &input)
            .metrics(metrics.clone())
            .join_timeout(T),
    )
    .expect("join")
    .spawn_heartbeat_thread()
    .expect("spawn");
    let mut rt = StreamsTaskRuntime::new();
    reconcile_until(
        &handle,
        &mut rt,
        &[task(0), task(1)].into(),
        "one member owns both tasks",
    );
    let partitions: BTreeSet<_> = handle
        .task_partitions(&task(0))
        .into_iter()
        .chain(handle.task_partitions(&task(1)))
        .collect();
    assert_eq!(
        partitions,
        [
            TopicPartition::new(&input, 0),
            TopicPartition::new(&input, 1)
        ]
        .into()
    );

    // Nothing committed yet.
    let before = fetched(
        handle
            .fetch_committed_offsets(&partitions, T)
            .expect("fetch"),
    );
    assert!(before.values().all(Option::is_none), "{before:?}");

    // A partition of no owned task (and a topic outside the topology): refused, nothing sent.
    let commits_before = metrics.snapshot().requests_by_api.get(&8).copied();
    let foreign: BTreeMap<_, _> = [
        (TopicPartition::new(&input, 7), CommitOffset::new(1)),
        (TopicPartition::new("not-a-source", 0), CommitOffset::new(1)),
        (TopicPartition::new(&input, 0), CommitOffset::new(1)),
    ]
    .into();
    let refused = handle.commit_offsets(&foreign, T).expect("commit");
    assert_eq!(
        refused,
        OffsetCommitOutcome::NotOwned {
            partitions: vec![
                TopicPartition::new(&input, 7),
                TopicPartition::new("not-a-source", 0)
            ]
        }
    );
    assert_eq!(
        metrics.snapshot().requests_by_api.get(&8).copied(),
        commits_before,
        "a refused commit must not send an OffsetCommit"
    );
    assert!(matches!(
        handle
            .fetch_committed_offsets(&[TopicPartition::new(&input, 9)].into(), T)
            .expect("fetch"),
        OffsetFetchOutcome::NotAssigned { .. }
    ));

    // Commit → fetch.
    let mut to_commit = offsets(&input, &[(0, 42), (1, 7)]);
    let with_time = CommitOffset::new(42).partition_time(1_700_000_000_000);
    to_commit.insert(TopicPartition::new(&input, 0), with_time);
    let outcome = handle.commit_offsets(&to_commit, T).expect("commit");
    match outcome {
        OffsetCommitOutcome::Committed {
            member_epoch,
            stale_epoch_retries: 0,
            partitions: 2,
        } => assert_eq!(member_epoch, handle.member_epoch()),
        other => panic!("commit: {other:?}"),
    }
    assert!(metrics.snapshot().requests_by_api.get(&8).copied() > commits_before);
    match handle
        .fetch_committed_offsets(&partitions, T)
        .expect("fetch")
    {
        OffsetFetchOutcome::Fetched(m) => {
            let p0 = m[&TopicPartition::new(&input, 0)].clone().expect("p0");
            assert_eq!((p0.offset, p0.metadata.as_str()), (42, "AgAAAYvP5WgA"));
            assert_eq!(
                m[&TopicPartition::new(&input, 1)]
                    .as_ref()
                    .map(|c| c.offset),
                Some(7)
            );
        }
        other => panic!("fetch: {other:?}"),
    }
    assert_eq!(admin_fetch(&cluster, &group, &input, &[0, 1]), vec![42, 7]);

    // Kafka's own tool shows what the Rust member committed.
    let tool = tool_describe_offsets(&cluster, &group);
    eprintln!("kafka-streams-groups.sh --describe --offsets:\n{tool}");
    for (p, o) in [(0, "42"), (1, "7")] {
        assert!(
            tool.lines().any(|l| {
                let cols: Vec<&str> = l.split_whitespace().collect();
                cols.contains(&input.as_str())
                    && cols.contains(&p.to_string().as_str())
                    && cols.contains(&o)
            }),
            "tool output lacks {input}-{p} at {o}:\n{tool}"
        );
    }
    handle.close().expect("close");
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn commit_with_a_stale_epoch_is_retried_and_lands() {
    common::init_logging();
    let cluster = common::Cluster::get();
    let group = common::unique_name("ksg-offsets-stale");
    let input = common::unique_name("ksg-offsets-stale-in");
    common::create_topic(&cluster, &input, 2);
    let a = StreamsGroupSession::join(config(&cluster, &group, &input).join_timeout(T))
        .expect("join a")
        .spawn_heartbeat_thread()
        .expect("spawn a");
    let mut rt_a = StreamsTaskRuntime::new();
    reconcile_until(&a, &mut rt_a, &[task(0), task(1)].into(), "a owns both");
    let old_epoch = a.member_epoch();

    // B takes one task and leaves: it comes back to A at a newer epoch, so A's old epoch is
    // below that task's assignment epoch and the coordinator answers STALE_MEMBER_EPOCH.
    let b = StreamsGroupSession::join(config(&cluster, &group, &input).join_timeout(T))
        .expect("join b")
        .spawn_heartbeat_thread()
        .expect("spawn b");
    let mut rt_b = StreamsTaskRuntime::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !(active_of(&rt_a).len() == 1 && active_of(&rt_b).len() == 1) {
        reconcile(&a, &mut rt_a);
        reconcile(&b, &mut rt_b);
        assert!(Instant::now() < deadline, "tasks did not spread");
        std::thread::sleep(Duration::from_millis(50));
    }
    let moved = active_of(&rt_b).into_iter().next().expect("b has a task");
    b.close().expect("close b");
    reconcile_until(
        &a,
        &mut rt_a,
        &[task(0), task(1)].into(),
        "a owns both again",
    );
    let new_epoch = a.member_epoch();
    assert!(new_epoch > old_epoch, "epoch {old_epoch} -> {new_epoch}");

    let to_commit = offsets(&input, &[(moved.partition, 99)]);
    let outcome = a
        .commit_offsets_with_epoch(&to_commit, old_epoch, T)
        .expect("commit");
    eprintln!("commit with old epoch {old_epoch} (now {new_epoch}) for {moved}: {outcome:?}");
    match outcome {
        OffsetCommitOutcome::Committed {
            member_epoch,
            stale_epoch_retries,
            ..
        } => {
            assert!(
                stale_epoch_retries >= 1,
                "the old epoch must be refused first"
            );
            assert_eq!(member_epoch, new_epoch);
        }
        other => panic!("commit: {other:?}"),
    }
    assert_eq!(
        admin_fetch(&cluster, &group, &input, &[moved.partition]),
        vec![99]
    );
    a.close().expect("close a");
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn a_fenced_members_commit_fails_typed_and_commits_nothing() {
    common::init_logging();
    let cluster = common::Cluster::get();
    let group = common::unique_name("ksg-offsets-fenced");
    let input = common::unique_name("ksg-offsets-fenced-in");
    common::create_topic(&cluster, &input, 2);
    // A session on the caller's thread: it heartbeats only when told to.
    let mut s =
        StreamsGroupSession::join(config(&cluster, &group, &input).join_timeout(T)).expect("join");
    let mut rt = StreamsTaskRuntime::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while active_of(&rt).len() < 2 {
        s.heartbeat().expect("heartbeat");
        let step = s.begin_reconciliation(&mut rt).expect("plan");
        s.release_revoked(&mut rt, &step).expect("release");
        s.acknowledge_assigned(&mut rt, &step).expect("ack");
        assert!(Instant::now() < deadline, "no tasks");
    }
    s.heartbeat().expect("ack heartbeat");
    let timeout = Duration::from_millis(
        cluster
            .value("KSG_GROUP_SESSION_TIMEOUT_MS")
            .parse()
            .expect("session timeout"),
    );
    // Miss heartbeats past the session timeout: the coordinator removes the member.
    std::thread::sleep(timeout + Duration::from_millis(2500));
    let outcome = s
        .commit_offsets(&offsets(&input, &[(0, 5), (1, 6)]), T)
        .expect("commit");
    eprintln!("commit after the session expired: {outcome:?}");
    assert!(
        matches!(
            outcome,
            OffsetCommitOutcome::MemberFenced {
                error: BrokerErrorKind::UnknownMemberId | BrokerErrorKind::FencedMemberEpoch,
                ..
            }
        ),
        "{outcome:?}"
    );
    assert_eq!(admin_fetch(&cluster, &group, &input, &[0, 1]), vec![-1, -1]);
    // The session learns it was fenced at its next heartbeat; the tasks are reported lost.
    let _ = s.heartbeat();
    let step = s.begin_reconciliation(&mut rt).expect("plan");
    assert_eq!(
        step.plan()
            .lost
            .iter()
            .map(|(t, _)| t.clone())
            .collect::<BTreeSet<_>>(),
        [task(0), task(1)].into(),
        "fenced tasks are reported lost"
    );
    assert!(step
        .plan()
        .revoked
        .iter()
        .all(|(t, _)| !step.plan().lost.iter().any(|(l, _)| l == t)));
    let _ = s.close();
}

/// Per task: when the receiving member first saw it, and the committed offset it resumed at.
type Received = Arc<Mutex<BTreeMap<StreamsTaskId, (u128, Option<i64>)>>>;

/// One line of the handover timeline.
type Timeline = Arc<Mutex<Vec<(u128, String)>>>;

fn note(timeline: &Timeline, what: String) {
    let t = now_ms();
    eprintln!("{t} {what}");
    timeline.lock().unwrap().push((t, what));
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn handover_waits_for_the_application_rust_to_rust() {
    common::init_logging();
    let cluster = common::Cluster::get();
    let group = common::unique_name("ksg-handover");
    let input = common::unique_name("ksg-handover-in");
    common::create_topic(&cluster, &input, 2);
    let timeline: Timeline = Arc::new(Mutex::new(Vec::new()));
    let a = Arc::new(
        StreamsGroupSession::join(config(&cluster, &group, &input).join_timeout(T))
            .expect("join a")
            .spawn_heartbeat_thread()
            .expect("spawn a"),
    );
    let mut rt_a = StreamsTaskRuntime::new();
    reconcile_until(&a, &mut rt_a, &[task(0), task(1)].into(), "a owns both");
    assert!(a
        .commit_offsets(&offsets(&input, &[(0, 10), (1, 20)]), T)
        .expect("commit")
        .is_committed());
    let a_id = a.member_id();

    // StreamsGroupDescribe sampler: which member's *current* assignment holds which task.
    let stop = Arc::new(AtomicBool::new(false));
    let samples = Arc::new(Mutex::new(Vec::new()));
    let sampler = {
        let (stop, samples, a) = (stop.clone(), samples.clone(), a.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if let Ok(d) = a.describe_group(Duration::from_secs(5)) {
                    let owners: Vec<(String, BTreeSet<StreamsTaskId>)> = d
                        .members
                        .iter()
                        .map(|m| (m.member_id.clone(), m.assignment.active.clone()))
                        .collect();
                    samples.lock().unwrap().push((now_ms(), owners));
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    };

    // Member B: records when each task first appears in its target, then resumes from the
    // committed offset.
    let b_seen: Received = Default::default();
    let b_thread = {
        let (cluster_cfg, stop, b_seen, timeline) = (
            config(&cluster, &group, &input),
            stop.clone(),
            b_seen.clone(),
            timeline.clone(),
        );
        std::thread::spawn(move || {
            let b = StreamsGroupSession::join(cluster_cfg.join_timeout(T))
                .expect("join b")
                .spawn_heartbeat_thread()
                .expect("spawn b");
            note(&timeline, format!("B joined as {}", b.member_id()));
            let mut rt = StreamsTaskRuntime::new();
            while !stop.load(Ordering::Relaxed) {
                let step = b.begin_reconciliation(&mut rt).expect("b plan");
                b.release_revoked(&mut rt, &step).expect("b release");
                for (t, role) in &step.plan().assigned {
                    if *role != StreamsTaskRole::Active {
                        continue;
                    }
                    let at = now_ms();
                    let parts: BTreeSet<_> = b.task_partitions(t).into_iter().collect();
                    let resumed = fetched(b.fetch_committed_offsets(&parts, T).expect("b fetch"))
                        .into_values()
                        .next()
                        .flatten();
                    note(&timeline, format!("B received {t}, resumes at {resumed:?}"));
                    b_seen.lock().unwrap().insert(t.clone(), (at, resumed));
                }
                b.acknowledge_assigned(&mut rt, &step).expect("b ack");
                std::thread::sleep(Duration::from_millis(10));
            }
            b.close().expect("close b");
        })
    };

    // A's application takes 2 s to stop a revoked task, commits, and only then releases it.
    let mut confirmed: BTreeMap<StreamsTaskId, u128> = BTreeMap::new();
    let deadline = Instant::now() + Duration::from_secs(40);
    while confirmed.is_empty() || b_seen.lock().unwrap().len() < confirmed.len() {
        let step = a.begin_reconciliation(&mut rt_a).expect("a plan");
        if !step.plan().revoked.is_empty() {
            for (t, _) in &step.plan().revoked {
                note(&timeline, format!("A told to revoke {t}; stopping (2 s)"));
            }
            std::thread::sleep(Duration::from_secs(2));
            for (t, _) in &step.plan().revoked {
                let o = offsets(&input, &[(t.partition, 1000 + i64::from(t.partition))]);
                assert!(a.commit_offsets(&o, T).expect("a commit").is_committed());
            }
            let at = now_ms();
            for (t, _) in &step.plan().revoked {
                note(&timeline, format!("A stopped and committed {t}; releasing"));
                confirmed.insert(t.clone(), at);
            }
        }
        a.release_revoked(&mut rt_a, &step).expect("a release");
        a.acknowledge_assigned(&mut rt_a, &step).expect("a ack");
        assert!(Instant::now() < deadline, "handover did not finish");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(500));
    stop.store(true, Ordering::Relaxed);
    b_thread.join().expect("b thread");
    sampler.join().expect("sampler");

    let b_seen = b_seen.lock().unwrap().clone();
    for (t, confirmed_at) in &confirmed {
        let (received_at, resumed) = b_seen[t];
        assert!(
            received_at >= *confirmed_at,
            "B received {t} at {received_at}, before A confirmed at {confirmed_at}"
        );
        assert_eq!(
            resumed,
            Some(1000 + i64::from(t.partition)),
            "B resumes where A committed"
        );
    }
    let samples = samples.lock().unwrap().clone();
    assert!(samples.len() >= 10, "{} describe samples", samples.len());
    for (at, owners) in &samples {
        for (t, confirmed_at) in &confirmed {
            let holders: Vec<&String> = owners
                .iter()
                .filter(|(_, tasks)| tasks.contains(t))
                .map(|(m, _)| m)
                .collect();
            assert!(holders.len() <= 1, "{t} held by {holders:?} at {at}");
            if *at < *confirmed_at && !holders.is_empty() {
                assert_eq!(
                    holders[0], &a_id,
                    "{t} left A before A confirmed (sample at {at})"
                );
            }
        }
    }
    eprintln!(
        "{} describe samples; A confirmed {confirmed:?}; B received {b_seen:?}",
        samples.len()
    );
    Arc::try_unwrap(a)
        .unwrap_or_else(|_| panic!("a still shared"))
        .close()
        .expect("close a");
}
