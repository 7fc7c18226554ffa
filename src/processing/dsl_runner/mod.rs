//! Runs a DSL program ([`DslTopology`]) in the processing runtime: the program is lowered
//! into one graph of executable nodes ([`DslProgram`]), each task of subtopology `x` gets a
//! processor that pushes its records through the nodes of `x`, and the member sends the
//! topology the program derived ([`StreamsApp::from_dsl`]).
//!
//! What runs, with Java's semantics: `stream`, `table` (materialized or not), `filter`,
//! `filterNot`, `map`, `mapValues`, `flatMap`, `flatMapValues`, `selectKey`, `peek`,
//! `foreach`, `to` (a topic or a `TopicNameExtractor`), `groupByKey`, `groupBy` (with the
//! repartition step: null keys dropped, records written to and read back from
//! `<application.id>-…-repartition` with the grouping's serdes), `count`, `reduce`,
//! `aggregate` (timestamped key-value stores: the store holds `[timestamp][value]`, the
//! changelog the value with the aggregate's timestamp, as Java's
//! `ChangeLoggingTimestampedKeyValueBytesStore`; the timestamp is the larger of the old
//! one and the record's), `toStream`, `split`/`branch`, `merge`, `repartition`, `toTable`,
//! `KTable` `filter` / `filterNot` / `mapValues` (Java's `KTableFilter` / `KTableMapValues`),
//! `KTable.groupBy` and `KGroupedTable` `count` / `reduce` / `aggregate` (old values travel
//! with an update as Java's `Change`, through the repartition topic in `ChangedSerializer`'s
//! bytes; see `run/table.rs`), `KTable`–`KTable` `join` / `leftJoin` / `outerJoin` (Java's
//! `KTableKTable*Join` processors and `KTableKTableJoinMerger`; `run/table_join.rs`), and
//! `KStream`–`KTable` `join` / `leftJoin` with a `table()`, a `toTable()`, an aggregation or
//! a `filter` / `mapValues` materialized by name (with the repartition step after a key
//! change; the table's store is the one the join materialized, named or not). In the
//! runtime every update of a table is forwarded at once, as Java does with
//! `statestore.cache.max.bytes=0` (the runtime's record cache, if on, still delays the
//! store's changelog writes to the commit). [`DslTestDriver`] shows what Java's
//! `TopologyTestDriver` shows: its record cache (on by default) is flushed after every
//! record, so a cached store (`Materialized` caches unless `with_caching_disabled`: an
//! aggregation's, a table's, a materialized table operation's or join's) forwards and logs
//! one update per key per record, the last, with the value the store held before the record
//! as the old value, and drops a delete of a key it did not hold.
//!
//! A store with its changelog disabled (`Materialized::with_logging_disabled`) writes no
//! changelog records and is not restored: it starts empty, as Java's in-memory store
//! without logging does. With `topology.optimization=all` the program runs the optimized
//! topology: repartition steps after one key change merged into one (the merged step runs
//! with the first merged step's serdes, as Java takes the first step's), and a source
//! table's store logs nothing, its source topic being its changelog.
//!
//! A node the runner does not know (an operation added to the DSL before the runner learnt
//! it) or a missing serde is refused when the program is lowered, naming the node.
//!
//! [`DslTestDriver`] runs a program without a broker, as Java's `TopologyTestDriver`.

mod driver;
mod query_serdes;
mod queues;
mod run;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use crate::dsl::exec_table::GroupedExec;
use crate::dsl::{DslTopology, NodeExec, Optimization};
use crate::error::Error;
use crate::streams::{StreamsTaskId, StreamsTopology};
use crate::topology::{HeartbeatTopologyOptions, NodeKind, SinkTarget};

use super::app::StreamsApp;
use super::context::Processor;
use crate::state::StoreFormat;

pub use driver::{DslTestDriver, TestRecord};

/// One node of a lowered program.
struct Node {
    name: String,
    exec: NodeExec,
    children: Vec<usize>,
    /// A sink's topic as written on the broker (internal topics with the application id).
    topic: Option<String>,
}

