//! The batch attribute bits: compression codec, timestamp type, transactional, control.

use std::fmt;

/// A record batch compression codec (attribute bits 0-2).
///
/// ```
/// use kafka_streams_group::protocol::records::Compression;
/// assert_eq!(Compression::from_name("lz4"), Some(Compression::Lz4));
/// assert_eq!(Compression::Zstd.code(), 4);
/// assert_eq!(Compression::from_code(2), Some(Compression::Snappy));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Compression {
    /// No compression (0).
    #[default]
    None,
    /// gzip (1).
    Gzip,
    /// snappy (2), xerial-framed on write as Java's `SnappyOutputStream` does.
    Snappy,
    /// lz4 (3), the LZ4 frame format Java's `Lz4BlockOutputStream` writes.
    Lz4,
    /// zstd (4).
    Zstd,
}

impl Compression {
    /// Every codec, in code order.
    pub const ALL: [Compression; 5] = [
        Compression::None,
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ];

    /// The 3-bit codec id.
    pub const fn code(self) -> u8 {
        match self {
            Compression::None => 0,
            Compression::Gzip => 1,
            Compression::Snappy => 2,
            Compression::Lz4 => 3,
            Compression::Zstd => 4,
        }
    }

    /// The codec for a 3-bit id, `None` for ids Kafka does not define (5-7).
    pub const fn from_code(code: u8) -> Option<Compression> {
        match code {
            0 => Some(Compression::None),
            1 => Some(Compression::Gzip),
            2 => Some(Compression::Snappy),
            3 => Some(Compression::Lz4),
            4 => Some(Compression::Zstd),
            _ => None,
        }
    }

    /// The `compression.type` name (`none`, `gzip`, `snappy`, `lz4`, `zstd`).
    pub const fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Snappy => "snappy",
            Compression::Lz4 => "lz4",
            Compression::Zstd => "zstd",
        }
    }

    /// Parses a `compression.type` name (case-insensitive, as Java accepts).
    pub fn from_name(name: &str) -> Option<Compression> {
        Compression::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(name.trim()))
    }
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Whose clock the record timestamps are (attribute bit 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TimestampType {
    /// Set by the producer (`message.timestamp.type=CreateTime`).
    #[default]
    CreateTime,
    /// Set by the broker on append; every record carries the batch's max timestamp.
    LogAppendTime,
}

/// The decoded attribute bits of a batch.
///
/// ```
/// use kafka_streams_group::protocol::records::{BatchAttributes, Compression, TimestampType};
/// let a = BatchAttributes::from_bits(0b0011_0011).unwrap();
/// assert_eq!(a.compression, Compression::Lz4);
/// assert!(a.transactional && a.control);
/// assert_eq!(a.timestamp_type, TimestampType::CreateTime);
/// assert_eq!(a.to_bits(), 0b0011_0011);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct BatchAttributes {
    /// Codec of the records section.
    pub compression: Compression,
    /// Timestamp type.
    pub timestamp_type: TimestampType,
    /// Part of a transaction (bit 4).
    pub transactional: bool,
    /// A control batch: holds one commit/abort marker, never user data (bit 5).
    pub control: bool,
    /// The base timestamp is a delete horizon set by log compaction (bit 6).
    pub has_delete_horizon: bool,
}

impl BatchAttributes {
    /// Decodes the 16-bit attributes; `Err(code)` for an undefined compression codec.
    /// Unknown higher bits are ignored, as Java does.
    pub fn from_bits(bits: i16) -> Result<BatchAttributes, u8> {
        let code = (bits & 0x07) as u8;
        Ok(BatchAttributes {
            compression: Compression::from_code(code).ok_or(code)?,
            timestamp_type: if bits & 0x08 != 0 {
                TimestampType::LogAppendTime
            } else {
                TimestampType::CreateTime
            },
            transactional: bits & 0x10 != 0,
            control: bits & 0x20 != 0,
            has_delete_horizon: bits & 0x40 != 0,
        })
    }

    /// Encodes the attributes.
    pub fn to_bits(self) -> i16 {
        let mut b = i16::from(self.compression.code());
        if self.timestamp_type == TimestampType::LogAppendTime {
            b |= 0x08;
        }
        if self.transactional {
            b |= 0x10;
        }
        if self.control {
            b |= 0x20;
        }
        if self.has_delete_horizon {
            b |= 0x40;
        }
        b
    }
}
