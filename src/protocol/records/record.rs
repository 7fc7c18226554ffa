//! Decoding a batch's records: index the key, value and header ranges once, then hand out
//! records that borrow from the (input or decompressed) bytes.

use std::borrow::Cow;

use super::batch::{RawBatch, BATCH_HEADER_LEN};
use super::control::ControlRecord;
use super::{compression, BatchHeader, Compression, RecordsError, TimestampType};
use crate::protocol::codec::{DecodeError, Decoder};

/// Bounds applied while decoding records from the network.
///
/// ```
/// use kafka_streams_group::protocol::records::DecodeLimits;
/// let limits = DecodeLimits { max_decompressed_bytes: 8 << 20 };
/// assert!(limits.max_decompressed_bytes < DecodeLimits::default().max_decompressed_bytes);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeLimits {
    /// Most bytes one compressed batch may decompress to; more is
    /// [`RecordsError::DecompressedTooLarge`]. Default 64 MiB: above a broker's default
    /// `message.max.bytes` (1 MiB) times any realistic compression ratio of real data.
    pub max_decompressed_bytes: usize,
}

impl DecodeLimits {
    /// The default bound on one batch's decompressed size (64 MiB).
    pub const DEFAULT_MAX_DECOMPRESSED_BYTES: usize = 64 << 20;
}

impl Default for DecodeLimits {
    fn default() -> Self {
        DecodeLimits {
            max_decompressed_bytes: Self::DEFAULT_MAX_DECOMPRESSED_BYTES,
        }
    }
}

/// A byte range in the batch's data; `len == NULL` marks a null key/value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    start: u32,
    len: u32,
}

const NULL: u32 = u32::MAX;

impl Span {
    fn get(self, data: &[u8]) -> Option<&[u8]> {
        if self.len == NULL {
            return None;
        }
        let start = self.start as usize;
        data.get(start..start + self.len as usize)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct RecordIndex {
    attributes: i8,
    timestamp_delta: i64,
    offset_delta: i32,
    key: Span,
    value: Span,
    /// Range into the batch's header table.
    headers_start: u32,
    headers_len: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct HeaderIndex {
    key: Span,
    value: Span,
}

/// A decoded batch: the header and its records, which borrow from the input (uncompressed)
/// or from the batch's own decompressed buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordBatch<'a> {
    /// The batch header.
    pub header: BatchHeader,
    data: Cow<'a, [u8]>,
    records: Vec<RecordIndex>,
    headers: Vec<HeaderIndex>,
}

/// One record header: a key (a UTF-8 string in Java; kept as bytes here, see
/// [`Header::key_str`]) and a nullable value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Header<'b> {
    /// The header key bytes.
    pub key: &'b [u8],
    /// The header value, `None` for null.
    pub value: Option<&'b [u8]>,
}

impl<'b> Header<'b> {
    /// The key as text, invalid UTF-8 replaced as Java's `Utils.utf8` does.
    pub fn key_str(&self) -> Cow<'b, str> {
        String::from_utf8_lossy(self.key)
    }
}

/// The headers of one record, in wire order.
#[derive(Debug, Clone)]
pub struct Headers<'b> {
    data: &'b [u8],
    items: std::slice::Iter<'b, HeaderIndex>,
}

impl<'b> Iterator for Headers<'b> {
    type Item = Header<'b>;
    fn next(&mut self) -> Option<Header<'b>> {
        let h = self.items.next()?;
        Some(Header {
            key: h.key.get(self.data).unwrap_or_default(),
            value: h.value.get(self.data),
        })
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.items.size_hint()
    }
}

impl ExactSizeIterator for Headers<'_> {}

/// One record, borrowing its key, value and headers from the decoded batch.
#[derive(Debug, Clone)]
pub struct Record<'b> {
    /// Absolute offset: base offset + offset delta.
    pub offset: i64,
    /// The record timestamp (the batch max timestamp under `LogAppendTime`).
    pub timestamp: i64,
    /// Producer sequence of this record (base sequence + offset delta), -1 if none.
    pub sequence: i32,
    /// The key, `None` for null.
    pub key: Option<&'b [u8]>,
    /// The value, `None` for null (a tombstone).
    pub value: Option<&'b [u8]>,
    /// The record-level attributes byte (unused by Kafka today).
    pub attributes: i8,
    headers: Headers<'b>,
}

