//! Assignment handling: null task lists keep the assignment, empty ones clear it, invalid ones
//! are rejected whole.

use std::time::Duration;

use kafka_streams_group::StreamsGroupState;

use crate::mock_coordinator::{assign, ok, steady, MockCoordinator, Reply};
use crate::{member, mock_coordinator, wait_state, Opts, HBI, HBI_MS};

#[test]
fn null_task_lists_leave_the_assignment_unchanged_explicit_empty_clears_it() {
    let mock = MockCoordinator::start();
    mock.set_responder(steady(1, HBI_MS, &[("0", &[0, 1])]));
    let o = Opts::default();
    let handle = member(&mock, &mock.addr(), &o);
    let mut sub = handle.subscribe_assignment();
    let initial = sub.recv_timeout(Duration::from_secs(1)).expect("current");
    assert_eq!(initial.active().count(), 2);
    // Several heartbeats answered with null lists, one of them bumping the epoch.
    let n = mock.count();
    mock.push([Reply::Respond(ok(2, HBI_MS)), Reply::Respond(ok(2, HBI_MS))]);
    mock.set_responder(|c: &mock_coordinator::Call<'_>| {
        Reply::Respond(ok(c.request.member_epoch.max(1), HBI_MS))
    });
    mock.wait_for(n + 4, Duration::from_secs(3))
        .expect("heartbeats");
    let mut seen = 0;
    while let Some(a) = sub.try_recv() {
        seen += 1;
        assert_eq!(
            a.active().count(),
            2,
            "null lists never empty the snapshot: {a:?}"
        );
    }
    assert_eq!(handle.member_epoch(), 2);
    assert_eq!(handle.assignment().active().count(), 2);
    println!("null lists: {seen} snapshot(s) published, all with 2 active tasks");
    // An explicit empty list does clear it.
    let n = mock.count();
    mock.push([Reply::Respond(assign(3, HBI_MS, &[]))]);
    mock.wait_for(n + 1, Duration::from_secs(2)).expect("hb");
    let emptied = wait_state(&handle, Duration::from_secs(1), |_| {
        handle.assignment().tasks.is_empty()
    });
    assert!(emptied.is_some(), "explicit empty list clears the tasks");
    handle.close().expect("close");
}

fn invalid_assignment_is_rejected_whole(bad: &'static [(&'static str, &'static [i32])]) {
    let mock = MockCoordinator::start();
    mock.set_responder(steady(1, HBI_MS, &[("0", &[0])]));
    let o = Opts::default();
    let handle = member(&mock, &mock.addr(), &o);
    let mut sub = handle.subscribe_assignment();
    let before = sub.recv_timeout(Duration::from_secs(1)).expect("current");
    let n = mock.count();
    mock.wait_for(n + 1, Duration::from_secs(2)).expect("tick");
    mock.push([Reply::Respond(assign(2, HBI_MS, bad))]);
    let state = wait_state(&handle, Duration::from_secs(2), |s| {
        matches!(s, StreamsGroupState::Failed(_))
    })
    .expect("Java goes FATAL on an invalid assignment; so does this member");
    println!("invalid assignment {bad:?}: {state:?}");
    // The bad assignment was never published, not even partly: the snapshots after the
    // previous one are only the loss of all tasks when the member failed.
    while let Some(a) = sub.try_recv() {
        assert!(a.tasks.is_empty() || a == before, "published {a:?}");
        assert_ne!(
            a.member_epoch, 2,
            "epoch of the rejected response never published"
        );
    }
    let after = mock.count();
    std::thread::sleep(HBI * 2);
    assert_eq!(mock.count(), after, "no request after the failure");
    let _ = handle.close();
}

#[test]
fn assignment_with_unknown_subtopology_is_rejected_whole() {
    invalid_assignment_is_rejected_whole(&[("0", &[0]), ("9", &[1])]);
}

#[test]
fn assignment_with_duplicate_task_is_rejected_whole() {
    invalid_assignment_is_rejected_whole(&[("0", &[0, 0])]);
}
