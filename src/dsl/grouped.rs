//! `KGroupedStream` (count, reduce, aggregate) and the `KTable` they produce.

use std::cell::RefCell;
use std::marker::PhantomData;
use std::rc::Rc;
use std::sync::Arc;

use super::exec::{self, boxed, resolve_serde, Combine, NodeExec};
use super::options::{Grouped, Materialized};
use super::serdes::AnySerde;
use super::stream::KStream;
use super::Shared;
use crate::topology::{SinkTarget, StoreSpec};

/// Java's `KGroupedStream<K, V>`: records grouped by key, ready to aggregate.
pub struct KGroupedStream<K, V> {
    inner: Shared,
    node: String,
    repartition_required: bool,
    grouped: Grouped,
    /// With a user-named grouping, Java builds its repartition step once and every later
    /// aggregation of this grouped stream reads the same repartition source.
    repartition_source: Rc<RefCell<Option<String>>>,
    _types: PhantomData<fn() -> (K, V)>,
}

/// A reducer: combines the aggregate so far with a new value.
pub type Reducer<V> = Box<dyn Fn(&V, &V) -> V + Send + Sync>;
/// An initializer: the first aggregate of a key.
pub type Initializer<A> = Box<dyn Fn() -> A + Send + Sync>;
/// An aggregator: the new aggregate from key, value and the aggregate so far.
pub type Aggregator<K, V, A> = Box<dyn Fn(&K, &V, &A) -> A + Send + Sync>;

/// What the nodes of a repartition step (`[filter, sink, source]`) do: drop null keys, write
/// with the key and value serdes (given, else the types' built-in ones), read back with them.
pub(super) fn repartition_execs<K: 'static, V: 'static>(
    inner: &mut super::Inner,
    [filter, sink, source]: [&str; 3],
    key: Option<&AnySerde>,
    value: Option<&AnySerde>,
) {
    inner.exec(source, exec::source::<K, V>(key, value));
    let drop = match resolve_serde::<K>(key, "key") {
        Ok(key) => NodeExec::DropNullKeys { key },
        Err(e) => NodeExec::Unavailable(e),
    };
    inner.exec(filter, drop);
    inner.exec(sink, exec::sink::<K, V>(key, value, None));
}

impl<K: 'static, V: 'static> KGroupedStream<K, V> {
    pub(super) fn new(
        inner: Shared,
        node: String,
        repartition_required: bool,
        grouped: Grouped,
    ) -> Self {
        Self {
            inner,
            node,
            repartition_required,
            grouped,
            repartition_source: Rc::new(RefCell::new(None)),
            _types: PhantomData,
        }
    }

    /// `count()`: the number of records per key.
    pub fn count(&self) -> KTable<K, i64> {
        self.count_with_serdes(None, Materialized::default())
    }

    fn count_with_serdes(&self, name: Option<&str>, materialized: Materialized) -> KTable<K, i64> {
        let combine = Combine::Aggregate(
            Arc::new(|| boxed(0i64)),
            Arc::new(|_k, _v, count| Ok(boxed(exec::arg::<i64>("count", Some(count))? + 1))),
        );
        self.aggregation("KSTREAM-AGGREGATE-", name, materialized, (), combine, None)
    }

    /// `count(Named.as(name), materialized)`. As in Java, a `materialized` without a store
    /// name uses up one extra number of the name counter.
    pub fn count_with(&self, name: Option<&str>, materialized: Materialized) -> KTable<K, i64> {
        if materialized.store_name.is_none() {
            self.inner
                .borrow_mut()
                .next_store_name("KSTREAM-AGGREGATE-");
        }
        self.count_with_serdes(name, materialized)
    }

    /// `reduce(reducer)`.
    pub fn reduce(&self, reducer: impl Fn(&V, &V) -> V + Send + Sync + 'static) -> KTable<K, V> {
        self.reduce_with(None, Materialized::default(), reducer)
    }

    /// `reduce(reducer, Named.as(name), materialized)`.
    pub fn reduce_with(
        &self,
        name: Option<&str>,
        materialized: Materialized,
        reducer: impl Fn(&V, &V) -> V + Send + Sync + 'static,
    ) -> KTable<K, V> {
        let r = Arc::new(reducer);
        let q = r.clone();
        let f: Reducer<V> = Box::new(move |a, v| q(a, v));
        let combine = Combine::Reduce(Arc::new(move |a, v| {
            Ok(boxed(r(
                exec::arg::<V>("aggregate", Some(a))?,
                exec::arg::<V>("value", Some(v))?,
            )))
        }));
        let fallback = self.grouped.value_typed.clone();
        self.aggregation("KSTREAM-REDUCE-", name, materialized, f, combine, fallback)
    }