impl<'b> Record<'b> {
    /// The record's headers.
    pub fn headers(&self) -> Headers<'b> {
        self.headers.clone()
    }
}

/// Iterator over a batch's records.
#[derive(Debug, Clone)]
pub struct Records<'b> {
    batch: &'b RecordBatch<'b>,
    items: std::slice::Iter<'b, RecordIndex>,
}

impl<'b> Iterator for Records<'b> {
    type Item = Record<'b>;
    fn next(&mut self) -> Option<Record<'b>> {
        let r = self.items.next()?;
        Some(self.batch.view(r))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.items.size_hint()
    }
}

impl ExactSizeIterator for Records<'_> {}

impl<'a> RecordBatch<'a> {
    /// Number of records.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether the batch holds no records (compaction can empty a batch).
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Whether the records are borrowed from the input (no copy was made).
    pub fn is_borrowed(&self) -> bool {
        matches!(self.data, Cow::Borrowed(_))
    }

    /// The bytes the records' keys, values and headers point into: the input's records
    /// section (uncompressed) or the batch's decompressed buffer.
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// [`data`](Self::data), taken out of the batch: the decompressed buffer itself (no
    /// copy) or the borrowed input. The consumer's shared records keep it.
    pub fn into_data(self) -> Cow<'a, [u8]> {
        self.data
    }

    /// The records in order.
    pub fn records(&self) -> Records<'_> {
        Records {
            batch: self,
            items: self.records.iter(),
        }
    }

    /// The `i`-th record.
    pub fn get(&self, i: usize) -> Option<Record<'_>> {
        self.records.get(i).map(|r| self.view(r))
    }

    /// For a control batch, its marker (parsed from the first record); `None` otherwise.
    pub fn control_record(&self) -> Option<Result<ControlRecord, RecordsError>> {
        if !self.header.attributes.control {
            return None;
        }
        let r = self.get(0)?;
        Some(
            ControlRecord::parse(r.key, r.value).map_err(|source| RecordsError::Malformed {
                base_offset: self.header.base_offset,
                source,
            }),
        )
    }

    fn view<'b>(&'b self, r: &'b RecordIndex) -> Record<'b> {
        let h = &self.header;
        let data: &'b [u8] = &self.data;
        let timestamp = match h.attributes.timestamp_type {
            TimestampType::LogAppendTime => h.max_timestamp,
            TimestampType::CreateTime => h.base_timestamp.wrapping_add(r.timestamp_delta),
        };
        let start = r.headers_start as usize;
        let headers = self
            .headers
            .get(start..start + r.headers_len as usize)
            .unwrap_or_default();
        Record {
            offset: h.base_offset.wrapping_add(i64::from(r.offset_delta)),
            timestamp,
            sequence: if h.base_sequence < 0 {
                -1
            } else {
                // Java's DefaultRecordBatch.incrementSequence: wraps at i32::MAX to 0.
                let s = i64::from(h.base_sequence) + i64::from(r.offset_delta);
                (s % (i64::from(i32::MAX) + 1)) as i32
            },
            key: r.key.get(data),
            value: r.value.get(data),
            attributes: r.attributes,
            headers: Headers {
                data,
                items: headers.iter(),
            },
        }
    }
}

impl<'a> RawBatch<'a> {
    /// Decompresses (if needed) and decodes the records. Uncompressed batches are not
    /// copied: the records borrow from the input.
    pub fn decode(&self, limits: &DecodeLimits) -> Result<RecordBatch<'a>, RecordsError> {
        let header = self.header;
        let base_offset = header.base_offset;
        let section = self.bytes.get(BATCH_HEADER_LEN..).unwrap_or_default();
        let data: Cow<'a, [u8]> = match header.attributes.compression {
            Compression::None => Cow::Borrowed(section),
            codec => Cow::Owned(compression::decompress(
                codec,
                section,
                limits.max_decompressed_bytes,
                base_offset,
            )?),
        };
        if u32::try_from(data.len()).map_or(true, |n| n == NULL) {
            return Err(RecordsError::DecompressedTooLarge {
                base_offset,
                codec: header.attributes.compression,
                limit: NULL as usize - 1,
            });
        }
        let (records, headers) = index_records(&data, header.records_count, base_offset)?;
        Ok(RecordBatch {
            header,
            data,
            records,
            headers,
        })
    }
}

