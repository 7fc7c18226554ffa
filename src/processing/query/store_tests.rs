//! Interactive store queries on the processing testkit (no broker): a reader thread asks,
//! the stream thread answers between its batches.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::dsl::serdes::Serdes;
use crate::error::Error;
use crate::streams::StreamsTaskId;
use crate::streams::StreamsTaskRole::{Active, Standby};

use super::super::context::{Processor, TaskContext};
use super::super::lifecycle::RuntimeState;
use super::super::task::InputRecord;
use super::super::testkit::*;
use super::super::workers::StateView;
use super::stores::{query_channel, StoreCatalog};
use super::{StoreQueryError, StoreQueryHandle, StoreQueryParameters};
use crate::state::StoreFormat;

/// A harness whose thread answers queries, and the handle asking them.
fn harness(h: Harness) -> (Harness, StoreQueryHandle) {
    let mut h = h;
    let view = StateView::new(1, None);
    h.thread
        .lifecycle
        .set_listener(StateView::thread_listener(&view, 0));
    h.thread.lifecycle.to(RuntimeState::Rebalancing);
    let (tx, rx) = query_channel();
    h.thread.queries = Some(rx);
    let stores = BTreeMap::from([(
        "0".to_string(),
        vec![(STORE.to_string(), StoreFormat::TimestampedKeyValue)],
    )]);
    let catalog = StoreCatalog::of(&stores, BTreeMap::new());
    (h, StoreQueryHandle::new(vec![tx], view, catalog))
}

/// Runs `read` on another thread while the stream thread iterates, until it returns.
fn while_running<T: Send>(h: &mut Harness, read: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        let reader = s.spawn(read);
        while !reader.is_finished() {
            h.step();
            std::thread::sleep(Duration::from_millis(1));
        }
        reader.join().expect("reader")
    })
}

fn count(n: i64) -> i64 {
    n
}

/// Keys `a`..`d` in partition 0 and `b`..`e` in partition 1 (so `b`..`d` are in both: a
/// custom partitioning), counted by [`Counter`].
fn counted() -> (Harness, StoreQueryHandle) {
    let (mut h, q) = harness(Harness::new(Duration::from_secs(3600)));
    for (i, k) in ["a", "b", "c", "a", "d"].iter().enumerate() {
        h.shared.append(&input(0), k, Some(b"x"), i as i64);
    }
    for (i, k) in ["e", "b", "e", "e"].iter().enumerate() {
        h.shared.append(&input(1), k, Some(b"x"), i as i64);
    }
    h.assign(&[(0, Active), (1, Active)]);
    h.step();
    h.step();
    assert_eq!(h.thread.tasks.processed, 9);
    (h, q)
}

#[test]
fn get_range_all_and_count_from_another_thread_across_tasks() {
    let (mut h, q) = counted();
    let counts = q
        .key_value_store::<String, i64>(STORE)
        .expect("a known store");
    let c = counts.clone();
    let (a, e, none, range, all, n) = while_running(&mut h, move || {
        (
            c.get(&"a".into()).unwrap(),
            c.get(&"e".into()).unwrap(),
            c.get(&"zz".into()).unwrap(),
            c.range(&"b".into(), &"d".into()).unwrap(),
            c.all().unwrap(),
            c.approximate_num_entries().unwrap(),
        )
    });
    assert_eq!((a, e, none), (Some(2), Some(count(3)), None));
    // In serialized-key order across both tasks; `b` is in both, task 0_0's first.
    let s = |k: &str, v: i64| (k.to_string(), v);
    assert_eq!(range, vec![s("b", 1), s("b", 1), s("c", 1), s("d", 1)]);
    assert_eq!(
        all,
        vec![
            s("a", 2),
            s("b", 1),
            s("b", 1),
            s("c", 1),
            s("d", 1),
            s("e", 3)
        ]
    );
    assert_eq!(n, 6, "4 keys in 0_0, 2 in 0_1");
    // One partition only.
    let p1 = q
        .key_value_store::<String, i64>(StoreQueryParameters::from_name(STORE).with_partition(1))
        .unwrap();
    let all1 = while_running(&mut h, move || p1.all().unwrap());
    assert_eq!(all1, vec![s("b", 1), s("e", 3)]);
    // Raw bytes: the value without the store's timestamp prefix.
    let raw = q.raw_key_value_store(STORE).unwrap();
    let bytes = while_running(&mut h, move || raw.get(&b"e".to_vec()).unwrap());
    assert_eq!(bytes, Some(3i64.to_be_bytes().to_vec()));
    // An empty range (from after to) asks nobody.
    assert_eq!(counts.range(&"z".into(), &"a".into()).unwrap(), vec![]);
}

