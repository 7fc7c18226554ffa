//! Task ids, task roles, one member's task assignment and the transitions between two
//! assignments.
//!
//! A Streams group assigns *tasks*, not partitions: task `(subtopology, p)` processes partition
//! `p` of every source topic of that subtopology. A member holds each task in at most one of
//! three roles (active, standby, warm-up); the broker guarantees that, so input that breaks it
//! is treated as corrupt and rejected instead of being merged into something the broker never
//! sent.

use std::cmp::Ordering;
use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::fmt;

/// A task id: a subtopology id plus a partition number.
///
/// Ordered by subtopology id (byte-wise string order, which is the order Kafka's Java client
/// uses for the ASCII ids Kafka Streams generates: `"0"`, `"1"`, …) and then by partition.
/// Displayed like Java's `TaskId`: `"0_1"` is partition 1 of subtopology `"0"`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StreamsTaskId {
    /// The subtopology id as sent on the wire (`SubtopologyId`).
    pub subtopology_id: String,
    /// The partition number, i.e. the partition of each source topic this task processes.
    pub partition: i32,
}

impl StreamsTaskId {
    /// Creates a task id.
    pub fn new(subtopology_id: impl Into<String>, partition: i32) -> Self {
        Self {
            subtopology_id: subtopology_id.into(),
            partition,
        }
    }
}

impl fmt::Display for StreamsTaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}_{}", self.subtopology_id, self.partition)
    }
}

/// The role in which a member holds a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum StreamsTaskRole {
    /// The member processes the task's records and owns its input partitions.
    Active,
    /// The member keeps a replica of the task's state up to date.
    Standby,
    /// A standby that is being caught up so that it can later become active
    /// (only brokers 4.4+ assign these).
    Warmup,
}

impl StreamsTaskRole {
    /// All roles, in the order the wire lists them (active, standby, warm-up).
    pub const ALL: [StreamsTaskRole; 3] = [
        StreamsTaskRole::Active,
        StreamsTaskRole::Standby,
        StreamsTaskRole::Warmup,
    ];
}

impl fmt::Display for StreamsTaskRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StreamsTaskRole::Active => "active",
            StreamsTaskRole::Standby => "standby",
            StreamsTaskRole::Warmup => "warm-up",
        })
    }
}

/// Why a task assignment (or a transition list) was rejected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StreamsTaskError {
    /// The same task appears twice in the list of one role.
    #[error("task {task} appears more than once in the {role} tasks")]
    DuplicateTask {
        /// The repeated task.
        task: StreamsTaskId,
        /// The role list it was repeated in.
        role: StreamsTaskRole,
    },
    /// The same task appears in two roles; a member holds each task in at most one role.
    #[error("task {task} is assigned both as {first} and as {second}")]
    ConflictingRoles {
        /// The task.
        task: StreamsTaskId,
        /// The role it was seen in first.
        first: StreamsTaskRole,
        /// The role it was seen in second.
        second: StreamsTaskRole,
    },
    /// A partition number is negative.
    #[error("task {task} has a negative partition")]
    NegativePartition {
        /// The offending task.
        task: StreamsTaskId,
    },
    /// A subtopology id is the empty string.
    #[error("a task list names an empty subtopology id")]
    EmptySubtopologyId,
    /// A task names a subtopology that the member's topology does not contain.
    #[error("task {task} names subtopology {:?}, which is not in the topology", task.subtopology_id)]
    UnknownSubtopology {
        /// The offending task.
        task: StreamsTaskId,
    },
    /// A transition does not fit the assignment it is applied to (e.g. removing a task that is
    /// not held, or held in another role).
    #[error("transition {transition} does not apply to the current tasks")]
    TransitionMismatch {
        /// The transition that did not apply.
        transition: Box<StreamsTaskTransition>,
    },
}

/// The tasks one member holds, each in exactly one role, in canonical (sorted) form.
///
/// Equality is set equality: two assignments built from differently ordered wire lists compare
/// equal. Conversion back to the wire ([`to_wire`](Self::to_wire)) is deterministic: subtopologies
/// sorted by id, partitions ascending, subtopologies without a task omitted.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct StreamsTaskAssignment {
    // One map instead of three sets: the "one role per task" invariant then holds by
    // construction, and a diff is a single sorted merge.
    tasks: BTreeMap<StreamsTaskId, StreamsTaskRole>,
}

/// Per-subtopology partition lists as they travel on the wire (`[]TaskIds`).
pub type WireTaskIds = Vec<(String, Vec<i32>)>;

