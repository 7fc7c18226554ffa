//! The exactly-once rules of the collector and the task manager, on the in-memory cluster of
//! [`testkit`](super::testkit) with a transactional producer: its logs are what
//! `read_committed` readers see (records and offsets reach them only with a committed
//! transaction).

use std::time::Duration;

use crate::producer::transaction::TxnErrorClass;
use crate::protocol::BrokerErrorKind;
use crate::streams::StreamsTaskRole;

use super::testkit::*;

const ACTIVE: StreamsTaskRole = StreamsTaskRole::Active;
const INTERVAL: Duration = Duration::from_millis(100);

/// Moves the manual clock past the commit interval.
fn tick(h: &Harness) {
    let mut c = h.shared.lock();
    c.now = c.now.map(|n| n + INTERVAL * 2);
}

/// The counts `read_committed` readers see in the output topic, in order.
fn outputs(h: &Harness, key: &str) -> Vec<i64> {
    h.shared
        .log(&crate::streams::commit::TopicPartition::new(OUTPUT, 0))
        .into_iter()
        .filter(|(k, _, _)| k.as_deref() == Some(key.as_bytes()))
        .filter_map(|(_, v, _)| Some(i64::from_be_bytes(v?.try_into().ok()?)))
        .collect()
}

fn count(h: &Harness, p: i32, key: &str) -> Option<i64> {
    let v: [u8; 8] = h.active_store(p)?.get(key.as_bytes())?.try_into().ok()?;
    Some(i64::from_be_bytes(v))
}

fn append(h: &Harness, p: i32, key: &str, n: usize) {
    for i in 0..n {
        h.shared.append(&input(p), key, Some(b"x"), i as i64);
    }
}

/// One commit = the stores' cached writes flushed to their changelogs inside the open
/// transaction, then the input offsets sent to it with the member's epoch, then the commit:
/// output, changelog and offsets become visible together, and none before.
#[test]
fn a_commit_puts_changelog_output_and_offsets_in_one_transaction() {
    let mut h = Harness::new_eos(Shared::default(), INTERVAL);
    append(&h, 0, "a", 3);
    h.assign(&[(0, ACTIVE)]);
    h.step();
    assert_eq!(h.thread.tasks.processed, 3);
    assert!(
        outputs(&h, "a").is_empty(),
        "nothing visible before the commit"
    );
    assert!(h.shared.log(&changelog(0)).is_empty());
    assert_eq!(h.shared.committed(&input(0)), None);
    tick(&h);
    h.step();
    let offsets = h
        .shared
        .position(&format!("txn offsets in-0=3 epoch {MEMBER_EPOCH}"))
        .expect("offsets sent with the member epoch");
    let commit = h
        .shared
        .position("txn commit (4 records)")
        .expect("the three outputs and the cached store write (a=3) committed in one transaction");
    assert!(offsets < commit, "{:?}", h.shared.events());
    assert_eq!(
        h.shared.log(&changelog(0)).len(),
        1,
        "a=3, flushed from the cache"
    );
    assert_eq!(outputs(&h, "a"), [1, 2, 3]);
    assert_eq!(h.shared.committed(&input(0)), Some(3));
    assert_eq!(
        h.shared.position("commit in-0"),
        None,
        "no OffsetCommit outside the transaction"
    );
}

/// A commit the group refuses (the member is unknown) aborts the transaction: neither the
/// offsets nor the output become visible; the task is revived and processes the same
/// records again, and each count appears once.
#[test]
fn no_offsets_or_output_are_visible_without_a_committed_transaction() {
    let mut h = Harness::new_eos(Shared::default(), INTERVAL);
    append(&h, 0, "a", 3);
    h.assign(&[(0, ACTIVE)]);
    h.step();
    h.shared.lock().fail_commit =
        Some((TxnErrorClass::Abortable, BrokerErrorKind::UnknownMemberId));
    tick(&h);
    h.step();
    assert!(
        h.shared.position("txn abort (").is_some(),
        "{:?}",
        h.shared.events()
    );
    assert_eq!(h.shared.committed(&input(0)), None, "offsets not committed");
    assert!(outputs(&h, "a").is_empty());
    h.step();
    tick(&h);
    h.step();
    assert_eq!(h.shared.committed(&input(0)), Some(3));
    assert_eq!(outputs(&h, "a"), [1, 2, 3], "each count once");
}

