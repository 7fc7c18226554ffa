//! Topologies (pure): the model a member declares in its heartbeat and Java's ordering rules
//! (the builder a DSL lowers into comes next).
//!
//! * [`model`]: [`StreamsTopology`], [`Subtopology`], [`TopicInfo`], [`CopartitionGroup`], in
//!   the canonical order Kafka's Java client sends them;
//! * `java_order`: Java's `String.hashCode` and `HashSet` iteration order, which decide the
//!   order of copartition groups on the wire;
//! * [`TopologyDifference`]: the first field in which two topologies differ.
//!
//! Nothing in here does I/O; the membership core (`streams`) and everything above it use it.

mod diff;
mod java_order;
pub mod model;

pub use diff::TopologyDifference;
pub use model::{
    CopartitionGroup, JavaHashSetSizing, StreamsTopology, Subtopology, TopicInfo, TopologyError,
};
