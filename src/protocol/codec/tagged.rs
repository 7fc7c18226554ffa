//! Tagged fields: the trailing extension section of every struct in flexible versions (a count,
//! then tag, size and bytes per field); writing, reading, skipping.

use super::encoder::MAX_BYTES;
use super::{DecodeError, Decoder, EncodeError, Encoder};

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

impl Encoder<'_> {
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
}

impl<'a> Decoder<'a> {
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
}
