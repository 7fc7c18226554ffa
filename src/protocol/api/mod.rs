//! One module per Kafka API: request and response types that both encode and decode.

pub mod streams_group_describe;
pub mod streams_group_heartbeat;
