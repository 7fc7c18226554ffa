//! A heartbeat topology as JSON, as Kafka's `StreamsGroupHeartbeatRequestDataJsonConverter`
//! writes it, and the first difference between two JSON values: shared by the tests that
//! compare this crate's topologies with Kafka Streams' own (`java_topology_order`,
//! `topology_parity`).

use std::collections::BTreeSet;

use kafka_streams_group::StreamsTopology;
use serde_json::{json, Value};

/// `topology` as `StreamsGroupHeartbeatRequestDataJsonConverter` writes it.
pub fn to_json(topology: &StreamsTopology) -> Value {
    let info = |t: &kafka_streams_group::TopicInfo| {
        json!({
            "name": t.name, "partitions": t.partitions, "replicationFactor": t.replication_factor,
            "topicConfigs": t.topic_configs.iter().map(|(k, v)| json!({"key": k, "value": v})).collect::<Vec<_>>(),
        })
    };
    json!({
        "epoch": 0,
        "subtopologies": topology.subtopologies.iter().map(|s| json!({
            "subtopologyId": s.id,
            "sourceTopics": s.source_topics,
            "sourceTopicRegex": [],
            "stateChangelogTopics": s.state_changelog_topics.iter().map(info).collect::<Vec<_>>(),
            "repartitionSinkTopics": s.repartition_sink_topics,
            "repartitionSourceTopics": s.repartition_source_topics.iter().map(info).collect::<Vec<_>>(),
            "copartitionGroups": s.copartition_groups.iter().map(|g| json!({
                "sourceTopics": g.source_topics,
                "sourceTopicRegex": [],
                "repartitionSourceTopics": g.repartition_source_topics,
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

/// The first path where two JSON values differ.
pub fn first_difference(a: &Value, b: &Value, path: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter().find_map(|k| {
                first_difference(
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                    &format!("{path}.{k}"),
                )
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| first_difference(p, q, &format!("{path}[{i}]"))),
        _ if a == b => None,
        _ => Some(format!("{path}: rust {a} / java {b}")),
    }
}
