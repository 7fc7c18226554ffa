//! Unit tests of the topology model and its canonical (Java) order.

use super::*;

fn sample() -> StreamsTopology {
    StreamsTopology::new()
        .subtopology(
            Subtopology::new("1")
                .repartition_source_topic(
                    TopicInfo::new("app-rep-b")
                        .config("retention.ms", "-1")
                        .config("cleanup.policy", "delete"),
                )
                .repartition_source_topic(TopicInfo::new("app-rep-a").partitions(4))
                .state_changelog_topic(
                    TopicInfo::new("app-store-changelog")
                        .config("b", "2")
                        .config("a", "1"),
                )
                .copartition_topics(["app-rep-b", "app-rep-a"])
                .unwrap(),
        )
        .subtopology(
            Subtopology::new("0")
                .source_topic("orders")
                .source_topic("customers")
                .repartition_sink_topic("app-rep-b")
                .repartition_sink_topic("app-rep-a")
                .copartition_topics(["orders", "customers"])
                .unwrap(),
        )
}

#[test]
fn canonical_sorts_everything_and_remaps_copartition_indexes() {
    let c = sample().canonical().unwrap();
    assert_eq!(c.subtopology_ids(), vec!["0", "1"]);
    let s0 = &c.subtopologies[0];
    assert_eq!(s0.id, "0");
    assert_eq!(s0.source_topics, vec!["customers", "orders"]);
    assert_eq!(s0.repartition_sink_topics, vec!["app-rep-a", "app-rep-b"]);
    // Sorted: customers 0, orders 1. Java's HashSet iterates orders first (issue 13).
    assert_eq!(
        s0.copartition_groups,
        vec![CopartitionGroup::new(vec![1, 0], vec![])]
    );
    let s1 = &c.subtopologies[1];
    let names: Vec<&str> = s1
        .repartition_source_topics
        .iter()
        .map(|t| t.name.as_str())
        .collect();
    assert_eq!(names, vec!["app-rep-a", "app-rep-b"]);
    assert_eq!(s1.repartition_source_topics[0].partitions, 4);
    assert_eq!(
        s1.repartition_source_topics[1].topic_configs,
        vec![
            ("cleanup.policy".to_string(), "delete".to_string()),
            ("retention.ms".to_string(), "-1".to_string())
        ]
    );
    assert_eq!(
        s1.state_changelog_topics[0].topic_configs,
        vec![
            ("a".to_string(), "1".to_string()),
            ("b".to_string(), "2".to_string())
        ]
    );
    // Java 17: new HashSet<>(List.of("app-rep-b", "app-rep-a")) prints
    // [app-rep-b, app-rep-a]; sorted, app-rep-b is 1.
    assert_eq!(
        s1.copartition_groups,
        vec![CopartitionGroup::new(vec![], vec![1, 0])]
    );
    assert!(c.is_canonical());
    assert!(!sample().is_canonical());
    assert_eq!(c.canonical().unwrap(), c);
}

#[test]
fn copartition_indexes_follow_names_not_positions() {
    let t = StreamsTopology::new().subtopology(
        Subtopology::new("0")
            .source_topic("c")
            .source_topic("a")
            .source_topic("b")
            .copartition_group(CopartitionGroup::new(vec![0, 2], vec![])),
    );
    let c = t.canonical().unwrap();
    // Group {c, b}: sorted c -> 2, b -> 1; Java's HashSet iterates b (hash 98) before c (99).
    assert_eq!(
        c.subtopologies[0].copartition_groups[0].source_topics,
        vec![1, 2]
    );
}

#[test]
fn copartition_groups_in_java_order_across_subtopologies() {
    // Two groups in subtopology "0", one in "1"; a duplicate and an empty group vanish,
    // and a group overlapping an earlier one is merged into it, as Java does.
    let t = StreamsTopology::new()
        .subtopology(
            Subtopology::new("1")
                .source_topic("x1")
                .source_topic("x2")
                .copartition_topics(["x2", "x1"])
                .unwrap(),
        )
        .subtopology(
            Subtopology::new("0")
                .source_topic("orders")
                .source_topic("customers")
                .source_topic("payments")
                .source_topic("zz")
                .source_topic("aa")
                .copartition_topics(["orders", "customers"])
                .unwrap()
                .copartition_topics(["zz", "aa"])
                .unwrap()
                .copartition_topics(["customers", "orders"])
                .unwrap()
                .copartition_topics(["payments", "orders"])
                .unwrap()
                .copartition_group(CopartitionGroup::default()),
        );
    let c = t.canonical().unwrap();
    let s0 = &c.subtopologies[0];
    assert_eq!(
        s0.source_topics,
        ["aa", "customers", "orders", "payments", "zz"]
    );
    let named: Vec<Vec<&str>> = s0
        .copartition_groups
        .iter()
        .map(|g| {
            g.source_topics
                .iter()
                .map(|&i| s0.source_topics[i as usize].as_str())
                .collect()
        })
        .collect();
    // Java 17: new HashSet<>(List.of(new HashSet<>(List.of("orders", "customers",
    // "payments")), new HashSet<>(List.of("zz", "aa")))) prints
    // [[payments, orders, customers], [zz, aa]].
    assert_eq!(
        named,
        vec![vec!["payments", "orders", "customers"], vec!["zz", "aa"]]
    );
    assert_eq!(
        c.subtopologies[1].copartition_groups,
        vec![CopartitionGroup::new(vec![0, 1], vec![])]
    );
    assert!(c.is_canonical());
}

