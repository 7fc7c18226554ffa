//! A byte stream to one broker on mio: non-blocking TCP, optionally wrapped in rustls, with
//! every operation bounded by a deadline.
//!
//! Each [`Stream`] owns its own `mio::Poll`. The socket is registered for read readiness only,
//! and for write readiness too only while a write is waiting for buffer space: a socket that
//! is always registered for writes reports an edge each time the peer acknowledges a request
//! (on loopback, right after the `send`), which woke the wait for the response once for
//! nothing — an extra `recv` returning `EAGAIN` and an extra `epoll_wait` per round trip.
//! One poll per connection costs one epoll descriptor and keeps every blocking call
//! independent of every other connection, which is what the blocking client wants; the
//! heartbeat runtime can later drive several sockets from one poll through the same
//! non-blocking primitives.
//!
//! mio readiness is edge-triggered, so the rule everywhere is: *try the operation first and wait
//! for readiness only after it returned `WouldBlock`*. Waiting without having drained the
//! socket could sleep through data that already arrived.

use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};
use rustls::pki_types::ServerName;

use super::error::TransportError;

const TOKEN: Token = Token(0);

/// Longest single `mio` wait of a stream that has an [`Interrupt`], so that a deadline
/// brought forward by another thread is noticed within this time. Streams without one wait
/// for their whole deadline in one call.
pub const INTERRUPT_CHECK: Duration = Duration::from_millis(50);

/// A deadline that another thread can bring forward while this one is blocked in socket I/O.
///
/// A blocking call cannot be woken from outside (each stream has its own `mio::Poll`, and a
/// `Waker` per stream would cost an eventfd each). Instead, a stream given an `Interrupt`
/// caps every wait by it and re-reads it at least every [`INTERRUPT_CHECK`]: closing a
/// heartbeat thread sets it to the close deadline, dropping one sets it to "now", and a
/// request stuck on an unresponsive broker then fails with a timeout at that time instead of
/// after the full request timeout. Clones share the deadline.
#[derive(Clone, Debug)]
pub struct Interrupt {
    base: Instant,
    /// Nanoseconds after `base`; `u64::MAX` = not set.
    at: Arc<AtomicU64>,
}

impl Default for Interrupt {
    fn default() -> Self {
        Interrupt::new()
    }
}

impl Interrupt {
    /// An interrupt that is not set.
    pub fn new() -> Self {
        Interrupt {
            base: Instant::now(),
            at: Arc::new(AtomicU64::new(u64::MAX)),
        }
    }

    /// Makes every wait end by `deadline` (an earlier one set before stays).
    pub fn interrupt_at(&self, deadline: Instant) {
        let nanos = deadline.saturating_duration_since(self.base).as_nanos();
        let nanos = u64::try_from(nanos)
            .unwrap_or(u64::MAX - 1)
            .min(u64::MAX - 1);
        self.at.fetch_min(nanos, Ordering::SeqCst);
    }

    /// The deadline set, if any.
    pub fn deadline(&self) -> Option<Instant> {
        match self.at.load(Ordering::SeqCst) {
            u64::MAX => None,
            n => Some(self.base + Duration::from_nanos(n)),
        }
    }

    /// `deadline`, or the interrupt's deadline if that is earlier.
    pub fn cap(&self, deadline: Instant) -> Instant {
        self.deadline().map_or(deadline, |i| i.min(deadline))
    }
}

/// TLS settings for one connection: the rustls client config and the name the broker's
/// certificate must carry.
pub type TlsSetup = (Arc<rustls::ClientConfig>, ServerName<'static>);

/// A connected (and, with TLS, handshaken) byte stream to one broker.
pub struct Stream {
    poll: Poll,
    events: Events,
    sock: TcpStream,
    tls: Option<Box<rustls::ClientConnection>>,
    peer: String,
    peer_addr: SocketAddr,
    interrupt: Option<Interrupt>,
    /// What the socket is registered for right now (see the module docs).
    interest: Interest,
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream")
            .field("peer", &self.peer)
            .field("tls", &self.tls.is_some())
            .finish()
    }
}

/// Outcome of one non-blocking read attempt.
enum ReadOutcome {
    /// This many bytes were copied into the buffer.
    Data(usize),
    /// Nothing available right now; wait for readiness.
    WouldBlock,
    /// The peer closed the stream.
    Eof,
}