/// Smallest encoded record: length, attributes, timestamp delta, offset delta, key length,
/// value length and header count, one byte each.
const MIN_RECORD_LEN: usize = 7;

fn index_records(
    data: &[u8],
    count: i32,
    base_offset: i64,
) -> Result<(Vec<RecordIndex>, Vec<HeaderIndex>), RecordsError> {
    let count = count.max(0) as usize;
    let invalid = |index, reason| RecordsError::InvalidRecord {
        base_offset,
        index,
        reason,
    };
    if count > data.len() / MIN_RECORD_LEN {
        return Err(invalid(
            0,
            "the record count exceeds what the batch bytes can hold",
        ));
    }
    let mut records = Vec::with_capacity(count);
    let mut headers = Vec::new();
    let mut d = Decoder::with_context(data, "Record", 2);
    for index in 0..count {
        let rec = read_record(&mut d, data, &mut headers).map_err(|e| match e {
            RecordFault::Decode(source) => RecordsError::Malformed {
                base_offset,
                source,
            },
            RecordFault::Invalid(reason) => invalid(index, reason),
        })?;
        records.push(rec);
    }
    if !d.is_empty() {
        return Err(invalid(
            count,
            "bytes remain after the declared number of records",
        ));
    }
    Ok((records, headers))
}

enum RecordFault {
    Decode(DecodeError),
    Invalid(&'static str),
}

impl From<DecodeError> for RecordFault {
    fn from(e: DecodeError) -> Self {
        RecordFault::Decode(e)
    }
}

/// A span of `len` bytes at the decoder's position (`len < 0` is null), advancing past it.
fn span(d: &mut Decoder<'_>, field: &'static str, len: i32) -> Result<Span, DecodeError> {
    if len < 0 {
        return Ok(Span {
            start: 0,
            len: NULL,
        });
    }
    let start = d.position() as u32;
    d.raw(field, len as usize)?;
    Ok(Span {
        start,
        len: len as u32,
    })
}

fn read_record(
    d: &mut Decoder<'_>,
    data: &[u8],
    headers: &mut Vec<HeaderIndex>,
) -> Result<RecordIndex, RecordFault> {
    let size = d.varint("length")?;
    if size < 0 {
        return Err(RecordFault::Invalid("negative record length"));
    }
    let start = d.position();
    let end = start + size as usize;
    if end > data.len() {
        return Err(RecordFault::Invalid("record length exceeds the batch"));
    }
    // Decode the body from a decoder bounded to it, positions kept absolute.
    let mut body = Decoder::with_context(&data[..end], "Record", 2);
    body.raw("skip", start)?;
    let attributes = body.i8("attributes")?;
    let timestamp_delta = body.varlong("timestampDelta")?;
    let offset_delta = body.varint("offsetDelta")?;
    let key_len = body.varint("keyLength")?;
    let key = span(&mut body, "key", key_len)?;
    let value_len = body.varint("valueLength")?;
    let value = span(&mut body, "value", value_len)?;
    let n = body.varint("headersCount")?;
    if n < 0 {
        return Err(RecordFault::Invalid("negative header count"));
    }
    if n as usize > body.remaining() / 2 {
        return Err(RecordFault::Invalid(
            "header count exceeds what the record bytes can hold",
        ));
    }
    let headers_start = headers.len() as u32;
    for _ in 0..n {
        let key_len = body.varint("headerKeyLength")?;
        if key_len < 0 {
            return Err(RecordFault::Invalid("negative header key length"));
        }
        let key = span(&mut body, "headerKey", key_len)?;
        let value_len = body.varint("headerValueLength")?;
        let value = span(&mut body, "headerValue", value_len)?;
        headers.push(HeaderIndex { key, value });
    }
    if !body.is_empty() {
        return Err(RecordFault::Invalid(
            "the record length does not match its fields",
        ));
    }
    d.raw("record", size as usize)?;
    Ok(RecordIndex {
        attributes,
        timestamp_delta,
        offset_delta,
        key,
        value,
        headers_start,
        headers_len: n as u32,
    })
}
