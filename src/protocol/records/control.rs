//! Control records: the commit/abort markers a transaction coordinator writes.

use crate::protocol::codec::{DecodeError, Decoder};

/// The kind of a control record (its key's `type` field).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ControlRecordType {
    /// A transaction was aborted (0): its data must not be read under `read_committed`.
    Abort,
    /// A transaction committed (1).
    Commit,
    /// Any other type (KRaft-internal markers, or a future one); skipped like all control data.
    Other(i16),
}

impl ControlRecordType {
    /// The wire value.
    pub fn code(self) -> i16 {
        match self {
            ControlRecordType::Abort => 0,
            ControlRecordType::Commit => 1,
            ControlRecordType::Other(c) => c,
        }
    }

    fn from_code(code: i16) -> ControlRecordType {
        match code {
            0 => ControlRecordType::Abort,
            1 => ControlRecordType::Commit,
            c => ControlRecordType::Other(c),
        }
    }
}

/// A parsed control record.
///
/// ```
/// use kafka_streams_group::protocol::records::{ControlRecord, ControlRecordType};
/// let c = ControlRecord::parse(Some(&[0, 0, 0, 1]), Some(&[0, 0, 0, 0, 0, 7]))?;
/// assert_eq!(c.kind, ControlRecordType::Commit);
/// assert_eq!(c.coordinator_epoch, Some(7));
/// # Ok::<(), kafka_streams_group::protocol::DecodeError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ControlRecord {
    /// Key version.
    pub version: i16,
    /// Marker kind.
    pub kind: ControlRecordType,
    /// For commit/abort markers with a readable value: the coordinator epoch.
    pub coordinator_epoch: Option<i32>,
}

impl ControlRecord {
    /// The key bytes of a version-0 control record of `kind`.
    pub fn key_bytes(kind: ControlRecordType) -> [u8; 4] {
        let t = kind.code().to_be_bytes();
        [0, 0, t[0], t[1]]
    }

    /// The value bytes of a version-0 commit/abort marker (`EndTransactionMarker`).
    pub fn marker_value_bytes(coordinator_epoch: i32) -> [u8; 6] {
        let e = coordinator_epoch.to_be_bytes();
        [0, 0, e[0], e[1], e[2], e[3]]
    }

    /// Parses a control record's key (`version: i16`, `type: i16`) and, for commit/abort, its
    /// value (`version: i16`, `coordinatorEpoch: i32`) when present.
    pub fn parse(key: Option<&[u8]>, value: Option<&[u8]>) -> Result<ControlRecord, DecodeError> {
        let mut k = Decoder::with_context(key.unwrap_or_default(), "ControlRecordKey", 0);
        let version = k.i16("version")?;
        if version < 0 {
            return Err(k.invalid("version", "negative control record key version"));
        }
        let kind = ControlRecordType::from_code(k.i16("type")?);
        let coordinator_epoch = match (kind, value) {
            (ControlRecordType::Abort | ControlRecordType::Commit, Some(v)) => {
                let mut d = Decoder::with_context(v, "EndTransactionMarker", 0);
                d.i16("version")?;
                Some(d.i32("coordinatorEpoch")?)
            }
            _ => None,
        };
        Ok(ControlRecord {
            version,
            kind,
            coordinator_epoch,
        })
    }
}
