//! Unit tests of the DSL's naming and error handling (Java parity: tests/topology_parity.rs).

use super::stream::Predicate;
use super::*;
use crate::topology::NodeKind;

fn names(program: &DslTopology) -> Vec<String> {
    program
        .topology()
        .nodes()
        .iter()
        .map(|n| n.name.clone())
        .collect()
}

#[test]
fn one_counter_numbers_every_operation_and_given_names_use_up_their_number() {
    let b = StreamsBuilder::new();
    b.stream::<String, String>("in")
        .filter_named(Some("mine"), |_, _| true)
        .map_values(|v: &String| v.len())
        .to("out");
    let program = b.build().unwrap();
    assert_eq!(
        names(&program),
        [
            "KSTREAM-SOURCE-0000000000",
            "mine",
            "KSTREAM-MAPVALUES-0000000002",
            "KSTREAM-SINK-0000000003"
        ]
    );
}

#[test]
fn an_aggregation_after_a_key_change_repartitions_first() {
    let b = StreamsBuilder::new();
    b.stream::<String, String>("in")
        .select_key(|_, v| v.clone())
        .group_by_key()
        .count();
    let program = b.build().unwrap();
    // source 0, key-select 1, store 2, aggregate 3, sink 4, filter 5, source 6.
    assert_eq!(
        names(&program),
        [
            "KSTREAM-SOURCE-0000000000",
            "KSTREAM-KEY-SELECT-0000000001",
            "KSTREAM-FILTER-0000000005",
            "KSTREAM-SINK-0000000004",
            "KSTREAM-SOURCE-0000000006",
            "KSTREAM-AGGREGATE-0000000003"
        ]
    );
    let source = program
        .topology()
        .node("KSTREAM-SOURCE-0000000006")
        .unwrap();
    assert_eq!(
        source.kind,
        NodeKind::Source {
            topics: vec!["KSTREAM-AGGREGATE-STATE-STORE-0000000002-repartition".into()],
            key_serde: None,
            value_serde: None,
        }
    );
}

#[test]
fn group_by_key_without_a_key_change_does_not_repartition() {
    let b = StreamsBuilder::new();
    b.stream::<String, String>("in").group_by_key().count();
    let program = b.build().unwrap();
    assert_eq!(
        names(&program),
        ["KSTREAM-SOURCE-0000000000", "KSTREAM-AGGREGATE-0000000002"]
    );
}

#[test]
fn the_first_error_comes_back_from_build() {
    let b = StreamsBuilder::new();
    b.stream::<String, String>("in").to("out");
    b.stream::<String, String>("in").to("out2");
    assert!(matches!(
        b.build(),
        Err(TopologyBuildError::TopicAlreadyRegistered(t)) if t == "in"
    ));
}

#[test]
fn operations_are_kept_with_their_node() {
    let b = StreamsBuilder::new();
    b.stream::<String, String>("in")
        .filter_not(|_, v| v.is_empty())
        .to("out");
    let program = b.build().unwrap();
    let f = program
        .operation("KSTREAM-FILTER-0000000001")
        .and_then(|f| f.downcast_ref::<Predicate<String, String>>())
        .expect("the filter's predicate");
    assert!(f(&"k".to_string(), &"v".to_string()));
    assert!(!f(&"k".to_string(), &String::new()));
}

#[test]
fn a_table_names_its_store_first_and_keeps_it_only_when_materialized() {
    let b = StreamsBuilder::new();
    b.table::<String, String>("t").to_stream().to("out");
    b.table_with::<String, String>("u", Consumed::named("tbl"), Materialized::named("s"));
    let program = b.build().unwrap();
    assert_eq!(
        names(&program)[..4],
        [
            "KSTREAM-SOURCE-0000000001",
            "KTABLE-SOURCE-0000000002",
            "KTABLE-TOSTREAM-0000000003",
            "KSTREAM-SINK-0000000004"
        ]
    );
    let stores = |name: &str| match &program.topology().node(name).unwrap().kind {
        NodeKind::Processor { stores } => stores.clone(),
        other => panic!("{name} is {other:?}"),
    };
    assert!(stores("KTABLE-SOURCE-0000000002").is_empty());
    assert_eq!(stores("tbl"), ["s"]);
    assert!(program.topology().node("tbl-source").is_some());
}

#[test]
fn a_built_program_can_move_to_the_threads_that_will_run_it() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<DslTopology>();
}
