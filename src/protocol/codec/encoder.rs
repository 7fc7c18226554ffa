//! The appending [`Encoder`]: fixed-width values, strings, byte arrays and array lengths in
//! their classic (int16/int32 length) and compact (varint `N + 1`) forms.
//!
//! Varints, tagged fields and the version-dependent `*_as` helpers are further `impl Encoder`
//! blocks in the sibling modules `varint`, `tagged` and `versioned`.

use super::{EncodeError, Uuid};

/// Appends wire-encoded values to a caller-owned buffer.
///
/// The encoder only ever appends (it never clears), so one `Vec` can be reused across frames;
/// once that buffer has enough capacity, encoding performs no heap allocation.
pub struct Encoder<'a> {
    pub(super) buf: &'a mut Vec<u8>,
}

const MAX_STRING: usize = i16::MAX as usize;
pub(super) const MAX_BYTES: usize = i32::MAX as usize;
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

    #[inline]
    pub(super) fn check(field: &'static str, len: usize, max: usize) -> Result<(), EncodeError> {
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
}
