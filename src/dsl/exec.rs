//! What each node of a DSL program does, with its types erased: the form in which the
//! processing runtime executes a program (`processing::dsl`). Every operation the DSL
//! lowers records one [`NodeExec`] for the node it made, built where the operation's key
//! and value types are still known; the runner needs nothing else from the typed API.
//!
//! Values travel as `Option<&dyn Any>`: `None` is a Kafka null that the type could not hold
//! (see [`serdes`](super::serdes)); calling a function that takes that type with it is an
//! [`ExecError`] naming the type, where Java would have passed `null`.

use std::any::{type_name, Any};
use std::sync::Arc;

use super::serdes::{default_serde, AnySerde, AnyValue};

/// A key or value as operations receive it (`None`: a null the type cannot hold).
pub type Arg<'a> = Option<&'a dyn Any>;

/// Why an operation could not run on a record (a message; the runner adds the node).
pub type ExecError = String;

/// A predicate over a record.
pub type AnyPredicate = Arc<dyn Fn(Arg, Arg) -> Result<bool, ExecError> + Send + Sync>;
/// A key-value mapper.
pub type AnyKeyValueMapper =
    Arc<dyn Fn(Arg, Arg) -> Result<(AnyValue, AnyValue), ExecError> + Send + Sync>;
/// A value mapper.
pub type AnyValueMapper = Arc<dyn Fn(Arg) -> Result<AnyValue, ExecError> + Send + Sync>;
/// A record to many records.
pub type AnyFlatMapper =
    Arc<dyn Fn(Arg, Arg) -> Result<Vec<(AnyValue, AnyValue)>, ExecError> + Send + Sync>;
/// A value to many values.
pub type AnyFlatValueMapper = Arc<dyn Fn(Arg) -> Result<Vec<AnyValue>, ExecError> + Send + Sync>;
/// A record to a new key (or a topic name, for [`AnySelector`] of sinks).
pub type AnyKeySelector = Arc<dyn Fn(Arg, Arg) -> Result<AnyValue, ExecError> + Send + Sync>;
/// An action on a record.
pub type AnyAction = Arc<dyn Fn(Arg, Arg) -> Result<(), ExecError> + Send + Sync>;
/// A record to a topic name.
pub type AnySelector = Arc<dyn Fn(Arg, Arg) -> Result<String, ExecError> + Send + Sync>;
/// An aggregation's first aggregate.
pub type AnyInitializer = Arc<dyn Fn() -> AnyValue + Send + Sync>;
/// An aggregator: key, value, aggregate so far.
pub type AnyAggregator =
    Arc<dyn Fn(&dyn Any, &dyn Any, &dyn Any) -> Result<AnyValue, ExecError> + Send + Sync>;
/// A reducer: aggregate so far, value.
pub type AnyReducer = Arc<dyn Fn(&dyn Any, &dyn Any) -> Result<AnyValue, ExecError> + Send + Sync>;

/// A stream–table joiner: the stream's value and the table's value for the key (`None`: the
/// table has none, which only a left join passes on).
pub type AnyJoiner =
    Arc<dyn Fn(Arg, Option<&dyn Any>) -> Result<AnyValue, ExecError> + Send + Sync>;

/// How an aggregation combines the values of a key.
#[derive(Clone)]
pub enum Combine {
    /// `aggregate` (and `count`): an initial aggregate, then the aggregator per value.
    Aggregate(AnyInitializer, AnyAggregator),
    /// `reduce`: the first value, then the reducer per value.
    Reduce(AnyReducer),
}

