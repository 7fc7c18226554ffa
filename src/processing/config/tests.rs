//! Unit tests of [`ProcessingConfig`](super::ProcessingConfig).

use super::*;
use crate::config::SecurityProtocol;
use crate::streams::StreamsTopology;

const BASE: [(&str, &str); 2] = [("application.id", "a"), ("bootstrap.servers", "h:1")];

fn with(extra: &[(&str, &str)]) -> Result<ProcessingConfig, Error> {
    ProcessingConfig::from_properties(BASE.iter().chain(extra).copied())
}

fn err(extra: &[(&str, &str)]) -> String {
    match with(extra) {
        Ok(c) => panic!("{extra:?} accepted: {c:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn reads_java_keys_and_the_processing_guarantee() {
    let c = with(&[
        ("commit.interval.ms", "250"),
        ("repartition.purge.interval.ms", "1000"),
        ("poll.ms", " 50 "),
        ("processing.guarantee", "at_least_once"),
        ("group.protocol", "streams"),
    ])
    .unwrap();
    assert_eq!(c.get_commit_interval(), Duration::from_millis(250));
    assert_eq!(c.get_purge_interval(), Duration::from_secs(1));
    assert_eq!(c.get_poll_wait(), Duration::from_millis(50));
    assert_eq!(
        c.get_processing_guarantee(),
        ProcessingGuarantee::AtLeastOnce
    );
    // exactly_once_v2: Java's 100 ms commit interval unless set, whatever the key order.
    let eos = with(&[("processing.guarantee", "exactly_once_v2")]).unwrap();
    assert_eq!(
        eos.get_processing_guarantee(),
        ProcessingGuarantee::ExactlyOnceV2
    );
    assert_eq!(eos.get_commit_interval(), Duration::from_millis(100));
    let eos = with(&[
        ("commit.interval.ms", "250"),
        ("processing.guarantee", "exactly_once_v2"),
    ])
    .unwrap();
    assert_eq!(eos.get_commit_interval(), Duration::from_millis(250));
    let e = err(&[("processing.guarantee", "exactly_once_beta")]);
    assert!(e.contains("use exactly_once_v2"), "{e}");
    let e = err(&[("processing.guarantee", "exactly_twice")]);
    assert!(e.contains("at_least_once or exactly_once_v2"), "{e}");
    let e = err(&[("group.protocol", "classic")]);
    assert!(e.contains("group.protocol") && e.contains("streams"), "{e}");
    assert!(ProcessingConfig::from_properties([("bootstrap.servers", "h:1")]).is_err());
    assert!(ProcessingConfig::from_properties([("application.id", "a")]).is_err());
}

#[test]
fn statestore_cache_max_bytes_sets_the_record_cache() {
    let default = with(&[]).unwrap();
    assert_eq!(
        default.get_cache_max_bytes(),
        10 * 1024 * 1024,
        "Java's default"
    );
    let off = with(&[("statestore.cache.max.bytes", "0")]).unwrap();
    assert_eq!(off.get_cache_max_bytes(), 0);
    let both = [
        ("statestore.cache.max.bytes", "1024"),
        ("cache.max.bytes.buffering", "2048"),
    ];
    assert_eq!(
        with(&both).unwrap().get_cache_max_bytes(),
        1024,
        "the new key wins"
    );
    let old = with(&[("cache.max.bytes.buffering", "2048")]).unwrap();
    assert_eq!(old.get_cache_max_bytes(), 2048);
    assert!(err(&[("statestore.cache.max.bytes", "-1")]).contains("at least 0"));
}

#[test]
fn deserialization_handler_from_java_class_names() {
    assert_eq!(
        with(&[]).unwrap().get_deserialization_handler(),
        DeserializationHandler::LogAndFail
    );
    for key in [
        "default.deserialization.exception.handler",
        "deserialization.exception.handler",
    ] {
        let c = with(&[(
            key,
            "org.apache.kafka.streams.errors.LogAndContinueExceptionHandler",
        )])
        .unwrap();
        assert_eq!(
            c.get_deserialization_handler(),
            DeserializationHandler::LogAndContinue
        );
        let e = err(&[(key, "com.acme.DlqHandler")]);
        assert!(e.contains("com.acme.DlqHandler"), "{e}");
    }
}

#[test]
fn client_keys_reach_the_client() {
    let c = with(&[
        ("security.protocol", "SSL"),
        ("client.id", "me"),
        ("request.timeout.ms", "1234"),
    ])
    .unwrap();
    assert_eq!(c.client().get_security_protocol(), SecurityProtocol::Ssl);
    assert!(c.client().get_tls().is_some());
    assert_eq!(c.client().bootstrap(), "h:1");
    let plain = with(&[]).unwrap();
    assert_eq!(
        plain.client().get_security_protocol(),
        SecurityProtocol::Plaintext
    );
    // The client's own checks apply: ssl.* keys need a TLS protocol.
    let e = err(&[("ssl.ca.location", "/ca.pem")]);
    assert!(e.contains("ssl.ca.location"), "{e}");
    // Java-client spellings get the key to use instead.
    let e = err(&[("ssl.truststore.location", "/t.jks")]);
    assert!(e.contains("ssl.ca.location"), "{e}");
}

#[test]
fn reconnect_backoff_keys_reach_the_client() {
    // A Java application's reconnect settings apply here too (they are client keys, not
    // JVM-only tuning): every connection of the member backs off this way.
    let c = with(&[
        ("reconnect.backoff.ms", "20"),
        ("reconnect.backoff.max.ms", "400"),
    ])
    .unwrap();
    assert_eq!(
        c.client().get_reconnect_backoff(),
        (Duration::from_millis(20), Duration::from_millis(400))
    );
}

#[test]
fn common_java_only_keys_are_ignored() {
    let c = with(&[
        (
            "default.key.serde",
            "org.apache.kafka.common.serialization.Serdes$StringSerde",
        ),
        (
            "default.value.serde",
            "org.apache.kafka.common.serialization.Serdes$LongSerde",
        ),
        ("rocksdb.config.setter", "com.acme.Rocks"),
    ])
    .unwrap();
    assert_eq!(c.get_commit_interval(), DEFAULT_COMMIT_INTERVAL);
}

/// `state.dir` is where the process id is kept; unset, none is kept.
#[test]
fn state_dir_is_applied() {
    let c = with(&[("state.dir", "/tmp/kafka-streams")]).unwrap();
    assert_eq!(
        c.get_state_dir(),
        Some(std::path::Path::new("/tmp/kafka-streams"))
    );
    assert_eq!(with(&[]).unwrap().get_state_dir(), None);
    assert_eq!(with(&[("state.dir", " ")]).unwrap().get_state_dir(), None);
}

#[test]
fn unknown_keys_are_refused_with_the_closest_key() {
    for (key, closest) in [
        ("commit.interval.msec", "commit.interval.ms"),
        ("poll.msec", "poll.ms"),
        ("bootstrap.server", "bootstrap.servers"),
        ("security_protocol", "security.protocol"),
        ("default.key.serdes", "default.key.serde"),
    ] {
        let e = err(&[(key, "1")]);
        assert!(e.contains(&format!("{key:?}")), "{e}");
        assert!(e.contains(&format!("did you mean {closest:?}")), "{e}");
    }
    for key in ["xyz", "auto.offset.reset", "num.stream.thread"] {
        let e = err(&[(key, "1")]);
        assert!(e.contains(&format!("unknown key {key:?}")), "{e}");
    }
}

fn topology() -> StreamsTopology {
    use crate::streams::{Subtopology, TopicInfo};
    StreamsTopology::new()
        .subtopology(Subtopology::new("0").source_topic("in"))
        .subtopology(
            Subtopology::new("1")
                .repartition_source_topic(TopicInfo::new("a-r-repartition"))
                .state_changelog_topic(TopicInfo::new("a-s-changelog"))
                .state_changelog_topic(TopicInfo {
                    replication_factor: 2,
                    ..TopicInfo::new("a-t-changelog")
                }),
        )
}

/// The properties file of a Java instance of the application (issue 21 item 8): every
/// key is accepted, the membership keys reach the join, `replication.factor` the
/// internal topics the member declares.
#[test]
fn a_java_instances_properties_serve_the_rust_instance() {
    let c = with(&[
        ("application.server", "orders-1.internal:8080"),
        ("group.instance.id", "orders-1"),
        ("client.rack", "eu-west-1a"),
        ("client.tag.zone", "a"),
        ("client.tag.cluster", "k1"),
        ("max.poll.interval.ms", "60000"),
        ("replication.factor", "3"),
        ("num.stream.threads", "1"),
        ("processing.guarantee", "at_least_once"),
        ("state.dir", "/var/lib/kafka-streams"),
        ("commit.interval.ms", "100"),
        ("max.task.idle.ms", "0"),
        ("buffered.records.per.partition", "1000"),
        ("statestore.cache.max.bytes", "10485760"),
        ("cache.max.bytes.buffering", "0"),
        ("topology.optimization", "all"),
        ("num.standby.replicas", "1"),
        (
            "default.timestamp.extractor",
            "org.apache.kafka.streams.processor.FailOnInvalidTimestamp",
        ),
        (
            "default.deserialization.exception.handler",
            "org.apache.kafka.streams.errors.LogAndContinueExceptionHandler",
        ),
        ("metrics.recording.level", "DEBUG"),
        ("rocksdb.config.setter", "com.acme.Rocks"),
        ("producer.linger.ms", "5"),
        ("main.consumer.max.poll.records", "500"),
        ("topic.min.insync.replicas", "2"),
    ])
    .unwrap();
    assert_eq!(c.get_commit_interval(), Duration::from_millis(100));
    assert_eq!(
        c.get_deserialization_handler(),
        DeserializationHandler::LogAndContinue
    );
    let group = c.group_config(&topology());
    assert_eq!(group.group_id(), "a");
    assert_eq!(group.get_client_config().bootstrap(), "h:1");
    let m = group.build_config().unwrap();
    let e = m.user_endpoint.unwrap();
    assert_eq!((e.host.as_str(), e.port), ("orders-1.internal", 8080));
    assert_eq!(m.instance_id.as_deref(), Some("orders-1"));
    assert_eq!(m.rack_id.as_deref(), Some("eu-west-1a"));
    let mut tags = m.client_tags.clone();
    tags.sort();
    let want = [("cluster", "k1"), ("zone", "a")].map(|(k, v)| (k.to_owned(), v.to_owned()));
    assert_eq!(tags, want);
    assert_eq!(m.rebalance_timeout_ms, 60_000);
    let one = m.topology.subtopology_by_id("1").unwrap();
    let rf = |t: &[crate::streams::TopicInfo]| -> Vec<i16> {
        t.iter().map(|t| t.replication_factor).collect()
    };
    assert_eq!(rf(&one.repartition_source_topics), [3]);
    // An internal topic the app gave its own replication factor keeps it.
    assert_eq!(rf(&one.state_changelog_topics), [3, 2]);
    // Without the keys: a dynamic member without endpoint, rack or tags, broker's rf.
    let m = with(&[])
        .unwrap()
        .group_config(&topology())
        .build_config()
        .unwrap();
    assert!(m.user_endpoint.is_none() && m.instance_id.is_none() && m.rack_id.is_none());
    assert!(m.client_tags.is_empty());
    let one = m.topology.subtopology_by_id("1").unwrap();
    assert_eq!(rf(&one.repartition_source_topics), [-1]);
}

#[test]
fn contradictory_values_are_refused_with_the_reason() {
    for (key, value, says) in [
        (
            "processing.guarantee",
            "exactly_once",
            "use exactly_once_v2",
        ),
        ("num.stream.threads", "0", "at least 1"),
        ("max.task.idle.ms", "500", "not supported yet"),
        (
            "replication.factor",
            "0",
            "-1 (the broker's default) or 1..=32767",
        ),
        ("topology.optimization", "everything", "unknown value"),
        (
            "default.timestamp.extractor",
            "com.acme.WallClock",
            "cannot run here",
        ),
        (
            "processing.exception.handler",
            "org.apache.kafka.streams.errors.LogAndContinueProcessingExceptionHandler",
            "cannot run here",
        ),
        ("application.server", "no-port", "expected host:port"),
        ("group.instance.id", "", "group.instance.id is empty"),
        ("buffered.records.per.partition", "0", "at least 1"),
    ] {
        let e = err(&[(key, value)]);
        assert!(e.contains(key) && e.contains(says), "{key}={value}: {e}");
    }
}

/// Every membership setting is reachable in code too (issue 21 item 9).
#[test]
fn the_builder_reaches_every_membership_setting() {
    let c = ProcessingConfig::new("h:1", "a")
        .user_endpoint("10.0.0.7", 7070)
        .instance_id("a-7")
        .rack_id("r1")
        .client_tags([("zone", "z1")])
        .rebalance_timeout_ms(45_000)
        .replication_factor(2)
        .with_group_config(|g| g.process_id("proc-7"))
        .with_group_config(|g| g.join_timeout(Duration::from_secs(3)));
    let g = c.group_config(&topology());
    assert_eq!(g.get_process_id(), "proc-7");
    assert_eq!(g.get_join_timeout(), Duration::from_secs(3));
    let m = g.build_config().unwrap();
    assert_eq!(m.user_endpoint.unwrap().port, 7070);
    assert_eq!(m.instance_id.as_deref(), Some("a-7"));
    assert_eq!(m.rack_id.as_deref(), Some("r1"));
    assert_eq!(m.client_tags, [("zone".to_owned(), "z1".to_owned())]);
    assert_eq!(m.rebalance_timeout_ms, 45_000);
    let changelogs = &m
        .topology
        .subtopology_by_id("1")
        .unwrap()
        .state_changelog_topics;
    assert_eq!(changelogs[0].replication_factor, 2);
    assert!(format!("{c:?}").contains("group_hooks: 2"));
}

/// The README's Processing table names every key `from_properties` knows.
#[test]
fn the_readme_table_has_every_key() {
    let readme = include_str!("../../../README.md");
    let start = readme.find("| key | here |").expect("the table");
    let table = &readme[start..];
    let table = &table[..table.find("\n\n").unwrap_or(table.len())];
    for key in super::super::config_keys::all_keys() {
        assert!(table.contains(&format!("`{key}`")), "README lacks {key}");
    }
}

#[test]
fn durations_are_bounded() {
    for (key, value, range) in [
        ("poll.ms", "0", "1..=300000 ms"),
        ("poll.ms", "300001", "1..=300000 ms"),
        ("poll.ms", "99999999999999", "1..=300000 ms"),
        ("commit.interval.ms", "0", "1..=86400000 ms"),
        ("commit.interval.ms", "86400001", "1..=86400000 ms"),
        ("repartition.purge.interval.ms", "0", "1..=86400000 ms"),
    ] {
        let e = err(&[(key, value)]);
        assert!(
            e.contains(key) && e.contains(&format!("{value} ms")) && e.contains(range),
            "{key}={value}: {e}"
        );
    }
    let e = err(&[("poll.ms", "-1")]);
    assert!(e.contains("poll.ms"), "{e}");
    let c = with(&[
        ("poll.ms", "300000"),
        ("commit.interval.ms", "1"),
        ("repartition.purge.interval.ms", "86400000"),
    ])
    .unwrap();
    assert_eq!(c.get_poll_wait(), POLL_WAIT_RANGE.1);
    // Builder values are checked by validate().
    let built = ProcessingConfig::new("h:1", "a");
    assert!(built.validate().is_ok());
    for bad in [
        built.clone().poll_wait(Duration::ZERO),
        built.clone().poll_wait(Duration::from_secs(3601)),
        built.clone().commit_interval(Duration::ZERO),
        built.clone().purge_interval(Duration::from_secs(86_401)),
        built.clone().replication_factor(0),
        built.clone().replication_factor(-2),
    ] {
        assert!(bad.validate().is_err(), "{bad:?}");
    }
}
