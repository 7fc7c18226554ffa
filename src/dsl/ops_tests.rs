//! Unit tests of the operations of issue 23's second part (Java parity:
//! tests/topology_parity/dsl_ops_corpus.rs).

use super::join::ValueJoiner;
use super::stream::Predicate;
use super::*;
use crate::topology::{NodeKind, StoreSpec, TopologyBuildError};

fn stores_of(program: &DslTopology, node: &str) -> Vec<String> {
    match &program.topology().node(node).expect("node").kind {
        NodeKind::Processor { stores } => stores.clone(),
        _ => Vec::new(),
    }
}

#[test]
fn a_table_source_is_materialized_only_when_an_operation_needs_its_values() {
    let b = StreamsBuilder::new();
    let t = b.table::<String, String>("t");
    t.filter(|_, _| true).to_stream().to("out");
    let u = b.table::<String, String>("u");
    b.stream::<String, String>("in")
        .join(&u, |v: &String, x: &String| format!("{v}{x}"))
        .to("out2");
    let program = b.build().unwrap();
    assert!(stores_of(&program, "KTABLE-SOURCE-0000000002").is_empty());
    // u: store name 6, source 7, KTABLE-SOURCE 8; stream 9; join 10.
    assert_eq!(
        stores_of(&program, "KTABLE-SOURCE-0000000008"),
        ["u-STATE-STORE-0000000006"]
    );
    assert_eq!(
        stores_of(&program, "KSTREAM-JOIN-0000000010"),
        ["u-STATE-STORE-0000000006"]
    );
}

#[test]
fn branches_are_named_after_the_splitter_and_keep_their_predicates() {
    let b = StreamsBuilder::new();
    let m = b
        .stream::<String, String>("in")
        .split_named(Some("s-"))
        .branch_with(|_, v| v.is_empty(), Branched::named("empty"))
        .branch(|_, _| true)
        .default_branch();
    assert_eq!(
        m.keys().collect::<Vec<_>>(),
        ["s-0", "s-2", "s-empty"],
        "named, indexed (1-based), default (0)"
    );
    let program = b.build().unwrap();
    let p = program.operation("s-empty").unwrap();
    let p = p.downcast_ref::<Predicate<String, String>>().unwrap();
    assert!(p(&"k".to_string(), &String::new()));
}

#[test]
fn joins_keep_their_joiner_with_the_join_processor() {
    let b = StreamsBuilder::new();
    let a = b.table::<String, String>("a");
    let x = b.table::<String, String>("b");
    a.join_with(&x, Some("j"), None, |l: &String, r: &String| {
        format!("{l}{r}")
    });
    let program = b.build().unwrap();
    let j = program.operation("j").unwrap();
    let j = j
        .downcast_ref::<ValueJoiner<String, String, String>>()
        .unwrap();
    assert_eq!(j(&"a".to_string(), &"b".to_string()), "ab");
    assert_eq!(
        stores_of(&program, "j-join-this"),
        ["b-STATE-STORE-0000000003"]
    );
}

#[test]
fn process_keeps_its_supplier_and_refuses_an_unknown_store() {
    struct Supplier(u8);
    let b = StreamsBuilder::new();
    b.add_state_store(StoreSpec::new("ps"));
    b.stream::<String, String>("in")
        .process::<String, String>(Supplier(7), &["ps"])
        .to("out");
    let program = b.build().unwrap();
    let s = program.operation("KSTREAM-PROCESSOR-0000000001").unwrap();
    assert_eq!(s.downcast_ref::<Supplier>().map(|s| s.0), Some(7));

    let b = StreamsBuilder::new();
    b.stream::<String, String>("in")
        .process_values::<String>(Supplier(1), &["missing"]);
    assert_eq!(
        b.build().err(),
        Some(TopologyBuildError::UnknownStore("missing".into()))
    );
}

#[test]
fn with_optimization_all_a_table_store_is_restored_from_its_topic() {
    let b = StreamsBuilder::with_optimization(Optimization::All);
    b.table_with::<String, String>("t", Consumed::default(), Materialized::named("s"));
    let program = b.build().unwrap();
    assert_eq!(program.topology().source_changelog("s"), Some("t"));
    let b = StreamsBuilder::new();
    b.table_with::<String, String>("t", Consumed::default(), Materialized::named("s"));
    assert_eq!(b.build().unwrap().topology().source_changelog("s"), None);
}

#[test]
fn with_optimization_all_two_repartitions_after_one_key_change_become_one() {
    let program = |optimization| {
        let b = StreamsBuilder::with_optimization(optimization);
        let g = b
            .stream::<String, String>("in")
            .select_key(|_, v: &String| v.clone())
            .group_by_key();
        g.count().to_stream().to("counts");
        g.reduce(|a: &String, _: &String| a.clone())
            .to_stream()
            .to("reduced");
        b.build().unwrap()
    };
    let topics = |p: &DslTopology| {
        p.topology()
            .internal_topics()
            .iter()
            .map(|(t, _)| t.clone())
            .collect::<Vec<_>>()
    };
    let none = program(Optimization::None);
    assert_eq!(topics(&none).len(), 2);
    let all = program(Optimization::All);
    let t = "KSTREAM-AGGREGATE-STATE-STORE-0000000002-repartition";
    assert_eq!(topics(&all), [t]);
    let source = all.topology().node(&format!("{t}-source")).unwrap();
    assert!(matches!(source.kind, NodeKind::Source { .. }));
    let reduce = all.topology().node("KSTREAM-REDUCE-0000000010").unwrap();
    assert_eq!(reduce.predecessors, [format!("{t}-source")]);
}

#[test]
fn a_second_unnamed_join_of_a_key_changed_stream_reads_the_first_repartition() {
    let b = StreamsBuilder::new();
    let t = b.table::<String, String>("t");
    let s = b
        .stream::<String, String>("in")
        .select_key(|_, v: &String| v.clone());
    let j1 = s.join(&t, |v: &String, x: &String| format!("{v}{x}"));
    let j2 = s.left_join(&t, |v: &String, _: Option<&String>| v.clone());
    let (n1, n2) = (j1.node_name().to_string(), j2.node_name().to_string());
    let program = b.build().expect("Java reuses the repartition step");
    let parents = |n: &str| program.topology().node(n).unwrap().predecessors.clone();
    assert_eq!(parents(&n1), parents(&n2));
    assert_eq!(program.topology().internal_topics().len(), 1);
}
