//! Live membership tests against the harness broker (scripts/test.sh starts it).

mod common;

use std::time::Duration;

use kafka_streams_group::{
    StreamsGroupConfig, StreamsGroupSession, StreamsGroupState, StreamsStatusCode, StreamsTopology,
    Subtopology,
};

fn topology(input: &str) -> StreamsTopology {
    StreamsTopology::new().subtopology(Subtopology::new("0").source_topic(input))
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn join_with_missing_source_topic_reports_missing_source_topics() {
    common::init_logging();
    let cluster = common::Cluster::get();
    let group = common::unique_name("ksg-missing");
    let input = common::unique_name("ksg-absent-topic");
    let config = StreamsGroupConfig::new(cluster.plaintext(), &group, topology(&input))
        .join_timeout(Duration::from_secs(30));
    let mut session = StreamsGroupSession::join(config).expect("join");
    assert!(session.member_epoch() > 0, "joined with a positive epoch");
    assert_eq!(session.member_id().len(), 22, "Java-style member id");
    let assignment = session.heartbeat().expect("heartbeat");
    let codes: Vec<_> = assignment.statuses.iter().map(|s| s.code).collect();
    assert!(
        codes.contains(&StreamsStatusCode::MissingSourceTopics),
        "statuses: {:?}",
        assignment.statuses
    );
    assert!(!assignment.is_group_ready);
    assert_eq!(assignment.active().count(), 0);
    session.close().expect("leave");
    assert!(session.is_closed());
    assert!(matches!(session.state(), StreamsGroupState::Closed));
}
