//! A Kafka Streams DSL (`StreamsBuilder`, `KStream`, `KGroupedStream`, `KTable`) that lowers
//! into the [`TopologyBuilder`] exactly as Java's DSL lowers into `InternalTopologyBuilder`.
//!
//! Every operation takes its name from one counter shared by the whole program, as Java's
//! `InternalStreamsBuilder` does: `KSTREAM-SOURCE-0000000000`, `KSTREAM-FILTER-0000000001`,
//! `KSTREAM-AGGREGATE-STATE-STORE-0000000002`, … A name given with `Named`, `Consumed`,
//! `Produced` or `Grouped` replaces the generated one but still uses up its number (Java burns
//! it "for compatibility"). Key-changing operations (`map`, `flat_map`, `select_key`,
//! `group_by`) mark the stream for repartitioning; an aggregation of such a stream writes
//! Java's repartition step (filter, sink, `<name>-repartition` topic, source) first.
//!
//! Beyond the stateless operations and `KGroupedStream` aggregations, the DSL derives
//! `KTable` `filter` / `filter_not` / `map_values` (named, materialized or not) and
//! `group_by` into a [`KGroupedTable`] (`count`, `reduce` and `aggregate` with adder and
//! subtractor), `KStream::to_table`, `merge`, `split` / `branch` ([`BranchedKStream`],
//! [`Branched`] names), `repartition` ([`Repartitioned`]: name, partition count), `process` /
//! `process_values` (a Processor-API supplier kept with its node, connected to stores added
//! with [`StreamsBuilder::add_state_store`]), `KStream`–`KTable` `join` / `left_join` and
//! `KTable`–`KTable` `join` / `left_join` / `outer_join`: Java's names (Java quirks included:
//! a branch uses up a number it never prints, a named `process` uses up none, an unnamed
//! `Materialized` on a table–table join still materializes it), the stores connected to join
//! processors, copartition groups, and table sources materialized only when a later operation
//! needs their values (a join, `group_by`, an outer side).
//!
//! Java writes the graph into its topology builder in the order the operations were called
//! (`buildPriority`), so the DSL lowers each call at once. `topology.optimization`
//! ([`Optimization`], chosen with [`StreamsBuilder::with_optimization`]) is `none` by default;
//! with `all`, a `table()` store is restored from its source topic (Java's source-topic
//! reuse) and the repartition steps after one key change (or below one `merge`) are merged
//! into one when the program is built (the `optimize` module).
//!
//! Not here yet: windowing, `globalTable`, stream–stream and foreign-key joins, `suppress`,
//! `cogroup`, merging two `stream()` calls on one topic, and the sub-topology numbering Java
//! gives when a named grouping is aggregated again after unrelated operations were added (it
//! re-prioritises the shared repartition step). See `tests/topology_parity.rs` for which
//! programs are proven identical to Java's.
//!
//! The functions given to operations are kept with their node (see
//! [`DslTopology::operation`]), and so is what the node does with its types erased
//! ([`DslTopology::node_exec`], [`exec`]), which the processing runtime executes
//! (`processing::dsl`). Keys and values are written with typed serdes ([`serdes`]).
//!
//! ```
//! use kafka_streams_group::dsl::StreamsBuilder;
//! use kafka_streams_group::topology::HeartbeatTopologyOptions;
//!
//! let builder = StreamsBuilder::new();
//! builder
//!     .stream::<String, String>("lines")
//!     .flat_map_values(|line: &String| line.split(' ').map(str::to_string).collect::<Vec<_>>())
//!     .group_by(|_key: &String, word: &String| word.clone())
//!     .count()
//!     .to_stream()
//!     .to("counts");
//! let program = builder.build().unwrap();
//! assert!(program.describe().to_string().contains("KSTREAM-AGGREGATE-0000000004"));
//! let heartbeat = program.streams_topology(&HeartbeatTopologyOptions::new("wc")).unwrap();
//! assert_eq!(heartbeat.subtopologies.len(), 2);
//! ```

mod branch;
pub mod exec;
pub mod exec_table;
mod grouped;
mod join;
mod more_options;
mod optimize;
mod options;
mod reshape;
pub mod serdes;
mod stream;
mod table;

use std::any::Any;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

pub use branch::{Branched, BranchedKStream};
pub use exec::NodeExec;
pub use grouped::{KGroupedStream, KTable};
pub use more_options::{Optimization, Repartitioned};
pub use options::{Consumed, Grouped, Materialized, Produced};
pub use serdes::{Bytes, Serdes, TypedSerde, Uuid};
pub use stream::KStream;
pub use table::KGroupedTable;

use crate::topology::{
    HeartbeatTopologyOptions, StreamsTopology, TopologyBuildError, TopologyBuilder,
    TopologyDescription, TopologyError,
};

