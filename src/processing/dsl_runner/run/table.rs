//! Table operations after a table's source, with Java's old values (`Change<V>`):
//! `KTableFilter`, `KTableMapValues`, `KTableRepartitionMap` (`groupBy`), the `Change`
//! repartition topic (`ChangedSerializer` bytes), `KTableAggregate` and `KTableReduce`.

use std::any::Any;
use std::rc::Rc;

use crate::dsl::exec::Arg;
use crate::dsl::exec_table::{
    deserialize_change, serialize_change, GroupedExec, TableCombine, TableJoinSide, TableOp,
};
use crate::dsl::serdes::{AnySerde, AnyValue};
use crate::dsl::NodeExec;
use crate::error::Error;

use super::super::super::task::InputRecord;
use super::{failed, read_old, ser, DslProgram, Emit, Walk};

/// Whether `v` is a null: absent, or a value its type's built-in serde writes as null.
fn is_null(v: Arg, serde: Option<&AnySerde>) -> bool {
    match (v, serde) {
        (None, _) => true,
        (Some(v), Some(s)) => s.serialize(v).is_ok_and(|b| b.is_none()),
        (Some(_), None) => false,
    }
}

impl DslProgram {
    /// A record of a grouped table's repartition topic: key and `Change` read back (Java's
    /// `ChangedDeserializer`), the new value forwarded with the old one.
    pub(super) fn process_change(
        &self,
        source: usize,
        exec: &GroupedExec,
        ctx: &mut dyn Emit,
        record: &InputRecord,
    ) -> Result<(), Error> {
        let GroupedExec::ChangeSource { key, value } = exec else {
            return Err(failed(&self.nodes[source].name, "not a source"));
        };
        let k = key.deserialize(record.key.as_deref()).map_err(|e| {
            record.deserialization_error("key", format!("{}: {}", e.serde(), e.reason()))
        })?;
        let Some(bytes) = record.value.as_deref() else {
            return Err(record.deserialization_error("value", "a null Change".to_string()));
        };
        let (new, old) =
            deserialize_change(bytes).map_err(|e| record.deserialization_error("value", e))?;
        let read = |b: Option<&[u8]>| -> Result<Option<AnyValue>, Error> {
            match b {
                None => Ok(None),
                Some(b) => value.deserialize(Some(b)).map_err(|e| {
                    record.deserialization_error("value", format!("{}: {}", e.serde(), e.reason()))
                }),
            }
        };
        let new = read(new)?;
        let old = read(old)?.map(Rc::new);
        let mut walk = Walk {
            program: self,
            ctx,
            record,
            old: None,
        };
        walk.forward_change(source, k.as_deref(), new.as_deref(), old, record.timestamp)
    }
}

