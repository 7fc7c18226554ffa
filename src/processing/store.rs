//! The old home of the state stores, now [`crate::state`]: these names are re-exports kept
//! one release for existing paths (`processing::store::KeyValueStore`, ...).

pub use crate::state::{
    changelog_topic, ChangelogRecord, KeyValueStore, StateStore, StoreFormat, NO_TIMESTAMP,
};
