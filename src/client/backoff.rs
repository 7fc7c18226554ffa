//! Reconnect backoff: how long the client waits before connecting again to a broker that
//! could not be reached (Java's `reconnect.backoff.ms` / `reconnect.backoff.max.ms`).
//!
//! Kafka's Java client keeps, per node, the number of consecutive failed connection attempts
//! and the time of the last one (`ClusterConnectionStates`); the next attempt waits
//! `ExponentialBackoff(reconnect.backoff.ms, 2, reconnect.backoff.max.ms, 0.2)` of the
//! failure count, and a successful connection resets the count. [`ReconnectBackoff`] is that
//! curve, pure (the jitter's random number is passed in); `Reconnects` is the per-peer
//! bookkeeping, with time passed in too, so both are tested without sleeping.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

// The defaults are configuration values, defined with the others in `config`.
pub use crate::config::{DEFAULT_RECONNECT_BACKOFF, DEFAULT_RECONNECT_BACKOFF_MAX};
/// Growth factor per failed attempt (Java `ClusterConnectionStates.RECONNECT_BACKOFF_EXP_BASE`).
pub const RECONNECT_BACKOFF_MULTIPLIER: f64 = 2.0;
/// Relative jitter of every delay (Java `ClusterConnectionStates.RECONNECT_BACKOFF_JITTER`).
pub const RECONNECT_BACKOFF_JITTER: f64 = 0.2;

/// The reconnect delay curve: Java's `ExponentialBackoff` with multiplier 2 and jitter 0.2.
///
/// After `n` earlier consecutive failures the delay is `base * 2^n`, times a random factor
/// in `[0.8, 1.2)`, never above `max`. With `max <= base` the delay is a constant `max`,
/// without jitter (Java: "a constant backoff of maxInterval"). A zero `base` means no backoff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReconnectBackoff {
    base: Duration,
    max: Duration,
}

impl Default for ReconnectBackoff {
    fn default() -> Self {
        ReconnectBackoff::new(DEFAULT_RECONNECT_BACKOFF, DEFAULT_RECONNECT_BACKOFF_MAX)
    }
}

impl ReconnectBackoff {
    /// The curve from `base` (`reconnect.backoff.ms`) up to `max` (`reconnect.backoff.max.ms`).
    pub fn new(base: Duration, max: Duration) -> Self {
        ReconnectBackoff {
            base: base.min(max),
            max,
        }
    }

    /// The first delay (before jitter): `base`, or `max` if that is smaller.
    pub fn base(&self) -> Duration {
        self.base
    }

    /// The largest delay.
    pub fn max(&self) -> Duration {
        self.max
    }

    /// The delay after a failed attempt that followed `failures` earlier consecutive failures
    /// (0 for the first failure), with `unit` a uniform random number in `[0, 1)` choosing the
    /// jitter (a value outside is clamped; a non-finite one counts as 0.5, no jitter).
    pub fn delay(&self, failures: u32, unit: f64) -> Duration {
        // In nanoseconds, rounded at the end, so that the curve's round values stay exact.
        let base = self.base.as_nanos() as f64;
        let max = self.max.as_nanos() as f64;
        if max <= base {
            return self.base;
        }
        // Java: log(max / max(base, 1 ms)) / log(2), the exponent at which the curve meets max.
        let exp_max = (max / base.max(1e6)).log2();
        let exp = f64::from(failures).min(exp_max);
        let term = base * RECONNECT_BACKOFF_MULTIPLIER.powf(exp);
        let unit = if unit.is_finite() {
            unit.clamp(0.0, 1.0)
        } else {
            0.5
        };
        let factor = 1.0 - RECONNECT_BACKOFF_JITTER + 2.0 * RECONNECT_BACKOFF_JITTER * unit;
        // `as u64` saturates; the value is at most `max`, itself a Duration's nanoseconds.
        Duration::from_nanos((term * factor).clamp(0.0, max).round() as u64)
    }
}

