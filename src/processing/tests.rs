//! The rules of the stream thread, task manager, state manager and collector, on the
//! in-memory cluster of [`testkit`](super::testkit) (no broker).

use std::collections::BTreeSet;
use std::time::Duration;

use crate::streams::commit::TopicPartition;
use crate::streams::{StreamsTaskPlan, StreamsTaskRole};

use super::lifecycle::{LocalTask, RuntimeState};
use super::ports::GroupPort;
use super::task_manager::decide;
use super::testkit::*;

const ACTIVE: StreamsTaskRole = StreamsTaskRole::Active;
const STANDBY: StreamsTaskRole = StreamsTaskRole::Standby;
const HOUR: Duration = Duration::from_secs(3600);

fn count(store: &super::KeyValueStore, key: &str) -> Option<i64> {
    let v: [u8; 8] = store.get(key.as_bytes())?.try_into().ok()?;
    Some(i64::from_be_bytes(v))
}

/// Java's `handleRevocation`: a revoked active task's output is flushed and its offsets
/// committed before the task is reported released (another member may own it right after).
#[test]
fn revocation_flushes_then_commits_then_releases() {
    let mut h = Harness::new(HOUR);
    for (i, w) in ["a", "b", "a"].iter().enumerate() {
        h.shared.append(&input(0), w, Some(b"x"), 10 + i as i64);
    }
    h.assign(&[(0, ACTIVE)]);
    h.step();
    assert_eq!(h.thread.tasks.processed, 3);
    assert_eq!(h.shared.committed(&input(0)), None, "no commit yet");
    h.assign(&[]);
    h.step();
    let flush = h.shared.position("flush").expect("flushed");
    let commit = h.shared.position("commit in-0=3").expect("committed");
    let release = h.shared.position("release 0_0").expect("released");
    assert!(
        flush < commit && commit < release,
        "{:?}",
        h.shared.events()
    );
    // Flushed before the commit, through the record cache: `a` twice, `b` once.
    assert_eq!(h.shared.log(&changelog(0)).len(), 2, "changelog flushed");
    assert!(h.thread.tasks.active.is_empty());
}

/// Java's `handleLostAll`: lost active tasks are closed dirty, nothing is committed for
/// them (another member already owns them).
#[test]
fn lost_tasks_are_dropped_without_a_commit() {
    let mut h = Harness::new(HOUR);
    h.shared.append(&input(0), "a", Some(b"x"), 1);
    h.shared.append(&input(1), "b", Some(b"x"), 1);
    h.assign(&[(0, ACTIVE), (1, ACTIVE)]);
    h.step();
    assert_eq!(h.thread.tasks.processed, 2);
    h.lose_all(&[(1, ACTIVE)]);
    h.step();
    let events = h.shared.events();
    assert!(
        !events.iter().any(|e| e.starts_with("commit")),
        "{events:?}"
    );
    assert_eq!(h.shared.committed(&input(0)), None);
    assert_eq!(h.shared.committed(&input(1)), None);
    // Task 1 was lost and given back: it starts again from its (missing) commit.
    assert!(h.thread.tasks.active.contains_key(&task(1)));
    assert!(!h.thread.tasks.active.contains_key(&task(0)));
}

/// The group moves a task away while this member is starting it (the heartbeat thread took a
/// newer target between the plan and the task's offset fetch, which then answers "not
/// assigned"): the task is left out, never acknowledged, and the runtime goes on; the other
/// tasks of the plan start. Given back later, it starts from its committed offsets.
#[test]
fn a_task_moved_away_while_starting_is_skipped_not_fatal() {
    let mut h = Harness::new(HOUR);
    h.shared.append(&input(0), "a", Some(b"x"), 1);
    h.shared.append(&input(1), "b", Some(b"x"), 1);
    h.assign(&[(0, ACTIVE), (1, ACTIVE)]);
    h.shared.lock().retarget_on_fetch = Some(vec![(1, ACTIVE)]);
    h.step();
    assert!(!h.thread.tasks.active.contains_key(&task(0)), "not started");
    assert!(h.thread.tasks.active.contains_key(&task(1)));
    assert_eq!(h.thread.group.role_of(&task(0)), None, "never acknowledged");
    let skip = h.shared.position("skip 0_0").expect("skipped");
    let ack = h.shared.position("acknowledged").expect("acknowledged");
    assert!(skip < ack, "{:?}", h.shared.events());
    assert_eq!(h.thread.tasks.processed, 1, "only task 1's record");
    // The newer target (task 1 only) needs no revocation of task 0.
    h.step();
    assert!(
        !h.shared
            .events()
            .iter()
            .any(|e| e.starts_with("release 0_0")),
        "{:?}",
        h.shared.events()
    );
    h.assign(&[(0, ACTIVE), (1, ACTIVE)]);
    h.step();
    assert!(h.thread.tasks.active.contains_key(&task(0)));
    assert_eq!(h.thread.tasks.processed, 2, "task 0's record, once");
}

