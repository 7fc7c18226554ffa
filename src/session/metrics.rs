//! Member-level metrics (the Java client's `heartbeat-*` and `rebalance-*` metrics): written by
//! the driver, read as a plain snapshot from any thread.

use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// A copy of a member's counters at one moment.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StreamsGroupMetrics {
    /// Heartbeats answered by the broker (with or without an error code).
    pub heartbeats: u64,
    /// Longest heartbeat round trip.
    pub heartbeat_latency_max: Duration,
    /// Mean heartbeat round trip.
    pub heartbeat_latency_mean: Duration,
    /// Time since the last answered heartbeat; `None` before the first.
    pub last_heartbeat_age: Option<Duration>,
    /// Rebalances this member took part in (entering reconciliation).
    pub rebalances: u64,
    /// Times the member was fenced and rejoined.
    pub rejoins: u64,
    /// Failed heartbeats and coordinator lookups that were retried.
    pub retries: u64,
}

#[derive(Debug, Default)]
struct Counters {
    heartbeats: u64,
    latency_total: Duration,
    latency_max: Duration,
    last_heartbeat: Option<Instant>,
    rebalances: u64,
    rejoins: u64,
    retries: u64,
}

/// Shared member counters.
#[derive(Debug, Default)]
pub(crate) struct MemberMetrics {
    counters: Mutex<Counters>,
}

impl MemberMetrics {
    pub(crate) fn record_heartbeat(&self, latency: Duration, at: Instant) {
        let mut c = self.counters.lock();
        c.heartbeats += 1;
        c.latency_total += latency;
        c.latency_max = c.latency_max.max(latency);
        c.last_heartbeat = Some(at);
    }

    pub(crate) fn record_rebalance_started(&self) {
        self.counters.lock().rebalances += 1;
    }

    pub(crate) fn record_rejoin(&self) {
        self.counters.lock().rejoins += 1;
    }

    pub(crate) fn record_retry(&self) {
        self.counters.lock().retries += 1;
    }

    pub(crate) fn snapshot(&self) -> StreamsGroupMetrics {
        let c = self.counters.lock();
        StreamsGroupMetrics {
            heartbeats: c.heartbeats,
            heartbeat_latency_max: c.latency_max,
            heartbeat_latency_mean: if c.heartbeats == 0 {
                Duration::ZERO
            } else {
                c.latency_total / u32::try_from(c.heartbeats).unwrap_or(u32::MAX)
            },
            last_heartbeat_age: c.last_heartbeat.map(|t| t.elapsed()),
            rebalances: c.rebalances,
            rejoins: c.rejoins,
            retries: c.retries,
        }
    }
}
