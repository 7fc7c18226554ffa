//! Kafka wire protocol: primitives, headers, frames, one module per API, error codes.
//!
//! Pure: no I/O, no clock. Every decoder bounds every length by the bytes that remain.
//!
//! ```
//! use kafka_streams_group::protocol::api::metadata::{MetadataRequest, MetadataResponse};
//! use kafka_streams_group::protocol::frame::{
//!     decode_response, encode_request_frame, encode_response, FrameDecoder,
//! };
//!
//! // Client side: append a whole frame (length prefix back-patched) to a reusable buffer.
//! let mut out = Vec::with_capacity(1024);
//! encode_request_frame(&mut out, 7, Some("my-app"), &MetadataRequest::for_topics(["in"]), 12)?;
//!
//! // Whatever arrives from the socket is pushed in any chunking; complete frames come out.
//! let mut wire = Vec::new();
//! encode_response(&mut wire, 7, &MetadataResponse::default(), 12)?;
//! let mut frames = FrameDecoder::new();
//! frames.push(&wire[..3]);
//! assert!(frames.next_frame()?.is_none());
//! frames.push(&wire[3..]);
//! let frame = frames.next_frame()?.expect("complete frame");
//! let (header, body) = decode_response::<MetadataResponse>(&frame, 12)?;
//! assert_eq!(header.correlation_id, 7);
//! assert!(body.topics.is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod api;
pub mod codec;
pub mod error;
pub mod frame;
pub mod header;
pub mod node_ids;
pub mod records;

pub use codec::{
    decode_message, decode_message_into, encode_message, ApiMessage, Decodable, DecodeError,
    DecodeInto, Decoder, Encodable, EncodeError, Encoder, Request, Response, Uuid,
};
pub use error::BrokerErrorKind;

/// The Kafka APIs this library speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ApiKey {
    /// Produce (0).
    Produce,
    /// Fetch (1).
    Fetch,
    /// ListOffsets (2).
    ListOffsets,
    /// Metadata (3).
    Metadata,
    /// OffsetCommit (8).
    OffsetCommit,
    /// OffsetFetch (9).
    OffsetFetch,
    /// FindCoordinator (10).
    FindCoordinator,
    /// SaslHandshake (17).
    SaslHandshake,
    /// ApiVersions (18).
    ApiVersions,
    /// CreateTopics (19).
    CreateTopics,
    /// InitProducerId (22).
    InitProducerId,
    /// OffsetForLeaderEpoch (23).
    OffsetForLeaderEpoch,
    /// SaslAuthenticate (36).
    SaslAuthenticate,
    /// StreamsGroupHeartbeat (88).
    StreamsGroupHeartbeat,
    /// StreamsGroupDescribe (89).
    StreamsGroupDescribe,
}

impl ApiKey {
    /// Every key, in numeric order.
    pub const ALL: [ApiKey; 15] = [
        ApiKey::Produce,
        ApiKey::Fetch,
        ApiKey::ListOffsets,
        ApiKey::Metadata,
        ApiKey::OffsetCommit,
        ApiKey::OffsetFetch,
        ApiKey::FindCoordinator,
        ApiKey::SaslHandshake,
        ApiKey::ApiVersions,
        ApiKey::CreateTopics,
        ApiKey::InitProducerId,
        ApiKey::OffsetForLeaderEpoch,
        ApiKey::SaslAuthenticate,
        ApiKey::StreamsGroupHeartbeat,
        ApiKey::StreamsGroupDescribe,
    ];

    /// The numeric API key.
    pub const fn code(self) -> i16 {
        match self {
            ApiKey::Produce => 0,
            ApiKey::Fetch => 1,
            ApiKey::ListOffsets => 2,
            ApiKey::Metadata => 3,
            ApiKey::OffsetCommit => 8,
            ApiKey::OffsetFetch => 9,
            ApiKey::FindCoordinator => 10,
            ApiKey::SaslHandshake => 17,
            ApiKey::ApiVersions => 18,
            ApiKey::CreateTopics => 19,
            ApiKey::InitProducerId => 22,
            ApiKey::OffsetForLeaderEpoch => 23,
            ApiKey::SaslAuthenticate => 36,
            ApiKey::StreamsGroupHeartbeat => 88,
            ApiKey::StreamsGroupDescribe => 89,
        }
    }

    /// The key for a numeric code, if it is one we speak.
    pub const fn from_code(code: i16) -> Option<ApiKey> {
        Some(match code {
            0 => ApiKey::Produce,
            1 => ApiKey::Fetch,
            2 => ApiKey::ListOffsets,
            3 => ApiKey::Metadata,
            8 => ApiKey::OffsetCommit,
            9 => ApiKey::OffsetFetch,
            10 => ApiKey::FindCoordinator,
            17 => ApiKey::SaslHandshake,
            18 => ApiKey::ApiVersions,
            19 => ApiKey::CreateTopics,
            22 => ApiKey::InitProducerId,
            23 => ApiKey::OffsetForLeaderEpoch,
            36 => ApiKey::SaslAuthenticate,
            88 => ApiKey::StreamsGroupHeartbeat,
            89 => ApiKey::StreamsGroupDescribe,
            _ => return None,
        })
    }

    /// Kafka's name for the API, e.g. `"StreamsGroupHeartbeat"`.
    pub const fn name(self) -> &'static str {
        match self {
            ApiKey::Produce => "Produce",
            ApiKey::Fetch => "Fetch",
            ApiKey::ListOffsets => "ListOffsets",
            ApiKey::Metadata => "Metadata",
            ApiKey::OffsetCommit => "OffsetCommit",
            ApiKey::OffsetFetch => "OffsetFetch",
            ApiKey::FindCoordinator => "FindCoordinator",
            ApiKey::SaslHandshake => "SaslHandshake",
            ApiKey::ApiVersions => "ApiVersions",
            ApiKey::CreateTopics => "CreateTopics",
            ApiKey::InitProducerId => "InitProducerId",
            ApiKey::OffsetForLeaderEpoch => "OffsetForLeaderEpoch",
            ApiKey::SaslAuthenticate => "SaslAuthenticate",
            ApiKey::StreamsGroupHeartbeat => "StreamsGroupHeartbeat",
            ApiKey::StreamsGroupDescribe => "StreamsGroupDescribe",
        }
    }
}

impl std::fmt::Display for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}({})", self.name(), self.code())
    }
}

#[cfg(test)]
mod tests {
    use super::ApiKey;

    #[test]
    fn api_key_round_trip() {
        for k in ApiKey::ALL {
            assert_eq!(ApiKey::from_code(k.code()), Some(k));
        }
        assert_eq!(ApiKey::from_code(0), Some(ApiKey::Produce));
        assert_eq!(ApiKey::from_code(4), None);
        assert_eq!(ApiKey::Fetch.to_string(), "Fetch(1)");
        assert_eq!(ApiKey::StreamsGroupHeartbeat.code(), 88);
        assert_eq!(ApiKey::ApiVersions.to_string(), "ApiVersions(18)");
    }
}
