//! Wire primitives: an appending [`Encoder`], a bounds-checked [`Decoder`], their typed errors,
//! and the traits every message implements.
//!
//! The decoder never trusts a length: every string, byte array, array count and tagged-field size
//! is compared with the bytes that remain *before* anything is allocated, so a hostile peer can
//! make decoding fail but never make it allocate more than the frame it already sent.

use std::fmt;
use std::str::FromStr;

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

/// A raw tagged field: a tag number and its already-encoded bytes.
///
/// Decoders in this crate skip unknown tags rather than keep them (a client has no use for
/// them); this type exists so that callers (e.g. a test broker) can emit arbitrary tags.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TaggedField {
    /// Tag number (tags must be written in ascending order).
    pub tag: u32,
    /// Encoded field value.
    pub data: Vec<u8>,
}

/// A Kafka UUID (16 raw bytes), displayed like Kafka's `Uuid.toString()`: URL-safe base64
/// without padding, 22 characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct Uuid(pub [u8; 16]);

impl Uuid {
    /// The all-zero UUID (`AAAAAAAAAAAAAAAAAAAAAA`), Kafka's "no id".
    pub const ZERO: Uuid = Uuid([0; 16]);
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

impl fmt::Display for Uuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // 16 bytes = 5 full 3-byte groups + 1 byte → 20 + 2 characters.
        let mut out = [0u8; 22];
        let b = &self.0;
        for g in 0..5 {
            let n = (u32::from(b[3 * g]) << 16)
                | (u32::from(b[3 * g + 1]) << 8)
                | u32::from(b[3 * g + 2]);
            for k in 0..4 {
                out[4 * g + k] = B64[((n >> (18 - 6 * k)) & 63) as usize];
            }
        }
        out[20] = B64[usize::from(b[15] >> 2)];
        out[21] = B64[usize::from((b[15] & 3) << 4)];
        for &c in &out {
            fmt::Write::write_char(f, char::from(c))?;
        }
        Ok(())
    }
}

/// Error returned when a string is not a 22-character URL-safe base64 UUID.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid Kafka UUID string")]
pub struct ParseUuidError;

impl FromStr for Uuid {
    type Err = ParseUuidError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.as_bytes();
        if s.len() != 22 {
            return Err(ParseUuidError);
        }
        let val = |c: u8| -> Result<u32, ParseUuidError> {
            B64.iter()
                .position(|&x| x == c)
                .map(|p| p as u32)
                .ok_or(ParseUuidError)
        };
        let mut out = [0u8; 16];
        for g in 0..5 {
            let mut n = 0u32;
            for k in 0..4 {
                n = (n << 6) | val(s[4 * g + k])?;
            }
            out[3 * g] = (n >> 16) as u8;
            out[3 * g + 1] = (n >> 8) as u8;
            out[3 * g + 2] = n as u8;
        }
        let hi = val(s[20])?;
        let lo = val(s[21])?;
        if lo & 0x0f != 0 {
            // Non-canonical: the unused low bits must be zero so each UUID has one spelling.
            return Err(ParseUuidError);
        }
        out[15] = ((hi << 2) | (lo >> 4)) as u8;
        Ok(Uuid(out))
    }
}

/// Appends wire-encoded values to a caller-owned buffer.
///
/// The encoder only ever appends (it never clears), so one `Vec` can be reused across frames;
/// once that buffer has enough capacity, encoding performs no heap allocation.
pub struct Encoder<'a> {
    buf: &'a mut Vec<u8>,
}

const MAX_STRING: usize = i16::MAX as usize;
const MAX_BYTES: usize = i32::MAX as usize;
/// Compact lengths are `N + 1` as an unsigned varint, but Java reads them into an `int`.
const MAX_COMPACT: usize = i32::MAX as usize - 1;

impl<'a> Encoder<'a> {
    /// Wraps `buf`; new bytes are appended after its current contents.
    #[inline]
    pub fn new(buf: &'a mut Vec<u8>) -> Self {
        Encoder { buf }
    }

    /// Total length of the underlying buffer (including bytes present before this encoder).
    #[inline]
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// True if the underlying buffer is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Current write position (same as [`Encoder::len`]); use it to remember where a length
    /// placeholder went.
    #[inline]
    pub fn position(&self) -> usize {
        self.buf.len()
    }

    /// Overwrites 4 bytes at `at` with a big-endian `i32` (for back-patching frame lengths).
    ///
    /// # Panics
    /// If `at + 4` exceeds the buffer length; `at` must come from [`Encoder::position`].
    #[inline]
    pub fn patch_i32(&mut self, at: usize, v: i32) {
        self.buf[at..at + 4].copy_from_slice(&v.to_be_bytes());
    }

    /// Drops everything written after `at` (used to roll back a failed encode).
    #[inline]
    pub fn truncate(&mut self, at: usize) {
        self.buf.truncate(at);
    }

    /// The bytes written so far (the whole underlying buffer).
    #[inline]
    pub fn as_slice(&self) -> &[u8] {
        self.buf
    }

    /// Appends raw bytes with no length prefix.
    #[inline]
    pub fn raw(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }

