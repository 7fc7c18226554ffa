//! Pushes one input record through the nodes of a lowered DSL program, as Java's
//! `ProcessorNode`s forward it: depth first, children in the order they were added.

mod table;
mod table_join;

use std::any::Any;
use std::rc::Rc;
use std::sync::Arc;

use crate::dsl::exec::{Arg, Combine};
use crate::dsl::exec_table::GroupedExec;
use crate::dsl::serdes::{AnySerde, AnyValue};
use crate::dsl::NodeExec;
use crate::error::Error;
use crate::streams::StreamsTaskId;

use super::super::context::{Processor, TaskContext};
use super::super::task::InputRecord;
use super::DslProgram;
use crate::consumer::RecordHeaders;
use crate::state::KeyValueStore;

/// Where a program's records and store writes go: the runtime's task context, or the test
/// driver.
pub(super) trait Emit {
    /// Sends a record to `topic` (partitioned by the key's murmur2, as Java's default).
    fn send(
        &mut self,
        topic: &str,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        timestamp: i64,
        headers: &RecordHeaders,
    ) -> Result<(), Error>;

    /// The task's store `name`.
    fn store(&mut self, name: &str) -> Result<&mut KeyValueStore, Error>;

    /// Whether updates of cached stores wait for a flush ([`Emit::defer`]) rather than go
    /// downstream at once: the test driver's record cache. The runtime forwards at once.
    fn caching(&self) -> bool {
        false
    }

    /// Holds an update of a cached store for the flush at the end of the record.
    fn defer(&mut self, _update: Deferred) {}
}

/// An update of a cached store waiting for the flush: Java's dirty cache entry.
#[derive(Clone, Debug)]
pub(super) struct Deferred {
    /// The node that updated the store (an aggregation or a table source).
    pub(super) node: usize,
    /// The store.
    pub(super) store: String,
    /// The key's bytes.
    pub(super) key: Vec<u8>,
    /// Whether the store held the key before the record (a delete of a key it did not
    /// hold goes nowhere).
    pub(super) existed: bool,
    /// The store's value bytes before the record (Java's flush reads the old value from
    /// the store under the cache), if it held the key.
    pub(super) old: Option<Vec<u8>>,
    /// The timestamp of the last update.
    pub(super) timestamp: i64,
}

impl Emit for TaskContext<'_> {
    fn send(
        &mut self,
        topic: &str,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        timestamp: i64,
        headers: &RecordHeaders,
    ) -> Result<(), Error> {
        TaskContext::send(self, topic, key, value, timestamp, headers).map(|_| ())
    }

    fn store(&mut self, name: &str) -> Result<&mut KeyValueStore, Error> {
        TaskContext::store(self, name)
    }
}

/// The processor of one task of a DSL program.
pub(super) struct DslProcessor {
    program: Arc<DslProgram>,
    subtopology: String,
}

impl DslProcessor {
    pub(super) fn new(program: Arc<DslProgram>, task: &StreamsTaskId) -> Self {
        Self {
            program,
            subtopology: task.subtopology_id.clone(),
        }
    }
}

impl Processor for DslProcessor {
    fn process(&mut self, ctx: &mut TaskContext<'_>, record: &InputRecord) -> Result<(), Error> {
        self.program.process(&self.subtopology, ctx, record)
    }
}

/// One record's walk through the program.
struct Walk<'a> {
    program: &'a DslProgram,
    ctx: &'a mut dyn Emit,
    record: &'a InputRecord,
    /// The old value of the table update being forwarded (Java's `Change.oldValue`), set by
    /// the table node that forwards it when a node after it asks for old values.
    old: Option<Rc<AnyValue>>,
}

fn ser(serde: &AnySerde, v: Arg, node: &str) -> Result<Option<Vec<u8>>, Error> {
    match v {
        None => Ok(None),
        Some(v) => serde.serialize(v).map_err(|e| failed(node, e)),
    }
}

