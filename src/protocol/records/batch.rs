//! Splitting a records blob into v2 batches: header fields, length and CRC-32C checks.

use super::{BatchAttributes, RecordsError};
use crate::protocol::codec::Decoder;

/// The only record batch format this library reads and writes (magic 2).
pub const MAGIC_V2: i8 = 2;
/// Bytes of a v2 batch before its first record.
pub const BATCH_HEADER_LEN: usize = 61;
/// Base offset and batch length: the bytes before the length-counted part of a batch.
pub(crate) const LOG_OVERHEAD: usize = 12;
/// Bytes needed to see a batch's magic byte.
const UP_TO_MAGIC: usize = 17;
/// Where the CRC-covered part (attributes onwards) starts.
const CRC_START: usize = 21;
/// Smallest legal batch length field: the header after the length field.
const MIN_BATCH_LENGTH: i32 = (BATCH_HEADER_LEN - LOG_OVERHEAD) as i32;

/// The fixed 61-byte header of a v2 record batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BatchHeader {
    /// Offset of the first record (the broker assigns it on append; 0 from a producer).
    pub base_offset: i64,
    /// Bytes after this field up to the end of the batch.
    pub batch_length: i32,
    /// Leader epoch of the broker that appended the batch (-1 from a producer).
    pub partition_leader_epoch: i32,
    /// Always [`MAGIC_V2`] for a decoded batch.
    pub magic: i8,
    /// CRC-32C over the attributes to the end of the batch.
    pub crc: u32,
    /// Compression, timestamp type, transactional and control bits.
    pub attributes: BatchAttributes,
    /// Offset of the last record minus the base offset (kept by compaction).
    pub last_offset_delta: i32,
    /// Timestamp of the first record (or the delete horizon, see the attributes).
    pub base_timestamp: i64,
    /// Largest record timestamp (the append time for `LogAppendTime`).
    pub max_timestamp: i64,
    /// Idempotent/transactional producer id, -1 if none.
    pub producer_id: i64,
    /// Producer epoch, -1 if none.
    pub producer_epoch: i16,
    /// Sequence of the first record, -1 if none.
    pub base_sequence: i32,
    /// Number of records the batch declares.
    pub records_count: i32,
}

impl BatchHeader {
    /// Offset of the last record, including records removed by compaction.
    pub fn last_offset(&self) -> i64 {
        self.base_offset
            .wrapping_add(i64::from(self.last_offset_delta))
    }

    /// The offset after this batch: where the next fetch continues.
    pub fn next_offset(&self) -> i64 {
        self.last_offset().wrapping_add(1)
    }

    /// Whether the batch came from an idempotent or transactional producer.
    pub fn has_producer_id(&self) -> bool {
        self.producer_id >= 0
    }

    /// Total size of the batch on the wire.
    pub fn size_in_bytes(&self) -> usize {
        LOG_OVERHEAD + self.batch_length.max(0) as usize
    }
}

/// One v2 batch, header parsed and CRC verified; records not yet decompressed or decoded.
///
/// Cheap to make: a read-committed filter or an offset check can skip a batch without
/// touching its records. [`RawBatch::decode`] gives the records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawBatch<'a> {
    /// The parsed header.
    pub header: BatchHeader,
    /// The whole batch as it is on the wire.
    pub bytes: &'a [u8],
}

