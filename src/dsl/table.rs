//! `KTable` operations (`filter`, `filterNot`, `mapValues`, `groupBy`) and `KGroupedTable`
//! (`count`, `reduce`, `aggregate` with adder and subtractor), as Java's `KTableImpl` and
//! `KGroupedTableImpl` lower them.

use std::cell::{Cell, RefCell};
use std::marker::PhantomData;
use std::rc::Rc;
use std::sync::Arc;

use super::exec::{self, boxed, erase1, erase2, AnyAggregator, AnyReducer, NodeExec};
use super::exec_table::{self, TableCombine, TableOp};

use super::grouped::{Aggregator, Initializer, KTable, Reducer};
use super::options::{Grouped, Materialized};
use super::stream::{KeyValueMapper, Predicate, ValueMapper};
use super::{Inner, Shared};
use crate::topology::{SinkTarget, StoreSpec};

/// Where a table's values can be read (Java's `KTableValueGetterSupplier`): the stores a join
/// processor is connected to.
#[derive(Clone, Debug)]
pub(crate) enum View {
    /// A table source (`table()`, `toTable()`): its store is added to its node the first time
    /// something needs it (Java's `KTableSource.materialize()`).
    Source(Rc<SourceStore>),
    /// A materialized table: this store.
    Store(String),
    /// An unmaterialized join result: the views of both sides.
    Union(Vec<View>),
}

/// The store of a table source, added to the topology once.
#[derive(Debug)]
pub(crate) struct SourceStore {
    node: String,
    spec: StoreSpec,
    /// With `topology.optimization=all`: the source topic that is the store's changelog.
    source_topic: Option<String>,
    added: Cell<bool>,
}

impl View {
    /// The view of the table source `node` whose store would be `spec`.
    pub(super) fn source(node: &str, spec: StoreSpec) -> Self {
        Self::Source(Rc::new(SourceStore {
            node: node.to_string(),
            spec,
            source_topic: None,
            added: Cell::new(false),
        }))
    }

    /// The view of a `table()` source whose store is restored from `topic`
    /// (`topology.optimization=all`: Java's source-topic reuse; the store has no changelog
    /// of its own).
    pub(super) fn source_reusing_topic(node: &str, mut spec: StoreSpec, topic: &str) -> Self {
        spec.logging_enabled = false;
        spec.changelog_configs.clear();
        Self::Source(Rc::new(SourceStore {
            node: node.to_string(),
            spec,
            source_topic: Some(topic.to_string()),
            added: Cell::new(false),
        }))
    }

    /// Materializes every table source this view reads (Java: `valueGetterSupplier()` and
    /// `enableSendingOldValues(true)` both do).
    pub(super) fn materialize(&self, inner: &mut Inner) {
        match self {
            Self::Source(s) if !s.added.get() => {
                s.added.set(true);
                let result = inner.topology.add_state_store(s.spec.clone(), &[&s.node]);
                inner.record(result);
                if let Some(topic) = &s.source_topic {
                    let result = inner
                        .topology
                        .connect_source_store_and_topic(&s.spec.name, topic);
                    inner.record(result);
                }
            }
            Self::Union(views) => views.iter().for_each(|v| v.materialize(inner)),
            Self::Source(_) | Self::Store(_) => {}
        }
    }

    /// `valueGetterSupplier().storeNames()`: materializes the sources and names the stores.
    pub(super) fn store_names(&self, inner: &mut Inner) -> Vec<String> {
        self.materialize(inner);
        let mut names = Vec::new();
        self.collect(&mut names);
        names
    }

    fn collect(&self, names: &mut Vec<String>) {
        match self {
            Self::Source(s) => push_unique(names, &s.spec.name),
            Self::Store(name) => push_unique(names, name),
            Self::Union(views) => views.iter().for_each(|v| v.collect(names)),
        }
    }
}

fn push_unique(names: &mut Vec<String>, name: &str) {
    if !names.iter().any(|n| n == name) {
        names.push(name.to_string());
    }
}

/// The store spec `materialized` describes, under `name`.
pub(super) fn store_spec(name: &str, materialized: &Materialized) -> StoreSpec {
    StoreSpec {
        name: name.to_string(),
        logging_enabled: materialized.logging_enabled,
        changelog_configs: materialized.changelog_configs.clone(),
    }
}

impl<K, V> Clone for KTable<K, V> {
    fn clone(&self) -> Self {
        KTable::new(self.inner.clone(), self.node.clone(), self.view.clone())
    }
}

impl<K: 'static, V: 'static> KTable<K, V> {
    /// `filter(predicate)`: a table of the rows for which `predicate` is true.
    pub fn filter(&self, predicate: impl Fn(&K, &V) -> bool + Send + Sync + 'static) -> Self {
        self.filter_with(None, None, predicate)
    }

