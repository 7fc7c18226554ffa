//! The two-phase reconciliation of [`StreamsTaskRuntime`], as Kafka Streams does it: first
//! the application stops (and commits) the revoked tasks and the member reports them
//! released; only then does it take the new tasks and acknowledge them.

use super::StreamsTaskRuntime;
use crate::streams::task::{
    StreamsTaskAssignment, StreamsTaskError, StreamsTaskId, StreamsTaskRole, StreamsTaskTransition,
};

/// What moving the owned tasks to a target takes, in the safe order: stop
/// [`revoked`](Self::revoked), report them released, start [`assigned`](Self::assigned),
/// acknowledge them. A task that changes role is revoked in its old role and assigned in
/// its new one. [`lost`](Self::lost) tasks were taken from the member (fencing, session
/// expiry): drop them **without** committing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamsTaskPlan {
    /// Tasks lost since the last plan; already removed from the runtime.
    pub lost: Vec<(StreamsTaskId, StreamsTaskRole)>,
    /// Tasks to stop (commit active ones first), with the role they are held in.
    pub revoked: Vec<(StreamsTaskId, StreamsTaskRole)>,
    /// Tasks to start, with their new role.
    pub assigned: Vec<(StreamsTaskId, StreamsTaskRole)>,
}

impl StreamsTaskPlan {
    /// True if nothing changes.
    pub fn is_empty(&self) -> bool {
        self.lost.is_empty() && self.revoked.is_empty() && self.assigned.is_empty()
    }
}

impl StreamsTaskRuntime {
    /// Computes the [`StreamsTaskPlan`] towards `target` without changing the owned tasks.
    /// A target naming an unknown subtopology is rejected.
    pub fn plan(
        &self,
        target: &StreamsTaskAssignment,
    ) -> Result<StreamsTaskPlan, StreamsTaskError> {
        self.check_known(target)?;
        let mut plan = StreamsTaskPlan::default();
        for t in self.tasks.transitions_to(target) {
            match t {
                StreamsTaskTransition::Removed { task, role } => plan.revoked.push((task, role)),
                StreamsTaskTransition::Added { task, role } => plan.assigned.push((task, role)),
                StreamsTaskTransition::RoleChanged { task, from, to } => {
                    plan.revoked.push((task.clone(), from));
                    plan.assigned.push((task, to));
                }
            }
        }
        Ok(plan)
    }

    /// Drops the plan's revoked tasks (those still held in the planned role) from the owned
    /// tasks; call once the application stopped them.
    pub fn release_revoked(&mut self, plan: &StreamsTaskPlan) {
        let revoked: std::collections::BTreeSet<_> = plan.revoked.iter().collect();
        let kept = self
            .tasks
            .iter()
            .filter(|(t, r)| !revoked.contains(&((*t).clone(), *r)))
            .map(|(t, r)| (t.clone(), r))
            .collect::<Vec<_>>();
        self.tasks = StreamsTaskAssignment::from_tasks(kept).unwrap_or_default();
    }

    /// Adds the plan's assigned tasks to the owned tasks (replacing the role of a task still
    /// held); call once the application took them.
    pub fn take_assigned(&mut self, plan: &StreamsTaskPlan) {
        let assigned: std::collections::BTreeMap<_, _> = plan.assigned.iter().cloned().collect();
        let mut tasks = self
            .tasks
            .iter()
            .filter(|(t, _)| !assigned.contains_key(*t))
            .map(|(t, r)| (t.clone(), r))
            .collect::<Vec<_>>();
        tasks.extend(assigned);
        self.tasks = StreamsTaskAssignment::from_tasks(tasks).unwrap_or_default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use StreamsTaskRole::*;

    fn a(tasks: &[(&str, i32, StreamsTaskRole)]) -> StreamsTaskAssignment {
        StreamsTaskAssignment::from_tasks(
            tasks
                .iter()
                .map(|(s, p, r)| (StreamsTaskId::new(*s, *p), *r)),
        )
        .unwrap()
    }

    #[test]
    fn revoke_then_assign() {
        let mut rt = StreamsTaskRuntime::new();
        rt.reconcile(&a(&[("0", 0, Active), ("0", 1, Active), ("0", 2, Standby)]))
            .unwrap();
        let target = a(&[("0", 1, Standby), ("0", 2, Standby), ("0", 3, Active)]);
        let plan = rt.plan(&target).unwrap();
        assert_eq!(
            plan.revoked,
            vec![
                (StreamsTaskId::new("0", 0), Active),
                (StreamsTaskId::new("0", 1), Active)
            ]
        );
        assert_eq!(
            plan.assigned,
            vec![
                (StreamsTaskId::new("0", 1), Standby),
                (StreamsTaskId::new("0", 3), Active)
            ]
        );
        // Planning changes nothing.
        assert_eq!(rt.len(), 3);
        rt.release_revoked(&plan);
        assert_eq!(rt.tasks(), &a(&[("0", 2, Standby)]));
        rt.take_assigned(&plan);
        assert_eq!(rt.tasks(), &target);
        assert!(rt.plan(&target).unwrap().is_empty());
    }

    #[test]
    fn unknown_subtopology_is_rejected() {
        let rt = StreamsTaskRuntime::with_known_subtopologies(["0"]);
        assert!(rt.plan(&a(&[("9", 0, Active)])).is_err());
    }
}