/// Tasks lost with an open transaction (the member was fenced): the transaction is aborted
/// before the new assignment is taken, so nothing the lost tasks did since their last commit
/// ever becomes visible, not even with the next transaction of the tasks kept.
#[test]
fn losing_tasks_aborts_the_open_transaction() {
    let mut h = Harness::new_eos(Shared::default(), INTERVAL);
    append(&h, 0, "a", 2);
    append(&h, 1, "b", 2);
    h.assign(&[(0, ACTIVE), (1, ACTIVE)]);
    h.step();
    assert_eq!(h.thread.tasks.processed, 4);
    h.lose_all(&[(1, ACTIVE)]);
    h.step();
    let abort = h.shared.position("txn abort").expect("aborted");
    let ack = h.shared.position("acknowledged").expect("assigned again");
    let events = h.shared.events();
    let last_ack = events
        .iter()
        .rposition(|e| e == "acknowledged")
        .unwrap_or(ack);
    assert!(abort < last_ack, "{events:?}");
    tick(&h);
    h.step();
    assert!(
        outputs(&h, "a").is_empty(),
        "the lost task's output never visible"
    );
    assert_eq!(
        outputs(&h, "b"),
        [1, 2],
        "task 1 from its committed state, once"
    );
    assert_eq!(h.shared.committed(&input(0)), None);
    assert_eq!(h.shared.committed(&input(1)), Some(2));
}

/// A fenced producer: the transaction is aborted with a new producer epoch and the task is
/// closed dirty; its store, which held the aborted writes, is wiped and rebuilt from the
/// committed changelog only, so the counts go on from the last committed value.
#[test]
fn a_dirty_store_is_wiped_and_restored_from_committed_changelog() {
    let mut h = Harness::new_eos(Shared::default(), INTERVAL);
    append(&h, 0, "a", 2);
    h.assign(&[(0, ACTIVE)]);
    h.step();
    tick(&h);
    h.step();
    assert_eq!(outputs(&h, "a"), [1, 2]);
    append(&h, 0, "a", 2);
    append(&h, 0, "b", 1);
    h.step();
    assert_eq!(count(&h, 0, "a"), Some(4), "uncommitted writes");
    assert_eq!(
        count(&h, 0, "b"),
        Some(1),
        "a key only the open transaction wrote"
    );
    let fenced = (TxnErrorClass::Fenced, BrokerErrorKind::ProducerFenced);
    h.shared.lock().fail_commit = Some(fenced);
    tick(&h);
    h.step();
    let events = h.shared.events();
    assert!(h.shared.position("txn reset").is_some(), "{events:?}");
    assert_eq!(
        count(&h, 0, "a"),
        Some(2),
        "restored from the committed changelog"
    );
    assert_eq!(count(&h, 0, "b"), None, "the aborted write is gone");
    h.step();
    tick(&h);
    h.step();
    assert_eq!(
        outputs(&h, "a"),
        [1, 2, 3, 4],
        "no count twice, none skipped"
    );
    assert_eq!(outputs(&h, "b"), [1]);
    assert_eq!(count(&h, 0, "a"), Some(4));
}

/// The member was fenced while its transaction failed: the revive's offset fetch is refused
/// (not assigned). The thread goes on with the tasks closed, and the reconciliation that
/// follows (tasks lost, then assigned anew) starts them from committed state.
#[test]
fn a_revive_refused_waits_for_the_next_assignment() {
    let mut h = Harness::new_eos(Shared::default(), INTERVAL);
    append(&h, 0, "a", 2);
    h.assign(&[(0, ACTIVE)]);
    h.step();
    {
        let mut c = h.shared.lock();
        c.fail_commit = Some((TxnErrorClass::Abortable, BrokerErrorKind::UnknownMemberId));
        c.refuse_fetch = true;
    }
    tick(&h);
    h.step();
    assert!(h.thread.tasks.active.is_empty(), "closed, not revived");
    h.shared.lock().refuse_fetch = false;
    h.lose_all(&[(0, ACTIVE)]);
    h.step();
    h.step();
    tick(&h);
    h.step();
    assert_eq!(outputs(&h, "a"), [1, 2]);
    assert_eq!(h.shared.committed(&input(0)), Some(2));
}

