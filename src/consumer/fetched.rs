//! Fetched records that hold a share of their batch's bytes instead of a copy.
//!
//! A [`Record`](crate::protocol::records::Record) borrows from its
//! [`PartitionRecords`], so a caller that keeps records past the next poll (a task queue)
//! used to copy each key and value into its own `Vec`: two allocations and a copy per
//! record. A [`FetchedRecord`] instead keeps a reference-counted handle on the bytes its
//! batch was decoded from (the partition's fetched bytes for an uncompressed batch, the
//! batch's one decompressed buffer otherwise) and byte ranges into them: one allocation per
//! batch at most (the decompressed buffer's handle; the fetched bytes' handle is made once
//! per partition), none per record. Owned copies are made only when asked for
//! ([`FetchedRecord::key_to_vec`], ...).
//!
//! A record keeps its whole buffer alive (up to `max.partition.fetch.bytes` for an
//! uncompressed batch): a caller that keeps a few records of many batches for long should
//! copy them.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;

use crate::protocol::records::{Header, RawBatch, Record, RecordsError};

use super::records::PartitionRecords;
use super::shared::{HeaderSpan, RecordHeaders, SharedBytes, Span, NULL};

/// One fetched record holding a share of its batch's bytes. Cloning it, or keeping it after
/// its [`PartitionRecords`] is dropped, copies no key or value. See the module docs.
#[derive(Clone)]
pub struct FetchedRecord {
    /// Absolute offset.
    pub offset: i64,
    /// The record timestamp (the batch max timestamp under `LogAppendTime`).
    pub timestamp: i64,
    /// Producer sequence of this record, -1 if none.
    pub sequence: i32,
    /// The leader epoch of the batch (`partition_leader_epoch`), -1 if unknown.
    pub leader_epoch: i32,
    bytes: Arc<Vec<u8>>,
    key: Span,
    value: Span,
    /// The batch's header table (`None` when the batch has no header) and this record's
    /// range in it.
    headers: Option<Arc<Vec<HeaderSpan>>>,
    header_range: Range<u32>,
}

impl std::fmt::Debug for FetchedRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FetchedRecord")
            .field("offset", &self.offset)
            .field("timestamp", &self.timestamp)
            .field("key", &self.key())
            .field("value", &self.value().map(<[u8]>::len))
            .field("headers", &self.headers().count())
            .finish()
    }
}

impl FetchedRecord {
    /// The key, `None` for null.
    pub fn key(&self) -> Option<&[u8]> {
        self.key.get(&self.bytes)
    }

    /// The value, `None` for null (a tombstone).
    pub fn value(&self) -> Option<&[u8]> {
        self.value.get(&self.bytes)
    }

    /// The headers, in wire order.
    pub fn headers(&self) -> impl ExactSizeIterator<Item = Header<'_>> + '_ {
        let table = self.headers.as_deref().map_or(&[][..], Vec::as_slice);
        let range = self.header_range.start as usize..self.header_range.end as usize;
        table.get(range).unwrap_or_default().iter().map(|h| Header {
            key: h.key.get(&self.bytes).unwrap_or_default(),
            value: h.value.get(&self.bytes),
        })
    }

    /// An owned copy of the key.
    pub fn key_to_vec(&self) -> Option<Vec<u8>> {
        self.key().map(<[u8]>::to_vec)
    }

    /// An owned copy of the value.
    pub fn value_to_vec(&self) -> Option<Vec<u8>> {
        self.value().map(<[u8]>::to_vec)
    }

    /// Owned copies of the headers.
    pub fn headers_to_vec(&self) -> Vec<(Vec<u8>, Option<Vec<u8>>)> {
        self.headers()
            .map(|h| (h.key.to_vec(), h.value.map(<[u8]>::to_vec)))
            .collect()
    }

    /// Bytes of the buffer this record keeps alive (shared with the other records of its
    /// batch, or of its partition's answer).
    pub fn retained_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// Splits the record into its key, value and headers, each a share of the same buffer
    /// (no byte copied, no allocation; the buffer's reference count grows by one per part
    /// that is there).
    pub fn into_shared(self) -> (Option<SharedBytes>, Option<SharedBytes>, RecordHeaders) {
        let headers = match self.headers {
            Some(table) => RecordHeaders::shared(Arc::clone(&self.bytes), table, self.header_range),
            None => RecordHeaders::default(),
        };
        (
            self.key.share(&self.bytes),
            self.value.share(&self.bytes),
            headers,
        )
    }
}

