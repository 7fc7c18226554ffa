//! Unit tests of the builder: grouping, Java's describe() text, the heartbeat topology.

use super::*;
use crate::topology::{StreamsTopology, Subtopology, TopicInfo};

/// source -> proc (store "counts") -> repartition sink; repartition source -> proc2 -> out.
fn two_subtopologies() -> TopologyBuilder {
    let mut b = TopologyBuilder::new();
    b.add_source("src", ["in"]).unwrap();
    b.add_processor("proc", &["src"]).unwrap();
    b.add_internal_topic("rep", None);
    b.add_sink("to-rep", SinkTarget::Topic("rep".into()), &["proc"])
        .unwrap();
    b.add_source("from-rep", ["rep"]).unwrap();
    b.add_processor("proc2", &["from-rep"]).unwrap();
    b.add_state_store(StoreSpec::new("counts"), &["proc2"])
        .unwrap();
    b.add_sink("out", SinkTarget::Topic("out".into()), &["proc2"])
        .unwrap();
    b
}

#[test]
fn subtopologies_are_numbered_in_the_order_their_first_node_was_added() {
    let mut b = TopologyBuilder::new();
    b.add_source("z-late-name", ["a"]).unwrap();
    b.add_source("a-early-name", ["b"]).unwrap();
    b.add_processor("p", &["a-early-name"]).unwrap();
    let d = b.describe();
    assert_eq!(d.subtopologies.len(), 2);
    assert_eq!(d.subtopologies[0].nodes[0].name, "z-late-name");
    assert_eq!(d.subtopologies[1].nodes[0].name, "a-early-name");
}

#[test]
fn a_shared_store_joins_two_branches_into_one_subtopology() {
    let mut b = TopologyBuilder::new();
    b.add_source("s1", ["a"]).unwrap();
    b.add_source("s2", ["b"]).unwrap();
    b.add_processor("p1", &["s1"]).unwrap();
    b.add_processor("p2", &["s2"]).unwrap();
    assert_eq!(b.describe().subtopologies.len(), 2);
    b.add_state_store(StoreSpec::new("st"), &["p1", "p2"])
        .unwrap();
    assert_eq!(b.describe().subtopologies.len(), 1);
}

#[test]
fn describe_prints_java_text() {
    let text = two_subtopologies().describe().to_string();
    let expected = "Topologies:\n   Sub-topology: 0\n    Source: src (topics: [in])\n      --> proc\n    Processor: proc (stores: [])\n      --> to-rep\n      <-- src\n    Sink: to-rep (topic: rep)\n      <-- proc\n\n  Sub-topology: 1\n    Source: from-rep (topics: [rep])\n      --> proc2\n    Processor: proc2 (stores: [counts])\n      --> out\n      <-- from-rep\n    Sink: out (topic: out)\n      <-- proc2\n\n";
    assert_eq!(text, expected);
}

#[test]
fn describe_orders_by_subtree_size_then_name() {
    let mut b = TopologyBuilder::new();
    b.add_source("s", ["t"]).unwrap();
    b.add_processor("b-leaf", &["s"]).unwrap();
    b.add_processor("a-leaf", &["s"]).unwrap();
    b.add_processor("c-chain", &["s"]).unwrap();
    b.add_processor("d", &["c-chain"]).unwrap();
    let d = b.describe();
    let names: Vec<&str> = d.subtopologies[0]
        .nodes
        .iter()
        .map(|n| n.name.as_str())
        .collect();
    assert_eq!(names, ["s", "c-chain", "a-leaf", "b-leaf", "d"]);
}

#[test]
fn heartbeat_topology_decorates_internal_topics_and_names_changelogs() {
    let got = two_subtopologies()
        .streams_topology(&HeartbeatTopologyOptions::new("app"))
        .unwrap();
    let expected = StreamsTopology::new()
        .subtopology(
            Subtopology::new("0")
                .source_topic("in")
                .repartition_sink_topic("app-rep"),
        )
        .subtopology(
            Subtopology::new("1")
                .repartition_source_topic(
                    TopicInfo::new("app-rep")
                        .config("cleanup.policy", "delete")
                        .config("message.timestamp.type", "CreateTime")
                        .config("retention.ms", "-1")
                        .config("segment.bytes", "52428800"),
                )
                .state_changelog_topic(
                    TopicInfo::new("app-counts-changelog")
                        .config("cleanup.policy", "compact")
                        .config("message.timestamp.type", "CreateTime"),
                ),
        )
        .canonical()
        .unwrap();
    assert_eq!(got, expected);
}

