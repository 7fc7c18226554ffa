//! `KStream` operations that reshape a program: `merge`, `repartition`, `toTable`, `process`
//! and `processValues`; and the `StreamsBuilder` settings that go with them
//! (`topology.optimization`, `addStateStore`).

use std::any::Any;

use super::exec::{self, NodeExec};
use super::grouped::{repartition_execs, repartition_names, write_repartition, KTable};
use super::more_options::{Optimization, Repartitioned};
use super::options::Materialized;
use super::stream::KStream;
use super::table::{store_spec, View};
use super::StreamsBuilder;
use crate::topology::StoreSpec;

impl StreamsBuilder {
    /// An empty program built with `topology.optimization` = `optimization` (set before the
    /// first operation: the DSL lowers each call at once).
    pub fn with_optimization(optimization: Optimization) -> Self {
        let builder = Self::new();
        builder.inner.borrow_mut().optimization = optimization;
        builder
    }

    /// `addStateStore(storeBuilder)`: a store that `process` / `processValues` can name.
    pub fn add_state_store(&self, spec: StoreSpec) {
        let mut inner = self.inner.borrow_mut();
        let result = inner.topology.add_state_store(spec, &[]);
        inner.record(result);
    }
}

impl<K: 'static, V: 'static> KStream<K, V> {
    /// `merge(other)`: one stream of the records of both (a `KSTREAM-MERGE-…` processor
    /// with both as parents).
    pub fn merge(&self, other: &KStream<K, V>) -> KStream<K, V> {
        self.merge_named(None, other)
    }

    /// `merge(other, Named.as(name))`.
    pub fn merge_named(&self, name: Option<&str>, other: &KStream<K, V>) -> KStream<K, V> {
        let mut inner = self.inner.borrow_mut();
        let name = inner.name_or_next(name, "KSTREAM-MERGE-");
        let result = inner
            .topology
            .add_processor(&name, &[&self.node, &other.node]);
        inner.record(result);
        inner.marks.merge_nodes.push(name.clone());
        inner.exec(&name, NodeExec::PassThrough);
        drop(inner);
        KStream::new(
            self.inner.clone(),
            name,
            self.repartition_required || other.repartition_required,
        )
    }

    /// `repartition()`: through a `KSTREAM-REPARTITION-…-repartition` topic.
    pub fn repartition(&self) -> KStream<K, V> {
        self.repartition_with(Repartitioned::default())
    }

    /// `repartition(repartitioned)`: Java's `UnoptimizableRepartitionNode` (filter, sink,
    /// topic, source), with the topic's partition count if given.
    pub fn repartition_with(&self, repartitioned: Repartitioned) -> KStream<K, V> {
        let mut inner = self.inner.borrow_mut();
        let prefix = match &repartitioned.name {
            Some(n) => n.clone(),
            None => inner.next_name("KSTREAM-REPARTITION-"),
        };
        let step = repartition_names(&mut inner, &prefix);
        let topic = step.topic.clone();
        let nodes = [
            step.filter.as_str(),
            step.sink.as_str(),
            step.source.as_str(),
        ];
        repartition_execs::<K, V>(&mut inner, nodes, None, None);
        let source = write_repartition(&mut inner, step, &self.node);
        inner
            .topology
            .add_internal_topic(&topic, repartitioned.partitions);
        drop(inner);
        KStream::new(self.inner.clone(), source, false)
    }

    /// `toTable()`: the stream as a table (a `KSTREAM-TOTABLE-…` processor; repartitions
    /// first if the key changed).
    pub fn to_table(&self) -> KTable<K, V> {
        self.to_table_with(None, Materialized::default())
    }

