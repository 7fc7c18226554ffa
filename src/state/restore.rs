//! Reading changelogs into stores: Java's restore consumer (`StoreChangelogReader`) and
//! standby updater, over one [`Fetcher`] of its own (streams-data-path.md §5.5, §5.7).
//!
//! * **Restore** (active task, before it processes): start after the store's changelog
//!   offset, or at the log start offset for an empty store; end = ListOffsets `latest` under
//!   `read_uncommitted` (always, as Java since KAFKA-10167); done when the position is at or
//!   past the end, so trailing transaction markers count as read. A store whose offset is no
//!   longer in the log (below its start or past its end) is cleared and rebuilt from the
//!   beginning, as Java wipes a corrupted task.
//! * **Catch-up** (standby / warm-up tasks): apply what is available now, never stop at an end.
//!
//! Changelog records with a null key are skipped with a warning (Java never writes one).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::client::SharedClient;
use crate::common::TopicPartition;
use crate::config::ClientConfig;
use crate::consumer::{Fetcher, FetcherConfig, IsolationLevel, OffsetReset, PartitionRecords};
use crate::error::Error;

use super::store::StateStore;

/// The longest one poll of a restore waits before the position is looked at again.
const POLL_SLICE: Duration = Duration::from_millis(250);

/// What one [`ChangelogReader::restore`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestoreSummary {
    /// Changelog records applied.
    pub records: u64,
    /// The offset restoring started at.
    pub start: i64,
    /// The end offset it restored up to (exclusive).
    pub end: i64,
}

/// Restores stores from their changelog partitions and keeps standby stores warm.
#[derive(Debug)]
pub struct ChangelogReader {
    fetcher: Fetcher,
    /// Partitions followed by `catch_up`, with their store's changelog offset when the last
    /// call returned: a store that moved since (restored, cleared, replaced) is sought anew.
    followed: HashMap<TopicPartition, Option<i64>>,
    /// The last end offset seen per partition (restore end, or a fetch's high watermark).
    ends: HashMap<TopicPartition, i64>,
}

impl ChangelogReader {
    /// A reader over `fetcher`, which it owns from now on (assignment, positions, pauses).
    /// Build the fetcher from [`ChangelogReader::fetcher_config`] so that it reads
    /// `read_uncommitted` and recovers from a position no longer in the log.
    pub fn new(fetcher: Fetcher) -> Self {
        ChangelogReader {
            fetcher,
            followed: HashMap::new(),
            ends: HashMap::new(),
        }
    }

    /// The fetcher settings a changelog reader wants on `client`: `read_uncommitted` (the
    /// at-least-once restore consumer) and `auto.offset.reset=earliest`.
    pub fn fetcher_config(client: ClientConfig) -> FetcherConfig {
        FetcherConfig::new(client)
            .isolation_level(IsolationLevel::ReadUncommitted)
            .auto_offset_reset(OffsetReset::Earliest)
    }

    /// Connects a reader's own fetcher ([`fetcher_config`](Self::fetcher_config)) within
    /// `timeout`.
    pub fn connect(client: ClientConfig, timeout: Duration) -> Result<Self, Error> {
        Ok(Self::new(Fetcher::connect(
            Self::fetcher_config(client),
            timeout,
        )?))
    }

    /// A reader whose fetcher ([`fetcher_config`](Self::fetcher_config)) is on `shared`, a
    /// client shared with other users on the same thread: no connection of its own.
    pub fn with_client(shared: SharedClient, client: ClientConfig) -> Self {
        Self::new(Fetcher::with_client(shared, Self::fetcher_config(client)))
    }

    /// A reader on `shared` (as [`with_client`](Self::with_client)) that reads with
    /// `isolation`: `read_committed` under exactly-once, so a store is rebuilt only from
    /// committed changelog records. A restore still ends at the high watermark, not at the
    /// last stable offset: it waits until every transaction on the changelog is decided,
    /// rather than stop before committed records that an open transaction of a dead producer
    /// holds back (Kafka aborts it after its `transaction.timeout.ms`).
    pub fn with_client_isolation(
        shared: SharedClient,
        client: ClientConfig,
        isolation: IsolationLevel,
    ) -> Self {
        let config = Self::fetcher_config(client).isolation_level(isolation);
        Self::new(Fetcher::with_client(shared, config))
    }

