//! Several requests in flight at once, one per connection (each to a different broker).
//!
//! Every [`BrokerConnection`] owns its socket and its own `mio::Poll`, and an exchange on it
//! (send, wait for the answer) is a blocking call that touches nothing else. So
//! [`Client::send_each`] runs the exchanges with different nodes at the same time: one on the
//! calling thread, each other one on a worker thread (a small pool shared by the process)
//! that holds its connection for the exchange, and hands each answer to the caller as it
//! arrives. The call returns when every exchange has ended
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
        R: Request + Send + 'static,
        R::Response: Send + 'static,
    {
        let deadline = cap(&self.opts, deadline);
        self.prune_broken();
        let mut wanted: HashMap<i32, (i16, R)> = HashMap::with_capacity(requests.len());
        for (node, version, req) in requests {
            if wanted.insert(node, (version, req)).is_some() {
                on_answer(node, Err(not_open(node, "named twice in one send_each")));
            }
        }
        let mut jobs: Vec<Job<R>> = Vec::with_capacity(wanted.len());
        for (node, (version, req)) in wanted {
            // Taken out for the exchange and put back after it: a worker thread owns it
            // meanwhile.
            match self.nodes.remove(&node) {
                Some(conn) => jobs.push((node, conn, version, req)),
                None => on_answer(node, Err(not_open(node, "no open connection"))),
            }
        }
        let sent: Vec<i32> = jobs.iter().map(|j| j.0).collect();
        for (node, conn) in run_jobs(jobs, deadline, &mut on_answer) {
            self.nodes.insert(node, conn);
        }
        // Connections an exchange broke are dropped (and their replacement counted as a
        // reconnect); a connection lost with a worker thread is counted so as well.
        for node in sent {
            if !self.nodes.contains_key(&node) {
                self.dropped.insert(Some(node));
            }
        }
        self.prune_broken();
    }
}

/// One exchange to run: node, its connection (moved), request version and request.
type Job<R> = (i32, BrokerConnection, i16, R);

/// Runs the exchanges: the first on this thread, the others on the pool's worker threads;
/// answers go to `on_answer` on this thread as they come. Returns the connections.
fn run_jobs<R>(
    mut jobs: Vec<Job<R>>,
    deadline: Instant,
    on_answer: &mut impl FnMut(i32, Result<R::Response, ClientError>),
) -> Vec<(i32, BrokerConnection)>
where
    R: Request + Send + 'static,
    R::Response: Send + 'static,
{
    let mut conns = Vec::with_capacity(jobs.len());
    let Some((node, mut conn, version, req)) = jobs.pop() else {
        return conns;
    };
    let (tx, rx) = mpsc::channel();
    let mut pending = 0usize;
    for (node, mut conn, version, req) in jobs {
        let tx = tx.clone();
        let job: PoolJob = Box::new(move || {
            let r = exchange(&mut conn, &req, version, deadline);
            let _ = tx.send((node, conn, r));
        });
        match pool::run(job) {
            Ok(()) => pending += 1,
            Err(job) => {
                // No thread to run it on: run it here, after the others started.
                log::warn!("no worker thread for the request to node {node}; sending it inline");
                job();
                pending += 1;
            }
        }
    }
    drop(tx);
    let r = exchange(&mut conn, &req, version, deadline);
    conns.push((node, conn));
    on_answer(node, r);
    while pending > 0 {
        let Ok((node, conn, r)) = rx.recv() else {
            // A worker ended without answering (it cannot, short of a panic): its
            // connection is gone and will be reopened on next use.
            log::warn!("{pending} exchange(s) ended without an answer");
            break;
        };
        pending -= 1;
        conns.push((node, conn));
        on_answer(node, r);
    }
    conns
}

type PoolJob = Box<dyn FnOnce() + Send>;

/// Worker threads for [`run_jobs`], shared by every client of the process: starting a thread
/// per exchange cost ~34 µs (scoped spawn and join, measured on this project's 2-core machine), a hand-over
/// to a waiting worker a few µs. A worker is started when no idle one is waiting and then
/// waits for jobs for the life of the process, so there are at most as many as exchanges
/// ever ran at the same time (one per broker and concurrent caller).
mod pool {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::OnceLock;

    use crossbeam_channel::{Receiver, Sender};

    use super::PoolJob;

    struct Pool {
        jobs: Sender<PoolJob>,
        queue: Receiver<PoolJob>,
        /// Workers waiting for a job that no caller has claimed yet.
        idle: AtomicUsize,
    }

    fn pool() -> &'static Pool {
        static POOL: OnceLock<Pool> = OnceLock::new();
        POOL.get_or_init(|| {
            let (jobs, queue) = crossbeam_channel::unbounded();
            Pool {
                jobs,
                queue,
                idle: AtomicUsize::new(0),
            }
        })
    }

    /// Hands `job` to an idle worker, or to a new one; gives it back when no thread can be
    /// started.
    pub(super) fn run(job: PoolJob) -> Result<(), PoolJob> {
        let p = pool();
        let claimed = p
            .idle
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok();
        if !claimed {
            let queue = p.queue.clone();
            let started = std::thread::Builder::new()
                .name("ksg-send".to_owned())
                .spawn(move || work(&queue));
            if let Err(e) = started {
                log::warn!("cannot start a worker thread: {e}");
                return Err(job);
            }
        }
        p.jobs.send(job).map_err(|e| e.into_inner())
    }

    fn work(queue: &Receiver<PoolJob>) {
        while let Ok(job) = queue.recv() {
            job();
            pool().idle.fetch_add(1, Ordering::SeqCst);
        }
    }
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