    /// Writes an `int8`.
    #[inline]
    pub fn i8(&mut self, v: i8) {
        self.buf.push(v as u8);
    }
    /// Writes a big-endian `int16`.
    #[inline]
    pub fn i16(&mut self, v: i16) {
        self.raw(&v.to_be_bytes());
    }
    /// Writes a big-endian `int32`.
    #[inline]
    pub fn i32(&mut self, v: i32) {
        self.raw(&v.to_be_bytes());
    }
    /// Writes a big-endian `int64`.
    #[inline]
    pub fn i64(&mut self, v: i64) {
        self.raw(&v.to_be_bytes());
    }
    /// Writes a big-endian `uint16`.
    #[inline]
    pub fn u16(&mut self, v: u16) {
        self.raw(&v.to_be_bytes());
    }
    /// Writes a big-endian `uint32`.
    #[inline]
    pub fn u32(&mut self, v: u32) {
        self.raw(&v.to_be_bytes());
    }
    /// Writes a big-endian IEEE-754 `float64`.
    #[inline]
    pub fn f64(&mut self, v: f64) {
        self.raw(&v.to_be_bytes());
    }
    /// Writes a `bool` as one byte, 0 or 1.
    #[inline]
    pub fn bool(&mut self, v: bool) {
        self.buf.push(u8::from(v));
    }
    /// Writes a 16-byte UUID.
    #[inline]
    pub fn uuid(&mut self, v: Uuid) {
        self.raw(&v.0);
    }

    /// Writes an unsigned LEB128 varint (at most 5 bytes).
    #[inline]
    pub fn unsigned_varint(&mut self, v: u32) {
        // Lengths, counts and tag counts are almost always below 128: one byte, no loop, and a
        // body small enough to inline into every string and array writer.
        if v < 0x80 {
            self.buf.push(v as u8);
        } else {
            self.unsigned_varint_multi(v);
        }
    }

