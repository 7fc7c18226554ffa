//! Size-delimited frames: a 4-byte big-endian length, then header + body.
//!
//! [`FrameDecoder`] splits an incoming byte stream into frames, whatever way the stream was
//! chunked, and refuses oversized or negative length prefixes before buffering the payload.
//! The `encode_*` functions write a whole frame into a reusable buffer, back-patching the prefix.

use super::codec::{
    ApiMessage, Decodable, DecodeError, DecodeInto, Decoder, Encodable, EncodeError, Encoder,
    Request, Response,
};
use super::header::{RequestHeader, RequestHeaderRef, ResponseHeader};

/// Default largest accepted frame payload (100 MiB, Kafka's `socket.request.max.bytes` default).
pub const DEFAULT_MAX_FRAME_SIZE: usize = 100 * 1024 * 1024;

fn frame<F>(buf: &mut Vec<u8>, write: F) -> Result<std::ops::Range<usize>, EncodeError>
where
    F: FnOnce(&mut Encoder<'_>) -> Result<(), EncodeError>,
{
    let start = buf.len();
    let mut enc = Encoder::new(buf);
    enc.i32(0); // placeholder, patched below
    let r = write(&mut enc).and_then(|()| {
        let size = enc.len() - start - 4;
        i32::try_from(size).map_err(|_| EncodeError::FrameTooLarge { size })
    });
    match r {
        Ok(size) => {
            enc.patch_i32(start, size);
            Ok(start..enc.len())
        }
        Err(e) => {
            enc.truncate(start);
            Err(e)
        }
    }
}

fn check_version<M: ApiMessage>(version: i16) -> Result<(), EncodeError> {
    if M::supports_version(version) {
        Ok(())
    } else {
        Err(EncodeError::UnsupportedVersion {
            api: M::NAME,
            version,
        })
    }
}

/// Appends a complete request frame (length prefix, header of the right version, body) to
/// `buf` and returns the frame's byte range. On error `buf` is left as it was.
pub fn encode_request_frame<R: Request>(
    buf: &mut Vec<u8>,
    correlation_id: i32,
    client_id: Option<&str>,
    body: &R,
    version: i16,
) -> Result<std::ops::Range<usize>, EncodeError> {
    check_version::<R>(version)?;
    frame(buf, |enc| {
        let header = RequestHeaderRef {
            api_key: R::API_KEY,
            api_version: version,
            correlation_id,
            client_id,
        };
        header.encode(enc, R::request_header_version(version))?;
        body.encode(enc, version)
    })
}

/// Appends a complete response frame for request type `R` (used by test brokers).
pub fn encode_response_frame<R: Request>(
    buf: &mut Vec<u8>,
    correlation_id: i32,
    body: &R::Response,
    version: i16,
) -> Result<std::ops::Range<usize>, EncodeError> {
    check_version::<R::Response>(version)?;
    frame(buf, |enc| {
        ResponseHeader { correlation_id }.encode(enc, R::response_header_version(version))?;
        body.encode(enc, version)
    })
}

/// [`encode_response_frame`] keyed by the response type, which is inferred from `body`:
/// `encode_response(&mut buf, 7, &MetadataResponse::default(), 12)`.
pub fn encode_response<M: Response>(
    buf: &mut Vec<u8>,
    correlation_id: i32,
    body: &M,
    version: i16,
) -> Result<std::ops::Range<usize>, EncodeError> {
    encode_response_frame::<M::Request>(buf, correlation_id, body, version)
}

/// [`decode_response_frame`] keyed by the response type:
/// `decode_response::<MetadataResponse>(&frame, 12)`.
pub fn decode_response<M: Response>(
    frame: &[u8],
    version: i16,
) -> Result<(ResponseHeader, M), DecodeError> {
    decode_response_frame::<M::Request>(frame, version)
}

/// [`decode_response_frame_into`] keyed by the response type.
pub fn decode_response_into<M: Response + DecodeInto>(
    frame: &[u8],
    version: i16,
    body: &mut M,
) -> Result<ResponseHeader, DecodeError> {
    decode_response_frame_into::<M::Request>(frame, version, body)
}

/// Reads the correlation id at the start of a response frame payload (every response header
/// version starts with it), so a client can route a frame before decoding it.
pub fn peek_correlation_id(frame: &[u8]) -> Result<i32, DecodeError> {
    Decoder::with_context(frame, "ResponseHeader", 0).i32("CorrelationId")
}

/// Decodes a response frame payload (without length prefix) to request `R` sent at `version`.
pub fn decode_response_frame<R: Request>(
    frame: &[u8],
    version: i16,
) -> Result<(ResponseHeader, R::Response), DecodeError> {
    let (header, mut dec) = response_body::<R>(frame, version)?;
    let body = <R::Response as Decodable>::decode(&mut dec, version)?;
    dec.finish()?;
    Ok((header, body))
}

/// Checks that `R`'s response exists at `version` and reads the response header; returns the
/// header and a decoder positioned at the body, with the body's context set.
fn response_body<R: Request>(
    frame: &[u8],
    version: i16,
) -> Result<(ResponseHeader, Decoder<'_>), DecodeError> {
    if !R::Response::supports_version(version) {
        return Err(DecodeError::UnsupportedVersion {
            api: R::Response::NAME,
            version,
        });
    }
    let mut dec = Decoder::new(frame);
    let header = ResponseHeader::decode(&mut dec, R::response_header_version(version))?;
    dec.set_context(R::Response::NAME, version);
    Ok((header, dec))
}

/// [`decode_response_frame`] into an existing response, reusing its allocations (see
/// [`DecodeInto`]): what a member's heartbeat loop uses, so a steady stream of responses
/// decodes without allocating. On error `*body` is valid but unspecified.
pub fn decode_response_frame_into<R: Request>(
    frame: &[u8],
    version: i16,
    body: &mut R::Response,
) -> Result<ResponseHeader, DecodeError>
where
    R::Response: DecodeInto,
{
    let (header, mut dec) = response_body::<R>(frame, version)?;
    body.decode_into(&mut dec, version)?;
    dec.finish()?;
    Ok(header)
}

/// Decodes a request frame payload whose api key is `R::API_KEY` (used by test brokers).
pub fn decode_request_frame<R: Request>(frame: &[u8]) -> Result<(RequestHeader, R), DecodeError> {
    let (key, version) = RequestHeader::peek_api(frame)?;
    if key != R::API_KEY || !R::supports_version(version) {
        return Err(DecodeError::UnsupportedVersion {
            api: R::NAME,
            version,
        });
    }
    let mut dec = Decoder::new(frame);
    let header = RequestHeader::decode(&mut dec, R::request_header_version(version))?;
    dec.set_context(R::NAME, version);
    let body = R::decode(&mut dec, version)?;
    dec.finish()?;
    Ok((header, body))
}

/// Incremental splitter of a byte stream into frame payloads.
///
/// After an error the stream is out of sync; the connection should be closed.
#[derive(Debug)]
pub struct FrameDecoder {
    buf: Vec<u8>,
    start: usize,
    max: usize,
}

impl Default for FrameDecoder {
    fn default() -> Self {
        FrameDecoder::new()
    }
}

impl FrameDecoder {
    /// A decoder accepting frames up to [`DEFAULT_MAX_FRAME_SIZE`].
    pub fn new() -> Self {
        FrameDecoder::with_max_frame_size(DEFAULT_MAX_FRAME_SIZE)
    }

    /// A decoder accepting frame payloads up to `max` bytes.
    pub fn with_max_frame_size(max: usize) -> Self {
        FrameDecoder {
            buf: Vec::new(),
            start: 0,
            max,
        }
    }

    /// The configured maximum payload size.
    pub fn max_frame_size(&self) -> usize {
        self.max
    }

    /// Bytes buffered but not yet returned as frames.
    pub fn buffered(&self) -> usize {
        self.buf.len() - self.start
    }

    /// Appends received bytes.
    pub fn push(&mut self, data: &[u8]) {
        // Reclaim consumed space first; only move bytes when that frees at least half the
        // buffer, so the cost of compaction stays linear in the bytes received.
        if self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
        } else if self.start > 0 && self.start >= self.buf.len() / 2 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        self.buf.extend_from_slice(data);
    }

    /// Checks the length prefix of the pending frame, if 4 bytes of it are buffered.
    fn pending_len(&self) -> Result<Option<usize>, DecodeError> {
        let b = &self.buf[self.start..];
        if b.len() < 4 {
            return Ok(None);
        }
        let size = i32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        if size < 0 {
            return Err(DecodeError::NegativeFrameLength { size });
        }
        let size = size as usize;
        if size > self.max {
            return Err(DecodeError::FrameTooLarge {
                size,
                max: self.max,
            });
        }
        Ok(Some(size))
    }

    /// Returns the next complete frame payload (without its length prefix), `Ok(None)` if more
    /// bytes are needed, or an error if the length prefix is negative or above the maximum
    /// (reported as soon as the 4 prefix bytes arrive, before the payload is buffered).
    pub fn next_frame(&mut self) -> Result<Option<Vec<u8>>, DecodeError> {
        let Some(size) = self.pending_len()? else {
            return Ok(None);
        };
        if self.buffered() - 4 < size {
            return Ok(None);
        }
        let from = self.start + 4;
        let frame = self.buf[from..from + size].to_vec();
        self.start = from + size;
        Ok(Some(frame))
    }

    /// Validates the pending length prefix without consuming anything; lets a reader fail
    /// fast on a hostile prefix before reading more bytes.
    pub fn check(&self) -> Result<(), DecodeError> {
        self.pending_len().map(|_| ())
    }
}

#[cfg(test)]
mod tests;