    /// `filter(predicate, Named.as(name), materialized)`: a `materialized` with a store name
    /// gives the filter its own store; without one it only uses up a number, as in Java.
    pub fn filter_with(
        &self,
        name: Option<&str>,
        materialized: Option<Materialized>,
        predicate: impl Fn(&K, &V) -> bool + Send + Sync + 'static,
    ) -> Self {
        let p = Arc::new(predicate);
        let q = p.clone();
        let f: Predicate<K, V> = Box::new(move |k, v| q(k, v));
        let op = TableOp::Filter(erase2(move |k: &K, v: &V| p(k, v)));
        let exec = exec_table::table_op::<K, V, V>(op, materialized.as_ref());
        self.table_processor("KTABLE-FILTER-", name, materialized, f, exec)
    }

    /// `filterNot(predicate)`: a table without the rows for which `predicate` is true.
    pub fn filter_not(&self, predicate: impl Fn(&K, &V) -> bool + Send + Sync + 'static) -> Self {
        self.filter_not_with(None, None, predicate)
    }

    /// `filterNot(predicate, Named.as(name), materialized)`.
    pub fn filter_not_with(
        &self,
        name: Option<&str>,
        materialized: Option<Materialized>,
        predicate: impl Fn(&K, &V) -> bool + Send + Sync + 'static,
    ) -> Self {
        let p = Arc::new(predicate);
        let q = p.clone();
        let f: Predicate<K, V> = Box::new(move |k, v| !q(k, v));
        let op = TableOp::Filter(erase2(move |k: &K, v: &V| !p(k, v)));
        let exec = exec_table::table_op::<K, V, V>(op, materialized.as_ref());
        self.table_processor("KTABLE-FILTER-", name, materialized, f, exec)
    }

    /// `mapValues(mapper)`: a table of new values, same keys.
    pub fn map_values<V2: 'static>(
        &self,
        mapper: impl Fn(&V) -> V2 + Send + Sync + 'static,
    ) -> KTable<K, V2> {
        self.map_values_with(None, None, mapper)
    }

    /// `mapValues(mapper, Named.as(name), materialized)`.
    pub fn map_values_with<V2: 'static>(
        &self,
        name: Option<&str>,
        materialized: Option<Materialized>,
        mapper: impl Fn(&V) -> V2 + Send + Sync + 'static,
    ) -> KTable<K, V2> {
        let m = Arc::new(mapper);
        let n = m.clone();
        let f: ValueMapper<V, V2> = Box::new(move |v| n(v));
        let op = TableOp::MapValues(erase1(move |v: &V| boxed(m(v))));
        let exec = exec_table::table_op::<K, V, V2>(op, materialized.as_ref());
        self.table_processor("KTABLE-MAPVALUES-", name, materialized, f, exec)
    }

    /// `KTableImpl.doFilter` / `doMapValues`: a `materialized` without a store name uses up a
    /// store number first; the processor keeps a store only if one is named.
    fn table_processor<V2>(
        &self,
        prefix: &str,
        name: Option<&str>,
        materialized: Option<Materialized>,
        operation: impl std::any::Any + Send + Sync,
        exec: NodeExec,
    ) -> KTable<K, V2> {
        let mut inner = self.inner.borrow_mut();
        let store = materialized.as_ref().and_then(|m| match &m.store_name {
            Some(s) => Some(store_spec(s, m)),
            None => {
                inner.next_store_name(prefix);
                None
            }
        });
        let name = inner.name_or_next(name, prefix);
        let result = inner.topology.add_processor(&name, &[&self.node]);
        inner.record(result);
        let view = match store {
            Some(spec) => {
                let view = View::Store(spec.name.clone());
                let result = inner.topology.add_state_store(spec, &[&name]);
                inner.record(result);
                view
            }
            None => self.view.clone(),
        };
        inner.keep(&name, operation);
        inner.exec(&name, exec);
        drop(inner);
        KTable::new(self.inner.clone(), name, view)
    }

    /// `groupBy(selector)`: regroups the table by a new key and value (a `KTABLE-SELECT-…`
    /// processor; the table sends old values, so a table source is materialized).
    pub fn group_by<K2: 'static, V2: 'static>(
        &self,
        selector: impl Fn(&K, &V) -> (K2, V2) + Send + Sync + 'static,
    ) -> KGroupedTable<K2, V2> {
        self.group_by_with(Grouped::default(), selector)
    }

    /// `groupBy(selector, grouped)`: a named grouping names the select processor and the
    /// repartition topic (`<name>-repartition`).
    pub fn group_by_with<K2: 'static, V2: 'static>(
        &self,
        grouped: Grouped,
        selector: impl Fn(&K, &V) -> (K2, V2) + Send + Sync + 'static,
    ) -> KGroupedTable<K2, V2> {
        let m = Arc::new(selector);
        let n = m.clone();
        let f: KeyValueMapper<K, V, K2, V2> = Box::new(move |k, v| n(k, v));
        let e = erase2(move |k: &K, v: &V| {
            let (k2, v2) = m(k, v);
            (boxed(k2), boxed(v2))
        });
        let (key, value) = (grouped.key_typed.as_ref(), grouped.value_typed.as_ref());
        let exec = exec_table::select::<V, K2, V2>(e, key, value);
        let mut inner = self.inner.borrow_mut();
        let name = inner.name_or_next(grouped.name.as_deref(), "KTABLE-SELECT-");
        let result = inner.topology.add_processor(&name, &[&self.node]);
        inner.record(result);
        inner.keep(&name, f);
        inner.exec(&name, exec);
        self.view.materialize(&mut inner);
        drop(inner);
        KGroupedTable {
            inner: self.inner.clone(),
            node: name,
            grouped,
            repartition_source: Rc::new(RefCell::new(None)),
            _types: PhantomData,
        }
    }
}

