//! FindCoordinator (API key 10), versions 0-6; flexible from v3.
//!
//! v0-3 look up a single `key`; v4+ look up a batch of `coordinator_keys` and answer with one
//! [`Coordinator`] per key. `key_type` 0 = group (streams groups use 0), 1 = transaction, 2 = share.

use crate::protocol::codec::{
    ensure_default, ApiMessage, Decodable, DecodeError, Decoder, Encodable, EncodeError, Encoder,
    Request,
};
use crate::protocol::error::BrokerErrorKind;

/// `KeyType` value for consumer/streams groups.
pub const KEY_TYPE_GROUP: i8 = 0;
/// `KeyType` value for transactional ids.
pub const KEY_TYPE_TRANSACTION: i8 = 1;
/// `KeyType` value for share groups.
pub const KEY_TYPE_SHARE: i8 = 2;

code_enum! {
    /// Typed view of [`FindCoordinatorRequest::key_type`] (see [`FindCoordinatorRequest::kind`]).
    KeyType(i8) {
        /// 0: a consumer or streams group id.
        Group = 0 => "GROUP",
        /// 1: a transactional id.
        Transaction = 1 => "TRANSACTION",
        /// 2: a share group id.
        Share = 2 => "SHARE",
    }
}

const REQ: &str = "FindCoordinatorRequest";
const RESP: &str = "FindCoordinatorResponse";

/// `FindCoordinatorRequest`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct FindCoordinatorRequest {
    /// `Key` (v0-3): the group id or transactional id.
    pub key: String,
    /// `KeyType` (v1+, default 0 = group).
    pub key_type: i8,
    /// `CoordinatorKeys` (v4+): the keys to look up in one batch.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub coordinator_keys: Vec<String>,
}

impl FindCoordinatorRequest {
    /// [`key_type`](Self::key_type) as a typed value.
    pub fn kind(&self) -> KeyType {
        KeyType::from_code(self.key_type)
    }
}

impl Encodable for FindCoordinatorRequest {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 3;
        if version <= 3 {
            enc.string_as("Key", &self.key, flex)?;
        } else {
            ensure_default(self.key.is_empty(), REQ, version, "Key")?;
        }
        if version >= 1 {
            enc.i8(self.key_type);
        } else {
            ensure_default(self.key_type == 0, REQ, version, "KeyType")?;
        }
        if version >= 4 {
            enc.string_array("CoordinatorKeys", &self.coordinator_keys, flex)?;
        } else {
            ensure_default(
                self.coordinator_keys.is_empty(),
                REQ,
                version,
                "CoordinatorKeys",
            )?;
        }
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for FindCoordinatorRequest {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 3;
        let mut r = FindCoordinatorRequest::default();
        if version <= 3 {
            r.key = dec.string_as("Key", flex)?;
        }
        if version >= 1 {
            r.key_type = dec.i8("KeyType")?;
        }
        if version >= 4 {
            r.coordinator_keys = dec.string_array("CoordinatorKeys", flex)?;
        }
        dec.end_struct(flex)?;
        Ok(r)
    }
}

impl ApiMessage for FindCoordinatorRequest {
    const API_KEY: i16 = 10;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 6;
    const FLEXIBLE_FROM: i16 = 3;
    const NAME: &'static str = REQ;
}

impl crate::protocol::codec::Response for FindCoordinatorResponse {
    type Request = FindCoordinatorRequest;
}

impl Request for FindCoordinatorRequest {
    type Response = FindCoordinatorResponse;
}

/// One result of a batched lookup (`Coordinators` element, v4+).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct Coordinator {
    /// `Key`.
    pub key: String,
    /// `NodeId` of the coordinator.
    pub node_id: i32,
    /// `Host`.
    pub host: String,
    /// `Port`.
    pub port: i32,
    /// `ErrorCode`.
    pub error_code: i16,
    /// `ErrorMessage` (nullable).
    pub error_message: Option<String>,
}

