//! The state of the tasks (Kafka Streams' `ProcessorStateManager` with its
//! `StoreChangelogReader` and state directory): the stores each task gets, their changelog
//! partitions, restore before an active task processes, standby catch-up, stores kept after
//! a revocation or across a fencing, checkpoints, and the task offsets reported to the group.
//!
//! Which stores a starting task gets is a pure decision ([`store_source`]); the reading goes
//! through the [`ChangelogPort`], time comes in as arguments.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use crate::error::Error;
use crate::streams::commit::TopicPartition;
use crate::streams::{StreamsTaskId, StreamsTaskOffsets};

use super::ports::{ChangelogPort, GroupPort, OP_TIMEOUT};
use super::task_offsets::task_offset_sums;
use crate::state::{changelog_topic, KeyValueStore, StateStore, StoreFormat, ThreadCache};

/// One store of a task with its changelog partition, named once when the store is made
/// (every changelog record, restore and checkpoint of the store uses it).
pub(crate) struct TaskStore {
    /// The store, reached through the trait (a key-value store today).
    pub(crate) store: Box<dyn StateStore>,
    /// `<application.id>-<store>-changelog`, the task's partition; `None` for a store with
    /// its changelog disabled, which is neither logged nor restored.
    pub(crate) changelog: Option<TopicPartition>,
}

/// The stores of one task, by name.
pub(crate) type Stores = BTreeMap<String, TaskStore>;

/// The key-value stores among `stores`.
pub(crate) fn key_value_stores(stores: &Stores) -> impl Iterator<Item = &KeyValueStore> {
    stores
        .values()
        .filter_map(|s| s.store.as_any().downcast_ref::<KeyValueStore>())
}

/// How long the stores of a task revoked from this member are kept for a later assignment
/// (Java's `state.cleanup.delay.ms` default: a task directory not owned for that long goes).
pub(crate) const STATE_CLEANUP_DELAY: Duration = Duration::from_secs(600);

/// Where the stores of a task starting on this member come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StoreSource {
    /// The task was held in another role until this reconciliation (standby promoted to
    /// active, active turned standby): its stores move over.
    Carried,
    /// A standby kept up to date across a fencing.
    Orphaned,
    /// Kept since the task was revoked from this member.
    Retained,
    /// Nothing local: new empty stores, restored from the whole changelog.
    New,
}

/// Picks the stores of a starting task, most up to date first.
pub(crate) fn store_source(carried: bool, orphaned: bool, retained: bool) -> StoreSource {
    match (carried, orphaned, retained) {
        (true, _, _) => StoreSource::Carried,
        (_, true, _) => StoreSource::Orphaned,
        (_, _, true) => StoreSource::Retained,
        _ => StoreSource::New,
    }
}

/// The changelog partition of `store` of `task`.
pub(crate) fn changelog_partition(
    app_id: &str,
    task: &StreamsTaskId,
    store: &str,
) -> TopicPartition {
    TopicPartition::new(changelog_topic(app_id, store), task.partition)
}

/// The stores of the tasks of one member, and their changelogs.
pub(crate) struct StateManager {
    app_id: String,
    declared: BTreeMap<String, Vec<(String, StoreFormat)>>,
    /// The declared stores with their changelog disabled.
    unlogged: BTreeSet<String>,
    changelogs: Box<dyn ChangelogPort + Send>,
    /// The thread's record cache, shared by the stores of its tasks.
    cache: ThreadCache,
    /// Standby and warm-up tasks' stores, and those of standbys lost with a fencing.
    pub(crate) standby: BTreeMap<StreamsTaskId, Stores>,
    /// Standby tasks lost with a fencing and not assigned again yet.
    orphaned: BTreeSet<StreamsTaskId>,
    /// Stores of tasks revoked from this member, kept (since the instant) for a later
    /// assignment, as Java keeps a closed task's state directory.
    retained: BTreeMap<StreamsTaskId, (Instant, Stores)>,
    /// The task offsets last handed to the group.
    reported: Option<StreamsTaskOffsets>,
    /// Changelog records applied while restoring active tasks.
    pub(crate) restored: u64,
    /// Changelog records applied by standby and warm-up tasks.
    pub(crate) standby_applied: u64,
}

impl StateManager {
    pub(crate) fn new(
        app_id: &str,
        declared: BTreeMap<String, Vec<(String, StoreFormat)>>,
        changelogs: Box<dyn ChangelogPort + Send>,
    ) -> Self {
        StateManager {
            app_id: app_id.to_string(),
            declared,
            unlogged: BTreeSet::new(),
            changelogs,
            cache: ThreadCache::new(crate::state::DEFAULT_CACHE_MAX_BYTES),
            standby: BTreeMap::new(),
            orphaned: BTreeSet::new(),
            retained: BTreeMap::new(),
            reported: None,
            restored: 0,
            standby_applied: 0,
        }
    }

