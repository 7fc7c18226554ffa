//! Property tests for the pure Streams task, runtime, topology and assignment layers.

use std::collections::BTreeMap;

use kafka_streams_group::streams::{
    AssignmentDelta, AssignmentError, CopartitionGroup, StreamsGroupSessionAssignment,
    StreamsTaskAssignment, StreamsTaskError, StreamsTaskId, StreamsTaskRole, StreamsTaskRuntime,
    StreamsTaskTransition, StreamsTopology, Subtopology, TopicInfo, WireTaskIds,
};
use proptest::prelude::*;

const ROLES: [StreamsTaskRole; 3] = StreamsTaskRole::ALL;

/// A valid assignment over subtopologies "0".."5" and partitions 0..24.
fn assignment() -> impl Strategy<Value = StreamsTaskAssignment> {
    prop::collection::vec((0u8..6, 0i32..24, 0usize..3), 0..80).prop_map(|v| {
        let mut m = BTreeMap::new();
        for (s, p, r) in v {
            m.entry(StreamsTaskId::new(s.to_string(), p))
                .or_insert(ROLES[r]);
        }
        StreamsTaskAssignment::from_tasks(m).expect("deduplicated input is valid")
    })
}

/// The wire lists of an assignment, with entries split per task and shuffled by `seed`, so
/// the builder sees an order different from the canonical one.
fn scrambled_wire(a: &StreamsTaskAssignment, seed: u64) -> [WireTaskIds; 3] {
    let mut out: [WireTaskIds; 3] = Default::default();
    for (i, role) in ROLES.iter().enumerate() {
        let mut v: WireTaskIds = a
            .tasks_with_role(*role)
            .map(|t| (t.subtopology_id.clone(), vec![t.partition]))
            .collect();
        // Deterministic Fisher-Yates with a tiny LCG: enough to break the sorted order.
        let mut x = seed | 1;
        for j in (1..v.len()).rev() {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let k = (x >> 33) as usize % (j + 1);
            v.swap(j, k);
        }
        out[i] = v;
    }
    out
}

