//! Live: standby tasks (issue 16). The test's group gets `streams.num.standby.replicas=1`
//! (a dynamic group config set with Kafka's own tool before any member joins); two Rust
//! WordCount instances then hold standbys of each other's stateful tasks, the standby stores
//! catch up with their actives, the member reports their offset sums in its heartbeats
//! (4.4+ brokers), and when the instance holding the actives closes the survivor promotes
//! its standbys, restoring only the changelog tail, and counts exactly on.

mod common;
mod word_count_support;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::{init_logging, set_group_configs, unique_name, Cluster, LIVE};
use kafka_streams_group::consumer::{Fetcher, FetcherConfig, IsolationLevel};
use kafka_streams_group::describe::{describe_streams_group, StreamsGroupDescription};
use kafka_streams_group::streams::commit::TopicPartition;
use kafka_streams_group::{ClientConfig, StreamsTaskId, StreamsTaskRole};
use word_count_support::{
    create_topics, diff, feed, input, java_word_count, wait_for, word_count, Counts, RustInstance,
    RustProcess, Snapshot,
};

/// The tests of this file run one at a time (they are heavy on a small machine).
static SERIAL: Mutex<()> = Mutex::new(());

const PARTITIONS: i32 = 4;
/// WordCount's stateful subtopology (the count); subtopology "0" splits and repartitions.
const STATEFUL: &str = "1";

fn describe(bootstrap: &str, app: &str) -> StreamsGroupDescription {
    describe_streams_group(&ClientConfig::new(bootstrap), app, Duration::from_secs(30))
        .expect("describe the group")
}

fn tasks_with(s: &Snapshot, role: StreamsTaskRole) -> BTreeSet<StreamsTaskId> {
    s.tasks
        .iter()
        .filter(|(_, t)| t.role == role)
        .map(|(id, _)| id.clone())
        .collect()
}

/// Standby tasks of `instances` whose counts differ from those of the same task held active
/// elsewhere (or that no instance holds active); empty when every standby is caught up.
fn lagging_standbys(instances: &[Snapshot]) -> Vec<String> {
    let active: BTreeMap<&StreamsTaskId, &BTreeMap<String, i64>> = instances
        .iter()
        .flat_map(|s| s.tasks.iter())
        .filter(|(_, t)| t.role == StreamsTaskRole::Active)
        .map(|(id, t)| (id, &t.counts))
        .collect();
    let mut out = Vec::new();
    for s in instances {
        for (id, t) in s
            .tasks
            .iter()
            .filter(|(_, t)| t.role != StreamsTaskRole::Active)
        {
            match active.get(id) {
                Some(a) if **a == t.counts => {}
                Some(a) => out.push(format!(
                    "{id}: standby has {} words, active {}",
                    t.counts.len(),
                    a.len()
                )),
                None => out.push(format!("{id}: no active")),
            }
        }
    }
    out
}

