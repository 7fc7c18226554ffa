//! Deterministic scenarios for the Streams membership state machine on a manual clock.

use std::time::{Duration, Instant};

use kafka_streams_group::protocol::api::streams_group_heartbeat::{
    Endpoint, EndpointToPartitions, Status, StreamsGroupHeartbeatRequest,
    StreamsGroupHeartbeatResponse, TaskIds, TopicPartition,
};
use kafka_streams_group::protocol::BrokerErrorKind;
use kafka_streams_group::streams::membership::{
    LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH,
};
use kafka_streams_group::streams::{
    HeartbeatFailure, LeaveOperation, MemberState, MembershipCommand, MembershipConfig,
    MembershipError, MembershipEvent, RetryBackoff, StreamsMembership, StreamsTaskAssignment,
    StreamsTaskId, StreamsTaskRole, StreamsTopology, Subtopology, TasksLostReason, TopicInfo,
    UserEndpoint,
};

const MS: Duration = Duration::from_millis(1);

fn topology() -> StreamsTopology {
    StreamsTopology::new()
        .subtopology(
            Subtopology::new("1")
                .source_topic("orders")
                .source_topic("customers")
                .state_changelog_topic(
                    TopicInfo::new("app-store-changelog")
                        .config("z", "1")
                        .config("a", "2"),
                ),
        )
        .subtopology(Subtopology::new("0").source_topic("input"))
}

fn config() -> MembershipConfig {
    MembershipConfig::new("app", topology(), "0d3c5a2e-7d7c-4a43-9d0e-8a4f6b9b2c11")
        .user_endpoint(UserEndpoint::new("localhost", 8080))
        .rack_id("rack-a")
        .client_tag("zone", "eu-1")
        .client_tag("az", "b")
        .rebalance_timeout_ms(45_000)
}

/// A member driven on a manual clock.
struct Sim {
    m: StreamsMembership,
    now: Instant,
}

impl Sim {
    fn new(config: MembershipConfig, version: i16) -> Self {
        let now = Instant::now();
        let mut m = StreamsMembership::new(config, 42).unwrap();
        m.handle_command(now, MembershipCommand::Join).unwrap();
        m.handle_command(
            now,
            MembershipCommand::CoordinatorReady {
                broker: "localhost:9092 (id 1)".into(),
                api_version: version,
            },
        )
        .unwrap();
        Sim { m, now }
    }

    fn dynamic() -> Self {
        Self::new(config(), 1)
    }

    fn advance(&mut self, d: Duration) {
        self.now += d;
    }

    fn poll(&mut self) -> Option<StreamsGroupHeartbeatRequest> {
        self.m.poll_request(self.now)
    }

    fn send(&mut self) -> StreamsGroupHeartbeatRequest {
        self.poll().expect("a heartbeat is due")
    }

    fn respond(&mut self, r: StreamsGroupHeartbeatResponse) {
        self.m.handle_response(self.now, &r);
    }

    fn cmd(&mut self, c: MembershipCommand) {
        self.m.handle_command(self.now, c).unwrap();
    }

    fn events(&mut self) -> Vec<MembershipEvent> {
        std::iter::from_fn(|| self.m.poll_event()).collect()
    }

    /// Join, get `active` tasks of subtopology "0" at epoch `epoch`, acknowledge, get the ack
    /// answered. Ends Stable with an empty event queue.
    fn stable_with(&mut self, epoch: i32, active: &[i32]) {
        let join = self.send();
        assert_eq!(join.member_epoch, 0);
        self.advance(10 * MS);
        self.respond(ok(epoch, Some((&[("0", active)], &[], &[]))));
        self.cmd(MembershipCommand::AcknowledgeTarget);
        let ack = self.send();
        assert_eq!(ack.member_epoch, epoch);
        self.advance(10 * MS);
        self.respond(ok(epoch, None));
        assert_eq!(self.m.state(), MemberState::Stable);
        self.events();
    }
}

type Tasks<'a> = &'a [(&'a str, &'a [i32])];

fn tids(list: Tasks<'_>) -> Vec<TaskIds> {
    list.iter()
        .map(|(s, p)| TaskIds {
            subtopology_id: s.to_string(),
            partitions: p.to_vec(),
        })
        .collect()
}