impl Walk<'_> {
    /// Whether node `i` forwards old values (Java's `sendOldValues`): a `groupBy` (or the
    /// repartition step and aggregation after it) takes them, or an unmaterialized table
    /// operation after it forwards them.
    pub(super) fn sends_old(&self, i: usize) -> bool {
        let program = self.program;
        program.nodes[i]
            .children
            .iter()
            .any(|&c| match &program.nodes[c].exec {
                // A `groupBy`, and after it the `Change` topic and the aggregation, take both.
                NodeExec::Grouped(_) => true,
                NodeExec::Table { store: None, .. } => self.sends_old(c),
                // A join processor sends old values if its merge does; the merge asks both
                // join processors' tables for them whenever it sends them.
                // A left or outer join's table sends old values in any case (Java's `doJoin`).
                NodeExec::TableJoin(j)
                    if matches!(j.side, TableJoinSide::Left | TableJoinSide::Outer) =>
                {
                    true
                }
                NodeExec::TableJoin(_) | NodeExec::TableJoinMerge { .. } => self.sends_old(c),
                _ => false,
            })
    }

    /// Forwards a table update: `value` new, `old` the old value if node `i` sends old
    /// values (else none).
    pub(super) fn forward_change(
        &mut self,
        i: usize,
        key: Arg,
        value: Arg,
        old: Option<Rc<AnyValue>>,
        ts: i64,
    ) -> Result<(), Error> {
        let old = if self.sends_old(i) { old } else { None };
        let kept = std::mem::replace(&mut self.old, old);
        let result = self.forward(i, key, value, ts);
        self.old = kept;
        result
    }

    /// `KTableFilter` / `KTableMapValues`: the new value is computed (a null stays null
    /// without calling the function; a filter turns a rejected value into null), and so is
    /// the old one when the node sends old values (from its own store if materialized, else
    /// from the old value it received); with old values, an update null on both sides is not
    /// forwarded. The new value goes to the node's store if it has one (a null deletes) and
    /// is forwarded with the update's key and timestamp, null included (a tombstone).
    pub(super) fn table_op(
        &mut self,
        i: usize,
        key: Arg,
        value: Arg,
        ts: i64,
    ) -> Result<(), Error> {
        let program = self.program;
        let node = &program.nodes[i];
        let name = node.name.as_str();
        let NodeExec::Table {
            op,
            store,
            input_value,
        } = &node.exec
        else {
            return Ok(());
        };
        let f = |e: String| failed(name, e);
        let compute = |v: Arg| -> Result<Option<Result<AnyValue, bool>>, Error> {
            if is_null(v, input_value.as_ref()) {
                return Ok(None);
            }
            Ok(match op {
                TableOp::Filter(p) => match p(key, v).map_err(f)? {
                    true => Some(Err(true)),
                    false => None,
                },
                TableOp::MapValues(m) => Some(Ok(m(v).map_err(f)?)),
            })
        };
        // `Err(true)`: the value itself passes (a filter).
        let computed = compute(value)?;
        let new: Arg = match &computed {
            None => None,
            Some(Err(_)) => value,
            Some(Ok(v)) => Some(&**v),
        };
        let sends_old = self.sends_old(i);
        let mut old: Option<Rc<AnyValue>> = None;
        let kb = match store {
            Some(s) => match ser(&s.key, key, name)? {
                Some(kb) => Some(kb),
                None => return Err(failed(name, "a table update with a null key")),
            },
            None => None,
        };
        let mut old_passes = false;
        if sends_old {
            match (store, &kb) {
                (Some(s), Some(kb)) => {
                    old = read_old(self.ctx.store(&s.name)?, kb, &s.value, &s.name)?
                        .map(|(v, _)| Rc::new(v));
                }
                _ => {
                    let received = self.old.clone();
                    match compute(received.as_deref().map(|v| &**v))? {
                        None => {}
                        Some(Err(_)) => {
                            old = received;
                            old_passes = true;
                        }
                        Some(Ok(v)) => old = Some(Rc::new(v)),
                    }
                }
            }
            if old.is_none() && !old_passes && new.is_none() {
                return Ok(());
            }
        }
        if let (Some(s), Some(kb)) = (store, kb) {
            let vb = ser(&s.value, new, name)?;
            if self.put_cached(i, (&s.name, s.cached), kb, vb.as_deref(), ts)? {
                return Ok(());
            }
        }
        self.forward_change(i, key, new, old, ts)
    }

    /// `KTable.groupBy`'s nodes and the grouped table's aggregations.
    pub(super) fn grouped(&mut self, i: usize, key: Arg, value: Arg, ts: i64) -> Result<(), Error> {
        let program = self.program;
        let node = &program.nodes[i];
        let NodeExec::Grouped(g) = &node.exec else {
            return Ok(());
        };
        match g {
            GroupedExec::Select {
                mapper,
                key: ks,
                value: vs,
                input_value,
            } => self.select(i, (mapper, ks, vs, input_value.as_ref()), key, value, ts),
            GroupedExec::ChangeSink { key: ks, value: vs } => {
                let name = node.name.as_str();
                let Some(topic) = &node.topic else {
                    return Err(failed(name, "a sink without a topic"));
                };
                let k = ser(ks, key, name)?;
                let new = ser(vs, value, name)?;
                let old = self.old.clone();
                let old = ser(vs, old.as_deref().map(|v| &**v), name)?;
                let Some(bytes) = serialize_change(new.as_deref(), old.as_deref()) else {
                    return Err(failed(name, "both old and new values are null in a Change"));
                };
                let headers = &self.record.headers;
                self.ctx
                    .send(topic, k.as_deref(), Some(&bytes), ts, headers)
            }
            GroupedExec::ChangeSource { .. } => self.forward(i, key, value, ts),
            GroupedExec::Aggregate {
                store,
                key: ks,
                aggregate,
                combine,
                cached,
            } => self.table_aggregate(i, (store, ks, aggregate, combine, *cached), key, value, ts),
        }
    }

    /// `KTableRepartitionMap`: maps the new and the old row; a pair with a null key or value
    /// is dropped; one record `Change(new, old)` if both map to the same key, else the old
    /// pair first (`Change(null, old)`), then the new one (`Change(new, null)`).
    fn select(
        &mut self,
        i: usize,
        (mapper, ks, vs, input): (
            &crate::dsl::exec::AnyKeyValueMapper,
            &AnySerde,
            &AnySerde,
            Option<&AnySerde>,
        ),
        key: Arg,
        value: Arg,
        ts: i64,
    ) -> Result<(), Error> {
        let name = self.program.nodes[i].name.as_str();
        let received = self.old.clone();
        let map = |v: Arg| -> Result<Option<(AnyValue, AnyValue, Vec<u8>)>, Error> {
            if is_null(v, input) {
                return Ok(None);
            }
            let (k2, v2) = mapper(key, v).map_err(|e| failed(name, e))?;
            let kb = ser(ks, Some(&*k2), name)?;
            let vb = ser(vs, Some(&*v2), name)?;
            Ok(match (kb, vb) {
                (Some(kb), Some(_)) => Some((k2, v2, kb)),
                _ => None,
            })
        };
        let new = map(value)?;
        let old = map(received.as_deref().map(|v| &**v))?;
        match (old, new) {
            (Some((ok, ov, okb)), Some((nk, nv, nkb))) if okb == nkb => {
                let _ = ok;
                self.forward_change(i, Some(&*nk), Some(&*nv), Some(Rc::new(ov)), ts)
            }
            (old, new) => {
                if let Some((ok, ov, _)) = old {
                    self.forward_change(i, Some(&*ok), None, Some(Rc::new(ov)), ts)?;
                }
                if let Some((nk, nv, _)) = new {
                    self.forward_change(i, Some(&*nk), Some(&*nv), None, ts)?;
                }
                Ok(())
            }
        }
    }

    /// `KTableAggregate` / `KTableReduce`: the old value is subtracted from the key's
    /// aggregate (if both exist), then the new value added (to the initializer's aggregate,
    /// or for reduce the value itself, if none); the result (a null deletes) goes to the
    /// store with the larger of the record's and the old aggregate's timestamp.
    fn table_aggregate(
        &mut self,
        i: usize,
        (store, ks, aggregate, combine, cached): (
            &String,
            &AnySerde,
            &AnySerde,
            &TableCombine,
            bool,
        ),
        key: Arg,
        value: Arg,
        ts: i64,
    ) -> Result<(), Error> {
        let name = self.program.nodes[i].name.as_str();
        let f = |e: String| failed(name, e);
        let (Some(k), Some(kb)) = (key, ser(ks, key, name)?) else {
            return Err(failed(name, "a grouped table record with a null key"));
        };
        let old_value = self.old.clone();
        let old_agg =
            read_old(self.ctx.store(store)?, &kb, aggregate, store)?.map(|(a, t)| (Rc::new(a), t));
        let mut new_ts = ts;
        let intermediate: Option<AnyValue> = match (&old_value, &old_agg) {
            (Some(ov), Some((agg, agg_ts))) => {
                new_ts = ts.max(*agg_ts);
                Some(match combine {
                    TableCombine::Aggregate(_, _, sub) => sub(k, &***ov, &***agg).map_err(f)?,
                    TableCombine::Reduce(_, sub) => sub(&***agg, &***ov).map_err(f)?,
                })
            }
            _ => None,
        };
        let intermediate_ref: Option<&dyn Any> = match (&intermediate, &old_value, &old_agg) {
            (Some(v), _, _) => Some(&**v),
            (None, None, Some((agg, _))) => Some(&***agg),
            _ => None,
        };
        let added: Option<AnyValue> = match value {
            None => None,
            Some(v) => {
                if let Some((_, agg_ts)) = &old_agg {
                    new_ts = ts.max(*agg_ts);
                }
                match (combine, intermediate_ref) {
                    (TableCombine::Aggregate(_, add, _), Some(a)) => Some(add(k, v, a).map_err(f)?),
                    (TableCombine::Aggregate(init, add, _), None) => {
                        Some(add(k, v, &*init()).map_err(f)?)
                    }
                    (TableCombine::Reduce(add, _), Some(a)) => Some(add(a, v).map_err(f)?),
                    (TableCombine::Reduce(..), None) => None,
                }
            }
        };
        let new_ref: Option<&dyn Any> = match (&added, value) {
            (Some(a), _) => Some(&**a),
            (None, Some(v)) => Some(v),
            (None, None) => intermediate_ref,
        };
        let bytes = ser(aggregate, new_ref, name)?;
        if self.put_cached(i, (store, cached), kb, bytes.as_deref(), new_ts)? {
            return Ok(());
        }
        let old_agg = old_agg.as_ref().map(|(a, _)| a.clone());
        self.forward_change(i, key, new_ref, old_agg, new_ts)
    }
}
