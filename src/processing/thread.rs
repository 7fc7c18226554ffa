//! The loop of one member (Kafka Streams' `StreamThread`): per iteration, take a new
//! assignment to the task manager, fetch, process every buffered record, send the output
//! whose linger passed, keep standbys warm, report task offsets, commit every
//! `commit.interval.ms`, purge consumed repartition records. Everything it does goes through
//! the task manager, the state manager, the record collector and the ports.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use crate::error::Error;
use crate::streams::commit::TopicPartition;
use crate::streams::StreamsTaskRole;

use super::collector::RecordCollector;
use super::instance::ProcessingStats;
use super::lifecycle::{Lifecycle, LocalTask, RuntimeState};
use super::ports::{Clock, GroupPort, InputPort, PurgePort};
use super::query::stores::QueryInbox;
use super::state_manager::StateManager;
use super::task_manager::{Sides, TaskManager};

/// The longest one iteration waits for the Produce answers of batches whose `linger.ms`
/// passed (sent every iteration, so output does not wait for the next commit's flush).
const SEND_READY_WAIT: Duration = Duration::from_secs(1);

/// The loop's cadences.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cadence {
    /// The longest one fetch (or one idle iteration) waits.
    pub poll_wait: Duration,
    /// Between two commits.
    pub commit_interval: Duration,
    /// Between two purges of repartition records.
    pub purge_interval: Duration,
    /// `buffered.records.per.partition`: the most records a partition's queue takes; a
    /// full queue's partition is paused in the fetcher until the queue drains below.
    pub max_buffered: usize,
}

/// One member's processing loop over its sides.
pub(crate) struct StreamThread<G> {
    pub(crate) group: G,
    pub(crate) input: Box<dyn InputPort + Send>,
    pub(crate) tasks: TaskManager,
    pub(crate) state: StateManager,
    pub(crate) collector: RecordCollector,
    pub(crate) purger: Box<dyn PurgePort + Send>,
    pub(crate) clock: Box<dyn Clock + Send>,
    pub(crate) cadence: Cadence,
    group_ready: bool,
    last_commit: Instant,
    last_purge: Instant,
    /// Input partitions paused because their queue is full.
    paused: BTreeSet<TopicPartition>,
    /// Why processing failed: the thread then processes nothing more and closes without a
    /// commit.
    pub(crate) failed: Option<String>,
    /// The runtime's state and its listener.
    pub(crate) lifecycle: Lifecycle,
    /// Interactive queries of its stores from other threads, answered between batches
    /// ([`super::query::stores`]).
    pub(crate) queries: Option<QueryInbox>,
}