impl Stream {
    /// Resolves `addr` (`host:port`) and connects to each resulting address in turn, giving each
    /// attempt `connect_timeout`. With `tls`, the TLS handshake then completes before this
    /// returns, bounded by another `connect_timeout`; no application byte is sent before that.
    ///
    /// Name resolution uses the system resolver, bounded by `connect_timeout` as well
    /// (see [`resolve_within`](super::resolve_within)).
    pub fn connect(
        addr: &str,
        connect_timeout: Duration,
        tls: Option<TlsSetup>,
    ) -> Result<Stream, TransportError> {
        let addrs = super::resolve::resolve_within(addr, connect_timeout)?;
        Stream::connect_addrs(addr, &addrs, connect_timeout, tls)
    }

    /// Like [`connect`](Self::connect) with already resolved addresses; `addr` (`host:port`)
    /// names the peer in errors. The TLS server name is in `tls`.
    pub fn connect_addrs(
        addr: &str,
        addrs: &[SocketAddr],
        connect_timeout: Duration,
        tls: Option<TlsSetup>,
    ) -> Result<Stream, TransportError> {
        if addrs.is_empty() {
            return Err(TransportError::Resolve {
                addr: addr.to_string(),
                reason: "no addresses".to_string(),
            });
        }
        let started = Instant::now();
        let mut last = String::new();
        let mut all_timed_out = true;
        for &sa in addrs {
            match connect_one(sa, Instant::now() + connect_timeout) {
                Ok((poll, sock)) => {
                    let mut stream = Stream {
                        poll,
                        events: Events::with_capacity(8),
                        sock,
                        tls: None,
                        peer: format!("{addr} ({sa})"),
                        peer_addr: sa,
                        interrupt: None,
                        interest: Interest::READABLE,
                    };
                    if let Some((config, name)) = tls {
                        let conn = rustls::ClientConnection::new(config, name).map_err(|e| {
                            TransportError::Tls {
                                peer: stream.peer.clone(),
                                source: e,
                            }
                        })?;
                        stream.tls = Some(Box::new(conn));
                        stream.handshake(Instant::now() + connect_timeout)?;
                    }
                    return Ok(stream);
                }
                Err(e) => {
                    log::debug!("connect to {addr} via {sa} failed: {e}");
                    all_timed_out &= e.kind() == io::ErrorKind::TimedOut;
                    last = format!("{sa}: {e}");
                }
            }
        }
        if all_timed_out {
            return Err(TransportError::Timeout {
                op: "connect",
                peer: addr.to_string(),
                elapsed: started.elapsed(),
            });
        }
        Err(TransportError::Connect {
            addr: addr.to_string(),
            reason: last,
        })
    }

    /// Lets another thread end this stream's waits early (see [`Interrupt`]).
    pub fn set_interrupt(&mut self, interrupt: Option<Interrupt>) {
        self.interrupt = interrupt;
    }

    /// The peer, as `host:port (ip:port)`.
    pub fn peer(&self) -> &str {
        &self.peer
    }

    /// The socket address connected to.
    pub fn peer_addr(&self) -> SocketAddr {
        self.peer_addr
    }

    /// True when the stream is TLS-protected.
    pub fn is_tls(&self) -> bool {
        self.tls.is_some()
    }

    /// Writes all of `buf`, waiting for socket readiness as needed, until `deadline`.
    pub fn write_all(&mut self, buf: &[u8], deadline: Instant) -> Result<(), TransportError> {
        let start = Instant::now();
        if self.tls.is_some() {
            // rustls caps its outgoing TLS buffer (64 KiB by default) and then accepts only
            // part of the plaintext, so feed it in pieces and flush each piece to the socket.
            let mut off = 0;
            while off < buf.len() {
                let n = match self.tls.as_mut() {
                    Some(tls) => tls
                        .writer()
                        .write(&buf[off..])
                        .map_err(|e| io_err(&self.peer, e))?,
                    None => 0,
                };
                off += n;
                self.flush_tls(deadline, start, "send")?;
                if n == 0 && off < buf.len() && !self.tls.as_ref().is_some_and(|t| t.wants_write())
                {
                    return Err(io_err(
                        &self.peer,
                        io::Error::new(io::ErrorKind::WriteZero, "TLS layer accepted no bytes"),
                    ));
                }
            }
            return Ok(());
        }
        let mut off = 0;
        while off < buf.len() {
            match self.sock.write(&buf[off..]) {
                Ok(0) => {
                    return Err(io_err(
                        &self.peer,
                        io::Error::new(io::ErrorKind::WriteZero, "socket accepted no bytes"),
                    ))
                }
                Ok(n) => off += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.wait(deadline, start, "send", true)?
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(io_err(&self.peer, e)),
            }
        }
        Ok(())
    }

