//! The bounds-checked [`Decoder`]: its (api, version) error context, fixed-width values,
//! strings, byte arrays, array lengths and element loops, classic and compact.
//!
//! Varints, tagged fields and the version-dependent `*_as` helpers are further `impl Decoder`
//! blocks in the sibling modules `varint`, `tagged` and `versioned`.

use super::{DecodeError, DecodeInto, Uuid};

/// Reads wire-encoded values from a byte slice, bounds-checking everything.
///
/// The decoder carries an (api name, version) context, set by the message decoder, so that
/// every error names where it happened; each read method takes the schema field name.
#[derive(Debug, Clone)]
pub struct Decoder<'a> {
    pub(super) buf: &'a [u8],
    pub(super) pos: usize,
    pub(super) api: &'static str,
    pub(super) version: i16,
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
    pub(super) fn take(&mut self, field: &'static str, n: usize) -> Result<&'a [u8], DecodeError> {
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
    pub(super) fn arr<const N: usize>(
        &mut self,
        field: &'static str,
    ) -> Result<[u8; N], DecodeError> {
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

    #[cold]
    #[inline(never)]
    pub(super) fn bad_len(&self, field: &'static str, length: i64) -> DecodeError {
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
    /// [`Decodable::decode`](super::Decodable::decode) returns for the same bytes; on error it
    /// is valid but unspecified.
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
}
