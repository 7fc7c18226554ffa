//! The task offset sums a member reports in its heartbeats (KIP-1071 `TaskOffsets` /
//! `TaskEndOffsets`), computed as Kafka Streams 4.4 does (streams-data-path.md §5.8), with
//! its conventions as observed live (tests/live_standby.rs: a Java 4.4 standby caught up
//! with a changelog of N records reports offset N and end offset N - 1; Kafka's own
//! integration test notes the same off-by-one, lag -1, as intended for now).
//!
//! * Offsets: every task with local state that is not a running active task (Java's
//!   `TaskManager#maybeUpdateTaskOffsetSumSnapshot` takes the state directory's tasks minus
//!   the running active ones). Stores here live in memory, so these are the standby and
//!   warm-up tasks (and standbys kept across a fencing) and the stores kept after a
//!   revocation; active tasks restore before they run and are never reported.
//!   The sum (`StateDirectory#sumOfChangelogOffsets` over `changelogOffsets()`) is that of
//!   the stores' changelog positions (offset of the last record applied + 1), an empty
//!   store (offset unknown) counting 0, an overflow giving `i64::MAX`.
//! * End offsets: the tasks still reading their changelogs, i.e. standby and warm-up tasks
//!   (Java: those in the state updater, `DefaultStateUpdater#updateTaskEndOffsetSumSnapshot`).
//!   The sum is that of the changelogs' last offsets (end offset - 1, as Java's
//!   `logicalChangelogEndOffsets` gives them; 0 for an empty changelog); `i64::MAX` if one
//!   is unknown or the sum overflows.

use crate::streams::{StreamsTaskId, StreamsTaskOffsets};

/// The offset sums of `offsets` (each task with its stores' changelog offsets: offset of the
/// last record applied) and the end offset sums of `ends` (each task with its changelogs'
/// end offsets: the offset after the last record); tasks without a store (stateless) are
/// left out, as Java has no state for them.
pub(crate) fn task_offset_sums<'a>(
    offsets: impl IntoIterator<Item = (&'a StreamsTaskId, Vec<Option<i64>>)>,
    ends: impl IntoIterator<Item = (&'a StreamsTaskId, Vec<Option<i64>>)>,
) -> StreamsTaskOffsets {
    let mut out = StreamsTaskOffsets::new();
    for (task, stores) in offsets {
        if !stores.is_empty() {
            let total = sum(stores
                .iter()
                .map(|o| Some(o.map_or(0, |o| o.saturating_add(1)))));
            out = out.offset(task.clone(), total);
        }
    }
    for (task, changelogs) in ends {
        if !changelogs.is_empty() {
            let last = changelogs.into_iter().map(|e| e.map(|e| (e - 1).max(0)));
            out = out.end_offset(task.clone(), sum(last));
        }
    }
    out
}

/// Sum of non-negative offsets; `i64::MAX` on overflow or if one is unknown. A negative
/// offset (never a changelog position) counts 0.
fn sum(offsets: impl Iterator<Item = Option<i64>>) -> i64 {
    let mut total: i64 = 0;
    for o in offsets {
        let Some(o) = o else {
            return i64::MAX;
        };
        match total.checked_add(o.max(0)) {
            Some(t) => total = t,
            None => return i64::MAX,
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(p: i32) -> StreamsTaskId {
        StreamsTaskId::new("1", p)
    }

    #[test]
    fn sums_changelog_offsets_and_end_offsets_per_task() {
        let (a, b) = (id(0), id(3));
        // Store 1 applied up to offset 41 of 50 records, store 2 up to 9 of 10 (caught up);
        // task b caught up with a one-record changelog.
        let o = task_offset_sums(
            [(&a, vec![Some(41), Some(9)]), (&b, vec![Some(0)])],
            [(&a, vec![Some(50), Some(10)]), (&b, vec![Some(1)])],
        );
        assert_eq!(o.offsets().get(&a), Some(&52)); // 42 + 10
        assert_eq!(o.end_offsets().get(&a), Some(&58)); // 49 + 9
        assert_eq!(o.offsets().get(&b), Some(&1));
        assert_eq!(o.end_offsets().get(&b), Some(&0));
        assert_eq!(o.lag(&a), Some(6));
        // Java's caught-up lag is -1 (offset N, end N - 1).
        assert_eq!(o.lag(&b), Some(-1));
        assert_eq!(o.offsets().len(), 2);
    }

    #[test]
    fn an_empty_store_counts_zero_and_an_unknown_end_is_max() {
        let a = id(1);
        let o = task_offset_sums([(&a, vec![None, Some(7)])], [(&a, vec![None, Some(8)])]);
        assert_eq!(o.offsets().get(&a), Some(&8));
        assert_eq!(o.end_offsets().get(&a), Some(&i64::MAX));
        // An empty changelog: end 0, not -1.
        let o = task_offset_sums([(&a, vec![None])], [(&a, vec![Some(0)])]);
        assert_eq!(o.offsets().get(&a), Some(&0));
        assert_eq!(o.end_offsets().get(&a), Some(&0));
    }

    #[test]
    fn overflow_gives_max_and_stateless_tasks_are_left_out() {
        let (a, b) = (id(0), id(2));
        let o = task_offset_sums(
            [(&a, vec![Some(i64::MAX - 1), Some(1)]), (&b, vec![])],
            [(&a, vec![Some(i64::MAX), Some(2)]), (&b, vec![])],
        );
        assert_eq!(o.offsets().get(&a), Some(&i64::MAX));
        assert_eq!(o.end_offsets().get(&a), Some(&i64::MAX));
        assert!(!o.offsets().contains_key(&b));
        assert!(!o.end_offsets().contains_key(&b));
    }

    #[test]
    fn tasks_kept_after_a_revocation_report_an_offset_but_no_end_offset() {
        let (standby, kept) = (id(0), id(1));
        let o = task_offset_sums(
            [(&standby, vec![Some(3)]), (&kept, vec![Some(12)])],
            [(&standby, vec![Some(4)])],
        );
        assert_eq!(o.offsets().get(&kept), Some(&13));
        assert!(!o.end_offsets().contains_key(&kept));
        assert_eq!(o.lag(&standby), Some(-1));
    }
}
