//! Kafka's 16-byte UUID and its 22-character text form (as Kafka's `Uuid.toString()` prints it).

use std::fmt;
use std::str::FromStr;

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
