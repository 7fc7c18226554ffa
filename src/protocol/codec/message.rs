//! What every API message implements ([`Encodable`], [`Decodable`], [`ApiMessage`], ...) and
//! the whole-message entry points that check the version range and roll back or reject
//! trailing bytes.

use super::{DecodeError, Decoder, EncodeError, Encoder};

/// Fails with [`EncodeError::FieldNotInVersion`] unless `is_default`; used for non-ignorable
/// fields that the chosen version cannot carry (Kafka raises `UnsupportedVersionException`).
pub fn ensure_default(
    is_default: bool,
    api: &'static str,
    version: i16,
    field: &'static str,
) -> Result<(), EncodeError> {
    if is_default {
        Ok(())
    } else {
        Err(EncodeError::FieldNotInVersion {
            api,
            version,
            field,
        })
    }
}

/// Returns the value or [`EncodeError::NullNotAllowed`], for fields that are nullable only in
/// some versions.
pub fn non_null<T>(
    v: Option<T>,
    api: &'static str,
    version: i16,
    field: &'static str,
) -> Result<T, EncodeError> {
    v.ok_or(EncodeError::NullNotAllowed {
        api,
        version,
        field,
    })
}

/// A value that can be written in a given message version.
pub trait Encodable {
    /// Appends the encoding of `self` for `version`.
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError>;
}

/// A value that can be read in a given message version.
pub trait Decodable: Sized {
    /// Reads a value for `version`; the decoder's context is set by the caller (see
    /// [`decode_message`]).
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError>;
}

/// A value that can be decoded in place, reusing the heap allocations (`String` and `Vec`
/// capacity, nested elements) of whatever it held before.
///
/// A client that decodes a steady stream of the same kind of message (heartbeat responses)
/// can keep one value and decode every new message into it: after the first few messages,
/// decoding allocates nothing.
pub trait DecodeInto: Decodable {
    /// Overwrites `self` with the value read for `version`.
    ///
    /// On success `*self` equals (`==`) what [`Decodable::decode`] returns for the same bytes,
    /// whatever `self` held before; only capacity is carried over. On error the same error as
    /// [`Decodable::decode`] is returned and `*self` is a valid but unspecified value (some fields
    /// may already hold the new message's values): decode a fresh value or decode into it again
    /// before relying on it.
    fn decode_into(&mut self, dec: &mut Decoder<'_>, version: i16) -> Result<(), DecodeError>;
}

/// A top-level request or response body of one Kafka API.
pub trait ApiMessage: Encodable + Decodable {
    /// The API key (e.g. 18 for ApiVersions).
    const API_KEY: i16;
    /// Lowest version implemented.
    const MIN_VERSION: i16;
    /// Highest version implemented.
    const MAX_VERSION: i16;
    /// First flexible version (`i16::MAX` if the API never became flexible).
    const FLEXIBLE_FROM: i16;
    /// Message name used in errors, e.g. `"MetadataRequest"`.
    const NAME: &'static str;

    /// True if `version` uses compact encodings and tagged fields.
    fn is_flexible(version: i16) -> bool {
        version >= Self::FLEXIBLE_FROM
    }

    /// True if `version` is within `MIN_VERSION..=MAX_VERSION`.
    fn supports_version(version: i16) -> bool {
        (Self::MIN_VERSION..=Self::MAX_VERSION).contains(&version)
    }
}

/// A request message, tied to its response type.
pub trait Request: ApiMessage {
    /// The matching response body.
    type Response: ApiMessage;

    /// Request header version: 2 (with tagged fields) iff the request version is flexible, else 1.
    fn request_header_version(version: i16) -> i16 {
        if Self::is_flexible(version) {
            2
        } else {
            1
        }
    }

    /// Response header version: 1 iff flexible, else 0. ApiVersions overrides this to always
    /// return 0, because a client must be able to read it before knowing what the broker supports.
    fn response_header_version(version: i16) -> i16 {
        if Self::is_flexible(version) {
            1
        } else {
            0
        }
    }
}

/// A response message, tied to the request it answers: lets a response be framed and decoded
/// by naming the response type alone (see
/// [`frame::encode_response`](crate::protocol::frame::encode_response) and
/// [`frame::decode_response`](crate::protocol::frame::decode_response)).
pub trait Response: ApiMessage {
    /// The request this message answers.
    type Request: Request<Response = Self>;

    /// Response header version at `version` (the request's rule, including ApiVersions' v0
    /// header).
    fn response_header_version(version: i16) -> i16 {
        <Self::Request as Request>::response_header_version(version)
    }
}

/// Encodes `msg` at `version` after checking the version range; on error the buffer is rolled
/// back to its previous length.
pub fn encode_message<M: ApiMessage>(
    buf: &mut Vec<u8>,
    msg: &M,
    version: i16,
) -> Result<(), EncodeError> {
    if !M::supports_version(version) {
        return Err(EncodeError::UnsupportedVersion {
            api: M::NAME,
            version,
        });
    }
    let start = buf.len();
    let mut enc = Encoder::new(buf);
    let r = msg.encode(&mut enc, version);
    if r.is_err() {
        enc.truncate(start);
    }
    r
}

/// Decodes a complete message body at `version`: sets the decoder context, checks the version
/// range and rejects trailing bytes.
pub fn decode_message<M: ApiMessage>(bytes: &[u8], version: i16) -> Result<M, DecodeError> {
    if !M::supports_version(version) {
        return Err(DecodeError::UnsupportedVersion {
            api: M::NAME,
            version,
        });
    }
    let mut dec = Decoder::with_context(bytes, M::NAME, version);
    let m = M::decode(&mut dec, version)?;
    dec.finish()?;
    Ok(m)
}

/// [`decode_message`] into an existing value, reusing its allocations (see [`DecodeInto`]).
///
/// On success `*msg` equals what `decode_message(bytes, version)` returns. On error (the same
/// error `decode_message` returns) `*msg` is valid but unspecified; an unsupported `version`
/// leaves it untouched.
pub fn decode_message_into<M: ApiMessage + DecodeInto>(
    bytes: &[u8],
    version: i16,
    msg: &mut M,
) -> Result<(), DecodeError> {
    if !M::supports_version(version) {
        return Err(DecodeError::UnsupportedVersion {
            api: M::NAME,
            version,
        });
    }
    let mut dec = Decoder::with_context(bytes, M::NAME, version);
    msg.decode_into(&mut dec, version)?;
    dec.finish()
}