impl StreamsTaskAssignment {
    /// An empty assignment.
    pub fn new() -> Self {
        Self::default()
    }

    /// Builds an assignment from the three per-subtopology lists of a heartbeat.
    ///
    /// Rejects (with nothing built) a task that appears twice in one list
    /// ([`StreamsTaskError::DuplicateTask`]), a task in two lists
    /// ([`StreamsTaskError::ConflictingRoles`]), a negative partition and an empty
    /// subtopology id. A subtopology may appear several times in one list as long as its
    /// partitions do not repeat.
    pub fn from_wire(
        active: &[(String, Vec<i32>)],
        standby: &[(String, Vec<i32>)],
        warmup: &[(String, Vec<i32>)],
    ) -> Result<Self, StreamsTaskError> {
        let mut out = Self::new();
        for (role, list) in [
            (StreamsTaskRole::Active, active),
            (StreamsTaskRole::Standby, standby),
            (StreamsTaskRole::Warmup, warmup),
        ] {
            for (subtopology_id, partitions) in list {
                if subtopology_id.is_empty() {
                    return Err(StreamsTaskError::EmptySubtopologyId);
                }
                for &partition in partitions {
                    out.insert(StreamsTaskId::new(subtopology_id.clone(), partition), role)?;
                }
            }
        }
        Ok(out)
    }

    /// Builds an assignment from `(task, role)` pairs, with the same checks as
    /// [`from_wire`](Self::from_wire).
    pub fn from_tasks<I>(tasks: I) -> Result<Self, StreamsTaskError>
    where
        I: IntoIterator<Item = (StreamsTaskId, StreamsTaskRole)>,
    {
        let mut out = Self::new();
        for (task, role) in tasks {
            out.insert(task, role)?;
        }
        Ok(out)
    }

    /// Adds one task. Fails, leaving `self` unchanged, if the task is already held (in any
    /// role), its partition is negative or its subtopology id is empty.
    pub fn insert(
        &mut self,
        task: StreamsTaskId,
        role: StreamsTaskRole,
    ) -> Result<(), StreamsTaskError> {
        if task.subtopology_id.is_empty() {
            return Err(StreamsTaskError::EmptySubtopologyId);
        }
        if task.partition < 0 {
            return Err(StreamsTaskError::NegativePartition { task });
        }
        match self.tasks.entry(task) {
            Entry::Vacant(v) => {
                v.insert(role);
                Ok(())
            }
            Entry::Occupied(o) => {
                let first = *o.get();
                let task = o.key().clone();
                Err(if first == role {
                    StreamsTaskError::DuplicateTask { task, role }
                } else {
                    StreamsTaskError::ConflictingRoles {
                        task,
                        first,
                        second: role,
                    }
                })
            }
        }
    }

    /// The role in which `task` is held, if it is held.
    pub fn role_of(&self, task: &StreamsTaskId) -> Option<StreamsTaskRole> {
        self.tasks.get(task).copied()
    }

    /// Whether `task` is held in any role.
    pub fn contains(&self, task: &StreamsTaskId) -> bool {
        self.tasks.contains_key(task)
    }