fn ok(
    epoch: i32,
    tasks: Option<(Tasks<'_>, Tasks<'_>, Tasks<'_>)>,
) -> StreamsGroupHeartbeatResponse {
    let mut r = StreamsGroupHeartbeatResponse {
        member_epoch: epoch,
        heartbeat_interval_ms: 5000,
        status: Some(vec![]),
        endpoint_information_epoch: 1,
        ..StreamsGroupHeartbeatResponse::default()
    };
    if let Some((a, s, w)) = tasks {
        r.active_tasks = Some(tids(a));
        r.standby_tasks = Some(tids(s));
        r.warmup_tasks = Some(tids(w));
    }
    r
}

fn err(code: i16) -> StreamsGroupHeartbeatResponse {
    StreamsGroupHeartbeatResponse {
        error_code: code,
        error_message: Some(format!("error {code}")),
        ..StreamsGroupHeartbeatResponse::default()
    }
}

fn owned(list: &[(&str, i32, StreamsTaskRole)]) -> StreamsTaskAssignment {
    StreamsTaskAssignment::from_tasks(
        list.iter()
            .map(|(s, p, r)| (StreamsTaskId::new(*s, *p), *r)),
    )
    .unwrap()
}

#[test]
fn member_id_is_22_url_safe_chars_without_dash_and_seeded() {
    let ids: Vec<String> = (0..200u64)
        .map(|seed| {
            StreamsMembership::new(config(), seed)
                .unwrap()
                .member_id()
                .to_string()
        })
        .collect();
    for id in &ids {
        assert_eq!(id.len(), 22, "{id}");
        assert!(
            id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "{id}"
        );
    }
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), ids.len());
    // Same seed, same id: the member is reproducible in tests.
    assert_eq!(
        StreamsMembership::new(config(), 3).unwrap().member_id(),
        ids[3]
    );
}

#[test]
fn nothing_is_sent_before_join_and_coordinator() {
    let now = Instant::now();
    let mut m = StreamsMembership::new(config(), 1).unwrap();
    assert_eq!(m.state(), MemberState::Unjoined);
    m.handle_command(
        now,
        MembershipCommand::CoordinatorReady {
            broker: "b".into(),
            api_version: 1,
        },
    )
    .unwrap();
    assert!(m.poll_request(now).is_none());
    assert!(m.poll_timeout().is_none());

    let mut m = StreamsMembership::new(config(), 1).unwrap();
    m.handle_command(now, MembershipCommand::Join).unwrap();
    assert_eq!(m.state(), MemberState::Joining);
    assert!(m.poll_request(now).is_none(), "no coordinator yet");
    assert!(m.poll_timeout().is_none());
}

#[test]
fn join_heartbeat_carries_everything() {
    for version in [0, 1] {
        let mut s = Sim::new(config(), version);
        assert_eq!(s.m.poll_timeout(), Some(s.now));
        let r = s.send();
        assert_eq!(r.group_id, "app");
        assert_eq!(r.member_id, s.m.member_id());
        assert_eq!(r.member_epoch, 0);
        assert_eq!(r.endpoint_information_epoch, -1);
        assert_eq!(r.instance_id, None);
        assert_eq!(r.rack_id.as_deref(), Some("rack-a"));
        assert_eq!(r.rebalance_timeout_ms, 45_000);
        assert_eq!(
            r.process_id.as_deref(),
            Some("0d3c5a2e-7d7c-4a43-9d0e-8a4f6b9b2c11")
        );
        assert_eq!(
            r.user_endpoint,
            Some(Endpoint {
                host: "localhost".into(),
                port: 8080
            })
        );
        let tags: Vec<(String, String)> = r
            .client_tags
            .unwrap()
            .into_iter()
            .map(|kv| (kv.key, kv.value))
            .collect();
        assert_eq!(
            tags,
            vec![("az".into(), "b".into()), ("zone".into(), "eu-1".into())]
        );
        assert_eq!(r.active_tasks, Some(vec![]));
        assert_eq!(r.standby_tasks, Some(vec![]));
        assert_eq!(r.warmup_tasks, Some(vec![]));
        assert_eq!(r.task_offsets, None);
        assert_eq!(r.task_end_offsets, None);
        assert!(!r.shutdown_application);
        let t = r.topology.unwrap();
        assert_eq!(t.epoch, 0);
        let ids: Vec<&str> = t
            .subtopologies
            .iter()
            .map(|s| s.subtopology_id.as_str())
            .collect();
        assert_eq!(ids, vec!["0", "1"]);
        assert_eq!(
            t.subtopologies[1].source_topics,
            vec!["customers", "orders"]
        );
        let cl = &t.subtopologies[1].state_changelog_topics[0];
        assert_eq!((cl.partitions, cl.replication_factor), (0, -1));
        let keys: Vec<&str> = cl.topic_configs.iter().map(|kv| kv.key.as_str()).collect();
        assert_eq!(keys, vec!["a", "z"]);
        assert!(t
            .subtopologies
            .iter()
            .all(|s| s.source_topic_regex.is_empty()));
        // One in flight.
        assert!(s.poll().is_none());
        assert!(s.m.poll_timeout().is_none());
        assert!(s.m.is_request_in_flight());
    }
}

