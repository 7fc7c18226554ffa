//! A TCP fault-injection proxy for tests: sits between a client and a server (a Kafka broker,
//! an echo server) on loopback and, switchable at run time, delays, drops, resets, truncates,
//! corrupts or throttles the traffic.
//!
//! Include it from a test binary with
//! `#[path = "support/fault_proxy.rs"] mod fault_proxy;` (from a directory binary `tests/x/main.rs`: `"../support/fault_proxy.rs"`).
//!
//! Plain std threads, no async: one accept thread plus two pump threads per connection (one
//! per direction). Every thread polls its stop conditions at least every [`POLL`], so a fault
//! switched at run time reaches idle connections within that time, and dropping the proxy
//! stops and joins every thread it started ([`FaultProxy::open_threads`] says how many run).
//! Bounded by [`Limits`]: a cap on concurrent connections and on the proxy's lifetime, so a
//! forgotten proxy cannot keep a test binary busy.
#![allow(dead_code)]

use std::io::{self, ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// Longest time any proxy thread blocks before it looks at the fault mode and stop flags again.
pub const POLL: Duration = Duration::from_millis(20);

/// How long the accept thread sleeps when no connection is pending (its listener is
/// non-blocking so that it can also notice stop requests and mode changes).
const ACCEPT_POLL: Duration = Duration::from_millis(5);

/// Size of one read; also the largest chunk a `Delay` holds back at once.
const CHUNK: usize = 16 * 1024;

/// What the proxy does to traffic. Applies to connections that exist when it is set and to
/// new ones. Byte offsets of `TruncateAfter` and `CorruptByte` count server→client bytes from
/// the moment the fault took effect on a connection (for a new connection: from its start).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Forward everything unchanged.
    PassThrough,
    /// Hold back each chunk, in both directions, for this long before forwarding it.
    Delay(Duration),
    /// Accept and read, but forward nothing in either direction and never answer.
    Blackhole,
    /// Abort connections with a TCP RST (SO_LINGER 0): existing ones now, new ones right
    /// after accepting them.
    Reset,
    /// Shut down the write side toward the client (it reads end-of-stream); what the client
    /// sends still reaches the server, what the server sends is discarded.
    HalfClose,
    /// Forward this many bytes toward the client, then close the connection (FIN both ways).
    TruncateAfter(usize),
    /// Invert (XOR 0xFF) the server→client byte at this offset; everything else unchanged.
    CorruptByte {
        /// Offset of the byte to corrupt.
        offset: usize,
    },
    /// Forward at most this many bytes per second in each direction.
    Throttle {
        /// Rate limit per direction and connection; 0 is treated as 1.
        bytes_per_sec: u64,
    },
    /// Stop accepting (the listening socket is closed, connecting gets "connection refused");
    /// accepted connections are unaffected, but one still waiting in the kernel's backlog is
    /// reset with the listener. Leaving this mode listens on the same port again.
    RefuseNew,
    /// Close all connections now (FIN); new connections are accepted and closed at once.
    Disconnect,
}

/// Bounds on what one proxy may consume.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Connections open at the same time; more are accepted and closed immediately.
    pub max_connections: usize,
    /// After this long the proxy closes everything and stops, as if dropped.
    pub max_lifetime: Duration,
    /// How long to wait for the upstream when a client connects.
    pub connect_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: 256,
            max_lifetime: Duration::from_secs(600),
            connect_timeout: Duration::from_secs(2),
        }
    }
}

/// Counters of one proxy. Shared with its threads; readable after the proxy is gone through a
/// [`ProxyProbe`].
#[derive(Debug, Default)]
struct Counters {
    accepted: AtomicU64,
    rejected: AtomicU64,
    upstream_connect_failures: AtomicU64,
    bytes_to_upstream: AtomicU64,
    bytes_to_client: AtomicU64,
    open_connections: AtomicUsize,
    open_threads: AtomicUsize,
}

/// A snapshot of a proxy's counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProxyStats {
    /// TCP connections accepted from clients (including ones closed at once by a fault or cap).
    pub accepted: u64,
    /// Connections closed at once because `max_connections` were open.
    pub rejected: u64,
    /// Accepted connections whose upstream could not be reached (the client got a reset).
    pub upstream_connect_failures: u64,
    /// Bytes written to the upstream.
    pub bytes_to_upstream: u64,
    /// Bytes written to clients.
    pub bytes_to_client: u64,
    /// Connections with at least one live pump thread.
    pub open_connections: usize,
    /// Threads of this proxy still running (accept thread included).
    pub open_threads: usize,
}