/// Java's `KGroupedTable<K, V>`: a table regrouped by a new key, ready to aggregate with an
/// adder (new values) and a subtractor (old values).
pub struct KGroupedTable<K, V> {
    inner: Shared,
    node: String,
    grouped: Grouped,
    /// With a named grouping Java writes the repartition step once.
    repartition_source: Rc<RefCell<Option<String>>>,
    _types: PhantomData<fn() -> (K, V)>,
}

/// A reducer shared by the kept operation and the runner's exec.
type SharedReducer<V> = Arc<dyn Fn(&V, &V) -> V + Send + Sync>;
/// An aggregator shared by the kept operation and the runner's exec.
type SharedAggregator<K, V, A> = Arc<dyn Fn(&K, &V, &A) -> A + Send + Sync>;

/// A table reducer's pair: the adder and the subtractor.
pub type TableReducer<V> = (Reducer<V>, Reducer<V>);
/// A table aggregation's functions: initializer, adder, subtractor.
pub type TableAggregator<K, V, A> = (Initializer<A>, Aggregator<K, V, A>, Aggregator<K, V, A>);

impl<K: 'static, V: 'static> KGroupedTable<K, V> {
    /// `count()`: the number of rows per new key.
    pub fn count(&self) -> KTable<K, i64> {
        self.count_with(None, Materialized::default())
    }

