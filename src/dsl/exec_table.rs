//! The executable form of `KTable` operations after a table's source: `filter` /
//! `filterNot` (Java's `KTableFilter`) and `mapValues` (`KTableMapValues`), each with the
//! store it writes when the operation is materialized under a store name.

use super::exec::{
    resolve_serde, AnyAggregator, AnyInitializer, AnyKeyValueMapper, AnyPredicate, AnyReducer,
    AnyValueMapper, NodeExec,
};
use std::any::Any;
use std::sync::Arc;

use super::exec::ExecError;
use super::options::Materialized;
use super::serdes::{default_serde, AnySerde, AnyValue};

/// The store a materialized table operation writes its result to, with its serdes.
#[derive(Clone)]
pub struct TableStore {
    /// The store.
    pub name: String,
    /// Key serde.
    pub key: AnySerde,
    /// Value serde (of the operation's result).
    pub value: AnySerde,
    /// `Materialized.withCachingEnabled` (Java's default): a record cache holds the
    /// store's updates until a flush (see `processing::DslTestDriver`); `false` for a store
    /// a join only reads.
    pub cached: bool,
}

/// What a table operation computes from an update's new value.
#[derive(Clone)]
pub enum TableOp {
    /// `filter` / `filterNot` (negated when built): a value it rejects becomes null.
    Filter(AnyPredicate),
    /// `mapValues`: a non-null value is mapped, a null stays null.
    MapValues(AnyValueMapper),
}

/// A table operation's exec: `materialized` with a store name gives it a store (serdes from
/// `materialized`, else the types' built-in ones); a missing serde makes it unavailable.
pub(super) fn table_op<K: 'static, VIn: 'static, V: 'static>(
    op: TableOp,
    materialized: Option<&Materialized>,
) -> NodeExec {
    let input_value = default_serde::<VIn>();
    let Some((m, name)) = materialized.and_then(|m| m.store_name.as_ref().map(|s| (m, s))) else {
        return NodeExec::Table {
            op,
            store: None,
            input_value,
        };
    };
    match (
        resolve_serde::<K>(m.key_typed.as_ref(), "key"),
        resolve_serde::<V>(m.value_typed.as_ref(), "value"),
    ) {
        (Ok(key), Ok(value)) => NodeExec::Table {
            op,
            store: Some(TableStore {
                name: name.clone(),
                key,
                value,
                cached: m.caching_enabled,
            }),
            input_value,
        },
        (Err(e), _) | (_, Err(e)) => NodeExec::Unavailable(e),
    }
}

/// How a `KGroupedTable` aggregation combines: the adder for new values, the subtractor for
/// old ones (Java's `KTableAggregate` / `KTableReduce`).
#[derive(Clone)]
pub enum TableCombine {
    /// `aggregate` (and `count`): initializer, adder, subtractor (key, value, aggregate).
    Aggregate(AnyInitializer, AnyAggregator, AnyAggregator),
    /// `reduce`: adder, subtractor (aggregate, value); the first value is the aggregate.
    Reduce(AnyReducer, AnyReducer),
}

/// The nodes of `KTable.groupBy` and its aggregations.
#[derive(Clone)]
pub enum GroupedExec {
    /// `KTABLE-SELECT-…` (Java's `KTableRepartitionMap`): maps the old and the new row to
    /// `(new key, new value)`; serdes to see a null key or value.
    Select {
        /// The selector.
        mapper: AnyKeyValueMapper,
        /// The new key's serde.
        key: AnySerde,
        /// The new value's serde.
        value: AnySerde,
        /// The table value's built-in serde, if any, to see a null value.
        input_value: Option<AnySerde>,
    },
    /// The repartition sink: writes `Change<V>` with Java's `ChangedSerializer`.
    ChangeSink {
        /// Key serde.
        key: AnySerde,
        /// The inner value serde.
        value: AnySerde,
    },
    /// The repartition source: reads `Change<V>` with Java's `ChangedDeserializer`.
    ChangeSource {
        /// Key serde.
        key: AnySerde,
        /// The inner value serde.
        value: AnySerde,
    },
    /// `count` / `reduce` / `aggregate` of a grouped table.
    Aggregate {
        /// The store.
        store: String,
        /// Key serde of the store.
        key: AnySerde,
        /// Aggregate serde of the store.
        aggregate: AnySerde,
        /// How values combine.
        combine: TableCombine,
        /// The store is cached (see [`NodeExec::Aggregate`]).
        cached: bool,
    },
}