impl Counters {
    fn snapshot(&self) -> ProxyStats {
        ProxyStats {
            accepted: self.accepted.load(Ordering::SeqCst),
            rejected: self.rejected.load(Ordering::SeqCst),
            upstream_connect_failures: self.upstream_connect_failures.load(Ordering::SeqCst),
            bytes_to_upstream: self.bytes_to_upstream.load(Ordering::SeqCst),
            bytes_to_client: self.bytes_to_client.load(Ordering::SeqCst),
            open_connections: self.open_connections.load(Ordering::SeqCst),
            open_threads: self.open_threads.load(Ordering::SeqCst),
        }
    }
}

/// A handle on a proxy's counters that stays valid after the proxy is dropped, so a test can
/// check that no thread outlived it.
#[derive(Clone, Debug)]
pub struct ProxyProbe(Arc<Counters>);

impl ProxyProbe {
    /// The counters now.
    pub fn stats(&self) -> ProxyStats {
        self.0.snapshot()
    }

    /// Threads of the proxy still running.
    pub fn open_threads(&self) -> usize {
        self.0.open_threads.load(Ordering::SeqCst)
    }
}

/// Counts a thread as open from before it is spawned (so a count never reads low while a
/// spawn is in flight) until its closure ends, panicking or not.
struct ThreadGuard(Arc<Counters>);

impl ThreadGuard {
    fn new(counters: &Arc<Counters>) -> ThreadGuard {
        counters.open_threads.fetch_add(1, Ordering::SeqCst);
        ThreadGuard(Arc::clone(counters))
    }
}

impl Drop for ThreadGuard {
    fn drop(&mut self) {
        self.0.open_threads.fetch_sub(1, Ordering::SeqCst);
    }
}

const ABORT_NONE: u8 = 0;
const ABORT_CLOSE: u8 = 1;
const ABORT_RESET: u8 = 2;

/// Control block of one proxied connection, shared by its two pumps and the proxy.
struct ConnCtl {
    /// `ABORT_*`: once set, both pumps tear the connection down that way and exit.
    abort: AtomicU8,
    /// Pumps still running; the last one out closes the books on the connection.
    live_pumps: AtomicU8,
}

impl ConnCtl {
    fn request(&self, kind: u8) {
        // The first decision wins: a reset after a close (or the reverse) changes nothing.
        let _ = self
            .abort
            .compare_exchange(ABORT_NONE, kind, Ordering::SeqCst, Ordering::SeqCst);
    }
}

struct ConnEntry {
    ctl: Arc<ConnCtl>,
    pumps: Vec<JoinHandle<()>>,
}

struct Shared {
    /// The fault and a generation number that changes with every `set_fault`, so a pump can
    /// tell "the same fault set again" from "unchanged" (offsets restart from the new setting).
    mode: Mutex<(Fault, u64)>,
    upstream: Mutex<SocketAddr>,
    stop: AtomicBool,
    limits: Limits,
    counters: Arc<Counters>,
    conns: Mutex<Vec<ConnEntry>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panicking test thread must not turn every later proxy call into a second panic.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    fn mode(&self) -> (Fault, u64) {
        *lock(&self.mode)
    }

    fn stopping(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }
}

/// A running fault proxy. Dropping it closes every connection and joins every thread.
pub struct FaultProxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept_thread: Option<JoinHandle<()>>,
}

impl FaultProxy {
    /// Starts a pass-through proxy on 127.0.0.1 (a free port) in front of `upstream`, with
    /// default [`Limits`]. Panics if it cannot listen (a test set-up failure).
    pub fn start(upstream: SocketAddr) -> FaultProxy {
        FaultProxy::start_with(upstream, Limits::default())
            .unwrap_or_else(|e| panic!("fault proxy: cannot listen on 127.0.0.1: {e}"))
    }

