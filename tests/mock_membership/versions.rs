//! What the broker supports: no StreamsGroupHeartbeat fails the join naming the broker; a
//! v0-only broker is spoken to at v0.

use std::time::Duration;

use kafka_streams_group::protocol::api::streams_group_heartbeat::StreamsGroupHeartbeatRequest;
use kafka_streams_group::StreamsGroupSession;

use crate::mock_coordinator::MockCoordinator;
use crate::{config, member, Opts};

#[test]
fn mock_without_heartbeat_api_fails_the_join_naming_the_broker() {
    let mock = MockCoordinator::start();
    mock.set_heartbeat_versions(None);
    let e =
        StreamsGroupSession::join(config(&mock.addr(), &Opts::default())).expect_err("no API 88");
    println!("no StreamsGroupHeartbeat: {e}");
    assert!(format!("{e}").contains("StreamsGroupHeartbeat"), "{e}");
    assert_eq!(mock.count(), 0);
}

#[test]
fn heartbeat_v0_only_broker_is_spoken_to_at_v0() {
    let mock = MockCoordinator::start();
    mock.set_heartbeat_versions(Some((0, 0)));
    let handle = member(&mock, &mock.addr(), &Opts::default());
    mock.wait_for(3, Duration::from_secs(2))
        .expect("heartbeats");
    assert!(mock.requests().iter().all(|r| r.version == 0));
    handle.close().expect("close");
    let _ = StreamsGroupHeartbeatRequest::default();
}