/// The `KTABLE-SELECT` exec, or why it cannot run.
pub(super) fn select<V: 'static, K2: 'static, V2: 'static>(
    mapper: AnyKeyValueMapper,
    key: Option<&AnySerde>,
    value: Option<&AnySerde>,
) -> NodeExec {
    match (
        resolve_serde::<K2>(key, "key"),
        resolve_serde::<V2>(value, "value"),
    ) {
        (Ok(key), Ok(value)) => NodeExec::Grouped(GroupedExec::Select {
            mapper,
            key,
            value,
            input_value: default_serde::<V>(),
        }),
        (Err(e), _) | (_, Err(e)) => NodeExec::Unavailable(e),
    }
}

/// The repartition sink and source execs of a grouped table, or why they cannot run.
pub(super) fn change_topic<K: 'static, V: 'static>(
    key: Option<&AnySerde>,
    value: Option<&AnySerde>,
) -> (NodeExec, NodeExec) {
    match (
        resolve_serde::<K>(key, "key"),
        resolve_serde::<V>(value, "value"),
    ) {
        (Ok(key), Ok(value)) => (
            NodeExec::Grouped(GroupedExec::ChangeSink {
                key: key.clone(),
                value: value.clone(),
            }),
            NodeExec::Grouped(GroupedExec::ChangeSource { key, value }),
        ),
        (Err(e), _) | (_, Err(e)) => (NodeExec::Unavailable(e.clone()), NodeExec::Unavailable(e)),
    }
}

/// A grouped table's aggregation exec, or why it cannot run.
pub(super) fn aggregate<K: 'static, A: 'static>(
    store: &str,
    materialized: &Materialized,
    combine: TableCombine,
) -> NodeExec {
    match (
        resolve_serde::<K>(materialized.key_typed.as_ref(), "key"),
        resolve_serde::<A>(materialized.value_typed.as_ref(), "aggregate"),
    ) {
        (Ok(key), Ok(aggregate)) => NodeExec::Grouped(GroupedExec::Aggregate {
            store: store.to_string(),
            key,
            aggregate,
            combine,
            cached: materialized.caching_enabled,
        }),
        (Err(e), _) | (_, Err(e)) => NodeExec::Unavailable(e),
    }
}

/// Java's `ChangedSerializer` (not upgrading): `{old}{0}`, `{new}{1}`, or
/// `{zigzag varint len(new)}{new}{old}{2}`; `None` when both are null (Java throws).
pub fn serialize_change(new: Option<&[u8]>, old: Option<&[u8]>) -> Option<Vec<u8>> {
    match (new, old) {
        (Some(n), Some(o)) => {
            let mut out = Vec::with_capacity(n.len() + o.len() + 6);
            let len = i32::try_from(n.len()).unwrap_or(i32::MAX);
            let mut zz = ((len << 1) ^ (len >> 31)) as u32;
            while zz >= 0x80 {
                out.push((zz as u8 & 0x7f) | 0x80);
                zz >>= 7;
            }
            out.push(zz as u8);
            out.extend_from_slice(n);
            out.extend_from_slice(o);
            out.push(2);
            Some(out)
        }
        (Some(n), None) => Some([n, &[1]].concat()),
        (None, Some(o)) => Some([o, &[0]].concat()),
        (None, None) => None,
    }
}

/// A `Change`'s new and old value bytes as read back.
pub type ChangeBytes<'a> = (Option<&'a [u8]>, Option<&'a [u8]>);

/// Java's `ChangedDeserializer`: the new and old value bytes (flags 0–5; 3–5 carry an
/// `isLatest` byte before the flag), or why the bytes are not a `Change`.
pub fn deserialize_change(data: &[u8]) -> Result<ChangeBytes<'_>, String> {
    let Some((&flag, body)) = data.split_last() else {
        return Err("an empty Change".to_string());
    };
    let body = match flag {
        0..=2 => body,
        3..=5 => body.split_last().map(|(_, b)| b).unwrap_or_default(),
        _ => return Err(format!("unknown Change encoding flag {flag}")),
    };
    match flag {
        0 | 3 => Ok((None, Some(body))),
        1 | 4 => Ok((Some(body), None)),
        _ => {
            let mut value: u32 = 0;
            let mut at = 0;
            loop {
                let Some(&b) = body.get(at) else {
                    return Err("a Change with a truncated length".to_string());
                };
                if at >= 5 {
                    return Err("a Change with an invalid varint length".to_string());
                }
                value |= u32::from(b & 0x7f) << (7 * at);
                at += 1;
                if b & 0x80 == 0 {
                    break;
                }
            }
            let len = ((value >> 1) as i32) ^ -((value & 1) as i32);
            let rest = &body[at..];
            match usize::try_from(len) {
                Ok(n) if n <= rest.len() => Ok((Some(&rest[..n]), Some(&rest[n..]))),
                _ => Err(format!(
                    "a Change whose new value length {len} does not fit"
                )),
            }
        }
    }
}