    /// Number of tasks over all roles.
    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    /// Whether no task is held.
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    /// All tasks with their roles, sorted by task.
    pub fn iter(&self) -> impl Iterator<Item = (&StreamsTaskId, StreamsTaskRole)> + '_ {
        self.tasks.iter().map(|(t, r)| (t, *r))
    }

    /// The tasks held in `role`, sorted.
    pub fn tasks_with_role(
        &self,
        role: StreamsTaskRole,
    ) -> impl Iterator<Item = &StreamsTaskId> + '_ {
        self.tasks
            .iter()
            .filter(move |(_, r)| **r == role)
            .map(|(t, _)| t)
    }

    /// The active tasks, sorted.
    pub fn active(&self) -> impl Iterator<Item = &StreamsTaskId> + '_ {
        self.tasks_with_role(StreamsTaskRole::Active)
    }

    /// The standby tasks, sorted.
    pub fn standby(&self) -> impl Iterator<Item = &StreamsTaskId> + '_ {
        self.tasks_with_role(StreamsTaskRole::Standby)
    }

    /// The warm-up tasks, sorted.
    pub fn warmup(&self) -> impl Iterator<Item = &StreamsTaskId> + '_ {
        self.tasks_with_role(StreamsTaskRole::Warmup)
    }

    /// Number of tasks held in `role`.
    pub fn count(&self, role: StreamsTaskRole) -> usize {
        self.tasks_with_role(role).count()
    }

    /// The tasks of `role` as the wire wants them: one entry per subtopology that has at least
    /// one such task, subtopologies sorted by id, partitions ascending.
    pub fn to_wire(&self, role: StreamsTaskRole) -> WireTaskIds {
        let mut out: WireTaskIds = Vec::new();
        // The map is sorted by (subtopology, partition), so grouping consecutive runs yields
        // both orders at once.
        for task in self.tasks_with_role(role) {
            match out.last_mut() {
                Some((id, parts)) if *id == task.subtopology_id => parts.push(task.partition),
                _ => out.push((task.subtopology_id.clone(), vec![task.partition])),
            }
        }
        out
    }

    /// The distinct subtopology ids named by any task, sorted.
    pub fn subtopology_ids(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for task in self.tasks.keys() {
            if out.last() != Some(&task.subtopology_id.as_str()) {
                out.push(task.subtopology_id.as_str());
            }
        }
        out
    }

    /// The transitions that turn `self` into `target`, in the canonical order of
    /// [`StreamsTaskTransition`] (all removals, then role changes, then additions; each group
    /// sorted by task). Linear in the two sizes: one merge over the sorted maps.
    pub fn transitions_to(&self, target: &StreamsTaskAssignment) -> Vec<StreamsTaskTransition> {
        let mut removed = Vec::new();
        let mut changed = Vec::new();
        let mut added = Vec::new();
        let mut cur = self.tasks.iter().peekable();
        let mut tgt = target.tasks.iter().peekable();
        loop {
            let order = match (cur.peek(), tgt.peek()) {
                (None, None) => break,
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (Some((a, _)), Some((b, _))) => a.cmp(b),
            };
            match order {
                Ordering::Less => {
                    if let Some((task, role)) = cur.next() {
                        removed.push(StreamsTaskTransition::Removed {
                            task: task.clone(),
                            role: *role,
                        });
                    }
                }
                Ordering::Greater => {
                    if let Some((task, role)) = tgt.next() {
                        added.push(StreamsTaskTransition::Added {
                            task: task.clone(),
                            role: *role,
                        });
                    }
                }
                Ordering::Equal => {
                    if let (Some((task, from)), Some((_, to))) = (cur.next(), tgt.next()) {
                        if from != to {
                            changed.push(StreamsTaskTransition::RoleChanged {
                                task: task.clone(),
                                from: *from,
                                to: *to,
                            });
                        }
                    }
                }
            }
        }
        removed.append(&mut changed);
        removed.append(&mut added);
        removed
    }

    /// Applies `transitions` to a copy of `self` and returns it; `self` is never changed.
    ///
    /// Each transition must fit: `Removed` needs the task held in that role, `RoleChanged`
    /// needs it held in `from`, `Added` needs it not held. This lets an application that
    /// mirrors the runtime's tasks check that it saw every transition.
    pub fn apply_transitions(
        &self,
        transitions: &[StreamsTaskTransition],
    ) -> Result<StreamsTaskAssignment, StreamsTaskError> {
        let mut out = self.clone();
        for t in transitions {
            let mismatch = || StreamsTaskError::TransitionMismatch {
                transition: Box::new(t.clone()),
            };
            match t {
                StreamsTaskTransition::Removed { task, role } => {
                    if out.tasks.get(task) != Some(role) {
                        return Err(mismatch());
                    }
                    out.tasks.remove(task);
                }
                StreamsTaskTransition::RoleChanged { task, from, to } => {
                    match out.tasks.get_mut(task) {
                        Some(r) if r == from => *r = *to,
                        _ => return Err(mismatch()),
                    }
                }
                StreamsTaskTransition::Added { task, role } => {
                    if out.tasks.contains_key(task) {
                        return Err(mismatch());
                    }
                    out.insert(task.clone(), *role).map_err(|_| mismatch())?;
                }
            }
        }
        Ok(out)
    }

    /// Removes every task and returns the `Removed` transitions, sorted by task.
    pub(crate) fn drain_removed(&mut self) -> Vec<StreamsTaskTransition> {
        std::mem::take(&mut self.tasks)
            .into_iter()
            .map(|(task, role)| StreamsTaskTransition::Removed { task, role })
            .collect()
    }
}