fn failed(node: &str, why: impl std::fmt::Display) -> Error {
    Error::InvalidConfiguration {
        field: "dsl",
        reason: format!("node {node} failed: {why}"),
    }
}

impl DslProgram {
    /// Processes `record` of a task of subtopology `subtopology`: reads its key and value
    /// with its source's serdes (an unreadable one is [`Error::Deserialization`] naming the
    /// record, which the runtime's handler acts on), then runs the nodes after the source.
    pub(super) fn process(
        &self,
        subtopology: &str,
        ctx: &mut dyn Emit,
        record: &InputRecord,
    ) -> Result<(), Error> {
        let topic = &record.partition.topic;
        let Some((source, sub)) = self.sources.get(topic) else {
            return Err(failed(
                "(none)",
                format!("no source of the program reads topic {topic}"),
            ));
        };
        if sub != subtopology {
            return Err(failed(
                &self.nodes[*source].name,
                format!("topic {topic} is read by subtopology {sub}, not {subtopology}"),
            ));
        }
        let node = &self.nodes[*source];
        if let NodeExec::Grouped(g) = &node.exec {
            return self.process_change(*source, g, ctx, record);
        }
        let NodeExec::Source { key, value } = &node.exec else {
            return Err(failed(&node.name, "a source without serdes"));
        };
        let read = |part: &'static str, serde: &AnySerde, bytes: Option<&[u8]>| {
            serde.deserialize(bytes).map_err(|e| {
                record.deserialization_error(part, format!("{}: {}", e.serde(), e.reason()))
            })
        };
        let k = read("key", key, record.key.as_deref())?;
        let v = read("value", value, record.value.as_deref())?;
        let mut walk = Walk {
            program: self,
            ctx,
            record,
            old: None,
        };
        walk.forward(*source, k.as_deref(), v.as_deref(), record.timestamp)
    }
}