/// A DSL program lowered for execution: shared by the processors of all its tasks.
pub struct DslProgram {
    nodes: Vec<Node>,
    /// The topic a record is read from (as on the broker) → the source node and its
    /// subtopology.
    sources: HashMap<String, (usize, String)>,
    /// The stores of each subtopology.
    stores: BTreeMap<String, Vec<String>>,
    topology: StreamsTopology,
    internal: Vec<String>,
    /// The stores with a record cache (`Materialized.withCachingEnabled`, Java's default).
    cached: BTreeSet<String>,
    /// The stores whose writes are not logged: `Materialized.withLoggingDisabled`, and a
    /// table's store restored from its source topic (`topology.optimization=all`).
    unlogged: BTreeSet<String>,
    /// `topology.optimization` of the program.
    optimization: Optimization,
}

impl std::fmt::Debug for DslProgram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DslProgram")
            .field("nodes", &self.nodes.len())
            .field("stores", &self.stores)
            .finish_non_exhaustive()
    }
}

fn refused(reason: String) -> Error {
    Error::InvalidConfiguration {
        field: "dsl",
        reason,
    }
}

impl DslProgram {
    /// Lowers `program` for application `options.application_id`: every node must be one
    /// the runner executes.
    pub fn lower(
        program: &DslTopology,
        options: &HeartbeatTopologyOptions,
    ) -> Result<DslProgram, Error> {
        let builder = program.topology();
        let topology = program
            .streams_topology(options)
            .map_err(|e| refused(format!("the program's topology is not valid: {e}")))?;
        let app = &options.application_id;
        let on_broker = |t: &str| match builder.is_internal_topic(t) {
            true => format!("{app}-{t}"),
            false => t.to_string(),
        };
        let index: HashMap<&str, usize> = builder
            .nodes()
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name.as_str(), i))
            .collect();
        let mut nodes = Vec::with_capacity(builder.nodes().len());
        for n in builder.nodes() {
            nodes.push(lower_node(program, n, &on_broker)?);
        }
        for (i, n) in builder.nodes().iter().enumerate() {
            for p in &n.predecessors {
                if let Some(&pi) = index.get(p.as_str()) {
                    nodes[pi].children.push(i);
                }
            }
        }
        let mut sources = HashMap::new();
        let mut stores: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (sub, group) in builder.node_groups().into_iter().enumerate() {
            for i in group {
                let node = &builder.nodes()[i];
                if let NodeKind::Source { topics, .. } = &node.kind {
                    for t in topics {
                        sources.insert(on_broker(t), (i, sub.to_string()));
                    }
                }
                if let NodeKind::Processor { stores: s } = &node.kind {
                    // A store connected to several processors (a table's store and the
                    // joins reading it) is one store.
                    let list = stores.entry(sub.to_string()).or_default();
                    for name in s {
                        if !list.contains(name) {
                            list.push(name.clone());
                        }
                    }
                }
            }
        }
        let internal = sources
            .keys()
            .filter(|t| {
                t.strip_prefix(&format!("{app}-"))
                    .is_some_and(|raw| builder.is_internal_topic(raw))
            })
            .cloned()
            .collect();
        let cached = nodes
            .iter()
            .filter_map(|n| match &n.exec {
                NodeExec::Aggregate {
                    store,
                    cached: true,
                    ..
                }
                | NodeExec::TableSource {
                    store: Some(store),
                    cached: true,
                    ..
                }
                | NodeExec::Grouped(GroupedExec::Aggregate {
                    store,
                    cached: true,
                    ..
                }) => Some(store.clone()),
                NodeExec::Table { store: Some(s), .. }
                | NodeExec::TableJoinMerge { store: Some(s) }
                    if s.cached =>
                {
                    Some(s.name.clone())
                }
                _ => None,
            })
            .collect();
        let unlogged = builder
            .stores()
            .filter(|(spec, _)| !spec.logging_enabled)
            .map(|(spec, _)| spec.name.clone())
            .collect();
        Ok(DslProgram {
            nodes,
            sources,
            stores,
            topology,
            internal,
            cached,
            unlogged,
            optimization: program.optimization(),
        })
    }

    /// The topology the member sends (derived from the program).
    pub fn streams_topology(&self) -> &StreamsTopology {
        &self.topology
    }

    /// The stores of subtopology `id`.
    pub fn stores_of(&self, id: &str) -> &[String] {
        self.stores.get(id).map_or(&[], Vec::as_slice)
    }

    /// Whether the program reads `topic` (as named on the broker).
    pub fn reads(&self, topic: &str) -> bool {
        self.sources.contains_key(topic)
    }

    /// Whether store `store` has a record cache (Java's default for a DSL store).
    pub fn is_cached(&self, store: &str) -> bool {
        self.cached.contains(store)
    }

    /// Whether store `store` logs its writes to a changelog topic.
    pub fn is_logged(&self, store: &str) -> bool {
        !self.unlogged.contains(store)
    }

    /// Whether `topic` is one of the program's repartition topics (as on the broker).
    pub fn is_internal(&self, topic: &str) -> bool {
        self.internal.iter().any(|t| t == topic)
    }
}

