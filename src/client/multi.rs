//! Several requests in flight at once, one per connection (each to a different broker).
//!
//! Every [`BrokerConnection`] owns its socket and its own `mio::Poll`, and an exchange on it
//! (send, wait for the answer) is a blocking call that touches nothing else. So
//! [`Client::send_each`] runs the exchanges with different nodes at the same time: one on the
//! calling thread, each other one on a scoped thread that borrows its connection, and hands
//! each answer to the caller as it arrives. The call returns when every exchange has ended
//! (answered, failed, or timed out at the deadline). There is still one request per
//! connection at a time, so a connection's correlation-id rule (an answer must carry the id
//! just sent) holds unchanged, and the transport needs no shared poll.
//!
//! [`Client::open_each`] readies those connections first and, unlike [`Client::connection`],
//! does not wait for a node in reconnect backoff: such a node fails at once, so one dead
//! broker does not hold up the requests to the healthy ones.

use std::collections::HashMap;
use std::sync::mpsc;
use std::time::Instant;

use crate::protocol::Request;
use crate::transport::TransportError;

use super::backoff::Peer;
use super::{cap, BrokerConnection, BrokerTarget, Client, ClientError};

impl Client {
    /// Opens the connections to `nodes` that are not open yet and returns, per node, the
    /// highest version of `R` both sides support (or why there is no connection).
    ///
    /// A node whose reconnect backoff has not ended is not waited for (as
    /// [`connection`](Self::connection) does): it fails at once with a retriable
    /// [`TransportError::Connect`] naming the backoff.
    pub fn open_each<R: Request>(
        &mut self,
        nodes: &[i32],
        deadline: Instant,
    ) -> Vec<(i32, Result<i16, ClientError>)> {
        let mut out = Vec::with_capacity(nodes.len());
        for &id in nodes {
            let version = self
                .open_now(id, deadline)
                .and_then(|c| c.pick_version::<R>());
            out.push((id, version));
        }
        out
    }

    /// The connection to node `id`, opened if needed, unless that needs a wait for its
    /// reconnect backoff.
    fn open_now(
        &mut self,
        id: i32,
        deadline: Instant,
    ) -> Result<&mut BrokerConnection, ClientError> {
        self.prune_broken();
        if !self.nodes.contains_key(&id) {
            let peer = Peer::Node(id);
            if let Some(blocked) = self.reconnects.blocked(peer, Instant::now()) {
                let addr = self
                    .brokers
                    .get(&id)
                    .map_or_else(|| format!("node {id}"), |b| b.addr());
                return Err(ClientError::Transport(TransportError::Connect {
                    addr,
                    reason: format!(
                        "{peer}: {} failed attempt(s), next one in {:?} (reconnect.backoff.ms); \
                         last error: {}",
                        blocked.failures,
                        blocked.until.saturating_duration_since(Instant::now()),
                        blocked.last_error
                    ),
                }));
            }
        }
        self.connection(BrokerTarget::Node(id), deadline)
    }

    /// Sends each `(node, version, request)` on its node's open connection, all in flight at
    /// the same time, and calls `on_answer(node, result)` for each as the answers come in
    /// (on the calling thread). Returns when every exchange has ended, by `deadline` at the
    /// latest. A node without an open connection (see [`open_each`](Self::open_each)) or
    /// named twice gets an error without a request; a connection an exchange broke is
    /// dropped, to be reopened on next use.
    pub fn send_each<R>(
        &mut self,
        requests: Vec<(i32, i16, R)>,
        deadline: Instant,
        mut on_answer: impl FnMut(i32, Result<R::Response, ClientError>),
    ) where
        R: Request + Send,
        R::Response: Send,
    {
        let deadline = cap(&self.opts, deadline);
        self.prune_broken();
        let mut wanted: HashMap<i32, (i16, R)> = HashMap::with_capacity(requests.len());
        for (node, version, req) in requests {
            if wanted.insert(node, (version, req)).is_some() {
                on_answer(node, Err(not_open(node, "named twice in one send_each")));
            }
        }
        let mut jobs: Vec<(i32, &mut BrokerConnection, i16, R)> = Vec::new();
        for (id, conn) in &mut self.nodes {
            if let Some((version, req)) = wanted.remove(id) {
                jobs.push((*id, conn, version, req));
            }
        }
        for node in wanted.into_keys() {
            on_answer(node, Err(not_open(node, "no open connection")));
        }
        run_jobs(jobs, deadline, &mut on_answer);
        self.prune_broken();
    }
}

/// Runs the exchanges: the first on this thread, the others on scoped threads; answers go to
/// `on_answer` on this thread.
fn run_jobs<R>(
    mut jobs: Vec<(i32, &mut BrokerConnection, i16, R)>,
    deadline: Instant,
    on_answer: &mut impl FnMut(i32, Result<R::Response, ClientError>),
) where
    R: Request + Send,
    R::Response: Send,
{
    let Some((node, conn, version, req)) = jobs.pop() else {
        return;
    };
    if jobs.is_empty() {
        on_answer(node, exchange(conn, &req, version, deadline));
        return;
    }
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|s| {
        for (node, conn, version, req) in jobs {
            let tx = tx.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("ksg-send-{node}"))
                .spawn_scoped(s, move || {
                    let _ = tx.send((node, exchange(conn, &req, version, deadline)));
                });
            if let Err(e) = spawned {
                log::warn!("no thread for the request to node {node}: {e}");
                on_answer(node, Err(not_open(node, "no thread to send on")));
            }
        }
        drop(tx);
        on_answer(node, exchange(conn, &req, version, deadline));
        for (node, r) in rx {
            on_answer(node, r);
        }
    });
}

/// One exchange on `conn`, re-authenticating first when the SASL session is about to expire
/// (as [`Client::send_at`] does).
fn exchange<R: Request>(
    conn: &mut BrokerConnection,
    req: &R,
    version: i16,
    deadline: Instant,
) -> Result<R::Response, ClientError> {
    if conn.needs_reauthentication(Instant::now()) {
        conn.reauthenticate(deadline)?;
    }
    conn.send_request(req, version, deadline)
}

fn not_open(node: i32, why: &str) -> ClientError {
    ClientError::NoBrokerAvailable {
        attempts: vec![format!("node {node}: {why}")],
    }
}