#[test]
fn full_lifecycle_join_reconcile_acknowledge_stable() {
    let mut s = Sim::dynamic();
    let t0 = s.now;
    s.send();
    s.advance(100 * MS);
    let mut resp = ok(2, Some((&[("0", &[1, 0])], &[("1", &[0])], &[])));
    resp.endpoint_information_epoch = 7;
    s.respond(resp);
    assert_eq!(s.m.state(), MemberState::Reconciling);
    assert_eq!(s.m.member_epoch(), 2);
    let ev = s.events();
    assert!(ev.contains(&MembershipEvent::StateChanged {
        from: MemberState::Joining,
        to: MemberState::Reconciling
    }));
    let snap = ev
        .iter()
        .find_map(|e| match e {
            MembershipEvent::AssignmentUpdated { assignment, .. } => Some(assignment.clone()),
            _ => None,
        })
        .expect("assignment published");
    assert_eq!(snap.active().count(), 2);
    assert_eq!(snap.standby().count(), 1);
    assert!(snap.is_group_ready);
    // Reconciling: nothing is due before the interval (counted from the join's send time).
    assert!(s.poll().is_none());
    assert_eq!(s.m.poll_timeout(), Some(t0 + 5000 * MS));

    s.advance(50 * MS);
    s.cmd(MembershipCommand::AcknowledgeTarget);
    assert_eq!(s.m.state(), MemberState::Acknowledging);
    let ack = s.send();
    let ack_at = s.now;
    assert_eq!(s.m.state(), MemberState::Stable);
    assert_eq!(ack.member_epoch, 2);
    assert_eq!(ack.endpoint_information_epoch, 7);
    assert_eq!(ack.active_tasks, Some(tids(&[("0", &[0, 1])])));
    assert_eq!(ack.standby_tasks, Some(tids(&[("1", &[0])])));
    assert_eq!(ack.warmup_tasks, Some(vec![]));
    assert!(ack.topology.is_none() && ack.process_id.is_none() && ack.user_endpoint.is_none());
    assert!(ack.client_tags.is_none() && ack.rack_id.is_none());
    assert_eq!(ack.rebalance_timeout_ms, -1);

    s.advance(20 * MS);
    assert_eq!(
        s.events(),
        vec![
            MembershipEvent::StateChanged {
                from: MemberState::Reconciling,
                to: MemberState::Acknowledging
            },
            MembershipEvent::StateChanged {
                from: MemberState::Acknowledging,
                to: MemberState::Stable
            }
        ]
    );
    let mut same = ok(2, None);
    same.endpoint_information_epoch = 7;
    s.respond(same);
    assert_eq!(s.m.state(), MemberState::Stable);
    assert!(s.events().is_empty(), "nothing changed");
    assert_eq!(s.m.poll_timeout(), Some(ack_at + 5000 * MS));
    s.now = ack_at + 4999 * MS;
    assert!(s.poll().is_none());
    s.now = ack_at + 5000 * MS;
    let hb = s.send();
    assert_eq!(hb.member_epoch, 2);
    assert!(hb.active_tasks.is_none() && hb.standby_tasks.is_none() && hb.warmup_tasks.is_none());
}

