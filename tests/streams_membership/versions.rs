//! Heartbeat v0 brokers: no static membership, no warm-ups or task offsets; newer versions
//! clamped to what the crate knows.

use std::time::Instant;

use kafka_streams_group::streams::{
    MemberState, MembershipCommand, MembershipError, StreamsMembership, StreamsTaskRole,
};

use crate::{config, ok, owned, tids, Sim};

#[test]
fn static_membership_on_a_v0_broker_fails_naming_the_broker() {
    let now = Instant::now();
    let mut m = StreamsMembership::new(config().instance_id("i-1"), 5).unwrap();
    m.handle_command(now, MembershipCommand::Join).unwrap();
    let e = m
        .handle_command(
            now,
            MembershipCommand::CoordinatorReady {
                broker: "old-broker:9092 (id 3)".into(),
                api_version: 0,
            },
        )
        .unwrap_err();
    assert!(e.to_string().contains("old-broker:9092 (id 3)"), "{e}");
    assert!(matches!(
        e,
        MembershipError::StaticMembershipUnsupported { .. }
    ));
    assert_eq!(m.state(), MemberState::Failed);
    assert!(m.poll_request(now).is_none());
}

#[test]
fn v0_never_sends_warmups_or_task_offsets() {
    let mut s = Sim::new(config(), 0);
    s.send();
    s.respond(ok(2, Some((&[("0", &[0])], &[], &[]))));
    // The application claims a warm-up (it should not on v0): not reported to a v0 broker.
    s.cmd(MembershipCommand::TasksReconciled(owned(&[
        ("0", 0, StreamsTaskRole::Active),
        ("1", 0, StreamsTaskRole::Warmup),
    ])));
    let hb = s.send();
    assert_eq!(hb.active_tasks, Some(tids(&[("0", &[0])])));
    assert_eq!(hb.warmup_tasks, Some(vec![]));
    assert!(hb.task_offsets.is_none() && hb.task_end_offsets.is_none() && hb.instance_id.is_none());
    assert_eq!(s.m.api_version(), Some(0));
    // Versions above what we know are clamped.
    let s = Sim::new(config(), 7);
    assert_eq!(s.m.api_version(), Some(1));
}