impl<'a> RawBatch<'a> {
    /// The records section after the header (compressed if the attributes say so).
    pub fn records_section(&self) -> &'a [u8] {
        self.bytes.get(BATCH_HEADER_LEN..).unwrap_or_default()
    }

    /// Parses the one complete batch at the start of `bytes`, which must be at least
    /// `LOG_OVERHEAD + batch_length` long (the reader checks that), and verifies its CRC.
    fn parse(bytes: &'a [u8], base_offset: i64) -> Result<RawBatch<'a>, RecordsError> {
        let malformed = |source| RecordsError::Malformed {
            base_offset,
            source,
        };
        let mut d = Decoder::with_context(bytes, "RecordBatch", i16::from(MAGIC_V2));
        let h = (|| {
            Ok(BatchHeader {
                base_offset: d.i64("baseOffset")?,
                batch_length: d.i32("batchLength")?,
                partition_leader_epoch: d.i32("partitionLeaderEpoch")?,
                magic: d.i8("magic")?,
                crc: d.u32("crc")?,
                attributes: BatchAttributes::default(),
                last_offset_delta: 0,
                base_timestamp: 0,
                max_timestamp: 0,
                producer_id: 0,
                producer_epoch: 0,
                base_sequence: 0,
                records_count: 0,
            })
        })()
        .map_err(malformed)?;
        let computed = crc32c::crc32c(bytes.get(CRC_START..).unwrap_or_default());
        if computed != h.crc {
            return Err(RecordsError::CorruptCrc {
                base_offset,
                stored: h.crc,
                computed,
            });
        }
        let bits = d.i16("attributes").map_err(malformed)?;
        let attributes = BatchAttributes::from_bits(bits)
            .map_err(|code| RecordsError::UnknownCompression { base_offset, code })?;
        let header = (|| {
            Ok(BatchHeader {
                attributes,
                last_offset_delta: d.i32("lastOffsetDelta")?,
                base_timestamp: d.i64("baseTimestamp")?,
                max_timestamp: d.i64("maxTimestamp")?,
                producer_id: d.i64("producerId")?,
                producer_epoch: d.i16("producerEpoch")?,
                base_sequence: d.i32("baseSequence")?,
                records_count: d.i32("recordsCount")?,
                ..h
            })
        })()
        .map_err(malformed)?;
        if header.records_count < 0 {
            return Err(RecordsError::InvalidRecord {
                base_offset,
                index: 0,
                reason: "negative record count",
            });
        }
        Ok(RawBatch { header, bytes })
    }
}

/// Iterates over the v2 batches of a records blob (a Fetch response partition's `records`,
/// or a Produce request's), in order.
///
/// A partial batch at the end (the broker cuts a response at the fetch size) ends the
/// iteration without an error; [`BatchReader::remainder`] shows it. After an error the
/// reader yields nothing more: a corrupt batch makes the rest of the blob unreadable.
///
/// ```
/// use kafka_streams_group::protocol::records::{
///     BatchBuilder, BatchReader, Compression, DecodeLimits, RecordSpec,
/// };
/// let mut wire = Vec::new();
/// let mut b = BatchBuilder::new(Compression::Lz4);
/// b.push(&RecordSpec::new(Some(b"k"), Some(b"v"), 1_700_000_000_000))?;
/// b.finish(&mut wire)?;
///
/// let mut reader = BatchReader::new(&wire[..wire.len() - 1]); // the last byte is missing
/// assert!(reader.next().is_none());
/// assert_eq!(reader.remainder().len(), wire.len() - 1);
///
/// let batch = BatchReader::new(&wire).next().unwrap()?;
/// let records = batch.decode(&DecodeLimits::default())?;
/// let r = records.records().next().unwrap();
/// assert_eq!((r.offset, r.key, r.value), (0, Some(&b"k"[..]), Some(&b"v"[..])));
/// # Ok::<(), kafka_streams_group::protocol::records::RecordsError>(())
/// ```
#[derive(Debug, Clone)]
pub struct BatchReader<'a> {
    rest: &'a [u8],
    failed: bool,
}

impl<'a> BatchReader<'a> {
    /// A reader over `records` (concatenated batches).
    pub fn new(records: &'a [u8]) -> BatchReader<'a> {
        BatchReader {
            rest: records,
            failed: false,
        }
    }

    /// The bytes not yet returned: after the iteration ends without an error, a trailing
    /// partial batch (empty if there was none).
    pub fn remainder(&self) -> &'a [u8] {
        self.rest
    }

    fn next_batch(&mut self) -> Option<Result<RawBatch<'a>, RecordsError>> {
        let rest = self.rest;
        if rest.len() < UP_TO_MAGIC {
            return None;
        }
        let mut d = Decoder::new(rest);
        let base_offset = d.i64("baseOffset").ok()?;
        let length = d.i32("batchLength").ok()?;
        let magic = rest[UP_TO_MAGIC - 1] as i8;
        if magic != MAGIC_V2 {
            return Some(Err(RecordsError::UnsupportedMagic { base_offset, magic }));
        }
        if length < MIN_BATCH_LENGTH {
            return Some(Err(RecordsError::InvalidBatchLength {
                base_offset,
                length,
            }));
        }
        let total = LOG_OVERHEAD + length as usize;
        if rest.len() < total {
            return None;
        }
        let (bytes, tail) = rest.split_at(total);
        let batch = RawBatch::parse(bytes, base_offset);
        if batch.is_ok() {
            self.rest = tail;
        }
        Some(batch)
    }
}

impl<'a> Iterator for BatchReader<'a> {
    type Item = Result<RawBatch<'a>, RecordsError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let item = self.next_batch();
        if matches!(item, Some(Err(_))) {
            self.failed = true;
        }
        item
    }
}

impl std::iter::FusedIterator for BatchReader<'_> {}