    /// [`Encoder::unsigned_varint`] for values of two bytes or more (kept out of line).
    #[inline(never)]
    fn unsigned_varint_multi(&mut self, mut v: u32) {
        while v >= 0x80 {
            self.buf.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }

    /// Writes a zig-zag signed varint.
    #[inline]
    pub fn varint(&mut self, v: i32) {
        self.unsigned_varint(((v << 1) ^ (v >> 31)) as u32);
    }

    /// Writes a zig-zag signed varlong (at most 10 bytes).
    pub fn varlong(&mut self, v: i64) {
        let mut z = ((v << 1) ^ (v >> 63)) as u64;
        while z >= 0x80 {
            self.buf.push((z as u8) | 0x80);
            z >>= 7;
        }
        self.buf.push(z as u8);
    }

    #[inline]
    fn check(field: &'static str, len: usize, max: usize) -> Result<(), EncodeError> {
        if len > max {
            Err(Self::overflow(field, len, max))
        } else {
            Ok(())
        }
    }

    /// Builds the length-overflow error out of line: it never happens in practice, and keeping
    /// its construction out of the inlined callers keeps their hot path to a compare and a branch.
    #[cold]
    #[inline(never)]
    fn overflow(field: &'static str, len: usize, max: usize) -> EncodeError {
        EncodeError::LengthOverflow { field, len, max }
    }

    /// Writes `len + 1` as an unsigned varint (compact length encoding).
    #[inline]
    fn compact_len(
        &mut self,
        field: &'static str,
        len: usize,
        max: usize,
    ) -> Result<(), EncodeError> {
        Self::check(field, len, max)?;
        // Cannot truncate: max <= i32::MAX - 1.
        self.unsigned_varint(len as u32 + 1);
        Ok(())
    }

    /// Writes a non-null `string` (int16 length).
    #[inline]
    pub fn string(&mut self, field: &'static str, s: &str) -> Result<(), EncodeError> {
        Self::check(field, s.len(), MAX_STRING)?;
        self.i16(s.len() as i16);
        self.raw(s.as_bytes());
        Ok(())
    }

    /// Writes a nullable `string` (length -1 for null).
    #[inline]
    pub fn nullable_string(
        &mut self,
        field: &'static str,
        s: Option<&str>,
    ) -> Result<(), EncodeError> {
        match s {
            Some(s) => self.string(field, s),
            None => {
                self.i16(-1);
                Ok(())
            }
        }
    }

    /// Writes a non-null compact string (unsigned varint length + 1).
    #[inline]
    pub fn compact_string(&mut self, field: &'static str, s: &str) -> Result<(), EncodeError> {
        // Java rejects compact strings longer than Short.MAX_VALUE too.
        self.compact_len(field, s.len(), MAX_STRING)?;
        self.raw(s.as_bytes());
        Ok(())
    }

    /// Writes a nullable compact string (0 for null).
    #[inline]
    pub fn compact_nullable_string(
        &mut self,
        field: &'static str,
        s: Option<&str>,
    ) -> Result<(), EncodeError> {
        match s {
            Some(s) => self.compact_string(field, s),
            None => {
                self.unsigned_varint(0);
                Ok(())
            }
        }
    }

    /// Writes non-null `bytes` (int32 length).
    #[inline]
    pub fn bytes(&mut self, field: &'static str, b: &[u8]) -> Result<(), EncodeError> {
        Self::check(field, b.len(), MAX_BYTES)?;
        self.i32(b.len() as i32);
        self.raw(b);
        Ok(())
    }

    /// Writes nullable `bytes` (length -1 for null).
    #[inline]
    pub fn nullable_bytes(
        &mut self,
        field: &'static str,
        b: Option<&[u8]>,
    ) -> Result<(), EncodeError> {
        match b {
            Some(b) => self.bytes(field, b),
            None => {
                self.i32(-1);
                Ok(())
            }
        }
    }

    /// Writes non-null compact bytes.
    #[inline]
    pub fn compact_bytes(&mut self, field: &'static str, b: &[u8]) -> Result<(), EncodeError> {
        self.compact_len(field, b.len(), MAX_COMPACT)?;
        self.raw(b);
        Ok(())
    }

    /// Writes nullable compact bytes (0 for null).
    #[inline]
    pub fn compact_nullable_bytes(
        &mut self,
        field: &'static str,
        b: Option<&[u8]>,
    ) -> Result<(), EncodeError> {
        match b {
            Some(b) => self.compact_bytes(field, b),
            None => {
                self.unsigned_varint(0);
                Ok(())
            }
        }
    }

    /// Writes a non-null array count (int32).
    #[inline]
    pub fn array_len(&mut self, field: &'static str, n: usize) -> Result<(), EncodeError> {
        Self::check(field, n, MAX_BYTES)?;
        self.i32(n as i32);
        Ok(())
    }

    /// Writes a nullable array count (-1 for null).
    #[inline]
    pub fn nullable_array_len(
        &mut self,
        field: &'static str,
        n: Option<usize>,
    ) -> Result<(), EncodeError> {
        match n {
            Some(n) => self.array_len(field, n),
            None => {
                self.i32(-1);
                Ok(())
            }
        }
    }

    /// Writes a non-null compact array count (unsigned varint N + 1).
    #[inline]
    pub fn compact_array_len(&mut self, field: &'static str, n: usize) -> Result<(), EncodeError> {
        self.compact_len(field, n, MAX_COMPACT)
    }

    /// Writes a nullable compact array count (0 for null).
    #[inline]
    pub fn compact_nullable_array_len(
        &mut self,
        field: &'static str,
        n: Option<usize>,
    ) -> Result<(), EncodeError> {
        match n {
            Some(n) => self.compact_array_len(field, n),
            None => {
                self.unsigned_varint(0);
                Ok(())
            }
        }
    }

    /// Writes an empty tagged-field section (a single 0 byte).
    #[inline]
    pub fn empty_tagged_fields(&mut self) {
        self.buf.push(0);
    }

    /// Writes a tagged-field section from raw fields (count, then tag/size/data for each).
    ///
    /// Fields must already be in ascending, unique tag order, as the protocol requires.
    pub fn tagged_fields(&mut self, fields: &[TaggedField]) -> Result<(), EncodeError> {
        Self::check("TaggedFields", fields.len(), u32::MAX as usize)?;
        self.unsigned_varint(fields.len() as u32);
        for f in fields {
            self.unsigned_varint(f.tag);
            Self::check("TaggedFields", f.data.len(), MAX_BYTES)?;
            self.unsigned_varint(f.data.len() as u32);
            self.raw(&f.data);
        }
        Ok(())
    }

    /// Writes one tagged field whose value is produced by `write`: the tag, then the value's
    /// size, then the value. The caller writes the section's field count first.
    ///
    /// The size is not known until the value is written, so the value is encoded in place and
    /// then shifted right to make room for the size varint: no temporary buffer is needed.
    pub fn tagged_field<F>(&mut self, tag: u32, write: F) -> Result<(), EncodeError>
    where
        F: FnOnce(&mut Encoder<'_>) -> Result<(), EncodeError>,
    {
        self.unsigned_varint(tag);
        let start = self.buf.len();
        write(self)?;
        let size = self.buf.len() - start;
        Self::check("TaggedFields", size, MAX_BYTES)?;
        let mut tmp = [0u8; 5];
        let mut n = 0;
        let mut v = size as u32;
        while v >= 0x80 {
            tmp[n] = (v as u8) | 0x80;
            v >>= 7;
            n += 1;
        }
        tmp[n] = v as u8;
        n += 1;
        let end = self.buf.len();
        self.buf.resize(end + n, 0);
        self.buf.copy_within(start..end, start + n);
        self.buf[start..start + n].copy_from_slice(&tmp[..n]);
        Ok(())
    }

    // ---- version-dependent helpers: `compact` is "this message version is flexible". ----

    /// Writes a non-null string, compact or classic.
    #[inline]
    pub fn string_as(
        &mut self,
        field: &'static str,
        s: &str,
        compact: bool,
    ) -> Result<(), EncodeError> {
        if compact {
            self.compact_string(field, s)
        } else {
            self.string(field, s)
        }
    }

    /// Writes a nullable string, compact or classic.
    #[inline]
    pub fn nullable_string_as(
        &mut self,
        field: &'static str,
        s: Option<&str>,
        compact: bool,
    ) -> Result<(), EncodeError> {
        if compact {
            self.compact_nullable_string(field, s)
        } else {
            self.nullable_string(field, s)
        }
    }

    /// Writes non-null bytes, compact or classic.
    #[inline]
    pub fn bytes_as(
        &mut self,
        field: &'static str,
        b: &[u8],
        compact: bool,
    ) -> Result<(), EncodeError> {
        if compact {
            self.compact_bytes(field, b)
        } else {
            self.bytes(field, b)
        }
    }

    /// Writes nullable bytes, compact or classic.
    #[inline]
    pub fn nullable_bytes_as(
        &mut self,
        field: &'static str,
        b: Option<&[u8]>,
        compact: bool,
    ) -> Result<(), EncodeError> {
        if compact {
            self.compact_nullable_bytes(field, b)
        } else {
            self.nullable_bytes(field, b)
        }
    }

    /// Writes a non-null array count, compact or classic.
    #[inline]
    pub fn array_len_as(
        &mut self,
        field: &'static str,
        n: usize,
        compact: bool,
    ) -> Result<(), EncodeError> {
        if compact {
            self.compact_array_len(field, n)
        } else {
            self.array_len(field, n)
        }
    }

    /// Writes a nullable array count, compact or classic.
    #[inline]
    pub fn nullable_array_len_as(
        &mut self,
        field: &'static str,
        n: Option<usize>,
        compact: bool,
    ) -> Result<(), EncodeError> {
        if compact {
            self.compact_nullable_array_len(field, n)
        } else {
            self.nullable_array_len(field, n)
        }
    }

    /// Writes an array of structs (count, then each element at `version`).
    #[inline]
    pub fn array<T: Encodable>(
        &mut self,
        field: &'static str,
        items: &[T],
        compact: bool,
        version: i16,
    ) -> Result<(), EncodeError> {
        self.array_len_as(field, items.len(), compact)?;
        items.iter().try_for_each(|t| t.encode(self, version))
    }

    /// Writes a nullable array of structs.
    #[inline]
    pub fn nullable_array<T: Encodable>(
        &mut self,
        field: &'static str,
        items: Option<&[T]>,
        compact: bool,
        version: i16,
    ) -> Result<(), EncodeError> {
        self.nullable_array_len_as(field, items.map(<[T]>::len), compact)?;
        items
            .unwrap_or_default()
            .iter()
            .try_for_each(|t| t.encode(self, version))
    }

    /// Writes an `[]int32` array.
    #[inline]
    pub fn i32_array(
        &mut self,
        field: &'static str,
        items: &[i32],
        compact: bool,
    ) -> Result<(), EncodeError> {
        self.array_len_as(field, items.len(), compact)?;
        items.iter().for_each(|&v| self.i32(v));
        Ok(())
    }

    /// Writes a `[]string` array of non-null strings.
    #[inline]
    pub fn string_array(
        &mut self,
        field: &'static str,
        items: &[String],
        compact: bool,
    ) -> Result<(), EncodeError> {
        self.array_len_as(field, items.len(), compact)?;
        items
            .iter()
            .try_for_each(|s| self.string_as(field, s, compact))
    }

    /// Ends a struct: writes an empty tagged-field section in flexible versions, nothing otherwise.
    #[inline]
    pub fn end_struct(&mut self, flexible: bool) {
        if flexible {
            self.empty_tagged_fields();
        }
    }
}

/// Reads wire-encoded values from a byte slice, bounds-checking everything.
///
/// The decoder carries an (api name, version) context, set by the message decoder, so that
/// every error names where it happened; each read method takes the schema field name.
#[derive(Debug, Clone)]
pub struct Decoder<'a> {
    buf: &'a [u8],
    pos: usize,
    api: &'static str,
    version: i16,
}

/// A null marker (-1 / 0) or a length.
type Len = Option<usize>;

impl<'a> Decoder<'a> {
    /// Wraps `buf` with an empty context.
    pub fn new(buf: &'a [u8]) -> Self {
        Decoder {
            buf,
            pos: 0,
            api: "",
            version: 0,
        }
    }

