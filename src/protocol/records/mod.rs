//! Record batches (magic 2): decode, encode, compression, read-committed filtering, and
//! Java's default partitioner.
//!
//! Pure: no I/O, no clock. The layout is Kafka's `DefaultRecordBatch`/`DefaultRecord`:
//! a 61-byte header (base offset, length, leader epoch, magic, CRC-32C, attributes, last
//! offset delta, base/max timestamp, producer id/epoch, base sequence, record count) and
//! varint-framed records with deltas, nullable key/value and headers.
//!
//! * [`BatchReader`] splits a Fetch `records` blob into [`RawBatch`]es (length, magic and
//!   CRC checked; a partial trailing batch is not an error);
//! * [`RawBatch::decode`] decompresses within [`DecodeLimits`] and indexes the records once;
//!   [`Record`]s borrow their key, value and headers from the input (uncompressed) or the
//!   batch's one decompressed buffer: no per-record copy;
//! * [`ReadCommitted`] / [`admit_uncommitted`] skip control batches and aborted
//!   transactional data;
//! * [`BatchBuilder`] writes batches with producer id, epoch and base sequence;
//! * [`partition_for_key`] is Java's `BuiltInPartitioner.partitionForKey`.
//!
//! Codecs (both directions): none, gzip, snappy (xerial framing on write, as Java's
//! `SnappyOutputStream`; xerial or bare on read), lz4 (LZ4 frame, 64 KiB independent blocks,
//! as Java's `Lz4BlockOutputStream`), zstd.
//!
//! ```
//! use kafka_streams_group::protocol::records::{
//!     admit_uncommitted, Admit, BatchBuilder, BatchReader, Compression, DecodeLimits,
//!     RecordSpec,
//! };
//! let mut wire = Vec::new();
//! for codec in Compression::ALL {
//!     let mut b = BatchBuilder::new(codec).base_offset(wire.len() as i64);
//!     b.push(&RecordSpec::new(Some(b"key"), Some(codec.name().as_bytes()), 1))?;
//!     b.finish(&mut wire)?;
//! }
//! let mut values = Vec::new();
//! for raw in BatchReader::new(&wire) {
//!     let raw = raw?;
//!     if admit_uncommitted(&raw) == Admit::Deliver {
//!         let batch = raw.decode(&DecodeLimits::default())?;
//!         values.extend(batch.records().map(|r| r.value.unwrap().to_vec()));
//!     }
//! }
//! assert_eq!(values, [&b"none"[..], b"gzip", b"snappy", b"lz4", b"zstd"]);
//! # Ok::<(), kafka_streams_group::protocol::records::RecordsError>(())
//! ```

mod attributes;
mod batch;
mod compression;
mod control;
mod encode;
mod error;
mod partitioner;
mod read_committed;
mod record;
mod snappy;

pub use attributes::{BatchAttributes, Compression, TimestampType};
pub use batch::{BatchHeader, BatchReader, RawBatch, BATCH_HEADER_LEN, MAGIC_V2};
pub use control::{ControlRecord, ControlRecordType};
pub use encode::{encode_batch, BatchBuilder, RecordSpec};
pub use error::RecordsError;
pub use partitioner::{murmur2, partition_for_key, to_positive};
pub use read_committed::{admit_uncommitted, AbortedTransaction, Admit, ReadCommitted};
pub use record::{DecodeLimits, Header, Headers, Record, RecordBatch, Records};

#[cfg(test)]
mod tests;
