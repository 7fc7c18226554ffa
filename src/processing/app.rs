//! What an application is made of: the topology it sends, the stores of each subtopology and
//! the factory of its per-task processors.

use std::collections::{BTreeMap, BTreeSet};

use crate::dsl::serdes::AnySerde;
use crate::error::Error;
use crate::streams::{StreamsTaskId, StreamsTopology};

use super::context::Processor;
use super::lifecycle::{RuntimeState, StateListener};
use crate::state::StoreFormat;

/// Makes the processor of a task.
pub type ProcessorFactory =
    Box<dyn FnMut(&StreamsTaskId) -> Result<Box<dyn Processor>, Error> + Send>;

/// An application: the topology (exactly as Java computes it, if Java instances share the
/// group), the key-value stores per subtopology and a factory of processors per task.
///
/// A store `s` of subtopology `x` has the changelog `<application.id>-s-changelog`, which
/// must be one of subtopology `x`'s state changelog topics; task `x_p` owns its partition `p`.
pub struct StreamsApp {
    pub(crate) topology: StreamsTopology,
    pub(crate) stores: BTreeMap<String, Vec<(String, StoreFormat)>>,
    /// The declared stores that have no changelog (logging disabled).
    pub(crate) unlogged: BTreeSet<String>,
    pub(crate) factory: ProcessorFactory,
    pub(crate) listener: Option<StateListener>,
    /// The key and value serdes of stores that have them (a DSL program's), for
    /// interactive queries.
    pub(crate) store_serdes: BTreeMap<String, (AnySerde, AnySerde)>,
}

impl std::fmt::Debug for StreamsApp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamsApp")
            .field("topology", &self.topology)
            .field("stores", &self.stores)
            .finish_non_exhaustive()
    }
}

impl StreamsApp {
    /// An application with `topology` whose tasks get processors from `factory`.
    pub fn new(
        topology: StreamsTopology,
        factory: impl FnMut(&StreamsTaskId) -> Result<Box<dyn Processor>, Error> + Send + 'static,
    ) -> Self {
        StreamsApp {
            topology,
            stores: BTreeMap::new(),
            unlogged: BTreeSet::new(),
            factory: Box::new(factory),
            listener: None,
            store_serdes: BTreeMap::new(),
        }
    }

    /// Declares a store of subtopology `subtopology`: each task of it gets its own, restored
    /// from the store's changelog partition before it processes.
    pub fn store(
        mut self,
        subtopology: impl Into<String>,
        name: impl Into<String>,
        format: StoreFormat,
    ) -> Self {
        self.stores
            .entry(subtopology.into())
            .or_default()
            .push((name.into(), format));
        self
    }

    /// Declares a store of subtopology `subtopology` with its changelog disabled (Java's
    /// `Materialized.withLoggingDisabled`): each task gets its own, which writes no
    /// changelog records and is not restored (it starts empty, as Java's in-memory store
    /// without logging does on a new instance). The topology declares no changelog topic
    /// for it.
    pub fn store_without_changelog(
        mut self,
        subtopology: impl Into<String>,
        name: impl Into<String>,
        format: StoreFormat,
    ) -> Self {
        let name = name.into();
        self.unlogged.insert(name.clone());
        self.store(subtopology, name, format)
    }

    /// Sets the listener told of every [`RuntimeState`] change of the runtime started with
    /// this app, from its first (`Created` to `Rebalancing`, in
    /// [`ProcessingRuntime::start`](super::ProcessingRuntime::start)) on; called with the
    /// new state, then the old one (Java's `KafkaStreams#setStateListener`).
    pub fn state_listener(
        mut self,
        listener: impl FnMut(RuntimeState, RuntimeState) + Send + 'static,
    ) -> Self {
        self.listener = Some(Box::new(listener));
        self
    }

    /// The topology.
    pub fn topology(&self) -> &StreamsTopology {
        &self.topology
    }

    /// Checks that every store's changelog is one of its subtopology's changelog topics.
    pub(crate) fn validate(&self, application_id: &str) -> Result<(), Error> {
        for (sub, stores) in &self.stores {
            let s = self.topology.subtopology_by_id(sub).ok_or_else(|| {
                Error::InvalidConfiguration {
                    field: "store",
                    reason: format!(
                        "stores declared for subtopology {sub:?}, which the topology does not have"
                    ),
                }
            })?;
            for (name, _) in stores {
                if self.unlogged.contains(name) {
                    continue;
                }
                let changelog = crate::state::changelog_topic(application_id, name);
                if !s.state_changelog_topics.iter().any(|t| t.name == changelog) {
                    return Err(Error::InvalidConfiguration {
                        field: "store",
                        reason: format!(
                            "store {name:?} of subtopology {sub:?} writes {changelog:?}, which is \
                             not among the subtopology's state changelog topics: add it to the \
                             topology (TopicInfo::new({changelog:?}))"
                        ),
                    });
                }
            }
        }
        Ok(())
    }
}