/// What a connection attempt goes to, for the backoff bookkeeping: a node by id (its address
/// from Metadata or FindCoordinator), or one resolved bootstrap address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Peer {
    /// A broker by node id.
    Node(i32),
    /// One resolved address of a bootstrap server.
    Bootstrap(SocketAddr),
}

impl std::fmt::Display for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Peer::Node(id) => write!(f, "node {id}"),
            Peer::Bootstrap(sa) => write!(f, "bootstrap address {sa}"),
        }
    }
}

/// One peer's failed attempts.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PeerState {
    /// Consecutive failed connection attempts.
    failures: u32,
    /// No new attempt before this.
    next_attempt: Instant,
    /// Why the last attempt failed, for the error of a caller that could not wait.
    last_error: String,
}

/// Why a peer may not be connected to yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Blocked {
    /// When the next attempt is allowed.
    pub until: Instant,
    /// Consecutive failed attempts so far.
    pub failures: u32,
    /// The last attempt's error.
    pub last_error: String,
}

/// Per-peer reconnect state of one client: failed attempts and the time of the next allowed
/// one; a successful connection forgets the peer.
#[derive(Debug, Clone, Default)]
pub(crate) struct Reconnects {
    backoff: ReconnectBackoff,
    peers: HashMap<Peer, PeerState>,
}

impl Reconnects {
    /// No failures yet, delays on the `backoff` curve.
    pub fn new(backoff: ReconnectBackoff) -> Self {
        Reconnects {
            backoff,
            peers: HashMap::new(),
        }
    }

    /// Records that an attempt to `peer` failed at `now` with `error`; `unit` picks the jitter
    /// (see [`ReconnectBackoff::delay`]). Returns the delay before the next attempt.
    pub fn failed(&mut self, peer: Peer, now: Instant, unit: f64, error: String) -> Duration {
        let failures = self.peers.get(&peer).map_or(0, |s| s.failures);
        let delay = self.backoff.delay(failures, unit);
        self.peers.insert(
            peer,
            PeerState {
                failures: failures.saturating_add(1),
                // A delay too far out for the clock is as good as a year.
                next_attempt: now
                    .checked_add(delay)
                    .unwrap_or_else(|| now + Duration::from_secs(365 * 24 * 3600)),
                last_error: error,
            },
        );
        delay
    }

    /// Records a working connection to `peer` (or that its address changed): the next
    /// failure starts the curve again.
    pub fn reset(&mut self, peer: Peer) {
        self.peers.remove(&peer);
    }

    /// `Some` while an attempt to `peer` at `now` would come too early.
    pub fn blocked(&self, peer: Peer, now: Instant) -> Option<Blocked> {
        self.peers
            .get(&peer)
            .filter(|s| s.next_attempt > now)
            .map(|s| Blocked {
                until: s.next_attempt,
                failures: s.failures,
                last_error: s.last_error.clone(),
            })
    }