/// A commit refused because this producer's epoch is stale (PRODUCER_FENCED or
/// INVALID_PRODUCER_EPOCH at EndTxn, INVALID_PRODUCER_ID_MAPPING): Java's `StreamsProducer`
/// throws `TaskMigratedException`, the task manager closes every task dirty and the thread
/// producer is re-initialised. Each count is committed once, none skipped.
#[test]
fn a_stale_producer_epoch_at_commit_aborts_with_a_new_producer() {
    for (class, kind) in [
        (TxnErrorClass::Fenced, BrokerErrorKind::ProducerFenced),
        (TxnErrorClass::Fenced, BrokerErrorKind::InvalidProducerEpoch),
        (TxnErrorClass::Fatal, BrokerErrorKind::InvalidProducerEpoch),
        (
            TxnErrorClass::Fatal,
            BrokerErrorKind::InvalidProducerIdMapping,
        ),
    ] {
        let mut h = Harness::new_eos(Shared::default(), INTERVAL);
        append(&h, 0, "a", 2);
        h.assign(&[(0, ACTIVE)]);
        h.step();
        h.shared.lock().fail_commit = Some((class, kind));
        tick(&h);
        h.step();
        let events = h.shared.events();
        assert!(
            h.shared.position("txn reset").is_some(),
            "{kind:?}: {events:?}"
        );
        assert_eq!(h.shared.position("txn commit ("), None, "{kind:?}");
        assert_eq!(h.shared.committed(&input(0)), None, "{kind:?}");
        assert_eq!(count(&h, 0, "a"), None, "{kind:?}: the dirty store wiped");
        h.step();
        tick(&h);
        h.step();
        assert_eq!(outputs(&h, "a"), [1, 2], "{kind:?}: each count once");
        assert_eq!(h.shared.committed(&input(0)), Some(2), "{kind:?}");
    }
}

/// A failed transaction injected by `fail` (noted as event `failed_event`) while the second
/// pair of records is processed and sent: the transaction is aborted with a new producer
/// (after the failure), the task revived from its committed state, and the counts go on
/// from the last committed value, the records of the failed transaction counted once, in
/// the next one. Not a processing failure.
fn aborts_and_revives_after(fail: impl FnOnce(&mut Cluster), failed_event: &str) {
    let mut h = Harness::new_eos(Shared::default(), INTERVAL);
    append(&h, 0, "a", 2);
    h.assign(&[(0, ACTIVE)]);
    h.step();
    tick(&h);
    h.step();
    assert_eq!(outputs(&h, "a"), [1, 2]);
    append(&h, 0, "a", 2);
    fail(&mut h.shared.lock());
    h.step();
    let failed = h.shared.position(failed_event).expect(failed_event);
    let reset = h.shared.position("txn reset (").expect("a new producer");
    assert!(failed < reset, "{:?}", h.shared.events());
    assert!(h.thread.failed.is_none(), "not a processing failure");
    assert_eq!(
        count(&h, 0, "a"),
        Some(2),
        "restored from the committed changelog"
    );
    h.step();
    tick(&h);
    h.step();
    assert_eq!(outputs(&h, "a"), [1, 2, 3, 4], "no count twice, none lost");
    assert_eq!(h.shared.committed(&input(0)), Some(4));
}

/// INVALID_PRODUCER_EPOCH on a Produce of the open transaction (a newer producer with the
/// same transactional id took over, or the coordinator aborted the transaction and bumped
/// the epoch): seen when the batches are sent, before any commit.
#[test]
fn invalid_producer_epoch_on_a_batch_aborts_and_revives_the_tasks() {
    aborts_and_revives_after(
        |c| c.fail_batch = Some(BrokerErrorKind::InvalidProducerEpoch),
        "txn batch failed",
    );
}

/// The same stale epoch surfaced on a send during processing (the producer reports a failed
/// batch on the next send, not only on `send_ready`; seen live on 4.2.2 in a kill -9 round):
/// a failed transaction, not a processing failure.
#[test]
fn invalid_producer_epoch_on_a_send_aborts_and_revives_the_tasks() {
    aborts_and_revives_after(
        |c| c.fail_send = Some(BrokerErrorKind::InvalidProducerEpoch),
        "txn send failed",
    );
}