impl Coordinator {
    /// The error for this key.
    pub fn error(&self) -> BrokerErrorKind {
        BrokerErrorKind::from_code(self.error_code)
    }
}

impl Encodable for Coordinator {
    fn encode(&self, enc: &mut Encoder<'_>, _version: i16) -> Result<(), EncodeError> {
        // Only present in v4+, which is flexible.
        enc.compact_string("Key", &self.key)?;
        enc.i32(self.node_id);
        enc.compact_string("Host", &self.host)?;
        enc.i32(self.port);
        enc.i16(self.error_code);
        enc.compact_nullable_string("ErrorMessage", self.error_message.as_deref())?;
        enc.empty_tagged_fields();
        Ok(())
    }
}

impl Decodable for Coordinator {
    fn decode(dec: &mut Decoder<'_>, _version: i16) -> Result<Self, DecodeError> {
        let c = Coordinator {
            key: dec.compact_string("Key")?,
            node_id: dec.i32("NodeId")?,
            host: dec.compact_string("Host")?,
            port: dec.i32("Port")?,
            error_code: dec.i16("ErrorCode")?,
            error_message: dec.compact_nullable_string("ErrorMessage")?,
        };
        dec.skip_tagged_fields()?;
        Ok(c)
    }
}

/// `FindCoordinatorResponse`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct FindCoordinatorResponse {
    /// `ThrottleTimeMs` (v1+, ignorable).
    pub throttle_time_ms: i32,
    /// `ErrorCode` (v0-3).
    pub error_code: i16,
    /// `ErrorMessage` (v1-3, nullable, ignorable).
    pub error_message: Option<String>,
    /// `NodeId` (v0-3).
    pub node_id: i32,
    /// `Host` (v0-3).
    pub host: String,
    /// `Port` (v0-3).
    pub port: i32,
    /// `Coordinators` (v4+).
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub coordinators: Vec<Coordinator>,
}

impl FindCoordinatorResponse {
    /// The single-key error (v0-3).
    pub fn error(&self) -> BrokerErrorKind {
        BrokerErrorKind::from_code(self.error_code)
    }
}

impl Encodable for FindCoordinatorResponse {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 3;
        if version >= 1 {
            enc.i32(self.throttle_time_ms);
        }
        if version <= 3 {
            enc.i16(self.error_code);
            if version >= 1 {
                enc.nullable_string_as("ErrorMessage", self.error_message.as_deref(), flex)?;
            }
            enc.i32(self.node_id);
            enc.string_as("Host", &self.host, flex)?;
            enc.i32(self.port);
            ensure_default(self.coordinators.is_empty(), RESP, version, "Coordinators")?;
        } else {
            ensure_default(self.error_code == 0, RESP, version, "ErrorCode")?;
            ensure_default(self.node_id == 0, RESP, version, "NodeId")?;
            ensure_default(self.host.is_empty(), RESP, version, "Host")?;
            ensure_default(self.port == 0, RESP, version, "Port")?;
            enc.array("Coordinators", &self.coordinators, flex, version)?;
        }
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for FindCoordinatorResponse {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 3;
        let mut r = FindCoordinatorResponse::default();
        if version >= 1 {
            r.throttle_time_ms = dec.i32("ThrottleTimeMs")?;
        }
        if version <= 3 {
            r.error_code = dec.i16("ErrorCode")?;
            if version >= 1 {
                r.error_message = dec.nullable_string_as("ErrorMessage", flex)?;
            }
            r.node_id = dec.i32("NodeId")?;
            r.host = dec.string_as("Host", flex)?;
            r.port = dec.i32("Port")?;
        } else {
            r.coordinators = dec.array("Coordinators", flex, version)?;
        }
        dec.end_struct(flex)?;
        Ok(r)
    }
}

impl ApiMessage for FindCoordinatorResponse {
    const API_KEY: i16 = 10;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 6;
    const FLEXIBLE_FROM: i16 = 3;
    const NAME: &'static str = RESP;
}

#[cfg(test)]
mod tests;