    /// `toTable(Named.as(name), materialized)`: a store name materializes the table at once;
    /// otherwise it is materialized (under `KSTREAM-TOTABLE-STATE-STORE-…`) only if a later
    /// operation needs it.
    pub fn to_table_with(&self, name: Option<&str>, materialized: Materialized) -> KTable<K, V> {
        let mut inner = self.inner.borrow_mut();
        let name = inner.name_or_next(name, "KSTREAM-TOTABLE-");
        let store = match &materialized.store_name {
            Some(s) => s.clone(),
            None => inner.next_store_name("KSTREAM-TOTABLE-"),
        };
        let mut parent = self.node.clone();
        if self.repartition_required {
            let step = repartition_names(&mut inner, &name);
            inner.marks.step(step.clone());
            let nodes = [
                step.filter.as_str(),
                step.sink.as_str(),
                step.source.as_str(),
            ];
            let (key, value) = (&materialized.key_typed, &materialized.value_typed);
            repartition_execs::<K, V>(&mut inner, nodes, key.as_ref(), value.as_ref());
            parent = write_repartition(&mut inner, step, &self.node);
        }
        let result = inner.topology.add_processor(&name, &[&parent]);
        inner.record(result);
        let table = match exec::source::<K, V>(
            materialized.key_typed.as_ref(),
            materialized.value_typed.as_ref(),
        ) {
            // The store, if any, is the one the node has when the program is lowered.
            NodeExec::Source { key, value } => NodeExec::TableSource {
                store: None,
                key,
                value,
                cached: materialized.caching_enabled,
            },
            other => other,
        };
        inner.exec(&name, table);
        let view = View::source(&name, store_spec(&store, &materialized));
        if materialized.store_name.is_some() {
            view.materialize(&mut inner);
        }
        drop(inner);
        KTable::new(self.inner.clone(), name, view)
    }

    /// `process(supplier, stateStoreNames…)`: a processor of the Processor API, named
    /// `KSTREAM-PROCESSOR-…`, connected to `stores` (added with
    /// [`StreamsBuilder::add_state_store`]). `supplier` is kept with the node for the runtime;
    /// the key may change (the stream repartitions before an aggregation).
    pub fn process<K2: 'static, V2: 'static>(
        &self,
        supplier: impl Any + Send + Sync,
        stores: &[&str],
    ) -> KStream<K2, V2> {
        let name = self.inner.borrow_mut().next_name("KSTREAM-PROCESSOR-");
        self.connected_processor(&name, stores, true, supplier)
    }

    /// `process(supplier, Named.as(name), stateStoreNames…)`: unlike other operations, a
    /// named `process` uses up no number (Java).
    pub fn process_named<K2: 'static, V2: 'static>(
        &self,
        name: &str,
        supplier: impl Any + Send + Sync,
        stores: &[&str],
    ) -> KStream<K2, V2> {
        self.connected_processor(name, stores, true, supplier)
    }

    /// `processValues(supplier, stateStoreNames…)`: a fixed-key processor
    /// (`KSTREAM-PROCESSVALUES-…`); the key does not change.
    pub fn process_values<V2: 'static>(
        &self,
        supplier: impl Any + Send + Sync,
        stores: &[&str],
    ) -> KStream<K, V2> {
        let name = self.inner.borrow_mut().next_name("KSTREAM-PROCESSVALUES-");
        self.connected_processor(&name, stores, false, supplier)
    }

    /// `processValues(supplier, Named.as(name), stateStoreNames…)` (uses up no number).
    pub fn process_values_named<V2: 'static>(
        &self,
        name: &str,
        supplier: impl Any + Send + Sync,
        stores: &[&str],
    ) -> KStream<K, V2> {
        self.connected_processor(name, stores, false, supplier)
    }

    /// `ProcessorToStateConnectorNode.writeToTopology`.
    fn connected_processor<K2, V2>(
        &self,
        name: &str,
        stores: &[&str],
        key_changing: bool,
        supplier: impl Any + Send + Sync,
    ) -> KStream<K2, V2> {
        let mut inner = self.inner.borrow_mut();
        let result = inner.topology.add_processor(name, &[&self.node]);
        inner.record(result);
        if !stores.is_empty() {
            let result = inner
                .topology
                .connect_processor_and_state_stores(name, stores);
            inner.record(result);
        }
        inner.keep(name, supplier);
        drop(inner);
        KStream::new(
            self.inner.clone(),
            name.to_string(),
            self.repartition_required || key_changing,
        )
    }
}
