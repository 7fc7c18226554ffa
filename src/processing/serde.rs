//! SCRATCH stub of helper `state`'s serdes (contract only); replaced by the real file on merge.
#![allow(missing_docs)]

/// A serde.
pub trait Serde<T>: Send + Sync {
    fn serialize(&self, value: &T) -> Vec<u8>;
    fn deserialize(&self, bytes: &[u8]) -> Result<T, SerdeError>;
}
pub struct StringSerde;
pub struct LongSerde;
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SerdeError(String);

impl Serde<String> for StringSerde {
    fn serialize(&self, value: &String) -> Vec<u8> {
        value.as_bytes().to_vec()
    }
    fn deserialize(&self, bytes: &[u8]) -> Result<String, SerdeError> {
        Ok(String::from_utf8_lossy(bytes).into_owned())
    }
}
impl Serde<i64> for LongSerde {
    fn serialize(&self, value: &i64) -> Vec<u8> {
        value.to_be_bytes().to_vec()
    }
    fn deserialize(&self, bytes: &[u8]) -> Result<i64, SerdeError> {
        let b: [u8; 8] = bytes
            .try_into()
            .map_err(|_| SerdeError("Size of data received by LongDeserializer is not 8".into()))?;
        Ok(i64::from_be_bytes(b))
    }
}
impl From<SerdeError> for crate::Error {
    fn from(e: SerdeError) -> Self {
        crate::Error::InvalidConfiguration {
            field: "serde",
            reason: e.0,
        }
    }
}