#[test]
fn a_group_spanning_subtopologies_is_refused() {
    // Java cannot build this either: "x" belongs to both subtopologies' groups, so the
    // merged group {x, y, z} is read by neither.
    let t = StreamsTopology::new()
        .subtopology(
            Subtopology::new("0")
                .source_topic("x")
                .source_topic("y")
                .copartition_topics(["x", "y"])
                .unwrap(),
        )
        .subtopology(
            Subtopology::new("1")
                .source_topic("x")
                .source_topic("z")
                .copartition_topics(["x", "z"])
                .unwrap(),
        );
    assert!(matches!(
        t.canonical(),
        Err(TopologyError::CopartitionGroupAcrossSubtopologies { .. })
    ));
}

#[test]
fn defaults_of_topic_info() {
    let t = TopicInfo::new("x");
    assert_eq!((t.partitions, t.replication_factor), (0, -1));
    assert_eq!(
        TopicInfo::new("x").replication_factor(3).replication_factor,
        3
    );
}

#[test]
fn validation_errors() {
    assert_eq!(
        StreamsTopology::new().validate(),
        Err(TopologyError::NoSubtopologies)
    );
    let one = |s: Subtopology| StreamsTopology::new().subtopology(s);
    assert_eq!(
        one(Subtopology::new("").source_topic("a")).validate(),
        Err(TopologyError::EmptySubtopologyId)
    );
    assert_eq!(
        one(Subtopology::new("0")).validate(),
        Err(TopologyError::NoSourceTopics("0".into()))
    );
    assert!(matches!(
        one(Subtopology::new("0").source_topic("")).validate(),
        Err(TopologyError::EmptyTopicName {
            list: "source_topics",
            ..
        })
    ));
    assert!(matches!(
        one(Subtopology::new("0")
            .source_topic("a")
            .repartition_sink_topic(""))
        .validate(),
        Err(TopologyError::EmptyTopicName {
            list: "repartition_sink_topics",
            ..
        })
    ));
    assert!(matches!(
        one(Subtopology::new("0").source_topic("a").source_topic("a")).validate(),
        Err(TopologyError::DuplicateTopic { .. })
    ));
    assert!(matches!(
        one(Subtopology::new("0")
            .source_topic("a")
            .state_changelog_topic(TopicInfo::new("c").config("k", "1").config("k", "2")))
        .validate(),
        Err(TopologyError::DuplicateTopicConfig { .. })
    ));
    assert_eq!(
        one(Subtopology::new("0")
            .source_topic("a")
            .state_changelog_topic(TopicInfo::new("c").partitions(3)))
        .validate(),
        Err(TopologyError::ChangelogPartitionsNotZero {
            subtopology: "0".into(),
            topic: "c".into(),
            partitions: 3
        })
    );
    assert!(matches!(
        one(Subtopology::new("0").repartition_source_topic(TopicInfo::new("r").partitions(-2)))
            .validate(),
        Err(TopologyError::NegativePartitions { .. })
    ));
    for bad in [
        CopartitionGroup::new(vec![1], vec![]),
        CopartitionGroup::new(vec![-1], vec![]),
        CopartitionGroup::new(vec![], vec![0]),
    ] {
        let r = one(Subtopology::new("0")
            .source_topic("a")
            .copartition_group(bad))
        .validate();
        assert!(
            matches!(r, Err(TopologyError::CopartitionIndexOutOfRange { .. })),
            "{r:?}"
        );
        let r = one(Subtopology::new("0")
            .source_topic("a")
            .copartition_group(CopartitionGroup::new(vec![5], vec![])))
        .canonical();
        assert!(r.is_err());
    }
    let dup = StreamsTopology::new()
        .subtopology(Subtopology::new("0").source_topic("a"))
        .subtopology(Subtopology::new("0").source_topic("b"));
    assert_eq!(
        dup.validate(),
        Err(TopologyError::DuplicateSubtopologyId("0".into()))
    );
    assert!(matches!(
        Subtopology::new("0")
            .source_topic("a")
            .copartition_topics(["zzz"]),
        Err(TopologyError::UnknownCopartitionTopic { .. })
    ));
    assert!(sample().validate().is_ok());
}
