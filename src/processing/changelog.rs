//! The old home of the changelog reader, now [`crate::state`]: these names are re-exports
//! kept one release for existing paths (`processing::changelog::ChangelogReader`, ...).

pub use crate::state::{ChangelogReader, RestoreSummary};
