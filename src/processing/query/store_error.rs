//! Why a store query failed ([`StoreQueryError`], Java's `InvalidStateStoreException`
//! family), with the cause and what to do.

use std::time::Duration;

use super::super::lifecycle::RuntimeState;

/// Why a store could not be read (Java's `InvalidStateStoreException` family). Retriable
/// ones ([`is_retriable`](Self::is_retriable)) pass once the group settles.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StoreQueryError {
    /// No store of that name (Java's `UnknownStateStoreException`).
    #[error(
        "the application has no store {store:?} (its stores: {known:?}): ask for one of them \
         (a DSL store is named with Materialized::named)"
    )]
    UnknownStore {
        /// The name asked for.
        store: String,
        /// The application's stores.
        known: Vec<String>,
    },
    /// The store's serde serves another type than the one asked for.
    #[error(
        "store {store:?} has {what} serde {serde} for {serves}, not {asked}: ask for \
         store::<{serves}, _> or read it raw (raw_key_value_store)"
    )]
    WrongType {
        /// The store.
        store: String,
        /// `key` or `value`.
        what: &'static str,
        /// The serde's name.
        serde: &'static str,
        /// The type it serves.
        serves: &'static str,
        /// The type asked for.
        asked: &'static str,
    },
    /// No serde is known for the type asked for (a processor-API store of a type without a
    /// built-in serde).
    #[error(
        "no {what} serde for {asked} to read store {store:?}: give one \
         (key_value_store_with) or read it raw (raw_key_value_store)"
    )]
    NoSerde {
        /// The store.
        store: String,
        /// `key` or `value`.
        what: &'static str,
        /// The type asked for.
        asked: &'static str,
    },
    /// No local task holds the store now (Java's "may have migrated to another instance"):
    /// its tasks are on other instances, or not assigned yet.
    #[error(
        "store {store:?}{part} is not held by a local {roles} task now (it may have \
         migrated to another instance, or the instance is rebalancing): retry, or find its \
         host with query_metadata_for_key"
    )]
    NotLocal {
        /// The store.
        store: String,
        /// `" partition p"` if one partition was asked for, else empty.
        part: String,
        /// `active` or `active or standby`.
        roles: &'static str,
    },
    /// A stream thread is rebalancing (Java: "the stream thread is PARTITIONS_ASSIGNED, not
    /// RUNNING"); stale stores are readable meanwhile.
    #[error(
        "store {store:?}: stream thread {thread} is {state:?}, not Running: retry once it \
         runs (or enable_stale_stores to read it meanwhile)"
    )]
    Rebalancing {
        /// The store.
        store: String,
        /// The 1-based stream thread index.
        thread: usize,
        /// Its state.
        state: RuntimeState,
    },
    /// The instance is not running (not started, closing, closed or failed).
    #[error(
        "store {store:?} cannot be read: the instance is {state:?}; stores are readable while \
         it is Running (or Rebalancing, with stale stores): start a runtime and query it"
    )]
    NotRunning {
        /// The store.
        store: String,
        /// The instance's state.
        state: RuntimeState,
    },
    /// A stream thread did not answer in time.
    #[error(
        "store {store:?}: stream thread {thread} did not answer within {waited:?}; it answers \
         between two batches of its loop{hint}"
    )]
    Timeout {
        /// The store.
        store: String,
        /// The 1-based stream thread index (`stream-thread-<n>`).
        thread: usize,
        /// How long the reader waited.
        waited: Duration,
        /// What to check.
        hint: &'static str,
    },
    /// A key or value could not be (de)serialized.
    #[error("store {store:?}: {what}: {reason}")]
    Serde {
        /// The store.
        store: String,
        /// What was (de)serialized.
        what: String,
        /// The serde's error.
        reason: String,
    },
}

impl StoreQueryError {
    /// Whether the same query may succeed later: the store is not local now, a thread is
    /// rebalancing or slow.
    pub fn is_retriable(&self) -> bool {
        matches!(
            self,
            StoreQueryError::NotLocal { .. }
                | StoreQueryError::Rebalancing { .. }
                | StoreQueryError::Timeout { .. }
        )
    }
}

/// The hint of a thread's timeout.
pub(super) fn timeout_hint(thread: usize) -> &'static str {
    match thread {
        1 => {
            ": stream thread 1 runs inside ProcessingRuntime::run_once, so keep calling it \
             (run_until) while querying, from another thread than the reader"
        }
        _ => ": it may be blocked on a broker (see its log), or the timeout is too short",
    }
}