    /// Starts a pass-through proxy with explicit limits.
    pub fn start_with(upstream: SocketAddr, limits: Limits) -> io::Result<FaultProxy> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let counters = Arc::new(Counters::default());
        let shared = Arc::new(Shared {
            mode: Mutex::new((Fault::PassThrough, 0)),
            upstream: Mutex::new(upstream),
            stop: AtomicBool::new(false),
            limits,
            counters: Arc::clone(&counters),
            conns: Mutex::new(Vec::new()),
        });
        let guard = ThreadGuard::new(&counters);
        let thread_shared = Arc::clone(&shared);
        let accept_thread = thread::Builder::new()
            .name(format!("fault-proxy-accept-{}", addr.port()))
            .spawn(move || {
                let _guard = guard;
                accept_loop(listener, addr, thread_shared);
            })?;
        Ok(FaultProxy {
            addr,
            shared,
            accept_thread: Some(accept_thread),
        })
    }

    /// Where clients connect: 127.0.0.1 and the proxy's port.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The server new connections are forwarded to.
    pub fn upstream(&self) -> SocketAddr {
        *lock(&self.shared.upstream)
    }

    /// Forwards connections made from now on to another server (existing ones keep theirs),
    /// e.g. to follow a broker that moved.
    pub fn set_upstream(&self, upstream: SocketAddr) {
        *lock(&self.shared.upstream) = upstream;
    }

    /// Switches the fault; takes effect on every connection within [`POLL`]. A fault replaced
    /// again sooner may never be seen by an idle connection: for a guaranteed one-shot cut use
    /// [`FaultProxy::disconnect_all`] or [`FaultProxy::reset_all`].
    pub fn set_fault(&self, fault: Fault) {
        let mut mode = lock(&self.shared.mode);
        mode.0 = fault;
        mode.1 = mode.1.wrapping_add(1);
    }

    /// The fault in force.
    pub fn fault(&self) -> Fault {
        self.shared.mode().0
    }

    /// Closes every connection open now (FIN both ways) and leaves the fault as it is, so new
    /// connections behave normally.
    pub fn disconnect_all(&self) {
        self.abort_all(ABORT_CLOSE);
    }

    /// Resets (RST) every connection open now and leaves the fault as it is.
    pub fn reset_all(&self) {
        self.abort_all(ABORT_RESET);
    }

    fn abort_all(&self, kind: u8) {
        for entry in lock(&self.shared.conns).iter() {
            entry.ctl.request(kind);
        }
    }

    /// All counters at once.
    pub fn stats(&self) -> ProxyStats {
        self.shared.counters.snapshot()
    }

    /// Connections accepted so far.
    pub fn accepted(&self) -> u64 {
        self.stats().accepted
    }

    /// Bytes forwarded to the upstream so far.
    pub fn bytes_to_upstream(&self) -> u64 {
        self.stats().bytes_to_upstream
    }

    /// Bytes forwarded to clients so far.
    pub fn bytes_to_client(&self) -> u64 {
        self.stats().bytes_to_client
    }

    /// Connections currently open through the proxy.
    pub fn open_connections(&self) -> usize {
        self.stats().open_connections
    }

    /// Threads of this proxy still running (1 accept thread + 2 per open connection while it
    /// runs; 0 once dropped — check that with [`FaultProxy::probe`]).
    pub fn open_threads(&self) -> usize {
        self.stats().open_threads
    }

    /// A handle on the counters that outlives the proxy.
    pub fn probe(&self) -> ProxyProbe {
        ProxyProbe(Arc::clone(&self.shared.counters))
    }

    /// Waits up to `timeout` for `cond` on the counters; true if it held in time.
    pub fn wait_until(&self, timeout: Duration, cond: impl Fn(&ProxyStats) -> bool) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            if cond(&self.stats()) {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            thread::sleep(Duration::from_millis(5));
        }
    }

    /// Stops the proxy now (the same as dropping it).
    pub fn shutdown(self) {}
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Some(handle) = self.accept_thread.take() {
            // The accept thread joins every pump before it returns.
            let _ = handle.join();
        }
    }
}