    /// Wraps `buf` with the given (api, version) context.
    pub fn with_context(buf: &'a [u8], api: &'static str, version: i16) -> Self {
        Decoder {
            buf,
            pos: 0,
            api,
            version,
        }
    }

    /// Sets the (api, version) named by subsequent errors.
    pub fn set_context(&mut self, api: &'static str, version: i16) {
        self.api = api;
        self.version = version;
    }

    /// The API name of the current context.
    pub fn api(&self) -> &'static str {
        self.api
    }

    /// The version of the current context.
    pub fn version(&self) -> i16 {
        self.version
    }

    /// Bytes not yet read.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// True when every byte was read.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// Bytes read so far.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// The unread bytes.
    pub fn rest(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }

    /// Fails with [`DecodeError::TrailingBytes`] unless all input was consumed.
    #[inline]
    pub fn finish(&self) -> Result<(), DecodeError> {
        if self.is_empty() {
            Ok(())
        } else {
            Err(DecodeError::TrailingBytes {
                api: self.api,
                version: self.version,
                remaining: self.remaining(),
            })
        }
    }

    /// An error for `field` with this decoder's context; for callers' own validation.
    pub fn invalid(&self, field: &'static str, reason: &'static str) -> DecodeError {
        DecodeError::InvalidValue {
            api: self.api,
            version: self.version,
            field,
            reason,
        }
    }

    /// An [`DecodeError::UnexpectedNull`] for `field` with this decoder's context.
    pub fn null_error(&self, field: &'static str) -> DecodeError {
        DecodeError::UnexpectedNull {
            api: self.api,
            version: self.version,
            field,
        }
    }

