//! Encoding v2 record batches: records appended one by one, then compressed and framed with
//! the producer id, epoch and base sequence.

use super::batch::{BATCH_HEADER_LEN, LOG_OVERHEAD, MAGIC_V2};
use super::{compression, BatchAttributes, Compression, Header, RecordsError, TimestampType};
use crate::protocol::codec::Encoder;

/// One record to append: key, value, headers and timestamp (milliseconds since the epoch,
/// -1 for none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordSpec<'r> {
    /// The key, `None` for null.
    pub key: Option<&'r [u8]>,
    /// The value, `None` for null.
    pub value: Option<&'r [u8]>,
    /// The headers, in order.
    pub headers: &'r [Header<'r>],
    /// The timestamp.
    pub timestamp: i64,
}

impl<'r> RecordSpec<'r> {
    /// A record without headers.
    pub fn new(key: Option<&'r [u8]>, value: Option<&'r [u8]>, timestamp: i64) -> Self {
        RecordSpec {
            key,
            value,
            headers: &[],
            timestamp,
        }
    }

    /// The same record with `headers`.
    pub fn with_headers(self, headers: &'r [Header<'r>]) -> Self {
        RecordSpec { headers, ..self }
    }
}

/// Builds one v2 record batch.
///
/// Records are encoded as they are pushed (uncompressed); [`BatchBuilder::finish`]
/// compresses them and writes the header with its CRC-32C. [`BatchBuilder::size_estimate`]
/// lets a producer close a batch at `batch.size`.
///
/// ```
/// use kafka_streams_group::protocol::records::{
///     BatchBuilder, BatchReader, Compression, DecodeLimits, Header, RecordSpec,
/// };
/// let headers = [Header { key: b"trace", value: Some(b"42") }];
/// let mut b = BatchBuilder::new(Compression::Zstd).producer(1000, 0, 17);
/// b.push(&RecordSpec::new(Some(b"k1"), Some(b"v1"), 10).with_headers(&headers))?;
/// b.push(&RecordSpec::new(None, None, 12))?;
/// let mut wire = Vec::new();
/// b.finish(&mut wire)?;
///
/// let raw = BatchReader::new(&wire).next().unwrap()?;
/// assert_eq!((raw.header.producer_id, raw.header.base_sequence), (1000, 17));
/// let batch = raw.decode(&DecodeLimits::default())?;
/// let rs: Vec<_> = batch.records().collect();
/// assert_eq!((rs[1].offset, rs[1].timestamp, rs[1].sequence), (1, 12, 18));
/// assert_eq!(rs[0].headers().next(), Some(headers[0]));
/// assert_eq!((rs[1].key, rs[1].value), (None, None));
/// # Ok::<(), kafka_streams_group::protocol::records::RecordsError>(())
/// ```
#[derive(Debug, Clone)]
pub struct BatchBuilder {
    attributes: BatchAttributes,
    base_offset: i64,
    partition_leader_epoch: i32,
    producer_id: i64,
    producer_epoch: i16,
    base_sequence: i32,
    body: Vec<u8>,
    count: i32,
    base_timestamp: Option<i64>,
    /// The largest record timestamp; not floored at -1, so that a LogAppendTime batch
    /// (whose records all read the batch's max timestamp) re-encodes equal even when that
    /// timestamp is negative (found by the record_batches fuzz target).
    max_timestamp: Option<i64>,
}

impl BatchBuilder {
    /// An empty batch with `compression`, no producer id (-1/-1/-1), base offset 0,
    /// `CreateTime` timestamps.
    pub fn new(compression: Compression) -> BatchBuilder {
        BatchBuilder {
            attributes: BatchAttributes {
                compression,
                ..BatchAttributes::default()
            },
            base_offset: 0,
            partition_leader_epoch: -1,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            body: Vec::new(),
            count: 0,
            base_timestamp: None,
            max_timestamp: None,
        }
    }

    /// Makes room for `bytes` more bytes of records without growing again (a producer sizes
    /// a new batch for `batch.size` at once).
    pub fn reserve(&mut self, bytes: usize) {
        self.body.reserve(bytes);
    }

    /// Sets the idempotent producer's id, epoch and the sequence of the first record.
    pub fn producer(mut self, producer_id: i64, producer_epoch: i16, base_sequence: i32) -> Self {
        self.producer_id = producer_id;
        self.producer_epoch = producer_epoch;
        self.base_sequence = base_sequence;
        self
    }

    /// Marks the batch transactional.
    pub fn transactional(mut self, on: bool) -> Self {
        self.attributes.transactional = on;
        self
    }

    /// Marks the batch a control batch (its one record is a [`super::ControlRecord`]).
    pub fn control(mut self, on: bool) -> Self {
        self.attributes.control = on;
        self
    }

    /// Sets the timestamp type (`LogAppendTime` is what a broker writes, for tests).
    pub fn timestamp_type(mut self, t: TimestampType) -> Self {
        self.attributes.timestamp_type = t;
        self
    }

    /// Sets the base offset (a producer leaves it 0; the broker assigns offsets).
    pub fn base_offset(mut self, offset: i64) -> Self {
        self.base_offset = offset;
        self
    }

    /// Sets the partition leader epoch (a producer leaves it -1).
    pub fn partition_leader_epoch(mut self, epoch: i32) -> Self {
        self.partition_leader_epoch = epoch;
        self
    }

    /// Records pushed so far.
    pub fn len(&self) -> usize {
        self.count as usize
    }

    /// Whether no record was pushed.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The batch size if it were written uncompressed now (an upper bound for `batch.size`
    /// checks; compression usually makes it smaller).
    pub fn size_estimate(&self) -> usize {
        BATCH_HEADER_LEN + self.body.len()
    }