fn accept_loop(initial: TcpListener, addr: SocketAddr, shared: Arc<Shared>) {
    let born = Instant::now();
    let mut listener = Some(initial);
    while !shared.stopping() {
        if born.elapsed() >= shared.limits.max_lifetime {
            shared.stop.store(true, Ordering::SeqCst);
            break;
        }
        reap_finished(&shared);
        let (fault, _) = shared.mode();
        if fault == Fault::RefuseNew {
            // Closing the listening socket is what makes connecting fail with "refused"
            // (a listener that merely stops calling accept still completes handshakes).
            listener = None;
            thread::sleep(ACCEPT_POLL);
            continue;
        }
        let Some(l) = listener.as_ref() else {
            // std sets SO_REUSEADDR on Unix listeners, so the old port can be bound again.
            match TcpListener::bind(addr).and_then(|l| l.set_nonblocking(true).map(|()| l)) {
                Ok(l) => listener = Some(l),
                Err(_) => thread::sleep(ACCEPT_POLL),
            }
            continue;
        };
        match l.accept() {
            Ok((client, _)) => admit(client, fault, &shared),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => thread::sleep(ACCEPT_POLL),
        }
    }
    drop(listener);
    // Pumps see the stop flag within POLL; joining them here means dropping the proxy
    // returns only when none is left.
    let entries = std::mem::take(&mut *lock(&shared.conns));
    for entry in entries {
        for pump in entry.pumps {
            let _ = pump.join();
        }
    }
}

fn reap_finished(shared: &Shared) {
    let mut conns = lock(&shared.conns);
    let mut i = 0;
    while i < conns.len() {
        if conns[i].pumps.iter().all(JoinHandle::is_finished) {
            let entry = conns.swap_remove(i);
            for pump in entry.pumps {
                let _ = pump.join();
            }
        } else {
            i += 1;
        }
    }
}

/// Sends an RST instead of a FIN when `stream`'s socket is closed (by its last descriptor).
fn arm_reset(stream: &TcpStream) {
    let _ = socket2::SockRef::from(stream).set_linger(Some(Duration::ZERO));
}

fn admit(client: TcpStream, fault: Fault, shared: &Arc<Shared>) {
    let counters = &shared.counters;
    counters.accepted.fetch_add(1, Ordering::SeqCst);
    if counters.open_connections.load(Ordering::SeqCst) >= shared.limits.max_connections {
        counters.rejected.fetch_add(1, Ordering::SeqCst);
        return;
    }
    match fault {
        Fault::Reset => {
            arm_reset(&client);
            return;
        }
        Fault::Disconnect => return,
        _ => {}
    }
    let upstream_addr = *lock(&shared.upstream);
    let upstream = match TcpStream::connect_timeout(&upstream_addr, shared.limits.connect_timeout) {
        Ok(s) => s,
        Err(_) => {
            // Tell the client as abruptly as the unreachable server would have.
            counters
                .upstream_connect_failures
                .fetch_add(1, Ordering::SeqCst);
            arm_reset(&client);
            return;
        }
    };
    if let Err(_e) = start_pumps(client, upstream, shared) {
        // Could not clone sockets or spawn threads: the streams are dropped (closed) here.
    }
}

fn start_pumps(client: TcpStream, upstream: TcpStream, shared: &Arc<Shared>) -> io::Result<()> {
    for s in [&client, &upstream] {
        // Accepted sockets must block (with timeouts), whatever the listener was.
        s.set_nonblocking(false)?;
        s.set_nodelay(true)?;
        s.set_read_timeout(Some(POLL))?;
        s.set_write_timeout(Some(POLL))?;
    }
    let ctl = Arc::new(ConnCtl {
        abort: AtomicU8::new(ABORT_NONE),
        live_pumps: AtomicU8::new(2),
    });
    let client2 = client.try_clone()?;
    let upstream2 = upstream.try_clone()?;
    let counters = &shared.counters;
    counters.open_connections.fetch_add(1, Ordering::SeqCst);
    // The connection is listed before its pumps can forward a byte: a caller that saw data
    // pass and then calls `reset_all`/`disconnect_all` (which take this lock) must find it.
    // Listing it after the spawns raced on a loaded machine: the accept thread was
    // descheduled between the spawns and the push, the echo round trip went through, and
    // `reset_all` reset nothing (fault_proxy_selftest waited 5 s for an RST that never came).
    let mut conns = lock(&shared.conns);
    let mut pumps = Vec::with_capacity(2);
    for (dir, from, to) in [
        (Dir::ToUpstream, client, upstream),
        (Dir::ToClient, upstream2, client2),
    ] {
        let guard = ThreadGuard::new(counters);
        let pump = Pump {
            dir,
            from,
            to,
            ctl: Arc::clone(&ctl),
            shared: Arc::clone(shared),
        };
        let spawned = thread::Builder::new()
            .name(format!("fault-proxy-{dir:?}"))
            .spawn(move || {
                let _guard = guard;
                pump.run();
            });
        match spawned {
            Ok(handle) => pumps.push(handle),
            Err(e) => {
                // The closure (and its pump) is gone; account for it as exited and make the
                // other pump, if any, tear the connection down.
                ctl.request(ABORT_CLOSE);
                pump_exited(&ctl, counters);
                if pumps.is_empty() {
                    pump_exited(&ctl, counters);
                }
                conns.push(ConnEntry { ctl, pumps });
                return Err(e);
            }
        }
    }
    conns.push(ConnEntry { ctl, pumps });
    Ok(())
}

