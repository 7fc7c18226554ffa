//! The typed errors of the codec: what went wrong, in which API, version and schema field.

/// Errors raised while decoding a frame, header or message.
///
/// Every variant that arises inside a message names the API (`api`, e.g. `"ApiVersionsResponse"`),
/// the message version and the schema field being read, so a bad broker reply can be diagnosed
/// from the error text alone.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// Fewer bytes remain than the field needs.
    #[error(
        "{api} v{version}: truncated reading {field}: need {needed} bytes, {remaining} remain"
    )]
    Truncated {
        /// Message name.
        api: &'static str,
        /// Message version.
        version: i16,
        /// Schema field name.
        field: &'static str,
        /// Bytes the field needs.
        needed: usize,
        /// Bytes left in the input.
        remaining: usize,
    },
    /// A length or count is negative (other than the null marker) or exceeds the remaining bytes.
    #[error("{api} v{version}: invalid length {length} for {field} ({remaining} bytes remain)")]
    InvalidLength {
        /// Message name.
        api: &'static str,
        /// Message version.
        version: i16,
        /// Schema field name.
        field: &'static str,
        /// The length read from the wire.
        length: i64,
        /// Bytes left in the input.
        remaining: usize,
    },
    /// A null marker where the schema does not allow null in this version.
    #[error("{api} v{version}: {field} is null but not nullable")]
    UnexpectedNull {
        /// Message name.
        api: &'static str,
        /// Message version.
        version: i16,
        /// Schema field name.
        field: &'static str,
    },
    /// A string that is not valid UTF-8.
    #[error("{api} v{version}: {field} is not valid UTF-8")]
    InvalidUtf8 {
        /// Message name.
        api: &'static str,
        /// Message version.
        version: i16,
        /// Schema field name.
        field: &'static str,
    },
    /// A varint longer than its type allows.
    #[error("{api} v{version}: varint overflow in {field}")]
    VarintOverflow {
        /// Message name.
        api: &'static str,
        /// Message version.
        version: i16,
        /// Schema field name.
        field: &'static str,
    },
    /// A value that is well-formed but not allowed (e.g. a known tagged field with extra bytes).
    #[error("{api} v{version}: invalid value for {field}: {reason}")]
    InvalidValue {
        /// Message name.
        api: &'static str,
        /// Message version.
        version: i16,
        /// Schema field name.
        field: &'static str,
        /// What is wrong.
        reason: &'static str,
    },
    /// The message ended before the frame did.
    #[error("{api} v{version}: {remaining} trailing bytes after the message")]
    TrailingBytes {
        /// Message name.
        api: &'static str,
        /// Message version.
        version: i16,
        /// Bytes left unread.
        remaining: usize,
    },
    /// A frame length prefix above the configured maximum.
    #[error("frame of {size} bytes exceeds the maximum of {max}")]
    FrameTooLarge {
        /// Size announced by the prefix.
        size: usize,
        /// Configured maximum.
        max: usize,
    },
    /// A negative frame length prefix.
    #[error("negative frame length {size}")]
    NegativeFrameLength {
        /// The prefix value.
        size: i32,
    },
    /// The message version is outside the range this library implements.
    #[error("{api}: unsupported version {version}")]
    UnsupportedVersion {
        /// Message name.
        api: &'static str,
        /// Requested version.
        version: i16,
    },
}

/// Errors raised while encoding.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EncodeError {
    /// A string, byte array or array is longer than its wire length type can express.
    #[error("{field}: length {len} exceeds the wire maximum {max}")]
    LengthOverflow {
        /// Schema field name.
        field: &'static str,
        /// Actual length.
        len: usize,
        /// Largest encodable length.
        max: usize,
    },
    /// A null value for a field that is not nullable in this version.
    #[error("{api} v{version}: {field} is null but not nullable in this version")]
    NullNotAllowed {
        /// Message name.
        api: &'static str,
        /// Message version.
        version: i16,
        /// Schema field name.
        field: &'static str,
    },
    /// A field holds a non-default value that this version cannot carry (Kafka's
    /// `UnsupportedVersionException` for non-ignorable fields).
    #[error("{api} v{version}: {field} has a non-default value but is not in this version")]
    FieldNotInVersion {
        /// Message name.
        api: &'static str,
        /// Message version.
        version: i16,
        /// Schema field name.
        field: &'static str,
    },
    /// The message version is outside the range this library implements.
    #[error("{api}: unsupported version {version}")]
    UnsupportedVersion {
        /// Message name.
        api: &'static str,
        /// Requested version.
        version: i16,
    },
    /// A frame larger than the `i32` length prefix can express.
    #[error("frame of {size} bytes does not fit the 4-byte length prefix")]
    FrameTooLarge {
        /// Body size in bytes.
        size: usize,
    },
}
