//! The naming and serde options of DSL operations: Java's `Consumed`, `Produced`, `Grouped`,
//! `Materialized` and `Named`. Serdes are labels for now (they name the serde; executing DSL
//! programs comes with the processing runtime).

/// `Consumed`: how `StreamsBuilder::stream` reads its topics.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Consumed {
    /// `Consumed.as(name)`: the source node's name instead of `KSTREAM-SOURCE-…`.
    pub name: Option<String>,
    /// Key serde label (e.g. `"String"`).
    pub key_serde: Option<String>,
    /// Value serde label.
    pub value_serde: Option<String>,
}

impl Consumed {
    /// `Consumed.with(keySerde, valueSerde)`.
    pub fn with(key_serde: &str, value_serde: &str) -> Self {
        Self {
            name: None,
            key_serde: Some(key_serde.to_string()),
            value_serde: Some(value_serde.to_string()),
        }
    }

    /// `Consumed.as(name)`.
    pub fn named(name: &str) -> Self {
        Self {
            name: Some(name.to_string()),
            ..Self::default()
        }
    }
}

/// `Produced`: how `KStream::to` writes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Produced {
    /// `Produced.as(name)`: the sink node's name instead of `KSTREAM-SINK-…`.
    pub name: Option<String>,
    /// Key serde label.
    pub key_serde: Option<String>,
    /// Value serde label.
    pub value_serde: Option<String>,
}

impl Produced {
    /// `Produced.as(name)`.
    pub fn named(name: &str) -> Self {
        Self {
            name: Some(name.to_string()),
            ..Self::default()
        }
    }
}

/// `Grouped`: the name of a grouping (it names the repartition topic `<name>-repartition`, and
/// for `groupBy` the key-selecting processor too) and its serde labels.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Grouped {
    /// `Grouped.as(name)`.
    pub name: Option<String>,
    /// Key serde label.
    pub key_serde: Option<String>,
    /// Value serde label.
    pub value_serde: Option<String>,
}

impl Grouped {
    /// `Grouped.as(name)`.
    pub fn named(name: &str) -> Self {
        Self {
            name: Some(name.to_string()),
            ..Self::default()
        }
    }
}

/// `Materialized`: the state store of an aggregation. Caching is accepted as a label and has
/// no effect on the topology (Java's neither).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Materialized {
    /// `Materialized.as(storeName)`: the store (and changelog) name instead of a generated
    /// `KSTREAM-AGGREGATE-STATE-STORE-…`.
    pub store_name: Option<String>,
    /// `withLoggingDisabled()` clears it (no changelog topic).
    pub logging_enabled: bool,
    /// `withLoggingEnabled(Map)`: changelog topic configs.
    pub changelog_configs: Vec<(String, String)>,
    /// `withCachingEnabled/Disabled`: recorded, does not change the topology.
    pub caching_enabled: bool,
}

impl Default for Materialized {
    fn default() -> Self {
        Self {
            store_name: None,
            logging_enabled: true,
            changelog_configs: Vec::new(),
            caching_enabled: true,
        }
    }
}

impl Materialized {
    /// `Materialized.as(storeName)`.
    pub fn named(store_name: &str) -> Self {
        Self {
            store_name: Some(store_name.to_string()),
            ..Self::default()
        }
    }

    /// `withLoggingDisabled()`.
    pub fn with_logging_disabled(mut self) -> Self {
        self.logging_enabled = false;
        self.changelog_configs.clear();
        self
    }

    /// `withLoggingEnabled(configs)`.
    pub fn with_logging_enabled(mut self, configs: &[(&str, &str)]) -> Self {
        self.logging_enabled = true;
        self.changelog_configs = configs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        self
    }

    /// `withCachingDisabled()` (no effect on the topology).
    pub fn with_caching_disabled(mut self) -> Self {
        self.caching_enabled = false;
        self
    }
}