    /// Consecutive failed attempts to `peer`.
    #[cfg(test)]
    pub fn failures(&self, peer: Peer) -> u32 {
        self.peers.get(&peer).map_or(0, |s| s.failures)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn default_curve_doubles_from_50_ms_to_1_s() {
        let b = ReconnectBackoff::default();
        // unit 0.5 = factor 1: the curve itself.
        let curve: Vec<u128> = (0..8).map(|n| b.delay(n, 0.5).as_millis()).collect();
        assert_eq!(curve, [50, 100, 200, 400, 800, 1000, 1000, 1000]);
        assert_eq!(b.delay(u32::MAX, 0.5), ms(1000));
    }

    #[test]
    fn jitter_is_twenty_percent_either_way_and_never_passes_max() {
        let b = ReconnectBackoff::default();
        assert_eq!(b.delay(0, 0.0), ms(40));
        assert_eq!(b.delay(0, 1.0), ms(60));
        assert_eq!(b.delay(2, 0.0), ms(160));
        // Past the ceiling the upward jitter is cut at max, the downward kept.
        assert_eq!(b.delay(9, 0.999), ms(1000));
        assert_eq!(b.delay(9, 0.0), ms(800));
        // Garbage in: clamped, or no jitter.
        assert_eq!(b.delay(0, -3.0), ms(40));
        assert_eq!(b.delay(0, 7.0), ms(60));
        assert_eq!(b.delay(0, f64::NAN), ms(50));
    }

    #[test]
    fn max_not_above_base_is_a_constant_backoff_of_max() {
        let b = ReconnectBackoff::new(ms(500), ms(200));
        assert_eq!(b.base(), ms(200));
        for n in [0, 1, 5] {
            assert_eq!(b.delay(n, 0.0), ms(200));
            assert_eq!(b.delay(n, 0.99), ms(200));
        }
        let b = ReconnectBackoff::new(ms(300), ms(300));
        assert_eq!(b.delay(4, 0.1), ms(300));
    }

    #[test]
    fn zero_base_means_no_backoff() {
        let b = ReconnectBackoff::new(Duration::ZERO, ms(1000));
        assert_eq!(b.delay(0, 0.7), Duration::ZERO);
        assert_eq!(b.delay(30, 0.7), Duration::ZERO);
        let b = ReconnectBackoff::new(Duration::ZERO, Duration::ZERO);
        assert_eq!(b.delay(3, 0.7), Duration::ZERO);
    }

    #[test]
    fn huge_settings_neither_overflow_nor_panic() {
        let b = ReconnectBackoff::new(Duration::from_millis(u64::MAX), Duration::MAX);
        assert!(b.delay(u32::MAX, 1.0) >= Duration::from_secs(365 * 24 * 3600));
        let t0 = Instant::now();
        let mut r = Reconnects::new(b);
        r.failed(Peer::Node(1), t0, 1.0, "refused".into());
        r.failed(Peer::Node(1), t0, 1.0, "refused".into());
        let blocked = r.blocked(Peer::Node(1), t0).expect("in backoff");
        assert!(blocked.until > t0 + Duration::from_secs(3600));
    }

    #[test]
    fn failures_grow_the_delay_and_a_reset_starts_over() {
        let t0 = Instant::now();
        let mut r = Reconnects::new(ReconnectBackoff::default());
        let peer = Peer::Node(3);
        assert_eq!(r.blocked(peer, t0), None);
        assert_eq!(r.failed(peer, t0, 0.5, "refused".into()), ms(50));
        let b = r.blocked(peer, t0 + ms(49)).expect("in backoff");
        assert_eq!(
            (b.until, b.failures, b.last_error.as_str()),
            (t0 + ms(50), 1, "refused")
        );
        assert_eq!(r.blocked(peer, t0 + ms(50)), None, "allowed again");
        let t1 = t0 + ms(50);
        assert_eq!(r.failed(peer, t1, 0.5, "refused".into()), ms(100));
        assert_eq!(r.failures(peer), 2);
        assert!(r.blocked(peer, t1 + ms(99)).is_some());
        // Other peers are independent.
        assert_eq!(r.blocked(Peer::Node(4), t1), None);
        let sa: SocketAddr = "127.0.0.1:9092".parse().unwrap();
        assert_eq!(r.blocked(Peer::Bootstrap(sa), t1), None);
        r.reset(peer);
        assert_eq!(r.failures(peer), 0);
        assert_eq!(r.blocked(peer, t1), None);
        assert_eq!(r.failed(peer, t1, 0.5, "refused".into()), ms(50));
    }

    #[test]
    fn attempts_in_four_seconds_are_bounded_with_the_smallest_jitter() {
        // A peer that always refuses, retried as soon as allowed, with every delay at its
        // shortest (factor 0.8): the count the dead-leader loop is held to.
        let t0 = Instant::now();
        let mut r = Reconnects::new(ReconnectBackoff::default());
        let peer = Peer::Node(1);
        let mut now = t0;
        let mut attempts = 0;
        while now < t0 + Duration::from_secs(4) {
            attempts += 1;
            now += r.failed(peer, now, 0.0, "refused".into());
        }
        assert_eq!(attempts, 9);
    }
}