    /// `aggregate(initializer, aggregator)`.
    pub fn aggregate<A: 'static>(
        &self,
        initializer: impl Fn() -> A + Send + Sync + 'static,
        aggregator: impl Fn(&K, &V, &A) -> A + Send + Sync + 'static,
    ) -> KTable<K, A> {
        self.aggregate_with(None, Materialized::default(), initializer, aggregator)
    }

    /// `aggregate(initializer, aggregator, Named.as(name), materialized)`.
    pub fn aggregate_with<A: 'static>(
        &self,
        name: Option<&str>,
        materialized: Materialized,
        initializer: impl Fn() -> A + Send + Sync + 'static,
        aggregator: impl Fn(&K, &V, &A) -> A + Send + Sync + 'static,
    ) -> KTable<K, A> {
        let i = Arc::new(initializer);
        let a = Arc::new(aggregator);
        let (j, b) = (i.clone(), a.clone());
        let init: Initializer<A> = Box::new(move || j());
        let agg: Aggregator<K, V, A> = Box::new(move |k, v, s| b(k, v, s));
        let combine = Combine::Aggregate(
            Arc::new(move || boxed(i())),
            Arc::new(move |k, v, s| {
                Ok(boxed(a(
                    exec::arg::<K>("key", Some(k))?,
                    exec::arg::<V>("value", Some(v))?,
                    exec::arg::<A>("aggregate", Some(s))?,
                )))
            }),
        );
        self.aggregation(
            "KSTREAM-AGGREGATE-",
            name,
            materialized,
            (init, agg),
            combine,
            None,
        )
    }

    /// Java's `MaterializedInternal` + `GroupedStreamAggregateBuilder.build`: the store name,
    /// the processor name, the repartition step if needed, the processor and its store.
    fn aggregation<A: 'static>(
        &self,
        prefix: &str,
        name: Option<&str>,
        materialized: Materialized,
        operation: impl std::any::Any + Send + Sync,
        combine: Combine,
        aggregate_serde: Option<AnySerde>,
    ) -> KTable<K, A> {
        let mut inner = self.inner.borrow_mut();
        let store = match &materialized.store_name {
            Some(s) => s.clone(),
            None => inner.next_store_name(prefix),
        };
        let name = inner.name_or_next(name, prefix);
        let mut parent = self.node.clone();
        if self.repartition_required {
            let topic_prefix = self.grouped.name.clone().unwrap_or_else(|| store.clone());
            let step = repartition_names(&mut inner, &topic_prefix);
            // A named grouping writes its repartition step once; later aggregations of the
            // same grouped stream read it (Java reuses the node, the names are used up).
            let mut kept = self.repartition_source.borrow_mut();
            parent = match kept.as_ref() {
                Some(first) => first.clone(),
                None => {
                    let (filter, sink) = (step.filter.clone(), step.sink.clone());
                    inner.marks.step(step.clone());
                    let source = write_repartition(&mut inner, step, &self.node);
                    let (key, value) = (
                        self.grouped.key_typed.as_ref(),
                        self.grouped.value_typed.as_ref(),
                    );
                    repartition_execs::<K, V>(&mut inner, [&filter, &sink, &source], key, value);
                    source
                }
            };
            if self.grouped.name.is_some() && kept.is_none() {
                *kept = Some(parent.clone());
            }
        }
        let result = inner.topology.add_processor(&name, &[&parent]);
        inner.record(result);
        let key = materialized
            .key_typed
            .as_ref()
            .or(self.grouped.key_typed.as_ref());
        let value = materialized
            .value_typed
            .as_ref()
            .or(aggregate_serde.as_ref());
        let exec = match (
            resolve_serde::<K>(key, "key"),
            resolve_serde::<A>(value, "aggregate"),
        ) {
            (Ok(key), Ok(aggregate)) => NodeExec::Aggregate {
                store: store.clone(),
                key,
                aggregate,
                input_value: resolve_serde::<V>(self.grouped.value_typed.as_ref(), "value").ok(),
                combine,
                cached: materialized.caching_enabled,
            },
            (Err(e), _) | (_, Err(e)) => NodeExec::Unavailable(e),
        };
        inner.exec(&name, exec);
        let spec = StoreSpec {
            name: store.clone(),
            logging_enabled: materialized.logging_enabled,
            changelog_configs: materialized.changelog_configs.clone(),
        };
        let result = inner.topology.add_state_store(spec, &[&name]);
        inner.record(result);
        inner.keep(&name, operation);
        drop(inner);
        KTable::new(self.inner.clone(), name, super::table::View::Store(store))
    }
}