impl Walk<'_> {
    fn forward(&mut self, from: usize, key: Arg, value: Arg, ts: i64) -> Result<(), Error> {
        let program = self.program;
        for &child in &program.nodes[from].children {
            self.run(child, key, value, ts)?;
        }
        Ok(())
    }

    /// Forwards to the one child of node `from` named `child` (Java's `forward(record,
    /// childName)`).
    fn forward_to(
        &mut self,
        from: usize,
        child: &str,
        key: Arg,
        value: Arg,
        ts: i64,
    ) -> Result<(), Error> {
        let program = self.program;
        for &c in &program.nodes[from].children {
            if program.nodes[c].name == child {
                return self.run(c, key, value, ts);
            }
        }
        Err(failed(
            &program.nodes[from].name,
            format!("no child node {child}"),
        ))
    }

    /// Runs node `i` on one record.
    fn run(&mut self, i: usize, key: Arg, value: Arg, ts: i64) -> Result<(), Error> {
        let program = self.program;
        let node = &program.nodes[i];
        let name = node.name.as_str();
        let f = |e: String| failed(name, e);
        match &node.exec {
            NodeExec::Filter(p) => match p(key, value).map_err(f)? {
                true => self.forward(i, key, value, ts),
                false => Ok(()),
            },
            NodeExec::Map(m) => {
                let (k, v) = m(key, value).map_err(f)?;
                self.forward(i, Some(&*k), Some(&*v), ts)
            }
            NodeExec::MapValues(m) => {
                let v = m(value).map_err(f)?;
                self.forward(i, key, Some(&*v), ts)
            }
            NodeExec::FlatMap(m) => {
                for (k, v) in m(key, value).map_err(f)? {
                    self.forward(i, Some(&*k), Some(&*v), ts)?;
                }
                Ok(())
            }
            NodeExec::FlatMapValues(m) => {
                for v in m(value).map_err(f)? {
                    self.forward(i, key, Some(&*v), ts)?;
                }
                Ok(())
            }
            NodeExec::SelectKey(s) => {
                let k = s(key, value).map_err(f)?;
                self.forward(i, Some(&*k), value, ts)
            }
            NodeExec::Peek(a) => {
                a(key, value).map_err(f)?;
                self.forward(i, key, value, ts)
            }
            NodeExec::Sink { .. } => self.sink(i, key, value, ts),
            NodeExec::DropNullKeys { key: serde } => match ser(serde, key, name)? {
                Some(_) => self.forward(i, key, value, ts),
                None => Ok(()),
            },
            NodeExec::Aggregate { .. } => self.aggregate(i, key, value, ts),
            NodeExec::TableSource { .. } => self.table_source(i, key, value, ts),
            NodeExec::StreamTableJoin { .. } => self.stream_table_join(i, key, value, ts),
            NodeExec::Branch(branches) => {
                for (child, predicate) in branches {
                    if predicate(key, value).map_err(f)? {
                        return self.forward_to(i, child, key, value, ts);
                    }
                }
                Ok(())
            }
            NodeExec::Table { .. } => self.table_op(i, key, value, ts),
            NodeExec::Grouped(_) => self.grouped(i, key, value, ts),
            NodeExec::TableJoin(_) => self.table_join(i, key, value, ts),
            NodeExec::TableJoinMerge { .. } => self.table_join_merge(i, key, value, ts),
            NodeExec::ToStream | NodeExec::Source { .. } | NodeExec::PassThrough => {
                self.forward(i, key, value, ts)
            }
            NodeExec::Unavailable(why) => Err(failed(name, why)),
        }
    }

    fn sink(&mut self, i: usize, key: Arg, value: Arg, ts: i64) -> Result<(), Error> {
        let program = self.program;
        let node = &program.nodes[i];
        let NodeExec::Sink {
            key: ks,
            value: vs,
            extractor,
        } = &node.exec
        else {
            return Ok(());
        };
        let topic = match (extractor, &node.topic) {
            (Some(x), _) => x(key, value).map_err(|e| failed(&node.name, e))?,
            (None, Some(t)) => t.clone(),
            (None, None) => return Err(failed(&node.name, "a sink without a topic")),
        };
        let k = ser(ks, key, &node.name)?;
        let v = ser(vs, value, &node.name)?;
        let headers = &self.record.headers;
        self.ctx
            .send(&topic, k.as_deref(), v.as_deref(), ts, headers)
    }

    /// Java's `KStreamAggregate` / `KStreamReduce`: skips a null key or value; the new
    /// aggregate goes to the store with the larger of its old timestamp and the record's,
    /// and is forwarded with that timestamp.
    fn aggregate(&mut self, i: usize, key: Arg, value: Arg, ts: i64) -> Result<(), Error> {
        let program = self.program;
        let node = &program.nodes[i];
        let name = node.name.as_str();
        let NodeExec::Aggregate {
            store,
            key: ks,
            aggregate,
            input_value,
            combine,
            cached,
        } = &node.exec
        else {
            return Ok(());
        };
        let key_bytes = ser(ks, key, name)?;
        let value_null = match (value, input_value) {
            (None, _) => true,
            (Some(v), Some(s)) => s.serialize(v).is_ok_and(|b| b.is_none()),
            (Some(_), None) => false,
        };
        let (Some(kb), Some(k), Some(v), false) = (key_bytes, key, value, value_null) else {
            self.skip_null(name);
            return Ok(());
        };
        let kv = self.ctx.store(store)?;
        let old = read_old(kv, &kb, aggregate, store)?;
        let new_ts = old.as_ref().map_or(ts, |(_, t)| (*t).max(ts));
        let f = |e: String| failed(name, e);
        let new: Option<AnyValue> = match (combine, &old) {
            (Combine::Aggregate(_, add), Some((a, _))) => Some(add(k, v, &**a).map_err(f)?),
            (Combine::Aggregate(init, add), None) => Some(add(k, v, &*init()).map_err(f)?),
            (Combine::Reduce(r), Some((a, _))) => Some(r(&**a, v).map_err(f)?),
            (Combine::Reduce(_), None) => None,
        };
        let new_ref: &dyn Any = new.as_deref().unwrap_or(v);
        let bytes = ser(aggregate, Some(new_ref), name)?;
        if self.put_cached(i, (store, *cached), kb, bytes.as_deref(), new_ts)? {
            return Ok(());
        }
        let old = old.map(|(a, _)| Rc::new(a));
        self.forward_change(i, key, Some(new_ref), old, new_ts)
    }

    fn skip_null(&self, node: &str) {
        let r = self.record;
        log::warn!(
            "{node}: skipping a record with a null key or value at {}@{}",
            r.partition,
            r.offset
        );
    }

    /// Java's `KTableSource`: skips a null key; puts the value (a null deletes) into the
    /// store if the table is materialized; forwards the update.
    fn table_source(&mut self, i: usize, key: Arg, value: Arg, ts: i64) -> Result<(), Error> {
        let program = self.program;
        let node = &program.nodes[i];
        let NodeExec::TableSource {
            store,
            key: ks,
            value: vs,
            cached,
        } = &node.exec
        else {
            return Ok(());
        };
        let Some(kb) = ser(ks, key, &node.name)? else {
            self.skip_null(&node.name);
            return Ok(());
        };
        let mut old = None;
        if let Some(store) = store {
            if self.sends_old(i) {
                old = read_old(self.ctx.store(store)?, &kb, vs, store)?.map(|(v, _)| Rc::new(v));
            }
            let vb = ser(vs, value, &node.name)?;
            if self.put_cached(i, (store, *cached), kb, vb.as_deref(), ts)? {
                return Ok(());
            }
        }
        self.forward_change(i, key, value, old, ts)
    }

    /// Puts `bytes` (a null deletes) under `key` into `store` with `ts`; if the store is
    /// cached (`cached`) and the updates of cached stores wait for a flush, holds the
    /// update of node `i` for it ([`Emit::defer`], with the store's value before the
    /// update) and answers `true`: node `i` forwards nothing now.
    fn put_cached(
        &mut self,
        i: usize,
        (store, cached): (&str, bool),
        key: Vec<u8>,
        bytes: Option<&[u8]>,
        ts: i64,
    ) -> Result<bool, Error> {
        let defer = cached && self.ctx.caching();
        let kv = self.ctx.store(store)?;
        let old = match defer {
            true => kv.get(&key).map(<[u8]>::to_vec),
            false => None,
        };
        kv.put(&key, bytes, ts);
        if defer {
            self.ctx.defer(Deferred {
                node: i,
                store: store.to_string(),
                key,
                existed: old.is_some(),
                old,
                timestamp: ts,
            });
        }
        Ok(defer)
    }

    /// Java's `CachingKeyValueStore` flush of one dirty entry: forwards the key's value in
    /// the store now, with its timestamp, or a null if the key is gone and the store held
    /// it before the record (a delete of a key it never held is dropped); the old value
    /// (if the node sends old values) is the store's value before the record, as Java
    /// reads it from the store under the cache.
    fn flush_one(&mut self, update: &Deferred) -> Result<(), Error> {
        let program = self.program;
        let node = &program.nodes[update.node];
        let (ks, vs) = match &node.exec {
            NodeExec::Aggregate { key, aggregate, .. } => (key, aggregate),
            NodeExec::TableSource { key, value, .. } => (key, value),
            NodeExec::Table { store: Some(s), .. }
            | NodeExec::TableJoinMerge { store: Some(s) } => (&s.key, &s.value),
            NodeExec::Grouped(GroupedExec::Aggregate { key, aggregate, .. }) => (key, aggregate),
            _ => {
                return Err(failed(
                    &node.name,
                    "a deferred update of a node without a store",
                ))
            }
        };
        let now = self
            .ctx
            .store(&update.store)?
            .get_with_timestamp(&update.key)
            .map(|(v, ts)| (v.to_vec(), ts));
        let read = |serde: &AnySerde, bytes: &[u8]| {
            serde
                .deserialize(Some(bytes))
                .map_err(|e| failed(&update.store, format!("a cached entry cannot be read: {e}")))
        };
        let key = read(ks, &update.key)?;
        let old = match &update.old {
            Some(b) => read(vs, b)?.map(Rc::new),
            None => None,
        };
        match now {
            Some((bytes, ts)) => {
                let value = read(vs, &bytes)?;
                self.forward_change(update.node, key.as_deref(), value.as_deref(), old, ts)
            }
            None if update.existed => {
                self.forward_change(update.node, key.as_deref(), None, old, update.timestamp)
            }
            None => Ok(()),
        }
    }
}

