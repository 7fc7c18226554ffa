//! The structs the request and the response share (and `StreamsGroupDescribe` reuses).

use super::wire::{get_i32s, get_i32s_into, get_structs, put_i32s, put_structs};
use crate::protocol::codec::{
    Decodable, DecodeError, DecodeInto, Decoder, Encodable, EncodeError, Encoder,
};

/// A key/value pair (topic configs, client tags).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyValue {
    /// The key.
    pub key: String,
    /// The value.
    pub value: String,
}

/// An internal topic the coordinator creates on the application's behalf.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TopicInfo {
    /// Topic name.
    pub name: String,
    /// Partition count; 0 if not enforced (always 0 for changelog topics).
    pub partitions: i32,
    /// Replication factor; 0 for the broker default.
    pub replication_factor: i16,
    /// Topic-level configurations.
    pub topic_configs: Vec<KeyValue>,
}

/// A host/port endpoint for interactive queries.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Endpoint {
    /// Host name.
    pub host: String,
    /// Port (`uint16` on the wire).
    pub port: u16,
}

/// A changelog offset of one task.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskOffset {
    /// The sub-topology identifier.
    pub subtopology_id: String,
    /// The partition (task number within the sub-topology).
    pub partition: i32,
    /// The offset.
    pub offset: i64,
}

/// The tasks of one sub-topology: its id and the partitions (task numbers).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct TaskIds {
    /// The sub-topology identifier.
    pub subtopology_id: String,
    /// The partitions of the input topics processed by this member.
    pub partitions: Vec<i32>,
}

impl Encodable for KeyValue {
    fn encode(&self, enc: &mut Encoder<'_>, _version: i16) -> Result<(), EncodeError> {
        enc.compact_string("Key", &self.key)?;
        enc.compact_string("Value", &self.value)?;
        enc.empty_tagged_fields();
        Ok(())
    }
}

impl Decodable for KeyValue {
    fn decode(dec: &mut Decoder<'_>, _version: i16) -> Result<Self, DecodeError> {
        let key = dec.compact_string("Key")?;
        let value = dec.compact_string("Value")?;
        dec.skip_tagged_fields()?;
        Ok(Self { key, value })
    }
}

impl Encodable for TopicInfo {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        enc.compact_string("Name", &self.name)?;
        enc.i32(self.partitions);
        enc.i16(self.replication_factor);
        put_structs(enc, "TopicConfigs", &self.topic_configs, version)?;
        enc.empty_tagged_fields();
        Ok(())
    }
}

impl Decodable for TopicInfo {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let name = dec.compact_string("Name")?;
        let partitions = dec.i32("Partitions")?;
        let replication_factor = dec.i16("ReplicationFactor")?;
        let topic_configs = get_structs(dec, "TopicConfigs", version)?;
        dec.skip_tagged_fields()?;
        Ok(Self {
            name,
            partitions,
            replication_factor,
            topic_configs,
        })
    }
}

impl Encodable for Endpoint {
    fn encode(&self, enc: &mut Encoder<'_>, _version: i16) -> Result<(), EncodeError> {
        enc.compact_string("Host", &self.host)?;
        enc.u16(self.port);
        enc.empty_tagged_fields();
        Ok(())
    }
}

impl Decodable for Endpoint {
    fn decode(dec: &mut Decoder<'_>, _version: i16) -> Result<Self, DecodeError> {
        let host = dec.compact_string("Host")?;
        let port = dec.u16("Port")?;
        dec.skip_tagged_fields()?;
        Ok(Self { host, port })
    }
}

impl DecodeInto for Endpoint {
    fn decode_into(&mut self, dec: &mut Decoder<'_>, _version: i16) -> Result<(), DecodeError> {
        dec.compact_string_into("Host", &mut self.host)?;
        self.port = dec.u16("Port")?;
        dec.skip_tagged_fields()
    }
}

impl Encodable for TaskOffset {
    fn encode(&self, enc: &mut Encoder<'_>, _version: i16) -> Result<(), EncodeError> {
        enc.compact_string("SubtopologyId", &self.subtopology_id)?;
        enc.i32(self.partition);
        enc.i64(self.offset);
        enc.empty_tagged_fields();
        Ok(())
    }
}

impl Decodable for TaskOffset {
    fn decode(dec: &mut Decoder<'_>, _version: i16) -> Result<Self, DecodeError> {
        let subtopology_id = dec.compact_string("SubtopologyId")?;
        let partition = dec.i32("Partition")?;
        let offset = dec.i64("Offset")?;
        dec.skip_tagged_fields()?;
        Ok(Self {
            subtopology_id,
            partition,
            offset,
        })
    }
}

impl Encodable for TaskIds {
    fn encode(&self, enc: &mut Encoder<'_>, _version: i16) -> Result<(), EncodeError> {
        enc.compact_string("SubtopologyId", &self.subtopology_id)?;
        put_i32s(enc, "Partitions", &self.partitions)?;
        enc.empty_tagged_fields();
        Ok(())
    }
}

impl Decodable for TaskIds {
    fn decode(dec: &mut Decoder<'_>, _version: i16) -> Result<Self, DecodeError> {
        let subtopology_id = dec.compact_string("SubtopologyId")?;
        let partitions = get_i32s(dec, "Partitions")?;
        dec.skip_tagged_fields()?;
        Ok(Self {
            subtopology_id,
            partitions,
        })
    }
}

impl DecodeInto for TaskIds {
    fn decode_into(&mut self, dec: &mut Decoder<'_>, _version: i16) -> Result<(), DecodeError> {
        dec.compact_string_into("SubtopologyId", &mut self.subtopology_id)?;
        get_i32s_into(dec, "Partitions", &mut self.partitions)?;
        dec.skip_tagged_fields()
    }
}
