//! Kafka wire protocol: primitives, headers, frames, one module per API, error codes.
//!
//! Pure: no I/O, no clock. Every decoder bounds every length by the bytes that remain.
//!
//! ```
//! use kafka_streams_group::protocol::api::metadata::{MetadataRequest, MetadataResponse};
//! use kafka_streams_group::protocol::frame::{
//!     decode_response_frame, encode_request_frame, encode_response_frame, FrameDecoder,
//! };
//!
//! // Client side: append a whole frame (length prefix back-patched) to a reusable buffer.
//! let mut out = Vec::with_capacity(1024);
//! encode_request_frame(&mut out, 7, Some("my-app"), &MetadataRequest::for_topics(["in"]), 12)?;
//!
//! // Whatever arrives from the socket is pushed in any chunking; complete frames come out.
//! let mut wire = Vec::new();
//! encode_response_frame::<MetadataRequest>(&mut wire, 7, &MetadataResponse::default(), 12)?;
//! let mut frames = FrameDecoder::new();
//! frames.push(&wire[..3]);
//! assert!(frames.next_frame()?.is_none());
//! frames.push(&wire[3..]);
//! let frame = frames.next_frame()?.expect("complete frame");
//! let (header, body) = decode_response_frame::<MetadataRequest>(&frame, 12)?;
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
    ApiMessage, Decodable, DecodeError, Decoder, Encodable, EncodeError, Encoder, Request, Uuid,
};
pub use error::BrokerErrorKind;

/// The Kafka APIs this library speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ApiKey {
    /// Metadata (3).
    Metadata,
    /// FindCoordinator (10).
    FindCoordinator,
    /// SaslHandshake (17).
    SaslHandshake,
    /// ApiVersions (18).
    ApiVersions,
    /// CreateTopics (19).
    CreateTopics,
    /// SaslAuthenticate (36).
    SaslAuthenticate,
    /// StreamsGroupHeartbeat (88).
    StreamsGroupHeartbeat,
    /// StreamsGroupDescribe (89).
    StreamsGroupDescribe,
}

impl ApiKey {
    /// Every key, in numeric order.
    pub const ALL: [ApiKey; 8] = [
        ApiKey::Metadata,
        ApiKey::FindCoordinator,
        ApiKey::SaslHandshake,
        ApiKey::ApiVersions,
        ApiKey::CreateTopics,
        ApiKey::SaslAuthenticate,
        ApiKey::StreamsGroupHeartbeat,
        ApiKey::StreamsGroupDescribe,
    ];

    /// The numeric API key.
    pub const fn code(self) -> i16 {
        match self {
            ApiKey::Metadata => 3,
            ApiKey::FindCoordinator => 10,
            ApiKey::SaslHandshake => 17,
            ApiKey::ApiVersions => 18,
            ApiKey::CreateTopics => 19,
            ApiKey::SaslAuthenticate => 36,
            ApiKey::StreamsGroupHeartbeat => 88,
            ApiKey::StreamsGroupDescribe => 89,
        }
    }

    /// The key for a numeric code, if it is one we speak.
    pub const fn from_code(code: i16) -> Option<ApiKey> {
        Some(match code {
            3 => ApiKey::Metadata,
            10 => ApiKey::FindCoordinator,
            17 => ApiKey::SaslHandshake,
            18 => ApiKey::ApiVersions,
            19 => ApiKey::CreateTopics,
            36 => ApiKey::SaslAuthenticate,
            88 => ApiKey::StreamsGroupHeartbeat,
            89 => ApiKey::StreamsGroupDescribe,
            _ => return None,
        })
    }

    /// Kafka's name for the API, e.g. `"StreamsGroupHeartbeat"`.
    pub const fn name(self) -> &'static str {
        match self {
            ApiKey::Metadata => "Metadata",
            ApiKey::FindCoordinator => "FindCoordinator",
            ApiKey::SaslHandshake => "SaslHandshake",
            ApiKey::ApiVersions => "ApiVersions",
            ApiKey::CreateTopics => "CreateTopics",
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
        assert_eq!(ApiKey::from_code(0), None);
        assert_eq!(ApiKey::StreamsGroupHeartbeat.code(), 88);
        assert_eq!(ApiKey::ApiVersions.to_string(), "ApiVersions(18)");
    }
}
