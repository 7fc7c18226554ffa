//! Random input sequences against the membership state machine: it never panics and every
//! request it produces obeys the broker's rules (`docs/kip1071-client-behaviour.md` §13).

use std::time::{Duration, Instant};

use kafka_streams_group::protocol::api::streams_group_heartbeat::{
    Status, StreamsGroupHeartbeatResponse, TaskIds,
};
use kafka_streams_group::streams::{
    HeartbeatFailure, LeaveOperation, MemberState, MembershipCommand, MembershipConfig,
    StreamsMembership, StreamsTaskAssignment, StreamsTaskId, StreamsTaskRole, StreamsTopology,
    Subtopology,
};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Advance(u64),
    Poll,
    Respond {
        error: i16,
        epoch: i32,
        tasks: Option<[Vec<(u8, i32)>; 3]>,
        status: Option<Vec<i8>>,
    },
    Fail(u8),
    Ready(i16),
    Lost,
    Join,
    Ack,
    Owned(Vec<(u8, i32, u8)>),
    Now,
    Shutdown,
    Leave(u8),
}

fn op() -> impl Strategy<Value = Op> {
    let tasks = prop::collection::vec((0u8..3, 0i32..4), 0..4);
    prop_oneof![
        (0u64..7000).prop_map(Op::Advance),
        Just(Op::Poll),
        Just(Op::Poll),
        (
            prop::sample::select(vec![0i16, 0, 0, 0, 14, 15, 16, 25, 29, 110, 42, 7]),
            -2i32..8,
            prop::option::weighted(0.6, [tasks.clone(), tasks.clone(), tasks]),
            prop::option::of(prop::collection::vec(0i8..8, 0..3)),
        )
            .prop_map(|(error, epoch, tasks, status)| Op::Respond {
                error,
                epoch,
                tasks,
                status
            }),
        (0u8..4).prop_map(Op::Fail),
        (0i16..3).prop_map(Op::Ready),
        Just(Op::Lost),
        Just(Op::Join),
        Just(Op::Ack),
        prop::collection::vec((0u8..3, 0i32..4, 0u8..3), 0..4).prop_map(Op::Owned),
        Just(Op::Now),
        Just(Op::Shutdown),
        (0u8..3).prop_map(Op::Leave),
    ]
}

fn topology() -> StreamsTopology {
    StreamsTopology::new()
        .subtopology(Subtopology::new("0").source_topic("a"))
        .subtopology(Subtopology::new("1").source_topic("b"))
}