impl<G: GroupPort> StreamThread<G> {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        group: G,
        input: Box<dyn InputPort + Send>,
        tasks: TaskManager,
        state: StateManager,
        collector: RecordCollector,
        purger: Box<dyn PurgePort + Send>,
        clock: Box<dyn Clock + Send>,
        cadence: Cadence,
    ) -> Self {
        let now = clock.now();
        StreamThread {
            group,
            input,
            tasks,
            state,
            collector,
            purger,
            clock,
            cadence,
            group_ready: false,
            last_commit: now,
            last_purge: now,
            paused: BTreeSet::new(),
            failed: None,
            lifecycle: Lifecycle::new(None).of_thread(),
            queries: None,
        }
    }

    /// One iteration; see [`ProcessingRuntime::run_once`](super::ProcessingRuntime::run_once).
    pub(crate) fn run_once(&mut self) -> Result<(), Error> {
        if let Some(why) = &self.failed {
            return Err(Error::InvalidConfiguration {
                field: "processing",
                reason: format!(
                    "this runtime failed ({why}) and processes nothing more: close it (nothing \
                     past the last processed record is committed) and start a new instance"
                ),
            });
        }
        let news = self.group.news();
        if let Some(ready) = news.group_ready {
            self.group_ready = ready;
        }
        if news.shutdown_requested {
            self.lifecycle.to(RuntimeState::PendingError);
            return Err(Error::InvalidConfiguration {
                field: "application",
                reason: "a member of the group requested an application shutdown; close this \
                         instance"
                    .into(),
            });
        }
        if news.changed {
            self.reconcile()?;
        }
        if news.changed || news.group_ready.is_some() {
            let next = match self.group_ready {
                true => RuntimeState::Running,
                false => RuntimeState::Rebalancing,
            };
            self.lifecycle.to(next);
        }
        self.fetch_and_process()?;
        self.answer_queries();
        let now = self.clock.now();
        if let Err(e) = self.collector.send_ready(now + SEND_READY_WAIT) {
            if !self.collector.is_eos() {
                return Err(e);
            }
            self.abort_failed_transaction(e)?;
        }
        self.state.catch_up_standbys(now + self.cadence.poll_wait)?;
        self.state.report_task_offsets(&mut self.group)?;
        if self.clock.now().saturating_duration_since(self.last_commit)
            >= self.cadence.commit_interval
        {
            self.commit_all()?;
        }
        let now = self.clock.now();
        if now.saturating_duration_since(self.last_purge) >= self.cadence.purge_interval {
            self.last_purge = now;
            self.purge();
        }
        Ok(())
    }

    /// The tasks held now: active ones, then standby and warm-up ones.
    pub(crate) fn local_tasks(&self) -> Vec<LocalTask> {
        let active = self
            .tasks
            .active_partitions()
            .map(|(task, partitions)| LocalTask {
                task: task.clone(),
                role: StreamsTaskRole::Active,
                partitions,
                changelogs: self.state.changelogs_of(task),
            });
        let standby = self.state.standby.keys().map(|task| LocalTask {
            task: task.clone(),
            role: match self.group.role_of(task) {
                Some(StreamsTaskRole::Warmup) => StreamsTaskRole::Warmup,
                _ => StreamsTaskRole::Standby,
            },
            partitions: self.group.task_partitions(task),
            changelogs: self.state.changelogs_of(task),
        });
        active.chain(standby).collect()
    }

    /// Progress so far.
    pub(crate) fn stats(&self) -> ProcessingStats {
        ProcessingStats {
            processed: self.tasks.processed,
            dropped_records: self.tasks.dropped_records,
            sent: self.collector.sent,
            changelog_records: self.collector.changelog_records,
            commits: self.tasks.commits,
            restored: self.state.restored,
            standby_applied: self.state.standby_applied,
            active_tasks: self.tasks.active.len(),
            standby_tasks: self.state.standby_count(),
        }
    }

    /// Exactly-once: a batch of the open transaction failed (a stale epoch after the
    /// coordinator aborted it, a fencing): abort with a new producer, revive the tasks.
    fn abort_failed_transaction(&mut self, e: Error) -> Result<(), Error> {
        log::warn!("sending in the transaction failed ({e}): aborting it");
        self.collector.abort(true)?;
        self.tasks.migrated = Some(e.to_string());
        self.revive_after_abort()
    }

    /// Whether the member runs: the group is ready and it owns active tasks.
    pub(crate) fn processing(&self) -> bool {
        self.group_ready && !self.tasks.active.is_empty()
    }

    fn fetch_and_process(&mut self) -> Result<(), Error> {
        let wait = self.cadence.poll_wait;
        if !self.processing() {
            self.clock.sleep(wait);
            return Ok(());
        }
        let max = self.cadence.max_buffered;
        let tasks = &self.tasks;
        let room = |tp: &TopicPartition| max.saturating_sub(tasks.buffered(tp));
        let records = self.input.poll(self.clock.now() + wait, &room)?;
        self.tasks.add_records(records);
        self.pause_full_queues();
        let input = &self.input;
        let lag = |tp: &TopicPartition| input.fetched_lag(tp);
        // A send failure is judged only for the processing it happened in.
        self.collector.take_send_failed();
        if let Err(e) = self.tasks.process(&mut self.collector, &lag) {
            if self.collector.take_send_failed() && self.collector.is_eos() {
                // Exactly-once: the producer surfaced a failed batch of the open transaction
                // (a stale epoch, a fencing) on a send: as a failed `send_ready`, abort and
                // revive the tasks from committed state, not a processing failure.
                return self.abort_failed_transaction(e);
            }
            self.failed = Some(e.to_string());
            self.lifecycle.to(RuntimeState::PendingError);
            return Err(e);
        }
        self.pause_full_queues();
        Ok(())
    }

    /// Java's `buffered.records.per.partition`: a partition whose queue holds
    /// `max_buffered` records is paused in the fetcher, and resumed once it drained below
    /// (`StreamTask#addRecords` / `process`), so its records wait in Kafka, not in memory.
    fn pause_full_queues(&mut self) {
        let max = self.cadence.max_buffered;
        self.paused.retain(|tp| self.tasks.owns_input(tp));
        for tp in self.tasks.input_partitions() {
            let full = self.tasks.buffered(tp) >= max;
            match (full, self.paused.contains(tp)) {
                (true, false) => {
                    log::debug!("{tp}: {max} records buffered, paused");
                    self.input.pause(tp);
                    self.paused.insert(tp.clone());
                }
                (false, true) => {
                    self.input.resume(tp);
                    self.paused.remove(tp);
                }
                _ => {}
            }
        }
    }

    /// Hands a new assignment to the task manager.
    pub(crate) fn reconcile(&mut self) -> Result<(), Error> {
        let now = self.clock.now();
        let mut sides = Sides {
            group: &mut self.group,
            input: &mut *self.input,
            state: &mut self.state,
            collector: &mut self.collector,
        };
        let lifecycle = &mut self.lifecycle;
        let mut rebalancing = || {
            lifecycle.to(RuntimeState::Rebalancing);
        };
        self.tasks.reconcile(&mut sides, now, &mut rebalancing)
    }

    /// Flushes the output, then commits the progress of every task that processed
    /// something since its last commit.
    pub(crate) fn commit_all(&mut self) -> Result<(), Error> {
        self.last_commit = self.clock.now();
        self.tasks
            .commit_all(&mut self.group, &mut self.collector)?;
        self.revive_after_abort()
    }

    /// Exactly-once, after an aborted transaction: closes the active tasks dirty and starts
    /// them again from committed state.
    fn revive_after_abort(&mut self) -> Result<(), Error> {
        if self.tasks.migrated.is_none() {
            return Ok(());
        }
        let now = self.clock.now();
        let mut sides = Sides {
            group: &mut self.group,
            input: &mut *self.input,
            state: &mut self.state,
            collector: &mut self.collector,
        };
        self.tasks.revive_after_abort(&mut sides, now)
    }

    /// Deletes the consumed records of repartition partitions up to their committed offsets
    /// (Java's `maybePurgeCommittedRecords`); failures are logged, never fatal.
    fn purge(&mut self) {
        if self.tasks.to_purge.is_empty() {
            return;
        }
        let offsets = std::mem::take(&mut self.tasks.to_purge);
        self.purger.purge(&offsets);
    }

    /// Closes the tasks, then leaves the group (Java's `KafkaStreams#close`): processors
    /// closed, output flushed and offsets committed (unless processing failed: then nothing
    /// is committed), and only then the leave heartbeat, so no processor of this member
    /// runs once another member may own its task.
    pub(crate) fn close(&mut self) -> Result<(), Error> {
        let clean = match &self.failed {
            Some(why) => {
                log::warn!("closing after a processing failure ({why}): no commit");
                false
            }
            None => {
                self.lifecycle.to(RuntimeState::PendingShutdown);
                true
            }
        };
        let committed = self
            .tasks
            .close_all(clean, &mut self.group, &mut self.collector);
        if let Err(e) = &committed {
            log::warn!("final commit failed: {e}");
        }
        let left = self.group.leave();
        self.lifecycle.to(match self.lifecycle.state() {
            RuntimeState::PendingError => RuntimeState::Error,
            _ => RuntimeState::NotRunning,
        });
        committed.and(left)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::streams::StreamsTaskRole::Active;

    use super::super::task::InputRecord;
    use super::super::testkit::*;

    /// `buffered.records.per.partition`: a poll copies at most the room of each queue, the
    /// full queue's partition is paused in the fetcher before its records are processed and
    /// resumed once its queue drained below; the rest of the partition waits in Kafka.
    #[test]
    fn a_full_queue_pauses_its_partition_until_it_drains() {
        let mut h = Harness::new(Duration::from_secs(3600));
        h.thread.cadence.max_buffered = 10;
        for i in 0..25 {
            h.shared.append(&input(0), "a", Some(b"x"), i);
        }
        h.shared.append(&input(1), "b", Some(b"x"), 0);
        h.assign(&[(0, Active), (1, Active)]);
        h.step();
        assert_eq!(h.thread.tasks.processed, 11, "10 of in-0, 1 of in-1");
        let pause = h.shared.position("pause in-0").expect("in-0 paused");
        let first = h.shared.position("process 0_0").expect("processed");
        let resume = h.shared.position("resume in-0").expect("in-0 resumed");
        assert!(pause < first && first < resume, "{:?}", h.shared.events());
        assert_eq!(h.shared.position("pause in-1"), None, "1 record: not full");
        h.step();
        assert_eq!(h.thread.tasks.processed, 21);
        h.step();
        assert_eq!(h.thread.tasks.processed, 26, "every record, in order");
        let offsets: Vec<String> = h
            .shared
            .events()
            .into_iter()
            .filter(|e| e.starts_with("process 0_0"))
            .collect();
        let want: Vec<String> = (0..25).map(|o| format!("process 0_0 {o}")).collect();
        assert_eq!(offsets, want);
        let pauses = h
            .shared
            .events()
            .iter()
            .filter(|e| *e == "pause in-0")
            .count();
        assert_eq!(
            pauses, 2,
            "full after the first two polls, not after the third (5)"
        );
    }

    /// Bytes one buffered record costs: the inline [`InputRecord`] only; its key, value and
    /// headers are shares of the fetched buffer and its partition name is shared
    /// (BENCHMARKS.md; 120 bytes inline plus three heap blocks when they were copies).
    #[test]
    fn bytes_per_buffered_record() {
        let inline = std::mem::size_of::<InputRecord>();
        println!("InputRecord inline: {inline} bytes, nothing of its own on the heap");
        assert!(inline <= 96, "{inline}");
    }
}