    /// Reads at least one byte into `buf` (returning how many), waiting until `deadline`.
    /// Returns `Ok(0)` when the peer closed the stream.
    pub fn read_some(
        &mut self,
        buf: &mut [u8],
        deadline: Instant,
    ) -> Result<usize, TransportError> {
        let start = Instant::now();
        loop {
            match self.try_read(buf)? {
                ReadOutcome::Data(n) => return Ok(n),
                ReadOutcome::Eof => return Ok(0),
                ReadOutcome::WouldBlock => self.wait(deadline, start, "receive", false)?,
            }
        }
    }

    fn try_read(&mut self, buf: &mut [u8]) -> Result<ReadOutcome, TransportError> {
        let Some(tls) = self.tls.as_mut() else {
            return loop {
                match self.sock.read(buf) {
                    Ok(0) => break Ok(ReadOutcome::Eof),
                    Ok(n) => break Ok(ReadOutcome::Data(n)),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        break Ok(ReadOutcome::WouldBlock)
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => break Err(io_err(&self.peer, e)),
                }
            };
        };
        loop {
            // Plaintext rustls already decrypted comes first.
            match tls.reader().read(buf) {
                Ok(0) => return Ok(ReadOutcome::Eof), // close_notify received
                Ok(n) => return Ok(ReadOutcome::Data(n)),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                    // TCP closed without close_notify: for Kafka this is an ordinary close.
                    return Ok(ReadOutcome::Eof);
                }
                Err(e) => return Err(io_err(&self.peer, e)),
            }
            // Need more records from the socket.
            match tls.read_tls(&mut self.sock) {
                Ok(0) => {
                    // rustls now knows about the EOF; the reader reports it on the next turn,
                    // but say it directly to avoid relying on that.
                    let _ = tls.process_new_packets();
                    return match tls.reader().read(buf) {
                        Ok(n) if n > 0 => Ok(ReadOutcome::Data(n)),
                        _ => Ok(ReadOutcome::Eof),
                    };
                }
                Ok(_) => {
                    if let Err(e) = tls.process_new_packets() {
                        // Best effort: tell the peer with an alert before giving up.
                        let _ = tls.write_tls(&mut self.sock);
                        return Err(TransportError::Tls {
                            peer: self.peer.clone(),
                            source: e,
                        });
                    }
                    // Post-handshake messages (tickets, key updates) may want a reply.
                    while tls.wants_write() {
                        match tls.write_tls(&mut self.sock) {
                            Ok(_) => {}
                            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                            Err(e) => return Err(io_err(&self.peer, e)),
                        }
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    return Ok(ReadOutcome::WouldBlock)
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(io_err(&self.peer, e)),
            }
        }
    }

    fn handshake(&mut self, deadline: Instant) -> Result<(), TransportError> {
        let start = Instant::now();
        // Whether the server sent any byte yet: a peer that hangs up (or resets) before its
        // first byte is a listener that is not TLS, which no retry heals.
        let mut received = false;
        let not_tls = |peer: &str| TransportError::NotTls {
            peer: peer.to_owned(),
        };
        loop {
            let Some(tls) = self.tls.as_mut() else {
                return Ok(());
            };
            if !tls.is_handshaking() {
                // Flush the last handshake flight (client Finished) before any request bytes.
                return self.flush_tls(deadline, start, "TLS handshake");
            }
            let mut progressed = false;
            if tls.wants_write() {
                match tls.write_tls(&mut self.sock) {
                    Ok(_) => progressed = true,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) if !received && is_hang_up(&e) => return Err(not_tls(&self.peer)),
                    Err(e) => return Err(io_err(&self.peer, e)),
                }
            }
            if tls.wants_read() {
                match tls.read_tls(&mut self.sock) {
                    Ok(0) if !received => return Err(not_tls(&self.peer)),
                    Ok(0) => {
                        return Err(TransportError::Eof {
                            peer: self.peer.clone(),
                            mid_frame: false,
                        })
                    }
                    Ok(_) => {
                        received = true;
                        progressed = true;
                        if let Err(e) = tls.process_new_packets() {
                            let _ = tls.write_tls(&mut self.sock);
                            return Err(TransportError::Tls {
                                peer: self.peer.clone(),
                                source: e,
                            });
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) if !received && is_hang_up(&e) => return Err(not_tls(&self.peer)),
                    Err(e) => return Err(io_err(&self.peer, e)),
                }
            }
            if !progressed {
                let wants_write = tls.wants_write();
                self.wait(deadline, start, "TLS handshake", wants_write)?;
            }
        }
    }

    fn flush_tls(
        &mut self,
        deadline: Instant,
        start: Instant,
        op: &'static str,
    ) -> Result<(), TransportError> {
        loop {
            let Some(tls) = self.tls.as_mut() else {
                return Ok(());
            };
            if !tls.wants_write() {
                return Ok(());
            }
            match tls.write_tls(&mut self.sock) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.wait(deadline, start, op, true)?
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(io_err(&self.peer, e)),
            }
        }
    }

