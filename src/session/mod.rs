//! The membership drivers: the blocking session and the heartbeat thread drive the pure core.
//!
//! ```text
//!  application threads                         heartbeat thread (one per session)
//!  StreamsGroupSessionHandle ── commands ──►  run(): mio::Poll until the next deadline
//!     (crossbeam channel + mio::Waker;           │  (the Waker ends the wait for a command)
//!      answers in reusable reply slots)          │
//!     assignment() / state()                     │  Driver::poll(now)
//!     subscribe_assignment() ◄── Shared ◄───────┤    find coordinator (client/)
//!                               (snapshot,       │    poll_request → send → handle_response
//!                                version,        │  StreamsMembership (pure, streams/)
//!                                condvar)        ▼
//! ```
//!
//! [`StreamsGroupSession`] runs the same `Driver` on the caller's thread; there is
//! one implementation of the I/O around the state machine (`driver::Driver`).

pub(crate) mod commit;
pub mod config;
pub mod direct;
pub(crate) mod driver;
pub mod handle;
pub mod metrics;
pub mod offsets;
mod properties;
pub mod shared;

pub use config::StreamsGroupConfig;
pub use direct::StreamsGroupSession;
pub use handle::StreamsGroupSessionHandle;
pub use metrics::StreamsGroupMetrics;
pub use offsets::StreamsReconciliation;
pub use shared::{AssignmentSubscriber, StreamsGroupState};
