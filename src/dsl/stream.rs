//! `KStream`: stateless record-by-record operations, sinks, and grouping.

use std::marker::PhantomData;
use std::sync::Arc;

use super::exec::{self, boxed, erase1, erase2, NodeExec};
use super::grouped::KGroupedStream;
use super::options::{Grouped, Produced};
use super::Shared;
use crate::topology::SinkTarget;

/// Java's `KStream<K, V>`: a handle on one node of the program; operations add nodes after it.
pub struct KStream<K, V> {
    pub(super) inner: Shared,
    /// The node this stream's records come out of.
    pub(super) node: String,
    /// A key-changing operation came before: an aggregation must repartition first.
    pub(super) repartition_required: bool,
    _types: PhantomData<fn() -> (K, V)>,
}

impl<K, V> Clone for KStream<K, V> {
    fn clone(&self) -> Self {
        Self::new(
            self.inner.clone(),
            self.node.clone(),
            self.repartition_required,
        )
    }
}

/// A record filter: `true` keeps the record.
pub type Predicate<K, V> = Box<dyn Fn(&K, &V) -> bool + Send + Sync>;
/// A key-value mapper.
pub type KeyValueMapper<K, V, K2, V2> = Box<dyn Fn(&K, &V) -> (K2, V2) + Send + Sync>;
/// A value mapper.
pub type ValueMapper<V, V2> = Box<dyn Fn(&V) -> V2 + Send + Sync>;
/// A key-value to many key-values mapper.
pub type FlatKeyValueMapper<K, V, K2, V2> = Box<dyn Fn(&K, &V) -> Vec<(K2, V2)> + Send + Sync>;
/// A value to many values mapper.
pub type FlatValueMapper<V, V2> = Box<dyn Fn(&V) -> Vec<V2> + Send + Sync>;
/// A key selector.
pub type KeySelector<K, V, K2> = Box<dyn Fn(&K, &V) -> K2 + Send + Sync>;
/// An action on each record.
pub type ForeachAction<K, V> = Box<dyn Fn(&K, &V) + Send + Sync>;
/// A topic chosen per record.
pub type TopicNameExtractor<K, V> = Box<dyn Fn(&K, &V) -> String + Send + Sync>;

impl<K, V> KStream<K, V> {
    pub(super) fn new(inner: Shared, node: String, repartition_required: bool) -> Self {
        Self {
            inner,
            node,
            repartition_required,
            _types: PhantomData,
        }
    }

    /// The name of the node this stream comes out of.
    pub fn node_name(&self) -> &str {
        &self.node
    }
}

impl<K: 'static, V: 'static> KStream<K, V> {
    /// Adds a processor named `name` (or `prefix` + the next number) after this stream's
    /// node, keeps `operation` with it, and returns the stream coming out of it.
    pub(super) fn processor<K2, V2>(
        &self,
        prefix: &str,
        name: Option<&str>,
        key_changing: bool,
        operation: impl std::any::Any + Send + Sync,
    ) -> KStream<K2, V2> {
        let mut inner = self.inner.borrow_mut();
        let name = inner.name_or_next(name, prefix);
        let result = inner.topology.add_processor(&name, &[&self.node]);
        inner.record(result);
        inner.keep(&name, operation);
        inner.mark_changing(&name, prefix, key_changing);
        drop(inner);
        KStream {
            inner: self.inner.clone(),
            node: name,
            repartition_required: self.repartition_required || key_changing,
            _types: PhantomData,
        }
    }

    /// Records what node `node` does, for the runner.
    fn exec(&self, node: &str, exec: NodeExec) {
        self.inner.borrow_mut().exec(node, exec);
    }

    /// `filter(predicate)`: keeps the records for which `predicate` is true.
    pub fn filter(&self, predicate: impl Fn(&K, &V) -> bool + Send + Sync + 'static) -> Self {
        self.filter_named(None, predicate)
    }

    /// `filter(predicate, Named.as(name))`.
    pub fn filter_named(
        &self,
        name: Option<&str>,
        predicate: impl Fn(&K, &V) -> bool + Send + Sync + 'static,
    ) -> Self {
        let p = Arc::new(predicate);
        let q = p.clone();
        let f: Predicate<K, V> = Box::new(move |k, v| q(k, v));
        let out = self.processor("KSTREAM-FILTER-", name, false, f);
        self.exec(&out.node, NodeExec::Filter(erase2(move |k, v| p(k, v))));
        out
    }

    /// `filterNot(predicate)`: drops the records for which `predicate` is true.
    pub fn filter_not(&self, predicate: impl Fn(&K, &V) -> bool + Send + Sync + 'static) -> Self {
        self.filter_not_named(None, predicate)
    }

    /// `filterNot(predicate, Named.as(name))`.
    pub fn filter_not_named(
        &self,
        name: Option<&str>,
        predicate: impl Fn(&K, &V) -> bool + Send + Sync + 'static,
    ) -> Self {
        let p = Arc::new(predicate);
        let q = p.clone();
        let f: Predicate<K, V> = Box::new(move |k, v| !q(k, v));
        let out = self.processor("KSTREAM-FILTER-", name, false, f);
        self.exec(&out.node, NodeExec::Filter(erase2(move |k, v| !p(k, v))));
        out
    }

