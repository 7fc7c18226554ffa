//! Issue 8, item 3: task reconciliation and response-delta merging at 1k, 10k and 100k tasks.
//!
//! * `reconcile_fresh`: an empty `StreamsTaskRuntime` reconciles to an n-task target.
//! * `reconcile_shift`: a runtime holding n tasks reconciles to a target where half the tasks
//!   moved (a quarter removed, a quarter added, a quarter changed role) — a rebalance.
//! * `from_wire`: building the target from the three wire lists of a heartbeat response.
//! * `merge_delta`: `StreamsGroupSessionAssignment::apply` of a response delta carrying the
//!   n-task target onto the cumulative assignment that holds the shifted one.
//!
//! Throughput is reported in elements (tasks), so criterion's elem/s gives time per task;
//! O(n log n) shows as a per-task time that grows by about log(10n)/log(n) per decade.
//!
//! `cargo bench --bench task_runtime -- --warm-up-time 1 --measurement-time 3`

// criterion_group!/criterion_main! generate undocumented public functions.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use kafka_streams_group::streams::{
    AssignmentDelta, StreamsGroupSessionAssignment, StreamsTaskAssignment, StreamsTaskRuntime,
    StreamsTopology, Subtopology, WireTaskIds,
};

const SUBTOPOLOGIES: usize = 50;

/// `n` tasks over 50 subtopologies: partitions `off..off+n/50` of each; the first
/// `active_share` of each list active, the rest standby.
fn wire(n: usize, off: i32) -> (WireTaskIds, WireTaskIds, WireTaskIds) {
    let per = (n / SUBTOPOLOGIES) as i32;
    let split = per * 3 / 4;
    let mut active = Vec::new();
    let mut standby = Vec::new();
    for s in 0..SUBTOPOLOGIES {
        let id = s.to_string();
        active.push((id.clone(), (off..off + split).collect()));
        standby.push((id, (off + split..off + per).collect()));
    }
    (active, standby, Vec::new())
}

fn assignment(n: usize, off: i32) -> StreamsTaskAssignment {
    let (a, s, w) = wire(n, off);
    StreamsTaskAssignment::from_wire(&a, &s, &w).expect("valid")
}

fn topology() -> StreamsTopology {
    (0..SUBTOPOLOGIES).fold(StreamsTopology::new(), |t, s| {
        t.subtopology(Subtopology::new(s.to_string()).source_topic(format!("input-{s}")))
    })
}

fn bench(c: &mut Criterion) {
    let topology = topology();
    let sizes = [1_000usize, 10_000, 100_000];

    let mut g = c.benchmark_group("reconcile_fresh");
    for &n in &sizes {
        let target = assignment(n, 0);
        assert_eq!(target.len(), n);
        g.throughput(Throughput::Elements(n as u64));
        g.sample_size(if n >= 100_000 { 10 } else { 30 });
        g.bench_with_input(BenchmarkId::from_parameter(n), &target, |b, target| {
            b.iter_batched(
                StreamsTaskRuntime::new,
                |mut rt| {
                    let t = rt.reconcile(black_box(target)).expect("reconcile");
                    black_box(t.len());
                    rt
                },
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();

    let mut g = c.benchmark_group("reconcile_shift");
    for &n in &sizes {
        let before = assignment(n, 0);
        // Shift by a quarter of each subtopology's partitions: a quarter of the tasks go, a
        // quarter arrive, and the active/standby boundary moves over the rest.
        let after = assignment(n, (n / SUBTOPOLOGIES / 4) as i32);
        let mut base = StreamsTaskRuntime::new();
        base.reconcile(&before).expect("reconcile");
        let mut probe = base.clone();
        let transitions = probe.reconcile(&after).expect("reconcile").len();
        assert!(
            transitions >= n / 2,
            "{transitions} transitions for {n} tasks"
        );
        g.throughput(Throughput::Elements(n as u64));
        g.sample_size(if n >= 100_000 { 10 } else { 30 });
        g.bench_with_input(BenchmarkId::from_parameter(n), &after, |b, after| {
            b.iter_batched(
                || base.clone(),
                |mut rt| {
                    let t = rt.reconcile(black_box(after)).expect("reconcile");
                    black_box(t.len());
                    rt
                },
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();

    let mut g = c.benchmark_group("from_wire");
    for &n in &sizes {
        let (a, s, w) = wire(n, 0);
        g.throughput(Throughput::Elements(n as u64));
        g.sample_size(if n >= 100_000 { 10 } else { 30 });
        g.bench_function(BenchmarkId::from_parameter(n), |b| {
            b.iter(|| {
                black_box(
                    StreamsTaskAssignment::from_wire(&a, &s, &w)
                        .expect("valid")
                        .len(),
                )
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group("merge_delta");
    for &n in &sizes {
        let (a, s, w) = wire(n, 0);
        let delta = AssignmentDelta {
            member_epoch: 9,
            heartbeat_interval_ms: 5000,
            endpoint_information_epoch: 2,
            active: Some(a),
            standby: Some(s),
            warmup: Some(w),
            statuses: Some(Vec::new()),
            partitions_by_user_endpoint: None,
        };
        let mut base = StreamsGroupSessionAssignment::new();
        let (a2, s2, w2) = wire(n, (n / SUBTOPOLOGIES / 4) as i32);
        base.apply(
            &AssignmentDelta {
                member_epoch: 8,
                active: Some(a2),
                standby: Some(s2),
                warmup: Some(w2),
                ..delta.clone()
            },
            &topology,
        )
        .expect("merge");
        g.throughput(Throughput::Elements(n as u64));
        g.sample_size(if n >= 100_000 { 10 } else { 30 });
        g.bench_function(BenchmarkId::from_parameter(n), |b| {
            b.iter_batched(
                || base.clone(),
                |mut cur| {
                    let o = cur.apply(black_box(&delta), &topology).expect("merge");
                    assert!(o.tasks_changed);
                    cur
                },
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(std::time::Duration::from_secs(1))
        .measurement_time(std::time::Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