/// One change between the tasks a member runs and the tasks it should run.
///
/// **Order.** `Ord` sorts all `Removed` first, then all `RoleChanged`, then all `Added`, each
/// group by task id (ties broken by role). That is the order in which an application should
/// apply them: release what it gives up before taking on new work (the same
/// revoke-before-assign rule the broker relies on), with role changes — which keep local state —
/// in between. Lists returned by this module are always in this order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum StreamsTaskTransition {
    /// A task the member starts holding.
    Added {
        /// The task.
        task: StreamsTaskId,
        /// Its new role.
        role: StreamsTaskRole,
    },
    /// A task the member stops holding.
    Removed {
        /// The task.
        task: StreamsTaskId,
        /// The role it was held in.
        role: StreamsTaskRole,
    },
    /// A task the member keeps, in a different role (e.g. a warm-up promoted to active).
    RoleChanged {
        /// The task.
        task: StreamsTaskId,
        /// The old role.
        from: StreamsTaskRole,
        /// The new role.
        to: StreamsTaskRole,
    },
}

impl StreamsTaskTransition {
    /// The task this transition concerns.
    pub fn task(&self) -> &StreamsTaskId {
        match self {
            StreamsTaskTransition::Added { task, .. }
            | StreamsTaskTransition::Removed { task, .. }
            | StreamsTaskTransition::RoleChanged { task, .. } => task,
        }
    }

    fn phase(&self) -> u8 {
        match self {
            StreamsTaskTransition::Removed { .. } => 0,
            StreamsTaskTransition::RoleChanged { .. } => 1,
            StreamsTaskTransition::Added { .. } => 2,
        }
    }

    fn roles(&self) -> (StreamsTaskRole, StreamsTaskRole) {
        match self {
            StreamsTaskTransition::Added { role, .. }
            | StreamsTaskTransition::Removed { role, .. } => (*role, *role),
            StreamsTaskTransition::RoleChanged { from, to, .. } => (*from, *to),
        }
    }
}

impl Ord for StreamsTaskTransition {
    fn cmp(&self, other: &Self) -> Ordering {
        self.phase()
            .cmp(&other.phase())
            .then_with(|| self.task().cmp(other.task()))
            .then_with(|| self.roles().cmp(&other.roles()))
    }
}

