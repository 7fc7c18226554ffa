//! The one error type of the record layer.

use super::Compression;
use crate::protocol::codec::DecodeError;

/// Why a record batch could not be decoded or encoded.
///
/// Every variant names the batch (by its base offset where known) and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RecordsError {
    /// Message format v0/v1 (magic 0 or 1) or an unknown future magic.
    #[error(
        "batch at offset {base_offset}: magic {magic} is not supported (only record batch v2, \
         written by Kafka clients 0.11+); the topic holds old-format messages: re-produce them \
         with a current client or read them with a client that supports message format v0/v1"
    )]
    UnsupportedMagic {
        /// Base offset (or, for v0/v1, the message offset) of the batch.
        base_offset: i64,
        /// The magic byte found.
        magic: i8,
    },
    /// The batch length field is below the v2 header size or otherwise impossible.
    #[error(
        "batch at offset {base_offset}: invalid batch length {length} (a v2 batch needs at \
         least 49 bytes after the length field); the data is corrupt or not a record batch"
    )]
    InvalidBatchLength {
        /// Base offset of the batch.
        base_offset: i64,
        /// The length read from the wire.
        length: i32,
    },
    /// The CRC-32C stored in the batch does not match its content.
    #[error(
        "batch at offset {base_offset}: CRC-32C mismatch (stored {stored:#010x}, computed \
         {computed:#010x}); the batch was corrupted in transit or on disk: fetch it again"
    )]
    CorruptCrc {
        /// Base offset of the batch.
        base_offset: i64,
        /// CRC stored in the batch header.
        stored: u32,
        /// CRC computed over the batch.
        computed: u32,
    },
    /// The compression bits name a codec Kafka does not define.
    #[error(
        "batch at offset {base_offset}: unknown compression codec {code} (Kafka defines 0-4); \
         the producer or broker is newer than this library or the data is corrupt"
    )]
    UnknownCompression {
        /// Base offset of the batch.
        base_offset: i64,
        /// The 3-bit codec id.
        code: u8,
    },
    /// The compressed payload is malformed for its codec.
    #[error("batch at offset {base_offset}: {codec} payload does not decompress: {reason}")]
    Decompress {
        /// Base offset of the batch.
        base_offset: i64,
        /// The codec.
        codec: Compression,
        /// What the decompressor reported.
        reason: String,
    },
    /// Decompressing would exceed the configured bound (a "zip bomb" or an oversized batch).
    #[error(
        "batch at offset {base_offset}: {codec} payload decompresses to more than {limit} bytes; \
         raise DecodeLimits::max_decompressed_bytes if such batches are legitimate"
    )]
    DecompressedTooLarge {
        /// Base offset of the batch.
        base_offset: i64,
        /// The codec.
        codec: Compression,
        /// The configured bound in bytes.
        limit: usize,
    },
    /// A field inside the batch or one of its records is truncated or invalid.
    #[error("batch at offset {base_offset}: {source}")]
    Malformed {
        /// Base offset of the batch.
        base_offset: i64,
        /// The field-level error.
        source: DecodeError,
    },
    /// A record or the record count is inconsistent with the bytes.
    #[error("batch at offset {base_offset}: record {index}: {reason}; the batch is corrupt")]
    InvalidRecord {
        /// Base offset of the batch.
        base_offset: i64,
        /// Index of the record within the batch.
        index: usize,
        /// What is wrong.
        reason: &'static str,
    },
    /// Encoding: a batch needs at least one record.
    #[error("cannot encode an empty record batch: append at least one record")]
    EmptyBatch,
    /// Encoding: a key, value, header, record or batch is larger than the wire format allows.
    #[error("cannot encode {what}: {len} bytes exceeds the wire maximum {max}")]
    TooLarge {
        /// What was too large.
        what: &'static str,
        /// Its size.
        len: usize,
        /// The maximum.
        max: usize,
    },
    /// Encoding: the compressor failed.
    #[error("{codec} compression failed: {reason}")]
    Compress {
        /// The codec.
        codec: Compression,
        /// What the compressor reported.
        reason: String,
    },
}