/// The state every handle of one program shares.
struct Inner {
    topology: TopologyBuilder,
    /// Java's `InternalStreamsBuilder.index`.
    index: u32,
    /// The first error; the DSL keeps going (as a chain must) and `build` returns it.
    error: Option<TopologyBuildError>,
    operations: BTreeMap<String, Box<dyn Any + Send + Sync>>,
    /// What each node does, types erased (for the runner).
    execs: BTreeMap<String, NodeExec>,
    /// `topology.optimization`.
    optimization: Optimization,
    /// Key- and value-changing operations and optimizable repartition steps.
    marks: optimize::GraphMarks,
}

type Shared = Rc<RefCell<Inner>>;

impl Inner {
    /// `newProcessorName(prefix)`: `prefix` + the next number, ten digits.
    fn next_name(&mut self, prefix: &str) -> String {
        let name = format!("{prefix}{:010}", self.index);
        self.index += 1;
        name
    }

    /// `newStoreName(prefix)`: `prefix` + `STATE-STORE-` + the next number.
    fn next_store_name(&mut self, prefix: &str) -> String {
        self.next_name(&format!("{prefix}STATE-STORE-"))
    }

    /// `NamedInternal.orElseGenerateWithPrefix`: the given name, or a generated one; the
    /// number is used up either way.
    fn name_or_next(&mut self, given: Option<&str>, prefix: &str) -> String {
        let generated = self.next_name(prefix);
        given.map_or(generated, str::to_string)
    }

    /// Keeps the first error.
    fn record(&mut self, result: Result<(), TopologyBuildError>) {
        if let Err(e) = result {
            log::debug!("DSL topology error: {e}");
            self.error.get_or_insert(e);
        }
    }

    /// Marks a key-changing (`map`, `flatMap`, `selectKey`, `groupBy`) or value-changing
    /// (`mapValues`, `flatMapValues`) operation for `topology.optimization=all`.
    fn mark_changing(&mut self, node: &str, prefix: &str, key_changing: bool) {
        if key_changing {
            self.marks.key_changers.push(node.to_string());
        } else if matches!(prefix, "KSTREAM-MAPVALUES-" | "KSTREAM-FLATMAPVALUES-") {
            self.marks.value_changers.push(node.to_string());
        }
    }

    fn keep<T: Any + Send + Sync>(&mut self, node: &str, operation: T) {
        self.operations
            .insert(node.to_string(), Box::new(operation));
    }

    fn exec(&mut self, node: &str, exec: NodeExec) {
        self.execs.insert(node.to_string(), exec);
    }
}

/// Java's `StreamsBuilder`: the entry point of a DSL program.
pub struct StreamsBuilder {
    inner: Shared,
}

impl Default for StreamsBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl StreamsBuilder {
    /// An empty program.
    pub fn new() -> Self {
        Self {
            inner: Rc::new(RefCell::new(Inner {
                topology: TopologyBuilder::new(),
                index: 0,
                error: None,
                operations: BTreeMap::new(),
                execs: BTreeMap::new(),
                optimization: Optimization::None,
                marks: optimize::GraphMarks::default(),
            })),
        }
    }

    /// `stream(topic)`: a stream of the records of `topic`.
    pub fn stream<K: 'static, V: 'static>(&self, topic: &str) -> KStream<K, V> {
        self.stream_with(&[topic], Consumed::default())
    }

    /// `stream(topics, consumed)`: one source reading all `topics`.
    pub fn stream_with<K: 'static, V: 'static>(
        &self,
        topics: &[&str],
        consumed: Consumed,
    ) -> KStream<K, V> {
        let mut inner = self.inner.borrow_mut();
        let name = inner.name_or_next(consumed.name.as_deref(), "KSTREAM-SOURCE-");
        let result = inner.topology.add_source_with_serdes(
            &name,
            topics.iter().copied(),
            consumed.key_serde.as_deref(),
            consumed.value_serde.as_deref(),
        );
        inner.record(result);
        let exec = exec::source::<K, V>(consumed.key_typed.as_ref(), consumed.value_typed.as_ref());
        inner.exec(&name, exec);
        drop(inner);
        KStream::new(self.inner.clone(), name, false)
    }

    /// `table(topic)`: a table of the latest value per key of `topic`. Without a store name
    /// the table is not materialized (no store, no changelog), as in Java.
    pub fn table<K: 'static, V: 'static>(&self, topic: &str) -> KTable<K, V> {
        self.table_with(topic, Consumed::default(), Materialized::default())
    }

