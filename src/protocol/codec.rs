//! Wire primitives: an appending [`Encoder`], a bounds-checked [`Decoder`], their typed errors,
//! and the traits every message implements.
//!
//! The decoder never trusts a length: every string, byte array, array count and tagged-field size
//! is compared with the bytes that remain *before* anything is allocated, so a hostile peer can
//! make decoding fail but never make it allocate more than the frame it already sent.

mod decoder;
mod encoder;
mod error;
mod message;
mod tagged;
mod uuid;
mod varint;
mod versioned;

pub use decoder::Decoder;
pub use encoder::Encoder;
pub use error::{DecodeError, EncodeError};
pub use message::{
    decode_message, decode_message_into, encode_message, ensure_default, non_null, ApiMessage,
    Decodable, DecodeInto, Encodable, Request, Response,
};
pub use tagged::TaggedField;
pub use uuid::{ParseUuidError, Uuid};

#[cfg(test)]
mod tests;
