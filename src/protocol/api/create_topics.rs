//! CreateTopics (API key 19), versions 2-7; flexible from v5.
//!
//! Used to create a Streams application's internal (repartition/changelog) topics when the
//! group reports them missing.

use crate::protocol::codec::{
    ApiMessage, Decodable, DecodeError, Decoder, Encodable, EncodeError, Encoder, Request, Uuid,
};
use crate::protocol::error::BrokerErrorKind;

/// A manual replica assignment for one partition (`Assignments` element).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct CreatableReplicaAssignment {
    /// `PartitionIndex`.
    pub partition_index: i32,
    /// `BrokerIds` to place the partition on.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub broker_ids: Vec<i32>,
}

impl Encodable for CreatableReplicaAssignment {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 5;
        enc.i32(self.partition_index);
        enc.i32_array("BrokerIds", &self.broker_ids, flex)?;
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for CreatableReplicaAssignment {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 5;
        let a = CreatableReplicaAssignment {
            partition_index: dec.i32("PartitionIndex")?,
            broker_ids: dec.i32_array("BrokerIds", flex)?,
        };
        dec.end_struct(flex)?;
        Ok(a)
    }
}

/// A topic configuration to set (`Configs` element of the request).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct CreatableTopicConfig {
    /// `Name`, e.g. `"cleanup.policy"`.
    pub name: String,
    /// `Value` (nullable).
    pub value: Option<String>,
}

impl Encodable for CreatableTopicConfig {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 5;
        enc.string_as("Name", &self.name, flex)?;
        enc.nullable_string_as("Value", self.value.as_deref(), flex)?;
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for CreatableTopicConfig {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 5;
        let c = CreatableTopicConfig {
            name: dec.string_as("Name", flex)?,
            value: dec.nullable_string_as("Value", flex)?,
        };
        dec.end_struct(flex)?;
        Ok(c)
    }
}

/// A topic to create (`Topics` element of the request).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct CreatableTopic {
    /// `Name`.
    pub name: String,
    /// `NumPartitions`, or -1 for the broker default / manual assignment.
    pub num_partitions: i32,
    /// `ReplicationFactor`, or -1 for the broker default / manual assignment.
    pub replication_factor: i16,
    /// `Assignments` (empty for automatic assignment).
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub assignments: Vec<CreatableReplicaAssignment>,
    /// `Configs`.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub configs: Vec<CreatableTopicConfig>,
}

impl Default for CreatableTopic {
    fn default() -> Self {
        CreatableTopic {
            name: String::new(),
            num_partitions: -1,
            replication_factor: -1,
            assignments: Vec::new(),
            configs: Vec::new(),
        }
    }
}

impl Encodable for CreatableTopic {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 5;
        enc.string_as("Name", &self.name, flex)?;
        enc.i32(self.num_partitions);
        enc.i16(self.replication_factor);
        enc.array("Assignments", &self.assignments, flex, version)?;
        enc.array("Configs", &self.configs, flex, version)?;
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for CreatableTopic {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 5;
        let t = CreatableTopic {
            name: dec.string_as("Name", flex)?,
            num_partitions: dec.i32("NumPartitions")?,
            replication_factor: dec.i16("ReplicationFactor")?,
            assignments: dec.array("Assignments", flex, version)?,
            configs: dec.array("Configs", flex, version)?,
        };
        dec.end_struct(flex)?;
        Ok(t)
    }
}

/// `CreateTopicsRequest`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct CreateTopicsRequest {
    /// `Topics` to create.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub topics: Vec<CreatableTopic>,
    /// `timeoutMs` (default 60000).
    pub timeout_ms: i32,
    /// `validateOnly` (v1+, default false).
    pub validate_only: bool,
}

impl Default for CreateTopicsRequest {
    fn default() -> Self {
        CreateTopicsRequest {
            topics: Vec::new(),
            timeout_ms: 60_000,
            validate_only: false,
        }
    }
}

impl Encodable for CreateTopicsRequest {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        // validateOnly exists since v1, so it is present in every version we implement (2-7).
        let flex = version >= 5;
        enc.array("Topics", &self.topics, flex, version)?;
        enc.i32(self.timeout_ms);
        enc.bool(self.validate_only);
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for CreateTopicsRequest {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 5;
        let r = CreateTopicsRequest {
            topics: dec.array("Topics", flex, version)?,
            timeout_ms: dec.i32("timeoutMs")?,
            validate_only: dec.bool("validateOnly")?,
        };
        dec.end_struct(flex)?;
        Ok(r)
    }
}

impl ApiMessage for CreateTopicsRequest {
    const API_KEY: i16 = 19;
    const MIN_VERSION: i16 = 2;
    const MAX_VERSION: i16 = 7;
    const FLEXIBLE_FROM: i16 = 5;
    const NAME: &'static str = "CreateTopicsRequest";
}

impl crate::protocol::codec::Response for CreateTopicsResponse {
    type Request = CreateTopicsRequest;
}

impl Request for CreateTopicsRequest {
    type Response = CreateTopicsResponse;
}

/// A configuration of a created topic (`Configs` element of the response, v5+).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct CreatableTopicConfigs {
    /// `Name`.
    pub name: String,
    /// `Value` (nullable).
    pub value: Option<String>,
    /// `ReadOnly`.
    pub read_only: bool,
    /// `ConfigSource` (default -1).
    pub config_source: i8,
    /// `IsSensitive`.
    pub is_sensitive: bool,
}