impl DslProgram {
    /// Flushes the deferred updates of cached stores after `record` (see [`Emit::defer`]):
    /// store by store in the program's order, each store's keys in the order of their last
    /// update, as Java flushes its record caches on commit. What the forwards update in
    /// cached stores is deferred again, for the caller's next flush.
    pub(super) fn flush(
        &self,
        ctx: &mut dyn Emit,
        record: &InputRecord,
        mut updates: Vec<Deferred>,
    ) -> Result<(), Error> {
        updates.sort_by_key(|u| u.node);
        let mut walk = Walk {
            program: self,
            ctx,
            record,
            old: None,
        };
        for u in &updates {
            walk.flush_one(u)?;
        }
        Ok(())
    }
}

impl Walk<'_> {
    /// Java's `KStreamKTableJoinProcessor`: a record with a null value is skipped, and so is
    /// one with a null key unless the join is a left join (which joins it with no table
    /// value); the key's value in the table's store (`None`: no row) goes to the joiner,
    /// and the result is forwarded with the stream record's key and timestamp (an inner
    /// join forwards nothing without a table value).
    fn stream_table_join(&mut self, i: usize, key: Arg, value: Arg, ts: i64) -> Result<(), Error> {
        let program = self.program;
        let node = &program.nodes[i];
        let name = node.name.as_str();
        let NodeExec::StreamTableJoin {
            store,
            key: ks,
            value: vs,
            stream_value,
            left,
            joiner,
        } = &node.exec
        else {
            return Ok(());
        };
        let value_null = match (value, stream_value) {
            (None, _) => true,
            (Some(v), Some(s)) => s.serialize(v).is_ok_and(|b| b.is_none()),
            (Some(_), None) => false,
        };
        let key_bytes = ser(ks, key, name)?;
        if value_null || (key_bytes.is_none() && !left) {
            self.skip_null(name);
            return Ok(());
        }
        let found = match &key_bytes {
            Some(kb) => read_old(self.ctx.store(store)?, kb, vs, store)?.map(|(v, _)| v),
            None => None,
        };
        if found.is_none() && !left {
            return Ok(());
        }
        let joined = joiner(value, found.as_deref()).map_err(|e| failed(name, e))?;
        self.forward(i, key, Some(&*joined), ts)
    }
}

/// The value held for `key` and its timestamp, read with the store's serde.
fn read_old(
    kv: &KeyValueStore,
    key: &[u8],
    serde: &AnySerde,
    store: &str,
) -> Result<Option<(AnyValue, i64)>, Error> {
    let Some((bytes, ts)) = kv.get_with_timestamp(key) else {
        return Ok(None);
    };
    match serde.deserialize(Some(bytes)) {
        Ok(Some(v)) => Ok(Some((v, ts))),
        Ok(None) => Ok(None),
        Err(e) => Err(failed(
            store,
            format!("its value for a key cannot be read: {e}"),
        )),
    }
}