/// EndTxn was sent but its answer never came (the producer's `max.block.ms` passed: also
/// what CONCURRENT_TRANSACTIONS or NOT_COORDINATOR retried past the deadline become), and
/// the coordinator had committed. Java's `TaskExecutor` takes the timeout as
/// `TaskCorruptedException`: the tasks are closed dirty and revived from committed state. A
/// new producer epoch (which waits for the pending transaction to complete) makes the
/// outcome certain; the revived task reads the committed offsets and changelog, so it
/// neither counts the committed records again nor loses them.
#[test]
fn a_commit_timeout_after_the_coordinator_committed_duplicates_nothing() {
    let mut h = Harness::new_eos(Shared::default(), INTERVAL);
    append(&h, 0, "a", 3);
    h.assign(&[(0, ACTIVE)]);
    h.step();
    h.shared.lock().commit_timeout = Some(true);
    tick(&h);
    h.step();
    let events = h.shared.events();
    let lost = h
        .shared
        .position("txn commit timed out (committed")
        .expect("committed, answer lost");
    let reset = h.shared.position("txn reset (").expect("a new producer");
    assert!(lost < reset, "{events:?}");
    assert_eq!(outputs(&h, "a"), [1, 2, 3]);
    assert_eq!(h.shared.committed(&input(0)), Some(3));
    assert_eq!(count(&h, 0, "a"), Some(3), "restored from the changelog");
    append(&h, 0, "a", 1);
    h.step();
    tick(&h);
    h.step();
    assert_eq!(outputs(&h, "a"), [1, 2, 3, 4], "nothing counted twice");
    assert_eq!(h.shared.committed(&input(0)), Some(4));
}

/// The same timeout when the coordinator had not committed (the EndTxn never arrived): the
/// new producer epoch aborts the transaction, the revived task processes its records again,
/// and each count becomes visible once.
#[test]
fn a_commit_timeout_before_the_coordinator_committed_loses_nothing() {
    let mut h = Harness::new_eos(Shared::default(), INTERVAL);
    append(&h, 0, "a", 3);
    h.assign(&[(0, ACTIVE)]);
    h.step();
    h.shared.lock().commit_timeout = Some(false);
    tick(&h);
    h.step();
    assert!(
        h.shared.position("txn reset (4 records dropped)").is_some(),
        "{:?}",
        h.shared.events()
    );
    assert!(outputs(&h, "a").is_empty());
    assert_eq!(h.shared.committed(&input(0)), None);
    assert_eq!(count(&h, 0, "a"), None, "the dirty store wiped");
    h.step();
    tick(&h);
    h.step();
    assert_eq!(outputs(&h, "a"), [1, 2, 3], "each count once, none lost");
    assert_eq!(h.shared.committed(&input(0)), Some(3));
}

/// The offsets of a transaction carry each partition's time as Kafka Streams'
/// `TopicPartitionMetadata` (as Java's `StreamTask` commits them, under either guarantee),
/// and the next owner of the task starts from that partition time. (Before, the
/// TxnOffsetCommit carried offsets only: the next owner, Java or Rust, started at -1.)
#[test]
fn the_transactions_offsets_carry_the_partition_time_the_next_owner_reads() {
    let shared = Shared::default();
    let mut h = Harness::new_eos(shared.clone(), INTERVAL);
    for (i, ts) in [1_700_000_000_000, 1_700_000_000_500, 1_700_000_000_200]
        .into_iter()
        .enumerate()
    {
        h.shared.append(&input(0), "a", Some(b"x"), ts);
        assert_eq!(h.shared.log(&input(0)).len(), i + 1);
    }
    h.assign(&[(0, ACTIVE)]);
    h.step();
    tick(&h);
    h.step();
    let committed = shared.lock().committed.get(&input(0)).cloned();
    let committed = committed.expect("committed in the transaction");
    assert_eq!(committed.offset, 3);
    // Java: new TopicPartitionMetadata(1700000000500L, empty).encode().
    assert_eq!(
        committed.metadata.as_deref(),
        Some("AgAAAYvP5Wn0"),
        "the largest timestamp processed, base64(02 ‖ BE64)"
    );
    // Another instance takes the task over: its partition time is the committed one.
    drop(h);
    let mut next = Harness::new_eos(shared, INTERVAL);
    next.assign(&[(0, ACTIVE)]);
    next.step();
    let task = next
        .thread
        .tasks
        .active
        .get(&task(0))
        .expect("task 0 active");
    assert_eq!(task.group.partition_time(&input(0)), 1_700_000_000_500);
}
