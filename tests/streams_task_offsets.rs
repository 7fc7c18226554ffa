//! Task offsets (KIP-1071 `TaskOffsets` / `TaskEndOffsets`) on a manual clock: sent only to
//! v1 brokers; on the join, when owned tasks change, every `TaskOffsetIntervalMs`, or while a
//! warm-up task is hot; each list only when it changed; everything again after an error.

use std::time::{Duration, Instant};

use kafka_streams_group::protocol::api::streams_group_heartbeat::{
    StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse, TaskIds,
};
use kafka_streams_group::streams::{
    MembershipCommand, MembershipConfig, StreamsMembership, StreamsTaskAssignment, StreamsTaskId,
    StreamsTaskOffsets, StreamsTaskRole, StreamsTopology, Subtopology,
};

struct Sim {
    m: StreamsMembership,
    now: Instant,
}

impl Sim {
    fn joined(
        version: i16,
        offsets: Option<StreamsTaskOffsets>,
    ) -> (Sim, StreamsGroupHeartbeatRequest) {
        let topology = StreamsTopology::new().subtopology(Subtopology::new("0").source_topic("in"));
        let now = Instant::now();
        let mut m = StreamsMembership::new(MembershipConfig::new("app", topology, "p"), 7).unwrap();
        m.handle_command(now, MembershipCommand::Join).unwrap();
        m.handle_command(
            now,
            MembershipCommand::CoordinatorReady {
                broker: "b".into(),
                api_version: version,
            },
        )
        .unwrap();
        if let Some(o) = offsets {
            m.handle_command(now, MembershipCommand::ReportTaskOffsets(o))
                .unwrap();
        }
        let join = m.poll_request(now).expect("join");
        let mut sim = Sim { m, now };
        // Assign task 0_0 active and 0_1 warm-up (v1) with a 1 s offset interval.
        sim.respond(response(
            version,
            5,
            &[0],
            if version >= 1 { &[1] } else { &[] },
        ));
        (sim, join)
    }

    fn respond(&mut self, r: StreamsGroupHeartbeatResponse) {
        self.m.handle_response(self.now, &r);
    }

    fn advance(&mut self, ms: u64) {
        self.now += Duration::from_millis(ms);
    }

    /// The next request, advancing the clock to it.
    fn next(&mut self) -> StreamsGroupHeartbeatRequest {
        if let Some(at) = self.m.poll_timeout() {
            if at > self.now {
                self.now = at;
            }
        }
        self.m.poll_request(self.now).expect("a heartbeat is due")
    }

    fn ack(&mut self) {
        let target = self.m.assignment().tasks.clone();
        self.m
            .handle_command(self.now, MembershipCommand::TasksReconciled(target))
            .unwrap();
    }

    fn report(&mut self, offsets: StreamsTaskOffsets) {
        self.m
            .handle_command(self.now, MembershipCommand::ReportTaskOffsets(offsets))
            .unwrap();
    }
}

fn response(
    version: i16,
    epoch: i32,
    active: &[i32],
    warmup: &[i32],
) -> StreamsGroupHeartbeatResponse {
    let ids = |ps: &[i32]| {
        if ps.is_empty() {
            vec![]
        } else {
            vec![TaskIds {
                subtopology_id: "0".into(),
                partitions: ps.to_vec(),
            }]
        }
    };
    StreamsGroupHeartbeatResponse {
        member_epoch: epoch,
        heartbeat_interval_ms: 500,
        task_offset_interval_ms: 1000,
        acceptable_recovery_lag: if version >= 1 { 100 } else { -1 },
        active_tasks: Some(ids(active)),
        standby_tasks: Some(vec![]),
        warmup_tasks: Some(ids(warmup)),
        ..Default::default()
    }
}

fn task(p: i32) -> StreamsTaskId {
    StreamsTaskId::new("0", p)
}

fn sums(o0: i64, e0: i64) -> StreamsTaskOffsets {
    StreamsTaskOffsets::new()
        .offset(task(0), o0)
        .end_offset(task(0), e0)
}

#[test]
fn v0_brokers_never_receive_offsets() {
    let (mut sim, join) = Sim::joined(0, Some(sums(5, 10)));
    assert!(join.task_offsets.is_none() && join.task_end_offsets.is_none());
    sim.ack();
    for _ in 0..4 {
        let r = sim.next();
        assert!(r.task_offsets.is_none() && r.task_end_offsets.is_none());
        sim.respond(StreamsGroupHeartbeatResponse {
            member_epoch: 5,
            heartbeat_interval_ms: 500,
            ..Default::default()
        });
        sim.advance(600);
        sim.report(sums(6, 10));
    }
}

