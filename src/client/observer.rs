//! A hook for counters (the crate's `ClientMetrics` implements it in a few lines): the client
//! layer reports what happens without knowing how it is recorded.

use std::time::Duration;

/// Receives connection and request events. Every method defaults to doing nothing.
/// Implementations must be cheap and must not block: they run on the request path.
pub trait ConnectionObserver: Send + Sync {
    /// A connection (TCP, TLS, ApiVersions and SASL all done) was opened.
    fn connection_opened(&self) {}
    /// A connection that had been reported open was dropped.
    fn connection_closed(&self) {}
    /// A request got its response: `bytes_out` / `bytes_in` are whole frames.
    fn request_completed(
        &self,
        api_key: i16,
        latency: Duration,
        bytes_out: usize,
        bytes_in: usize,
    ) {
        let _ = (api_key, latency, bytes_out, bytes_in);
    }
    /// A request failed (transport error, timeout, bad response). Broker error codes inside a
    /// decoded response are not reported here: the caller interprets those.
    fn request_failed(&self, api_key: i16) {
        let _ = api_key;
    }
    /// A request was retried after a retriable broker answer.
    fn retried(&self) {}
    /// A connection to a broker was re-opened after the previous one broke.
    fn reconnected(&self) {}
}