fn pump_exited(ctl: &ConnCtl, counters: &Counters) {
    if ctl.live_pumps.fetch_sub(1, Ordering::SeqCst) == 1 {
        counters.open_connections.fetch_sub(1, Ordering::SeqCst);
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dir {
    ToUpstream,
    ToClient,
}

/// Copies one direction of one connection, applying the fault in force.
struct Pump {
    dir: Dir,
    from: TcpStream,
    to: TcpStream,
    ctl: Arc<ConnCtl>,
    shared: Arc<Shared>,
}

/// Why a pump stopped forwarding.
enum Exit {
    /// The source sent end-of-stream: pass the half-close on.
    Eof,
    /// The connection is being torn down (`ConnCtl::abort` says how) or the proxy stops.
    Abort,
}

impl Pump {
    fn run(mut self) {
        let exit = self.forward();
        match exit {
            Exit::Eof => {
                // A client that finished sending may still want the answer: pass the FIN on
                // and leave the other direction running.
                let _ = self.to.shutdown(Shutdown::Write);
            }
            Exit::Abort => self.tear_down(),
        }
        pump_exited(&self.ctl, &self.shared.counters);
        // `from` and `to` close here; with SO_LINGER 0 armed the last close sends the RST.
    }

    fn client(&self) -> &TcpStream {
        match self.dir {
            Dir::ToUpstream => &self.from,
            Dir::ToClient => &self.to,
        }
    }

    fn upstream(&self) -> &TcpStream {
        match self.dir {
            Dir::ToUpstream => &self.to,
            Dir::ToClient => &self.from,
        }
    }

    fn tear_down(&self) {
        if self.shared.stopping() {
            self.ctl.request(ABORT_CLOSE);
        }
        if self.ctl.abort.load(Ordering::SeqCst) == ABORT_RESET {
            arm_reset(self.client());
            // SHUT_RD sends nothing but wakes the other pump's read; the RST goes out when
            // the last descriptor of the client socket closes.
            let _ = self.client().shutdown(Shutdown::Read);
        } else {
            let _ = self.client().shutdown(Shutdown::Both);
        }
        let _ = self.upstream().shutdown(Shutdown::Both);
    }

    /// True when the connection must go down now.
    fn aborting(&self) -> bool {
        self.shared.stopping() || self.ctl.abort.load(Ordering::SeqCst) != ABORT_NONE
    }

    /// Sleeps for `d`, waking early (false) if the connection is torn down meanwhile.
    fn sleep(&self, d: Duration) -> bool {
        let deadline = Instant::now() + d;
        loop {
            if self.aborting() {
                return false;
            }
            let now = Instant::now();
            if now >= deadline {
                return true;
            }
            thread::sleep((deadline - now).min(POLL));
        }
    }

    /// Writes all of `data` to `to`, counting the bytes; false if the connection goes down.
    fn write_all(&mut self, mut data: &[u8]) -> bool {
        while !data.is_empty() {
            if self.aborting() {
                return false;
            }
            match self.to.write(data) {
                Ok(0) => {
                    self.ctl.request(ABORT_CLOSE);
                    return false;
                }
                Ok(n) => {
                    let counter = match self.dir {
                        Dir::ToUpstream => &self.shared.counters.bytes_to_upstream,
                        Dir::ToClient => &self.shared.counters.bytes_to_client,
                    };
                    counter.fetch_add(n as u64, Ordering::SeqCst);
                    data = &data[n..];
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                    ) => {}
                Err(_) => {
                    self.ctl.request(ABORT_CLOSE);
                    return false;
                }
            }
        }
        true
    }

    /// Writes `data` at no more than `bytes_per_sec`: in slices of a twentieth of a second's
    /// worth, each followed by the pause it is entitled to.
    fn write_throttled(&mut self, data: &[u8], bytes_per_sec: u64) -> bool {
        let rate = bytes_per_sec.max(1);
        let slice = usize::try_from(rate / 20).unwrap_or(usize::MAX).max(1);
        for piece in data.chunks(slice) {
            if !self.write_all(piece) {
                return false;
            }
            let pause = Duration::from_secs_f64(piece.len() as f64 / rate as f64);
            if !self.sleep(pause) {
                return false;
            }
        }
        true
    }

    fn forward(&mut self) -> Exit {
        let mut buf = vec![0u8; CHUNK];
        // Bytes this pump has written, and that count when the fault in force took effect.
        let mut sent: u64 = 0;
        let mut seen_generation: Option<u64> = None;
        let mut fault_base: u64 = 0;
        let mut half_closed = false;
        loop {
            if self.aborting() {
                return Exit::Abort;
            }
            // Faults act on idle connections too, not only when data flows.
            let (fault, generation) = self.shared.mode();
            if seen_generation != Some(generation) {
                seen_generation = Some(generation);
                fault_base = sent;
            }
            match fault {
                Fault::Reset => {
                    self.ctl.request(ABORT_RESET);
                    return Exit::Abort;
                }
                Fault::Disconnect => {
                    self.ctl.request(ABORT_CLOSE);
                    return Exit::Abort;
                }
                Fault::HalfClose if self.dir == Dir::ToClient && !half_closed => {
                    let _ = self.to.shutdown(Shutdown::Write);
                    half_closed = true;
                }
                Fault::TruncateAfter(limit)
                    if self.dir == Dir::ToClient && sent - fault_base >= limit as u64 =>
                {
                    self.ctl.request(ABORT_CLOSE);
                    return Exit::Abort;
                }
                _ => {}
            }

            let n = match self.from.read(&mut buf) {
                Ok(0) => {
                    return if self.aborting() || half_closed {
                        Exit::Abort
                    } else {
                        Exit::Eof
                    };
                }
                Ok(n) => n,
                Err(e)
                    if matches!(
                        e.kind(),
                        ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                    ) =>
                {
                    continue
                }
                Err(_) => {
                    self.ctl.request(ABORT_CLOSE);
                    return Exit::Abort;
                }
            };

            // The fault may have changed while the read blocked.
            let (fault, generation) = self.shared.mode();
            if seen_generation != Some(generation) {
                seen_generation = Some(generation);
                fault_base = sent;
            }
            let chunk = &mut buf[..n];
            let to_client = self.dir == Dir::ToClient;
            // Each arm forwards (part of) the chunk and says how many bytes went out, or
            // `None` when the connection goes down.
            let forwarded = match fault {
                Fault::Blackhole => Some(0),
                Fault::HalfClose if to_client => Some(0),
                Fault::Reset => {
                    self.ctl.request(ABORT_RESET);
                    None
                }
                Fault::Disconnect => {
                    self.ctl.request(ABORT_CLOSE);
                    None
                }
                Fault::Delay(d) => (self.sleep(d) && self.write_all(chunk)).then_some(n),
                Fault::Throttle { bytes_per_sec } => {
                    self.write_throttled(chunk, bytes_per_sec).then_some(n)
                }
                Fault::TruncateAfter(limit) if to_client => {
                    let allowed = (limit as u64).saturating_sub(sent - fault_base);
                    let take = usize::try_from(allowed).unwrap_or(usize::MAX).min(n);
                    if self.write_all(&chunk[..take]) && (take as u64) < allowed {
                        Some(take)
                    } else {
                        // The budget is spent (or the write failed): close after it.
                        self.ctl.request(ABORT_CLOSE);
                        None
                    }
                }
                Fault::CorruptByte { offset } if to_client => {
                    let start = sent - fault_base;
                    if let Some(i) = (offset as u64)
                        .checked_sub(start)
                        .and_then(|i| usize::try_from(i).ok())
                        .filter(|&i| i < n)
                    {
                        chunk[i] ^= 0xFF;
                    }
                    self.write_all(chunk).then_some(n)
                }
                Fault::PassThrough
                | Fault::RefuseNew
                | Fault::HalfClose
                | Fault::TruncateAfter(_)
                | Fault::CorruptByte { .. } => self.write_all(chunk).then_some(n),
            };
            match forwarded {
                Some(k) => sent += k as u64,
                None => return Exit::Abort,
            }
        }
    }
}
