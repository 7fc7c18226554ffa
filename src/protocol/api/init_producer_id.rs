//! InitProducerId (API key 22), versions 0-6; flexible from v2.
//!
//! An idempotent producer sends it with a null `transactional_id` to obtain a producer id and
//! epoch for its record batches. v3+ can bump the epoch of a known id (`producer_id` and
//! `producer_epoch` set); v6 (two-phase commit, KIP-939) is not yet stable in Kafka 4.x and a
//! broker only accepts it with unstable versions enabled.

use crate::protocol::codec::{
    ensure_default, ApiMessage, Decodable, DecodeError, Decoder, Encodable, EncodeError, Encoder,
    Request,
};
use crate::protocol::error::BrokerErrorKind;

const REQ: &str = "InitProducerIdRequest";
const RESP: &str = "InitProducerIdResponse";

/// `InitProducerIdRequest`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct InitProducerIdRequest {
    /// `TransactionalId` (nullable): `None` for an idempotent, non-transactional producer.
    pub transactional_id: Option<String>,
    /// `TransactionTimeoutMs`: only relevant with a transactional id.
    pub transaction_timeout_ms: i32,
    /// `ProducerId` (v3+, default -1, not ignorable).
    pub producer_id: i64,
    /// `ProducerEpoch` (v3+, default -1, not ignorable).
    pub producer_epoch: i16,
    /// `Enable2Pc` (v6+, not ignorable).
    pub enable_2pc: bool,
    /// `KeepPreparedTxn` (v6+, not ignorable).
    pub keep_prepared_txn: bool,
}

impl Default for InitProducerIdRequest {
    fn default() -> Self {
        InitProducerIdRequest {
            transactional_id: None,
            transaction_timeout_ms: 0,
            producer_id: -1,
            producer_epoch: -1,
            enable_2pc: false,
            keep_prepared_txn: false,
        }
    }
}

impl Encodable for InitProducerIdRequest {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 2;
        enc.nullable_string_as("TransactionalId", self.transactional_id.as_deref(), flex)?;
        enc.i32(self.transaction_timeout_ms);
        if version >= 3 {
            enc.i64(self.producer_id);
            enc.i16(self.producer_epoch);
        } else {
            ensure_default(self.producer_id == -1, REQ, version, "ProducerId")?;
            ensure_default(self.producer_epoch == -1, REQ, version, "ProducerEpoch")?;
        }
        if version >= 6 {
            enc.bool(self.enable_2pc);
            enc.bool(self.keep_prepared_txn);
        } else {
            ensure_default(!self.enable_2pc, REQ, version, "Enable2Pc")?;
            ensure_default(!self.keep_prepared_txn, REQ, version, "KeepPreparedTxn")?;
        }
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for InitProducerIdRequest {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 2;
        let mut r = InitProducerIdRequest {
            transactional_id: dec.nullable_string_as("TransactionalId", flex)?,
            transaction_timeout_ms: dec.i32("TransactionTimeoutMs")?,
            ..Default::default()
        };
        if version >= 3 {
            r.producer_id = dec.i64("ProducerId")?;
            r.producer_epoch = dec.i16("ProducerEpoch")?;
        }
        if version >= 6 {
            r.enable_2pc = dec.bool("Enable2Pc")?;
            r.keep_prepared_txn = dec.bool("KeepPreparedTxn")?;
        }
        dec.end_struct(flex)?;
        Ok(r)
    }
}

impl ApiMessage for InitProducerIdRequest {
    const API_KEY: i16 = 22;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 6;
    const FLEXIBLE_FROM: i16 = 2;
    const NAME: &'static str = REQ;
}

impl crate::protocol::codec::Response for InitProducerIdResponse {
    type Request = InitProducerIdRequest;
}

impl Request for InitProducerIdRequest {
    type Response = InitProducerIdResponse;
}

/// `InitProducerIdResponse`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct InitProducerIdResponse {
    /// `ThrottleTimeMs` (ignorable).
    pub throttle_time_ms: i32,
    /// `ErrorCode`.
    pub error_code: i16,
    /// `ProducerId` (default -1).
    pub producer_id: i64,
    /// `ProducerEpoch`.
    pub producer_epoch: i16,
    /// `OngoingTxnProducerId` (v6+, default -1, not ignorable).
    pub ongoing_txn_producer_id: i64,
    /// `OngoingTxnProducerEpoch` (v6+, default -1, not ignorable).
    pub ongoing_txn_producer_epoch: i16,
}

impl Default for InitProducerIdResponse {
    fn default() -> Self {
        InitProducerIdResponse {
            throttle_time_ms: 0,
            error_code: 0,
            producer_id: -1,
            producer_epoch: 0,
            ongoing_txn_producer_id: -1,
            ongoing_txn_producer_epoch: -1,
        }
    }
}

impl InitProducerIdResponse {
    /// The error.
    pub fn error(&self) -> BrokerErrorKind {
        BrokerErrorKind::from_code(self.error_code)
    }
}

impl Encodable for InitProducerIdResponse {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 2;
        enc.i32(self.throttle_time_ms);
        enc.i16(self.error_code);
        enc.i64(self.producer_id);
        enc.i16(self.producer_epoch);
        if version >= 6 {
            enc.i64(self.ongoing_txn_producer_id);
            enc.i16(self.ongoing_txn_producer_epoch);
        } else {
            ensure_default(
                self.ongoing_txn_producer_id == -1,
                RESP,
                version,
                "OngoingTxnProducerId",
            )?;
            ensure_default(
                self.ongoing_txn_producer_epoch == -1,
                RESP,
                version,
                "OngoingTxnProducerEpoch",
            )?;
        }
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for InitProducerIdResponse {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 2;
        let mut r = InitProducerIdResponse {
            throttle_time_ms: dec.i32("ThrottleTimeMs")?,
            error_code: dec.i16("ErrorCode")?,
            producer_id: dec.i64("ProducerId")?,
            producer_epoch: dec.i16("ProducerEpoch")?,
            ..Default::default()
        };
        if version >= 6 {
            r.ongoing_txn_producer_id = dec.i64("OngoingTxnProducerId")?;
            r.ongoing_txn_producer_epoch = dec.i16("OngoingTxnProducerEpoch")?;
        }
        dec.end_struct(flex)?;
        Ok(r)
    }
}

impl ApiMessage for InitProducerIdResponse {
    const API_KEY: i16 = 22;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 6;
    const FLEXIBLE_FROM: i16 = 2;
    const NAME: &'static str = RESP;
}

#[cfg(test)]
mod tests;
