//! Joins: `KStream`–`KTable` (`join`, `leftJoin`) and `KTable`–`KTable` (`join`, `leftJoin`,
//! `outerJoin`), as Java's `KStreamImpl.doStreamTableJoin` and `KTableImpl.doJoin` lower them:
//! the same names, the same stores connected to the join processors, and a copartition group
//! of the source nodes both sides come from.

use std::sync::Arc;

use super::exec::{self, AnyJoiner, NodeExec};
use super::exec_table::{self, AnyTableJoiner, GroupedExec, TableJoinSide};
use super::grouped::{repartition_execs, repartition_names, write_repartition, KTable};
use super::options::Materialized;
use super::serdes::{default_serde, AnySerde};
use super::stream::KStream;
use super::table::{store_spec, suffixed_or_next, View};
use super::Inner;
use crate::topology::NodeKind;

/// A stream–table inner joiner: stream value and table value.
pub type ValueJoiner<V, VO, VR> = Box<dyn Fn(&V, &VO) -> VR + Send + Sync>;
/// A left joiner: the left value and the right one if there is one.
pub type LeftValueJoiner<V, VO, VR> = Box<dyn Fn(&V, Option<&VO>) -> VR + Send + Sync>;
/// An outer joiner: either side may be missing.
pub type OuterValueJoiner<V, VO, VR> = Box<dyn Fn(Option<&V>, Option<&VO>) -> VR + Send + Sync>;

/// What the runner needs of a stream–table join besides the table's store and serdes.
struct JoinRun {
    joiner: AnyJoiner,
    left: bool,
    stream_value: Option<AnySerde>,
}

impl JoinRun {
    fn new<V: 'static>(joiner: AnyJoiner, left: bool) -> Self {
        Self {
            joiner,
            left,
            stream_value: default_serde::<V>(),
        }
    }

    /// The join's exec: it reads the table's one store with the serdes the table writes it
    /// with (a `table()` / `toTable()` source's, an aggregation's, or a `filter` /
    /// `mapValues` materialized under a name); a table read any other way (a join result,
    /// a table filter or `mapValues` without its own store) does not run yet.
    fn exec(self, inner: &Inner, table_node: &str, stores: &[String]) -> NodeExec {
        let serdes = match inner.execs.get(table_node) {
            Some(NodeExec::TableSource { key, value, .. }) => Some((key, value)),
            Some(NodeExec::Aggregate { key, aggregate, .. }) => Some((key, aggregate)),
            // A table operation materialized under a name, and a grouped table's aggregation.
            Some(NodeExec::Table { store: Some(s), .. }) => Some((&s.key, &s.value)),
            Some(NodeExec::Grouped(GroupedExec::Aggregate { key, aggregate, .. })) => {
                Some((key, aggregate))
            }
            _ => None,
        };
        match (serdes, stores) {
            (Some((key, value)), [store]) => NodeExec::StreamTableJoin {
                store: store.clone(),
                key: key.clone(),
                value: value.clone(),
                stream_value: self.stream_value,
                left: self.left,
                joiner: self.joiner,
            },
            _ => NodeExec::Unavailable(format!(
                "a stream-table join runs with a table() or an aggregation only, not with \
                 table {table_node}"
            )),
        }
    }
}

/// Java's `subTopologySourceNodes`: the source nodes `node` reads from in its subtopology
/// (walking parents up to sources; a repartition source ends the walk).
pub(super) fn source_nodes(inner: &Inner, node: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    let mut todo = vec![node.to_string()];
    while let Some(name) = todo.pop() {
        if seen.contains(&name) {
            continue;
        }
        seen.push(name.clone());
        let Some(n) = inner.topology.node(&name) else {
            continue;
        };
        match n.kind {
            NodeKind::Source { .. } => found.push(name),
            _ => todo.extend(n.predecessors.iter().cloned()),
        }
    }
    found
}

/// `ensureCopartitionWith`: one copartition group of the sources of `a` and `b`.
fn copartition(inner: &mut Inner, a: &str, b: &str) {
    let mut sources = source_nodes(inner, a);
    for s in source_nodes(inner, b) {
        if !sources.contains(&s) {
            sources.push(s);
        }
    }
    copartition_group(inner, sources);
}

/// `copartitionSources(sources)`.
fn copartition_group(inner: &mut Inner, sources: Vec<String>) {
    let refs: Vec<&str> = sources.iter().map(String::as_str).collect();
    let result = inner.topology.copartition_sources(&refs);
    inner.record(result);
}

