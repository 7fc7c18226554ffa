//! Offset commits on the member's own coordinator connection: a coordinator that moved is
//! looked up again, one that is loading is asked again as it is.

use std::collections::BTreeMap;
use std::time::Duration;

use kafka_streams_group::protocol::BrokerErrorKind;
use kafka_streams_group::streams::commit::CommitOffset;
use kafka_streams_group::{OffsetCommitOutcome, TopicPartition};

use crate::mock_coordinator::{steady, MockCoordinator};
use crate::{member, Opts, HBI_MS};

/// Commits once with the first answer `code`; returns the FindCoordinator calls the commit
/// made and the OffsetCommit requests it sent.
fn commit_after(code: BrokerErrorKind) -> (usize, usize) {
    let mock = MockCoordinator::start();
    mock.set_responder(steady(1, HBI_MS, &[("0", &[0])]));
    mock.answer_offset_commits([code.code()]);
    let handle = member(&mock, &mock.addr(), &Opts::default());
    let before = mock.find_coordinator_calls();
    let offsets = BTreeMap::from([(TopicPartition::new("input", 0), CommitOffset::new(5))]);
    let outcome = handle
        .commit_offsets(&offsets, Duration::from_secs(5))
        .expect("commit");
    assert!(
        matches!(outcome, OffsetCommitOutcome::Committed { .. }),
        "{code:?}: {outcome:?}"
    );
    let lookups = mock.find_coordinator_calls() - before;
    let commits = mock.offset_commit_calls();
    println!("{code:?}: {commits} commits, {lookups} coordinator lookups");
    handle.close().expect("close");
    (lookups, commits)
}

#[test]
fn a_commit_answered_not_coordinator_looks_the_coordinator_up_again() {
    assert_eq!(commit_after(BrokerErrorKind::NotCoordinator), (2, 2));
    assert_eq!(
        commit_after(BrokerErrorKind::CoordinatorNotAvailable),
        (2, 2)
    );
}

#[test]
fn a_commit_answered_load_in_progress_asks_the_same_coordinator_again() {
    assert_eq!(
        commit_after(BrokerErrorKind::CoordinatorLoadInProgress),
        (1, 2)
    );
}
