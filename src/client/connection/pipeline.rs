//! Several requests in flight on one connection (Java's `max.in.flight.requests.per.connection`).
//!
//! ```text
//!   start_request(req)      encode and write the frame; the answer is read later
//!   finish_request(p)       read frames until p's answer (stashing earlier answers that
//!                           belong to other pending requests)
//!   abandon(p)              p's answer is dropped when it comes
//! ```
//!
//! Kafka answers the requests of one connection in the order they were sent, so the
//! correlation id of each frame read must be the oldest one not yet read: anything else
//! means the stream is out of step, and the connection is broken. A blocking
//! [`send_request`](BrokerConnection::send_request) on a connection with pending requests
//! reads (and stashes) their answers before its own, so other users of a shared client are
//! not disturbed.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use crate::protocol::frame::{decode_response_frame, encode_request_frame, peek_correlation_id};
use crate::protocol::Request;
use crate::transport::TransportError;

use super::super::error::ClientError;
use super::BrokerConnection;

/// Source of [`BrokerConnection::id`]s: unique in the process.
static NEXT_CONNECTION_ID: AtomicU64 = AtomicU64::new(1);

/// A new connection id.
pub(super) fn next_connection_id() -> u64 {
    NEXT_CONNECTION_ID.fetch_add(1, Ordering::Relaxed)
}

/// A request written to a connection whose answer has not been read yet (see
/// [`BrokerConnection::start_request`]). Finish it with
/// [`BrokerConnection::finish_request`] on the same connection, or
/// [`abandon`](BrokerConnection::abandon) it.
#[derive(Debug)]
pub struct PendingRequest {
    conn_id: u64,
    cid: i32,
    api_key: i16,
    version: i16,
    sent_at: Instant,
    bytes_out: usize,
}

impl PendingRequest {
    /// The [`BrokerConnection::id`] of the connection it was written to.
    pub fn connection_id(&self) -> u64 {
        self.conn_id
    }

    /// The version it was encoded at.
    pub fn version(&self) -> i16 {
        self.version
    }
}

impl BrokerConnection {
    /// This connection's id, unique in the process: a [`PendingRequest`] belongs to it.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Requests written and not yet answered (read): those of
    /// [`start_request`](Self::start_request) not finished, abandoned ones included.
    pub fn in_flight(&self) -> usize {
        self.awaited.len()
    }

    /// Writes `req` at `version` (before `deadline`) without waiting for its answer: read it
    /// with [`finish_request`](Self::finish_request). A write error breaks the connection.
    pub fn start_request<R: Request>(
        &mut self,
        req: &R,
        version: i16,
        deadline: Instant,
    ) -> Result<PendingRequest, ClientError> {
        let sent_at = Instant::now();
        let r = self.write_request(req, version, deadline);
        if r.is_err() {
            if let Some(o) = &self.observer {
                o.request_failed(R::API_KEY);
            }
        }
        let cid = r?;
        Ok(PendingRequest {
            conn_id: self.id,
            cid,
            api_key: R::API_KEY,
            version,
            sent_at,
            bytes_out: self.buf.len(),
        })
    }

    /// Reads the answer of `pending` (waiting until `deadline`) and decodes it. An answer
    /// out of order, an undecodable one, a timeout or a transport error breaks the
    /// connection (and so fails every other pending request on it).
    pub fn finish_request<R: Request>(
        &mut self,
        pending: PendingRequest,
        deadline: Instant,
    ) -> Result<R::Response, ClientError> {
        if pending.conn_id != self.id || pending.api_key != R::API_KEY {
            return Err(ClientError::Transport(TransportError::Broken {
                peer: self.addr.clone(),
            }));
        }
        let frame = match self.read_answer::<R>(pending.cid, pending.version, deadline) {
            Ok(frame) => frame,
            Err(e) => {
                if let Some(o) = &self.observer {
                    o.request_failed(R::API_KEY);
                }
                return Err(e);
            }
        };
        if let Some(o) = &self.observer {
            o.request_completed(
                R::API_KEY,
                pending.sent_at.elapsed(),
                pending.bytes_out,
                frame.len() + 4,
            );
        }
        let body = decode_response_frame::<R>(&frame, pending.version).map(|(_, body)| body);
        self.decoded::<R, _>(pending.version, body)
    }

    /// Gives up on `pending`: its answer is dropped when it is read (by a later request on
    /// this connection). A request of another connection is ignored.
    pub fn abandon(&mut self, pending: PendingRequest) {
        if pending.conn_id != self.id {
            return;
        }
        if self.stash.remove(&pending.cid).is_none() && self.awaited.contains(&pending.cid) {
            self.abandoned.insert(pending.cid);
        }
    }

    /// Encodes `req` into the buffer with a new correlation id and writes it; the id is
    /// then awaited.
    pub(super) fn write_request<R: Request>(
        &mut self,
        req: &R,
        version: i16,
        deadline: Instant,
    ) -> Result<i32, ClientError> {
        let cid = self.next_correlation_id;
        // Wrap to 0 rather than going negative: some tools treat negative ids as special.
        self.next_correlation_id = self.next_correlation_id.checked_add(1).unwrap_or(0);
        self.buf.clear();
        encode_request_frame(&mut self.buf, cid, self.client_id.as_deref(), req, version).map_err(
            |source| ClientError::Encode {
                api: R::NAME,
                version,
                broker: self.addr.clone(),
                source,
            },
        )?;
        log::trace!("{} v{version} cid {cid} -> {}", R::NAME, self.addr);
        self.conn.send_frame(&self.buf, deadline)?;
        self.awaited.push_back(cid);
        Ok(cid)
    }

    /// The answer frame of correlation id `cid`: stashed already, or read now, stashing the
    /// answers of older pending requests on the way (and dropping abandoned ones).
    pub(super) fn read_answer<R: Request>(
        &mut self,
        cid: i32,
        version: i16,
        deadline: Instant,
    ) -> Result<Vec<u8>, ClientError> {
        if let Some(frame) = self.stash.remove(&cid) {
            return Ok(frame);
        }
        if !self.awaited.contains(&cid) {
            // Not sent on this connection, or its answer was taken already.
            return Err(ClientError::Transport(TransportError::Broken {
                peer: self.addr.clone(),
            }));
        }
        loop {
            let frame = self.conn.recv_frame(deadline)?;
            let got = match peek_correlation_id(&frame) {
                Ok(got) => got,
                Err(source) => return Err(self.decode_error::<R>(version, source)),
            };
            let expected = self.awaited.front().copied().unwrap_or(cid);
            if got != expected {
                self.conn.mark_broken();
                return Err(ClientError::CorrelationMismatch {
                    api: R::NAME,
                    broker: self.addr.clone(),
                    expected,
                    got,
                });
            }
            self.awaited.pop_front();
            if got == cid {
                return Ok(frame);
            }
            if !self.abandoned.remove(&got) {
                self.stash.insert(got, frame);
            }
        }
    }
}