    /// The stores named in `unlogged` have no changelog: their tasks' stores are neither
    /// logged nor restored.
    pub(crate) fn without_changelog(mut self, unlogged: BTreeSet<String>) -> Self {
        self.unlogged = unlogged;
        self
    }

    /// Uses `cache` (`statestore.cache.max.bytes`; Java's 10 MiB unless set) for the
    /// stores it makes from now on.
    pub(crate) fn with_cache(mut self, cache: ThreadCache) -> Self {
        self.cache = cache;
        self
    }

    /// The bytes the thread's record cache holds now.
    #[cfg(test)]
    pub(crate) fn cache_bytes(&self) -> usize {
        self.cache.size_bytes()
    }

    /// The stores named in `unlogged` have no changelog, for the stores it makes from now on.
    #[cfg(test)]
    pub(crate) fn set_without_changelog(&mut self, unlogged: BTreeSet<String>) {
        self.unlogged = unlogged;
    }

    /// Uses `cache` for the stores it makes from now on.
    #[cfg(test)]
    pub(crate) fn set_cache(&mut self, cache: ThreadCache) {
        self.cache = cache;
    }

    /// Standby and warm-up tasks held for the group now (not the orphaned ones).
    pub(crate) fn standby_count(&self) -> usize {
        self.standby.len().saturating_sub(self.orphaned.len())
    }

