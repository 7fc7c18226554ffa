//! Options of the operations added after the first DSL: `topology.optimization` and
//! `Repartitioned`.

/// `topology.optimization`: which of Java's graph optimizations the program is built with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Optimization {
    /// `none` (Java's default): the graph as written.
    #[default]
    None,
    /// `all`: source-topic reuse for tables (a `table()` store has no changelog of its own;
    /// its source topic restores it) and repartition-topic merging (the optimizable
    /// repartition steps after one key change become one, `<first topic>-filter/-sink/-source`)
    /// are derived (through `merge()` nodes too); the single-store self-join rewrite (for
    /// stream–stream joins, not derived yet) is not.
    All,
}

/// `Repartitioned`: the name and partition count of an explicit `repartition()`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Repartitioned {
    /// `Repartitioned.as(name)`: the topic is `<name>-repartition` and its sink, filter and
    /// source are named after it; without a name, `KSTREAM-REPARTITION-…` is generated.
    pub name: Option<String>,
    /// `withNumberOfPartitions(n)`: the topic's partition count (else the group decides).
    pub partitions: Option<i32>,
    /// Key serde label.
    pub key_serde: Option<String>,
    /// Value serde label.
    pub value_serde: Option<String>,
}

impl Repartitioned {
    /// `Repartitioned.as(name)`.
    pub fn named(name: &str) -> Self {
        Self {
            name: Some(name.to_string()),
            ..Self::default()
        }
    }

    /// `withNumberOfPartitions(partitions)`.
    pub fn with_partitions(mut self, partitions: i32) -> Self {
        self.partitions = Some(partitions);
        self
    }
}
