//! SCRATCH stub of helper `state`'s stores (contract only); replaced by the real file on merge.
#![allow(missing_docs)]
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreFormat {
    KeyValue,
    TimestampedKeyValue,
}
#[derive(Clone, Debug)]
pub struct ChangelogRecord {
    pub key: Vec<u8>,
    pub value: Option<Vec<u8>>,
    pub timestamp: i64,
}
#[derive(Debug)]
pub struct KeyValueStore {
    name: String,
    format: StoreFormat,
    map: BTreeMap<Vec<u8>, (Vec<u8>, i64)>,
    queued: Vec<ChangelogRecord>,
    offset: Option<i64>,
}
impl KeyValueStore {
    pub fn new(name: impl Into<String>, format: StoreFormat) -> Self {
        KeyValueStore {
            name: name.into(),
            format,
            map: BTreeMap::new(),
            queued: Vec::new(),
            offset: None,
        }
    }
    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn format(&self) -> StoreFormat {
        self.format
    }
    pub fn get(&self, key: &[u8]) -> Option<&[u8]> {
        self.map.get(key).map(|(v, _)| v.as_slice())
    }
    pub fn get_with_timestamp(&self, key: &[u8]) -> Option<(&[u8], i64)> {
        self.map.get(key).map(|(v, t)| (v.as_slice(), *t))
    }
    pub fn put(&mut self, key: &[u8], value: Option<&[u8]>, timestamp: i64) {
        match value {
            Some(v) => {
                self.map.insert(key.to_vec(), (v.to_vec(), timestamp));
            }
            None => {
                self.map.remove(key);
            }
        }
        self.queued.push(ChangelogRecord {
            key: key.to_vec(),
            value: value.map(<[u8]>::to_vec),
            timestamp,
        });
    }
    pub fn take_changelog(&mut self) -> Vec<ChangelogRecord> {
        std::mem::take(&mut self.queued)
    }
    pub fn apply_changelog(
        &mut self,
        offset: i64,
        key: &[u8],
        value: Option<&[u8]>,
        timestamp: i64,
    ) {
        match value {
            Some(v) => {
                self.map.insert(key.to_vec(), (v.to_vec(), timestamp));
            }
            None => {
                self.map.remove(key);
            }
        }
        self.offset = Some(offset);
    }
    pub fn changelog_offset(&self) -> Option<i64> {
        self.offset
    }
    pub fn len(&self) -> usize {
        self.map.len()
    }
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        self.map
            .iter()
            .map(|(k, (v, _))| (k.as_slice(), v.as_slice()))
    }
}
pub fn changelog_topic(application_id: &str, store: &str) -> String {
    format!("{application_id}-{store}-changelog")
}