/// Java's `PartitionGroup#readyToProcess` under `max.task.idle.ms=0` (the default): a task
/// reading two partitions (a stream-table join) processes nothing while one of them has an
/// empty queue and records on the broker (or nothing known of it yet), so its records are
/// taken in timestamp order across both: the table's updates at 5 and 6 before the stream's
/// record at 10. With -1 the stream's record goes first.
#[test]
fn a_task_waits_for_its_partitions_with_records_on_the_broker() {
    let tbl = TopicPartition::new("tbl", 0);
    for wait in [true, false] {
        let mut h = Harness::new(HOUR);
        h.thread.tasks.wait_for_lagging = wait;
        h.shared.lock().second_input = Some("tbl".into());
        h.shared.append(&input(0), "a", Some(b"x"), 10);
        h.shared.append(&tbl, "a", Some(b"t"), 5);
        h.shared.append(&tbl, "a", Some(b"u"), 6);
        {
            let mut c = h.shared.lock();
            c.lag_unknown.insert(tbl.clone());
            c.withheld.insert(tbl.clone());
        }
        h.assign(&[(0, ACTIVE)]);
        h.step();
        let processed_first = h.thread.tasks.processed;
        // Known now, and still on the broker: a task under max.task.idle.ms=0 waits on.
        h.shared.lock().lag_unknown.clear();
        h.step();
        let processed_second = h.thread.tasks.processed;
        h.shared.lock().withheld.clear();
        h.step();
        h.step();
        let order: Vec<String> = h
            .shared
            .events()
            .into_iter()
            .filter(|e| e.starts_with("process 0_0"))
            .collect();
        match wait {
            true => {
                assert_eq!((processed_first, processed_second), (0, 0), "waited");
                assert_eq!(order, ["process 0_0 0", "process 0_0 1", "process 0_0 0"]);
            }
            false => {
                assert_eq!(processed_first, 1, "-1: no wait");
                assert_eq!(order, ["process 0_0 0", "process 0_0 0", "process 0_0 1"]);
            }
        }
        assert_eq!(h.thread.tasks.processed, 3);
    }
}

/// A partition known to be caught up (fetched lag 0, e.g. a table topic with nothing new)
/// is not waited for.
#[test]
fn a_caught_up_partition_is_not_waited_for() {
    let mut h = Harness::new(HOUR);
    h.shared.lock().second_input = Some("tbl".into());
    h.shared.append(&input(0), "a", Some(b"x"), 10);
    h.assign(&[(0, ACTIVE)]);
    h.step();
    assert_eq!(h.thread.tasks.processed, 1);
}

/// An active task's stores are restored from their changelogs before its first record is
/// processed: the count continues from the changelog's value.
#[test]
fn stores_are_restored_before_processing() {
    let mut h = Harness::new(HOUR);
    h.shared
        .append(&changelog(0), "a", Some(&5i64.to_be_bytes()), 1);
    h.shared.append(&input(0), "a", Some(b"x"), 2);
    h.assign(&[(0, ACTIVE)]);
    h.step();
    let restore = h
        .shared
        .position("restore app-counts-changelog-0")
        .expect("restored");
    let process = h.shared.position("process 0_0").expect("processed");
    assert!(restore < process, "{:?}", h.shared.events());
    assert_eq!(count(h.active_store(0).unwrap(), "a"), Some(6));
    assert_eq!(h.thread.state.restored, 1);
}