/// Writes `<key>-x` and `<key>-y` with the same running count for every record: a
/// snapshot of one task always shows them equal.
struct Pair;

impl Processor for Pair {
    fn process(&mut self, ctx: &mut TaskContext<'_>, r: &InputRecord) -> Result<(), Error> {
        let store = ctx.store(STORE)?;
        let key = String::from_utf8_lossy(r.key.as_deref().unwrap_or_default()).into_owned();
        let x = format!("{key}-x");
        let n = store
            .get(x.as_bytes())
            .and_then(|v| v.try_into().ok())
            .map_or(0, i64::from_be_bytes)
            + 1;
        store.put(x.as_bytes(), Some(&n.to_be_bytes()), r.timestamp);
        store.put(
            format!("{key}-y").as_bytes(),
            Some(&n.to_be_bytes()),
            r.timestamp,
        );
        Ok(())
    }
}

/// A reader thread querying while records flow: every answer is one snapshot per task
/// (`-x` and `-y` always equal), totals never go back, and the last read sees every record.
#[test]
fn a_concurrent_reader_sees_consistent_growing_snapshots_while_records_flow() {
    let shared = Shared::default();
    shared.lock().now = Some(std::time::Instant::now());
    let factory =
        Box::new(|_: &StreamsTaskId| -> Result<Box<dyn Processor>, Error> { Ok(Box::new(Pair)) });
    let (mut h, q) = harness(Harness::with_factory(
        shared,
        factory,
        Duration::from_secs(3600),
    ));
    h.assign(&[(0, Active), (1, Active)]);
    h.step();
    let view = q.key_value_store::<String, i64>(STORE).unwrap();
    let done = AtomicBool::new(false);
    const RECORDS: i64 = 3000;
    let (reads, last) = std::thread::scope(|s| {
        let reader = s.spawn(|| {
            let (mut reads, mut prev) = (0u32, 0i64);
            loop {
                let finished = done.load(Ordering::SeqCst);
                let all = view.all().expect("readable while running");
                let map: BTreeMap<String, i64> = all.into_iter().collect();
                for (k, v) in &map {
                    if let Some(key) = k.strip_suffix("-x") {
                        assert_eq!(map.get(&format!("{key}-y")), Some(v), "{map:?}");
                    }
                }
                let total: i64 = map
                    .iter()
                    .filter(|(k, _)| k.ends_with("-x"))
                    .map(|(_, v)| v)
                    .sum();
                assert!(total >= prev, "went back: {prev} then {total}");
                prev = total;
                reads += 1;
                if finished {
                    return (reads, total);
                }
            }
        });
        for i in 0..RECORDS {
            // A key lives in one partition only (the map above holds one value per key).
            let (p, key) = ((i % 2) as i32, format!("p{}k{}", i % 2, i % 7));
            h.shared.append(&input(p), &key, Some(b"v"), i);
            if i % 50 == 49 {
                h.step();
            }
        }
        while h.thread.tasks.processed < RECORDS as u64 {
            h.step();
        }
        done.store(true, Ordering::SeqCst);
        while !reader.is_finished() {
            h.step();
            std::thread::sleep(Duration::from_millis(1));
        }
        reader.join().expect("reader")
    });
    println!("{reads} reads of `all` while {RECORDS} records were processed");
    assert!(reads >= 2, "{reads}");
    assert_eq!(last, RECORDS, "the last read sees every record");
}