    #[inline]
    fn take(&mut self, field: &'static str, n: usize) -> Result<&'a [u8], DecodeError> {
        if n > self.remaining() {
            return Err(self.truncated(field, n));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// The error for a read of `needed` bytes past the end; out of line because it is rare.
    #[cold]
    #[inline(never)]
    fn truncated(&self, field: &'static str, needed: usize) -> DecodeError {
        DecodeError::Truncated {
            api: self.api,
            version: self.version,
            field,
            needed,
            remaining: self.remaining(),
        }
    }

    #[inline]
    fn arr<const N: usize>(&mut self, field: &'static str) -> Result<[u8; N], DecodeError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(field, N)?);
        Ok(a)
    }

    /// Reads raw bytes with no length prefix.
    pub fn raw(&mut self, field: &'static str, n: usize) -> Result<&'a [u8], DecodeError> {
        self.take(field, n)
    }

    /// Reads an `int8`.
    #[inline]
    pub fn i8(&mut self, field: &'static str) -> Result<i8, DecodeError> {
        Ok(i8::from_be_bytes(self.arr(field)?))
    }
    /// Reads an `int16`.
    #[inline]
    pub fn i16(&mut self, field: &'static str) -> Result<i16, DecodeError> {
        Ok(i16::from_be_bytes(self.arr(field)?))
    }
    /// Reads an `int32`.
    #[inline]
    pub fn i32(&mut self, field: &'static str) -> Result<i32, DecodeError> {
        Ok(i32::from_be_bytes(self.arr(field)?))
    }
    /// Reads an `int64`.
    #[inline]
    pub fn i64(&mut self, field: &'static str) -> Result<i64, DecodeError> {
        Ok(i64::from_be_bytes(self.arr(field)?))
    }
    /// Reads a `uint16`.
    #[inline]
    pub fn u16(&mut self, field: &'static str) -> Result<u16, DecodeError> {
        Ok(u16::from_be_bytes(self.arr(field)?))
    }
    /// Reads a `uint32`.
    #[inline]
    pub fn u32(&mut self, field: &'static str) -> Result<u32, DecodeError> {
        Ok(u32::from_be_bytes(self.arr(field)?))
    }
    /// Reads a `float64`.
    pub fn f64(&mut self, field: &'static str) -> Result<f64, DecodeError> {
        Ok(f64::from_be_bytes(self.arr(field)?))
    }
    /// Reads a `bool`; like Java, any non-zero byte is `true`.
    #[inline]
    pub fn bool(&mut self, field: &'static str) -> Result<bool, DecodeError> {
        Ok(self.arr::<1>(field)?[0] != 0)
    }
    /// Reads a 16-byte UUID.
    #[inline]
    pub fn uuid(&mut self, field: &'static str) -> Result<Uuid, DecodeError> {
        Ok(Uuid(self.arr(field)?))
    }

    /// Reads an unsigned varint of at most 5 bytes that fits in `u32`.
    #[inline]
    pub fn unsigned_varint(&mut self, field: &'static str) -> Result<u32, DecodeError> {
        // Compact lengths, counts and tag counts are almost always one byte: no loop for those.
        if let Some(&b) = self.buf.get(self.pos) {
            if b < 0x80 {
                self.pos += 1;
                return Ok(u32::from(b));
            }
        }
        self.unsigned_varint_slow(field)
    }

    /// The general case of [`Decoder::unsigned_varint`] (also reports truncation and overflow).
    fn unsigned_varint_slow(&mut self, field: &'static str) -> Result<u32, DecodeError> {
        let mut v: u32 = 0;
        for i in 0..5 {
            let b = self.arr::<1>(field)?[0];
            if i == 4 && b > 0x0f {
                return Err(DecodeError::VarintOverflow {
                    api: self.api,
                    version: self.version,
                    field,
                });
            }
            v |= u32::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(DecodeError::VarintOverflow {
            api: self.api,
            version: self.version,
            field,
        })
    }

    /// Reads a zig-zag signed varint.
    #[inline]
    pub fn varint(&mut self, field: &'static str) -> Result<i32, DecodeError> {
        let z = self.unsigned_varint(field)?;
        Ok(((z >> 1) as i32) ^ -((z & 1) as i32))
    }

    /// Reads a zig-zag signed varlong of at most 10 bytes.
    pub fn varlong(&mut self, field: &'static str) -> Result<i64, DecodeError> {
        let mut v: u64 = 0;
        for i in 0..10 {
            let b = self.arr::<1>(field)?[0];
            if i == 9 && b > 0x01 {
                return Err(DecodeError::VarintOverflow {
                    api: self.api,
                    version: self.version,
                    field,
                });
            }
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(((v >> 1) as i64) ^ -((v & 1) as i64));
            }
        }
        Err(DecodeError::VarintOverflow {
            api: self.api,
            version: self.version,
            field,
        })
    }

    #[cold]
    #[inline(never)]
    fn bad_len(&self, field: &'static str, length: i64) -> DecodeError {
        DecodeError::InvalidLength {
            api: self.api,
            version: self.version,
            field,
            length,
            remaining: self.remaining(),
        }
    }

    /// Validates a classic signed length: -1 is null, other negatives are errors, and the
    /// length must fit in what remains (each unit being at least one byte).
    #[inline]
    fn signed_len(&self, field: &'static str, n: i64) -> Result<Len, DecodeError> {
        if n == -1 {
            return Ok(None);
        }
        if n < 0 || n as u64 > self.remaining() as u64 {
            return Err(self.bad_len(field, n));
        }
        Ok(Some(n as usize))
    }

    #[inline]
    fn compact_len(&mut self, field: &'static str) -> Result<Len, DecodeError> {
        let n = self.unsigned_varint(field)?;
        if n == 0 {
            return Ok(None);
        }
        let n = i64::from(n) - 1;
        if n as u64 > self.remaining() as u64 {
            return Err(self.bad_len(field, n));
        }
        Ok(Some(n as usize))
    }

    fn utf8(&self, field: &'static str, b: &[u8]) -> Result<String, DecodeError> {
        self.str(field, b).map(str::to_owned)
    }

    #[inline]
    fn str<'b>(&self, field: &'static str, b: &'b [u8]) -> Result<&'b str, DecodeError> {
        std::str::from_utf8(b).map_err(|_| self.bad_utf8(field))
    }

    #[cold]
    #[inline(never)]
    fn bad_utf8(&self, field: &'static str) -> DecodeError {
        DecodeError::InvalidUtf8 {
            api: self.api,
            version: self.version,
            field,
        }
    }

    #[inline]
    fn some<T>(&self, field: &'static str, v: Option<T>) -> Result<T, DecodeError> {
        match v {
            Some(v) => Ok(v),
            None => Err(self.null_error(field)),
        }
    }

    /// Reads a nullable `string` (int16 length, -1 = null).
    pub fn nullable_string(&mut self, field: &'static str) -> Result<Option<String>, DecodeError> {
        let n = i64::from(self.i16(field)?);
        match self.signed_len(field, n)? {
            None => Ok(None),
            Some(n) => {
                let b = self.take(field, n)?;
                self.utf8(field, b).map(Some)
            }
        }
    }

    /// Reads a non-null `string`.
    pub fn string(&mut self, field: &'static str) -> Result<String, DecodeError> {
        let s = self.nullable_string(field)?;
        self.some(field, s)
    }

    /// Reads a nullable compact string (0 = null). Like Kafka's readers (and this crate's
    /// encoder), strings longer than 32767 bytes are refused.
    #[inline]
    pub fn compact_nullable_string(
        &mut self,
        field: &'static str,
    ) -> Result<Option<String>, DecodeError> {
        Ok(self.compact_nullable_str(field)?.map(str::to_owned))
    }

    /// Reads a nullable compact string as a slice of the input (validated UTF-8, no copy).
    #[inline(always)]
    pub fn compact_nullable_str(
        &mut self,
        field: &'static str,
    ) -> Result<Option<&'a str>, DecodeError> {
        match self.compact_len(field)? {
            None => Ok(None),
            Some(n) if n > i16::MAX as usize => Err(self.bad_len(field, n as i64)),
            Some(n) => {
                let b = self.take(field, n)?;
                self.str(field, b).map(Some)
            }
        }
    }

    /// Reads a non-null compact string into `out`, reusing its allocation (see [`DecodeInto`]).
    /// On error `out` is left unchanged.
    #[inline(always)]
    pub fn compact_string_into(
        &mut self,
        field: &'static str,
        out: &mut String,
    ) -> Result<(), DecodeError> {
        let s = self.compact_nullable_str(field)?;
        let s = self.some(field, s)?;
        out.clear();
        out.push_str(s);
        Ok(())
    }

    /// Reads a nullable compact string into `out`, reusing the previous string's allocation
    /// when both are non-null (see [`DecodeInto`]). On error `out` is left unchanged.
    #[inline]
    pub fn compact_nullable_string_into(
        &mut self,
        field: &'static str,
        out: &mut Option<String>,
    ) -> Result<(), DecodeError> {
        match (self.compact_nullable_str(field)?, out.as_mut()) {
            (None, _) => *out = None,
            (Some(s), Some(prev)) => {
                prev.clear();
                prev.push_str(s);
            }
            (Some(s), None) => *out = Some(s.to_owned()),
        }
        Ok(())
    }

    /// Reads a non-null compact string.
    #[inline]
    pub fn compact_string(&mut self, field: &'static str) -> Result<String, DecodeError> {
        let s = self.compact_nullable_string(field)?;
        self.some(field, s)
    }

    /// Reads nullable `bytes` (int32 length, -1 = null).
    pub fn nullable_bytes(&mut self, field: &'static str) -> Result<Option<Vec<u8>>, DecodeError> {
        let n = i64::from(self.i32(field)?);
        match self.signed_len(field, n)? {
            None => Ok(None),
            Some(n) => Ok(Some(self.take(field, n)?.to_vec())),
        }
    }

    /// Reads non-null `bytes`.
    pub fn bytes(&mut self, field: &'static str) -> Result<Vec<u8>, DecodeError> {
        let b = self.nullable_bytes(field)?;
        self.some(field, b)
    }

    /// Reads nullable compact bytes (0 = null).
    pub fn compact_nullable_bytes(
        &mut self,
        field: &'static str,
    ) -> Result<Option<Vec<u8>>, DecodeError> {
        match self.compact_len(field)? {
            None => Ok(None),
            Some(n) => Ok(Some(self.take(field, n)?.to_vec())),
        }
    }

    /// Reads non-null compact bytes.
    pub fn compact_bytes(&mut self, field: &'static str) -> Result<Vec<u8>, DecodeError> {
        let b = self.compact_nullable_bytes(field)?;
        self.some(field, b)
    }

    /// Reads a nullable array count (int32, -1 = null), bounded by the remaining bytes
    /// (every element takes at least one byte), so callers may `Vec::with_capacity` it.
    pub fn nullable_array_len(
        &mut self,
        field: &'static str,
    ) -> Result<Option<usize>, DecodeError> {
        let n = i64::from(self.i32(field)?);
        self.signed_len(field, n)
    }

    /// Reads a non-null array count, bounded like [`Decoder::nullable_array_len`].
    pub fn array_len(&mut self, field: &'static str) -> Result<usize, DecodeError> {
        let n = self.nullable_array_len(field)?;
        self.some(field, n)
    }

    /// Reads a nullable compact array count (0 = null), bounded by the remaining bytes.
    #[inline]
    pub fn compact_nullable_array_len(
        &mut self,
        field: &'static str,
    ) -> Result<Option<usize>, DecodeError> {
        self.compact_len(field)
    }

    /// Reads a non-null compact array count, bounded by the remaining bytes.
    #[inline]
    pub fn compact_array_len(&mut self, field: &'static str) -> Result<usize, DecodeError> {
        let n = self.compact_len(field)?;
        self.some(field, n)
    }

    /// Reads a tagged-field section.
    ///
    /// For each field, `known(tag, sub)` is called with a decoder limited to that field's bytes
    /// (same context). It returns `Ok(true)` if it decoded the tag (it must then consume all of
    /// `sub`) or `Ok(false)` to skip it. Unknown tags are skipped: their size is bounded by the
    /// remaining input, so skipping never over-reads.
    pub fn tagged_fields<F>(&mut self, mut known: F) -> Result<(), DecodeError>
    where
        F: FnMut(u32, &mut Decoder<'a>) -> Result<bool, DecodeError>,
    {
        let count = self.unsigned_varint("TaggedFields")?;
        // Each field needs at least a tag byte and a size byte.
        if u64::from(count) * 2 > self.remaining() as u64 {
            return Err(self.bad_len("TaggedFields", i64::from(count)));
        }
        for _ in 0..count {
            let tag = self.unsigned_varint("TaggedFields")?;
            let size = self.unsigned_varint("TaggedFields")? as usize;
            let data = self.take("TaggedFields", size)?;
            let mut sub = Decoder {
                buf: data,
                pos: 0,
                api: self.api,
                version: self.version,
            };
            if known(tag, &mut sub)? && !sub.is_empty() {
                return Err(self.invalid("TaggedFields", "known tagged field has trailing bytes"));
            }
        }
        Ok(())
    }

    /// Reads a tagged-field section, skipping every field.
    #[inline]
    pub fn skip_tagged_fields(&mut self) -> Result<(), DecodeError> {
        // Nearly every section is empty (one 0 byte); only a non-empty one needs the loop.
        if self.buf.get(self.pos) == Some(&0) {
            self.pos += 1;
            return Ok(());
        }
        self.tagged_fields(|_, _| Ok(false))
    }

    /// Reads a tagged-field section into raw [`TaggedField`]s (nothing interpreted).
    pub fn raw_tagged_fields(&mut self) -> Result<Vec<TaggedField>, DecodeError> {
        let mut out = Vec::new();
        self.tagged_fields(|tag, sub| {
            out.push(TaggedField {
                tag,
                data: sub.rest().to_vec(),
            });
            Ok(false)
        })?;
        Ok(out)
    }

    /// Reads an array of `n` elements with `elem`, allocating only after `n` was bounded.
    pub fn array_of<T, F>(&mut self, n: usize, mut elem: F) -> Result<Vec<T>, DecodeError>
    where
        F: FnMut(&mut Self) -> Result<T, DecodeError>,
    {
        // Reserve no more bytes than remain in the input: each element takes at least one
        // byte on the wire but `size_of::<T>()` in memory, so capping the *count* by the
        // remaining bytes could still reserve many times the frame (found by fuzzing: a
        // 400 kB describe response reserved 86 MB).
        let cap = self.remaining() / std::mem::size_of::<T>().max(1);
        let mut v = Vec::with_capacity(n.min(cap));
        for _ in 0..n {
            v.push(elem(self)?);
        }
        Ok(v)
    }

    /// Reads `n` elements (a count already read and bounded) into `out`, reusing its elements'
    /// allocations: the first `min(n, out.len())` elements are decoded in place with
    /// [`DecodeInto::decode_into`], extra elements are dropped and missing ones are decoded
    /// fresh and pushed. On success `out` equals what [`Decoder::array_of`] with
    /// [`Decodable::decode`] returns for the same bytes; on error it is valid but unspecified.
    pub fn array_into<T: DecodeInto>(
        &mut self,
        n: usize,
        out: &mut Vec<T>,
        version: i16,
    ) -> Result<(), DecodeError> {
        out.truncate(n);
        let reused = out.len();
        // Grow no further than the remaining input can fill, as in `array_of`.
        let cap = self.remaining() / std::mem::size_of::<T>().max(1);
        out.reserve(n.min(reused + cap) - reused);
        for item in out.iter_mut() {
            item.decode_into(self, version)?;
        }
        for _ in reused..n {
            out.push(T::decode(self, version)?);
        }
        Ok(())
    }

    /// [`Decoder::array_into`] for a nullable array: `None` (the null count) clears `out` to
    /// `None`, otherwise the elements go into the existing `Vec` (or a new one).
    pub fn nullable_array_into<T: DecodeInto>(
        &mut self,
        n: Option<usize>,
        out: &mut Option<Vec<T>>,
        version: i16,
    ) -> Result<(), DecodeError> {
        match n {
            None => {
                *out = None;
                Ok(())
            }
            Some(n) => self.array_into(n, out.get_or_insert_with(Vec::new), version),
        }
    }

    // ---- version-dependent helpers: `compact` is "this message version is flexible". ----

    /// Reads a non-null string, compact or classic.
    #[inline]
    pub fn string_as(&mut self, field: &'static str, compact: bool) -> Result<String, DecodeError> {
        if compact {
            self.compact_string(field)
        } else {
            self.string(field)
        }
    }

    /// Reads a nullable string, compact or classic.
    #[inline]
    pub fn nullable_string_as(
        &mut self,
        field: &'static str,
        compact: bool,
    ) -> Result<Option<String>, DecodeError> {
        if compact {
            self.compact_nullable_string(field)
        } else {
            self.nullable_string(field)
        }
    }

    /// Reads non-null bytes, compact or classic.
    pub fn bytes_as(&mut self, field: &'static str, compact: bool) -> Result<Vec<u8>, DecodeError> {
        if compact {
            self.compact_bytes(field)
        } else {
            self.bytes(field)
        }
    }

    /// Reads nullable bytes, compact or classic.
    pub fn nullable_bytes_as(
        &mut self,
        field: &'static str,
        compact: bool,
    ) -> Result<Option<Vec<u8>>, DecodeError> {
        if compact {
            self.compact_nullable_bytes(field)
        } else {
            self.nullable_bytes(field)
        }
    }

    /// Reads a non-null array count, compact or classic (bounded by the remaining bytes).
    #[inline]
    pub fn array_len_as(
        &mut self,
        field: &'static str,
        compact: bool,
    ) -> Result<usize, DecodeError> {
        if compact {
            self.compact_array_len(field)
        } else {
            self.array_len(field)
        }
    }

    /// Reads a nullable array count, compact or classic (bounded by the remaining bytes).
    #[inline]
    pub fn nullable_array_len_as(
        &mut self,
        field: &'static str,
        compact: bool,
    ) -> Result<Option<usize>, DecodeError> {
        if compact {
            self.compact_nullable_array_len(field)
        } else {
            self.nullable_array_len(field)
        }
    }

    /// Reads a non-null array of structs at `version`.
    pub fn array<T: Decodable>(
        &mut self,
        field: &'static str,
        compact: bool,
        version: i16,
    ) -> Result<Vec<T>, DecodeError> {
        let n = self.array_len_as(field, compact)?;
        self.array_of(n, |d| T::decode(d, version))
    }

    /// Reads a nullable array of structs at `version`.
    pub fn nullable_array<T: Decodable>(
        &mut self,
        field: &'static str,
        compact: bool,
        version: i16,
    ) -> Result<Option<Vec<T>>, DecodeError> {
        match self.nullable_array_len_as(field, compact)? {
            None => Ok(None),
            Some(n) => self.array_of(n, |d| T::decode(d, version)).map(Some),
        }
    }

    /// Reads a non-null `[]int32` array.
    pub fn i32_array(
        &mut self,
        field: &'static str,
        compact: bool,
    ) -> Result<Vec<i32>, DecodeError> {
        let n = self.array_len_as(field, compact)?;
        let mut out = Vec::new();
        self.i32s_into(field, n, &mut out)?;
        Ok(out)
    }

    /// Appends `n` big-endian `int32`s (the elements of an array whose count was already
    /// read) to `out`.
    ///
    /// The whole run is bounds-checked once (`n * 4` must fit in what remains), then converted
    /// in one pass: integer arrays are the bulk of Metadata and heartbeat responses, and a
    /// check plus a `Result` per element was most of their decode time.
    #[inline]
    pub fn i32s_into(
        &mut self,
        field: &'static str,
        n: usize,
        out: &mut Vec<i32>,
    ) -> Result<(), DecodeError> {
        let bytes = match n.checked_mul(4) {
            Some(len) if len <= self.remaining() => self.take(field, len)?,
            _ => return Err(self.bad_len(field, n as i64)),
        };
        out.reserve(n);
        out.extend(
            bytes
                .chunks_exact(4)
                .map(|c| i32::from_be_bytes([c[0], c[1], c[2], c[3]])),
        );
        Ok(())
    }

    /// Reads a non-null `[]string` array of non-null strings.
    pub fn string_array(
        &mut self,
        field: &'static str,
        compact: bool,
    ) -> Result<Vec<String>, DecodeError> {
        let n = self.array_len_as(field, compact)?;
        self.array_of(n, |d| d.string_as(field, compact))
    }

    /// Ends a struct: skips its tagged-field section in flexible versions, nothing otherwise.
    pub fn end_struct(&mut self, flexible: bool) -> Result<(), DecodeError> {
        if flexible {
            self.skip_tagged_fields()
        } else {
            Ok(())
        }
    }
}

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
/// by naming the response type alone (see [`frame::encode_response`](super::frame::encode_response)
/// and [`frame::decode_response`](super::frame::decode_response)).
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

#[cfg(test)]
mod tests;
