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
                    ..
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

#[cfg(test)]
mod tests {
    use crate::dsl::{Consumed, Materialized, StreamsBuilder, TypedSerde};
    use crate::processing::query::stores::StoreCatalog;
    use crate::processing::StreamsApp;
    use crate::topology::HeartbeatTopologyOptions;

    /// The serdes a DSL program writes its stores with are the ones a query reads with: a
    /// count's (String keys, Long counts) and a table's with a user value serde.
    #[test]
    fn a_dsl_programs_stores_carry_their_serdes() {
        let builder = StreamsBuilder::new();
        let upper = TypedSerde::new(
            "Upper",
            |v: &Vec<char>| v.iter().collect::<String>().into_bytes(),
            |b: &[u8]| Ok(String::from_utf8_lossy(b).chars().collect()),
        );
        let mut m = Materialized::named("people");
        m.value_typed = Some(upper.erase());
        let c = Consumed {
            value_typed: Some(upper.erase()),
            ..Consumed::default()
        };
        builder.table_with::<String, Vec<char>>("people-topic", c, m);
        builder
            .stream::<String, String>("words")
            .group_by_key()
            .count_with(None, Materialized::named("word-counts"));
        let program = builder.build().expect("program");
        let app = StreamsApp::from_dsl(&program, &HeartbeatTopologyOptions::new("q")).unwrap();
        let (k, v) = &app.store_serdes["word-counts"];
        assert!(k.serves::<String>() && v.serves::<i64>(), "{k:?} {v:?}");
        let (k, v) = &app.store_serdes["people"];
        assert!(
            k.serves::<String>() && v.serves::<Vec<char>>(),
            "{k:?} {v:?}"
        );
        assert_eq!(v.name(), "Upper");
        let catalog = StoreCatalog::of(&app.stores, app.store_serdes.clone());
        assert_eq!(catalog.serdes.len(), 2, "{catalog:?}");
    }
}
