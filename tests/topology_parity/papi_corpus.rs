//! The Processor-API twins of `TopologyParity.processorApi` (same names, same calls).

use kafka_streams_group::topology::{SinkTarget, StoreSpec, TopologyBuilder};

use super::Program;

fn topic(t: &str) -> SinkTarget {
    SinkTarget::Topic(t.to_string())
}

fn single() -> TopologyBuilder {
    let mut t = TopologyBuilder::new();
    t.add_source("src", ["in"]).unwrap();
    t.add_processor("proc", &["src"]).unwrap();
    t.add_sink("sink", topic("out"), &["proc"]).unwrap();
    t
}

fn repartition_and_store() -> TopologyBuilder {
    let mut t = TopologyBuilder::new();
    t.add_source("src", ["in"]).unwrap();
    t.add_processor("proc", &["src"]).unwrap();
    t.add_internal_topic("rep", None);
    t.add_sink("to-rep", topic("rep"), &["proc"]).unwrap();
    t.add_source("from-rep", ["rep"]).unwrap();
    t.add_processor("proc2", &["from-rep"]).unwrap();
    t.add_state_store(StoreSpec::new("counts"), &["proc2"])
        .unwrap();
    t.add_sink("out", topic("out"), &["proc2"]).unwrap();
    t
}

fn branches() -> TopologyBuilder {
    let mut t = TopologyBuilder::new();
    t.add_source("s", ["t"]).unwrap();
    t.add_processor("b-leaf", &["s"]).unwrap();
    t.add_processor("a-leaf", &["s"]).unwrap();
    t.add_processor("c-chain", &["s"]).unwrap();
    t.add_processor("d", &["c-chain"]).unwrap();
    t.add_processor("e", &["d"]).unwrap();
    t.add_sink("k1", topic("o1"), &["e", "a-leaf"]).unwrap();
    t.add_sink("k2", topic("o2"), &["b-leaf"]).unwrap();
    t
}

fn diamond() -> TopologyBuilder {
    let mut t = TopologyBuilder::new();
    t.add_source("source", ["x", "c", "a", "b"]).unwrap();
    t.add_processor("left", &["source"]).unwrap();
    t.add_processor("right", &["source"]).unwrap();
    t.add_processor("right-2", &["right"]).unwrap();
    t.add_processor("merge", &["left", "right-2"]).unwrap();
    t.add_sink("sink", topic("out"), &["merge"]).unwrap();
    t
}

fn shared_store() -> TopologyBuilder {
    let mut t = TopologyBuilder::new();
    t.add_source("s1", ["a"]).unwrap();
    t.add_source("s2", ["b"]).unwrap();
    t.add_processor("p1", &["s1"]).unwrap();
    t.add_processor("p2", &["s2"]).unwrap();
    t.add_state_store(StoreSpec::new("shared"), &["p1", "p2"])
        .unwrap();
    t.add_state_store(StoreSpec::new("own"), &["p2"]).unwrap();
    t.add_source("s3", ["c"]).unwrap();
    t.add_processor("p3", &["s3"]).unwrap();
    t
}

fn stores_and_logging() -> TopologyBuilder {
    let mut t = TopologyBuilder::new();
    t.add_source("src", ["in"]).unwrap();
    t.add_processor("proc", &["src"]).unwrap();
    t.add_state_store(StoreSpec::new("plain").logging_disabled(), &["proc"])
        .unwrap();
    let tuned = StoreSpec::new("tuned")
        .changelog_config("min.insync.replicas", "2")
        .changelog_config("cleanup.policy", "compact,delete");
    t.add_state_store(tuned, &["proc"]).unwrap();
    t.add_state_store(StoreSpec::new("zeta"), &["proc"])
        .unwrap();
    t.add_state_store(StoreSpec::new("alpha"), &["proc"])
        .unwrap();
    t
}

fn copartition() -> TopologyBuilder {
    let mut t = TopologyBuilder::new();
    t.add_source("orders-src", ["orders"]).unwrap();
    t.add_source("customers-src", ["customers"]).unwrap();
    t.add_processor("join", &["orders-src", "customers-src"])
        .unwrap();
    t.copartition_sources(&["orders-src", "customers-src"])
        .unwrap();
    t.add_sink("joined", topic("joined"), &["join"]).unwrap();
    t
}

fn fixed_partitions() -> TopologyBuilder {
    let mut t = TopologyBuilder::new();
    t.add_source("src", ["in"]).unwrap();
    t.add_processor("proc", &["src"]).unwrap();
    t.add_internal_topic("fixed", Some(6));
    t.add_internal_topic("free", None);
    t.add_sink("to-fixed", topic("fixed"), &["proc"]).unwrap();
    t.add_sink("to-free", topic("free"), &["proc"]).unwrap();
    t.add_source("from-fixed", ["fixed"]).unwrap();
    t.add_source("from-free", ["free"]).unwrap();
    t.add_processor("both", &["from-fixed", "from-free"])
        .unwrap();
    t.add_sink("unread", topic("plain-out"), &["both"]).unwrap();
    t
}

fn wide_fanout() -> TopologyBuilder {
    let mut t = TopologyBuilder::new();
    t.add_source("root", ["in"]).unwrap();
    t.add_processor("m", &["root"]).unwrap();
    t.add_processor("q", &["root"]).unwrap();
    t.add_processor("b", &["m"]).unwrap();
    t.add_processor("z", &["root"]).unwrap();
    t.add_processor("y", &["q"]).unwrap();
    t.add_processor("x", &["y"]).unwrap();
    t.add_processor("a", &["root"]).unwrap();
    t.add_processor("k", &["b"]).unwrap();
    t.add_sink("s-a", topic("oa"), &["a", "x", "k"]).unwrap();
    t
}

/// The Processor-API programs.
pub fn programs() -> Vec<Program> {
    vec![
        ("papi-single", single),
        ("papi-repartition-and-store", repartition_and_store),
        ("papi-branches", branches),
        ("papi-diamond", diamond),
        ("papi-shared-store", shared_store),
        ("papi-stores-and-logging", stores_and_logging),
        ("papi-copartition", copartition),
        ("papi-fixed-partitions", fixed_partitions),
        ("papi-wide-fanout", wide_fanout),
    ]
}