/// Where `part` lies in `base`, or `None` when it is not inside it.
fn span_in(base: &[u8], part: Option<&[u8]>) -> Option<Span> {
    let Some(part) = part else {
        return Some(Span::NONE);
    };
    // Addresses only compared, never dereferenced: `part` was cut from `base`.
    let start = (part.as_ptr() as usize).checked_sub(base.as_ptr() as usize)?;
    if start.checked_add(part.len())? > base.len() {
        return None;
    }
    let span = Span {
        start: u32::try_from(start).ok()?,
        len: u32::try_from(part.len()).ok().filter(|&n| n != NULL)?,
    };
    Some(span)
}

/// The spans of one record, before its buffer is known to be shared.
pub(crate) struct Spans {
    offset: i64,
    timestamp: i64,
    sequence: i32,
    key: Span,
    value: Span,
    header_range: Range<u32>,
}

fn outside(base_offset: i64, index: usize) -> RecordsError {
    RecordsError::InvalidRecord {
        base_offset,
        index,
        reason: "record bytes outside the batch buffer",
    }
}

/// The spans of `r` in `base`, its headers appended to `table`.
fn spans(
    base: &[u8],
    r: &Record<'_>,
    table: &mut Vec<HeaderSpan>,
    base_offset: i64,
    index: usize,
) -> Result<Spans, RecordsError> {
    let span = |part| span_in(base, part).ok_or_else(|| outside(base_offset, index));
    let first = u32::try_from(table.len()).map_err(|_| outside(base_offset, index))?;
    for h in r.headers() {
        let key = span(Some(h.key))?;
        let value = span(h.value)?;
        table.push(HeaderSpan { key, value });
    }
    let last = u32::try_from(table.len()).map_err(|_| outside(base_offset, index))?;
    Ok(Spans {
        offset: r.offset,
        timestamp: r.timestamp,
        sequence: r.sequence,
        key: span(r.key)?,
        value: span(r.value)?,
        header_range: first..last,
    })
}

impl PartitionRecords {
    /// The records in offset order, each holding a share of its batch's bytes (see
    /// [`FetchedRecord`]): no allocation per record, at most one per batch.
    pub fn records(&self) -> Result<Vec<FetchedRecord>, RecordsError> {
        let mut out = Vec::new();
        self.for_each_shared(|r| out.push(r))?;
        Ok(out)
    }

    /// Calls `f` with every record, in offset order, as a [`FetchedRecord`]; returns how
    /// many there were.
    pub fn for_each_shared(&self, mut f: impl FnMut(FetchedRecord)) -> Result<usize, RecordsError> {
        let mut n = 0;
        let mut scratch = Vec::new();
        for index in 0..self.batches.len() {
            let taken = self.batch_shared(index, self.from, usize::MAX, &mut scratch, &mut f)?;
            n += taken.count;
        }
        Ok(n)
    }

    /// Calls `f` with the records of batch `index` at or above offset `from`, at most `max`
    /// of them, in offset order, as [`FetchedRecord`]s. `scratch` is reused between calls.
    pub(crate) fn batch_shared(
        &self,
        index: usize,
        from: i64,
        max: usize,
        scratch: &mut Vec<Spans>,
        f: &mut impl FnMut(FetchedRecord),
    ) -> Result<Taken, RecordsError> {
        let mut taken = Taken {
            count: 0,
            next: None,
        };
        let Some((header, range)) = self.batches.get(index) else {
            return Ok(taken);
        };
        let raw = RawBatch {
            header: *header,
            bytes: self.buf.get(range.clone()).unwrap_or_default(),
        };
        let batch = raw.decode(&self.limits)?;
        let base: &[u8] = if batch.is_borrowed() {
            &self.buf
        } else {
            batch.data()
        };
        let mut table = Vec::new();
        scratch.clear();
        for (i, r) in batch.records().enumerate() {
            if r.offset < from {
                continue;
            }
            if scratch.len() == max {
                taken.next = Some(r.offset);
                break;
            }
            scratch.push(spans(base, &r, &mut table, header.base_offset, i)?);
        }
        let bytes = match batch.into_data() {
            Cow::Borrowed(_) => Arc::clone(&self.buf),
            Cow::Owned(v) => Arc::new(v),
        };
        let table = (!table.is_empty()).then(|| Arc::new(table));
        for s in scratch.drain(..) {
            f(FetchedRecord {
                offset: s.offset,
                timestamp: s.timestamp,
                sequence: s.sequence,
                leader_epoch: header.partition_leader_epoch,
                bytes: Arc::clone(&bytes),
                key: s.key,
                value: s.value,
                headers: table.clone(),
                header_range: s.header_range,
            });
            taken.count += 1;
        }
        Ok(taken)
    }
}