/// What one node does (see the module docs).
#[derive(Clone)]
pub enum NodeExec {
    /// A source (`stream`, `table`, a repartition topic): reads keys and values.
    Source {
        /// Key serde.
        key: AnySerde,
        /// Value serde.
        value: AnySerde,
    },
    /// `filter` / `filterNot` (negated when built).
    Filter(AnyPredicate),
    /// `map`.
    Map(AnyKeyValueMapper),
    /// `mapValues`.
    MapValues(AnyValueMapper),
    /// `flatMap`.
    FlatMap(AnyFlatMapper),
    /// `flatMapValues`.
    FlatMapValues(AnyFlatValueMapper),
    /// `selectKey` and `groupBy`'s key selection.
    SelectKey(AnyKeySelector),
    /// `peek` (forwards) and `foreach` (has no children).
    Peek(AnyAction),
    /// `to`: serializes and writes.
    Sink {
        /// Key serde.
        key: AnySerde,
        /// Value serde.
        value: AnySerde,
        /// The topic per record (`to` with a `TopicNameExtractor`), else the node's topic.
        extractor: Option<AnySelector>,
    },
    /// The filter of a repartition step: drops records whose key is null.
    DropNullKeys {
        /// The key serde (a key it writes as null is a null).
        key: AnySerde,
    },
    /// `count` / `reduce` / `aggregate` into a timestamped key-value store.
    Aggregate {
        /// The store.
        store: String,
        /// Key serde of the store.
        key: AnySerde,
        /// Aggregate serde of the store.
        aggregate: AnySerde,
        /// The input value's built-in serde, if any, to see a null value.
        input_value: Option<AnySerde>,
        /// How values combine.
        combine: Combine,
        /// `Materialized.withCachingEnabled` (Java's default): a record cache holds the
        /// store's updates until a flush (see `processing::DslTestDriver`).
        cached: bool,
    },
    /// `table`'s `KTABLE-SOURCE` processor: puts into its store if materialized.
    TableSource {
        /// The store, if materialized.
        store: Option<String>,
        /// Key serde.
        key: AnySerde,
        /// Value serde.
        value: AnySerde,
        /// The store is cached (see [`NodeExec::Aggregate`]).
        cached: bool,
    },
    /// `toStream`: a table's updates as records.
    ToStream,
    /// `KStream`–`KTable` `join` / `leftJoin`: each stream record looked up in the table's
    /// store (Java's `KStreamKTableJoinProcessor`).
    StreamTableJoin {
        /// The table's store.
        store: String,
        /// The store's key serde (the lookup key's bytes).
        key: AnySerde,
        /// The store's value serde (reads the table's value).
        value: AnySerde,
        /// The stream value's built-in serde, if any, to see a null value.
        stream_value: Option<AnySerde>,
        /// `leftJoin`: a record without a table value is joined with `None`.
        left: bool,
        /// The joiner.
        joiner: AnyJoiner,
    },
    /// `split()`'s `KSTREAM-BRANCH-…` processor (Java's `KStreamBranch`): a record goes to
    /// the child of the first branch whose predicate holds (the default branch's always
    /// does), to none if none does. Each entry: the branch's child node and its predicate.
    Branch(Vec<(String, AnyPredicate)>),
    /// Forwards every record unchanged (a branch's child, `merge`).
    PassThrough,
    /// A `KTable` `filter` / `filterNot` / `mapValues`: forwards the update's new value
    /// (null where the filter rejects it), after writing it to its store if materialized.
    Table {
        /// What it computes.
        op: super::exec_table::TableOp,
        /// Its store, if materialized under a name.
        store: Option<super::exec_table::TableStore>,
        /// The input value's built-in serde, if any, to see a null value.
        input_value: Option<AnySerde>,
    },
    /// `KTable.groupBy` and the `KGroupedTable` aggregations (see [`GroupedExec`]).
    ///
    /// [`GroupedExec`]: super::exec_table::GroupedExec
    Grouped(super::exec_table::GroupedExec),
    /// A table–table join's `-join-this` / `-join-other` processor.
    TableJoin(super::exec_table::TableJoinExec),
    /// A table–table join's merge processor (Java's `KTableKTableJoinMerger`): writes its
    /// store if materialized, forwards the update.
    TableJoinMerge {
        /// The join's store, if materialized.
        store: Option<super::exec_table::TableStore>,
    },
    /// The node cannot run; why (e.g. no serde for a type that must be written).
    Unavailable(String),
}

