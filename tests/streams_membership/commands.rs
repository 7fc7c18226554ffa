//! What the application asks of the member: leave (dynamic or static, with or without a
//! coordinator), remain in the group, shut the application down, heartbeat now.

use kafka_streams_group::protocol::BrokerErrorKind;
use kafka_streams_group::streams::membership::{
    LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH,
};
use kafka_streams_group::streams::{
    HeartbeatFailure, LeaveOperation, MemberState, MembershipCommand, MembershipEvent,
    StreamsTaskRole, TasksLostReason,
};

use crate::{config, err, ok, owned, Sim};

#[test]
fn dynamic_leave_uses_minus_one_and_goes_out_while_a_heartbeat_is_in_flight() {
    let mut s = Sim::dynamic();
    let id = s.m.member_id().to_string();
    s.stable_with(2, &[0]);
    s.now = s.m.poll_timeout().unwrap();
    s.send();
    assert!(s.m.is_request_in_flight());
    s.cmd(MembershipCommand::Leave(LeaveOperation::Default));
    assert_eq!(s.m.state(), MemberState::Leaving);
    let ev = s.events();
    assert!(ev.contains(&MembershipEvent::TasksLost {
        reason: TasksLostReason::Leaving,
        tasks: owned(&[("0", 0, StreamsTaskRole::Active)]),
    }));
    let leave = s.send();
    assert_eq!(leave.member_epoch, LEAVE_GROUP_MEMBER_EPOCH);
    assert_eq!(leave.member_id, id);
    assert!(
        leave.topology.is_none() && leave.active_tasks.is_none() && leave.instance_id.is_none()
    );
    assert!(!leave.shutdown_application);
    assert!(s.poll().is_none());
    // The answer to the earlier heartbeat is ignored (it would otherwise re-target tasks).
    s.respond(ok(3, Some((&[("0", &[0, 1])], &[], &[]))));
    assert_eq!(s.m.state(), MemberState::Leaving);
    // UNKNOWN_MEMBER_ID on a leave counts as left.
    s.respond(err(25));
    assert_eq!(s.m.state(), MemberState::Left);
    assert!(s.events().contains(&MembershipEvent::Left { error: None }));
    assert!(s.poll().is_none());
    assert!(s.m.poll_timeout().is_none());
    // Rejoin with the same member id.
    s.cmd(MembershipCommand::Join);
    let join = s.send();
    assert_eq!(
        (join.member_epoch, join.member_id.as_str()),
        (0, id.as_str())
    );
}

#[test]
fn leave_errors_are_reported_and_transport_failure_counts_as_left() {
    let mut s = Sim::dynamic();
    s.stable_with(2, &[0]);
    s.cmd(MembershipCommand::Leave(LeaveOperation::LeaveGroup));
    s.send();
    s.respond(err(30));
    assert!(s.events().contains(&MembershipEvent::Left {
        error: Some(BrokerErrorKind::GroupAuthorizationFailed)
    }));
    assert_eq!(
        s.m.state(),
        MemberState::Left,
        "a failed leave is not retried"
    );

    let mut s = Sim::dynamic();
    s.stable_with(2, &[0]);
    s.cmd(MembershipCommand::Leave(LeaveOperation::Default));
    s.send();
    s.m.handle_error(s.now, HeartbeatFailure::Disconnected("reset".into()));
    assert_eq!(s.m.state(), MemberState::Left);
    assert!(s.poll().is_none());
}

#[test]
fn static_member_sends_instance_id_always_and_leaves_with_minus_two() {
    let cfg = config().instance_id("instance-1");
    let mut s = Sim::new(cfg.clone(), 1);
    assert_eq!(s.send().instance_id.as_deref(), Some("instance-1"));
    s.respond(ok(2, Some((&[], &[], &[]))));
    s.cmd(MembershipCommand::AcknowledgeTarget);
    assert_eq!(s.send().instance_id.as_deref(), Some("instance-1"));
    s.respond(ok(2, None));
    for op in [LeaveOperation::Default, LeaveOperation::RemainInGroup] {
        let mut s = Sim::new(cfg.clone(), 1);
        s.stable_with(2, &[0]);
        s.cmd(MembershipCommand::Leave(op));
        let leave = s.send();
        assert_eq!(
            leave.member_epoch, LEAVE_GROUP_STATIC_MEMBER_EPOCH,
            "{op:?}"
        );
        assert_eq!(leave.instance_id.as_deref(), Some("instance-1"));
        let mut r = ok(-2, None);
        r.status = Some(vec![]);
        s.respond(r);
        assert_eq!(s.m.state(), MemberState::Left);
    }
    let mut s = Sim::new(cfg, 1);
    s.stable_with(2, &[0]);
    s.cmd(MembershipCommand::Leave(LeaveOperation::LeaveGroup));
    assert_eq!(s.send().member_epoch, LEAVE_GROUP_MEMBER_EPOCH);
}

#[test]
fn dynamic_remain_in_group_sends_no_leave() {
    let mut s = Sim::dynamic();
    s.stable_with(2, &[0]);
    s.cmd(MembershipCommand::Leave(LeaveOperation::RemainInGroup));
    assert_eq!(s.m.state(), MemberState::Left);
    assert!(s.poll().is_none());
}

#[test]
fn leave_without_coordinator_is_immediate() {
    let mut s = Sim::dynamic();
    s.stable_with(2, &[0]);
    s.cmd(MembershipCommand::CoordinatorLost);
    s.cmd(MembershipCommand::Leave(LeaveOperation::Default));
    assert_eq!(s.m.state(), MemberState::Left);
    s.cmd(MembershipCommand::CoordinatorReady {
        broker: "b".into(),
        api_version: 1,
    });
    assert!(s.poll().is_none());
}

#[test]
fn shutdown_is_only_sent_on_request_and_is_sticky() {
    let mut s = Sim::dynamic();
    s.stable_with(2, &[0]);
    s.now = s.m.poll_timeout().unwrap();
    assert!(!s.send().shutdown_application);
    s.respond(ok(2, None));
    s.cmd(MembershipCommand::RequestShutdownApplication);
    // Prompt, not after the interval.
    assert_eq!(s.m.poll_timeout(), Some(s.now));
    assert!(s.send().shutdown_application);
    s.respond(ok(2, None));
    s.now = s.m.poll_timeout().unwrap();
    assert!(s.send().shutdown_application);
    s.respond(ok(2, None));
    s.cmd(MembershipCommand::Leave(LeaveOperation::Default));
    assert!(s.send().shutdown_application);
}

#[test]
fn heartbeat_now_is_prompt_but_respects_in_flight() {
    let mut s = Sim::dynamic();
    s.stable_with(2, &[0]);
    s.cmd(MembershipCommand::HeartbeatNow);
    assert_eq!(s.m.poll_timeout(), Some(s.now));
    s.send();
    s.cmd(MembershipCommand::HeartbeatNow);
    assert!(s.poll().is_none());
    s.respond(ok(2, None));
    assert!(s.poll().is_some());
}
