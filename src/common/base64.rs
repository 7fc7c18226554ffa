//! Standard base64 (RFC 4648 §4, with `=` padding): SCRAM's salts and proofs, and the
//! `TopicPartitionMetadata` Kafka Streams stores with a committed offset.
//!
//! Hand-written rather than a dependency: SCRAM needs a strict decoder (non-canonical input is a
//! malformed server message, not something to be lenient about) and ~80 lines do not justify a
//! new runtime crate.

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Encodes `input` as padded standard base64.
pub(crate) fn encode(input: &[u8]) -> String {
    let mut out = String::with_capacity(input.len().div_ceil(3) * 4);
    for chunk in input.chunks(3) {
        let b0 = chunk[0];
        let b1 = chunk.get(1).copied().unwrap_or(0);
        let b2 = chunk.get(2).copied().unwrap_or(0);
        let n = (u32::from(b0) << 16) | (u32::from(b1) << 8) | u32::from(b2);
        out.push(char::from(ALPHABET[(n >> 18) as usize & 63]));
        out.push(char::from(ALPHABET[(n >> 12) as usize & 63]));
        out.push(if chunk.len() > 1 {
            char::from(ALPHABET[(n >> 6) as usize & 63])
        } else {
            '='
        });
        out.push(if chunk.len() > 2 {
            char::from(ALPHABET[n as usize & 63])
        } else {
            '='
        });
    }
    out
}

fn value(c: u8) -> Option<u32> {
    let v = match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => return None,
    };
    Some(u32::from(v))
}

/// Decodes padded standard base64; `None` for any malformed or non-canonical input
/// (wrong length, bad characters, misplaced padding, non-zero trailing bits).
pub(crate) fn decode(input: &[u8]) -> Option<Vec<u8>> {
    if !input.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(input.len() / 4 * 3);
    let quads = input.len() / 4;
    for (i, quad) in input.chunks(4).enumerate() {
        let last = i + 1 == quads;
        let pad = quad.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && !last) {
            return None;
        }
        let mut n: u32 = 0;
        for &c in &quad[..4 - pad] {
            n = (n << 6) | value(c)?;
        }
        match pad {
            0 => {
                out.push((n >> 16) as u8);
                out.push((n >> 8) as u8);
                out.push(n as u8);
            }
            1 => {
                // 18 bits: 16 data bits, 2 bits that must be zero for a canonical encoding.
                if n & 0b11 != 0 {
                    return None;
                }
                out.push((n >> 10) as u8);
                out.push((n >> 2) as u8);
            }
            _ => {
                // 12 bits: 8 data bits, 4 bits that must be zero.
                if n & 0b1111 != 0 {
                    return None;
                }
                out.push((n >> 4) as u8);
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc4648_vectors() {
        let cases: [(&[u8], &str); 7] = [
            (b"", ""),
            (b"f", "Zg=="),
            (b"fo", "Zm8="),
            (b"foo", "Zm9v"),
            (b"foob", "Zm9vYg=="),
            (b"fooba", "Zm9vYmE="),
            (b"foobar", "Zm9vYmFy"),
        ];
        for (raw, enc) in cases {
            assert_eq!(encode(raw), enc);
            assert_eq!(decode(enc.as_bytes()).as_deref(), Some(raw));
        }
    }

    #[test]
    fn rejects_malformed() {
        for bad in [
            "Zg", "Zg=", "Z===", "Zh==", "Zm9=", "Zg==Zg==", "Zm9v!A==", "====", "Zm 9",
        ] {
            assert_eq!(decode(bad.as_bytes()), None, "{bad}");
        }
    }

    #[test]
    fn round_trips_all_byte_values() {
        let data: Vec<u8> = (0..=255u8).collect();
        for len in 0..data.len() {
            assert_eq!(
                decode(encode(&data[..len]).as_bytes()).as_deref(),
                Some(&data[..len])
            );
        }
    }
}