#[test]
fn the_join_carries_the_full_sums_on_v1() {
    let (_, join) = Sim::joined(1, Some(sums(5, 10)));
    let offsets = join.task_offsets.expect("offsets on join");
    assert_eq!(
        (
            offsets[0].subtopology_id.as_str(),
            offsets[0].partition,
            offsets[0].offset
        ),
        ("0", 0, 5)
    );
    assert_eq!(join.task_end_offsets.expect("end offsets")[0].offset, 10);
}

#[test]
fn offsets_follow_owned_changes_and_the_interval_and_only_when_changed() {
    let (mut sim, _) = Sim::joined(1, Some(sums(5, 10)));
    sim.ack();
    // Owned tasks changed: offsets are evaluated; unchanged since the join, so not re-sent.
    let r = sim.next();
    assert!(r.active_tasks.is_some());
    assert!(
        r.task_offsets.is_none(),
        "same sums as the join are not re-sent"
    );
    sim.respond(StreamsGroupHeartbeatResponse {
        member_epoch: 5,
        heartbeat_interval_ms: 500,
        task_offset_interval_ms: 1000,
        ..Default::default()
    });

    // New sums, but the interval (1 s) has not passed and owned tasks did not change: wait.
    sim.report(sums(7, 10));
    let r = sim.next();
    assert!(r.active_tasks.is_none());
    assert!(r.task_offsets.is_none(), "offset interval not yet elapsed");
    sim.respond(StreamsGroupHeartbeatResponse {
        member_epoch: 5,
        heartbeat_interval_ms: 500,
        task_offset_interval_ms: 1000,
        ..Default::default()
    });

    // Once the interval has passed the changed sums go out; the unchanged end offsets do not.
    sim.advance(1000);
    let r = sim.next();
    assert_eq!(r.task_offsets.expect("interval elapsed")[0].offset, 7);
    assert!(r.task_end_offsets.is_none(), "end offsets unchanged");
    sim.respond(StreamsGroupHeartbeatResponse {
        member_epoch: 5,
        heartbeat_interval_ms: 500,
        task_offset_interval_ms: 1000,
        ..Default::default()
    });

    // An error response: the next heartbeat re-sends owned tasks and both offset lists.
    sim.advance(100);
    let _ = sim.next();
    sim.respond(StreamsGroupHeartbeatResponse {
        error_code: 14, // COORDINATOR_LOAD_IN_PROGRESS, retriable
        ..Default::default()
    });
    let r = sim.next();
    assert!(
        r.active_tasks.is_some(),
        "owned tasks re-sent after an error"
    );
    assert_eq!(r.task_offsets.expect("offsets re-sent")[0].offset, 7);
    assert_eq!(
        r.task_end_offsets.expect("end offsets re-sent")[0].offset,
        10
    );
}

#[test]
fn a_hot_warmup_task_is_reported_promptly() {
    let (mut sim, _) = Sim::joined(1, None);
    sim.ack();
    assert!(sim.m.owned_tasks().role_of(&task(1)) == Some(StreamsTaskRole::Warmup));
    let _ = sim.next();
    sim.respond(StreamsGroupHeartbeatResponse {
        member_epoch: 5,
        heartbeat_interval_ms: 500,
        task_offset_interval_ms: 60_000,
        acceptable_recovery_lag: 100,
        ..Default::default()
    });
    let last = sim.now;
    // Warm-up 0_1 is 50 behind its end: within the acceptable lag (100), so it is sent at once,
    // not after the 60 s offset interval nor even the 500 ms heartbeat interval.
    sim.report(
        StreamsTaskOffsets::new()
            .offset(task(1), 950)
            .end_offset(task(1), 1000),
    );
    let r = sim
        .m
        .poll_request(sim.now)
        .expect("prompt heartbeat for a hot warm-up");
    assert_eq!(sim.now, last);
    let offsets = r.task_offsets.expect("offsets of the hot warm-up");
    assert_eq!((offsets[0].partition, offsets[0].offset), (1, 950));
    let _ = StreamsTaskAssignment::new();
}
