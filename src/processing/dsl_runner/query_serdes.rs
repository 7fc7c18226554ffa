//! The serdes of a DSL program's stores, for interactive queries
//! ([`crate::processing::query::stores`]): a query of a DSL store reads its keys and values
//! with the serdes the program writes them with.

use std::collections::BTreeMap;

use crate::dsl::serdes::AnySerde;
use crate::dsl::NodeExec;

use super::DslProgram;

impl DslProgram {
    /// Store name → (key serde, value serde), from the nodes that write each store (an
    /// aggregation, a materialized table) or read it (a join).
    pub(super) fn store_serdes(&self) -> BTreeMap<String, (AnySerde, AnySerde)> {
        let mut out = BTreeMap::new();
        for n in &self.nodes {
            let (store, key, value) = match &n.exec {
                NodeExec::Aggregate {
                    store,
                    key,
                    aggregate,
                    ..
                } => (store, key, aggregate),
                NodeExec::TableSource {
                    store: Some(store),
                    key,
                    value,
                } => (store, key, value),
                NodeExec::StreamTableJoin {
                    store, key, value, ..
                } => (store, key, value),
                _ => continue,
            };
            out.entry(store.clone())
                .or_insert_with(|| (key.clone(), value.clone()));
        }
        out
    }
}