    /// The changelog partitions of `task`'s declared stores.
    pub(crate) fn changelogs_of(&self, task: &StreamsTaskId) -> Vec<TopicPartition> {
        self.declared
            .get(&task.subtopology_id)
            .map(|v| {
                v.iter()
                    .filter(|(name, _)| !self.unlogged.contains(name))
                    .map(|(name, _)| changelog_partition(&self.app_id, task, name))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A standby lost with a fencing: its stores are kept up to date while the member
    /// rejoins, as Java's `handleLostAll` keeps standby tasks.
    pub(crate) fn standby_lost(&mut self, task: &StreamsTaskId) {
        if self.standby.contains_key(task) {
            log::warn!("task {task}: standby lost, its stores are kept while rejoining");
            self.orphaned.insert(task.clone());
        }
    }

    /// Takes the stores of a revoked standby task.
    pub(crate) fn take_standby(&mut self, task: &StreamsTaskId) -> Option<Stores> {
        self.standby.remove(task)
    }

    /// Marks the stores of an active task stopped cleanly (its writes flushed) as reflecting
    /// their changelogs up to the current end, as Java checkpoints on a clean close.
    pub(crate) fn checkpoint(
        &mut self,
        task: &StreamsTaskId,
        stores: &mut Stores,
    ) -> Result<(), Error> {
        for s in stores.values_mut() {
            let Some(changelog) = &s.changelog else {
                continue;
            };
            let end = self
                .changelogs
                .end_offset(changelog, Instant::now() + OP_TIMEOUT)?;
            if end > 0 {
                log::trace!("task {task}: {changelog} checkpointed at {}", end - 1);
                s.store.checkpoint(end - 1);
            }
        }
        Ok(())
    }

    /// Keeps the stores of a task revoked from this member for a later assignment.
    pub(crate) fn retain(&mut self, task: &StreamsTaskId, stores: Stores, now: Instant) {
        if !stores.is_empty() {
            self.retained.insert(task.clone(), (now, stores));
        }
    }

    /// The stores of a task starting here (see [`store_source`]) at `now`.
    pub(crate) fn stores_for(
        &mut self,
        task: &StreamsTaskId,
        carried: Option<Stores>,
        now: Instant,
    ) -> Stores {
        let source = store_source(
            carried.is_some(),
            self.orphaned.contains(task),
            self.retained.contains_key(task),
        );
        let orphaned = match self.orphaned.remove(task) {
            true => self.standby.remove(task),
            false => None,
        };
        let retained = self.retained.remove(task);
        let stores = match source {
            StoreSource::Carried => carried,
            StoreSource::Orphaned => {
                log::info!("task {task}: reusing the standby stores kept across the fencing");
                orphaned
            }
            StoreSource::Retained => retained.map(|(since, mut stores)| {
                log::info!(
                    "task {task}: reusing the stores kept since its revocation {:?} ago",
                    now.saturating_duration_since(since)
                );
                // Java closes a revoked task: a store without a changelog (in memory) is
                // gone, and the task starts it empty when it comes back.
                for (name, s) in stores.iter_mut() {
                    if s.changelog.is_none() {
                        if let Some(format) = self.format_of(task, name) {
                            *s = self.new_store(task, name, format);
                        }
                    }
                }
                stores
            }),
            StoreSource::New => None,
        };
        stores.unwrap_or_else(|| self.new_stores(task))
    }

    fn new_stores(&self, task: &StreamsTaskId) -> Stores {
        self.declared
            .get(&task.subtopology_id)
            .map(|v| {
                v.iter()
                    .map(|(name, format)| (name.clone(), self.new_store(task, name, *format)))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A new empty store `name` of `task`, with its changelog partition unless it has none.
    fn new_store(&self, task: &StreamsTaskId, name: &str, format: StoreFormat) -> TaskStore {
        TaskStore {
            store: Box::new(KeyValueStore::new(name, format).with_cache(&self.cache)),
            changelog: (!self.unlogged.contains(name))
                .then(|| changelog_partition(&self.app_id, task, name)),
        }
    }

    /// The format store `name` of `task`'s subtopology was declared with.
    fn format_of(&self, task: &StreamsTaskId, name: &str) -> Option<StoreFormat> {
        self.declared
            .get(&task.subtopology_id)?
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, f)| *f)
    }

    /// Holds `stores` as those of standby (or warm-up) task `task`.
    pub(crate) fn add_standby(&mut self, task: &StreamsTaskId, stores: Stores) {
        self.standby.insert(task.clone(), stores);
    }

    /// Brings the stores of standby task `task` up to their changelogs' current ends.
    pub(crate) fn restore_standby(&mut self, task: &StreamsTaskId) -> Result<(), Error> {
        let Some(mut stores) = self.standby.remove(task) else {
            return Ok(());
        };
        let r = self.read_up_to_end(task, &mut stores);
        self.standby.insert(task.clone(), stores);
        self.standby_applied += r?;
        Ok(())
    }

    /// After a reconciliation: standbys kept across a fencing that the new assignment left
    /// out go, and so do retained stores older than [`STATE_CLEANUP_DELAY`].
    pub(crate) fn after_assignment(&mut self, assigned_any: bool, now: Instant) {
        self.retained
            .retain(|_, (since, _)| now.saturating_duration_since(*since) < STATE_CLEANUP_DELAY);
        if assigned_any {
            for task in std::mem::take(&mut self.orphaned) {
                log::info!("task {task}: kept standby not assigned again, dropped");
                self.standby.remove(&task);
            }
        }
    }

    /// Restores the stores of active task `task` up to their changelogs' ends (before it
    /// processes anything).
    pub(crate) fn restore_active(
        &mut self,
        task: &StreamsTaskId,
        stores: &mut Stores,
    ) -> Result<(), Error> {
        self.restored += self.read_up_to_end(task, stores)?;
        Ok(())
    }

    fn read_up_to_end(&mut self, task: &StreamsTaskId, stores: &mut Stores) -> Result<u64, Error> {
        let mut n = 0;
        for TaskStore { store, changelog } in stores.values_mut() {
            let Some(changelog) = changelog else {
                // Nothing to read: the store starts as it is (empty when new).
                continue;
            };
            let s =
                self.changelogs
                    .restore(changelog, &mut **store, Instant::now() + OP_TIMEOUT)?;
            n += s.records;
            log::info!(
                "task {task}: store {} read from {changelog} ({} records, offsets {}..{})",
                store.name(),
                s.records,
                s.start,
                s.end
            );
        }
        Ok(n)
    }

    /// Applies what the standby stores' changelogs hold now, waiting at most until
    /// `deadline`.
    pub(crate) fn catch_up_standbys(&mut self, deadline: Instant) -> Result<(), Error> {
        if self.standby.is_empty() {
            return Ok(());
        }
        let mut pairs: Vec<(&TopicPartition, &mut dyn StateStore)> = self
            .standby
            .values_mut()
            .flat_map(|s| s.values_mut())
            .filter_map(|TaskStore { store, changelog }| Some((changelog.as_ref()?, &mut **store)))
            .collect();
        self.standby_applied += self.changelogs.catch_up(&mut pairs, deadline)?;
        Ok(())
    }

    /// The task offset sums: offsets of every task with local state but no running active
    /// one (standbys and kept stores); end offsets of the tasks still reading changelogs.
    pub(crate) fn task_offsets(&self) -> StreamsTaskOffsets {
        let kept = self
            .retained
            .iter()
            .map(|(task, (_, stores))| (task, stores));
        let offsets = self.standby.iter().chain(kept).map(|(task, stores)| {
            (
                task,
                // Java sums the offsets of the logged stores only.
                stores
                    .values()
                    .filter(|s| s.changelog.is_some())
                    .map(|s| s.store.changelog_offset())
                    .collect(),
            )
        });
        let ends = self.standby.iter().map(|(task, stores)| {
            let ends = stores
                .values()
                .filter_map(|s| s.changelog.as_ref())
                .map(|c| self.changelogs.known_end_offset(c));
            (task, ends.collect())
        });
        task_offset_sums(offsets, ends)
    }

    /// Hands the group the task offset sums when they changed; the heartbeat sends them at
    /// Java's cadence.
    pub(crate) fn report_task_offsets(&mut self, group: &mut dyn GroupPort) -> Result<(), Error> {
        let offsets = self.task_offsets();
        if self.reported.as_ref() == Some(&offsets) {
            return Ok(());
        }
        log::debug!("task offsets now {offsets:?}");
        group.report_task_offsets(offsets.clone())?;
        self.reported = Some(offsets);
        Ok(())
    }
}