impl<K: 'static, V: 'static> KStream<K, V> {
    /// `join(table, joiner)`: each stream record joined with the table's current value for its
    /// key (no value, no output).
    pub fn join<VT: 'static, VR: 'static>(
        &self,
        table: &KTable<K, VT>,
        joiner: impl Fn(&V, &VT) -> VR + Send + Sync + 'static,
    ) -> KStream<K, VR> {
        self.join_with(table, None, joiner)
    }

    /// `join(table, joiner, Joined.as(name))`: the name names the join processor and, after
    /// a key change, the repartition topic (`<name>-repartition`).
    pub fn join_with<VT: 'static, VR: 'static>(
        &self,
        table: &KTable<K, VT>,
        name: Option<&str>,
        joiner: impl Fn(&V, &VT) -> VR + Send + Sync + 'static,
    ) -> KStream<K, VR> {
        let joiner = Arc::new(joiner);
        let kept = joiner.clone();
        let f: ValueJoiner<V, VT, VR> = Box::new(move |v, t| kept(v, t));
        let any: AnyJoiner = Arc::new(move |v, t| {
            let t = t.ok_or_else(|| "an inner join without a table value".to_string())?;
            let t = exec::arg::<VT>("table value", Some(t))?;
            Ok(exec::boxed(joiner(exec::arg::<V>("value", v)?, t)))
        });
        let run = JoinRun::new::<V>(any, false);
        self.stream_table_join(&table.node, &table.view, name, "KSTREAM-JOIN-", f, run)
    }

    /// `leftJoin(table, joiner)`: every stream record, with the table's value if any.
    pub fn left_join<VT: 'static, VR: 'static>(
        &self,
        table: &KTable<K, VT>,
        joiner: impl Fn(&V, Option<&VT>) -> VR + Send + Sync + 'static,
    ) -> KStream<K, VR> {
        self.left_join_with(table, None, joiner)
    }

    /// `leftJoin(table, joiner, Joined.as(name))`.
    pub fn left_join_with<VT: 'static, VR: 'static>(
        &self,
        table: &KTable<K, VT>,
        name: Option<&str>,
        joiner: impl Fn(&V, Option<&VT>) -> VR + Send + Sync + 'static,
    ) -> KStream<K, VR> {
        let joiner = Arc::new(joiner);
        let kept = joiner.clone();
        let f: LeftValueJoiner<V, VT, VR> = Box::new(move |v, t| kept(v, t));
        let any: AnyJoiner = Arc::new(move |v, t| {
            let t = t
                .map(|t| exec::arg::<VT>("table value", Some(t)))
                .transpose()?;
            Ok(exec::boxed(joiner(exec::arg::<V>("value", v)?, t)))
        });
        let run = JoinRun::new::<V>(any, true);
        self.stream_table_join(&table.node, &table.view, name, "KSTREAM-LEFTJOIN-", f, run)
    }

    /// Repartitions first if the key changed (topic `<name or this node>-repartition`), then
    /// copartitions with the table, names the join, materializes the table and connects its
    /// stores to the join processor.
    fn stream_table_join<VR>(
        &self,
        table_node: &str,
        view: &View,
        name: Option<&str>,
        prefix: &str,
        operation: impl std::any::Any + Send + Sync,
        run: JoinRun,
    ) -> KStream<K, VR> {
        let mut inner = self.inner.borrow_mut();
        let mut parent = self.node.clone();
        let mut sources = None;
        if self.repartition_required {
            let (source, reused) = self.join_repartition(&mut inner, name);
            parent = source;
            if reused {
                // Java's copartition group names the new (never written) source: only the
                // table's sources count.
                sources = Some(source_nodes(&inner, table_node));
            }
        }
        match sources {
            Some(sources) => copartition_group(&mut inner, sources),
            None => copartition(&mut inner, &parent, table_node),
        }
        let join = inner.name_or_next(name, prefix);
        let stores = view.store_names(&mut inner);
        let result = inner.topology.add_processor(&join, &[&parent]);
        inner.record(result);
        let refs: Vec<&str> = stores.iter().map(String::as_str).collect();
        let result = inner
            .topology
            .connect_processor_and_state_stores(&join, &refs);
        inner.record(result);
        inner.keep(&join, operation);
        let exec = run.exec(&inner, table_node, &stores);
        inner.exec(&join, exec);
        drop(inner);
        KStream::new(self.inner.clone(), join, false)
    }
}