    /// The fetcher (e.g. for its positions).
    pub fn fetcher(&self) -> &Fetcher {
        &self.fetcher
    }

    /// Restores `store` from `changelog` up to its current end (ListOffsets latest,
    /// read_uncommitted; done when position >= end, so markers are covered): from
    /// `store.changelog_offset() + 1` if known, else from the beginning. Blocks until done
    /// or `deadline` ([`Error::Timeout`] naming the partition and how far it got; the
    /// records applied so far stay applied, and a later call goes on from there).
    ///
    /// Other partitions the reader follows (standbys) are paused meanwhile and keep their
    /// positions.
    pub fn restore<S: StateStore + ?Sized>(
        &mut self,
        changelog: &TopicPartition,
        store: &mut S,
        deadline: Instant,
    ) -> Result<RestoreSummary, Error> {
        let before = self.fetcher.assignment();
        let paused_before = self.fetcher.paused();
        let position_before = self.fetcher.position(changelog);
        let mut assignment = before.clone();
        if !assignment.contains(changelog) {
            assignment.push(changelog.clone());
        }
        self.fetcher.assign(assignment.iter().cloned());
        for tp in &assignment {
            let paused = tp != changelog;
            if paused {
                self.fetcher.pause(tp)?;
            } else {
                self.fetcher.resume(tp)?;
            }
        }
        let result = self.restore_assigned(changelog, store, deadline);
        // Back to what was followed before, where it was.
        self.fetcher.assign(before.iter().cloned());
        if before.contains(changelog) {
            match position_before {
                Some(p) => self.fetcher.seek(changelog, p)?,
                // It was waiting for its first position (a standby new to the reader).
                None => self.fetcher.seek_to_beginning(changelog)?,
            }
        }
        for tp in &before {
            if paused_before.contains(tp) {
                self.fetcher.pause(tp)?;
            } else {
                self.fetcher.resume(tp)?;
            }
        }
        result
    }

    fn restore_assigned<S: StateStore + ?Sized>(
        &mut self,
        tp: &TopicPartition,
        store: &mut S,
        deadline: Instant,
    ) -> Result<RestoreSummary, Error> {
        let limit = deadline.saturating_duration_since(Instant::now());
        let parts = std::slice::from_ref(tp);
        let end = self.end_offset(tp, deadline)?;
        self.ends.insert(tp.clone(), end);
        let log_start = self
            .fetcher
            .beginning_offsets(parts, deadline)?
            .get(tp)
            .copied()
            .unwrap_or(0);
        let start = match store.changelog_offset() {
            Some(o) if o + 1 < log_start || o + 1 > end => {
                log::warn!(
                    "store {}: changelog offset {o} is outside {tp} [{log_start}, {end}); \
                     rebuilding the store from the beginning",
                    store.name()
                );
                store.clear();
                log_start
            }
            Some(o) => o + 1,
            None => log_start,
        };
        self.fetcher.seek(tp, start)?;
        log::debug!(
            "store {}: restoring {tp} from {start} to {end}",
            store.name()
        );
        let mut records = 0u64;
        loop {
            let position = self.fetcher.position(tp).unwrap_or(start);
            if position >= end {
                log::info!(
                    "store {}: restored {records} records of {tp} [{start}, {end})",
                    store.name()
                );
                return Ok(RestoreSummary {
                    records,
                    start,
                    end,
                });
            }
            if Instant::now() >= deadline {
                return Err(Error::Timeout {
                    operation: format!(
                        "restoring store {} from {tp} (at offset {position} of end {end}, \
                         {records} records applied; give the restore more time)",
                        store.name()
                    ),
                    limit,
                });
            }
            // A poll returns once records arrive; a fetch that only moves the position (a
            // trailing transaction marker, a batch emptied by compaction) returns none, so
            // poll in slices and look at the position in between.
            let slice = deadline.min(Instant::now() + POLL_SLICE);
            for part in self.fetcher.poll(slice)? {
                if part.topic_partition() == tp {
                    records += apply(&part, store)?;
                }
            }
        }
    }