/// A standby promoted to active keeps the store it kept up to date: the active task
/// restores only what the standby had not read (nothing here), not the whole changelog.
#[test]
fn a_promoted_standby_reuses_its_store() {
    let mut h = Harness::new(HOUR);
    for i in 0..4 {
        h.shared.append(
            &changelog(0),
            &format!("k{i}"),
            Some(&1i64.to_be_bytes()),
            i,
        );
    }
    h.assign(&[(0, STANDBY)]);
    h.step();
    assert_eq!(h.thread.state.standby_applied, 4);
    h.shared
        .append(&changelog(0), "k9", Some(&7i64.to_be_bytes()), 9);
    h.step(); // catch-up
    assert_eq!(h.thread.state.standby_applied, 5);
    h.assign(&[(0, ACTIVE)]);
    h.step();
    assert!(h.thread.state.standby.is_empty());
    let store = h.active_store(0).expect("active");
    assert_eq!(store.len(), 5);
    assert_eq!(count(store, "k9"), Some(7));
    assert_eq!(h.thread.state.restored, 0, "nothing left to restore");
    assert!(
        h.shared
            .events()
            .contains(&"restore app-counts-changelog-0 from 5".to_string()),
        "{:?}",
        h.shared.events()
    );
}

/// A processor error fails the runtime: later iterations refuse, close commits nothing,
/// and a commit never passes the failed record.
#[test]
fn a_processor_error_fails_the_runtime_without_a_commit_past_its_record() {
    let mut h = Harness::new(HOUR);
    for v in [&b"ok"[..], b"ok", b"boom", b"ok"] {
        h.shared.append(&input(0), "a", Some(v), 1);
    }
    h.assign(&[(0, ACTIVE)]);
    assert!(h.thread.run_once().is_err());
    assert!(h
        .thread
        .failed
        .as_deref()
        .unwrap_or("")
        .contains("boom at offset 2"));
    assert!(
        h.thread.run_once().is_err(),
        "a failed runtime processes nothing"
    );
    assert_eq!(h.thread.tasks.processed, 2);
    h.thread.close().unwrap();
    let events = h.shared.events();
    assert!(
        !events.iter().any(|e| e.starts_with("commit")),
        "{events:?}"
    );
    assert_eq!(h.shared.committed(&input(0)), None);

    // An explicit commit after the failure stops before the failed record.
    let mut h = Harness::new(HOUR);
    for v in [&b"ok"[..], b"boom", b"ok"] {
        h.shared.append(&input(0), "a", Some(v), 1);
    }
    h.assign(&[(0, ACTIVE)]);
    assert!(h.thread.run_once().is_err());
    h.thread.commit_all().unwrap();
    assert_eq!(h.shared.committed(&input(0)), Some(1));
}

#[test]
fn decisions_follow_the_plan() {
    let (t0, t1, t2) = (task(0), task(1), task(2));
    let plan = StreamsTaskPlan {
        lost: vec![(t2.clone(), ACTIVE)],
        revoked: vec![(t0.clone(), ACTIVE)],
        assigned: vec![(t0.clone(), STANDBY)],
    };
    let dirty = BTreeSet::from([t1.clone(), t2.clone()]);
    let d = decide(&plan, &dirty);
    assert_eq!(d.drop_dirty, vec![t2.clone()]);
    assert_eq!(
        d.commit,
        vec![t0.clone(), t1.clone()],
        "dirty others too, never lost ones"
    );
    assert!(d.carry.contains(&t0));
    // No revoked active task: nothing committed by the reconciliation.
    let plan = StreamsTaskPlan {
        lost: vec![],
        revoked: vec![(t0.clone(), STANDBY)],
        assigned: vec![],
    };
    let d = decide(&plan, &dirty);
    assert!(d.commit.is_empty());
    assert!(d.carry.is_empty());
}

/// Issue 21 item 11: close closes the tasks (processors closed, output flushed, offsets
/// committed) before the member leaves the group; the old close left first and dropped
/// the processors after.
#[test]
fn close_closes_the_tasks_before_leaving() {
    let mut h = Harness::new(HOUR);
    h.shared.append(&input(0), "a", Some(b"x"), 1);
    h.assign(&[(0, ACTIVE)]);
    h.step();
    h.thread.close().unwrap();
    let close = h.shared.position("close 0_0").expect("processor closed");
    let commit = h.shared.position("commit in-0=1").expect("committed");
    let leave = h.shared.position("leave").expect("left");
    assert!(close < commit && commit < leave, "{:?}", h.shared.events());
    assert!(h.thread.tasks.active.is_empty());
}