impl<K: 'static, V: 'static> KStream<K, V> {
    /// `repartitionForJoin`: the names are always generated (numbers used up); an unnamed
    /// join of a stream that a join repartitioned before (named or not) reads the latest
    /// such repartition source again (`true`: reused).
    fn join_repartition(&self, inner: &mut Inner, name: Option<&str>) -> (String, bool) {
        let step = repartition_names(inner, name.unwrap_or(&self.node));
        let cached = inner
            .marks
            .join_repartitions
            .iter()
            .find(|(node, _)| *node == self.node)
            .map(|(_, source)| source.clone());
        match (name, cached) {
            (None, Some(source)) => (source, true),
            _ => {
                inner.marks.step(step.clone());
                let (filter, sink) = (step.filter.clone(), step.sink.clone());
                let source = write_repartition(inner, step, &self.node);
                // Java's `repartitionForJoin` writes with the stream's serdes (here: the
                // types' built-in ones).
                repartition_execs::<K, V>(inner, [&filter, &sink, &source], None, None);
                // Java keeps the latest repartition node, named join or not.
                let cache = &mut inner.marks.join_repartitions;
                cache.retain(|(node, _)| *node != self.node);
                cache.push((self.node.clone(), source.clone()));
                (source, false)
            }
        }
    }
}

/// Which table–table join.
#[derive(Clone, Copy, PartialEq, Eq)]
enum JoinKind {
    Inner,
    Left,
    Outer,
}

impl<K: 'static, V: 'static> KTable<K, V> {
    /// `join(other, joiner)`: a table of the keys both tables have.
    pub fn join<VO: 'static, VR: 'static>(
        &self,
        other: &KTable<K, VO>,
        joiner: impl Fn(&V, &VO) -> VR + Send + Sync + 'static,
    ) -> KTable<K, VR> {
        self.join_with(other, None, None, joiner)
    }

    /// `join(other, joiner, Named.as(name), materialized)`. A `materialized`, named or not,
    /// gives the join its own store (unnamed: `KTABLE-MERGE-STATE-STORE-…`), as in Java.
    pub fn join_with<VO: 'static, VR: 'static>(
        &self,
        other: &KTable<K, VO>,
        name: Option<&str>,
        materialized: Option<Materialized>,
        joiner: impl Fn(&V, &VO) -> VR + Send + Sync + 'static,
    ) -> KTable<K, VR> {
        let j = Arc::new(joiner);
        let k = j.clone();
        let f: ValueJoiner<V, VO, VR> = Box::new(move |a, b| k(a, b));
        let any: AnyTableJoiner = Arc::new(move |a, b| {
            let a = exec::arg::<V>("value", a)?;
            Ok(exec::boxed(j(a, exec::arg::<VO>("other value", b)?)))
        });
        self.table_join(other, name, materialized, JoinKind::Inner, f, any)
    }

    /// `leftJoin(other, joiner)`: every key of this table, with the other's value if any.
    pub fn left_join<VO: 'static, VR: 'static>(
        &self,
        other: &KTable<K, VO>,
        joiner: impl Fn(&V, Option<&VO>) -> VR + Send + Sync + 'static,
    ) -> KTable<K, VR> {
        self.left_join_with(other, None, None, joiner)
    }

    /// `leftJoin(other, joiner, Named.as(name), materialized)`.
    pub fn left_join_with<VO: 'static, VR: 'static>(
        &self,
        other: &KTable<K, VO>,
        name: Option<&str>,
        materialized: Option<Materialized>,
        joiner: impl Fn(&V, Option<&VO>) -> VR + Send + Sync + 'static,
    ) -> KTable<K, VR> {
        let j = Arc::new(joiner);
        let k = j.clone();
        let f: LeftValueJoiner<V, VO, VR> = Box::new(move |a, b| k(a, b));
        let any: AnyTableJoiner = Arc::new(move |a, b| {
            let a = exec::arg::<V>("value", a)?;
            let b = b
                .map(|b| exec::arg::<VO>("other value", Some(b)))
                .transpose()?;
            Ok(exec::boxed(j(a, b)))
        });
        self.table_join(other, name, materialized, JoinKind::Left, f, any)
    }

    /// `outerJoin(other, joiner)`: every key of either table.
    pub fn outer_join<VO: 'static, VR: 'static>(
        &self,
        other: &KTable<K, VO>,
        joiner: impl Fn(Option<&V>, Option<&VO>) -> VR + Send + Sync + 'static,
    ) -> KTable<K, VR> {
        self.outer_join_with(other, None, None, joiner)
    }

