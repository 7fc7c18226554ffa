//! Varints: unsigned LEB128 (lengths, counts, tags) and zig-zag signed varint/varlong (record
//! fields), the writer and the reader side by side so the two can be checked against each other.

use super::{DecodeError, Decoder, Encoder};

impl Encoder<'_> {
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
}

impl Decoder<'_> {
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
}