/// A table–table joiner in the join's order (this table's value, the other's); either may
/// be `None` where the join kind allows it.
pub type AnyTableJoiner =
    Arc<dyn Fn(Option<&dyn Any>, Option<&dyn Any>) -> Result<AnyValue, ExecError> + Send + Sync>;

/// Which of Java's table–table join processors a `-join-this` / `-join-other` node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableJoinSide {
    /// `KTableKTableInnerJoin`: both values needed.
    Inner,
    /// `KTableKTableLeftJoin` (a left join's `-join-this`): the other value may be missing.
    Left,
    /// `KTableKTableRightJoin` (a left join's `-join-other`): this table's value needed, the
    /// updated one may be null.
    Right,
    /// `KTableKTableOuterJoin`: either may be missing.
    Outer,
}

/// A table–table join processor: the update of one side looked up in the other's store.
#[derive(Clone)]
pub struct TableJoinExec {
    /// The processor's kind.
    pub side: TableJoinSide,
    /// The node is `-join-other`: the update is the other table's (joiner arguments swap).
    pub reversed: bool,
    /// The other side's store, its key serde and its value serde.
    pub lookup: TableStore,
    /// The joiner.
    pub joiner: AnyTableJoiner,
}

/// The store a table's node writes and reads, with its serdes: one store, written by a
/// `table()` / `toTable()` source, an aggregation, or a table operation materialized by
/// name; else why a join cannot read it yet.
fn readable_store(
    inner: &super::Inner,
    node: &str,
    stores: &[String],
) -> Result<TableStore, String> {
    let serdes = match inner.execs.get(node) {
        Some(NodeExec::TableSource { key, value, .. }) => Some((key, value)),
        Some(NodeExec::Aggregate { key, aggregate, .. }) => Some((key, aggregate)),
        Some(NodeExec::Table { store: Some(s), .. }) => Some((&s.key, &s.value)),
        Some(NodeExec::TableJoinMerge { store: Some(s) }) => Some((&s.key, &s.value)),
        Some(NodeExec::Grouped(GroupedExec::Aggregate { key, aggregate, .. })) => {
            Some((key, aggregate))
        }
        _ => None,
    };
    match (serdes, stores) {
        (Some((key, value)), [store]) => Ok(TableStore {
            name: store.clone(),
            key: key.clone(),
            value: value.clone(),
            cached: false,
        }),
        _ => Err(format!(
            "a table-table join runs with tables that have their own store (a table(), a \
             toTable(), an aggregation, or an operation materialized by name), not with \
             table {node}"
        )),
    }
}

/// One side of a table–table join: its processor, its table's node, its table's stores.
pub(super) type JoinSide<'a> = (&'a str, &'a String, &'a [String]);

/// The execs of a table–table join's `-join-this`, `-join-other` and merge processors.
pub(super) fn table_join_execs<K: 'static, VR: 'static>(
    inner: &mut super::Inner,
    [(this, this_node, this_stores), (other, other_node, other_stores)]: [JoinSide; 2],
    (this_side, other_side): (TableJoinSide, TableJoinSide),
    joiner: AnyTableJoiner,
    (merge, materialized, store): (&str, Option<&Materialized>, Option<&str>),
) {
    let this_store = readable_store(inner, this_node, this_stores);
    let other_store = readable_store(inner, other_node, other_stores);
    let (this_exec, other_exec) = match (this_store, other_store) {
        (Ok(this_store), Ok(other_store)) => (
            NodeExec::TableJoin(TableJoinExec {
                side: this_side,
                reversed: false,
                lookup: other_store,
                joiner: joiner.clone(),
            }),
            NodeExec::TableJoin(TableJoinExec {
                side: other_side,
                reversed: true,
                lookup: this_store,
                joiner,
            }),
        ),
        (Err(e), _) | (_, Err(e)) => (NodeExec::Unavailable(e.clone()), NodeExec::Unavailable(e)),
    };
    inner.exec(this, this_exec);
    inner.exec(other, other_exec);
    let merge_exec = match (materialized, store) {
        (Some(m), Some(name)) => match (
            resolve_serde::<K>(m.key_typed.as_ref(), "key"),
            resolve_serde::<VR>(m.value_typed.as_ref(), "value"),
        ) {
            (Ok(key), Ok(value)) => NodeExec::TableJoinMerge {
                store: Some(TableStore {
                    name: name.to_string(),
                    key,
                    value,
                    cached: m.caching_enabled,
                }),
            },
            (Err(e), _) | (_, Err(e)) => NodeExec::Unavailable(e),
        },
        _ => NodeExec::TableJoinMerge { store: None },
    };
    inner.exec(merge, merge_exec);
}
