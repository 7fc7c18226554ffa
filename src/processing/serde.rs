//! Kafka's built-in serdes, byte-exact (`Serdes.String()`, `Serdes.Long()`,
//! `Serdes.Integer()`, `Serdes.ByteArray()`).
//!
//! A Kafka null (a record without key or value) is `None` at the call sites and never
//! reaches a serde, as Java maps null to null without calling the serializer's logic.
//!
//! A serde of an unsized type takes a borrow and gives back the owned form:
//! [`StringSerde`] serializes a `&str` (no `String` needed) and reads a `String`;
//! [`ByteArraySerde`] serializes a `&[u8]` and reads a `Vec<u8>`.
//!
//! ```
//! use kafka_streams_group::processing::{LongSerde, Serde, StringSerde};
//! assert_eq!(StringSerde.serialize("é"), vec![0xc3, 0xa9]);
//! let word: String = StringSerde.deserialize(b"kafka")?;
//! assert_eq!(LongSerde.deserialize(&LongSerde.serialize(&7))?, 7);
//! # Ok::<(), kafka_streams_group::processing::SerdeError>(())
//! ```

pub use crate::common::SerdeError;

/// Turns values into bytes and back, exactly as the matching Java serde does.
///
/// `T` may be unsized (`str`, `[u8]`): [`serialize`](Self::serialize) borrows it and
/// [`deserialize`](Self::deserialize) returns its owned form (`T::Owned`: `String`,
/// `Vec<u8>`; a sized `Clone` type is its own owned form).
pub trait Serde<T: ?Sized + ToOwned>: Send + Sync {
    /// The bytes Java's serializer writes for `value`.
    fn serialize(&self, value: &T) -> Vec<u8>;
    /// The value Java's deserializer reads from `bytes`, or the error it would throw.
    fn deserialize(&self, bytes: &[u8]) -> Result<T::Owned, SerdeError>;
}

/// `Serdes.String()`: UTF-8 bytes; reading replaces malformed UTF-8 by U+FFFD as Java's
/// `new String(bytes, UTF_8)` does, so it never fails.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StringSerde;

impl Serde<str> for StringSerde {
    fn serialize(&self, value: &str) -> Vec<u8> {
        value.as_bytes().to_vec()
    }

    fn deserialize(&self, bytes: &[u8]) -> Result<String, SerdeError> {
        Ok(String::from_utf8_lossy(bytes).into_owned())
    }
}

/// `Serdes.Long()`: 8 bytes, big-endian two's complement.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LongSerde;

impl Serde<i64> for LongSerde {
    fn serialize(&self, value: &i64) -> Vec<u8> {
        value.to_be_bytes().to_vec()
    }

    fn deserialize(&self, bytes: &[u8]) -> Result<i64, SerdeError> {
        let b: [u8; 8] = bytes.try_into().map_err(|_| {
            SerdeError::new(
                "LongSerde",
                format!(
                    "Size of data received by LongDeserializer is not 8 (got {} bytes)",
                    bytes.len()
                ),
            )
        })?;
        Ok(i64::from_be_bytes(b))
    }
}

/// `Serdes.Integer()`: 4 bytes, big-endian two's complement.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IntegerSerde;

impl Serde<i32> for IntegerSerde {
    fn serialize(&self, value: &i32) -> Vec<u8> {
        value.to_be_bytes().to_vec()
    }

    fn deserialize(&self, bytes: &[u8]) -> Result<i32, SerdeError> {
        let b: [u8; 4] = bytes.try_into().map_err(|_| {
            SerdeError::new(
                "IntegerSerde",
                format!(
                    "Size of data received by IntegerDeserializer is not 4 (got {} bytes)",
                    bytes.len()
                ),
            )
        })?;
        Ok(i32::from_be_bytes(b))
    }
}

/// `Serdes.ByteArray()`: the bytes as they are.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ByteArraySerde;

impl Serde<[u8]> for ByteArraySerde {
    fn serialize(&self, value: &[u8]) -> Vec<u8> {
        value.to_vec()
    }

    fn deserialize(&self, bytes: &[u8]) -> Result<Vec<u8>, SerdeError> {
        Ok(bytes.to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    /// The probe bytes of streams-data-path.md §7 (Java 4.4.0 serializers).
    #[test]
    fn java_probe_bytes() {
        assert_eq!(hex(&StringSerde.serialize("é")), "c3a9");
        assert_eq!(StringSerde.serialize(""), Vec::<u8>::new());
        // An owned String still serializes, by deref.
        let owned = String::from("é");
        assert_eq!(StringSerde.serialize(&owned), vec![0xc3, 0xa9]);
        assert_eq!(hex(&LongSerde.serialize(&1)), "0000000000000001");
        assert_eq!(hex(&LongSerde.serialize(&-2)), "fffffffffffffffe");
        assert_eq!(hex(&IntegerSerde.serialize(&258)), "00000102");
        assert_eq!(ByteArraySerde.serialize(&[0, 255, 7]), vec![0, 255, 7]);
        let owned: Vec<u8> = b"\x01".to_vec();
        assert_eq!(ByteArraySerde.serialize(&owned), vec![1]);
    }

    #[test]
    fn round_trips() {
        for v in [i64::MIN, -2, -1, 0, 1, 3, i64::MAX] {
            assert_eq!(LongSerde.deserialize(&LongSerde.serialize(&v)).unwrap(), v);
        }
        for v in [i32::MIN, -1, 0, 258, i32::MAX] {
            assert_eq!(
                IntegerSerde
                    .deserialize(&IntegerSerde.serialize(&v))
                    .unwrap(),
                v
            );
        }
        for s in ["", "kafka", "é", "日本語", "🦀 crab"] {
            assert_eq!(
                StringSerde.deserialize(&StringSerde.serialize(s)).unwrap(),
                s
            );
        }
        assert_eq!(ByteArraySerde.deserialize(&[1, 2]).unwrap(), vec![1, 2]);
        assert_eq!(ByteArraySerde.deserialize(&[]).unwrap(), Vec::<u8>::new());
    }

    #[test]
    fn strict_lengths_like_java() {
        let e = LongSerde.deserialize(&[0; 7]).unwrap_err();
        assert_eq!(e.serde(), "LongSerde");
        assert!(e.reason().contains("is not 8"), "{e}");
        assert!(e.reason().contains("got 7 bytes"), "{e}");
        assert!(LongSerde.deserialize(&[0; 9]).is_err());
        assert!(LongSerde.deserialize(&[]).is_err());
        let e = IntegerSerde.deserialize(&[0; 8]).unwrap_err();
        assert!(e.reason().contains("is not 4"), "{e}");
        let e = e.with_topic("counts");
        assert!(e.to_string().contains("(topic counts)"), "{e}");
        let crate_error: crate::Error = e.into();
        assert!(!crate_error.is_retriable());
        let text = crate_error.clone().to_string();
        assert!(
            text.contains("IntegerSerde") && text.contains("counts"),
            "{text}"
        );
    }

    #[test]
    fn malformed_utf8_is_replaced_not_rejected() {
        let s = StringSerde.deserialize(&[b'a', 0xff, b'b']).unwrap();
        assert_eq!(s, "a\u{fffd}b");
        // A truncated multi-byte sequence too.
        assert_eq!(StringSerde.deserialize(&[0xc3]).unwrap(), "\u{fffd}");
    }
}