#[test]
fn standbys_are_read_only_when_stale_stores_are_enabled() {
    let (mut h, q) = counted();
    h.thread.commit_all().expect("commit");
    h.assign(&[(0, Active), (1, Standby)]);
    h.step();
    assert!(h.thread.state.standby.contains_key(&task(1)));
    let active = q.key_value_store::<String, i64>(STORE).unwrap();
    let stale = q
        .key_value_store::<String, i64>(
            StoreQueryParameters::from_name(STORE).enable_stale_stores(),
        )
        .unwrap();
    let (a, s, e_active, e_stale) = while_running(&mut h, move || {
        (
            active.all().unwrap(),
            stale.all().unwrap(),
            active.get(&"e".into()).unwrap(),
            stale.get(&"e".into()).unwrap(),
        )
    });
    let keys = |v: &[(String, i64)]| v.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>();
    assert_eq!(keys(&a), ["a", "b", "c", "d"], "active 0_0 only");
    assert_eq!(keys(&s), ["a", "b", "b", "c", "d", "e"], "and standby 0_1");
    assert_eq!((e_active, e_stale), (None, Some(3)));
}

#[test]
fn unknown_stores_wrong_types_and_missing_serdes_are_named() {
    let (_h, q) = harness(Harness::new(Duration::from_secs(3600)));
    let e = q.key_value_store::<String, i64>("totals").unwrap_err();
    assert_eq!(
        e,
        StoreQueryError::UnknownStore {
            store: "totals".into(),
            known: vec![STORE.into()]
        }
    );
    assert!(e.to_string().contains("[\"counts\"]"), "{e}");
    assert!(!e.is_retriable());
    let e = q.key_value_store::<(u8, u8), i64>(STORE).unwrap_err();
    assert!(
        matches!(e, StoreQueryError::NoSerde { what: "key", .. }),
        "{e}"
    );
    assert!(e.to_string().contains("key_value_store_with"), "{e}");
    // A store whose serdes are known (a DSL store's) checks the types asked for.
    let (_h2, typed) = {
        let (h, _) = harness(Harness::new(Duration::from_secs(3600)));
        let stores = BTreeMap::from([("0".to_string(), vec![(STORE.to_string(), ())])]);
        let serdes = BTreeMap::from([(
            STORE.to_string(),
            (Serdes::string().erase(), Serdes::long().erase()),
        )]);
        let (tx, _rx) = query_channel();
        let view = StateView::new(1, None);
        (
            h,
            StoreQueryHandle::new(vec![tx], view, StoreCatalog::of(&stores, serdes)),
        )
    };
    assert!(typed.key_value_store::<String, i64>(STORE).is_ok());
    let e = typed.key_value_store::<String, String>(STORE).unwrap_err();
    assert!(
        matches!(
            e,
            StoreQueryError::WrongType {
                what: "value",
                serde: "Long",
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("i64"), "{e}");
    // With serdes given, any type.
    let u = Serdes::string();
    assert!(typed.key_value_store_with(STORE, &u, &u).is_ok());
}

#[test]
fn rebalancing_not_local_timeout_and_closed_are_told_apart() {
    let (mut h, q) = harness(Harness::new(Duration::from_secs(3600)));
    let view = q.key_value_store::<String, i64>(STORE).unwrap();
    // Before any assignment the thread rebalances.
    let v = view.clone();
    let e = while_running(&mut h, move || v.all().unwrap_err());
    assert!(
        matches!(
            e,
            StoreQueryError::Rebalancing {
                thread: 1,
                state: RuntimeState::Rebalancing,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.is_retriable());
    // Stale stores answer meanwhile, but no task holds the store.
    let stale = q
        .key_value_store::<String, i64>(
            StoreQueryParameters::from_name(STORE).enable_stale_stores(),
        )
        .unwrap();
    let e = while_running(&mut h, move || stale.all().unwrap_err());
    assert!(matches!(e, StoreQueryError::NotLocal { .. }), "{e}");
    // Running, partition 1 asked, only 0 held.
    h.assign(&[(0, Active)]);
    h.step();
    let p1 = q
        .key_value_store::<String, i64>(StoreQueryParameters::from_name(STORE).with_partition(1))
        .unwrap();
    let e = while_running(&mut h, move || p1.get(&"a".into()).unwrap_err());
    assert!(matches!(e, StoreQueryError::NotLocal { .. }), "{e}");
    assert!(e.is_retriable());
    assert!(
        e.to_string().contains("partition 1") && e.to_string().contains("query_metadata_for_key"),
        "{e}"
    );
    // Nobody iterates the thread: the reader gives up, naming it.
    let slow = q
        .key_value_store::<String, i64>(
            StoreQueryParameters::from_name(STORE).timeout(Duration::from_millis(200)),
        )
        .unwrap();
    let started = std::time::Instant::now();
    let e = slow.get(&"a".into()).unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        matches!(e, StoreQueryError::Timeout { thread: 1, .. }),
        "{e}"
    );
    assert!(e.to_string().contains("run_once"), "{e}");
    // Closed: refused at once.
    h.thread.close().expect("close");
    let e = view.get(&"a".into()).unwrap_err();
    assert!(
        matches!(
            e,
            StoreQueryError::NotRunning {
                state: RuntimeState::NotRunning,
                ..
            }
        ),
        "{e}"
    );
    assert!(!e.is_retriable());
    drop(h);
    let e = slow.get(&"a".into()).unwrap_err();
    assert!(matches!(e, StoreQueryError::NotRunning { .. }), "{e}");
}

/// `num.stream.threads` 2: a query goes to both threads and merges their tasks; a thread
/// that does not answer is named.
#[test]
fn two_stream_threads_answer_together_and_a_silent_one_is_named() {
    let view = StateView::new(2, None);
    let mut threads = Vec::new();
    let mut senders = Vec::new();
    for (idx, (p, key)) in [(0, "a"), (1, "b")].into_iter().enumerate() {
        let mut h = Harness::new(Duration::from_secs(3600));
        h.thread
            .lifecycle
            .set_listener(StateView::thread_listener(&view, idx));
        h.thread.lifecycle.to(RuntimeState::Rebalancing);
        let (tx, rx) = query_channel();
        h.thread.queries = Some(rx);
        senders.push(tx);
        h.shared.append(&input(p), key, Some(b"x"), 0);
        h.assign(&[(p, Active)]);
        h.step();
        threads.push(h);
    }
    let stores = BTreeMap::from([("0".to_string(), vec![(STORE.to_string(), ())])]);
    let q = StoreQueryHandle::new(senders, view, StoreCatalog::of(&stores, BTreeMap::new()));
    let all = q.key_value_store::<String, i64>(STORE).unwrap();
    let got = std::thread::scope(|s| {
        let reader = s.spawn(|| all.all());
        while !reader.is_finished() {
            for h in threads.iter_mut() {
                h.step();
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        reader.join().expect("reader")
    });
    assert_eq!(got.unwrap(), vec![("a".into(), 1), ("b".into(), 1)]);
    // Only thread 1 iterates: thread 2 is named.
    let slow = q
        .key_value_store::<String, i64>(
            StoreQueryParameters::from_name(STORE).timeout(Duration::from_millis(200)),
        )
        .unwrap();
    let (first, _second) = threads.split_at_mut(1);
    let e = while_running(&mut first[0], move || slow.all().unwrap_err());
    assert!(
        matches!(e, StoreQueryError::Timeout { thread: 2, .. }),
        "{e}"
    );
    assert!(e.to_string().contains("stream thread 2"), "{e}");
}
