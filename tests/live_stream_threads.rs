//! Live: `num.stream.threads` (issue 25). One instance with 2 stream threads and a second
//! instance with 1 share the 8 tasks of a 4-partition WordCount: the first instance is two
//! members of the group with one process id, both holding active tasks, and the counts are
//! exact.

mod common;
mod word_count_support;

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use common::{init_logging, unique_name, Cluster, LIVE};
use kafka_streams_group::{describe_streams_group, ClientConfig};
use word_count_support::{create_topics, diff, feed, input, Counts, RustInstance};

const PARTITIONS: i32 = 4;

/// Members per process id, with the active tasks of each member, once the group is
/// settled on three members that all hold tasks.
fn members_by_process(bootstrap: &str, app: &str) -> BTreeMap<String, Vec<usize>> {
    let config = ClientConfig::new(bootstrap);
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut last = BTreeMap::new();
    while Instant::now() < deadline {
        if let Ok(d) = describe_streams_group(&config, app, Duration::from_secs(10)) {
            let mut by: BTreeMap<String, Vec<usize>> = BTreeMap::new();
            for m in &d.members {
                by.entry(m.process_id.clone())
                    .or_default()
                    .push(m.assignment.active.len());
            }
            let held: usize = by.values().flatten().sum();
            let members: usize = by.values().map(Vec::len).sum();
            last = by.clone();
            if members == 3
                && held == 2 * PARTITIONS as usize
                && by.values().flatten().all(|n| *n > 0)
            {
                return by;
            }
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    last
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn two_stream_threads_and_a_second_instance_count_exactly() {
    let _ = LIVE;
    init_logging();
    let cluster = Cluster::get();
    let bootstrap = cluster.plaintext().to_string();
    let app = unique_name("threads");
    let (in_t, out_t) = (format!("{app}-in"), format!("{app}-out"));
    create_topics(&bootstrap, &in_t, &out_t, PARTITIONS);
    let (lines, expected) = input(20_000, 500, 25);
    let two = RustInstance::start_threads("two-threads", &bootstrap, &app, &in_t, &out_t, 2);
    let one = RustInstance::start("one-thread", &bootstrap, &app, &in_t, &out_t);
    let feeder = feed(&bootstrap, &in_t, lines, 500, Duration::from_millis(50));
    let by = members_by_process(&bootstrap, &app);
    feeder.join().expect("feeder");
    let mut counts = Counts::new(&bootstrap, &out_t, PARTITIONS);
    let ok = counts.settle_exact(&expected, Duration::from_secs(2), Duration::from_secs(90));
    let snapshot = two.snapshot();
    let stats_two = two.close();
    let stats_one = one.close();
    eprintln!("members per process id (active tasks each): {by:?}");
    eprintln!("two threads: {stats_two:?}; one thread: {stats_one:?}");
    let sizes: BTreeSet<usize> = by.values().map(Vec::len).collect();
    assert_eq!(
        sizes,
        BTreeSet::from([1, 2]),
        "one process with two members (the 2-thread instance), one with one: {by:?}"
    );
    assert!(
        by.values().flatten().all(|n| *n > 0),
        "every member, both threads included, holds active tasks: {by:?}"
    );
    let held_two = by
        .values()
        .find(|m| m.len() == 2)
        .map_or(0, |m| m.iter().sum());
    assert_eq!(
        snapshot.stats.active_tasks, held_two,
        "the instance's stats sum both threads' tasks"
    );
    assert!(stats_two.processed > 0 && stats_one.processed > 0);
    assert!(ok, "{}", diff(&counts.last, &expected));
}