impl Default for CreatableTopicConfigs {
    fn default() -> Self {
        CreatableTopicConfigs {
            name: String::new(),
            value: None,
            read_only: false,
            config_source: -1,
            is_sensitive: false,
        }
    }
}

impl Encodable for CreatableTopicConfigs {
    fn encode(&self, enc: &mut Encoder<'_>, _version: i16) -> Result<(), EncodeError> {
        // Only present in v5+, which is flexible.
        enc.compact_string("Name", &self.name)?;
        enc.compact_nullable_string("Value", self.value.as_deref())?;
        enc.bool(self.read_only);
        enc.i8(self.config_source);
        enc.bool(self.is_sensitive);
        enc.empty_tagged_fields();
        Ok(())
    }
}

impl Decodable for CreatableTopicConfigs {
    fn decode(dec: &mut Decoder<'_>, _version: i16) -> Result<Self, DecodeError> {
        let c = CreatableTopicConfigs {
            name: dec.compact_string("Name")?,
            value: dec.compact_nullable_string("Value")?,
            read_only: dec.bool("ReadOnly")?,
            config_source: dec.i8("ConfigSource")?,
            is_sensitive: dec.bool("IsSensitive")?,
        };
        dec.skip_tagged_fields()?;
        Ok(c)
    }
}

/// The result for one topic (`Topics` element of the response).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct CreatableTopicResult {
    /// `Name`.
    pub name: String,
    /// `TopicId` (v7+, ignorable).
    pub topic_id: Uuid,
    /// `ErrorCode` (e.g. TOPIC_ALREADY_EXISTS).
    pub error_code: i16,
    /// `ErrorMessage` (nullable).
    pub error_message: Option<String>,
    /// `TopicConfigErrorCode` (tag 0, v5+, ignorable).
    pub topic_config_error_code: i16,
    /// `NumPartitions` (v5+, default -1, ignorable).
    pub num_partitions: i32,
    /// `ReplicationFactor` (v5+, default -1, ignorable).
    pub replication_factor: i16,
    /// `Configs` (v5+, nullable, ignorable).
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_opt_vec()")
    )]
    pub configs: Option<Vec<CreatableTopicConfigs>>,
}

impl Default for CreatableTopicResult {
    fn default() -> Self {
        CreatableTopicResult {
            name: String::new(),
            topic_id: Uuid::ZERO,
            error_code: 0,
            error_message: None,
            topic_config_error_code: 0,
            num_partitions: -1,
            replication_factor: -1,
            // Kafka's schema gives `Configs` no null default, so a v2-4 response (which does
            // not carry the field) decodes to an empty list there, not to null.
            configs: Some(Vec::new()),
        }
    }
}

impl CreatableTopicResult {
    /// The error for this topic.
    pub fn error(&self) -> BrokerErrorKind {
        BrokerErrorKind::from_code(self.error_code)
    }
}

impl Encodable for CreatableTopicResult {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 5;
        enc.string_as("Name", &self.name, flex)?;
        if version >= 7 {
            enc.uuid(self.topic_id);
        }
        enc.i16(self.error_code);
        enc.nullable_string_as("ErrorMessage", self.error_message.as_deref(), flex)?;
        if version >= 5 {
            enc.i32(self.num_partitions);
            enc.i16(self.replication_factor);
            enc.nullable_array("Configs", self.configs.as_deref(), flex, version)?;
            if self.topic_config_error_code != 0 {
                enc.unsigned_varint(1);
                enc.tagged_field(0, |e| {
                    e.i16(self.topic_config_error_code);
                    Ok(())
                })?;
            } else {
                enc.empty_tagged_fields();
            }
        }
        Ok(())
    }
}

impl Decodable for CreatableTopicResult {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 5;
        let mut t = CreatableTopicResult {
            name: dec.string_as("Name", flex)?,
            ..Default::default()
        };
        if version >= 7 {
            t.topic_id = dec.uuid("TopicId")?;
        }
        t.error_code = dec.i16("ErrorCode")?;
        t.error_message = dec.nullable_string_as("ErrorMessage", flex)?;
        if version >= 5 {
            t.num_partitions = dec.i32("NumPartitions")?;
            t.replication_factor = dec.i16("ReplicationFactor")?;
            t.configs = dec.nullable_array("Configs", flex, version)?;
            dec.tagged_fields(|tag, sub| {
                if tag == 0 {
                    t.topic_config_error_code = sub.i16("TopicConfigErrorCode")?;
                    Ok(true)
                } else {
                    Ok(false)
                }
            })?;
        }
        Ok(t)
    }
}

/// `CreateTopicsResponse`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct CreateTopicsResponse {
    /// `ThrottleTimeMs`.
    pub throttle_time_ms: i32,
    /// `Topics`: one result per requested topic.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub topics: Vec<CreatableTopicResult>,
}

impl Encodable for CreateTopicsResponse {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 5;
        enc.i32(self.throttle_time_ms);
        enc.array("Topics", &self.topics, flex, version)?;
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for CreateTopicsResponse {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 5;
        let r = CreateTopicsResponse {
            throttle_time_ms: dec.i32("ThrottleTimeMs")?,
            topics: dec.array("Topics", flex, version)?,
        };
        dec.end_struct(flex)?;
        Ok(r)
    }
}

impl ApiMessage for CreateTopicsResponse {
    const API_KEY: i16 = 19;
    const MIN_VERSION: i16 = 2;
    const MAX_VERSION: i16 = 7;
    const FLEXIBLE_FROM: i16 = 5;
    const NAME: &'static str = "CreateTopicsResponse";
}

#[cfg(test)]
mod tests;
