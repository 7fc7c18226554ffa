//! SCRATCH stub of helper `state`'s RecordPurger (contract only); replaced on merge.
#![allow(missing_docs)]
use std::collections::BTreeMap;
use std::time::Instant;

use crate::config::ClientConfig;
use crate::error::Error;
use crate::protocol::BrokerErrorKind;
use crate::streams::commit::TopicPartition;

#[derive(Debug)]
pub struct RecordPurger;
impl RecordPurger {
    pub fn new(_client: ClientConfig) -> Self {
        RecordPurger
    }
    pub fn delete_records_before(
        &mut self,
        _offsets: &BTreeMap<TopicPartition, i64>,
        _deadline: Instant,
    ) -> Result<BTreeMap<TopicPartition, Result<i64, BrokerErrorKind>>, Error> {
        Ok(BTreeMap::new())
    }
}