    /// Standby / warm-up: follows exactly the given changelog partitions, applies what is
    /// available now (one fetch, waiting at most until `deadline`) and returns the records
    /// applied. A partition new to the reader, or whose store changed since the last call
    /// (another store object, a restore, a clear), is read from the store's changelog
    /// offset + 1, or from the beginning for an empty store.
    pub fn catch_up<S: StateStore + ?Sized>(
        &mut self,
        stores: &mut [(&TopicPartition, &mut S)],
        deadline: Instant,
    ) -> Result<u64, Error> {
        self.fetcher
            .assign(stores.iter().map(|(tp, _)| (*tp).clone()));
        self.followed
            .retain(|tp, _| stores.iter().any(|(t, _)| *t == tp));
        self.ends
            .retain(|tp, _| stores.iter().any(|(t, _)| *t == tp));
        if stores.is_empty() {
            return Ok(0);
        }
        for (tp, store) in stores.iter() {
            self.fetcher.resume(tp)?;
            let offset = store.changelog_offset();
            if self.followed.get(*tp) == Some(&offset) {
                continue; // followed, and the store is where the last call left it
            }
            match offset {
                Some(o) => self.fetcher.seek(tp, o + 1)?,
                None => self.fetcher.seek_to_beginning(tp)?,
            }
            self.followed.insert((*tp).clone(), offset);
        }
        let index: HashMap<TopicPartition, usize> = stores
            .iter()
            .enumerate()
            .map(|(i, (tp, _))| ((*tp).clone(), i))
            .collect();
        let mut records = 0;
        let polled = self.fetcher.poll(deadline);
        let result = polled.and_then(|parts| {
            for part in parts {
                if let Some(&i) = index.get(part.topic_partition()) {
                    self.ends
                        .insert(part.topic_partition().clone(), part.high_watermark());
                    records += apply(&part, &mut *stores[i].1)?;
                }
            }
            Ok(records)
        });
        for (tp, store) in stores.iter() {
            if result.is_ok() {
                self.followed
                    .insert((*tp).clone(), store.changelog_offset());
            } else {
                // Positions may be past what was applied: seek again next time.
                self.followed.remove(*tp);
            }
        }
        result
    }

    /// The end offset of `changelog` last seen (by a restore, or as the high watermark of a
    /// catch-up fetch); `None` before any.
    pub(crate) fn known_end_offset(&self, changelog: &TopicPartition) -> Option<i64> {
        self.ends.get(changelog).copied()
    }

    /// The current end offset of `changelog` (ListOffsets latest, read_uncommitted; the last
    /// stable offset for a `read_committed` reader), e.g. for the task end offsets a member
    /// reports.
    pub fn end_offset(
        &mut self,
        changelog: &TopicPartition,
        deadline: Instant,
    ) -> Result<i64, Error> {
        let parts = std::slice::from_ref(changelog);
        let ends = self
            .fetcher
            .end_offsets(parts, IsolationLevel::ReadUncommitted, deadline)?;
        ends.get(changelog).copied().ok_or_else(|| Error::Protocol {
            broker: None,
            message: format!("ListOffsets answered without {changelog}"),
        })
    }
}

/// Applies the records of one fetched partition to `store`; returns how many.
fn apply<S: StateStore + ?Sized>(part: &PartitionRecords, store: &mut S) -> Result<u64, Error> {
    let mut n = 0u64;
    let mut null_keys = 0u64;
    for batch in part.batches() {
        let batch = batch.map_err(|e| Error::Protocol {
            broker: None,
            message: format!("corrupt changelog batch in {}: {e}", part.topic_partition()),
        })?;
        for r in batch.records() {
            match r.key {
                Some(key) => {
                    store.apply_changelog(r.offset, key, r.value, r.timestamp);
                    n += 1;
                }
                None => null_keys += 1,
            }
        }
    }
    if null_keys > 0 {
        log::warn!(
            "store {}: skipped {null_keys} changelog records with a null key in {}",
            store.name(),
            part.topic_partition()
        );
    }
    Ok(n)
}
