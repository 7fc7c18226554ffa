//! SaslAuthenticate (API key 36), versions 0-2; flexible from v2.

use crate::protocol::codec::{
    ApiMessage, Decodable, DecodeError, Decoder, Encodable, EncodeError, Encoder, Request,
};
use crate::protocol::error::BrokerErrorKind;

/// `SaslAuthenticateRequest`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct SaslAuthenticateRequest {
    /// `AuthBytes`: the client's SASL token.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub auth_bytes: Vec<u8>,
}

impl Encodable for SaslAuthenticateRequest {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 2;
        enc.bytes_as("AuthBytes", &self.auth_bytes, flex)?;
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for SaslAuthenticateRequest {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 2;
        let r = SaslAuthenticateRequest {
            auth_bytes: dec.bytes_as("AuthBytes", flex)?,
        };
        dec.end_struct(flex)?;
        Ok(r)
    }
}

impl ApiMessage for SaslAuthenticateRequest {
    const API_KEY: i16 = 36;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 2;
    const FLEXIBLE_FROM: i16 = 2;
    const NAME: &'static str = "SaslAuthenticateRequest";
}

impl crate::protocol::codec::Response for SaslAuthenticateResponse {
    type Request = SaslAuthenticateRequest;
}

impl Request for SaslAuthenticateRequest {
    type Response = SaslAuthenticateResponse;
}

/// `SaslAuthenticateResponse`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct SaslAuthenticateResponse {
    /// `ErrorCode`.
    pub error_code: i16,
    /// `ErrorMessage` (nullable).
    pub error_message: Option<String>,
    /// `AuthBytes`: the server's SASL token.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub auth_bytes: Vec<u8>,
    /// `SessionLifetimeMs` (v1+, ignorable): re-authenticate before this many ms; 0 = no limit.
    pub session_lifetime_ms: i64,
}

impl SaslAuthenticateResponse {
    /// The error.
    pub fn error(&self) -> BrokerErrorKind {
        BrokerErrorKind::from_code(self.error_code)
    }
}

impl Encodable for SaslAuthenticateResponse {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 2;
        enc.i16(self.error_code);
        enc.nullable_string_as("ErrorMessage", self.error_message.as_deref(), flex)?;
        enc.bytes_as("AuthBytes", &self.auth_bytes, flex)?;
        if version >= 1 {
            enc.i64(self.session_lifetime_ms);
        }
        enc.end_struct(flex);
        Ok(())
    }
}

impl Decodable for SaslAuthenticateResponse {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 2;
        let mut r = SaslAuthenticateResponse {
            error_code: dec.i16("ErrorCode")?,
            error_message: dec.nullable_string_as("ErrorMessage", flex)?,
            auth_bytes: dec.bytes_as("AuthBytes", flex)?,
            session_lifetime_ms: 0,
        };
        if version >= 1 {
            r.session_lifetime_ms = dec.i64("SessionLifetimeMs")?;
        }
        dec.end_struct(flex)?;
        Ok(r)
    }
}

impl ApiMessage for SaslAuthenticateResponse {
    const API_KEY: i16 = 36;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 2;
    const FLEXIBLE_FROM: i16 = 2;
    const NAME: &'static str = "SaslAuthenticateResponse";
}

#[cfg(test)]
mod tests;