fn topology() -> StreamsTopology {
    (0..6).fold(StreamsTopology::new(), |t, i| {
        t.subtopology(Subtopology::new(i.to_string()).source_topic(format!("in-{i}")))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn reconcile_transitions_turn_a_into_b(a in assignment(), b in assignment()) {
        let mut rt = StreamsTaskRuntime::new();
        let first = rt.reconcile(&a).unwrap();
        prop_assert_eq!(StreamsTaskAssignment::new().apply_transitions(&first).unwrap(), a.clone());
        let tr = rt.reconcile(&b).unwrap();
        prop_assert_eq!(a.apply_transitions(&tr).unwrap(), b.clone());
        prop_assert_eq!(rt.tasks(), &b);
        prop_assert_eq!(rt.owned_assignment(), b.clone());
        // Canonical order, and each task at most once.
        let mut sorted = tr.clone();
        sorted.sort();
        prop_assert_eq!(&sorted, &tr);
        let mut tasks: Vec<&StreamsTaskId> = tr.iter().map(|t| t.task()).collect();
        tasks.sort();
        let n = tasks.len();
        tasks.dedup();
        prop_assert_eq!(n, tasks.len());
        // Minimal: exactly the tasks whose role differs.
        let differing = a.iter().filter(|(t, r)| b.role_of(t) != Some(*r)).count()
            + b.iter().filter(|(t, _)| !a.contains(t)).count();
        prop_assert_eq!(tr.len(), differing);
        // clear() removes exactly what is held.
        let removed = rt.clear();
        prop_assert_eq!(removed.len(), b.len());
        let all_removed = removed.iter().all(|t| matches!(t, StreamsTaskTransition::Removed { .. }));
        prop_assert!(all_removed);
        prop_assert_eq!(b.apply_transitions(&removed).unwrap(), StreamsTaskAssignment::new());
    }

    #[test]
    fn wire_round_trip_ignores_input_order(a in assignment(), seed in any::<u64>()) {
        let [act, sb, wu] = scrambled_wire(&a, seed);
        let b = StreamsTaskAssignment::from_wire(&act, &sb, &wu).unwrap();
        prop_assert_eq!(&a, &b);
        for role in ROLES {
            let wire = b.to_wire(role);
            // Sorted by subtopology, partitions strictly ascending, no empty entries.
            prop_assert!(wire.windows(2).all(|w| w[0].0 < w[1].0));
            prop_assert!(wire.iter().all(|(_, p)| !p.is_empty() && p.windows(2).all(|w| w[0] < w[1])));
        }
    }

    #[test]
    fn conflicting_input_leaves_runtime_untouched(
        a in assignment(),
        b in assignment().prop_filter("needs a task", |b| !b.is_empty()),
        pick in any::<prop::sample::Index>(),
        other_role in 0usize..3,
        seed in any::<u64>(),
    ) {
        let mut rt = StreamsTaskRuntime::new();
        rt.reconcile(&a).unwrap();
        let [mut act, mut sb, mut wu] = scrambled_wire(&b, seed);
        let (task, _) = b.iter().nth(pick.index(b.len())).unwrap();
        let entry = (task.subtopology_id.clone(), vec![task.partition]);
        // Insert the task again, either into its own role (duplicate) or another (conflict).
        match other_role {
            0 => act.push(entry),
            1 => sb.push(entry),
            _ => wu.push(entry),
        }
        let err = rt.reconcile_wire(&act, &sb, &wu).unwrap_err();
        let is_conflict = matches!(
            err,
            StreamsTaskError::DuplicateTask { .. } | StreamsTaskError::ConflictingRoles { .. }
        );
        prop_assert!(is_conflict);
        prop_assert_eq!(rt.tasks(), &a);
    }

    #[test]
    fn merge_of_null_task_lists_keeps_tasks(
        a in assignment(),
        epoch in 1i32..1000,
        statuses in prop::option::of(prop::collection::vec((0i8..8, "[a-z]{0,5}"), 0..3)),
    ) {
        let mut s = StreamsGroupSessionAssignment::new();
        let full = AssignmentDelta {
            member_epoch: epoch,
            heartbeat_interval_ms: 5000,
            endpoint_information_epoch: 0,
            active: Some(a.to_wire(StreamsTaskRole::Active)),
            standby: Some(a.to_wire(StreamsTaskRole::Standby)),
            warmup: Some(a.to_wire(StreamsTaskRole::Warmup)),
            statuses: None,
            partitions_by_user_endpoint: None,
        };
        s.apply(&full, &topology()).unwrap();
        prop_assert_eq!(&s.tasks, &a);
        let null = AssignmentDelta {
            member_epoch: epoch + 1,
            heartbeat_interval_ms: 5000,
            endpoint_information_epoch: 0,
            statuses: statuses.clone(),
            ..AssignmentDelta::default()
        };
        let outcome = s.apply(&null, &topology()).unwrap();
        prop_assert!(!outcome.tasks_changed);
        prop_assert_eq!(&s.tasks, &a);
        prop_assert_eq!(s.member_epoch, epoch + 1);
        let blocked = statuses.iter().flatten().any(|(c, _)| matches!(c, 1 | 2 | 3 | 5));
        prop_assert_eq!(s.is_group_ready, !blocked);
    }

    #[test]
    fn rejected_merge_keeps_previous_snapshot(
        a in assignment(),
        b in assignment(),
        absent in 0usize..3,
    ) {
        let topo = topology();
        let mut s = StreamsGroupSessionAssignment::new();
        let delta = |x: &StreamsTaskAssignment| AssignmentDelta {
            member_epoch: 5,
            heartbeat_interval_ms: 5000,
            endpoint_information_epoch: 0,
            active: Some(x.to_wire(StreamsTaskRole::Active)),
            standby: Some(x.to_wire(StreamsTaskRole::Standby)),
            warmup: Some(x.to_wire(StreamsTaskRole::Warmup)),
            statuses: Some(vec![]),
            partitions_by_user_endpoint: None,
        };
        s.apply(&delta(&a), &topo).unwrap();
        let before = s.clone();
        // One list missing.
        let mut d = delta(&b);
        match absent { 0 => d.active = None, 1 => d.standby = None, _ => d.warmup = None }
        let partial = matches!(s.apply(&d, &topo), Err(AssignmentError::PartialTaskLists { .. }));
        prop_assert!(partial);
        prop_assert_eq!(&s, &before);
        // A subtopology outside the topology.
        let mut d = delta(&b);
        if let Some(v) = d.active.as_mut() { v.push(("99".to_string(), vec![0])); }
        let unknown = matches!(
            s.apply(&d, &topo),
            Err(AssignmentError::Task(StreamsTaskError::UnknownSubtopology { .. }))
        );
        prop_assert!(unknown);
        prop_assert_eq!(&s, &before);
        // The valid one goes through.
        s.apply(&delta(&b), &topo).unwrap();
        prop_assert_eq!(&s.tasks, &b);
    }

    #[test]
    fn canonical_topology_is_order_independent_and_idempotent(
        topics in prop::collection::btree_set("[a-z]{1,6}", 1..6),
        reps in prop::collection::btree_set("[a-z]{1,6}-rep", 0..4),
        configs in prop::collection::btree_map("[a-z.]{1,8}", "[0-9]{1,3}", 0..4),
        seed in any::<u64>(),
    ) {
        let topics: Vec<String> = topics.into_iter().collect();
        let reps: Vec<String> = reps.into_iter().collect();
        let build = |order: &[usize], rep_order: &[usize], cfg_rev: bool| {
            let mut s = Subtopology::new("1");
            for &i in order { s = s.source_topic(topics[i].clone()); }
            for &i in rep_order {
                let mut info = TopicInfo::new(reps[i].clone()).partitions(3);
                let mut kv: Vec<_> = configs.iter().collect();
                if cfg_rev { kv.reverse(); }
                for (k, v) in kv { info = info.config(k.clone(), v.clone()); }
                s = s.repartition_source_topic(info);
            }
            // Copartition the first and last source topic, named by topic.
            let names = [topics[0].clone(), topics[topics.len() - 1].clone()];
            s = s.copartition_topics(names).unwrap();
            StreamsTopology::new()
                .subtopology(s)
                .subtopology(Subtopology::new("0").source_topic("z0").state_changelog_topic(TopicInfo::new("cl")))
        };
        let ident: Vec<usize> = (0..topics.len()).collect();
        let rep_ident: Vec<usize> = (0..reps.len()).collect();
        let mut perm = ident.clone();
        let mut rep_perm = rep_ident.clone();
        let mut x = seed | 1;
        for v in [&mut perm, &mut rep_perm] {
            for j in (1..v.len()).rev() {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                v.swap(j, (x >> 33) as usize % (j + 1));
            }
        }
        let c1 = build(&ident, &rep_ident, false).canonical().unwrap();
        let c2 = build(&perm, &rep_perm, true).canonical().unwrap();
        prop_assert_eq!(&c1, &c2);
        prop_assert!(c1.is_canonical());
        prop_assert_eq!(c1.canonical().unwrap(), c1.clone());
        // Copartition indexes still name the same topics after sorting.
        let s1 = c1.subtopology_by_id("1").unwrap();
        let CopartitionGroup { source_topics, .. } = &s1.copartition_groups[0];
        let mut named: Vec<&str> = source_topics.iter().map(|&i| s1.source_topics[i as usize].as_str()).collect();
        named.sort();
        let mut want = vec![topics[0].as_str(), topics[topics.len() - 1].as_str()];
        want.sort();
        want.dedup();
        prop_assert_eq!(named, want);
        prop_assert_eq!(c1.subtopology_ids(), vec!["0", "1"]);
        prop_assert_eq!(&c1.subtopologies[0].id, "0");
    }
}
