//! `StreamsTaskRuntime` without a broker: feed it a sequence of target assignments, as the
//! broker would send them over a member's life, and print the transitions an application
//! applies at each step.
//!
//! ```text
//! cargo run --example task_runtime
//! ```
//!
//! The transitions come in the order an application should apply them: removals first
//! (release what it gives up), then role changes (which keep local state), then additions.
//! After each step the runtime's owned tasks are what the member reports back to the broker
//! in its next heartbeat. With a broker, an application that processes records uses the
//! two-phase form instead (`begin_reconciliation`, stop and commit the revoked tasks,
//! `release_revoked`, start the assigned ones, `acknowledge_assigned`), shown at the end with
//! `StreamsTaskRuntime::plan`; `reconcile_task_runtime` does everything in one call and
//! suits only members that process nothing.

use kafka_streams_group::{
    StreamsTaskRuntime, StreamsTaskTransition, StreamsTopology, Subtopology, TopicInfo,
};

/// Wire-style task lists: `(subtopology id, partitions)`.
type Tasks = &'static [(&'static str, &'static [i32])];

struct Step {
    what: &'static str,
    active: Tasks,
    standby: Tasks,
    warmup: Tasks,
}

fn wire(tasks: Tasks) -> Vec<(String, Vec<i32>)> {
    tasks
        .iter()
        .map(|(s, p)| (s.to_string(), p.to_vec()))
        .collect()
}

fn main() {
    // Two subtopologies: "0" reads the input, "1" aggregates a repartition topic into a store.
    let topology = StreamsTopology::new()
        .subtopology(
            Subtopology::new("0")
                .source_topic("orders")
                .repartition_sink_topic("app-by-customer-repartition"),
        )
        .subtopology(
            Subtopology::new("1")
                .repartition_source_topic(TopicInfo::new("app-by-customer-repartition"))
                .state_changelog_topic(TopicInfo::new("app-totals-changelog")),
        );
    // Only the topology's subtopologies are accepted: a target naming another one is refused.
    let mut runtime = StreamsTaskRuntime::for_topology(&topology);

    let steps = [
        Step {
            what: "first assignment after joining (alone in the group)",
            active: &[("0", &[0, 1, 2, 3]), ("1", &[0, 1, 2, 3])],
            standby: &[],
            warmup: &[],
        },
        Step {
            what: "a second member joined: half the tasks move away",
            active: &[("0", &[0, 1]), ("1", &[0, 1])],
            standby: &[],
            warmup: &[],
        },
        Step {
            what: "standby replicas enabled: keep a copy of the other member's state",
            active: &[("0", &[0, 1]), ("1", &[0, 1])],
            standby: &[("1", &[2, 3])],
            warmup: &[],
        },
        Step {
            what: "1_2 will move here: its standby becomes a warm-up that catches up first",
            active: &[("0", &[0, 1]), ("1", &[0, 1])],
            standby: &[("1", &[3])],
            warmup: &[("1", &[2])],
        },
        Step {
            what: "the warm-up caught up and is promoted; 1_0 moves to standby here",
            active: &[("0", &[0, 1]), ("1", &[1, 2])],
            standby: &[("1", &[0, 3])],
            warmup: &[],
        },
        Step {
            what: "the same target again (a heartbeat without changes)",
            active: &[("0", &[0, 1]), ("1", &[1, 2])],
            standby: &[("1", &[0, 3])],
            warmup: &[],
        },
    ];

    for (n, step) in steps.iter().enumerate() {
        println!("step {}: {}", n + 1, step.what);
        match runtime.reconcile_wire(&wire(step.active), &wire(step.standby), &wire(step.warmup)) {
            Ok(transitions) => print_transitions(&transitions),
            Err(e) => println!("  refused: {e}"),
        }
        let owned = runtime.owned_assignment();
        println!(
            "  owned now: {} active, {} standby, {} warm-up",
            owned.active().count(),
            owned.standby().count(),
            owned.warmup().count()
        );
    }

    println!(
        "step {}: a target naming an unknown subtopology",
        steps.len() + 1
    );
    match runtime.reconcile_wire(&wire(&[("7", &[0])]), &[], &[]) {
        Ok(t) => print_transitions(&t),
        Err(e) => println!(
            "  refused, owned tasks unchanged ({} tasks): {e}",
            runtime.len()
        ),
    }

    println!(
        "step {}: the safe order for the next target (what begin_reconciliation plans)",
        steps.len() + 2
    );
    let next = kafka_streams_group::StreamsTaskAssignment::from_wire(
        &wire(&[("0", &[0]), ("1", &[1, 2, 3])]),
        &wire(&[("1", &[0])]),
        &[],
    )
    .expect("valid target");
    let plan = runtime.plan(&next).expect("known subtopologies");
    for (task, role) in &plan.revoked {
        let commit = if *role == kafka_streams_group::StreamsTaskRole::Active {
            " and commit its offsets (still owned)"
        } else {
            ""
        };
        println!("  1. stop {task} ({role:?}){commit}");
    }
    runtime.release_revoked(&plan);
    println!(
        "  2. report released: owned now {} tasks; the broker may move them now",
        runtime.len()
    );
    for (task, role) in &plan.assigned {
        println!("  3. start {task} ({role:?}) from its committed offsets");
    }
    runtime.take_assigned(&plan);
    println!("  4. acknowledge: owned now {} tasks", runtime.len());

    println!(
        "step {}: fenced by the broker: every task is lost (drop, never commit)",
        steps.len() + 3
    );
    print_transitions(&runtime.clear());
    println!("  owned now: {} tasks", runtime.len());
}

fn print_transitions(transitions: &[StreamsTaskTransition]) {
    if transitions.is_empty() {
        println!("  (no change)");
    }
    for t in transitions {
        let action = match t {
            StreamsTaskTransition::Removed { .. } => "stop  ",
            StreamsTaskTransition::RoleChanged { .. } => "switch",
            StreamsTaskTransition::Added { .. } => "start ",
        };
        println!("  {action} {t}");
    }
}
