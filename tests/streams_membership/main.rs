//! Deterministic scenarios for the Streams membership state machine on a manual clock.
//!
//! The fixtures (a [`Sim`] member on a manual clock, its configuration, response builders) are
//! here; the scenarios are grouped by what they exercise: [`lifecycle`] (join, reconcile,
//! acknowledge), [`errors`], [`commands`] (leave, shutdown, heartbeat now) and [`versions`]
//! (v0 brokers).

#[path = "../support/mock_coordinator.rs"]
mod mock_coordinator;

mod commands;
mod errors;
mod lifecycle;
mod versions;

use std::time::{Duration, Instant};

use kafka_streams_group::protocol::api::streams_group_heartbeat::{
    StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse,
};
use kafka_streams_group::streams::{
    MemberState, MembershipCommand, MembershipConfig, MembershipEvent, StreamsMembership,
    StreamsTaskAssignment, StreamsTaskId, StreamsTaskRole, StreamsTopology, Subtopology, TopicInfo,
    UserEndpoint,
};

// Wire task lists: the mock coordinator's builder, under the name these scenarios use.
use mock_coordinator::tasks as tids;

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
