//! One module per Kafka API: request and response types that both encode and decode.
//!
//! Conventions shared by every module: fields are the schema's, in snake_case; nullable fields
//! are `Option`; fields absent from a version are skipped on encode and left at their default on
//! decode. An absent field holding a non-default value is silently dropped if the schema marks
//! it ignorable and is an [`EncodeError::FieldNotInVersion`](crate::protocol::codec::EncodeError)
//! otherwise, as in Kafka's generated code. Unknown tagged fields are skipped on decode.

pub mod api_versions;
pub mod create_topics;
pub mod find_coordinator;
pub mod metadata;
pub mod offset_commit;
pub mod offset_fetch;
pub mod sasl_authenticate;
pub mod sasl_handshake;
pub mod streams_group_describe;
pub mod streams_group_heartbeat;

#[cfg(test)]
mod test_util;
