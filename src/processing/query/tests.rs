//! The metadata functions against the answers Java's `StreamsMetadataState` gives for the
//! same endpoint information (as `StreamThread.handleStreamsRebalanceData` hands it over).

use std::collections::{BTreeMap, BTreeSet};

use super::*;
use crate::protocol::records::partition_for_key;
use crate::streams::{EndpointPartitions, StreamsTopology, Subtopology, TopicInfo, UserEndpoint};

fn host(h: &str, p: u16) -> UserEndpoint {
    UserEndpoint::new(h, p)
}

fn parts(list: &[(&str, &[i32])]) -> BTreeMap<String, BTreeSet<i32>> {
    list.iter()
        .map(|(t, ps)| (t.to_string(), ps.iter().copied().collect()))
        .collect()
}

fn ep(active: &[(&str, &[i32])], standby: &[(&str, &[i32])]) -> EndpointPartitions {
    EndpointPartitions {
        active: parts(active),
        standby: parts(standby),
    }
}

/// WordCount's shape: `0` reads `in`, `1` reads `app-rep` and owns `counts`; plus `2`
/// joining `orders` (2 partitions listed) and `customers` (3) with store `joined`.
fn topics() -> StoreTopics {
    let topology = StreamsTopology::new()
        .subtopology(Subtopology::new("0").source_topic("in"))
        .subtopology(Subtopology::new("1").repartition_source_topic(TopicInfo::new("app-rep")))
        .subtopology(
            Subtopology::new("2")
                .source_topic("orders")
                .source_topic("customers"),
        );
    StoreTopics::new(
        &topology,
        [("1", "counts"), ("2", "joined"), ("9", "nowhere")],
    )
}

/// Two hosts: `b:1` actives 0 and 2 of `in` and `app-rep`, standby of 1; `a:2` the rest.
fn two_hosts() -> EndpointMap {
    BTreeMap::from([
        (
            host("b", 1),
            ep(
                &[("in", &[0, 2]), ("app-rep", &[0, 2])],
                &[("app-rep", &[1, 3])],
            ),
        ),
        (
            host("a", 2),
            ep(
                &[("in", &[1, 3]), ("app-rep", &[1, 3])],
                &[("app-rep", &[0, 2])],
            ),
        ),
    ])
}

fn default_partitioner(key: &[u8]) -> impl FnOnce(&str, i32) -> Option<i32> + '_ {
    move |_, n| partition_for_key(key, n)
}

#[test]
fn store_topics_come_from_the_subtopology_of_the_store() {
    let t = topics();
    assert_eq!(
        t.source_topics("counts"),
        Some(&["app-rep".to_string()][..])
    );
    assert_eq!(
        t.source_topics("joined"),
        Some(&["orders".to_string(), "customers".to_string()][..])
    );
    assert_eq!(t.source_topics("nowhere"), None, "unknown subtopology");
    assert!(t.is_source_topic("app-rep") && t.is_source_topic("in"));
    assert!(!t.is_source_topic("out"));
    let narrowed = t.with_store("joined", ["orders"]);
    assert_eq!(
        narrowed.source_topics("joined"),
        Some(&["orders".to_string()][..])
    );
}

#[test]
fn not_available_until_an_endpoint_lists_an_active_partition() {
    let t = topics();
    let mut endpoints = EndpointMap::new();
    let q = |e: &EndpointMap| {
        key_query_metadata(
            e,
            &t,
            KeyQueryTarget::Store("counts"),
            default_partitioner(b"k"),
        )
    };
    assert_eq!(q(&endpoints), Ok(KeyQueryMetadata::NOT_AVAILABLE));
    assert!(metadata_for_all_streams_clients(&endpoints, &t).is_empty());
    // Members known, no tasks yet (and standbys alone do not count).
    endpoints.insert(host("a", 1), ep(&[], &[("app-rep", &[0])]));
    endpoints.insert(host("b", 1), ep(&[("in", &[])], &[]));
    assert!(!is_initialized(&endpoints));
    assert_eq!(q(&endpoints), Ok(KeyQueryMetadata::NOT_AVAILABLE));
    assert!(!KeyQueryMetadata::NOT_AVAILABLE.is_available());
    assert_eq!(
        streams_metadata_for_store(&endpoints, &t, "counts"),
        Ok(vec![])
    );
    // Java lists every endpoint even then.
    let all = metadata_for_all_streams_clients(&endpoints, &t);
    assert_eq!(all.len(), 2);
    assert_eq!(
        all[0].standby_state_store_names,
        BTreeSet::from(["counts".to_string()])
    );
}

