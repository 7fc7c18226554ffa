//! Client counters: connections, requests, bytes, reconnects.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

#[derive(Debug, Default)]
struct ApiCounters {
    requests: u64,
    errors: u64,
}

#[derive(Debug, Default)]
struct MetricsLocked {
    per_api: BTreeMap<i16, ApiCounters>,
    latency_max: Duration,
    latency_total: Duration,
    latency_count: u64,
}

#[derive(Debug, Default)]
struct MetricsInner {
    locked: Mutex<MetricsLocked>,
    retries: AtomicU64,
    reconnects: AtomicU64,
    bytes_in: AtomicU64,
    bytes_out: AtomicU64,
    open_connections: AtomicI64,
}

/// Shared client counters. Cloning is cheap and every clone updates the same counters, so
/// the application keeps one clone to read [`snapshot`](Self::snapshot) while the client
/// layer records into another.
#[derive(Debug, Clone, Default)]
pub struct ClientMetrics {
    inner: Arc<MetricsInner>,
}

/// A point-in-time copy of [`ClientMetrics`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClientMetricsSnapshot {
    /// Completed requests per API key.
    pub requests_by_api: BTreeMap<i16, u64>,
    /// Failed requests (transport failure, timeout or error code) per API key.
    pub errors_by_api: BTreeMap<i16, u64>,
    /// Requests retried.
    pub retries: u64,
    /// Connections re-established after a failure.
    pub reconnects: u64,
    /// Bytes received from brokers.
    pub bytes_in: u64,
    /// Bytes sent to brokers.
    pub bytes_out: u64,
    /// Longest request round trip.
    pub request_latency_max: Duration,
    /// Mean request round trip (zero before the first request).
    pub request_latency_mean: Duration,
    /// Connections open now.
    pub open_connections: u64,
}

impl ClientMetrics {
    /// Fresh, zeroed counters.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a completed request round trip for `api_key`.
    pub fn record_request(&self, api_key: i16, latency: Duration) {
        let mut m = self.inner.locked.lock();
        m.per_api.entry(api_key).or_default().requests += 1;
        m.latency_max = m.latency_max.max(latency);
        m.latency_total = m.latency_total.saturating_add(latency);
        m.latency_count += 1;
    }

    /// Records a failed request for `api_key`.
    pub fn record_error(&self, api_key: i16) {
        self.inner
            .locked
            .lock()
            .per_api
            .entry(api_key)
            .or_default()
            .errors += 1;
    }

    /// Records one retry.
    pub fn record_retry(&self) {
        self.inner.retries.fetch_add(1, Ordering::Relaxed);
    }

    /// Records one reconnect.
    pub fn record_reconnect(&self) {
        self.inner.reconnects.fetch_add(1, Ordering::Relaxed);
    }

    /// Records bytes received.
    pub fn record_bytes_in(&self, n: u64) {
        self.inner.bytes_in.fetch_add(n, Ordering::Relaxed);
    }

    /// Records bytes sent.
    pub fn record_bytes_out(&self, n: u64) {
        self.inner.bytes_out.fetch_add(n, Ordering::Relaxed);
    }

    /// Records a connection opened.
    pub fn record_connection_opened(&self) {
        self.inner.open_connections.fetch_add(1, Ordering::Relaxed);
    }

    /// Records a connection closed.
    pub fn record_connection_closed(&self) {
        self.inner.open_connections.fetch_sub(1, Ordering::Relaxed);
    }

    /// A consistent copy of the per-API counters and latency, plus the atomic counters.
    pub fn snapshot(&self) -> ClientMetricsSnapshot {
        let m = self.inner.locked.lock();
        let mean = match u32::try_from(m.latency_count) {
            Ok(0) => Duration::ZERO,
            Ok(n) => m.latency_total / n,
            // More than 4 billion requests: divide in nanoseconds instead.
            Err(_) => Duration::from_nanos(
                u64::try_from(m.latency_total.as_nanos() / u128::from(m.latency_count))
                    .unwrap_or(u64::MAX),
            ),
        };
        ClientMetricsSnapshot {
            requests_by_api: m.per_api.iter().map(|(k, c)| (*k, c.requests)).collect(),
            errors_by_api: m
                .per_api
                .iter()
                .filter(|(_, c)| c.errors > 0)
                .map(|(k, c)| (*k, c.errors))
                .collect(),
            retries: self.inner.retries.load(Ordering::Relaxed),
            reconnects: self.inner.reconnects.load(Ordering::Relaxed),
            bytes_in: self.inner.bytes_in.load(Ordering::Relaxed),
            bytes_out: self.inner.bytes_out.load(Ordering::Relaxed),
            request_latency_max: m.latency_max,
            request_latency_mean: mean,
            // A close recorded before its open would go negative; report zero then.
            open_connections: u64::try_from(self.inner.open_connections.load(Ordering::Relaxed))
                .unwrap_or(0),
        }
    }
}