    /// `outerJoin(other, joiner, Named.as(name), materialized)`.
    pub fn outer_join_with<VO: 'static, VR: 'static>(
        &self,
        other: &KTable<K, VO>,
        name: Option<&str>,
        materialized: Option<Materialized>,
        joiner: impl Fn(Option<&V>, Option<&VO>) -> VR + Send + Sync + 'static,
    ) -> KTable<K, VR> {
        let j = Arc::new(joiner);
        let k = j.clone();
        let f: OuterValueJoiner<V, VO, VR> = Box::new(move |a, b| k(a, b));
        let any: AnyTableJoiner = Arc::new(move |a, b| {
            let a = a.map(|a| exec::arg::<V>("value", Some(a))).transpose()?;
            let b = b
                .map(|b| exec::arg::<VO>("other value", Some(b)))
                .transpose()?;
            Ok(exec::boxed(j(a, b)))
        });
        self.table_join(other, name, materialized, JoinKind::Outer, f, any)
    }

    /// `KTableImpl.doJoin` + `KTableKTableJoinNode.writeToTopology`: merge name, copartition
    /// group, old values from the outer sides, `-join-this` / `-join-other` processors (each
    /// connected to the other side's stores) and the merge processor (with the join's store
    /// if materialized). The joiner is kept with the merge processor.
    fn table_join<VO, VR: 'static>(
        &self,
        other: &KTable<K, VO>,
        name: Option<&str>,
        materialized: Option<Materialized>,
        kind: JoinKind,
        operation: impl std::any::Any + Send + Sync,
        joiner: AnyTableJoiner,
    ) -> KTable<K, VR> {
        let mut inner = self.inner.borrow_mut();
        let store = materialized.as_ref().map(|m| {
            let n = match &m.store_name {
                Some(s) => s.clone(),
                None => inner.next_store_name("KTABLE-MERGE-"),
            };
            store_spec(&n, m)
        });
        let merge = inner.name_or_next(name, "KTABLE-MERGE-");
        copartition(&mut inner, &self.node, &other.node);
        if kind != JoinKind::Inner {
            self.view.materialize(&mut inner);
        }
        if kind == JoinKind::Outer {
            other.view.materialize(&mut inner);
        }
        let this_name = suffixed_or_next(&mut inner, name, "-join-this", "KTABLE-JOINTHIS-");
        let other_name = suffixed_or_next(&mut inner, name, "-join-other", "KTABLE-JOINOTHER-");
        let this_stores = self.view.store_names(&mut inner);
        let other_stores = other.view.store_names(&mut inner);
        let r = inner.topology.add_processor(&this_name, &[&self.node]);
        inner.record(r);
        let r = inner.topology.add_processor(&other_name, &[&other.node]);
        inner.record(r);
        let r = inner
            .topology
            .add_processor(&merge, &[&this_name, &other_name]);
        inner.record(r);
        let sides = match kind {
            JoinKind::Inner => (TableJoinSide::Inner, TableJoinSide::Inner),
            JoinKind::Left => (TableJoinSide::Left, TableJoinSide::Right),
            JoinKind::Outer => (TableJoinSide::Outer, TableJoinSide::Outer),
        };
        let this_side = (this_name.as_str(), &self.node, this_stores.as_slice());
        let other_side = (other_name.as_str(), &other.node, other_stores.as_slice());
        exec_table::table_join_execs::<K, VR>(
            &mut inner,
            [this_side, other_side],
            sides,
            joiner,
            (
                &merge,
                materialized.as_ref(),
                store.as_ref().map(|s| s.name.as_str()),
            ),
        );
        let view = match store {
            Some(spec) => {
                let view = View::Store(spec.name.clone());
                let r = inner.topology.add_state_store(spec, &[&merge]);
                inner.record(r);
                view
            }
            None => View::Union(vec![self.view.clone(), other.view.clone()]),
        };
        connect(&mut inner, &this_name, &other_stores);
        connect(&mut inner, &other_name, &this_stores);
        inner.keep(&merge, operation);
        drop(inner);
        KTable::new(self.inner.clone(), merge, view)
    }
}

fn connect(inner: &mut Inner, processor: &str, stores: &[String]) {
    let refs: Vec<&str> = stores.iter().map(String::as_str).collect();
    let result = inner
        .topology
        .connect_processor_and_state_stores(processor, &refs);
    inner.record(result);
}
