//! A frame-level connection to one broker: sends size-prefixed frames, receives them back.
//!
//! It knows nothing of Kafka messages; `client::BrokerConnection` puts headers on top.
//!
//! Failure model: any I/O error, protocol-level framing error or timeout marks the connection
//! *broken*. A broken connection refuses every further call with
//! [`TransportError::Broken`]; the caller discards it and opens a new one. This is simpler and
//! safer than trying to resynchronise a byte stream whose position is unknown (half a request
//! written, half a response read).

use std::time::{Duration, Instant};

use super::error::TransportError;
use super::stream::{Stream, TlsSetup};
use crate::protocol::frame::FrameDecoder;
pub use crate::protocol::frame::DEFAULT_MAX_FRAME_SIZE;
use crate::protocol::DecodeError;

/// Bytes asked of the socket per read. Frames larger than this are read in several steps.
const READ_CHUNK: usize = 16 * 1024;

/// How to open a [`Connection`].
#[derive(Clone)]
pub struct ConnectOptions {
    /// Time allowed for the TCP connect to each resolved address, and again for the TLS
    /// handshake.
    pub connect_timeout: Duration,
    /// Largest frame accepted from the broker; checked before anything is allocated.
    pub max_frame_size: usize,
    /// TLS config and the server name to verify; `None` for plaintext.
    pub tls: Option<TlsSetup>,
}

impl std::fmt::Debug for ConnectOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectOptions")
            .field("connect_timeout", &self.connect_timeout)
            .field("max_frame_size", &self.max_frame_size)
            .field(
                "tls_server_name",
                &self.tls.as_ref().map(|(_, n)| n.to_str()),
            )
            .finish()
    }
}

impl Default for ConnectOptions {
    fn default() -> Self {
        ConnectOptions {
            connect_timeout: Duration::from_secs(10),
            max_frame_size: DEFAULT_MAX_FRAME_SIZE,
            tls: None,
        }
    }
}

/// A connection that moves whole frames. See the module docs for the failure model.
#[derive(Debug)]
pub struct Connection {
    stream: Stream,
    /// Bytes received but not yet returned as frames.
    decoder: FrameDecoder,
    /// Socket read buffer, allocated once per connection: zeroing a fresh 16 KiB array on
    /// every receive was over half of a steady heartbeat's instructions (callgrind).
    read_buf: Box<[u8]>,
    broken: bool,
}

impl Connection {
    /// Connects to `addr` (`host:port`), trying every resolved address in turn; with TLS the
    /// handshake has completed when this returns.
    pub fn connect(addr: &str, opts: &ConnectOptions) -> Result<Connection, TransportError> {
        let addrs = super::resolve_within(addr, opts.connect_timeout)?;
        Connection::connect_addrs(addr, &addrs, opts)
    }

    /// Like [`connect`](Self::connect) with already resolved addresses (tried in order);
    /// `addr` (`host:port`) names the peer in errors.
    pub fn connect_addrs(
        addr: &str,
        addrs: &[std::net::SocketAddr],
        opts: &ConnectOptions,
    ) -> Result<Connection, TransportError> {
        let stream = Stream::connect_addrs(addr, addrs, opts.connect_timeout, opts.tls.clone())?;
        Ok(Connection {
            stream,
            decoder: FrameDecoder::with_max_frame_size(opts.max_frame_size),
            read_buf: vec![0; READ_CHUNK].into_boxed_slice(),
            broken: false,
        })
    }

    /// The peer, as `host:port (ip:port)`.
    pub fn peer(&self) -> &str {
        self.stream.peer()
    }

    /// The socket address connected to.
    pub fn peer_addr(&self) -> std::net::SocketAddr {
        self.stream.peer_addr()
    }

    /// Lets another thread end this connection's waits early (see
    /// [`super::stream::Interrupt`]).
    pub fn set_interrupt(&mut self, interrupt: Option<super::stream::Interrupt>) {
        self.stream.set_interrupt(interrupt);
    }

    /// True once an error or timeout has made this connection unusable.
    pub fn is_broken(&self) -> bool {
        self.broken
    }

    /// True when the connection is TLS-protected.
    pub fn is_tls(&self) -> bool {
        self.stream.is_tls()
    }

    /// Sends one complete frame: `frame` must already start with its 4-byte big-endian size
    /// (as `protocol::frame::encode_request_frame` produces).
    pub fn send_frame(&mut self, frame: &[u8], deadline: Instant) -> Result<(), TransportError> {
        self.check()?;
        let r = self.stream.write_all(frame, deadline);
        self.note(r)
    }

    /// Receives one frame and returns its payload (without the size prefix), waiting until
    /// `deadline`. The announced size is checked against the maximum before any allocation.
    pub fn recv_frame(&mut self, deadline: Instant) -> Result<Vec<u8>, TransportError> {
        self.check()?;
        let r = self.recv_inner(deadline);
        self.note(r)
    }

    fn recv_inner(&mut self, deadline: Instant) -> Result<Vec<u8>, TransportError> {
        loop {
            match self.decoder.next_frame() {
                Ok(Some(frame)) => return Ok(frame),
                Ok(None) => {}
                Err(e) => return Err(self.frame_error(e)),
            }
            let n = self.stream.read_some(&mut self.read_buf, deadline)?;
            if n == 0 {
                return Err(TransportError::Eof {
                    peer: self.peer().to_string(),
                    mid_frame: self.decoder.buffered() > 0,
                });
            }
            self.decoder.push(&self.read_buf[..n]);
        }
    }

    fn frame_error(&self, e: DecodeError) -> TransportError {
        let peer = self.peer().to_string();
        let max = self.decoder.max_frame_size();
        match e {
            DecodeError::FrameTooLarge { size, .. } => TransportError::FrameTooLarge {
                peer,
                size: i64::try_from(size).unwrap_or(i64::MAX),
                max,
            },
            DecodeError::NegativeFrameLength { size } => TransportError::FrameTooLarge {
                peer,
                size: i64::from(size),
                max,
            },
            other => TransportError::Io {
                peer,
                source: std::io::Error::new(std::io::ErrorKind::InvalidData, other),
            },
        }
    }

    fn check(&self) -> Result<(), TransportError> {
        if self.broken {
            return Err(TransportError::Broken {
                peer: self.peer().to_string(),
            });
        }
        Ok(())
    }

    fn note<T>(&mut self, r: Result<T, TransportError>) -> Result<T, TransportError> {
        if r.is_err() {
            self.broken = true;
        }
        r
    }

    /// Marks the connection broken, e.g. when a layer above found the byte stream out of sync
    /// (a response with the wrong correlation id).
    pub fn mark_broken(&mut self) {
        self.broken = true;
    }
}