#[test]
fn the_active_and_standby_hosts_of_a_keys_partition() {
    let t = topics();
    let e = two_hosts();
    let mut seen = BTreeSet::new();
    for i in 0..200 {
        let key = format!("key-{i}");
        let p = partition_for_key(key.as_bytes(), 4).unwrap();
        seen.insert(p);
        let m = key_query_metadata(
            &e,
            &t,
            KeyQueryTarget::Store("counts"),
            default_partitioner(key.as_bytes()),
        )
        .unwrap();
        assert_eq!(m.partition, Some(p), "{key}");
        let (active, standby) = if p % 2 == 0 {
            (host("b", 1), host("a", 2))
        } else {
            (host("a", 2), host("b", 1))
        };
        assert_eq!(m.active_host, Some(active), "{key}");
        assert_eq!(m.standby_hosts, BTreeSet::from([standby]), "{key}");
        // By source topic: the same partition, the active host only (no standby of `in`).
        let by_topic = key_query_metadata(
            &e,
            &t,
            KeyQueryTarget::SourceTopic("in"),
            default_partitioner(key.as_bytes()),
        )
        .unwrap();
        assert_eq!(by_topic.partition, m.partition);
        assert_eq!(by_topic.active_host, m.active_host);
        assert!(by_topic.standby_hosts.is_empty());
    }
    assert_eq!(seen.len(), 4, "every partition was asked about");
}

/// Java counts the distinct active partitions listed, not the topic's partitions: with
/// partition 3's active task on a member without `application.server`, a key is placed
/// among 3 partitions.
#[test]
fn the_partition_count_is_the_number_of_active_partitions_listed() {
    let t = topics();
    let e = EndpointMap::from([
        (host("a", 1), ep(&[("app-rep", &[0, 2])], &[])),
        (host("b", 1), ep(&[("app-rep", &[1])], &[("app-rep", &[3])])),
    ]);
    let mut asked = Vec::new();
    let m = key_query_metadata(&e, &t, KeyQueryTarget::Store("counts"), |topic, n| {
        asked.push((topic.to_string(), n));
        partition_for_key(b"hello", n)
    })
    .unwrap();
    assert_eq!(asked, [("app-rep".to_string(), 3)]);
    assert_eq!(m.partition, partition_for_key(b"hello", 3));
    assert_ne!(
        partition_for_key(b"hello", 3),
        partition_for_key(b"hello", 4)
    );
}

#[test]
fn a_user_partitioner_gets_the_topic_with_most_partitions() {
    let t = topics();
    let e = EndpointMap::from([
        (
            host("x", 9),
            ep(&[("orders", &[0, 1]), ("customers", &[0, 1, 2])], &[]),
        ),
        (
            host("y", 9),
            ep(&[("customers", &[2])], &[("orders", &[1])]),
        ),
    ]);
    let mut asked = None;
    let m = key_query_metadata(&e, &t, KeyQueryTarget::Store("joined"), |topic, n| {
        asked = Some((topic.to_string(), n));
        Some(2)
    })
    .unwrap();
    assert_eq!(asked, Some(("customers".to_string(), 3)));
    // Both hosts list customers-2 as active (a transition): the last in host order wins.
    assert_eq!(m.active_host, Some(host("y", 9)));
    assert!(m.standby_hosts.is_empty());
    let m = key_query_metadata(&e, &t, KeyQueryTarget::Store("joined"), |_, _| Some(1)).unwrap();
    assert_eq!(m.active_host, Some(host("x", 9)));
    assert_eq!(m.standby_hosts, BTreeSet::from([host("y", 9)]));
    // A partition nobody holds: known partition, unknown host (Java's unavailable host).
    let m = key_query_metadata(&e, &t, KeyQueryTarget::Store("joined"), |_, _| Some(7)).unwrap();
    assert_eq!((&m.active_host, m.partition), (&None, Some(7)));
    assert!(m.is_available());
    // No partition at all is an error, naming the topic.
    let err = key_query_metadata(&e, &t, KeyQueryTarget::Store("joined"), |_, _| None).unwrap_err();
    assert_eq!(
        err,
        QueryError::NoPartition {
            topic: "customers".into(),
            partitions: 3
        }
    );
}

#[test]
fn a_store_whose_topics_have_no_active_partition_is_not_available() {
    let t = topics();
    let e = EndpointMap::from([(host("a", 1), ep(&[("in", &[0])], &[]))]);
    let m = key_query_metadata(&e, &t, KeyQueryTarget::Store("counts"), |_, _| {
        panic!("no partitioner call without partitions")
    });
    assert_eq!(m, Ok(KeyQueryMetadata::NOT_AVAILABLE));
}

#[test]
fn unknown_stores_and_topics_are_errors_naming_what_exists() {
    let t = topics();
    let e = two_hosts();
    let err = key_query_metadata(&e, &t, KeyQueryTarget::Store("cnt"), |_, _| Some(0)).unwrap_err();
    assert_eq!(
        err,
        QueryError::UnknownStore {
            store: "cnt".into(),
            known: vec!["counts".into(), "joined".into()]
        }
    );
    assert!(err.to_string().contains("\"counts\""), "{err}");
    assert!(matches!(
        streams_metadata_for_store(&EndpointMap::new(), &t, "cnt"),
        Err(QueryError::UnknownStore { .. })
    ));
    let err =
        key_query_metadata(&e, &t, KeyQueryTarget::SourceTopic("out"), |_, _| Some(0)).unwrap_err();
    assert!(matches!(err, QueryError::UnknownTopic { ref topic, .. } if topic == "out"));
}

