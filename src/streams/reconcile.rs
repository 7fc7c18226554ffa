//! The application-side view of the tasks a member currently runs.
//!
//! The broker tells a member which tasks it *should* hold (the target). The application moves
//! its running tasks to that target and then reports what it now *owns* in the next heartbeat.
//! [`StreamsTaskRuntime`] is that "owned" view: it turns a target into an ordered list of
//! transitions for the application and hands back the owned assignment for the heartbeat.

use std::collections::BTreeSet;

use super::task::{
    StreamsTaskAssignment, StreamsTaskError, StreamsTaskId, StreamsTaskRole, StreamsTaskTransition,
};
use super::topology::StreamsTopology;

/// The tasks a member currently runs, and the reconciliation towards a new target.
///
/// Every operation is `O(n log n)` or better in the number of tasks: targets are diffed with
/// one sorted merge, and subtopology checks are set look-ups.
#[derive(Clone, Debug, Default)]
pub struct StreamsTaskRuntime {
    tasks: StreamsTaskAssignment,
    // `None` = accept any subtopology id (e.g. when the runtime is used without a topology).
    known_subtopologies: Option<BTreeSet<String>>,
    /// The session's tasks-lost count this runtime has caught up with (see `plan`).
    pub(crate) lost_seen: u64,
}

mod plan;
pub use plan::StreamsTaskPlan;

impl StreamsTaskRuntime {
    /// A runtime with no tasks that accepts tasks of any subtopology.
    pub fn new() -> Self {
        Self::default()
    }

