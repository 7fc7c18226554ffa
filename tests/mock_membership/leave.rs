//! Leaving on close: sent once, retried after errors and disconnects, never past the close
//! deadline.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kafka_streams_group::streams::MembershipError;
use kafka_streams_group::Error;

use crate::mock_coordinator::{ok, MockCoordinator, Recorded, Reply};
use crate::{member, mock_coordinator, ms, Opts, HBI, HBI_MS};

fn leaves(mock: &MockCoordinator) -> Vec<Recorded> {
    mock.requests()
        .into_iter()
        .filter(|r| r.request.member_epoch < 0)
        .collect()
}

#[test]
fn leave_is_sent_once_on_close() {
    let mock = MockCoordinator::start();
    let handle = member(&mock, &mock.addr(), &Opts::default());
    let t = Instant::now();
    handle.close().expect("close");
    println!("close took {} ms", ms(t.elapsed()));
    std::thread::sleep(HBI * 2);
    let l = leaves(&mock);
    assert_eq!(l.len(), 1, "exactly one leave");
    assert_eq!(l[0].request.member_epoch, -1);
    assert_eq!(
        mock.requests().last().map(|r| r.request.member_epoch),
        Some(-1)
    );
}

#[test]
fn unknown_member_id_on_leave_counts_as_success() {
    let mock = MockCoordinator::start();
    let handle = member(&mock, &mock.addr(), &Opts::default());
    mock.set_responder(|c: &mock_coordinator::Call<'_>| {
        if c.request.member_epoch < 0 {
            Reply::Error(25)
        } else {
            Reply::Respond(ok(1, HBI_MS))
        }
    });
    handle
        .close()
        .expect("UNKNOWN_MEMBER_ID on leave is success");
    assert_eq!(leaves(&mock).len(), 1);
}

fn leave_retried_after(first: Reply) {
    let a = MockCoordinator::start();
    let handle = member(&a, &a.addr(), &Opts::default());
    let first_is_move = matches!(first, Reply::Error(16));
    let b = MockCoordinator::start_on("127.0.0.1:0", 2).expect("b");
    if first_is_move {
        a.set_coordinator(b.node_id(), b.socket_addr());
    }
    let answered = Arc::new(Mutex::new(false));
    let flag = answered.clone();
    let mut replies = vec![first];
    a.set_responder(move |c: &mock_coordinator::Call<'_>| {
        if c.request.member_epoch < 0 {
            if let Some(r) = replies.pop() {
                return r;
            }
            *flag.lock().unwrap() = true;
        }
        Reply::Respond(ok(c.request.member_epoch, HBI_MS))
    });
    let t = Instant::now();
    let r = handle.close();
    let took = t.elapsed();
    let total = leaves(&a).len() + leaves(&b).len();
    println!(
        "leave after {first_is_move}: {total} leave(s), close {r:?} in {} ms",
        ms(took)
    );
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(total, 2, "leave retried exactly once more");
    if first_is_move {
        assert_eq!(leaves(&b).len(), 1, "retry went to the new coordinator");
    } else {
        assert!(*answered.lock().unwrap());
    }
}

#[test]
fn leave_is_retried_after_not_coordinator() {
    leave_retried_after(Reply::Error(16));
}

#[test]
fn leave_is_retried_after_a_disconnect() {
    leave_retried_after(Reply::Drop);
}

#[test]
fn leave_retries_stop_at_the_close_deadline() {
    let mock = MockCoordinator::start();
    let close = Duration::from_millis(800);
    let o = Opts {
        close_timeout: close,
        ..Opts::default()
    };
    let handle = member(&mock, &mock.addr(), &o);
    mock.set_responder(|c: &mock_coordinator::Call<'_>| {
        if c.request.member_epoch < 0 {
            Reply::Drop
        } else {
            Reply::Respond(ok(1, HBI_MS))
        }
    });
    let t = Instant::now();
    let r = handle.close();
    let took = t.elapsed();
    let n = leaves(&mock).len();
    println!(
        "leave never answered: {n} attempts, close {r:?} after {} ms (deadline {} ms)",
        ms(took),
        ms(close)
    );
    // Sent (several times), never answered: said so, with the time really waited.
    match &r {
        Err(Error::Membership(MembershipError::LeaveNotAnswered { waited, .. })) => {
            assert!(*waited >= close, "{waited:?}");
        }
        other => panic!("expected LeaveNotAnswered, got {other:?}"),
    }
    let text = r.as_ref().map_err(|e| e.to_string()).expect_err("error");
    assert!(!text.contains("0ns"), "{text}");
    assert!(n >= 3, "retried with backoff until the deadline: {n}");
    assert!(
        took >= close && took <= close + Duration::from_millis(100),
        "{took:?}"
    );
    let after = mock.count();
    std::thread::sleep(HBI * 2);
    assert_eq!(mock.count(), after, "nothing after close returned");
}