/// Waits until StreamsGroupDescribe shows, for every member, the task offsets of caught-up
/// standbys as a Java 4.4 member reports them: offset = changelog end offset (the records
/// applied), end offset = changelog end offset - 1 (Kafka's own tests note this off-by-one),
/// and nothing for other tasks. The group's task offset interval is 15 s: up to 40 s.
/// Without task offsets (`reported` false: brokers before 4.4) every member must report
/// none. Returns the last description and whether it matched.
fn wait_for_caught_up_offsets(
    bootstrap: &str,
    app: &str,
    reported: bool,
) -> (StreamsGroupDescription, bool) {
    let started = Instant::now();
    loop {
        let desc = describe(bootstrap, app);
        let matched = desc.members.iter().all(|m| {
            let ends = changelog_end_offsets(bootstrap, app, &m.assignment.standby);
            let want_ends: BTreeMap<_, _> = ends.iter().map(|(t, e)| (t.clone(), e - 1)).collect();
            match reported {
                true => m.task_offsets == ends && m.task_end_offsets == want_ends,
                false => m.task_offsets.is_empty() && m.task_end_offsets.is_empty(),
            }
        });
        if matched || started.elapsed() > Duration::from_secs(40) {
            for m in &desc.members {
                eprintln!(
                    "described {}: active {:?} standby {:?} warmup {:?} (target standby {:?}); \
                     task offsets {:?}, end offsets {:?}",
                    m.member_id,
                    m.assignment.active,
                    m.assignment.standby,
                    m.assignment.warmup,
                    m.target_assignment.standby,
                    m.task_offsets,
                    m.task_end_offsets
                );
            }
            eprintln!(
                "task offsets as expected after {:?}: {matched}",
                started.elapsed()
            );
            return (desc, matched);
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// The end offset of the count store's changelog partition of each of `tasks`.
fn changelog_end_offsets(
    bootstrap: &str,
    app: &str,
    tasks: &BTreeSet<StreamsTaskId>,
) -> BTreeMap<StreamsTaskId, i64> {
    if tasks.is_empty() {
        return BTreeMap::new();
    }
    let mut f = Fetcher::connect(
        FetcherConfig::new(ClientConfig::new(bootstrap)),
        Duration::from_secs(30),
    )
    .expect("fetcher");
    let topic = word_count::changelog_topic(app);
    let parts: Vec<TopicPartition> = tasks
        .iter()
        .map(|t| TopicPartition::new(&topic, t.partition))
        .collect();
    let ends = f
        .end_offsets(
            &parts,
            IsolationLevel::ReadUncommitted,
            Instant::now() + Duration::from_secs(30),
        )
        .expect("changelog end offsets");
    tasks
        .iter()
        .map(|t| (t.clone(), ends[&TopicPartition::new(&topic, t.partition)]))
        .collect()
}

/// The end offsets of the count store's changelog partitions of `tasks`, summed.
fn changelog_ends(bootstrap: &str, app: &str, tasks: &BTreeSet<StreamsTaskId>) -> i64 {
    changelog_end_offsets(bootstrap, app, tasks).values().sum()
}

/// Sets the group's standby replicas to 1 (and, on 4.4+, the task offset interval to its
/// minimum, 15 s, so the reported sums are checked within a test's time); returns whether
/// the broker takes task offsets (4.4+).
///
/// The harness broker's fast heartbeat and session settings are set on the group too: a
/// 4.2.2 group with any dynamic config takes Kafka's built-in defaults (heartbeat 5 s,
/// session 45 s) for the others instead of the broker's `group.streams.*` (4.4.0 takes the
/// broker's).
fn configure_group(cluster: &Cluster, app: &str) -> bool {
    let offsets = cluster.kafka_version() >= (4, 4, 0);
    let mut configs = vec![
        ("streams.num.standby.replicas", "1"),
        (
            "streams.heartbeat.interval.ms",
            cluster.value("KSG_GROUP_HEARTBEAT_INTERVAL_MS"),
        ),
        (
            "streams.session.timeout.ms",
            cluster.value("KSG_GROUP_SESSION_TIMEOUT_MS"),
        ),
    ];
    if offsets {
        configs.push(("streams.task.offset.interval.ms", "15000"));
    }
    let t = Instant::now();
    set_group_configs(cluster, app, &configs);
    eprintln!("group configs {configs:?} set in {:?}", t.elapsed());
    offsets
}

fn sum_maps(a: &BTreeMap<String, i64>, b: &BTreeMap<String, i64>) -> BTreeMap<String, i64> {
    let mut out = a.clone();
    for (w, n) in b {
        *out.entry(w.clone()).or_default() += n;
    }
    out
}

/// Two Rust instances with one standby replica: standbys assigned (stats and describe), their
/// stores equal to the actives' once the input stops, their offset sums reported (4.4+);
/// then the instance holding actives closes and the survivor promotes its standbys,
/// restoring only the tail, and counts a second batch exactly.
#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn rust_standby_catches_up_and_is_promoted() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let _ = LIVE;
    init_logging();
    let cluster = Cluster::get();
    let bootstrap = cluster.plaintext().to_string();
    let app = unique_name("wcs");
    let (in_t, out_t) = (format!("{app}-in"), format!("{app}-out"));
    let offsets_reported = configure_group(&cluster, &app);
    create_topics(&bootstrap, &in_t, &out_t, PARTITIONS);
    let (lines_1, expected_1) = input(8_000, 400, 5);
    let (lines_2, expected_2) = input(3_000, 400, 6);
    let expected = sum_maps(&expected_1, &expected_2);

    let a = RustInstance::start("rust-a", &bootstrap, &app, &in_t, &out_t);
    wait_for("rust-a to hold every task", Duration::from_secs(60), || {
        a.snapshot().stats.active_tasks == 2 * PARTITIONS as usize
    });
    let b_joined = Instant::now();
    let b = RustInstance::start("rust-b", &bootstrap, &app, &in_t, &out_t);
    wait_for("standby tasks on both", Duration::from_secs(60), || {
        a.snapshot().stats.standby_tasks > 0 && b.snapshot().stats.standby_tasks > 0
    });
    eprintln!(
        "standbys on both members {:?} after rust-b joined",
        b_joined.elapsed()
    );

    let feeder = feed(&bootstrap, &in_t, lines_1, 250, Duration::from_millis(100));
    let mut counts = Counts::new(&bootstrap, &out_t, PARTITIONS);
    feeder.join().expect("feeder");
    let ok = counts.settle_exact(&expected_1, Duration::from_secs(2), Duration::from_secs(90));
    assert!(ok, "first batch: {}", diff(&counts.last, &expected_1));

    // Standby stores catch up with their actives once the input stops.
    let mut lag = Vec::new();
    let caught_up = Instant::now();
    wait_for(
        "standby stores equal to their actives",
        Duration::from_secs(30),
        || {
            lag = lagging_standbys(&[a.snapshot(), b.snapshot()]);
            lag.is_empty()
        },
    );
    let (sa, sb) = (a.snapshot(), b.snapshot());
    for s in [&sa, &sb] {
        let standby = tasks_with(s, StreamsTaskRole::Standby);
        let active = tasks_with(s, StreamsTaskRole::Active);
        eprintln!(
            "{}: active {active:?}, standby {standby:?}; {:?}",
            s.member_id, s.stats
        );
        assert!(
            standby.iter().all(|t| t.subtopology_id == STATEFUL),
            "standbys only of the stateful subtopology: {standby:?}"
        );
        assert!(
            standby.is_disjoint(&active),
            "a task both active and standby"
        );
        let words: usize = s
            .tasks
            .values()
            .filter(|t| t.role == StreamsTaskRole::Standby)
            .map(|t| t.counts.len())
            .sum();
        assert!(words > 0, "{}: standby stores are empty", s.member_id);
    }
    eprintln!(
        "standby stores equal to the actives {:?} after the counts settled",
        caught_up.elapsed()
    );

    // The broker's view: the same standbys, and (4.4+) their offset sums.
    let (desc, offsets_seen) = wait_for_caught_up_offsets(&bootstrap, &app, offsets_reported);
    for s in [&sa, &sb] {
        let m = desc
            .members
            .iter()
            .find(|m| m.member_id == s.member_id)
            .unwrap_or_else(|| panic!("{} not described", s.member_id));
        assert_eq!(
            m.assignment.standby,
            tasks_with(s, StreamsTaskRole::Standby),
            "described standbys of {}",
            s.member_id
        );
    }
    assert!(
        offsets_seen,
        "described task offsets never those of caught-up standbys"
    );

    // rust-a closes: rust-b promotes its standbys of rust-a's stateful tasks.
    let moved: BTreeSet<StreamsTaskId> = tasks_with(&sa, StreamsTaskRole::Active)
        .into_iter()
        .filter(|t| t.subtopology_id == STATEFUL)
        .collect();
    let standby_b = tasks_with(&sb, StreamsTaskRole::Standby);
    assert!(!moved.is_empty(), "rust-a holds no stateful active task");
    assert!(
        moved.is_subset(&standby_b),
        "rust-b has standbys {standby_b:?}, not of every stateful task of rust-a {moved:?}"
    );
    let restored_before = sb.stats.restored;
    let changelog = changelog_ends(&bootstrap, &app, &moved);
    let stats_a = a.close();
    let promoted = Instant::now();
    wait_for("rust-b to hold every task", Duration::from_secs(60), || {
        let s = b.snapshot();
        s.stats.active_tasks == 2 * PARTITIONS as usize && s.stats.standby_tasks == 0
    });
    let after = b.snapshot();
    let restored = after.stats.restored - restored_before;
    eprintln!(
        "promotion of {moved:?} took {:?}: restored {restored} changelog records of {changelog} \
         (rust-a closed with {stats_a:?})",
        promoted.elapsed()
    );
    assert!(changelog > 0, "the promoted tasks' changelogs are empty");
    assert!(
        restored as i64 * 10 <= changelog,
        "promotion restored {restored} of {changelog} changelog records: not only the tail"
    );

    let feeder = feed(&bootstrap, &in_t, lines_2, 250, Duration::from_millis(100));
    feeder.join().expect("feeder");
    let ok = counts.settle_exact(&expected, Duration::from_secs(2), Duration::from_secs(90));
    assert!(ok, "after the promotion: {}", diff(&counts.last, &expected));

    // rust-c joins: rust-b hands it active tasks and keeps their stores as standbys. They
    // were checkpointed when rust-b stopped them (its writes flushed), so the standbys read
    // nothing again; without the checkpoint they would re-read what rust-b wrote as active.
    let before_c = b.snapshot();
    let c = RustInstance::start("rust-c", &bootstrap, &app, &in_t, &out_t);
    wait_for("standby tasks on rust-b", Duration::from_secs(60), || {
        let s = b.snapshot();
        s.stats.standby_tasks > 0 && c.snapshot().stats.standby_tasks > 0
    });
    wait_for(
        "standby stores equal to their actives (with rust-c)",
        Duration::from_secs(30),
        || {
            lag = lagging_standbys(&[b.snapshot(), c.snapshot()]);
            lag.is_empty()
        },
    );
    let after_c = b.snapshot();
    let handed = tasks_with(&after_c, StreamsTaskRole::Standby);
    let reread = after_c.stats.standby_applied - before_c.stats.standby_applied;
    let handed_changelog = changelog_ends(&bootstrap, &app, &handed);
    eprintln!(
        "rust-c joined: rust-b's stores of {handed:?} kept as standbys re-read {reread} of \
         {handed_changelog} changelog records"
    );
    assert!(
        reread as i64 * 10 <= handed_changelog,
        "the stores rust-b handed over re-read {reread} of {handed_changelog} records"
    );
    let stats_c = c.close();
    let stats_b = b.close();
    eprintln!(
        "standby: exact ({} updates for {} words); rust-b {stats_b:?}; rust-c {stats_c:?}",
        counts.updates,
        expected.values().sum::<i64>()
    );
}

/// The stateful stores of `s` merged (active and standby): word → count.
fn stateful_counts(s: &Snapshot) -> BTreeMap<String, i64> {
    s.tasks
        .iter()
        .filter(|(id, _)| id.subtopology_id == STATEFUL)
        .flat_map(|(_, t)| t.counts.iter().map(|(w, n)| (w.clone(), *n)))
        .collect()
}

/// Java WordCount holds actives, a Rust instance their standbys (read from the changelog
/// Java writes); Java stops cleanly and the Rust instance promotes its standbys, restoring
/// only the tail, and counts a second batch exactly.
#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn java_active_rust_standby_promoted_when_java_stops() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    init_logging();
    let cluster = Cluster::get();
    let bootstrap = cluster.plaintext().to_string();
    let app = unique_name("wcsj");
    let (in_t, out_t) = (format!("{app}-in"), format!("{app}-out"));
    let offsets_reported = configure_group(&cluster, &app);
    create_topics(&bootstrap, &in_t, &out_t, PARTITIONS);
    let (lines_1, expected_1) = input(8_000, 400, 7);
    let (lines_2, expected_2) = input(3_000, 400, 8);
    let expected = sum_maps(&expected_1, &expected_2);

    let mut java = java_word_count(&cluster, &app, &in_t, &out_t);
    java.wait_state(Duration::from_secs(60), |s| s == "RUNNING");
    let r = RustInstance::start("rust", &bootstrap, &app, &in_t, &out_t);
    wait_for(
        "standby tasks on the Rust instance",
        Duration::from_secs(60),
        || r.snapshot().stats.standby_tasks > 0,
    );
    let feeder = feed(&bootstrap, &in_t, lines_1, 250, Duration::from_millis(100));
    let mut counts = Counts::new(&bootstrap, &out_t, PARTITIONS);
    feeder.join().expect("feeder");
    let ok = counts.settle_exact(&expected_1, Duration::from_secs(2), Duration::from_secs(90));
    assert!(ok, "first batch: {}", diff(&counts.last, &expected_1));

    // Rust holds every stateful task, active or standby: its stores together are the counts.
    let mut merged = BTreeMap::new();
    wait_for(
        "the Rust stores (active + standby) to equal the counts",
        Duration::from_secs(30),
        || {
            merged = stateful_counts(&r.snapshot());
            merged == expected_1
        },
    );
    let sr = r.snapshot();
    // Java's reports and Rust's follow the same convention (4.4+).
    let (desc, offsets_seen) = wait_for_caught_up_offsets(&bootstrap, &app, offsets_reported);
    assert!(
        desc.members
            .iter()
            .any(|m| m.member_id == sr.member_id && !m.assignment.standby.is_empty()),
        "the Rust member has no described standby"
    );
    assert!(
        offsets_seen,
        "described task offsets never those of caught-up standbys"
    );
    let java_active = java.active_tasks();
    let moved: BTreeSet<StreamsTaskId> = java_active
        .iter()
        .filter(|t| t.subtopology_id == STATEFUL)
        .cloned()
        .collect();
    let standby = tasks_with(&sr, StreamsTaskRole::Standby);
    eprintln!(
        "java active {java_active:?}; rust standby {standby:?}, {:?}",
        sr.stats
    );
    assert!(!moved.is_empty(), "Java holds no stateful active task");
    assert!(
        moved.is_subset(&standby),
        "Rust has standbys {standby:?}, not of every stateful task of Java {moved:?}"
    );
    let changelog = changelog_ends(&bootstrap, &app, &moved);
    java.close();
    let promoted = Instant::now();
    wait_for("Rust to hold every task", Duration::from_secs(60), || {
        let s = r.snapshot();
        s.stats.active_tasks == 2 * PARTITIONS as usize && s.stats.standby_tasks == 0
    });
    let restored = r.snapshot().stats.restored - sr.stats.restored;
    eprintln!(
        "Rust held every task {:?} after Java's close returned; promotion of {moved:?} restored {restored} of {changelog} \
         changelog records",
        promoted.elapsed()
    );
    assert!(changelog > 0, "the promoted tasks' changelogs are empty");
    assert!(
        restored as i64 * 10 <= changelog,
        "promotion restored {restored} of {changelog} changelog records: not only the tail"
    );
    let feeder = feed(&bootstrap, &in_t, lines_2, 250, Duration::from_millis(100));
    feeder.join().expect("feeder");
    let ok = counts.settle_exact(&expected, Duration::from_secs(2), Duration::from_secs(90));
    let stats = r.close();
    assert!(ok, "after the promotion: {}", diff(&counts.last, &expected));
    eprintln!(
        "java active + rust standby: exact ({} updates for {} words); rust {stats:?}",
        counts.updates,
        expected.values().sum::<i64>()
    );
}

/// A member fenced while it holds standbys (a Rust process stopped with SIGSTOP past the
/// session timeout, then resumed) keeps their stores while it rejoins and reuses them when
/// they are assigned again, as Java keeps its standby tasks on `onAllTasksLost`; the
/// survivor promotes its own standbys of the stopped member's actives, restoring only the
/// tail, and the counts stay exact.
#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn a_fenced_member_keeps_its_standbys_while_it_rejoins() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    init_logging();
    let cluster = Cluster::get();
    let bootstrap = cluster.plaintext().to_string();
    let app = unique_name("wcsf");
    let (in_t, out_t) = (format!("{app}-in"), format!("{app}-out"));
    configure_group(&cluster, &app);
    create_topics(&bootstrap, &in_t, &out_t, PARTITIONS);
    let (lines_1, expected_1) = input(6_000, 400, 9);
    let (lines_2, expected_2) = input(2_000, 400, 10);
    let expected = sum_maps(&expected_1, &expected_2);
    let log = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{app}.log"));

    let survivor = RustInstance::start("survivor", &bootstrap, &app, &in_t, &out_t);
    let victim = RustProcess::start_logged(&bootstrap, &app, &in_t, &out_t, Some(&log));
    wait_for("a split with standbys", Duration::from_secs(90), || {
        let s = survivor.snapshot().stats;
        s.active_tasks == PARTITIONS as usize && s.standby_tasks > 0
    });
    let feeder = feed(&bootstrap, &in_t, lines_1, 250, Duration::from_millis(100));
    let mut counts = Counts::new(&bootstrap, &out_t, PARTITIONS);
    feeder.join().expect("feeder");
    let ok = counts.settle_exact(&expected_1, Duration::from_secs(2), Duration::from_secs(90));
    assert!(ok, "first batch: {}", diff(&counts.last, &expected_1));
    // The victim's commits and standby reads are done (commit interval 500 ms).
    std::thread::sleep(Duration::from_secs(2));
    let before = survivor.snapshot();

    victim.pause(true);
    let stopped = Instant::now();
    wait_for(
        "the survivor to hold every task",
        Duration::from_secs(30),
        || survivor.snapshot().stats.active_tasks == 2 * PARTITIONS as usize,
    );
    let after = survivor.snapshot();
    let promoted = tasks_with(&before, StreamsTaskRole::Standby);
    let changelog = changelog_ends(&bootstrap, &app, &promoted);
    let restored = after.stats.restored - before.stats.restored;
    eprintln!(
        "victim stopped; the survivor held every task after {:?}, promoting {promoted:?}: \
         restored {restored} of {changelog} changelog records",
        stopped.elapsed()
    );
    assert!(
        restored as i64 * 10 <= changelog,
        "promotion restored {restored} of {changelog} changelog records: not only the tail"
    );

    victim.pause(false);
    wait_for(
        "the victim back with tasks",
        Duration::from_secs(60),
        || {
            let s = survivor.snapshot().stats;
            s.active_tasks < 2 * PARTITIONS as usize && s.standby_tasks > 0
        },
    );
    let feeder = feed(&bootstrap, &in_t, lines_2, 250, Duration::from_millis(100));
    feeder.join().expect("feeder");
    let ok = counts.settle_exact(&expected, Duration::from_secs(2), Duration::from_secs(90));
    victim.close();
    let stats = survivor.close();
    let text = std::fs::read_to_string(&log).expect("the victim's log");
    let lines =
        |needle: &str| -> Vec<&str> { text.lines().filter(|l| l.contains(needle)).collect() };
    let kept = lines("its stores are kept while rejoining");
    let reused = lines("reusing the standby stores kept across the fencing");
    let dropped = lines("kept standby not assigned again, dropped");
    for l in kept.iter().chain(&reused).chain(&dropped) {
        eprintln!("victim: {l}");
    }
    assert!(ok, "after the fencing: {}", diff(&counts.last, &expected));
    assert!(
        !kept.is_empty(),
        "the fenced member lost no standby ({})",
        log.display()
    );
    assert!(
        !reused.is_empty(),
        "the fenced member reused none of its kept standbys ({})",
        log.display()
    );
    eprintln!(
        "fenced member: kept {} standby task(s), reused {}, dropped {}; exact; survivor {stats:?}",
        kept.len(),
        reused.len(),
        dropped.len()
    );
}
