//! Compressing and decompressing a batch's records section, with a bound on the output.

use std::io::{Read, Write};

use super::{snappy, Compression, RecordsError};

/// Java's default gzip level (`Deflater.DEFAULT_COMPRESSION`, 6).
const GZIP_LEVEL: u32 = 6;
/// Kafka's default zstd level (`compression.zstd.level`, 3).
const ZSTD_LEVEL: i32 = 3;

/// Decompresses `input` (the records section of a batch at `base_offset`); more than `limit`
/// output bytes is [`RecordsError::DecompressedTooLarge`], never an unbounded allocation.
pub(crate) fn decompress(
    codec: Compression,
    input: &[u8],
    limit: usize,
    base_offset: i64,
) -> Result<Vec<u8>, RecordsError> {
    let too_large = || RecordsError::DecompressedTooLarge {
        base_offset,
        codec,
        limit,
    };
    let invalid = |reason: String| RecordsError::Decompress {
        base_offset,
        codec,
        reason,
    };
    let hint = input.len().saturating_mul(2);
    let out = match codec {
        Compression::None => return Ok(input.to_vec()),
        Compression::Gzip => {
            // Java's GZIPInputStream reads concatenated members too.
            read_bounded(flate2::read::MultiGzDecoder::new(input), limit, hint)
        }
        Compression::Snappy => {
            return snappy::decompress(input, limit).map_err(|e| match e {
                snappy::SnappyError::TooLarge => too_large(),
                snappy::SnappyError::Invalid(r) => invalid(r),
            })
        }
        Compression::Lz4 => read_bounded(lz4_flex::frame::FrameDecoder::new(input), limit, hint),
        Compression::Zstd => match zstd::stream::read::Decoder::with_buffer(input) {
            Ok(d) => read_bounded(d, limit, hint),
            Err(e) => Err(Bounded::Io(e)),
        },
    };
    out.map_err(|e| match e {
        Bounded::TooLarge => too_large(),
        Bounded::Io(e) => invalid(e.to_string()),
    })
}

/// Compresses `input` with `codec`, appending to `out`.
pub(crate) fn compress(
    codec: Compression,
    input: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), RecordsError> {
    let fail = |reason: String| RecordsError::Compress { codec, reason };
    match codec {
        Compression::None => out.extend_from_slice(input),
        Compression::Gzip => {
            let mut enc = flate2::write::GzEncoder::new(out, flate2::Compression::new(GZIP_LEVEL));
            enc.write_all(input).map_err(|e| fail(e.to_string()))?;
            enc.finish().map_err(|e| fail(e.to_string()))?;
        }
        Compression::Snappy => snappy::compress(input, out).map_err(fail)?,
        Compression::Lz4 => {
            // What Kafka's Lz4BlockOutputStream writes: 64 KiB independent blocks, no block or
            // content checksum, no content size (Java's reader rejects dependent blocks).
            let info = lz4_flex::frame::FrameInfo::new()
                .block_size(lz4_flex::frame::BlockSize::Max64KB)
                .block_mode(lz4_flex::frame::BlockMode::Independent)
                .block_checksums(false)
                .content_checksum(false);
            let mut enc = lz4_flex::frame::FrameEncoder::with_frame_info(info, out);
            enc.write_all(input).map_err(|e| fail(e.to_string()))?;
            enc.finish().map_err(|e| fail(e.to_string()))?;
        }
        Compression::Zstd => {
            let mut enc = zstd::stream::write::Encoder::new(out, ZSTD_LEVEL)
                .map_err(|e| fail(e.to_string()))?;
            enc.write_all(input).map_err(|e| fail(e.to_string()))?;
            enc.finish().map_err(|e| fail(e.to_string()))?;
        }
    }
    Ok(())
}

enum Bounded {
    TooLarge,
    Io(std::io::Error),
}

/// Reads `r` to its end into a new buffer of at most `limit` bytes. The buffer grows in
/// steps that never exceed `limit + 1`, so a bomb costs at most the limit in memory.
fn read_bounded(mut r: impl Read, limit: usize, hint: usize) -> Result<Vec<u8>, Bounded> {
    let cap = limit.saturating_add(1);
    let mut buf: Vec<u8> = Vec::new();
    let mut len = 0;
    let mut step = hint.clamp(4096, cap);
    loop {
        if len == buf.len() {
            if buf.len() >= cap {
                return Err(Bounded::TooLarge);
            }
            let new_len = buf.len().saturating_add(step).min(cap);
            buf.reserve_exact(new_len - buf.len());
            buf.resize(new_len, 0);
            step = step.saturating_mul(2);
        }
        match r.read(&mut buf[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Bounded::Io(e)),
        }
        if len > limit {
            return Err(Bounded::TooLarge);
        }
    }
    buf.truncate(len);
    Ok(buf)
}
