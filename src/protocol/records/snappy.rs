//! Snappy as Kafka uses it: xerial (`snappy-java` `SnappyOutputStream`) framing on write;
//! xerial framing or a bare snappy block on read, as `SnappyInputStream` accepts both.
//!
//! Xerial framing: the 8-byte magic `\x82SNAPPY\0`, a big-endian `i32` version (1) and
//! compatible version (1), then chunks of a big-endian `i32` compressed length followed by one
//! raw snappy block. Java writes 32 KiB uncompressed per chunk.

/// The 16-byte xerial stream header Java writes.
pub(crate) const XERIAL_HEADER: [u8; 16] = *b"\x82SNAPPY\x00\x00\x00\x00\x01\x00\x00\x00\x01";
/// Uncompressed bytes per chunk (`SnappyOutputStream`'s default block size).
const CHUNK: usize = 32 * 1024;

/// Compresses `input` into xerial-framed snappy appended to `out`.
pub(crate) fn compress(input: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    out.extend_from_slice(&XERIAL_HEADER);
    let mut enc = snap::raw::Encoder::new();
    for chunk in input.chunks(CHUNK) {
        let at = out.len();
        out.extend_from_slice(&[0; 4]);
        let start = out.len();
        out.resize(start + snap::raw::max_compress_len(chunk.len()), 0);
        let n = enc
            .compress(chunk, &mut out[start..])
            .map_err(|e| e.to_string())?;
        out.truncate(start + n);
        let len = u32::try_from(n).map_err(|_| "snappy chunk too large".to_owned())?;
        out[at..at + 4].copy_from_slice(&len.to_be_bytes());
    }
    Ok(())
}

/// Why snappy decompression failed.
pub(crate) enum SnappyError {
    /// The output would exceed the limit.
    TooLarge,
    /// Malformed input.
    Invalid(String),
}

/// Decompresses xerial-framed or bare snappy, refusing to produce more than `limit` bytes.
pub(crate) fn decompress(input: &[u8], limit: usize) -> Result<Vec<u8>, SnappyError> {
    // snappy-java's SnappyInputStream: a stream that does not start with the full magic is a
    // bare snappy block.
    let Some(mut rest) = input.strip_prefix(&XERIAL_HEADER[..8]) else {
        return block(input, limit, Vec::new());
    };
    if rest.len() < 8 {
        return Err(SnappyError::Invalid("truncated xerial header".into()));
    }
    rest = &rest[8..]; // version and compatible version: Java does not check them on read
    let mut out = Vec::new();
    while !rest.is_empty() {
        let Some((len, tail)) = rest.split_first_chunk::<4>() else {
            return Err(SnappyError::Invalid("truncated xerial chunk length".into()));
        };
        let len = u32::from_be_bytes(*len) as usize;
        if len > tail.len() {
            return Err(SnappyError::Invalid(format!(
                "xerial chunk of {len} bytes but only {} remain",
                tail.len()
            )));
        }
        let (chunk, tail) = tail.split_at(len);
        out = block(chunk, limit, out)?;
        rest = tail;
    }
    Ok(out)
}

/// Appends one raw snappy block to `out`; the declared length is checked before allocating.
fn block(input: &[u8], limit: usize, mut out: Vec<u8>) -> Result<Vec<u8>, SnappyError> {
    let n = snap::raw::decompress_len(input).map_err(|e| SnappyError::Invalid(e.to_string()))?;
    if n > limit.saturating_sub(out.len()) {
        return Err(SnappyError::TooLarge);
    }
    let start = out.len();
    out.resize(start + n, 0);
    let written = snap::raw::Decoder::new()
        .decompress(input, &mut out[start..])
        .map_err(|e| SnappyError::Invalid(e.to_string()))?;
    out.truncate(start + written);
    Ok(out)
}