#[test]
fn interval_is_counted_from_send_time_not_response_time() {
    let mut s = Sim::dynamic();
    s.stable_with(3, &[0]);
    let sent_at = s.m.poll_timeout().unwrap();
    s.now = sent_at;
    s.send();
    s.advance(4000 * MS);
    s.respond(ok(3, None));
    assert_eq!(s.m.poll_timeout(), Some(sent_at + 5000 * MS));
    // A new interval from the broker applies to the same send time.
    let mut r = ok(3, None);
    r.heartbeat_interval_ms = 6000;
    s.now = sent_at + 5000 * MS;
    s.send();
    s.respond(r);
    assert_eq!(s.m.poll_timeout(), Some(sent_at + 11_000 * MS));
}

#[test]
fn empty_first_assignment_is_still_acknowledged() {
    let mut s = Sim::dynamic();
    s.send();
    s.respond(ok(1, Some((&[], &[], &[]))));
    assert_eq!(s.m.state(), MemberState::Reconciling);
    s.cmd(MembershipCommand::TasksReconciled(
        StreamsTaskAssignment::new(),
    ));
    assert_eq!(s.m.state(), MemberState::Acknowledging);
    let ack = s.send();
    assert_eq!(ack.active_tasks, Some(vec![]));
    assert_eq!(s.m.state(), MemberState::Stable);
}

#[test]
fn partial_reconciliation_is_reported_promptly_but_not_acknowledged() {
    let mut s = Sim::dynamic();
    s.send();
    s.respond(ok(2, Some((&[("0", &[0, 1])], &[], &[]))));
    s.cmd(MembershipCommand::TasksReconciled(owned(&[(
        "0",
        0,
        StreamsTaskRole::Active,
    )])));
    assert_eq!(s.m.state(), MemberState::Reconciling);
    let hb = s.send();
    assert_eq!(hb.active_tasks, Some(tids(&[("0", &[0])])));
    assert_eq!(s.m.state(), MemberState::Reconciling);
    s.respond(ok(2, None));
    s.cmd(MembershipCommand::AcknowledgeTarget);
    assert_eq!(s.m.state(), MemberState::Acknowledging);
    assert_eq!(s.send().active_tasks, Some(tids(&[("0", &[0, 1])])));
}

#[test]
fn owned_tasks_of_unknown_subtopology_are_refused() {
    let mut s = Sim::dynamic();
    s.stable_with(2, &[0]);
    let e =
        s.m.handle_command(
            s.now,
            MembershipCommand::TasksReconciled(owned(&[("9", 0, StreamsTaskRole::Active)])),
        )
        .unwrap_err();
    assert!(matches!(e, MembershipError::InvalidOwnedTasks(_)));
    assert_eq!(
        s.m.owned_tasks(),
        &owned(&[("0", 0, StreamsTaskRole::Active)])
    );
}

#[test]
fn retriable_errors_back_off_exponentially_and_resend_owned_tasks() {
    let mut s = Sim::dynamic();
    s.stable_with(2, &[0, 1]);
    let mut expected = [
        (80, 120),
        (160, 240),
        (320, 480),
        (640, 960),
        (800, 1000),
        (800, 1000),
    ]
    .into_iter();
    s.now = s.m.poll_timeout().unwrap();
    let hb = s.send();
    assert!(hb.active_tasks.is_none());
    for code in [14i16, 14, 7, 13, 14, 14] {
        s.respond(err(code));
        assert_eq!(s.m.state(), MemberState::Stable);
        let (lo, hi) = expected.next().unwrap();
        let due = s.m.poll_timeout().unwrap();
        let wait = due - s.now;
        assert!(
            wait >= lo * MS && wait <= hi * MS,
            "code {code}: {wait:?} not in {lo}..={hi} ms"
        );
        s.now = due - MS;
        assert!(s.poll().is_none(), "backoff not respected");
        s.now = due;
        let retry = s.send();
        // After any error the owned tasks are sent again.
        assert_eq!(retry.active_tasks, Some(tids(&[("0", &[0, 1])])));
    }
    // Success resets the backoff.
    s.respond(ok(2, None));
    s.now = s.m.poll_timeout().unwrap();
    s.send();
    s.respond(err(14));
    let wait = s.m.poll_timeout().unwrap() - s.now;
    assert!(wait >= 80 * MS && wait <= 120 * MS, "{wait:?}");
}