fn tids(v: &[(u8, i32)]) -> Vec<TaskIds> {
    v.iter()
        .map(|(s, p)| TaskIds {
            subtopology_id: s.to_string(),
            partitions: vec![*p],
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn random_inputs_keep_requests_valid(ops in prop::collection::vec(op(), 1..80), static_member in any::<bool>()) {
        let mut cfg = MembershipConfig::new("g", topology(), "p");
        if static_member {
            cfg = cfg.instance_id("i");
        }
        let mut m = StreamsMembership::new(cfg, 9).unwrap();
        let id = m.member_id().to_string();
        let mut now = Instant::now();
        let mut normal_in_flight = 0usize;
        let mut shutdown_seen = false;
        for op in ops {
            match op {
                Op::Advance(ms) => now += Duration::from_millis(ms),
                Op::Poll => {
                    let due = m.poll_timeout().is_some_and(|t| t <= now);
                    let req = m.poll_request(now);
                    prop_assert_eq!(due, req.is_some(), "poll_timeout and poll_request disagree");
                    if let Some(r) = req {
                        prop_assert_ne!(m.state(), MemberState::Failed);
                        prop_assert_eq!(&r.member_id, &id);
                        prop_assert_eq!(&r.group_id, "g");
                        prop_assert!(r.member_epoch >= -2);
                        let lists = [r.active_tasks.is_some(), r.standby_tasks.is_some(), r.warmup_tasks.is_some()];
                        prop_assert!(lists == [true; 3] || lists == [false; 3], "task lists all or none");
                        prop_assert!(r.task_offsets.is_none() && r.task_end_offsets.is_none());
                        prop_assert!(r.instance_id.as_deref() != Some(""));
                        if r.member_epoch == 0 {
                            prop_assert!(r.topology.is_some() && r.process_id.is_some());
                            prop_assert!(r.rebalance_timeout_ms > 0);
                            prop_assert_eq!(r.active_tasks.as_deref(), Some(&[][..]));
                            prop_assert_eq!(r.standby_tasks.as_deref(), Some(&[][..]));
                            prop_assert_eq!(r.warmup_tasks.as_deref(), Some(&[][..]));
                        } else {
                            prop_assert!(r.topology.is_none() && r.process_id.is_none());
                            prop_assert_eq!(r.rebalance_timeout_ms, -1);
                        }
                        if r.member_epoch == -2 {
                            prop_assert!(r.instance_id.is_some());
                        }
                        if r.member_epoch < 0 {
                            prop_assert!(r.active_tasks.is_none());
                        } else {
                            prop_assert_eq!(normal_in_flight, 0, "two heartbeats in flight");
                            normal_in_flight += 1;
                        }
                        if shutdown_seen {
                            prop_assert!(r.shutdown_application, "shutdown is sticky");
                        }
                        shutdown_seen |= r.shutdown_application;
                        if m.api_version() == Some(0) {
                            prop_assert!(r.instance_id.is_none());
                        }
                    }
                }
                Op::Respond { error, epoch, tasks, status } => {
                    let mut resp = StreamsGroupHeartbeatResponse {
                        error_code: error,
                        member_epoch: epoch,
                        heartbeat_interval_ms: 5000,
                        status: status.map(|v| v.into_iter().map(|c| Status { status_code: c, status_detail: String::new() }).collect()),
                        ..StreamsGroupHeartbeatResponse::default()
                    };
                    if let Some([a, s, w]) = tasks {
                        resp.active_tasks = Some(tids(&a));
                        resp.standby_tasks = Some(tids(&s));
                        resp.warmup_tasks = Some(tids(&w));
                    }
                    m.handle_response(now, &resp);
                    normal_in_flight = normal_in_flight.saturating_sub(1);
                }
                Op::Fail(k) => {
                    let f = match k {
                        0 => HeartbeatFailure::Disconnected("x".into()),
                        1 => HeartbeatFailure::TimedOut,
                        2 => HeartbeatFailure::UnsupportedVersion,
                        _ => HeartbeatFailure::Fatal("x".into()),
                    };
                    m.handle_error(now, f);
                    normal_in_flight = 0;
                }
                Op::Ready(v) => {
                    let _ = m.handle_command(now, MembershipCommand::CoordinatorReady { broker: "b".into(), api_version: v });
                }
                Op::Lost => {
                    let _ = m.handle_command(now, MembershipCommand::CoordinatorLost);
                    normal_in_flight = 0;
                }
                Op::Join => { let _ = m.handle_command(now, MembershipCommand::Join); }
                Op::Ack => { let _ = m.handle_command(now, MembershipCommand::AcknowledgeTarget); }
                Op::Owned(v) => {
                    let mut a = StreamsTaskAssignment::new();
                    for (s, p, r) in v {
                        let _ = a.insert(StreamsTaskId::new(s.to_string(), p), StreamsTaskRole::ALL[r as usize]);
                    }
                    let _ = m.handle_command(now, MembershipCommand::TasksReconciled(a));
                }
                Op::Now => { let _ = m.handle_command(now, MembershipCommand::HeartbeatNow); }
                Op::Shutdown => { let _ = m.handle_command(now, MembershipCommand::RequestShutdownApplication); }
                Op::Leave(k) => {
                    let op = [LeaveOperation::Default, LeaveOperation::LeaveGroup, LeaveOperation::RemainInGroup][k as usize];
                    let _ = m.handle_command(now, MembershipCommand::Leave(op));
                }
            }
            while m.poll_event().is_some() {}
            prop_assert_eq!(m.member_id(), id.as_str());
            if m.state() == MemberState::Failed {
                prop_assert!(m.poll_timeout().is_none());
                prop_assert!(m.failure().is_some());
            }
        }
    }
}