    /// Blocks until the socket reports readiness or `deadline` passes: read readiness, and
    /// write readiness too when `for_write` (a write found the send buffer full).
    fn wait(
        &mut self,
        deadline: Instant,
        start: Instant,
        op: &'static str,
        for_write: bool,
    ) -> Result<(), TransportError> {
        let deadline = match &self.interrupt {
            Some(i) => i.cap(deadline),
            None => deadline,
        };
        let now = Instant::now();
        if now >= deadline {
            return Err(TransportError::Timeout {
                op,
                peer: self.peer.clone(),
                elapsed: now.duration_since(start),
            });
        }
        let interest = if for_write {
            Interest::READABLE | Interest::WRITABLE
        } else {
            Interest::READABLE
        };
        if interest != self.interest {
            // Re-registering re-arms the edge if the socket is already ready, so no
            // readiness is lost; it happens only around a write that had to wait.
            self.poll
                .registry()
                .reregister(&mut self.sock, TOKEN, interest)
                .map_err(|e| io_err(&self.peer, e))?;
            self.interest = interest;
        }
        let mut timeout = deadline - now;
        if self.interrupt.is_some() {
            // Callers loop on readiness, so an early return only re-checks the interrupt.
            timeout = timeout.min(INTERRUPT_CHECK);
        }
        match self.poll.poll(&mut self.events, Some(timeout)) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(()),
            Err(e) => Err(io_err(&self.peer, e)),
        }
    }
}

/// The peer closed or reset the connection (what a listener that is not TLS does to a
/// ClientHello).
fn is_hang_up(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::UnexpectedEof
    )
}

fn io_err(peer: &str, source: io::Error) -> TransportError {
    TransportError::Io {
        peer: peer.to_string(),
        source,
    }
}

/// One non-blocking TCP connect to `sa`, finished within `deadline`.
fn connect_one(sa: SocketAddr, deadline: Instant) -> io::Result<(Poll, TcpStream)> {
    let mut poll = Poll::new()?;
    let mut sock = TcpStream::connect(sa)?;
    poll.registry()
        .register(&mut sock, TOKEN, Interest::READABLE | Interest::WRITABLE)?;
    let mut events = Events::with_capacity(8);
    loop {
        // Per mio's docs: a writable event means the connect finished one way or the other;
        // `take_error` tells failure, `peer_addr` success (NotConnected = still in progress).
        if let Some(e) = sock.take_error()? {
            return Err(e);
        }
        match sock.peer_addr() {
            Ok(_) => {
                refuse_self_connection(&sock)?;
                break;
            }
            Err(e) if e.kind() == io::ErrorKind::NotConnected => {}
            Err(e) => return Err(e),
        }
        let now = Instant::now();
        if now >= deadline {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "connect timed out"));
        }
        match poll.poll(&mut events, Some(deadline - now)) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    // From here on only reads wait by default (see the module docs).
    poll.registry()
        .reregister(&mut sock, TOKEN, Interest::READABLE)?;
    // Kafka requests are small and latency-bound: no Nagle delay.
    sock.set_nodelay(true)?;
    Ok((poll, sock))
}