#[test]
fn custom_backoff_is_honoured() {
    let cfg = config().retry_backoff(RetryBackoff {
        base: Duration::from_millis(10),
        max: Duration::from_millis(25),
        jitter: 0.0,
    });
    let mut s = Sim::new(cfg, 1);
    s.send();
    s.respond(err(14));
    assert_eq!(s.m.poll_timeout(), Some(s.now + 10 * MS));
    s.now += 10 * MS;
    s.send();
    s.respond(err(14));
    assert_eq!(s.m.poll_timeout(), Some(s.now + 20 * MS));
    s.now += 20 * MS;
    s.send();
    s.respond(err(14));
    assert_eq!(s.m.poll_timeout(), Some(s.now + 25 * MS));
    assert!(matches!(
        StreamsMembership::new(
            config().retry_backoff(RetryBackoff {
                base: Duration::from_secs(2),
                max: Duration::from_secs(1),
                jitter: 0.2
            }),
            1
        ),
        Err(MembershipError::InvalidConfig(_))
    ));
}

#[test]
fn coordinator_errors_rediscover_without_backoff() {
    for code in [15i16, 16] {
        let mut s = Sim::dynamic();
        s.stable_with(2, &[0]);
        s.now = s.m.poll_timeout().unwrap();
        s.send();
        // A retriable error first, so that a backoff would be visible if it were kept.
        s.respond(err(14));
        s.now = s.m.poll_timeout().unwrap();
        s.send();
        s.respond(err(code));
        assert_eq!(s.events(), vec![MembershipEvent::CoordinatorLost]);
        assert!(!s.m.has_coordinator());
        assert!(s.poll().is_none());
        assert!(s.m.poll_timeout().is_none());
        assert_eq!(s.m.state(), MemberState::Stable, "tasks are kept");
        s.cmd(MembershipCommand::CoordinatorReady {
            broker: "other:9092".into(),
            api_version: 1,
        });
        let hb = s.send();
        assert_eq!(hb.member_epoch, 2);
        assert_eq!(hb.active_tasks, Some(tids(&[("0", &[0])])));
    }
}

#[test]
fn fenced_member_loses_tasks_and_rejoins_with_same_member_id() {
    for code in [110i16, 25] {
        let mut s = Sim::dynamic();
        let id = s.m.member_id().to_string();
        s.stable_with(4, &[0, 1]);
        s.now = s.m.poll_timeout().unwrap();
        s.send();
        s.respond(err(14));
        s.now = s.m.poll_timeout().unwrap();
        s.send();
        s.respond(err(code));
        let ev = s.events();
        assert!(ev.contains(&MembershipEvent::TasksLost {
            reason: TasksLostReason::Fenced,
            tasks: owned(&[
                ("0", 0, StreamsTaskRole::Active),
                ("0", 1, StreamsTaskRole::Active)
            ]),
        }));
        assert_eq!(s.m.state(), MemberState::Joining);
        assert_eq!(s.m.member_epoch(), 0);
        assert!(s.m.owned_tasks().is_empty());
        assert!(s.m.assignment().tasks.is_empty());
        // Backoff reset: the join goes out at once.
        assert_eq!(s.m.poll_timeout(), Some(s.now));
        let join = s.send();
        assert_eq!(join.member_id, id);
        assert_eq!(join.member_epoch, 0);
        assert!(join.topology.is_some());
        assert_eq!(join.active_tasks, Some(vec![]));
        assert_eq!(
            join.endpoint_information_epoch, 1,
            "endpoint epoch survives fencing"
        );
        s.respond(ok(6, Some((&[("0", &[0])], &[], &[]))));
        assert_eq!(s.m.state(), MemberState::Reconciling);
        assert_eq!(s.m.member_epoch(), 6);
    }
}

