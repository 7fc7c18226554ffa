//! Live: a member configured only from a `.properties` file joins a Streams group over
//! `SASL_SSL` with `SCRAM-SHA-512` and a CA file, gets its tasks and leaves.

mod common;

use std::time::{Duration, Instant};

use common::Cluster;
use kafka_streams_group::{StreamsGroupConfig, StreamsGroupSession, StreamsTopology, Subtopology};

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn sasl_ssl_scram_member_from_a_properties_file() {
    common::init_logging();
    let cluster = Cluster::get();
    let group = common::unique_name("props-group");
    let input = common::unique_name("props-input");
    common::create_topic(&cluster, &input, 2);

    let dir = std::env::temp_dir().join(common::unique_name("props-live"));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("member.properties");
    // Written the way a user would: comments, `:` separators, a continued line.
    std::fs::write(
        &file,
        format!(
            "# SASL_SSL member\nbootstrap.servers = {}\nsecurity.protocol: SASL_SSL\n\
             sasl.mechanism=SCRAM-SHA-512\nsasl.username={}\nsasl.password={}\n\
             ssl.ca.location={}\napplication.id=\\\n    {group}\nclient.id=props-live\n\
             max.poll.interval.ms=60000\n",
            cluster.value("KSG_BOOTSTRAP_SASL_SSL"),
            cluster.value("KSG_SCRAM_USERNAME"),
            cluster.value("KSG_SCRAM_PASSWORD"),
            cluster.value("KSG_CA_PEM"),
        ),
    )
    .unwrap();
    let topology = StreamsTopology::new().subtopology(Subtopology::new("0").source_topic(&input));
    let config = StreamsGroupConfig::from_properties_file(&file, topology).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(config.group_id(), group);

    let mut session = StreamsGroupSession::join(config).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let assignment = session.heartbeat().unwrap();
        if assignment.active().count() == 2 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no full assignment over SASL_SSL within 30 s: {assignment:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    session.close().unwrap();
}