/// A processor is initialized once its stores are restored, before its first record, and
/// closed before its task is committed and released (revocation) or dropped (loss).
#[test]
fn processors_are_initialized_after_restore_and_closed_when_their_task_goes() {
    let mut h = Harness::new(HOUR);
    h.shared
        .append(&changelog(0), "a", Some(&2i64.to_be_bytes()), 1);
    h.shared.append(&input(0), "a", Some(b"x"), 2);
    h.assign(&[(0, ACTIVE), (1, ACTIVE)]);
    h.step();
    let restore = h.shared.position("restore app-counts-changelog-0").unwrap();
    let init = h
        .shared
        .position("init 0_0 (1 keys)")
        .expect("initialized, restored");
    let process = h.shared.position("process 0_0").unwrap();
    assert!(restore < init && init < process, "{:?}", h.shared.events());
    assert!(
        h.shared.position("init 0_1").is_some(),
        "a task without records too"
    );
    h.assign(&[(1, ACTIVE)]);
    h.step();
    let close = h.shared.position("close 0_0").expect("closed");
    let commit = h.shared.position("commit in-0=1").unwrap();
    let release = h.shared.position("release 0_0").unwrap();
    assert!(
        close < commit && commit < release,
        "{:?}",
        h.shared.events()
    );
    h.lose_all(&[]);
    h.step();
    assert!(
        h.shared.position("close 0_1").is_some(),
        "a lost task's processor closes"
    );
    assert_eq!(
        h.shared
            .events()
            .iter()
            .filter(|e| e.starts_with("commit"))
            .count(),
        1
    );
}

fn record_states(h: &mut Harness) -> std::sync::Arc<std::sync::Mutex<Vec<RuntimeState>>> {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let s = seen.clone();
    h.thread.lifecycle.set_listener(Box::new(move |new, _old| {
        s.lock().unwrap().push(new);
    }));
    h.thread.lifecycle.to(RuntimeState::Rebalancing); // what start does
    seen
}

#[test]
fn the_runtime_state_follows_javas_transitions() {
    use RuntimeState::*;
    let mut h = Harness::new(HOUR);
    let seen = record_states(&mut h);
    h.assign(&[(0, ACTIVE)]);
    h.step();
    assert_eq!(h.thread.lifecycle.state(), Running);
    h.assign(&[(0, ACTIVE), (1, STANDBY)]);
    h.step();
    h.thread.close().unwrap();
    let want = [
        Rebalancing,
        Running,
        Rebalancing,
        Running,
        PendingShutdown,
        NotRunning,
    ];
    assert_eq!(*seen.lock().unwrap(), want);

    let mut h = Harness::new(HOUR);
    let seen = record_states(&mut h);
    h.shared.append(&input(0), "a", Some(b"boom"), 1);
    h.assign(&[(0, ACTIVE)]);
    assert!(h.thread.run_once().is_err());
    assert_eq!(h.thread.lifecycle.state(), PendingError);
    h.thread.close().unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        [Rebalancing, Running, PendingError, Error]
    );
}

#[test]
fn local_tasks_lists_active_and_standby_tasks_with_their_partitions() {
    let mut h = Harness::new(HOUR);
    h.assign(&[(0, ACTIVE), (2, STANDBY)]);
    h.step();
    let tasks = h.thread.local_tasks();
    assert_eq!(
        tasks,
        vec![
            LocalTask {
                task: task(0),
                role: ACTIVE,
                partitions: vec![input(0)],
                changelogs: vec![changelog(0)],
            },
            LocalTask {
                task: task(2),
                role: STANDBY,
                partitions: vec![input(2)],
                changelogs: vec![changelog(2)],
            },
        ]
    );
}

/// The old paths under `processing` name the very items of `crate::state`.
#[test]
#[allow(deprecated)]
fn old_processing_paths_name_the_same_items() {
    use crate::processing;
    let s: crate::state::KeyValueStore =
        processing::store::KeyValueStore::new("s", processing::StoreFormat::KeyValue);
    let t: processing::KeyValueStore = s;
    let _: &dyn crate::state::StateStore = &t as &dyn processing::store::StateStore;
    let f: fn(&str, &str) -> String = processing::changelog_topic;
    assert_eq!(f("a", "s"), crate::state::changelog_topic("a", "s"));
    let summary = processing::changelog::RestoreSummary {
        records: 0,
        start: 0,
        end: 0,
    };
    let _: crate::state::RestoreSummary = summary;
    let _: Option<crate::state::ChangelogReader> = None::<processing::ChangelogReader>;
}

