//! Request and response headers (`RequestHeader` v1/v2, `ResponseHeader` v0/v1).
//!
//! Header v0 (no client id) is obsolete and not implemented: every API we speak accepts v1.

use super::codec::{DecodeError, Decoder, EncodeError, Encoder};

/// A request header (owned form, as decoded by a broker).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RequestHeader {
    /// API key of the request.
    pub api_key: i16,
    /// Version of the request body.
    pub api_version: i16,
    /// Correlation id echoed in the response.
    pub correlation_id: i32,
    /// Client id (nullable; never compact, even in v2).
    pub client_id: Option<String>,
}

/// A request header borrowing its client id, so a client can encode without allocating.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RequestHeaderRef<'a> {
    /// API key of the request.
    pub api_key: i16,
    /// Version of the request body.
    pub api_version: i16,
    /// Correlation id echoed in the response.
    pub correlation_id: i32,
    /// Client id.
    pub client_id: Option<&'a str>,
}

fn check_request_version(v: i16) -> Result<(), EncodeError> {
    if v == 1 || v == 2 {
        Ok(())
    } else {
        Err(EncodeError::UnsupportedVersion {
            api: "RequestHeader",
            version: v,
        })
    }
}

impl RequestHeaderRef<'_> {
    /// Encodes at header `version` (1, or 2 = v1 plus an empty tagged-field section).
    pub fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        check_request_version(version)?;
        enc.i16(self.api_key);
        enc.i16(self.api_version);
        enc.i32(self.correlation_id);
        enc.nullable_string("ClientId", self.client_id)?;
        if version >= 2 {
            enc.empty_tagged_fields();
        }
        Ok(())
    }
}

impl RequestHeader {
    /// A borrowed view for encoding.
    pub fn as_ref(&self) -> RequestHeaderRef<'_> {
        RequestHeaderRef {
            api_key: self.api_key,
            api_version: self.api_version,
            correlation_id: self.correlation_id,
            client_id: self.client_id.as_deref(),
        }
    }

    /// Encodes at header `version` (1 or 2).
    pub fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        self.as_ref().encode(enc, version)
    }

    /// Decodes at header `version` (1 or 2). A broker learns the version from the api key and
    /// version, which come first: see [`RequestHeader::peek_api`].
    pub fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        if version != 1 && version != 2 {
            return Err(DecodeError::UnsupportedVersion {
                api: "RequestHeader",
                version,
            });
        }
        dec.set_context("RequestHeader", version);
        let h = RequestHeader {
            api_key: dec.i16("RequestApiKey")?,
            api_version: dec.i16("RequestApiVersion")?,
            correlation_id: dec.i32("CorrelationId")?,
            client_id: dec.nullable_string("ClientId")?,
        };
        if version >= 2 {
            dec.skip_tagged_fields()?;
        }
        Ok(h)
    }

    /// Reads the api key and version at the start of a request frame without consuming it.
    pub fn peek_api(frame: &[u8]) -> Result<(i16, i16), DecodeError> {
        let mut dec = Decoder::with_context(frame, "RequestHeader", 1);
        Ok((dec.i16("RequestApiKey")?, dec.i16("RequestApiVersion")?))
    }
}

/// A response header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ResponseHeader {
    /// Correlation id of the request this answers.
    pub correlation_id: i32,
}

impl ResponseHeader {
    /// Encodes at header `version` (0, or 1 = v0 plus an empty tagged-field section).
    pub fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        if version != 0 && version != 1 {
            return Err(EncodeError::UnsupportedVersion {
                api: "ResponseHeader",
                version,
            });
        }
        enc.i32(self.correlation_id);
        if version >= 1 {
            enc.empty_tagged_fields();
        }
        Ok(())
    }

    /// Decodes at header `version` (0 or 1).
    pub fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        if version != 0 && version != 1 {
            return Err(DecodeError::UnsupportedVersion {
                api: "ResponseHeader",
                version,
            });
        }
        dec.set_context("ResponseHeader", version);
        let h = ResponseHeader {
            correlation_id: dec.i32("CorrelationId")?,
        };
        if version >= 1 {
            dec.skip_tagged_fields()?;
        }
        Ok(h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_header_v1_golden() {
        let mut buf = Vec::new();
        let h = RequestHeaderRef {
            api_key: 18,
            api_version: 3,
            correlation_id: 7,
            client_id: Some("ab"),
        };
        h.encode(&mut Encoder::new(&mut buf), 1).unwrap();
        assert_eq!(buf, [0, 18, 0, 3, 0, 0, 0, 7, 0, 2, b'a', b'b']);
        let mut dec = Decoder::new(&buf);
        let d = RequestHeader::decode(&mut dec, 1).unwrap();
        assert!(dec.is_empty());
        assert_eq!(d.as_ref(), h);
    }

    #[test]
    fn request_header_v2_golden_null_client() {
        let mut buf = vec![0xAA]; // existing content is kept
        let h = RequestHeaderRef {
            api_key: 88,
            api_version: 0,
            correlation_id: -1,
            client_id: None,
        };
        h.encode(&mut Encoder::new(&mut buf), 2).unwrap();
        assert_eq!(
            buf,
            [0xAA, 0, 88, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0]
        );
        let mut dec = Decoder::new(&buf[1..]);
        let d = RequestHeader::decode(&mut dec, 2).unwrap();
        assert!(dec.is_empty());
        assert_eq!(d.client_id, None);
        assert_eq!(RequestHeader::peek_api(&buf[1..]).unwrap(), (88, 0));
    }

    #[test]
    fn response_header_golden() {
        let mut buf = Vec::new();
        ResponseHeader {
            correlation_id: 258,
        }
        .encode(&mut Encoder::new(&mut buf), 1)
        .unwrap();
        assert_eq!(buf, [0, 0, 1, 2, 0]);
        let mut dec = Decoder::new(&buf);
        assert_eq!(
            ResponseHeader::decode(&mut dec, 1).unwrap().correlation_id,
            258
        );
        assert!(dec.is_empty());
        let mut dec = Decoder::new(&buf[..4]);
        assert_eq!(
            ResponseHeader::decode(&mut dec, 0).unwrap().correlation_id,
            258
        );
    }

    #[test]
    fn header_versions_checked() {
        let mut buf = Vec::new();
        assert!(RequestHeader::default()
            .encode(&mut Encoder::new(&mut buf), 0)
            .is_err());
        assert!(ResponseHeader::default()
            .encode(&mut Encoder::new(&mut buf), 2)
            .is_err());
        assert!(matches!(
            RequestHeader::decode(&mut Decoder::new(&[0; 10]), 3),
            Err(DecodeError::UnsupportedVersion { .. })
        ));
    }

    #[test]
    fn truncated_headers_error() {
        let full = [0, 18, 0, 3, 0, 0, 0, 7, 0, 2, b'a', b'b', 0];
        for n in 0..full.len() {
            assert!(
                RequestHeader::decode(&mut Decoder::new(&full[..n]), 2).is_err(),
                "prefix {n}"
            );
        }
    }
}
