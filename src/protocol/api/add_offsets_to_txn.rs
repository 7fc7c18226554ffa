//! AddOffsetsToTxn (API key 25), versions 0-4; flexible from v3.
//!
//! Transaction version 1: before committing a group's offsets in a transaction
//! (TxnOffsetCommit), the producer tells its transaction coordinator which group's offsets
//! partition joins the transaction. Transaction version 2 (KIP-890) drops this step.

use crate::protocol::codec::{
    ApiMessage, Decodable, DecodeError, Decoder, Encodable, EncodeError, Encoder, Request,
};
use crate::protocol::error::BrokerErrorKind;

/// `AddOffsetsToTxnRequest`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct AddOffsetsToTxnRequest {
    /// `TransactionalId`.
    pub transactional_id: String,
    /// `ProducerId`.
    pub producer_id: i64,
    /// `ProducerEpoch`.
    pub producer_epoch: i16,
    /// `GroupId`: the group whose offsets join the transaction.
    pub group_id: String,
}

impl Encodable for AddOffsetsToTxnRequest {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 3;
        enc.string_as("TransactionalId", &self.transactional_id, flex)?;
        enc.i64(self.producer_id);
        enc.i16(self.producer_epoch);
        enc.string_as("GroupId", &self.group_id, flex)?;
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for AddOffsetsToTxnRequest {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 3;
        let r = AddOffsetsToTxnRequest {
            transactional_id: dec.string_as("TransactionalId", flex)?,
            producer_id: dec.i64("ProducerId")?,
            producer_epoch: dec.i16("ProducerEpoch")?,
            group_id: dec.string_as("GroupId", flex)?,
        };
        dec.end_struct(flex)?;
        Ok(r)
    }
}

impl ApiMessage for AddOffsetsToTxnRequest {
    const API_KEY: i16 = 25;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 4;
    const FLEXIBLE_FROM: i16 = 3;
    const NAME: &'static str = "AddOffsetsToTxnRequest";
}

impl Request for AddOffsetsToTxnRequest {
    type Response = AddOffsetsToTxnResponse;
}

/// `AddOffsetsToTxnResponse`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct AddOffsetsToTxnResponse {
    /// `ThrottleTimeMs`.
    pub throttle_time_ms: i32,
    /// `ErrorCode`.
    pub error_code: i16,
}

impl AddOffsetsToTxnResponse {
    /// The error.
    pub fn error(&self) -> BrokerErrorKind {
        BrokerErrorKind::from_code(self.error_code)
    }
}

impl Encodable for AddOffsetsToTxnResponse {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        enc.i32(self.throttle_time_ms);
        enc.i16(self.error_code);
        enc.end_struct(version >= 3);
        Ok(())
    }
}

impl Decodable for AddOffsetsToTxnResponse {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let r = AddOffsetsToTxnResponse {
            throttle_time_ms: dec.i32("ThrottleTimeMs")?,
            error_code: dec.i16("ErrorCode")?,
        };
        dec.end_struct(version >= 3)?;
        Ok(r)
    }
}

impl ApiMessage for AddOffsetsToTxnResponse {
    const API_KEY: i16 = 25;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 4;
    const FLEXIBLE_FROM: i16 = 3;
    const NAME: &'static str = "AddOffsetsToTxnResponse";
}

impl crate::protocol::codec::Response for AddOffsetsToTxnResponse {
    type Request = AddOffsetsToTxnRequest;
}

#[cfg(test)]
mod tests;
