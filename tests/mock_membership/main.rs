//! The member against a scripted mock coordinator (tests/support/mock_coordinator.rs): the
//! heartbeat error matrix (compared with Kafka's Java client, shared/docs/kip1071-client-
//! behaviour.md §5), backoff and cadence measured on the mock's request log, coordinator moves,
//! timeouts, transport faults through the fault proxy, and close/drop while unreachable.
//!
//! Timing bounds are the specification's plus a fixed scheduling slack ([`SLACK`]) for a loaded
//! 2-core machine; every figure is printed (`--nocapture`) so a run can be read as a report.
//!
//! The fixtures (member configuration and start-up, timing helpers) are here; the scenarios are
//! grouped by what they exercise: [`errors`], [`assignment`], [`commit`], [`leave`], [`timing`],
//! [`transport_faults`], [`unreachable`] (close/drop) and [`versions`].

#[path = "../support/mock_coordinator.rs"]
mod mock_coordinator;

#[path = "../support/fault_proxy.rs"]
mod fault_proxy;

#[path = "../common/mod.rs"]
mod common;

mod assignment;
mod commit;
mod errors;
mod leave;
mod timing;
mod transport_faults;
mod unreachable;
mod versions;

use std::time::{Duration, Instant};

use kafka_streams_group::{
    ClientConfig, StreamsGroupConfig, StreamsGroupSession, StreamsGroupSessionHandle,
    StreamsGroupState, StreamsTaskRuntime, StreamsTopology, Subtopology,
};
use mock_coordinator::{MockCoordinator, Recorded};

/// Scheduling slack added to upper timing bounds (thread wake-ups on a shared machine: a CI box
/// with 2 cores running brokers and compilers saw 60 ms exceeded). Lower bounds carry no slack,
/// so a missing backoff still fails.
const SLACK: Duration = Duration::from_millis(200);
const HBI_MS: i32 = 200;
const HBI: Duration = Duration::from_millis(HBI_MS as u64);

fn topology() -> StreamsTopology {
    StreamsTopology::new()
        .subtopology(Subtopology::new("0").source_topic("input"))
        .subtopology(Subtopology::new("1").source_topic("other"))
}

struct Opts {
    base: Duration,
    max: Duration,
    request_timeout: Duration,
    close_timeout: Duration,
}

impl Default for Opts {
    fn default() -> Self {
        Opts {
            base: Duration::from_millis(100),
            max: Duration::from_millis(800),
            request_timeout: Duration::from_secs(2),
            close_timeout: Duration::from_secs(2),
        }
    }
}

fn config(bootstrap: &str, o: &Opts) -> StreamsGroupConfig {
    common::init_logging();
    StreamsGroupConfig::new(bootstrap, "app", topology())
        .client_config(
            ClientConfig::new(bootstrap)
                .client_id("mock-test")
                .retry_backoff(o.base, o.max)
                .request_timeout(o.request_timeout)
                .connect_timeout(Duration::from_secs(2)),
        )
        .process_id("11111111-2222-4333-8444-555555555555")
        .rack_id("rack-a")
        .client_tags([("zone", "z1")])
        .user_endpoint("localhost", 7000)
        .join_timeout(Duration::from_secs(10))
        .close_timeout(o.close_timeout)
        .max_retries(1)
}

/// Joins through `bootstrap`, moves onto the heartbeat thread and (when `tasks` were assigned)
/// acknowledges them, then waits until a heartbeat reported them as owned.
fn member(mock: &MockCoordinator, bootstrap: &str, o: &Opts) -> StreamsGroupSessionHandle {
    let session = StreamsGroupSession::join(config(bootstrap, o)).expect("join");
    let handle = session.spawn_heartbeat_thread().expect("spawn");
    let mut runtime = StreamsTaskRuntime::for_topology(&topology());
    handle
        .reconcile_task_runtime(&mut runtime)
        .expect("reconcile");
    let want = handle.assignment().tasks;
    if !want.is_empty() {
        mock.wait_for_match(Duration::from_secs(3), |r| {
            r.request.member_epoch > 0
                && r.request
                    .active_tasks
                    .as_ref()
                    .is_some_and(|a| !a.is_empty())
        })
        .expect("owned tasks reported");
    }
    handle
}

fn wait_state(
    handle: &StreamsGroupSessionHandle,
    timeout: Duration,
    pred: impl Fn(&StreamsGroupState) -> bool,
) -> Option<StreamsGroupState> {
    let deadline = Instant::now() + timeout;
    loop {
        let s = handle.state();
        if pred(&s) {
            return Some(s);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn ms(d: Duration) -> u128 {
    d.as_millis()
}

fn gap(a: &Recorded, b: &Recorded) -> Duration {
    b.at.saturating_duration_since(a.at)
}

/// Backoff bounds of the `k`-th consecutive failure: base·2^k with ±20% jitter, capped.
fn backoff_bounds(o: &Opts, k: u32) -> (Duration, Duration) {
    let term = o.base.as_secs_f64() * 2f64.powi(k as i32);
    let max = o.max.as_secs_f64();
    (
        Duration::from_secs_f64((term * 0.8).min(max)),
        Duration::from_secs_f64((term * 1.2).min(max)),
    )
}