/// What [`PartitionRecords::batch_shared`] handed out of one batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Taken {
    /// Records handed out.
    pub(crate) count: usize,
    /// The offset of the first record left in the batch (the `max` was reached), if any.
    pub(crate) next: Option<i64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::records::{BatchBuilder, Compression, RecordSpec};

    #[test]
    fn span_in_finds_sub_slices_and_refuses_others() {
        let base = b"hello world".to_vec();
        assert_eq!(
            span_in(&base, Some(&base[6..11])),
            Some(Span { start: 6, len: 5 })
        );
        assert_eq!(span_in(&base, None), Some(Span::NONE));
        let other = b"xyz".to_vec();
        assert_eq!(span_in(&base[..5], Some(&base[6..8])), None);
        assert!(span_in(&base, Some(&other)).is_none() || other.as_ptr() > base.as_ptr());
    }

    fn batch(codec: Compression, base: i64) -> Vec<u8> {
        let mut b = BatchBuilder::new(codec).base_offset(base);
        for i in 0..4 {
            let key = format!("k{i}");
            let value = format!("v{i}");
            let headers = [
                Header {
                    key: b"h",
                    value: Some(b"x"),
                },
                Header {
                    key: b"n",
                    value: None,
                },
            ];
            let spec = RecordSpec::new(
                (i != 1).then_some(key.as_bytes()),
                (i != 2).then_some(value.as_bytes()),
                100 + i,
            )
            .with_headers(if i == 3 { &headers } else { &[] });
            b.push(&spec).expect("push");
        }
        let mut out = Vec::new();
        b.finish(&mut out).expect("finish");
        out
    }

    #[test]
    fn shared_records_match_the_borrowed_ones_and_outlive_the_answer() {
        for codec in [Compression::None, Compression::Lz4, Compression::Gzip] {
            let mut buf = batch(codec, 10);
            buf.extend(batch(codec, 14));
            let part = super::super::tests::partition_records(buf, 11);
            let mut expected = Vec::new();
            part.for_each_record(|r| {
                let headers: Vec<(Vec<u8>, Option<Vec<u8>>)> = r
                    .headers()
                    .map(|h| (h.key.to_vec(), h.value.map(<[u8]>::to_vec)))
                    .collect();
                expected.push((
                    r.offset,
                    r.timestamp,
                    r.key.map(<[u8]>::to_vec),
                    r.value.map(<[u8]>::to_vec),
                    headers,
                ));
            })
            .expect("decode");
            let shared = part.records().expect("decode");
            drop(part);
            let got: Vec<_> = shared
                .iter()
                .map(|r| {
                    (
                        r.offset,
                        r.timestamp,
                        r.key_to_vec(),
                        r.value_to_vec(),
                        r.headers_to_vec(),
                    )
                })
                .collect();
            assert_eq!(got, expected, "{codec:?}");
            // Split into shares of the same bytes: the same key, value and headers.
            let split: Vec<_> = shared
                .iter()
                .map(|r| {
                    let (key, value, headers) = r.clone().into_shared();
                    let buffer = key.as_ref().or(value.as_ref()).map(|b| b.retained_bytes());
                    assert_eq!(buffer, Some(r.retained_bytes()), "{codec:?}: one buffer");
                    (
                        r.offset,
                        r.timestamp,
                        key.map(|k| k.to_vec()),
                        value.map(|v| v.to_vec()),
                        headers.to_vec(),
                    )
                })
                .collect();
            assert_eq!(split, expected, "{codec:?}: into_shared");
            assert_eq!(got.len(), 7, "{codec:?}: offsets 11..18");
            assert_eq!(
                shared[0].offset, 11,
                "{codec:?}: below the position skipped"
            );
            assert_eq!(shared[0].key(), None, "{codec:?}: offset 11 has a null key");
            assert_eq!(shared[1].value(), None, "{codec:?}: offset 12 a null value");
            assert_eq!(shared[2].headers().len(), 2, "{codec:?}");
        }
    }
}