/// One node's executable form, or why the program cannot run.
fn lower_node(
    program: &DslTopology,
    n: &crate::topology::Node,
    on_broker: &dyn Fn(&str) -> String,
) -> Result<Node, Error> {
    let mut exec = match program.node_exec(&n.name) {
        Some(NodeExec::Unavailable(why)) => {
            return Err(refused(format!("node {} cannot run: {why}", n.name)))
        }
        Some(e) => e.clone(),
        None => {
            return Err(refused(format!(
                "node {} comes from a DSL operation the runner does not execute yet \
                 (see processing::dsl_runner for the operations that run)",
                n.name
            )))
        }
    };
    let (topic, store) = match &n.kind {
        NodeKind::Sink {
            target: SinkTarget::Topic(t),
        } => (Some(on_broker(t)), None),
        NodeKind::Processor { stores } => (None, stores.first().cloned()),
        _ => (None, None),
    };
    if let NodeExec::TableSource { store: kept, .. } = &mut exec {
        // A table source keeps the store its node has: one named by `table()`'s
        // `Materialized`, or one a later operation (a join) added to it.
        kept.clone_from(&store);
    }
    Ok(Node {
        name: n.name.clone(),
        exec,
        children: Vec::new(),
        topic,
    })
}

impl StreamsApp {
    /// The application of a DSL program: the topology it derives (for application
    /// `options.application_id`, which must be the runtime's `application.id`), a
    /// timestamped key-value store per store of the program, and per task a processor that
    /// executes the program's nodes of the task's subtopology. Fails, naming the node, if
    /// the program holds an operation the runner does not execute; fails if it was built
    /// with `topology.optimization=all` (it runs in [`DslTestDriver`] only).
    pub fn from_dsl(
        program: &DslTopology,
        options: &HeartbeatTopologyOptions,
    ) -> Result<StreamsApp, Error> {
        let program = Arc::new(DslProgram::lower(program, options)?);
        if program.optimization != Optimization::None {
            // The test driver runs the optimized topology; the runtime would also have to
            // restore a source table's store from its source topic (up to the committed
            // offset, as Java does), which it does not yet: refused rather than run with an
            // empty table after a restart.
            return Err(refused(
                "a program built with topology.optimization=all runs in DslTestDriver but \
                 not yet in the runtime (its source tables would not be restored from their \
                 topics): build it with Optimization::None (the default)"
                    .to_string(),
            ));
        }
        let shared = program.clone();
        let mut app = StreamsApp::new(
            program.topology.clone(),
            move |task: &StreamsTaskId| -> Result<Box<dyn Processor>, Error> {
                Ok(Box::new(run::DslProcessor::new(shared.clone(), task)))
            },
        );
        for (sub, stores) in &program.stores {
            for s in stores {
                let format = StoreFormat::TimestampedKeyValue;
                app = match program.is_logged(s) {
                    true => app.store(sub.clone(), s.clone(), format),
                    false => app.store_without_changelog(sub.clone(), s.clone(), format),
                };
            }
        }
        app.store_serdes = program.store_serdes();
        Ok(app)
    }
}

#[cfg(test)]
mod grouped_table_tests;
#[cfg(test)]
mod join_tests;
#[cfg(test)]
mod reshape_tests;
#[cfg(test)]
mod table_join_tests;
#[cfg(test)]
mod table_tests;
#[cfg(test)]
mod tests;
