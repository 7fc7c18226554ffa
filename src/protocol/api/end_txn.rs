//! EndTxn (API key 26), versions 0-5; flexible from v3.
//!
//! A transactional producer ends its transaction with it (`committed` = commit or abort),
//! sent to its transaction coordinator. v5 (transaction version 2, KIP-890) answers with
//! the producer id and the epoch the coordinator bumped to: the producer uses them for its
//! next transaction.

use crate::protocol::codec::{
    ApiMessage, Decodable, DecodeError, Decoder, Encodable, EncodeError, Encoder, Request,
};
use crate::protocol::error::BrokerErrorKind;

/// `EndTxnRequest`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct EndTxnRequest {
    /// `TransactionalId`.
    pub transactional_id: String,
    /// `ProducerId`.
    pub producer_id: i64,
    /// `ProducerEpoch`.
    pub producer_epoch: i16,
    /// `Committed`: true to commit, false to abort.
    pub committed: bool,
}

impl Encodable for EndTxnRequest {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 3;
        enc.string_as("TransactionalId", &self.transactional_id, flex)?;
        enc.i64(self.producer_id);
        enc.i16(self.producer_epoch);
        enc.bool(self.committed);
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for EndTxnRequest {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 3;
        let r = EndTxnRequest {
            transactional_id: dec.string_as("TransactionalId", flex)?,
            producer_id: dec.i64("ProducerId")?,
            producer_epoch: dec.i16("ProducerEpoch")?,
            committed: dec.bool("Committed")?,
        };
        dec.end_struct(flex)?;
        Ok(r)
    }
}

impl ApiMessage for EndTxnRequest {
    const API_KEY: i16 = 26;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 5;
    const FLEXIBLE_FROM: i16 = 3;
    const NAME: &'static str = "EndTxnRequest";
}

impl Request for EndTxnRequest {
    type Response = EndTxnResponse;
}

/// `EndTxnResponse`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct EndTxnResponse {
    /// `ThrottleTimeMs`.
    pub throttle_time_ms: i32,
    /// `ErrorCode`.
    pub error_code: i16,
    /// `ProducerId` (v5+, default -1, ignorable): the producer id for the next transaction.
    pub producer_id: i64,
    /// `ProducerEpoch` (v5+, default -1, ignorable): the bumped epoch for the next
    /// transaction.
    pub producer_epoch: i16,
}

impl Default for EndTxnResponse {
    fn default() -> Self {
        EndTxnResponse {
            throttle_time_ms: 0,
            error_code: 0,
            producer_id: -1,
            producer_epoch: -1,
        }
    }
}

impl EndTxnResponse {
    /// The error.
    pub fn error(&self) -> BrokerErrorKind {
        BrokerErrorKind::from_code(self.error_code)
    }
}

impl Encodable for EndTxnResponse {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 3;
        enc.i32(self.throttle_time_ms);
        enc.i16(self.error_code);
        if version >= 5 {
            enc.i64(self.producer_id);
            enc.i16(self.producer_epoch);
        }
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for EndTxnResponse {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 3;
        let mut r = EndTxnResponse {
            throttle_time_ms: dec.i32("ThrottleTimeMs")?,
            error_code: dec.i16("ErrorCode")?,
            ..Default::default()
        };
        if version >= 5 {
            r.producer_id = dec.i64("ProducerId")?;
            r.producer_epoch = dec.i16("ProducerEpoch")?;
        }
        dec.end_struct(flex)?;
        Ok(r)
    }
}

impl ApiMessage for EndTxnResponse {
    const API_KEY: i16 = 26;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 5;
    const FLEXIBLE_FROM: i16 = 3;
    const NAME: &'static str = "EndTxnResponse";
}

impl crate::protocol::codec::Response for EndTxnResponse {
    type Request = EndTxnRequest;
}

#[cfg(test)]
mod tests;