/// A producer that keeps the records it is given.
struct Keep(std::sync::Arc<std::sync::Mutex<Vec<crate::producer::ProducerRecord>>>);

impl super::ports::ProducePort for Keep {
    fn send(&mut self, record: crate::producer::ProducerRecord) -> Result<i32, crate::Error> {
        let p = record.partition.unwrap_or(0);
        self.0.lock().unwrap().push(record);
        Ok(p)
    }
    fn send_ready(&mut self, _: std::time::Instant) -> Result<(), crate::Error> {
        Ok(())
    }
    fn flush(&mut self, _: std::time::Instant) -> Result<(), crate::Error> {
        Ok(())
    }
}

/// A store that is no key-value store: what a window store will be to the runtime.
#[derive(Default)]
struct Other {
    applied: Vec<i64>,
    queued: Vec<crate::state::ChangelogRecord>,
}

impl crate::state::StateStore for Other {
    fn name(&self) -> &str {
        "other"
    }
    fn changelog_offset(&self) -> Option<i64> {
        self.applied.last().copied()
    }
    fn apply_changelog(&mut self, offset: i64, _: &[u8], _: Option<&[u8]>, _: i64) {
        self.applied.push(offset);
    }
    fn take_changelog(&mut self) -> Vec<crate::state::ChangelogRecord> {
        std::mem::take(&mut self.queued)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
    fn checkpoint(&mut self, _: i64) {}
    fn clear(&mut self) {}
    fn is_empty(&self) -> bool {
        self.applied.is_empty()
    }
}

/// Issue 22's seams: a processor finds a store by name through the trait (the key-value
/// store through its typed accessor, any other kind as `dyn StateStore`); the store's
/// change-logging writes through the collector as its sink, each record moved into the
/// producer record, to the changelog partition named once with the store.
#[test]
fn stores_are_found_by_name_and_log_through_the_collector() {
    use super::state_manager::{Stores, TaskStore};
    use crate::state::{KeyValueStore, StoreFormat};
    let sent = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut collector = super::collector::RecordCollector::new(Box::new(Keep(sent.clone())));
    let tp = changelog(3);
    let mut stores: Stores = [
        (
            STORE.to_string(),
            TaskStore {
                store: Box::new(KeyValueStore::new(STORE, StoreFormat::KeyValue)),
                changelog: Some(tp.clone()),
            },
        ),
        (
            "other".to_string(),
            TaskStore {
                store: Box::<Other>::default(),
                changelog: Some(crate::TopicPartition::new("app-other-changelog", 3)),
            },
        ),
    ]
    .into_iter()
    .collect();
    let t = task(3);
    let mut ctx = super::TaskContext {
        task: &t,
        collector: &mut collector,
        stores: &mut stores,
    };
    ctx.store(STORE).unwrap().put(b"k", Some(b"v"), 7);
    ctx.state_store("other")
        .unwrap()
        .apply_changelog(4, b"k", None, 1);
    let e = ctx.store("other").unwrap_err().to_string();
    assert!(e.contains("not a key-value store"), "{e}");
    assert!(ctx.state_store("nope").is_err());
    let other = stores["other"].store.as_any().downcast_ref::<Other>();
    assert_eq!(other.map(|o| o.applied.clone()), Some(vec![4]));

    // A queued record is lent to the producer (`ProducePort::send_ref`): no producer
    // record is made of it at all (this port keeps a copy; tests/alloc_limits counts the
    // real path's allocations).
    let record = crate::state::ChangelogRecord {
        key: b"o".to_vec(),
        value: Some(b"w".to_vec()),
        timestamp: 8,
    };
    let other = stores.get_mut("other").unwrap().store.as_any_mut();
    other.downcast_mut::<Other>().unwrap().queued.push(record);
    for s in stores.values_mut() {
        collector.send_changelog(s).unwrap();
    }
    let sent = sent.lock().unwrap();
    assert_eq!(
        sent.len(),
        2,
        "one write, one changelog record; one queued record"
    );
    assert_eq!(sent[0].topic, tp.topic);
    assert_eq!(sent[0].partition, Some(3));
    assert_eq!(sent[0].key.as_deref(), Some(&b"k"[..]));
    assert_eq!(sent[0].value.as_deref(), Some(&b"v"[..]));
    assert_eq!(sent[0].timestamp, Some(7));
    assert_eq!(sent[1].topic, "app-other-changelog");
    assert_eq!(sent[1].key.as_deref(), Some(&b"o"[..]));
    assert_eq!(sent[1].value.as_deref(), Some(&b"w"[..]));
    assert_eq!(sent[1].timestamp, Some(8));
    assert_eq!(collector.changelog_records, 2);
}

/// Issue 25: with the record cache (on by default), the updates of a key between two
/// commits reach the changelog once, at the commit, before the offsets; without it, each
/// update is one changelog record.
#[test]
fn the_record_cache_writes_a_key_once_per_commit() {
    for (cache, expected) in [(crate::state::DEFAULT_CACHE_MAX_BYTES, 1), (0, 5)] {
        let mut h = Harness::new(Duration::from_secs(1));
        h.thread
            .state
            .set_cache(crate::state::ThreadCache::new(cache));
        for ts in 0..5 {
            h.shared.append(&input(0), "a", Some(b"x"), ts);
        }
        h.assign(&[(0, ACTIVE)]);
        h.step();
        assert_eq!(h.thread.tasks.processed, 5);
        assert_eq!(
            count(h.active_store(0).unwrap(), "a"),
            Some(5),
            "reads see the cache"
        );
        assert_eq!(h.shared.log(&changelog(0)).len(), 0, "nothing flushed yet");
        h.thread.commit_all().unwrap();
        let log = h.shared.log(&changelog(0));
        assert_eq!(log.len(), expected, "cache {cache}: {log:?}");
        let last = log.last().unwrap();
        assert_eq!(last.1.as_deref(), Some(&5i64.to_be_bytes()[..]));
        assert_eq!(last.2, 4, "the timestamp of the last update");
        // The changelog records went out with the flush before the commit: 5 outputs and
        // the changelog records.
        let flush = format!("flush ({} records)", 5 + expected);
        let (f, c) = (
            h.shared.position(&flush),
            h.shared.position("commit in-0=5"),
        );
        assert!(f.is_some() && f < c, "{:?}", h.shared.events());
        h.thread.commit_all().unwrap();
        assert_eq!(h.shared.log(&changelog(0)).len(), expected, "flushed once");
    }
}

/// A revocation commits through the cache: its dirty entries are in the changelog before
/// the offsets are committed, and the store kept for a later assignment holds them.
#[test]
fn a_revocation_flushes_the_cache_before_the_commit() {
    let mut h = Harness::new(HOUR);
    for ts in 0..3 {
        h.shared.append(&input(0), "a", Some(b"x"), ts);
    }
    h.assign(&[(0, ACTIVE)]);
    h.step();
    assert!(h.shared.log(&changelog(0)).is_empty(), "cached");
    h.assign(&[]);
    h.step();
    let flush = h.shared.position("flush (4 records)");
    let commit = h.shared.position("commit in-0=3");
    assert!(flush.is_some() && flush < commit, "{:?}", h.shared.events());
    assert_eq!(h.shared.log(&changelog(0)).len(), 1);
    assert_eq!(
        h.thread.state.cache_bytes(),
        0,
        "a closed store gives its cache back"
    );
    // Assigned again: the kept store is where its changelog is, nothing to restore.
    h.assign(&[(0, ACTIVE)]);
    h.step();
    assert_eq!(count(h.active_store(0).unwrap(), "a"), Some(3));
    assert!(h
        .shared
        .events()
        .iter()
        .any(|e| e == "restore app-counts-changelog-0 from 1"));
}

/// A dirty close (a lost task) does not flush its cache: nothing of it reaches the
/// changelog, as nothing of its input was committed.
#[test]
fn a_lost_task_does_not_flush_its_cache() {
    let mut h = Harness::new(HOUR);
    for ts in 0..3 {
        h.shared.append(&input(0), "a", Some(b"x"), ts);
    }
    h.assign(&[(0, ACTIVE)]);
    h.step();
    h.lose_all(&[]);
    h.step();
    h.thread.commit_all().unwrap(); // a flush: whatever was sent is delivered
    assert!(h.thread.tasks.active.is_empty());
    assert!(
        h.shared.log(&changelog(0)).is_empty(),
        "{:?}",
        h.shared.events()
    );
    assert_eq!(h.shared.committed(&input(0)), None);
    assert_eq!(
        h.thread.state.cache_bytes(),
        0,
        "the dropped store's cache is given back"
    );
}

/// Issue 25, Must show 5, in the testkit: changelog records per input word of the count
/// half of WordCount (one task, 20 commits over 20,000 words of a 1,000-word vocabulary,
/// Zipf-like as a text's), with the cache on (default size) and off.
#[test]
fn changelog_records_per_word_with_and_without_the_cache() {
    let mut ratios = Vec::new();
    for cache in [crate::state::DEFAULT_CACHE_MAX_BYTES, 0] {
        let mut h = Harness::new(Duration::from_secs(1));
        h.thread
            .state
            .set_cache(crate::state::ThreadCache::new(cache));
        h.assign(&[(0, ACTIVE)]);
        h.step();
        let mut seed = 7u64;
        let mut distinct_per_commit = 0;
        for _ in 0..20 {
            let mut words = BTreeSet::new();
            for ts in 0..1000 {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                // Zipf-like: a word's rank is 1000^u for u uniform in [0, 1).
                let u = (seed >> 11) as f64 / (1u64 << 53) as f64;
                let rank = 1000f64.powf(u) as u32;
                h.shared
                    .append(&input(0), &format!("w{rank}"), Some(b"x"), ts);
                words.insert(rank);
            }
            distinct_per_commit += words.len();
            h.step();
            let later = h.shared.lock().now.map(|n| n + Duration::from_millis(1100));
            h.shared.lock().now = later;
            h.step();
        }
        assert_eq!(h.thread.tasks.processed, 20_000);
        let written = h.shared.log(&changelog(0)).len();
        if cache > 0 {
            assert_eq!(
                written, distinct_per_commit,
                "one record per key and commit"
            );
        }
        ratios.push(written as f64 / 20_000.0);
        eprintln!("cache.max.bytes={cache}: {written} changelog records for 20000 words");
    }
    eprintln!(
        "changelog records per word: cache on {:.4}, off {:.4}",
        ratios[0], ratios[1]
    );
    assert_eq!(ratios[1], 1.0, "without the cache, one record per update");
    assert!(ratios[0] < ratios[1], "{ratios:?}");
}

/// An input record's headers (shares of its fetched batch) are sent on as they are with
/// `&record.headers`, like a list of pairs; `&[]` sends none.
#[test]
fn a_records_headers_are_forwarded_by_send() {
    let sent = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut collector = super::collector::RecordCollector::new(Box::new(Keep(sent.clone())));
    let mut stores = super::state_manager::Stores::new();
    let t = task(0);
    let mut ctx = super::TaskContext {
        task: &t,
        collector: &mut collector,
        stores: &mut stores,
    };
    let tp = crate::TopicPartition::new("in", 0);
    let mut r = super::InputRecord::new(tp, 5, 9, Some(b"k"), Some(b"v"));
    let list = vec![(b"a".to_vec(), Some(b"1".to_vec())), (b"n".to_vec(), None)];
    r.headers = list.clone().into();
    let (key, value) = (r.key.as_deref(), r.value.as_deref());
    ctx.send("out", key, value, r.timestamp, &r.headers)
        .unwrap();
    ctx.send("out", None, None, 1, &list).unwrap();
    ctx.send_to_partition("out", 2, None, None, 1, &[]).unwrap();
    let sent = sent.lock().unwrap();
    assert_eq!(sent.len(), 3);
    assert_eq!(sent[0].headers, list, "the record's headers");
    assert_eq!(
        (sent[0].key.as_deref(), sent[0].timestamp),
        (Some(&b"k"[..]), Some(9))
    );
    assert_eq!(sent[1].headers, list, "a list of pairs");
    assert!(sent[2].headers.is_empty());
    assert_eq!(sent[2].partition, Some(2));
}