#[test]
fn fatal_errors_stop_the_member() {
    // -1 (UNKNOWN_SERVER_ERROR) is retried a few times first: see
    // `streams::membership::limits` and its tests.
    for code in [30i16, 42, 69, 81, 130, 131, 132, 35, 111, 82, 31, 999] {
        let mut s = Sim::dynamic();
        s.stable_with(2, &[0]);
        s.now = s.m.poll_timeout().unwrap();
        s.send();
        s.respond(err(code));
        assert_eq!(s.m.state(), MemberState::Failed, "code {code}");
        let ev = s.events();
        assert!(ev.iter().any(|e| matches!(
            e,
            MembershipEvent::TasksLost {
                reason: TasksLostReason::Failed,
                ..
            }
        )));
        let failed = ev.iter().find_map(|e| match e {
            MembershipEvent::Failed(MembershipError::Broker { error, .. }) => Some(*error),
            _ => None,
        });
        assert_eq!(failed, Some(BrokerErrorKind::from_code(code)));
        assert!(s.m.failure().is_some());
        for _ in 0..3 {
            s.advance(Duration::from_secs(60));
            assert!(s.poll().is_none());
            assert!(s.m.poll_timeout().is_none());
        }
        assert!(matches!(
            s.m.handle_command(s.now, MembershipCommand::HeartbeatNow),
            Err(MembershipError::AlreadyFailed(_))
        ));
        // Leaving after a failure is a no-op, not an error.
        s.cmd(MembershipCommand::Leave(LeaveOperation::Default));
        assert!(s.poll().is_none());
    }
}

#[test]
fn topic_authorization_failure_is_surfaced_but_member_stays() {
    let mut s = Sim::dynamic();
    s.send();
    s.events();
    s.respond(err(29));
    assert_eq!(s.m.state(), MemberState::Joining);
    let ev = s.events();
    assert_eq!(
        ev,
        vec![MembershipEvent::TopicAuthorizationFailed {
            message: Some("error 29".into())
        }]
    );
    s.now = s.m.poll_timeout().unwrap();
    let again = s.send();
    assert_eq!(again.member_epoch, 0);
    assert!(again.topology.is_some());
}

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

#[test]
fn unknown_subtopology_in_response_fails_without_merging() {
    let mut s = Sim::dynamic();
    s.stable_with(2, &[0]);
    s.now = s.m.poll_timeout().unwrap();
    s.send();
    s.respond(ok(3, Some((&[("0", &[0]), ("42", &[1])], &[], &[]))));
    assert_eq!(s.m.state(), MemberState::Failed);
    assert!(matches!(
        s.m.failure(),
        Some(MembershipError::InvalidAssignment { .. })
    ));
    // The bad assignment was never merged or published; failing released the old tasks.
    let ev = s.events();
    for e in &ev {
        if let MembershipEvent::AssignmentUpdated { assignment, .. } = e {
            assert!(assignment.tasks.is_empty());
            assert_ne!(assignment.member_epoch, 3);
        }
    }
    assert!(ev.contains(&MembershipEvent::TasksLost {
        reason: TasksLostReason::Failed,
        tasks: owned(&[("0", 0, StreamsTaskRole::Active)]),
    }));
    assert_eq!(s.m.assignment().member_epoch, 0);
    assert!(s.m.assignment().tasks.is_empty());
}

#[test]
fn partial_or_duplicate_task_lists_fail_the_member() {
    let mut s = Sim::dynamic();
    s.send();
    let mut r = ok(2, Some((&[("0", &[0])], &[], &[])));
    r.warmup_tasks = None;
    s.respond(r);
    assert_eq!(s.m.state(), MemberState::Failed);

    let mut s = Sim::dynamic();
    s.send();
    s.respond(ok(2, Some((&[("0", &[0])], &[("0", &[0])], &[]))));
    assert_eq!(s.m.state(), MemberState::Failed);
}

#[test]
fn transport_failures() {
    let mut s = Sim::dynamic();
    s.stable_with(2, &[0]);
    s.now = s.m.poll_timeout().unwrap();
    s.send();
    s.m.handle_error(s.now, HeartbeatFailure::TimedOut);
    assert_eq!(s.events(), vec![MembershipEvent::CoordinatorLost]);
    assert!(!s.m.is_request_in_flight());
    s.cmd(MembershipCommand::CoordinatorReady {
        broker: "b".into(),
        api_version: 1,
    });
    // Backoff applies after a transport failure.
    let due = s.m.poll_timeout().unwrap();
    assert!(due >= s.now + 80 * MS && due <= s.now + 120 * MS);
    s.now = due;
    assert_eq!(s.send().active_tasks, Some(tids(&[("0", &[0])])));

    s.m.handle_error(s.now, HeartbeatFailure::UnsupportedVersion);
    assert_eq!(s.m.state(), MemberState::Failed);
    assert!(matches!(
        s.m.failure(),
        Some(MembershipError::UnsupportedVersion { broker, .. }) if broker == "b"
    ));
}