    /// `map(mapper)`: a new key and value per record (the key changes: repartitions before an
    /// aggregation).
    pub fn map<K2: 'static, V2: 'static>(
        &self,
        mapper: impl Fn(&K, &V) -> (K2, V2) + Send + Sync + 'static,
    ) -> KStream<K2, V2> {
        self.map_named(None, mapper)
    }

    /// `map(mapper, Named.as(name))`.
    pub fn map_named<K2: 'static, V2: 'static>(
        &self,
        name: Option<&str>,
        mapper: impl Fn(&K, &V) -> (K2, V2) + Send + Sync + 'static,
    ) -> KStream<K2, V2> {
        let m = Arc::new(mapper);
        let n = m.clone();
        let f: KeyValueMapper<K, V, K2, V2> = Box::new(move |k, v| n(k, v));
        let out = self.processor("KSTREAM-MAP-", name, true, f);
        let e = erase2(move |k: &K, v: &V| {
            let (k2, v2) = m(k, v);
            (boxed(k2), boxed(v2))
        });
        self.exec(&out.node, NodeExec::Map(e));
        out
    }

    /// `mapValues(mapper)`: a new value per record, same key.
    pub fn map_values<V2: 'static>(
        &self,
        mapper: impl Fn(&V) -> V2 + Send + Sync + 'static,
    ) -> KStream<K, V2> {
        self.map_values_named(None, mapper)
    }

    /// `mapValues(mapper, Named.as(name))`.
    pub fn map_values_named<V2: 'static>(
        &self,
        name: Option<&str>,
        mapper: impl Fn(&V) -> V2 + Send + Sync + 'static,
    ) -> KStream<K, V2> {
        let m = Arc::new(mapper);
        let n = m.clone();
        let f: ValueMapper<V, V2> = Box::new(move |v| n(v));
        let out = self.processor("KSTREAM-MAPVALUES-", name, false, f);
        let e = erase1(move |v: &V| boxed(m(v)));
        self.exec(&out.node, NodeExec::MapValues(e));
        out
    }

    /// `flatMap(mapper)`: zero or more records per record (the key changes).
    pub fn flat_map<K2: 'static, V2: 'static>(
        &self,
        mapper: impl Fn(&K, &V) -> Vec<(K2, V2)> + Send + Sync + 'static,
    ) -> KStream<K2, V2> {
        self.flat_map_named(None, mapper)
    }

    /// `flatMap(mapper, Named.as(name))`.
    pub fn flat_map_named<K2: 'static, V2: 'static>(
        &self,
        name: Option<&str>,
        mapper: impl Fn(&K, &V) -> Vec<(K2, V2)> + Send + Sync + 'static,
    ) -> KStream<K2, V2> {
        let m = Arc::new(mapper);
        let n = m.clone();
        let f: FlatKeyValueMapper<K, V, K2, V2> = Box::new(move |k, v| n(k, v));
        let out = self.processor("KSTREAM-FLATMAP-", name, true, f);
        let e = erase2(move |k: &K, v: &V| {
            m(k, v)
                .into_iter()
                .map(|(k2, v2)| (boxed(k2), boxed(v2)))
                .collect()
        });
        self.exec(&out.node, NodeExec::FlatMap(e));
        out
    }

    /// `flatMapValues(mapper)`: zero or more values per record, same key.
    pub fn flat_map_values<V2: 'static>(
        &self,
        mapper: impl Fn(&V) -> Vec<V2> + Send + Sync + 'static,
    ) -> KStream<K, V2> {
        self.flat_map_values_named(None, mapper)
    }

    /// `flatMapValues(mapper, Named.as(name))`.
    pub fn flat_map_values_named<V2: 'static>(
        &self,
        name: Option<&str>,
        mapper: impl Fn(&V) -> Vec<V2> + Send + Sync + 'static,
    ) -> KStream<K, V2> {
        let m = Arc::new(mapper);
        let n = m.clone();
        let f: FlatValueMapper<V, V2> = Box::new(move |v| n(v));
        let out = self.processor("KSTREAM-FLATMAPVALUES-", name, false, f);
        let e = erase1(move |v: &V| m(v).into_iter().map(boxed).collect());
        self.exec(&out.node, NodeExec::FlatMapValues(e));
        out
    }

    /// `selectKey(mapper)`: a new key per record (repartitions before an aggregation).
    pub fn select_key<K2: 'static>(
        &self,
        mapper: impl Fn(&K, &V) -> K2 + Send + Sync + 'static,
    ) -> KStream<K2, V> {
        self.select_key_named(None, mapper)
    }

    /// `selectKey(mapper, Named.as(name))`.
    pub fn select_key_named<K2: 'static>(
        &self,
        name: Option<&str>,
        mapper: impl Fn(&K, &V) -> K2 + Send + Sync + 'static,
    ) -> KStream<K2, V> {
        let m = Arc::new(mapper);
        let n = m.clone();
        let f: KeySelector<K, V, K2> = Box::new(move |k, v| n(k, v));
        let out = self.processor("KSTREAM-KEY-SELECT-", name, true, f);
        let e = erase2(move |k: &K, v: &V| boxed(m(k, v)));
        self.exec(&out.node, NodeExec::SelectKey(e));
        out
    }

    /// `peek(action)`: sees every record, passes it on.
    pub fn peek(&self, action: impl Fn(&K, &V) + Send + Sync + 'static) -> Self {
        self.peek_named(None, action)
    }

    /// `peek(action, Named.as(name))`.
    pub fn peek_named(
        &self,
        name: Option<&str>,
        action: impl Fn(&K, &V) + Send + Sync + 'static,
    ) -> Self {
        let a = Arc::new(action);
        let b = a.clone();
        let f: ForeachAction<K, V> = Box::new(move |k, v| b(k, v));
        let out = self.processor("KSTREAM-PEEK-", name, false, f);
        self.exec(&out.node, NodeExec::Peek(erase2(move |k, v| a(k, v))));
        out
    }

    /// `foreach(action)`: sees every record; the end of this branch.
    pub fn foreach(&self, action: impl Fn(&K, &V) + Send + Sync + 'static) {
        self.foreach_named(None, action);
    }

    /// `foreach(action, Named.as(name))`.
    pub fn foreach_named(
        &self,
        name: Option<&str>,
        action: impl Fn(&K, &V) + Send + Sync + 'static,
    ) {
        let a = Arc::new(action);
        let b = a.clone();
        let f: ForeachAction<K, V> = Box::new(move |k, v| b(k, v));
        let end: KStream<K, V> = self.processor("KSTREAM-FOREACH-", name, false, f);
        self.exec(&end.node, NodeExec::Peek(erase2(move |k, v| a(k, v))));
    }

    /// `to(topic)`: writes the records to `topic`.
    pub fn to(&self, topic: &str) {
        self.to_with(topic, Produced::default());
    }

    /// `to(topic, produced)`.
    pub fn to_with(&self, topic: &str, produced: Produced) {
        self.sink(SinkTarget::Topic(topic.to_string()), produced, None);
    }

    /// `to(topicNameExtractor, produced)`: the topic is chosen per record; `label` is what
    /// `describe()` prints for the extractor (Java prints the extractor's `toString()`).
    pub fn to_extractor(
        &self,
        label: &str,
        extractor: impl Fn(&K, &V) -> String + Send + Sync + 'static,
        produced: Produced,
    ) {
        let x = Arc::new(extractor);
        let y = x.clone();
        let f: TopicNameExtractor<K, V> = Box::new(move |k, v| y(k, v));
        let selector: exec::AnySelector = erase2(move |k, v| x(k, v));
        let name = self.sink(
            SinkTarget::Extractor(label.to_string()),
            produced,
            Some(selector),
        );
        self.inner.borrow_mut().keep(&name, f);
    }

    fn sink(
        &self,
        target: SinkTarget,
        produced: Produced,
        extractor: Option<exec::AnySelector>,
    ) -> String {
        let mut inner = self.inner.borrow_mut();
        let name = inner.name_or_next(produced.name.as_deref(), "KSTREAM-SINK-");
        let result = inner.topology.add_sink(&name, target, &[&self.node]);
        inner.record(result);
        let (key, value) = (produced.key_typed.as_ref(), produced.value_typed.as_ref());
        inner.exec(&name, exec::sink::<K, V>(key, value, extractor));
        name
    }

    /// `groupByKey()`: groups by the current key (repartitions first if the key changed).
    pub fn group_by_key(&self) -> KGroupedStream<K, V> {
        self.group_by_key_with(Grouped::default())
    }

    /// `groupByKey(grouped)`.
    pub fn group_by_key_with(&self, grouped: Grouped) -> KGroupedStream<K, V> {
        KGroupedStream::new(
            self.inner.clone(),
            self.node.clone(),
            self.repartition_required,
            grouped,
        )
    }

    /// `groupBy(selector)`: groups by a new key (always repartitions).
    pub fn group_by<K2: 'static>(
        &self,
        selector: impl Fn(&K, &V) -> K2 + Send + Sync + 'static,
    ) -> KGroupedStream<K2, V> {
        self.group_by_with(Grouped::default(), selector)
    }

    /// `groupBy(selector, grouped)`: a named grouping also names the key-selecting processor.
    pub fn group_by_with<K2: 'static>(
        &self,
        grouped: Grouped,
        selector: impl Fn(&K, &V) -> K2 + Send + Sync + 'static,
    ) -> KGroupedStream<K2, V> {
        let m = Arc::new(selector);
        let n = m.clone();
        let f: KeySelector<K, V, K2> = Box::new(move |k, v| n(k, v));
        let selected: KStream<K2, V> =
            self.processor("KSTREAM-KEY-SELECT-", grouped.name.as_deref(), true, f);
        let e = erase2(move |k: &K, v: &V| boxed(m(k, v)));
        self.exec(&selected.node, NodeExec::SelectKey(e));
        KGroupedStream::new(self.inner.clone(), selected.node, true, grouped)
    }
}