/// The names of one repartition step: topic, sink, filter, source.
#[derive(Clone, Debug)]
pub(super) struct RepartitionStep {
    pub(super) topic: String,
    pub(super) sink: String,
    pub(super) filter: String,
    pub(super) source: String,
}

/// `KStreamImpl.createRepartitionedSource`: the topic `<prefix>-repartition`, and the sink,
/// filter and source names, generated (and always used up) or derived from the topic.
pub(super) fn repartition_names(inner: &mut super::Inner, prefix: &str) -> RepartitionStep {
    let topic = if prefix.ends_with("-repartition") {
        prefix.to_string()
    } else {
        format!("{prefix}-repartition")
    };
    let sink = inner.next_name("KSTREAM-SINK-");
    let filter = inner.next_name("KSTREAM-FILTER-");
    let source = inner.next_name("KSTREAM-SOURCE-");
    if is_generated(prefix) {
        RepartitionStep {
            topic,
            sink,
            filter,
            source,
        }
    } else {
        RepartitionStep {
            sink: format!("{topic}-sink"),
            filter: format!("{topic}-filter"),
            source: format!("{topic}-source"),
            topic,
        }
    }
}

/// `OptimizableRepartitionNode.writeToTopology`: internal topic, filter after `parent`,
/// sink to the topic, source from it. Returns the source's name.
pub(super) fn write_repartition(
    inner: &mut super::Inner,
    step: RepartitionStep,
    parent: &str,
) -> String {
    inner.topology.add_internal_topic(&step.topic, None);
    let r = inner.topology.add_processor(&step.filter, &[parent]);
    inner.record(r);
    let r = inner.topology.add_sink(
        &step.sink,
        SinkTarget::Topic(step.topic.clone()),
        &[&step.filter],
    );
    inner.record(r);
    let r = inner.topology.add_source(&step.source, [step.topic]);
    inner.record(r);
    step.source
}

/// Java's `prefix.matches("KSTREAM.*-[0-9]{10}")`.
fn is_generated(prefix: &str) -> bool {
    let Some(rest) = prefix.strip_prefix("KSTREAM") else {
        return false;
    };
    let bytes = rest.as_bytes();
    bytes.len() >= 11
        && bytes[bytes.len() - 11] == b'-'
        && bytes[bytes.len() - 10..].iter().all(u8::is_ascii_digit)
}

/// Java's `KTable<K, V>`: a changelog stream (a table source or an aggregation's result).
pub struct KTable<K, V> {
    pub(super) inner: Shared,
    pub(super) node: String,
    /// Where a join or a downstream operation reads this table's values (Java's
    /// `valueGetterSupplier`); see [`super::table::View`].
    pub(super) view: super::table::View,
    _types: PhantomData<fn() -> (K, V)>,
}

impl<K, V> KTable<K, V> {
    pub(super) fn new(inner: Shared, node: String, view: super::table::View) -> Self {
        Self {
            inner,
            node,
            view,
            _types: PhantomData,
        }
    }

    /// The name of the node this table comes out of.
    pub fn node_name(&self) -> &str {
        &self.node
    }
}

impl<K: 'static, V: 'static> KTable<K, V> {
    /// `toStream()`: the table's updates as a stream.
    pub fn to_stream(&self) -> KStream<K, V> {
        self.to_stream_named(None)
    }

    /// `toStream(Named.as(name))`.
    pub fn to_stream_named(&self, name: Option<&str>) -> KStream<K, V> {
        let mut inner = self.inner.borrow_mut();
        let name = inner.name_or_next(name, "KTABLE-TOSTREAM-");
        let result = inner.topology.add_processor(&name, &[&self.node]);
        inner.record(result);
        inner.exec(&name, NodeExec::ToStream);
        drop(inner);
        KStream::new(self.inner.clone(), name, false)
    }
}

#[cfg(test)]
mod tests {
    use super::is_generated;

    #[test]
    fn generated_names_are_recognised_as_java_does() {
        assert!(is_generated("KSTREAM-AGGREGATE-STATE-STORE-0000000003"));
        assert!(is_generated("KSTREAM-X-0123456789"));
        assert!(!is_generated("KSTREAM-X-012345678"));
        assert!(!is_generated("counts-store"));
        assert!(!is_generated("KSTREAM-X0123456789"));
    }
}
