//! Request/response headers (RequestHeader.json 1-2, ResponseHeader.json 0-1), checked like
//! messages through thin local wrappers. The oracle knows them as API key "header".

use crate::model::{Field, Rng};
use crate::Run;
use kafka_streams_group::protocol::codec::{
    ApiMessage, Decodable, DecodeError, Decoder, Encodable, EncodeError, Encoder,
};
use kafka_streams_group::protocol::header::{RequestHeader, ResponseHeader};
use serde_json::{json, Value};

/// The API key the suite maps to the oracle's `header` selector.
pub const HEADER_KEY: i16 = -1;

/// `RequestHeader` as a message.
#[derive(Debug, PartialEq)]
pub struct Req(pub RequestHeader);
/// `ResponseHeader` as a message.
#[derive(Debug, PartialEq)]
pub struct Resp(pub ResponseHeader);

impl Encodable for Req {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        self.0.encode(enc, version)
    }
}
impl Decodable for Req {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        RequestHeader::decode(dec, version).map(Req)
    }
}
impl ApiMessage for Req {
    const API_KEY: i16 = HEADER_KEY;
    const MIN_VERSION: i16 = 1;
    const MAX_VERSION: i16 = 2;
    const FLEXIBLE_FROM: i16 = 2;
    const NAME: &'static str = "RequestHeader";
}
impl Field for Req {
    fn gen(r: &mut Rng, v: i16, _: bool) -> Self {
        Req(RequestHeader {
            api_key: Field::gen(r, v, false),
            api_version: Field::gen(r, v, false),
            correlation_id: Field::gen(r, v, false),
            client_id: Field::gen(r, v, true),
        })
    }
    fn json(&self, _: i16) -> Value {
        json!({
            "requestApiKey": self.0.api_key,
            "requestApiVersion": self.0.api_version,
            "correlationId": self.0.correlation_id,
            "clientId": self.0.client_id,
        })
    }
}

impl Encodable for Resp {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        self.0.encode(enc, version)
    }
}
impl Decodable for Resp {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        ResponseHeader::decode(dec, version).map(Resp)
    }
}
impl ApiMessage for Resp {
    const API_KEY: i16 = HEADER_KEY;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 1;
    const FLEXIBLE_FROM: i16 = 1;
    const NAME: &'static str = "ResponseHeader";
}
impl Field for Resp {
    fn gen(r: &mut Rng, v: i16, _: bool) -> Self {
        Resp(ResponseHeader {
            correlation_id: Field::gen(r, v, false),
        })
    }
    fn json(&self, _: i16) -> Value {
        json!({ "correlationId": self.0.correlation_id })
    }
}

/// Both headers, every version the crate implements.
pub fn run(run: &mut Run) {
    for v in 1..=2 {
        run.check::<Req>("request", v);
    }
    for v in 0..=1 {
        run.check::<Resp>("response", v);
    }
}