#[test]
fn clients_metadata_sorted_by_host_then_port_with_their_stores() {
    let t = topics();
    let mut e = two_hosts();
    e.insert(host("a", 10), ep(&[("orders", &[0])], &[]));
    e.insert(host("c", 0), ep(&[], &[]));
    let all = metadata_for_all_streams_clients(&e, &t);
    let hosts: Vec<String> = all.iter().map(|m| m.host.to_string()).collect();
    assert_eq!(hosts, ["a:2", "a:10", "b:1", "c:0"]);
    let a2 = &all[0];
    assert_eq!(
        a2.topic_partitions,
        BTreeSet::from([
            TopicPartition::new("app-rep", 1),
            TopicPartition::new("app-rep", 3),
            TopicPartition::new("in", 1),
            TopicPartition::new("in", 3),
        ])
    );
    assert_eq!(a2.state_store_names, BTreeSet::from(["counts".to_string()]));
    assert_eq!(
        a2.standby_topic_partitions,
        BTreeSet::from([
            TopicPartition::new("app-rep", 0),
            TopicPartition::new("app-rep", 2)
        ])
    );
    assert_eq!(
        a2.standby_state_store_names,
        BTreeSet::from(["counts".to_string()])
    );
    assert_eq!(
        all[1].state_store_names,
        BTreeSet::from(["joined".to_string()])
    );
    assert!(all[3].state_store_names.is_empty() && all[3].topic_partitions.is_empty());
    // For a store: only the clients holding it, active or standby.
    let holders: Vec<String> = streams_metadata_for_store(&e, &t, "counts")
        .unwrap()
        .iter()
        .map(|m| m.host.to_string())
        .collect();
    assert_eq!(holders, ["a:2", "b:1"]);
    let holders = streams_metadata_for_store(&e, &t, "joined").unwrap();
    assert_eq!(holders.len(), 1);
    assert_eq!(holders[0].host, host("a", 10));
}

#[test]
fn a_closure_is_a_stream_partitioner() {
    let p = |_: &str, key: &str, n: i32| Some(key.len() as i32 % n);
    assert_eq!(
        StreamPartitioner::<str>::partition(&p, "t", "abcde", 4),
        Some(1)
    );
}

/// The handle reads the newest published snapshot and refuses once the session ended.
#[test]
fn the_handle_follows_the_published_snapshot_until_the_session_ends() {
    use crate::processing::StringSerde;
    use crate::session::shared::Shared;
    use crate::session::StreamsGroupState;
    use crate::streams::StreamsGroupSessionAssignment;
    use std::sync::Arc;

    let topology =
        StreamsTopology::new().subtopology(Subtopology::new("0").source_topic("app-rep"));
    let stores = BTreeMap::from([("0".to_string(), vec![("counts".to_string(), ())])]);
    let shared = Shared::new("m".into());
    let handle = StreamsMetadataHandle::new(shared.clone(), &topology, &stores);
    let other_thread = handle.clone();
    let q = move || other_thread.query_metadata_for_key("counts", "hello", &StringSerde);
    assert_eq!(q(), Ok(KeyQueryMetadata::NOT_AVAILABLE));
    let mut a = StreamsGroupSessionAssignment::new();
    a.partitions_by_user_endpoint = two_hosts();
    shared.publish_assignment(Arc::new(a));
    let p = partition_for_key(b"hello", 4).unwrap();
    let m = std::thread::spawn(q).join().unwrap().unwrap();
    assert_eq!(m.partition, Some(p));
    let owner = if p % 2 == 0 {
        host("b", 1)
    } else {
        host("a", 2)
    };
    assert_eq!(m.active_host, Some(owner));
    assert_eq!(handle.metadata_for_all_streams_clients().unwrap().len(), 2);
    assert_eq!(
        handle.streams_metadata_for_store("counts").unwrap().len(),
        2
    );
    let partitioner = |_: &str, _: &str, _: i32| Some(3);
    let m = handle
        .query_metadata_for_key_with_partitioner("counts", "hello", &partitioner)
        .unwrap();
    assert_eq!(m.active_host, Some(host("a", 2)));
    shared.publish_state(StreamsGroupState::Closed, 0);
    assert!(matches!(
        handle.query_metadata_for_key("counts", "hello", &StringSerde),
        Err(QueryError::NotRunning { .. })
    ));
    assert!(handle.metadata_for_all_streams_clients().is_err());
}
