//! SaslHandshake (API key 17), versions 0-1; never flexible.
//!
//! v0 means "raw SASL tokens follow"; v1 means tokens travel in SaslAuthenticate requests.
//! Both versions have identical bodies.

use crate::protocol::codec::{
    ApiMessage, Decodable, DecodeError, Decoder, Encodable, EncodeError, Encoder, Request,
};
use crate::protocol::error::BrokerErrorKind;

/// `SaslHandshakeRequest`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct SaslHandshakeRequest {
    /// `Mechanism`, e.g. `"PLAIN"` or `"SCRAM-SHA-512"`.
    pub mechanism: String,
}

impl Encodable for SaslHandshakeRequest {
    fn encode(&self, enc: &mut Encoder<'_>, _version: i16) -> Result<(), EncodeError> {
        enc.string("Mechanism", &self.mechanism)
    }
}

impl Decodable for SaslHandshakeRequest {
    fn decode(dec: &mut Decoder<'_>, _version: i16) -> Result<Self, DecodeError> {
        Ok(SaslHandshakeRequest {
            mechanism: dec.string("Mechanism")?,
        })
    }
}

impl ApiMessage for SaslHandshakeRequest {
    const API_KEY: i16 = 17;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 1;
    const FLEXIBLE_FROM: i16 = i16::MAX;
    const NAME: &'static str = "SaslHandshakeRequest";
}

impl crate::protocol::codec::Response for SaslHandshakeResponse {
    type Request = SaslHandshakeRequest;
}

impl Request for SaslHandshakeRequest {
    type Response = SaslHandshakeResponse;
}

/// `SaslHandshakeResponse`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct SaslHandshakeResponse {
    /// `ErrorCode`.
    pub error_code: i16,
    /// `Mechanisms` enabled on the broker.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub mechanisms: Vec<String>,
}

impl SaslHandshakeResponse {
    /// The error.
    pub fn error(&self) -> BrokerErrorKind {
        BrokerErrorKind::from_code(self.error_code)
    }
}

impl Encodable for SaslHandshakeResponse {
    fn encode(&self, enc: &mut Encoder<'_>, _version: i16) -> Result<(), EncodeError> {
        enc.i16(self.error_code);
        enc.string_array("Mechanisms", &self.mechanisms, false)
    }
}

impl Decodable for SaslHandshakeResponse {
    fn decode(dec: &mut Decoder<'_>, _version: i16) -> Result<Self, DecodeError> {
        Ok(SaslHandshakeResponse {
            error_code: dec.i16("ErrorCode")?,
            mechanisms: dec.string_array("Mechanisms", false)?,
        })
    }
}

impl ApiMessage for SaslHandshakeResponse {
    const API_KEY: i16 = 17;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 1;
    const FLEXIBLE_FROM: i16 = i16::MAX;
    const NAME: &'static str = "SaslHandshakeResponse";
}

#[cfg(test)]
mod tests;
