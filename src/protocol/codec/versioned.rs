//! Version-dependent helpers: each picks the classic or the compact form of a value from a
//! `compact` flag ("this message version is flexible"), so that message code is written once
//! for all versions.

use super::{Decodable, DecodeError, Decoder, Encodable, EncodeError, Encoder};

impl Encoder<'_> {
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

impl Decoder<'_> {
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
