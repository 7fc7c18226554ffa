//! Creating, joining, reconciling and acknowledging: the member's normal life, and what it
//! exposes of the broker's answers.

use std::time::{Duration, Instant};

use kafka_streams_group::protocol::api::streams_group_heartbeat::{
    Endpoint, EndpointToPartitions, Status, TopicPartitions,
};
use kafka_streams_group::streams::{
    MemberState, MembershipCommand, MembershipConfig, MembershipError, MembershipEvent,
    StreamsMembership, StreamsTaskAssignment, StreamsTaskRole, StreamsTopology, UserEndpoint,
};

use crate::{config, ok, owned, tids, topology, Sim, MS};

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
            active_partitions: vec![TopicPartitions {
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
            active_partitions: vec![TopicPartitions {
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
