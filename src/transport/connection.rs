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

/// Bytes asked of the socket per read. Frames larger than this are read in several steps.
const READ_CHUNK: usize = 16 * 1024;

/// Largest response frame accepted when no other limit is given: 100 MiB, Kafka's own
/// `socket.request.max.bytes` default.
pub const DEFAULT_MAX_FRAME_SIZE: usize = 100 * 1024 * 1024;

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
    max_frame_size: usize,
    /// Bytes received but not yet returned as a frame (at most one partial frame plus
    /// whatever followed it in the last read).
    inbuf: Vec<u8>,
    broken: bool,
}

impl Connection {
    /// Connects to `addr` (`host:port`), trying every resolved address in turn; with TLS the
    /// handshake has completed when this returns.
    pub fn connect(addr: &str, opts: &ConnectOptions) -> Result<Connection, TransportError> {
        let stream = Stream::connect(addr, opts.connect_timeout, opts.tls.clone())?;
        Ok(Connection {
            stream,
            max_frame_size: opts.max_frame_size,
            inbuf: Vec::new(),
            broken: false,
        })
    }

    /// The peer, as `host:port (ip:port)`.
    pub fn peer(&self) -> &str {
        self.stream.peer()
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
        let mut chunk = [0u8; READ_CHUNK];
        loop {
            if let Some(frame) = self.take_frame()? {
                return Ok(frame);
            }
            let n = self.stream.read_some(&mut chunk, deadline)?;
            if n == 0 {
                return Err(TransportError::Eof {
                    peer: self.peer().to_string(),
                    mid_frame: !self.inbuf.is_empty(),
                });
            }
            self.inbuf.extend_from_slice(&chunk[..n]);
        }
    }

    /// Takes one complete frame out of `inbuf`, if there is one.
    fn take_frame(&mut self) -> Result<Option<Vec<u8>>, TransportError> {
        let Some(size_bytes) = self.inbuf.first_chunk::<4>() else {
            return Ok(None);
        };
        let size = i32::from_be_bytes(*size_bytes);
        let size = match usize::try_from(size) {
            Ok(s) if s <= self.max_frame_size => s,
            _ => {
                return Err(TransportError::FrameTooLarge {
                    peer: self.peer().to_string(),
                    size: i64::from(size),
                    max: self.max_frame_size,
                })
            }
        };
        // The buffer grows only as bytes actually arrive; the size is known to be in bounds.
        if self.inbuf.len() - 4 < size {
            self.inbuf
                .reserve((size + 4 - self.inbuf.len()).min(READ_CHUNK * 4));
            return Ok(None);
        }
        let rest = self.inbuf.split_off(4 + size);
        let mut frame = std::mem::replace(&mut self.inbuf, rest);
        frame.drain(..4);
        Ok(Some(frame))
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
