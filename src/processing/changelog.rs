//! SCRATCH stub of helper `state`'s changelog reader (contract only); replaced on merge.
#![allow(missing_docs)]
use std::time::{Duration, Instant};

use crate::consumer::Fetcher;
use crate::error::Error;
use crate::streams::commit::TopicPartition;

use super::store::KeyValueStore;

#[derive(Debug, Clone, Copy)]
pub struct RestoreSummary {
    pub records: u64,
    pub start: i64,
    pub end: i64,
}
#[derive(Debug)]
pub struct ChangelogReader {
    fetcher: Fetcher,
}
impl ChangelogReader {
    pub fn new(fetcher: Fetcher) -> Self {
        ChangelogReader { fetcher }
    }
    pub fn restore(
        &mut self,
        changelog: &TopicPartition,
        store: &mut KeyValueStore,
        deadline: Instant,
    ) -> Result<RestoreSummary, Error> {
        self.fetcher.assign([changelog.clone()]);
        let start = store.changelog_offset().map_or(0, |o| o + 1);
        if store.changelog_offset().is_some() {
            self.fetcher.seek(changelog, start)?;
        } else {
            self.fetcher.seek_to_beginning(changelog)?;
        }
        let mut records = 0u64;
        let mut end = start;
        loop {
            let parts = self
                .fetcher
                .poll((Instant::now() + Duration::from_millis(600)).min(deadline))?;
            if parts.is_empty() {
                return Ok(RestoreSummary {
                    records,
                    start,
                    end,
                });
            }
            let mut done = false;
            for p in parts {
                p.for_each_record(|r| {
                    store.apply_changelog(
                        r.offset,
                        r.key.unwrap_or_default(),
                        r.value,
                        r.timestamp,
                    );
                    records += 1;
                })
                .map_err(|e| Error::InvalidConfiguration {
                    field: "changelog",
                    reason: e.to_string(),
                })?;
                end = p.next_offset();
                done |= p.next_offset() >= p.high_watermark();
            }
            if done || Instant::now() >= deadline {
                return Ok(RestoreSummary {
                    records,
                    start,
                    end,
                });
            }
        }
    }
    pub fn catch_up(
        &mut self,
        _stores: &mut [(&TopicPartition, &mut KeyValueStore)],
        _deadline: Instant,
    ) -> Result<u64, Error> {
        Ok(0)
    }
}