    /// `count(Named.as(name), materialized)`.
    pub fn count_with(&self, name: Option<&str>, materialized: Materialized) -> KTable<K, i64> {
        let count = |what: &'static str, d: i64| -> AnyAggregator {
            Arc::new(move |_k, _v, c| Ok(boxed(exec::arg::<i64>(what, Some(c))? + d)))
        };
        let combine = TableCombine::Aggregate(
            Arc::new(|| boxed(0i64)),
            count("count", 1),
            count("count", -1),
        );
        self.aggregation("KTABLE-AGGREGATE-", name, materialized, (), combine)
    }

    /// `reduce(adder, subtractor)`.
    pub fn reduce(
        &self,
        adder: impl Fn(&V, &V) -> V + Send + Sync + 'static,
        subtractor: impl Fn(&V, &V) -> V + Send + Sync + 'static,
    ) -> KTable<K, V> {
        self.reduce_with(None, Materialized::default(), adder, subtractor)
    }

    /// `reduce(adder, subtractor, Named.as(name), materialized)`.
    pub fn reduce_with(
        &self,
        name: Option<&str>,
        materialized: Materialized,
        adder: impl Fn(&V, &V) -> V + Send + Sync + 'static,
        subtractor: impl Fn(&V, &V) -> V + Send + Sync + 'static,
    ) -> KTable<K, V> {
        let (add, sub) = (Arc::new(adder), Arc::new(subtractor));
        let (a, s) = (add.clone(), sub.clone());
        let f: TableReducer<V> = (Box::new(move |x, y| a(x, y)), Box::new(move |x, y| s(x, y)));
        let erase = |r: SharedReducer<V>| -> AnyReducer {
            Arc::new(move |agg, v| {
                let agg = exec::arg::<V>("aggregate", Some(agg))?;
                Ok(boxed(r(agg, exec::arg::<V>("value", Some(v))?)))
            })
        };
        let combine = TableCombine::Reduce(erase(add), erase(sub));
        self.aggregation("KTABLE-REDUCE-", name, materialized, f, combine)
    }

    /// `aggregate(initializer, adder, subtractor)`.
    pub fn aggregate<A: 'static>(
        &self,
        initializer: impl Fn() -> A + Send + Sync + 'static,
        adder: impl Fn(&K, &V, &A) -> A + Send + Sync + 'static,
        subtractor: impl Fn(&K, &V, &A) -> A + Send + Sync + 'static,
    ) -> KTable<K, A> {
        self.aggregate_with(
            None,
            Materialized::default(),
            initializer,
            adder,
            subtractor,
        )
    }

    /// `aggregate(initializer, adder, subtractor, Named.as(name), materialized)`.
    pub fn aggregate_with<A: 'static>(
        &self,
        name: Option<&str>,
        materialized: Materialized,
        initializer: impl Fn() -> A + Send + Sync + 'static,
        adder: impl Fn(&K, &V, &A) -> A + Send + Sync + 'static,
        subtractor: impl Fn(&K, &V, &A) -> A + Send + Sync + 'static,
    ) -> KTable<K, A> {
        let (init, add, sub) = (Arc::new(initializer), Arc::new(adder), Arc::new(subtractor));
        let (i, a, s) = (init.clone(), add.clone(), sub.clone());
        let f: TableAggregator<K, V, A> = (
            Box::new(move || i()),
            Box::new(move |k, v, x| a(k, v, x)),
            Box::new(move |k, v, x| s(k, v, x)),
        );
        let erase = |g: SharedAggregator<K, V, A>| -> AnyAggregator {
            Arc::new(move |k, v, agg| {
                let k = exec::arg::<K>("key", Some(k))?;
                let v = exec::arg::<V>("value", Some(v))?;
                Ok(boxed(g(k, v, exec::arg::<A>("aggregate", Some(agg))?)))
            })
        };
        let combine =
            TableCombine::Aggregate(Arc::new(move || boxed(init())), erase(add), erase(sub));
        self.aggregation("KTABLE-AGGREGATE-", name, materialized, f, combine)
    }

    /// `KGroupedTableImpl.doAggregate`: the store name (`KTABLE-AGGREGATE-STATE-STORE-…`), the
    /// repartition sink and source (named after the operation's `Named`), the processor; the
    /// topic is `<grouping name or store name>-repartition`.
    fn aggregation<A: 'static>(
        &self,
        prefix: &str,
        name: Option<&str>,
        materialized: Materialized,
        operation: impl std::any::Any + Send + Sync,
        combine: TableCombine,
    ) -> KTable<K, A> {
        let mut inner = self.inner.borrow_mut();
        let store = match &materialized.store_name {
            Some(s) => s.clone(),
            None => inner.next_store_name("KTABLE-AGGREGATE-"),
        };
        let sink = suffixed_or_next(&mut inner, name, "-sink", "KSTREAM-SINK-");
        let source = suffixed_or_next(&mut inner, name, "-source", "KSTREAM-SOURCE-");
        let func = inner.name_or_next(name, prefix);
        let topic = format!(
            "{}-repartition",
            self.grouped.name.clone().unwrap_or_else(|| store.clone())
        );
        let mut kept = self.repartition_source.borrow_mut();
        let parent = match kept.as_ref() {
            Some(first) => first.clone(),
            None => {
                inner.topology.add_internal_topic(&topic, None);
                let r =
                    inner
                        .topology
                        .add_sink(&sink, SinkTarget::Topic(topic.clone()), &[&self.node]);
                inner.record(r);
                let r = inner.topology.add_source(&source, [topic]);
                inner.record(r);
                let (key, value) = (
                    self.grouped.key_typed.as_ref(),
                    self.grouped.value_typed.as_ref(),
                );
                let (sink_exec, source_exec) = exec_table::change_topic::<K, V>(key, value);
                inner.exec(&sink, sink_exec);
                inner.exec(&source, source_exec);
                source
            }
        };
        if self.grouped.name.is_some() && kept.is_none() {
            *kept = Some(parent.clone());
        }
        drop(kept);
        let result = inner.topology.add_processor(&func, &[&parent]);
        inner.record(result);
        let result = inner
            .topology
            .add_state_store(store_spec(&store, &materialized), &[&func]);
        inner.record(result);
        inner.keep(&func, operation);
        inner.exec(
            &func,
            exec_table::aggregate::<K, A>(&store, &materialized, combine),
        );
        drop(inner);
        KTable::new(self.inner.clone(), func, View::Store(store))
    }
}

/// `NamedInternal.suffixWithOrElseGet`: `name + suffix`, or the next generated name; the
/// number is used up either way.
pub(super) fn suffixed_or_next(
    inner: &mut Inner,
    name: Option<&str>,
    suffix: &str,
    prefix: &str,
) -> String {
    let generated = inner.next_name(prefix);
    name.map_or(generated, |n| format!("{n}{suffix}"))
}