#[test]
fn status_only_change_triggers_reconciliation_and_publishes_readiness() {
    let mut s = Sim::dynamic();
    s.stable_with(2, &[0]);
    s.now = s.m.poll_timeout().unwrap();
    s.send();
    let mut r = ok(2, None);
    r.status = Some(vec![Status {
        status_code: 1,
        status_detail: "Source topics input are missing.".into(),
    }]);
    s.respond(r);
    assert_eq!(s.m.state(), MemberState::Reconciling);
    let ev = s.events();
    let ready = ev.iter().find_map(|e| match e {
        MembershipEvent::AssignmentUpdated {
            assignment,
            outcome,
        } => {
            assert!(outcome.group_ready_changed && !outcome.tasks_changed);
            Some(assignment.is_group_ready)
        }
        _ => None,
    });
    assert_eq!(ready, Some(false));
    s.cmd(MembershipCommand::AcknowledgeTarget);
    assert_eq!(s.m.state(), MemberState::Acknowledging);
    let ack = s.send();
    assert!(ack.active_tasks.is_none(), "owned tasks did not change");
    assert_eq!(s.m.state(), MemberState::Stable);
}

#[test]
fn endpoint_map_and_broker_values_are_exposed() {
    let mut s = Sim::dynamic();
    s.send();
    let mut r = ok(2, Some((&[("0", &[0])], &[], &[])));
    r.task_offset_interval_ms = 60_000;
    r.acceptable_recovery_lag = 10_000;
    r.topology_description_required = true;
    r.partitions_by_user_endpoint = Some(vec![
        EndpointToPartitions {
            user_endpoint: Endpoint {
                host: "h".into(),
                port: 1,
            },
            active_partitions: vec![TopicPartition {
                topic: "input".into(),
                partitions: vec![0],
            }],
            standby_partitions: vec![],
        },
        EndpointToPartitions {
            user_endpoint: Endpoint {
                host: "h".into(),
                port: 1,
            },
            active_partitions: vec![TopicPartition {
                topic: "input".into(),
                partitions: vec![1],
            }],
            standby_partitions: vec![],
        },
    ]);
    s.respond(r);
    let a = s.m.assignment();
    let e = &a.partitions_by_user_endpoint[&UserEndpoint::new("h", 1)];
    assert_eq!(
        e.active["input"].iter().copied().collect::<Vec<_>>(),
        vec![0, 1]
    );
    assert_eq!(s.m.task_offset_interval_ms(), 60_000);
    assert_eq!(s.m.acceptable_recovery_lag(), Some(10_000));
    assert!(s.m.topology_description_required());
    assert_eq!(s.m.heartbeat_interval(), Duration::from_secs(5));
}

#[test]
fn stray_responses_are_ignored() {
    let mut s = Sim::dynamic();
    s.respond(ok(9, Some((&[("0", &[0])], &[], &[]))));
    assert_eq!(s.m.state(), MemberState::Joining);
    assert!(s.m.assignment().tasks.is_empty());
    // A lost coordinator drops what was in flight; its late answer changes nothing.
    s.send();
    s.cmd(MembershipCommand::CoordinatorLost);
    s.respond(ok(9, Some((&[("0", &[0])], &[], &[]))));
    assert_eq!(s.m.state(), MemberState::Joining);
}

#[test]
fn invalid_configuration_is_rejected() {
    let bad = [
        MembershipConfig::new("", topology(), "p"),
        MembershipConfig::new("g", topology(), ""),
        MembershipConfig::new("g", StreamsTopology::new(), "p"),
        config().instance_id(""),
        config().rack_id(""),
        config().rebalance_timeout_ms(0),
    ];
    for cfg in bad {
        assert!(StreamsMembership::new(cfg, 1).is_err());
    }
}