impl std::fmt::Debug for NodeExec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self {
            Self::Source { .. } => "Source",
            Self::Filter(_) => "Filter",
            Self::Map(_) => "Map",
            Self::MapValues(_) => "MapValues",
            Self::FlatMap(_) => "FlatMap",
            Self::FlatMapValues(_) => "FlatMapValues",
            Self::SelectKey(_) => "SelectKey",
            Self::Peek(_) => "Peek",
            Self::Sink { .. } => "Sink",
            Self::DropNullKeys { .. } => "DropNullKeys",
            Self::Aggregate { .. } => "Aggregate",
            Self::TableSource { .. } => "TableSource",
            Self::ToStream => "ToStream",
            Self::StreamTableJoin { .. } => "StreamTableJoin",
            Self::Branch(_) => "Branch",
            Self::PassThrough => "PassThrough",
            Self::Table { .. } => "Table",
            Self::Grouped(_) => "Grouped",
            Self::TableJoin(_) => "TableJoin",
            Self::TableJoinMerge { .. } => "TableJoinMerge",
            Self::Unavailable(why) => return write!(f, "Unavailable({why})"),
        };
        f.write_str(kind)
    }
}

/// The argument as a `&T`, or why not.
pub fn arg<'a, T: 'static>(part: &str, a: Arg<'a>) -> Result<&'a T, ExecError> {
    match a {
        None => Err(format!(
            "the {part} is null and its type {} cannot hold null (declare Option<{}> or give \
             a type whose serde reads null)",
            type_name::<T>(),
            type_name::<T>()
        )),
        Some(v) => v.downcast_ref::<T>().ok_or_else(|| {
            format!(
                "the {part} is not a {} (the program's types do not line up)",
                type_name::<T>()
            )
        }),
    }
}

/// The given serde if it serves `T`, else `T`'s built-in one; `Err` says which is missing.
pub fn resolve_serde<T: 'static>(
    given: Option<&AnySerde>,
    what: &str,
) -> Result<AnySerde, ExecError> {
    match given {
        Some(s) if s.serves::<T>() => Ok(s.clone()),
        Some(s) => Err(format!(
            "the {what} serde {} serves {}, but the {what} type is {}",
            s.name(),
            s.type_name(),
            type_name::<T>()
        )),
        None => default_serde::<T>().ok_or_else(|| {
            format!(
                "no {what} serde for type {}: it has no built-in serde, give one \
                 (TypedSerde::new) with the operation",
                type_name::<T>()
            )
        }),
    }
}

/// A source's exec, or why it cannot run.
pub fn source<K: 'static, V: 'static>(
    key: Option<&AnySerde>,
    value: Option<&AnySerde>,
) -> NodeExec {
    match (
        resolve_serde::<K>(key, "key"),
        resolve_serde::<V>(value, "value"),
    ) {
        (Ok(key), Ok(value)) => NodeExec::Source { key, value },
        (Err(e), _) | (_, Err(e)) => NodeExec::Unavailable(e),
    }
}

/// A sink's exec, or why it cannot run.
pub fn sink<K: 'static, V: 'static>(
    key: Option<&AnySerde>,
    value: Option<&AnySerde>,
    extractor: Option<AnySelector>,
) -> NodeExec {
    match (
        resolve_serde::<K>(key, "key"),
        resolve_serde::<V>(value, "value"),
    ) {
        (Ok(key), Ok(value)) => NodeExec::Sink {
            key,
            value,
            extractor,
        },
        (Err(e), _) | (_, Err(e)) => NodeExec::Unavailable(e),
    }
}

/// A function of two [`Arg`]s giving `R`.
pub type Erased2<R> = Arc<dyn Fn(Arg, Arg) -> Result<R, ExecError> + Send + Sync>;
/// A function of one [`Arg`] giving `R`.
pub type Erased1<R> = Arc<dyn Fn(Arg) -> Result<R, ExecError> + Send + Sync>;

/// Erases `f(&K, &V) -> R` into a function of two [`Arg`]s.
pub fn erase2<K: 'static, V: 'static, R>(
    f: impl Fn(&K, &V) -> R + Send + Sync + 'static,
) -> Erased2<R> {
    Arc::new(move |k, v| Ok(f(arg::<K>("key", k)?, arg::<V>("value", v)?)))
}

/// Erases `f(&V) -> R` into a function of one [`Arg`].
pub fn erase1<V: 'static, R>(f: impl Fn(&V) -> R + Send + Sync + 'static) -> Erased1<R> {
    Arc::new(move |v| Ok(f(arg::<V>("value", v)?)))
}

/// Boxes a value for the runner.
pub fn boxed<T: 'static>(v: T) -> AnyValue {
    Box::new(v)
}
