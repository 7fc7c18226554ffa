//! The executable form of `KTable` operations after a table's source: `filter` /
//! `filterNot` (Java's `KTableFilter`) and `mapValues` (`KTableMapValues`), each with the
//! store it writes when the operation is materialized under a store name.

use super::exec::{resolve_serde, AnyPredicate, AnyValueMapper, NodeExec};
use super::options::Materialized;
use super::serdes::AnySerde;

/// The store a materialized table operation writes its result to, with its serdes.
#[derive(Clone)]
pub struct TableStore {
    /// The store.
    pub name: String,
    /// Key serde.
    pub key: AnySerde,
    /// Value serde (of the operation's result).
    pub value: AnySerde,
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
pub(super) fn table_op<K: 'static, V: 'static>(
    op: TableOp,
    materialized: Option<&Materialized>,
) -> NodeExec {
    let Some((m, name)) = materialized.and_then(|m| m.store_name.as_ref().map(|s| (m, s))) else {
        return NodeExec::Table { op, store: None };
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
            }),
        },
        (Err(e), _) | (_, Err(e)) => NodeExec::Unavailable(e),
    }
}
