//! ApiVersions (API key 18), versions 0-5; flexible from v3.
//!
//! The response header is always v0 (no tagged fields), even for flexible versions, so that a
//! client can read it before it knows which versions the broker supports. A broker that does
//! not support the requested version answers with a v0-format body and `UNSUPPORTED_VERSION`;
//! retrying with a lower version is the caller's job.

use crate::protocol::codec::{
    decode_message, ApiMessage, Decodable, DecodeError, Decoder, Encodable, EncodeError, Encoder,
    Request,
};
use crate::protocol::error::BrokerErrorKind;
use crate::protocol::header::ResponseHeader;

/// `ApiVersionsRequest`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct ApiVersionsRequest {
    /// `ClientSoftwareName` (v3+, ignorable).
    pub client_software_name: String,
    /// `ClientSoftwareVersion` (v3+, ignorable).
    pub client_software_version: String,
    /// `ClusterId` (v5+, nullable, ignorable): the cluster the client intends to reach.
    pub cluster_id: Option<String>,
    /// `NodeId` (v5+, default -1, ignorable): the node the client intends to reach.
    pub node_id: i32,
}

impl Default for ApiVersionsRequest {
    fn default() -> Self {
        ApiVersionsRequest {
            client_software_name: String::new(),
            client_software_version: String::new(),
            cluster_id: None,
            node_id: -1,
        }
    }
}

impl Encodable for ApiVersionsRequest {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        // Every field is ignorable: older versions silently drop them, as Kafka does.
        if version >= 3 {
            enc.compact_string("ClientSoftwareName", &self.client_software_name)?;
            enc.compact_string("ClientSoftwareVersion", &self.client_software_version)?;
        }
        if version >= 5 {
            enc.compact_nullable_string("ClusterId", self.cluster_id.as_deref())?;
            enc.i32(self.node_id);
        }
        enc.end_struct(version >= 3);
        Ok(())
    }
}

impl Decodable for ApiVersionsRequest {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let mut r = ApiVersionsRequest::default();
        if version >= 3 {
            r.client_software_name = dec.compact_string("ClientSoftwareName")?;
            r.client_software_version = dec.compact_string("ClientSoftwareVersion")?;
        }
        if version >= 5 {
            r.cluster_id = dec.compact_nullable_string("ClusterId")?;
            r.node_id = dec.i32("NodeId")?;
        }
        dec.end_struct(version >= 3)?;
        Ok(r)
    }
}

impl ApiMessage for ApiVersionsRequest {
    const API_KEY: i16 = 18;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 5;
    const FLEXIBLE_FROM: i16 = 3;
    const NAME: &'static str = "ApiVersionsRequest";
}

impl crate::protocol::codec::Response for ApiVersionsResponse {
    type Request = ApiVersionsRequest;
}

impl Request for ApiVersionsRequest {
    type Response = ApiVersionsResponse;

    /// Always 0: see the module docs.
    fn response_header_version(_version: i16) -> i16 {
        0
    }
}

/// One supported API range (`ApiKeys` element).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct ApiVersion {
    /// `ApiKey`.
    pub api_key: i16,
    /// `MinVersion`, inclusive.
    pub min_version: i16,
    /// `MaxVersion`, inclusive.
    pub max_version: i16,
}

impl Encodable for ApiVersion {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        enc.i16(self.api_key);
        enc.i16(self.min_version);
        enc.i16(self.max_version);
        enc.end_struct(version >= 3);
        Ok(())
    }
}

impl Decodable for ApiVersion {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let v = ApiVersion {
            api_key: dec.i16("ApiKey")?,
            min_version: dec.i16("MinVersion")?,
            max_version: dec.i16("MaxVersion")?,
        };
        dec.end_struct(version >= 3)?;
        Ok(v)
    }
}

/// A feature the broker supports (`SupportedFeatures` element, tagged, v3+).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct SupportedFeatureKey {
    /// `Name`.
    pub name: String,
    /// `MinVersion`.
    pub min_version: i16,
    /// `MaxVersion`.
    pub max_version: i16,
}

impl Encodable for SupportedFeatureKey {
    fn encode(&self, enc: &mut Encoder<'_>, _version: i16) -> Result<(), EncodeError> {
        // Only ever inside a tagged field, hence always flexible.
        enc.compact_string("Name", &self.name)?;
        enc.i16(self.min_version);
        enc.i16(self.max_version);
        enc.empty_tagged_fields();
        Ok(())
    }
}

impl Decodable for SupportedFeatureKey {
    fn decode(dec: &mut Decoder<'_>, _version: i16) -> Result<Self, DecodeError> {
        let v = SupportedFeatureKey {
            name: dec.compact_string("Name")?,
            min_version: dec.i16("MinVersion")?,
            max_version: dec.i16("MaxVersion")?,
        };
        dec.skip_tagged_fields()?;
        Ok(v)
    }
}

/// A cluster-wide finalized feature (`FinalizedFeatures` element, tagged, v3+).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct FinalizedFeatureKey {
    /// `Name`.
    pub name: String,
    /// `MaxVersionLevel` (note: on the wire before the min).
    pub max_version_level: i16,
    /// `MinVersionLevel`.
    pub min_version_level: i16,
}

impl Encodable for FinalizedFeatureKey {
    fn encode(&self, enc: &mut Encoder<'_>, _version: i16) -> Result<(), EncodeError> {
        enc.compact_string("Name", &self.name)?;
        enc.i16(self.max_version_level);
        enc.i16(self.min_version_level);
        enc.empty_tagged_fields();
        Ok(())
    }
}