    /// The encoded size `r` would add to the batch.
    pub fn record_size(&self, r: &RecordSpec<'_>) -> Result<usize, RecordsError> {
        let body = self.body_size(r)?;
        Ok(varint_len(body as i64) + body)
    }

    fn body_size(&self, r: &RecordSpec<'_>) -> Result<usize, RecordsError> {
        let ts_delta = r
            .timestamp
            .wrapping_sub(self.base_timestamp.unwrap_or(r.timestamp));
        let mut n = 1 + varint_len(ts_delta) + varint_len(i64::from(self.count));
        n += bytes_size("record key", r.key)?;
        n += bytes_size("record value", r.value)?;
        n += varint_len(r.headers.len() as i64);
        for h in r.headers {
            n += bytes_size("header key", Some(h.key))?;
            n += bytes_size("header value", h.value)?;
        }
        if n > i32::MAX as usize {
            return Err(RecordsError::TooLarge {
                what: "record",
                len: n,
                max: i32::MAX as usize,
            });
        }
        Ok(n)
    }

    /// Appends a record (offset delta = its index, timestamp delta from the first record).
    pub fn push(&mut self, r: &RecordSpec<'_>) -> Result<(), RecordsError> {
        if self.count == i32::MAX {
            return Err(RecordsError::TooLarge {
                what: "batch record count",
                len: self.count as usize + 1,
                max: i32::MAX as usize,
            });
        }
        let size = self.body_size(r)?;
        let base = *self.base_timestamp.get_or_insert(r.timestamp);
        self.max_timestamp = Some(
            self.max_timestamp
                .map_or(r.timestamp, |m| m.max(r.timestamp)),
        );
        let mut e = Encoder::new(&mut self.body);
        e.varint(size as i32);
        e.i8(0);
        e.varlong(r.timestamp.wrapping_sub(base));
        e.varint(self.count);
        put_bytes(&mut e, r.key);
        put_bytes(&mut e, r.value);
        e.varint(r.headers.len() as i32);
        for h in r.headers {
            put_bytes(&mut e, Some(h.key));
            put_bytes(&mut e, h.value);
        }
        self.count += 1;
        Ok(())
    }

    /// Compresses the records and appends the whole batch to `out`.
    pub fn finish(self, out: &mut Vec<u8>) -> Result<(), RecordsError> {
        if self.count == 0 {
            return Err(RecordsError::EmptyBatch);
        }
        let start = out.len();
        let mut e = Encoder::new(out);
        e.i64(self.base_offset);
        e.i32(0); // length, patched below
        e.i32(self.partition_leader_epoch);
        e.i8(MAGIC_V2);
        e.u32(0); // crc, patched below
        e.i16(self.attributes.to_bits());
        e.i32(self.count - 1);
        e.i64(self.base_timestamp.unwrap_or(-1));
        e.i64(self.max_timestamp.unwrap_or(-1));
        e.i64(self.producer_id);
        e.i16(self.producer_epoch);
        e.i32(self.base_sequence);
        e.i32(self.count);
        if let Err(err) = compression::compress(self.attributes.compression, &self.body, out) {
            out.truncate(start);
            return Err(err);
        }
        let length = out.len() - start - LOG_OVERHEAD;
        let Ok(length32) = i32::try_from(length) else {
            out.truncate(start);
            return Err(RecordsError::TooLarge {
                what: "record batch",
                len: length,
                max: i32::MAX as usize,
            });
        };
        out[start + 8..start + 12].copy_from_slice(&length32.to_be_bytes());
        let crc = crc32c::crc32c(&out[start + 21..]);
        out[start + 17..start + 21].copy_from_slice(&crc.to_be_bytes());
        Ok(())
    }
}

/// Encodes one batch of `records` (a convenience over [`BatchBuilder`]).
pub fn encode_batch(
    out: &mut Vec<u8>,
    builder: BatchBuilder,
    records: &[RecordSpec<'_>],
) -> Result<(), RecordsError> {
    let mut builder = builder;
    for r in records {
        builder.push(r)?;
    }
    builder.finish(out)
}

fn bytes_size(what: &'static str, b: Option<&[u8]>) -> Result<usize, RecordsError> {
    match b {
        None => Ok(1),
        Some(b) if b.len() > i32::MAX as usize => Err(RecordsError::TooLarge {
            what,
            len: b.len(),
            max: i32::MAX as usize,
        }),
        Some(b) => Ok(varint_len(b.len() as i64) + b.len()),
    }
}

fn put_bytes(e: &mut Encoder<'_>, b: Option<&[u8]>) {
    match b {
        None => e.varint(-1),
        Some(b) => {
            e.varint(b.len() as i32);
            e.raw(b);
        }
    }
}

/// Bytes of the zig-zag varint/varlong encoding of `v`.
fn varint_len(v: i64) -> usize {
    let z = ((v << 1) ^ (v >> 63)) as u64;
    let bits = 64 - (z | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

#[cfg(test)]
mod tests {
    use super::varint_len;
    use crate::protocol::codec::Encoder;

    #[test]
    fn varint_len_matches_the_encoder() {
        for v in [
            0i64,
            1,
            -1,
            63,
            -64,
            64,
            -65,
            8191,
            8192,
            i32::MAX as i64,
            i32::MIN as i64,
            i64::MAX,
            i64::MIN,
        ] {
            let mut buf = Vec::new();
            Encoder::new(&mut buf).varlong(v);
            assert_eq!(varint_len(v), buf.len(), "{v}");
        }
    }
}