impl PartialOrd for StreamsTaskTransition {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for StreamsTaskTransition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StreamsTaskTransition::Added { task, role } => write!(f, "+{task} ({role})"),
            StreamsTaskTransition::Removed { task, role } => write!(f, "-{task} ({role})"),
            StreamsTaskTransition::RoleChanged { task, from, to } => {
                write!(f, "{task} {from}->{to}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(list: &[(&str, &[i32])]) -> WireTaskIds {
        list.iter()
            .map(|(s, p)| (s.to_string(), p.to_vec()))
            .collect()
    }

    fn t(s: &str, p: i32) -> StreamsTaskId {
        StreamsTaskId::new(s, p)
    }

    #[test]
    fn display_matches_java_task_id() {
        assert_eq!(t("0", 1).to_string(), "0_1");
        assert_eq!(t("subtopology-1", 12).to_string(), "subtopology-1_12");
    }

    #[test]
    fn task_order_is_subtopology_then_partition() {
        let mut v = vec![t("1", 0), t("0", 2), t("0", 10), t("0", 1)];
        v.sort();
        assert_eq!(v, vec![t("0", 1), t("0", 2), t("0", 10), t("1", 0)]);
    }

    #[test]
    fn from_wire_is_canonical_and_round_trips() {
        let a = StreamsTaskAssignment::from_wire(
            &w(&[("1", &[2, 0]), ("0", &[3])]),
            &w(&[("0", &[1])]),
            &w(&[("2", &[0, 1])]),
        )
        .unwrap();
        assert_eq!(a.len(), 6);
        assert_eq!(
            a.to_wire(StreamsTaskRole::Active),
            w(&[("0", &[3]), ("1", &[0, 2])])
        );
        assert_eq!(a.to_wire(StreamsTaskRole::Standby), w(&[("0", &[1])]));
        assert_eq!(a.to_wire(StreamsTaskRole::Warmup), w(&[("2", &[0, 1])]));
        assert_eq!(a.role_of(&t("0", 1)), Some(StreamsTaskRole::Standby));
        assert_eq!(a.role_of(&t("0", 2)), None);
        assert_eq!(a.count(StreamsTaskRole::Active), 3);
        assert_eq!(a.subtopology_ids(), vec!["0", "1", "2"]);
        let b = StreamsTaskAssignment::from_wire(
            &a.to_wire(StreamsTaskRole::Active),
            &a.to_wire(StreamsTaskRole::Standby),
            &a.to_wire(StreamsTaskRole::Warmup),
        )
        .unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn split_subtopology_entries_are_accepted() {
        let a =
            StreamsTaskAssignment::from_wire(&w(&[("0", &[1]), ("0", &[0])]), &[], &[]).unwrap();
        assert_eq!(a.to_wire(StreamsTaskRole::Active), w(&[("0", &[0, 1])]));
    }

    #[test]
    fn duplicate_in_one_role_is_rejected() {
        let e = StreamsTaskAssignment::from_wire(&[], &w(&[("0", &[1, 1])]), &[]).unwrap_err();
        assert_eq!(
            e,
            StreamsTaskError::DuplicateTask {
                task: t("0", 1),
                role: StreamsTaskRole::Standby
            }
        );
        let e = StreamsTaskAssignment::from_wire(&w(&[("0", &[1]), ("0", &[1])]), &[], &[])
            .unwrap_err();
        assert!(matches!(e, StreamsTaskError::DuplicateTask { .. }));
    }

    #[test]
    fn task_in_two_roles_is_rejected() {
        let e = StreamsTaskAssignment::from_wire(&w(&[("0", &[1])]), &[], &w(&[("0", &[1])]))
            .unwrap_err();
        assert_eq!(
            e,
            StreamsTaskError::ConflictingRoles {
                task: t("0", 1),
                first: StreamsTaskRole::Active,
                second: StreamsTaskRole::Warmup
            }
        );
    }

    #[test]
    fn bad_ids_are_rejected() {
        assert_eq!(
            StreamsTaskAssignment::from_wire(&w(&[("", &[1])]), &[], &[]).unwrap_err(),
            StreamsTaskError::EmptySubtopologyId
        );
        assert_eq!(
            StreamsTaskAssignment::from_wire(&w(&[("0", &[-1])]), &[], &[]).unwrap_err(),
            StreamsTaskError::NegativePartition { task: t("0", -1) }
        );
    }

    #[test]
    fn failed_insert_leaves_assignment_unchanged() {
        let mut a = StreamsTaskAssignment::new();
        a.insert(t("0", 0), StreamsTaskRole::Active).unwrap();
        let before = a.clone();
        assert!(a.insert(t("0", 0), StreamsTaskRole::Standby).is_err());
        assert_eq!(a, before);
    }

    #[test]
    fn transitions_are_ordered_removals_changes_additions() {
        let from = StreamsTaskAssignment::from_wire(
            &w(&[("0", &[0, 1]), ("1", &[0])]),
            &w(&[("0", &[2])]),
            &[],
        )
        .unwrap();
        let to = StreamsTaskAssignment::from_wire(
            &w(&[("0", &[0, 2]), ("0", &[5])]),
            &w(&[("1", &[0])]),
            &w(&[("0", &[3])]),
        )
        .unwrap();
        let tr = from.transitions_to(&to);
        use StreamsTaskRole::*;
        use StreamsTaskTransition::*;
        assert_eq!(
            tr,
            vec![
                Removed {
                    task: t("0", 1),
                    role: Active
                },
                RoleChanged {
                    task: t("0", 2),
                    from: Standby,
                    to: Active
                },
                RoleChanged {
                    task: t("1", 0),
                    from: Active,
                    to: Standby
                },
                Added {
                    task: t("0", 3),
                    role: Warmup
                },
                Added {
                    task: t("0", 5),
                    role: Active
                },
            ]
        );
        let mut sorted = tr.clone();
        sorted.sort();
        assert_eq!(sorted, tr);
        assert_eq!(from.apply_transitions(&tr).unwrap(), to);
        assert!(to.transitions_to(&to).is_empty());
    }

    #[test]
    fn mismatched_transition_is_rejected() {
        let a = StreamsTaskAssignment::from_wire(&w(&[("0", &[0])]), &[], &[]).unwrap();
        let bad = [StreamsTaskTransition::Removed {
            task: t("0", 0),
            role: StreamsTaskRole::Standby,
        }];
        assert!(matches!(
            a.apply_transitions(&bad),
            Err(StreamsTaskError::TransitionMismatch { .. })
        ));
        let bad = [StreamsTaskTransition::Added {
            task: t("0", 0),
            role: StreamsTaskRole::Active,
        }];
        assert!(a.apply_transitions(&bad).is_err());
        let bad = [StreamsTaskTransition::RoleChanged {
            task: t("0", 1),
            from: StreamsTaskRole::Active,
            to: StreamsTaskRole::Standby,
        }];
        assert!(a.apply_transitions(&bad).is_err());
    }

    #[test]
    fn error_messages_name_the_task() {
        let e = StreamsTaskError::ConflictingRoles {
            task: t("3", 4),
            first: StreamsTaskRole::Active,
            second: StreamsTaskRole::Standby,
        };
        assert_eq!(
            e.to_string(),
            "task 3_4 is assigned both as active and as standby"
        );
    }
}