impl Decodable for FinalizedFeatureKey {
    fn decode(dec: &mut Decoder<'_>, _version: i16) -> Result<Self, DecodeError> {
        let v = FinalizedFeatureKey {
            name: dec.compact_string("Name")?,
            max_version_level: dec.i16("MaxVersionLevel")?,
            min_version_level: dec.i16("MinVersionLevel")?,
        };
        dec.skip_tagged_fields()?;
        Ok(v)
    }
}

/// `ApiVersionsResponse`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(test, derive(proptest_derive::Arbitrary))]
pub struct ApiVersionsResponse {
    /// `ErrorCode` (top level).
    pub error_code: i16,
    /// `ApiKeys`: the APIs the broker supports.
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub api_keys: Vec<ApiVersion>,
    /// `ThrottleTimeMs` (v1+, ignorable).
    pub throttle_time_ms: i32,
    /// `SupportedFeatures` (tag 0, v3+).
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub supported_features: Vec<SupportedFeatureKey>,
    /// `FinalizedFeaturesEpoch` (tag 1, v3+, default -1).
    pub finalized_features_epoch: i64,
    /// `FinalizedFeatures` (tag 2, v3+).
    #[cfg_attr(
        test,
        proptest(strategy = "crate::protocol::api::test_util::small_vec()")
    )]
    pub finalized_features: Vec<FinalizedFeatureKey>,
    /// `ZkMigrationReady` (tag 3, v3+, default false).
    pub zk_migration_ready: bool,
}

impl Default for ApiVersionsResponse {
    fn default() -> Self {
        ApiVersionsResponse {
            error_code: 0,
            api_keys: Vec::new(),
            throttle_time_ms: 0,
            supported_features: Vec::new(),
            finalized_features_epoch: -1,
            finalized_features: Vec::new(),
            zk_migration_ready: false,
        }
    }
}

impl ApiVersionsResponse {
    /// The top-level error.
    pub fn error(&self) -> BrokerErrorKind {
        BrokerErrorKind::from_code(self.error_code)
    }

    /// The broker's version range for `api_key`, if it supports the API.
    pub fn find(&self, api_key: i16) -> Option<ApiVersion> {
        self.api_keys.iter().copied().find(|k| k.api_key == api_key)
    }
}

impl Encodable for ApiVersionsResponse {
    fn encode(&self, enc: &mut Encoder<'_>, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 3;
        enc.i16(self.error_code);
        enc.array("ApiKeys", &self.api_keys, flex, version)?;
        if version >= 1 {
            enc.i32(self.throttle_time_ms);
        }
        if flex {
            // Tagged fields are written only when they differ from their defaults.
            let sf = !self.supported_features.is_empty();
            let ep = self.finalized_features_epoch != -1;
            let ff = !self.finalized_features.is_empty();
            let zk = self.zk_migration_ready;
            enc.unsigned_varint(u32::from(sf) + u32::from(ep) + u32::from(ff) + u32::from(zk));
            if sf {
                enc.tagged_field(0, |e| {
                    e.array("SupportedFeatures", &self.supported_features, true, version)
                })?;
            }
            if ep {
                enc.tagged_field(1, |e| {
                    e.i64(self.finalized_features_epoch);
                    Ok(())
                })?;
            }
            if ff {
                enc.tagged_field(2, |e| {
                    e.array("FinalizedFeatures", &self.finalized_features, true, version)
                })?;
            }
            if zk {
                enc.tagged_field(3, |e| {
                    e.bool(true);
                    Ok(())
                })?;
            }
        }
        Ok(())
    }
}

impl Decodable for ApiVersionsResponse {
    fn decode(dec: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 3;
        let mut r = ApiVersionsResponse {
            error_code: dec.i16("ErrorCode")?,
            api_keys: dec.array("ApiKeys", flex, version)?,
            ..Default::default()
        };
        if version >= 1 {
            r.throttle_time_ms = dec.i32("ThrottleTimeMs")?;
        }
        if flex {
            dec.tagged_fields(|tag, sub| {
                match tag {
                    0 => r.supported_features = sub.array("SupportedFeatures", true, version)?,
                    1 => r.finalized_features_epoch = sub.i64("FinalizedFeaturesEpoch")?,
                    2 => r.finalized_features = sub.array("FinalizedFeatures", true, version)?,
                    3 => r.zk_migration_ready = sub.bool("ZkMigrationReady")?,
                    _ => return Ok(false),
                }
                Ok(true)
            })?;
        }
        Ok(r)
    }
}

/// Decodes an ApiVersions response frame payload (header v0 + body) for a request sent at
/// `version`, falling back to a v0 body if that fails, like Kafka's `ApiVersionsResponse.parse`:
/// a broker that does not support `version` answers `UNSUPPORTED_VERSION` in v0 format.
///
/// Returns the header, the body, and the body version that decoded. If both attempts fail the
/// error of the first attempt is returned (it names the version actually requested).
pub fn decode_api_versions_response_frame(
    frame: &[u8],
    version: i16,
) -> Result<(ResponseHeader, ApiVersionsResponse, i16), DecodeError> {
    let mut dec = Decoder::with_context(frame, ApiVersionsResponse::NAME, version);
    let header = ResponseHeader::decode(&mut dec, 0)?;
    let body = dec.rest();
    match decode_message::<ApiVersionsResponse>(body, version) {
        Ok(r) => Ok((header, r, version)),
        Err(first) if version != 0 => match decode_message::<ApiVersionsResponse>(body, 0) {
            Ok(r) => Ok((header, r, 0)),
            Err(_) => Err(first),
        },
        Err(e) => Err(e),
    }
}

impl ApiMessage for ApiVersionsResponse {
    const API_KEY: i16 = 18;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 5;
    const FLEXIBLE_FROM: i16 = 3;
    const NAME: &'static str = "ApiVersionsResponse";
}

#[cfg(test)]
mod tests;