/// Fails with `ConnectionRefused` when `sock` is connected to itself.
///
/// A connect to a port nobody listens on, when that port is in the ephemeral range, can be
/// given that very port as its source: the SYN then meets itself (TCP simultaneous open)
/// and the socket connects to itself, reading back whatever it writes — a Kafka client
/// then reads its own ApiVersions request (correlation id 0x00120005, api key 18 v5) as
/// the answer. Nobody listens there, so this is a refused connection, retried like one.
fn refuse_self_connection(sock: &TcpStream) -> io::Result<()> {
    let local = sock.local_addr()?;
    if local == sock.peer_addr()? {
        return Err(io::Error::new(
            io::ErrorKind::ConnectionRefused,
            format!(
                "connected to itself ({local}): nothing listens on that port, and the \
                 kernel picked it as the source port too (TCP simultaneous open)"
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A TCP socket connected to itself: bound to a loopback port, then connected to that
    /// same address (what an unlucky ephemeral source port does to a connect).
    fn self_connected() -> TcpStream {
        use socket2::{Domain, Protocol, Socket, Type};
        let sock = Socket::new(Domain::IPV4, Type::STREAM, Some(Protocol::TCP)).expect("socket");
        let any: SocketAddr = "127.0.0.1:0".parse().expect("addr");
        sock.bind(&any.into()).expect("bind");
        let local = sock.local_addr().expect("local");
        sock.connect(&local)
            .expect("a socket may connect to itself");
        let std: std::net::TcpStream = sock.into();
        std.set_nonblocking(true).expect("nonblocking");
        TcpStream::from_std(std)
    }

    #[test]
    fn a_socket_connected_to_itself_counts_as_refused() {
        let sock = self_connected();
        assert_eq!(
            sock.local_addr().expect("local"),
            sock.peer_addr().expect("peer")
        );
        let e = refuse_self_connection(&sock).expect_err("self-connection");
        assert_eq!(e.kind(), io::ErrorKind::ConnectionRefused);
        assert!(e.to_string().contains("connected to itself"), "{e}");

        // An ordinary connection passes.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let std =
            std::net::TcpStream::connect(listener.local_addr().expect("addr")).expect("connect");
        refuse_self_connection(&TcpStream::from_std(std)).expect("not a self-connection");
    }

    #[test]
    fn interrupt_keeps_the_earliest_deadline() {
        let i = Interrupt::new();
        assert_eq!(i.deadline(), None);
        let far = Instant::now() + Duration::from_secs(10);
        assert_eq!(i.cap(far), far);
        let soon = Instant::now() + Duration::from_millis(100);
        i.interrupt_at(soon);
        i.clone().interrupt_at(far);
        let d = i.deadline().expect("set");
        assert!(
            d <= soon && soon - d < Duration::from_micros(1),
            "{d:?} vs {soon:?}"
        );
        assert_eq!(i.cap(far), d);
    }

    #[test]
    fn a_read_blocked_on_a_silent_peer_ends_when_another_thread_interrupts() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let mut stream =
            Stream::connect(&addr.to_string(), Duration::from_secs(2), None).expect("connect");
        let (_peer, _) = listener.accept().expect("accept");
        let interrupt = Interrupt::new();
        stream.set_interrupt(Some(interrupt.clone()));
        let started = Instant::now();
        let setter = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            interrupt.interrupt_at(Instant::now());
        });
        let mut buf = [0u8; 16];
        let r = stream.read_some(&mut buf, started + Duration::from_secs(10));
        let took = started.elapsed();
        setter.join().expect("setter");
        assert!(matches!(r, Err(TransportError::Timeout { .. })), "{r:?}");
        assert!(
            took >= Duration::from_millis(100)
                && took < Duration::from_millis(100) + 4 * INTERRUPT_CHECK,
            "{took:?}"
        );
    }
}