    /// A runtime with no tasks that rejects targets naming a subtopology not in `ids`.
    pub fn with_known_subtopologies<I, S>(ids: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            tasks: StreamsTaskAssignment::new(),
            known_subtopologies: Some(ids.into_iter().map(Into::into).collect()),
            lost_seen: 0,
        }
    }

    /// A runtime with no tasks that only accepts the subtopologies of `topology`.
    pub fn for_topology(topology: &StreamsTopology) -> Self {
        Self::with_known_subtopologies(topology.subtopologies.iter().map(|s| s.id.clone()))
    }

    /// Moves the owned tasks to `target` and returns the transitions, in the canonical order
    /// documented on [`StreamsTaskTransition`] (removals, role changes, additions; each sorted
    /// by task).
    ///
    /// A target naming an unknown subtopology is rejected with
    /// [`StreamsTaskError::UnknownSubtopology`] and the owned tasks stay exactly as they were.
    pub fn reconcile(
        &mut self,
        target: &StreamsTaskAssignment,
    ) -> Result<Vec<StreamsTaskTransition>, StreamsTaskError> {
        self.check_known(target)?;
        let transitions = self.tasks.transitions_to(target);
        self.tasks = target.clone();
        Ok(transitions)
    }

    /// [`reconcile`](Self::reconcile) from the three wire lists. Duplicates, a task in two
    /// roles or an unknown subtopology are rejected without touching the owned tasks.
    pub fn reconcile_wire(
        &mut self,
        active: &[(String, Vec<i32>)],
        standby: &[(String, Vec<i32>)],
        warmup: &[(String, Vec<i32>)],
    ) -> Result<Vec<StreamsTaskTransition>, StreamsTaskError> {
        let target = StreamsTaskAssignment::from_wire(active, standby, warmup)?;
        self.reconcile(&target)
    }

    /// The owned tasks.
    pub fn tasks(&self) -> &StreamsTaskAssignment {
        &self.tasks
    }

    /// The role in which `task` is owned, if it is.
    pub fn role_of(&self, task: &StreamsTaskId) -> Option<StreamsTaskRole> {
        self.tasks.role_of(task)
    }

    /// A copy of the owned tasks, which the session reports as the owned tasks (all three
    /// lists at once) of the next heartbeat.
    pub fn owned_assignment(&self) -> StreamsTaskAssignment {
        self.tasks.clone()
    }

    /// Drops every task (the tasks were lost, e.g. after fencing) and returns one `Removed`
    /// transition per task, sorted by task.
    pub fn clear(&mut self) -> Vec<StreamsTaskTransition> {
        self.tasks.drain_removed()
    }

    /// Number of owned tasks.
    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    /// Whether no task is owned.
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    fn check_known(&self, target: &StreamsTaskAssignment) -> Result<(), StreamsTaskError> {
        let Some(known) = &self.known_subtopologies else {
            return Ok(());
        };
        for (task, _) in target.iter() {
            if !known.contains(&task.subtopology_id) {
                return Err(StreamsTaskError::UnknownSubtopology { task: task.clone() });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::streams::task::WireTaskIds;
    use StreamsTaskRole::*;
    use StreamsTaskTransition::*;

    fn w(list: &[(&str, &[i32])]) -> WireTaskIds {
        list.iter()
            .map(|(s, p)| (s.to_string(), p.to_vec()))
            .collect()
    }

    fn t(s: &str, p: i32) -> StreamsTaskId {
        StreamsTaskId::new(s, p)
    }

    #[test]
    fn reconcile_then_clear() {
        let mut rt = StreamsTaskRuntime::new();
        let tr = rt
            .reconcile_wire(&w(&[("0", &[1, 0])]), &w(&[("1", &[0])]), &[])
            .unwrap();
        assert_eq!(
            tr,
            vec![
                Added {
                    task: t("0", 0),
                    role: Active
                },
                Added {
                    task: t("0", 1),
                    role: Active
                },
                Added {
                    task: t("1", 0),
                    role: Standby
                },
            ]
        );
        assert_eq!(rt.role_of(&t("1", 0)), Some(Standby));
        assert_eq!(rt.len(), 3);
        // Same target again: nothing to do.
        assert!(rt
            .reconcile_wire(&w(&[("0", &[0, 1])]), &w(&[("1", &[0])]), &[])
            .unwrap()
            .is_empty());
        let owned = rt.owned_assignment();
        assert_eq!(owned.to_wire(Active), w(&[("0", &[0, 1])]));
        let removed = rt.clear();
        assert_eq!(
            removed,
            vec![
                Removed {
                    task: t("0", 0),
                    role: Active
                },
                Removed {
                    task: t("0", 1),
                    role: Active
                },
                Removed {
                    task: t("1", 0),
                    role: Standby
                },
            ]
        );
        assert!(rt.is_empty());
        assert!(rt.clear().is_empty());
    }

    #[test]
    fn conflicting_target_leaves_state_untouched() {
        let mut rt = StreamsTaskRuntime::new();
        rt.reconcile_wire(&w(&[("0", &[0])]), &[], &[]).unwrap();
        let before = rt.owned_assignment();
        let e = rt
            .reconcile_wire(&w(&[("0", &[1])]), &w(&[("0", &[1])]), &[])
            .unwrap_err();
        assert!(matches!(e, StreamsTaskError::ConflictingRoles { .. }));
        assert_eq!(rt.tasks(), &before);
    }

    #[test]
    fn unknown_subtopology_is_rejected_without_mutation() {
        let mut rt = StreamsTaskRuntime::with_known_subtopologies(["0", "1"]);
        rt.reconcile_wire(&w(&[("0", &[0])]), &[], &[]).unwrap();
        let before = rt.owned_assignment();
        let e = rt
            .reconcile_wire(&w(&[("1", &[0])]), &w(&[("9", &[0])]), &[])
            .unwrap_err();
        assert_eq!(e, StreamsTaskError::UnknownSubtopology { task: t("9", 0) });
        assert_eq!(rt.tasks(), &before);
    }

    #[test]
    fn hundred_thousand_tasks_reconcile_quickly() {
        // 100k tasks, half shifting role, a quarter removed and a quarter added. A quadratic
        // implementation would take minutes here; this must stay well under a second in
        // release and a few seconds in debug.
        let n = 100_000;
        let a = StreamsTaskAssignment::from_tasks((0..n).map(|i| {
            (
                t(&format!("{}", i % 50), i / 50),
                if i % 2 == 0 { Active } else { Standby },
            )
        }))
        .unwrap();
        let b = StreamsTaskAssignment::from_tasks((n / 4..n + n / 4).map(|i| {
            (
                t(&format!("{}", i % 50), i / 50),
                if i % 2 == 0 { Standby } else { Active },
            )
        }))
        .unwrap();
        let mut rt = StreamsTaskRuntime::new();
        let started = std::time::Instant::now();
        assert_eq!(rt.reconcile(&a).unwrap().len(), n as usize);
        let tr = rt.reconcile(&b).unwrap();
        let elapsed = started.elapsed();
        assert_eq!(
            tr.iter().filter(|x| matches!(x, Removed { .. })).count(),
            (n / 4) as usize
        );
        assert_eq!(
            tr.iter().filter(|x| matches!(x, Added { .. })).count(),
            (n / 4) as usize
        );
        assert_eq!(
            tr.iter()
                .filter(|x| matches!(x, RoleChanged { .. }))
                .count(),
            (n / 2 + n / 4) as usize
        );
        assert_eq!(rt.tasks(), &b);
        assert!(elapsed.as_secs() < 20, "reconcile took {elapsed:?}");
    }
}