#[test]
fn topic_defaults_and_store_configs_override_in_javas_order() {
    let mut b = TopologyBuilder::new();
    b.add_source("s", ["t"]).unwrap();
    b.add_processor("p", &["s"]).unwrap();
    b.add_state_store(
        StoreSpec::new("st").changelog_config("cleanup.policy", "compact,delete"),
        &["p"],
    )
    .unwrap();
    let mut options = HeartbeatTopologyOptions::new("app");
    options.topic_defaults = vec![
        ("cleanup.policy".into(), "delete".into()),
        ("min.insync.replicas".into(), "2".into()),
    ];
    options.replication_factor = 3;
    let t = b.streams_topology(&options).unwrap();
    let changelog = &t.subtopologies[0].state_changelog_topics[0];
    assert_eq!(changelog.replication_factor, 3);
    assert_eq!(
        changelog.topic_configs,
        vec![
            ("cleanup.policy".to_string(), "compact,delete".to_string()),
            (
                "message.timestamp.type".to_string(),
                "CreateTime".to_string()
            ),
            ("min.insync.replicas".to_string(), "2".to_string()),
        ]
    );
}

#[test]
fn unlogged_stores_have_no_changelog() {
    let mut b = TopologyBuilder::new();
    b.add_source("s", ["t"]).unwrap();
    b.add_processor("p", &["s"]).unwrap();
    b.add_state_store(StoreSpec::new("st").logging_disabled(), &["p"])
        .unwrap();
    let t = b
        .streams_topology(&HeartbeatTopologyOptions::new("app"))
        .unwrap();
    assert!(t.subtopologies[0].state_changelog_topics.is_empty());
}

#[test]
fn the_builder_refuses_what_java_refuses() {
    let mut b = TopologyBuilder::new();
    b.add_source("s", ["t"]).unwrap();
    assert_eq!(
        b.add_source("s", ["u"]),
        Err(TopologyBuildError::DuplicateNode("s".into()))
    );
    assert_eq!(
        b.add_source("s2", ["t"]),
        Err(TopologyBuildError::TopicAlreadyRegistered("t".into()))
    );
    assert!(matches!(
        b.add_processor("p", &["nope"]),
        Err(TopologyBuildError::UnknownParent { .. })
    ));
    assert_eq!(
        b.add_processor("p", &[]),
        Err(TopologyBuildError::NoParents("p".into()))
    );
    b.add_sink("k", SinkTarget::Topic("o".into()), &["s"])
        .unwrap();
    assert_eq!(
        b.add_processor("p", &["k"]),
        Err(TopologyBuildError::SinkAsParent("k".into()))
    );
    assert!(matches!(
        b.add_state_store(StoreSpec::new("st"), &["s"]),
        Err(TopologyBuildError::StoreOnSourceOrSink { .. })
    ));
    assert_eq!(
        b.connect_processor_and_state_stores("s", &["missing"]),
        Err(TopologyBuildError::UnknownStore("missing".into()))
    );
    assert_eq!(
        b.add_state_store(StoreSpec::new("st").logging_disabled(), &[]),
        Err(TopologyBuildError::DifferentStore("st".into()))
    );
}

#[test]
fn copartitioned_sources_land_in_their_subtopology() {
    let mut b = TopologyBuilder::new();
    b.add_source("l", ["left"]).unwrap();
    b.add_source("r", ["right"]).unwrap();
    b.add_processor("join", &["l", "r"]).unwrap();
    b.copartition_sources(&["l", "r"]).unwrap();
    let t = b
        .streams_topology(&HeartbeatTopologyOptions::new("app"))
        .unwrap();
    assert_eq!(t.subtopologies[0].copartition_groups.len(), 1);
    assert_eq!(
        t.subtopologies[0].copartition_groups[0].source_topics.len(),
        2
    );
}

#[test]
fn a_store_restored_from_its_source_topic_names_that_topic_as_changelog() {
    let mut b = TopologyBuilder::new();
    b.add_source("src", ["t"]).unwrap();
    b.add_processor("table", &["src"]).unwrap();
    b.add_state_store(StoreSpec::new("t-store").logging_disabled(), &["table"])
        .unwrap();
    b.connect_source_store_and_topic("t-store", "t").unwrap();
    assert_eq!(
        b.connect_source_store_and_topic("t-store", "t"),
        Err(TopologyBuildError::SourceStoreAlreadyAdded(
            "t-store".into()
        ))
    );
    let topology = b
        .streams_topology(&HeartbeatTopologyOptions::new("app"))
        .unwrap();
    let changelogs = &topology.subtopologies[0].state_changelog_topics;
    assert_eq!(changelogs.len(), 1);
    assert_eq!(changelogs[0].name, "t");
    assert_eq!(b.source_changelog("t-store"), Some("t"));
}