    /// `table(topic, consumed, materialized)`: a source (`<name>-source` if `consumed` is
    /// named) and a `KTABLE-SOURCE-…` processor, which keeps the store if `materialized`
    /// names one (with `topology.optimization=none`: its own changelog topic).
    pub fn table_with<K: 'static, V: 'static>(
        &self,
        topic: &str,
        consumed: Consumed,
        materialized: Materialized,
    ) -> KTable<K, V> {
        let mut inner = self.inner.borrow_mut();
        // MaterializedInternal names the store first, with the topic as prefix.
        let queryable = materialized.store_name.is_some();
        let store = match &materialized.store_name {
            Some(s) => s.clone(),
            None => inner.next_store_name(&format!("{topic}-")),
        };
        let generated = inner.next_name("KSTREAM-SOURCE-");
        let source = consumed
            .name
            .as_ref()
            .map_or(generated, |n| format!("{n}-source"));
        let name = inner.name_or_next(consumed.name.as_deref(), "KTABLE-SOURCE-");
        let result = inner.topology.add_source_with_serdes(
            &source,
            [topic],
            consumed.key_serde.as_deref(),
            consumed.value_serde.as_deref(),
        );
        inner.record(result);
        let result = inner.topology.add_processor(&name, &[&source]);
        inner.record(result);
        let (key, value) = (consumed.key_typed.as_ref(), consumed.value_typed.as_ref());
        inner.exec(&source, exec::source::<K, V>(key, value));
        let key = materialized.key_typed.as_ref().or(key);
        let value = materialized.value_typed.as_ref().or(value);
        // The store of a table materialized by name; one a later operation adds (a join)
        // the runner finds on the node when it lowers the program.
        let table = match exec::source::<K, V>(key, value) {
            NodeExec::Source { key, value } => NodeExec::TableSource {
                store: queryable.then(|| store.clone()),
                key,
                value,
                cached: materialized.caching_enabled,
            },
            other => other,
        };
        inner.exec(&name, table);
        let spec = table::store_spec(&store, &materialized);
        let view = match inner.optimization {
            // REUSE_KTABLE_SOURCE_TOPICS: the source topic is the store's changelog.
            Optimization::All => table::View::source_reusing_topic(&name, spec, topic),
            Optimization::None => table::View::source(&name, spec),
        };
        if queryable {
            view.materialize(&mut inner);
        }
        drop(inner);
        KTable::new(self.inner.clone(), name, view)
    }

    /// Ends the program: its topology, or the first error an operation met.
    pub fn build(self) -> Result<DslTopology, TopologyBuildError> {
        let inner = Rc::try_unwrap(self.inner)
            .map(RefCell::into_inner)
            .unwrap_or_else(|shared| {
                let mut inner = shared.borrow_mut();
                Inner {
                    topology: inner.topology.clone(),
                    index: inner.index,
                    error: inner.error.clone(),
                    operations: std::mem::take(&mut inner.operations),
                    execs: std::mem::take(&mut inner.execs),
                    optimization: inner.optimization,
                    marks: inner.marks.clone(),
                }
            });
        let mut inner = inner;
        if inner.optimization == Optimization::All && inner.error.is_none() {
            let result = optimize::merge_repartitions(&mut inner);
            inner.record(result);
        }
        match inner.error {
            Some(e) => Err(e),
            None => Ok(DslTopology {
                topology: inner.topology,
                operations: inner.operations,
                execs: inner.execs,
                optimization: inner.optimization,
            }),
        }
    }
}

/// A built DSL program: its topology and the functions of its operations.
pub struct DslTopology {
    topology: TopologyBuilder,
    operations: BTreeMap<String, Box<dyn Any + Send + Sync>>,
    execs: BTreeMap<String, NodeExec>,
    optimization: Optimization,
}

impl DslTopology {
    /// The `topology.optimization` the program was built with.
    pub fn optimization(&self) -> Optimization {
        self.optimization
    }

    /// What node `node` does, types erased, for the runner; `None` for a node of an
    /// operation the runner does not execute yet.
    pub fn node_exec(&self, node: &str) -> Option<&NodeExec> {
        self.execs.get(node)
    }

    /// The Processor-API topology the program lowered into.
    pub fn topology(&self) -> &TopologyBuilder {
        &self.topology
    }

    /// Forgets what `node` does, as for an operation the runner does not know (tests).
    #[cfg(test)]
    pub(crate) fn forget_exec(&mut self, node: &str) {
        self.execs.remove(node);
    }

    /// `Topology#describe()`.
    pub fn describe(&self) -> TopologyDescription {
        self.topology.describe()
    }

    /// The topology a member of this application sends in its heartbeat.
    pub fn streams_topology(
        &self,
        options: &HeartbeatTopologyOptions,
    ) -> Result<StreamsTopology, TopologyError> {
        self.topology.streams_topology(options)
    }

    /// The function given to the operation that made node `node` (a boxed closure whose
    /// type depends on the operation), for the runtime that will execute the program.
    pub fn operation(&self, node: &str) -> Option<&(dyn Any + Send + Sync)> {
        self.operations.get(node).map(|b| b.as_ref())
    }
}

#[cfg(test)]
mod ops_tests;
#[cfg(test)]
mod tests;
