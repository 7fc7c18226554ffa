//! Topologies (pure): the model a member declares in its heartbeat, Java's ordering rules,
//! and the builder a DSL lowers into.
//!
//! * [`model`]: [`StreamsTopology`], [`Subtopology`], [`TopicInfo`], [`CopartitionGroup`], in
//!   the canonical order Kafka's Java client sends them;
//! * `java_order`: Java's `String.hashCode` and `HashSet` iteration order, which decide the
//!   order of copartition groups on the wire;
//! * [`TopologyDifference`]: the first field in which two topologies differ;
//! * [`builder`]: the Processor-API [`TopologyBuilder`] (Java's `InternalTopologyBuilder`),
//!   its `describe()` text and the heartbeat topology it yields.
//!
//! Nothing in here does I/O; the membership core (`streams`) and everything above it use it.

pub mod builder;
mod diff;
mod java_order;
pub mod model;

pub use builder::{
    HeartbeatTopologyOptions, Node, NodeKind, SinkTarget, StoreSpec, TopologyBuildError,
    TopologyBuilder, TopologyDescription,
};
pub use diff::TopologyDifference;
pub use model::{
    CopartitionGroup, JavaHashSetSizing, StreamsTopology, Subtopology, TopicInfo, TopologyError,
};
