//! The naming and serde options of DSL operations: Java's `Consumed`, `Produced`, `Grouped`,
//! `Materialized` and `Named`. Each carries serde labels (what `describe()` and the derived
//! topology know) and the typed serdes the runner executes with ([`TypedSerde`], set with
//! `with_key_serde` / `with_value_serde`; without one, a type's built-in serde).

use super::serdes::{AnySerde, TypedSerde};

/// Sets the label and the typed serde of one side.
fn set<T: 'static>(label: &mut Option<String>, typed: &mut Option<AnySerde>, serde: TypedSerde<T>) {
    *label = Some(serde.name().to_string());
    *typed = Some(serde.erase());
}

macro_rules! typed_serdes {
    ($t:ty) => {
        impl $t {
            /// The key serde (Java's `withKeySerde`): also sets the key label.
            pub fn with_key_serde<K: 'static>(mut self, serde: TypedSerde<K>) -> Self {
                set(&mut self.key_serde, &mut self.key_typed, serde);
                self
            }

            /// The value serde (Java's `withValueSerde`): also sets the value label.
            pub fn with_value_serde<V: 'static>(mut self, serde: TypedSerde<V>) -> Self {
                set(&mut self.value_serde, &mut self.value_typed, serde);
                self
            }

            /// Both serdes (Java's `with(keySerde, valueSerde)`).
            pub fn serdes<K: 'static, V: 'static>(
                key: TypedSerde<K>,
                value: TypedSerde<V>,
            ) -> Self {
                Self::default().with_key_serde(key).with_value_serde(value)
            }
        }
    };
}

typed_serdes!(Consumed);
typed_serdes!(Produced);
typed_serdes!(Grouped);

/// `Consumed`: how `StreamsBuilder::stream` reads its topics.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Consumed {
    /// `Consumed.as(name)`: the source node's name instead of `KSTREAM-SOURCE-…`.
    pub name: Option<String>,
    /// Key serde label (e.g. `"String"`).
    pub key_serde: Option<String>,
    /// Value serde label.
    pub value_serde: Option<String>,
    /// The typed key serde the runner uses (else the key type's built-in one).
    pub key_typed: Option<AnySerde>,
    /// The typed value serde the runner uses (else the value type's built-in one).
    pub value_typed: Option<AnySerde>,
}

impl Consumed {
    /// `Consumed.with(keySerde, valueSerde)`.
    pub fn with(key_serde: &str, value_serde: &str) -> Self {
        Self {
            name: None,
            key_serde: Some(key_serde.to_string()),
            value_serde: Some(value_serde.to_string()),
            ..Self::default()
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
    /// The typed key serde the runner uses (else the key type's built-in one).
    pub key_typed: Option<AnySerde>,
    /// The typed value serde the runner uses (else the value type's built-in one).
    pub value_typed: Option<AnySerde>,
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
    /// The typed key serde the runner uses (else the key type's built-in one).
    pub key_typed: Option<AnySerde>,
    /// The typed value serde the runner uses (else the value type's built-in one).
    pub value_typed: Option<AnySerde>,
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
    /// `withKeySerde`: the store's key serde (else the key type's built-in one).
    pub key_typed: Option<AnySerde>,
    /// `withValueSerde`: the store's value serde (else the value type's built-in one).
    pub value_typed: Option<AnySerde>,
}

impl Default for Materialized {
    fn default() -> Self {
        Self {
            store_name: None,
            logging_enabled: true,
            changelog_configs: Vec::new(),
            caching_enabled: true,
            key_typed: None,
            value_typed: None,
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

    /// `withKeySerde(serde)`: the store's key serde.
    pub fn with_key_serde<K: 'static>(mut self, serde: TypedSerde<K>) -> Self {
        self.key_typed = Some(serde.erase());
        self
    }

    /// `withValueSerde(serde)`: the store's value serde.
    pub fn with_value_serde<V: 'static>(mut self, serde: TypedSerde<V>) -> Self {
        self.value_typed = Some(serde.erase());
        self
    }

    /// `withCachingDisabled()` (no effect on the topology).
    pub fn with_caching_disabled(mut self) -> Self {
        self.caching_enabled = false;
        self
    }
}
