//! Typed serdes of DSL operations (`Consumed`, `Produced`, `Grouped`, `Materialized`), with
//! the bytes of Java's `Serdes.*`, and their type-erased form the runner calls.
//!
//! A [`TypedSerde<T>`] turns a `T` into bytes and back. A Kafka null (no key or no value)
//! never reaches a serde, as in Java; a type that can hold a null does so through the
//! serde's *null*: `Option<T>` (`None` is a null, see [`TypedSerde::nullable`]) and `()`
//! (Java's `Void`, always null). A null arriving where the type cannot hold it is an error
//! of the operation that would need it, naming the type.
//!
//! Built-in types have a default serde ([`default_serde`]), the one Java's `Serdes` gives:
//!
//! | Rust type | Java serde | bytes |
//! | --- | --- | --- |
//! | `String` | `Serdes.String()` | UTF-8 |
//! | `i64` | `Serdes.Long()` | 8 bytes big-endian |
//! | `i32` | `Serdes.Integer()` | 4 bytes big-endian |
//! | `f64` | `Serdes.Double()` | `doubleToLongBits`, big-endian (one NaN) |
//! | `Vec<u8>` | `Serdes.ByteArray()` | as is |
//! | [`Bytes`] | `Serdes.Bytes()` | as is |
//! | [`Uuid`] | `Serdes.UUID()` | `toString()` in UTF-8 (36 characters) |
//! | `()` | `Serdes.Void()` | always null |
//!
//! and `Option<T>` of each (null for `None`). Any other type needs a serde given with the
//! operation ([`TypedSerde::new`]) wherever the DSL writes it to a topic or a store.

use std::any::{Any, TypeId};
use std::fmt;
use std::sync::Arc;

pub use crate::common::SerdeError;

/// A value of any type, as the runner passes it between operations.
pub type AnyValue = Box<dyn Any>;

type SerFn<T> = Arc<dyn Fn(&T) -> Option<Vec<u8>> + Send + Sync>;
type DeFn<T> = Arc<dyn Fn(&[u8]) -> Result<T, SerdeError> + Send + Sync>;
type NullFn<T> = Arc<dyn Fn() -> T + Send + Sync>;

/// A serde of `T`: Java's `Serde<T>` for one Rust type (see the module docs).
pub struct TypedSerde<T> {
    name: &'static str,
    ser: SerFn<T>,
    de: DeFn<T>,
    null: Option<NullFn<T>>,
}

impl<T> Clone for TypedSerde<T> {
    fn clone(&self) -> Self {
        Self {
            name: self.name,
            ser: self.ser.clone(),
            de: self.de.clone(),
            null: self.null.clone(),
        }
    }
}

impl<T> fmt::Debug for TypedSerde<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TypedSerde({})", self.name)
    }
}

impl<T: 'static> TypedSerde<T> {
    /// A user serde named `name` (a label, as Java's serde class name): `serialize` writes
    /// the bytes, `deserialize` reads them or says why not.
    pub fn new(
        name: &'static str,
        serialize: impl Fn(&T) -> Vec<u8> + Send + Sync + 'static,
        deserialize: impl Fn(&[u8]) -> Result<T, SerdeError> + Send + Sync + 'static,
    ) -> Self {
        Self {
            name,
            ser: Arc::new(move |v| Some(serialize(v))),
            de: Arc::new(deserialize),
            null: None,
        }
    }

    /// The serde's label.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The bytes of `value` (`None`: a Kafka null).
    pub fn serialize(&self, value: &T) -> Option<Vec<u8>> {
        (self.ser)(value)
    }

    /// The value of `bytes`, or the error Java's deserializer would throw.
    pub fn deserialize(&self, bytes: &[u8]) -> Result<T, SerdeError> {
        (self.de)(bytes)
    }

    /// The same serde over `Option<T>`: `None` is a Kafka null.
    pub fn nullable(&self) -> TypedSerde<Option<T>> {
        let ser = self.ser.clone();
        let de = self.de.clone();
        TypedSerde {
            name: self.name,
            ser: Arc::new(move |v: &Option<T>| v.as_ref().and_then(|v| ser(v))),
            de: Arc::new(move |b| de(b).map(Some)),
            null: Some(Arc::new(|| None)),
        }
    }
}

impl<T: 'static> TypedSerde<T> {
    /// The type-erased form the runner calls.
    pub fn erase(&self) -> AnySerde {
        let ser = self.ser.clone();
        let de = self.de.clone();
        let null = self.null.clone();
        AnySerde {
            name: self.name,
            type_id: TypeId::of::<T>(),
            type_name: std::any::type_name::<T>(),
            ser: Arc::new(move |v: &dyn Any| v.downcast_ref::<T>().map(|v| ser(v))),
            de: Arc::new(move |b| de(b).map(|v| Box::new(v) as AnyValue)),
            null: null.map(|n| Arc::new(move || Box::new(n()) as AnyValue) as AnyNullFn),
        }
    }
}

type AnySerFn = Arc<dyn Fn(&dyn Any) -> Option<Option<Vec<u8>>> + Send + Sync>;
type AnyDeFn = Arc<dyn Fn(&[u8]) -> Result<AnyValue, SerdeError> + Send + Sync>;
type AnyNullFn = Arc<dyn Fn() -> AnyValue + Send + Sync>;

/// A [`TypedSerde`] with its type erased; it knows the type it serves.
#[derive(Clone)]
pub struct AnySerde {
    name: &'static str,
    type_id: TypeId,
    type_name: &'static str,
    ser: AnySerFn,
    de: AnyDeFn,
    null: Option<AnyNullFn>,
}

impl fmt::Debug for AnySerde {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AnySerde({} for {})", self.name, self.type_name)
    }
}

impl PartialEq for AnySerde {
    /// Same label and same type.
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.type_id == other.type_id
    }
}

impl Eq for AnySerde {}

impl AnySerde {
    /// The serde's label (`"String"`, `"Long"`, a user serde's name).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The Rust type it serves, by name.
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }

    /// Whether it serves `T`.
    pub fn serves<T: 'static>(&self) -> bool {
        self.type_id == TypeId::of::<T>()
    }

    /// The bytes of `value` (`Ok(None)`: a Kafka null); an error if `value` is not of the
    /// serde's type.
    pub fn serialize(&self, value: &dyn Any) -> Result<Option<Vec<u8>>, String> {
        (self.ser)(value).ok_or_else(|| {
            format!(
                "serde {} serves {}, not the value given",
                self.name, self.type_name
            )
        })
    }

    /// Reads `bytes` (`None`: a Kafka null, which gives the type's null if it has one, and
    /// `Ok(None)` if it has not).
    pub fn deserialize(&self, bytes: Option<&[u8]>) -> Result<Option<AnyValue>, SerdeError> {
        match bytes {
            Some(b) => (self.de)(b).map(Some),
            None => Ok(self.null.as_ref().map(|n| n())),
        }
    }
}

/// A UUID, read and written as Java's `Serdes.UUID()` does: its 36-character text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Uuid(pub u128);

impl fmt::Display for Uuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let h = format!("{:032x}", self.0);
        write!(
            f,
            "{}-{}-{}-{}-{}",
            &h[0..8],
            &h[8..12],
            &h[12..16],
            &h[16..20],
            &h[20..32]
        )
    }
}

impl Uuid {
    /// Java's `UUID.fromString` for the canonical form (five groups of 8-4-4-4-12 hex
    /// digits; Java also takes shorter groups, which are refused here).
    pub fn parse(text: &str) -> Result<Uuid, SerdeError> {
        let bad = || SerdeError::new("UUID", format!("invalid UUID string: {text:?}"));
        let groups: Vec<&str> = text.split('-').collect();
        let lens = [8, 4, 4, 4, 12];
        if groups.len() != 5 || groups.iter().zip(lens).any(|(g, l)| g.len() != l) {
            return Err(bad());
        }
        let hex: String = groups.concat();
        u128::from_str_radix(&hex, 16).map(Uuid).map_err(|_| bad())
    }
}

/// Java's `Bytes`: a byte array (`Serdes.Bytes()` writes it as it is).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bytes(pub Vec<u8>);

/// Java's `Serdes`: the built-in serdes, typed.
pub struct Serdes;

fn exact<const N: usize>(serde: &'static str, b: &[u8]) -> Result<[u8; N], SerdeError> {
    let java = match serde {
        "Long" => "LongDeserializer",
        "Integer" => "IntegerDeserializer",
        _ => "DoubleDeserializer",
    };
    b.try_into().map_err(|_| {
        SerdeError::new(
            serde,
            format!(
                "Size of data received by {java} is not {N} (got {} bytes)",
                b.len()
            ),
        )
    })
}

impl Serdes {
    /// `Serdes.String()`: UTF-8; malformed bytes read as U+FFFD, as Java's `new String`.
    pub fn string() -> TypedSerde<String> {
        TypedSerde::new(
            "String",
            |s: &String| s.as_bytes().to_vec(),
            |b| Ok(String::from_utf8_lossy(b).into_owned()),
        )
    }

    /// `Serdes.Long()`.
    pub fn long() -> TypedSerde<i64> {
        TypedSerde::new(
            "Long",
            |v: &i64| v.to_be_bytes().to_vec(),
            |b| exact::<8>("Long", b).map(i64::from_be_bytes),
        )
    }

    /// `Serdes.Integer()`.
    pub fn integer() -> TypedSerde<i32> {
        TypedSerde::new(
            "Integer",
            |v: &i32| v.to_be_bytes().to_vec(),
            |b| exact::<4>("Integer", b).map(i32::from_be_bytes),
        )
    }

    /// `Serdes.Double()`: `Double.doubleToLongBits` (every NaN is `0x7ff8000000000000`).
    pub fn double() -> TypedSerde<f64> {
        TypedSerde::new(
            "Double",
            |v: &f64| {
                let bits = if v.is_nan() {
                    0x7ff8_0000_0000_0000u64
                } else {
                    v.to_bits()
                };
                bits.to_be_bytes().to_vec()
            },
            |b| exact::<8>("Double", b).map(|a| f64::from_bits(u64::from_be_bytes(a))),
        )
    }

    /// `Serdes.ByteArray()`.
    pub fn byte_array() -> TypedSerde<Vec<u8>> {
        TypedSerde::new("ByteArray", |v: &Vec<u8>| v.clone(), |b| Ok(b.to_vec()))
    }

    /// `Serdes.Bytes()`.
    pub fn bytes() -> TypedSerde<Bytes> {
        TypedSerde::new("Bytes", |v: &Bytes| v.0.clone(), |b| Ok(Bytes(b.to_vec())))
    }

    /// `Serdes.UUID()`.
    pub fn uuid() -> TypedSerde<Uuid> {
        TypedSerde::new(
            "UUID",
            |v: &Uuid| v.to_string().into_bytes(),
            |b| Uuid::parse(&String::from_utf8_lossy(b)),
        )
    }

    /// `Serdes.Void()`: writes null; reading any bytes fails, as Java's
    /// `VoidDeserializer` does.
    pub fn void() -> TypedSerde<()> {
        TypedSerde {
            name: "Void",
            ser: Arc::new(|_| None),
            de: Arc::new(|_| {
                Err(SerdeError::new(
                    "Void",
                    "Data should be null for a VoidDeserializer",
                ))
            }),
            null: Some(Arc::new(|| ())),
        }
    }
}

/// The built-in serde of `T` (see the module docs), `None` for any other type.
pub fn default_serde<T: 'static>() -> Option<AnySerde> {
    fn pick<T: 'static, U: 'static>(serde: fn() -> TypedSerde<U>) -> Option<AnySerde> {
        let id = TypeId::of::<T>();
        if id == TypeId::of::<U>() {
            Some(serde().erase())
        } else if id == TypeId::of::<Option<U>>() {
            Some(serde().nullable().erase())
        } else {
            None
        }
    }
    pick::<T, String>(Serdes::string)
        .or_else(|| pick::<T, i64>(Serdes::long))
        .or_else(|| pick::<T, i32>(Serdes::integer))
        .or_else(|| pick::<T, f64>(Serdes::double))
        .or_else(|| pick::<T, Vec<u8>>(Serdes::byte_array))
        .or_else(|| pick::<T, Bytes>(Serdes::bytes))
        .or_else(|| pick::<T, Uuid>(Serdes::uuid))
        .or_else(|| pick::<T, ()>(Serdes::void))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    /// Java 4.x serializers' bytes for the same values.
    #[test]
    fn java_bytes() {
        assert_eq!(
            hex(&Serdes::long().serialize(&-2).unwrap()),
            "fffffffffffffffe"
        );
        assert_eq!(hex(&Serdes::integer().serialize(&258).unwrap()), "00000102");
        assert_eq!(
            hex(&Serdes::double().serialize(&1.5).unwrap()),
            "3ff8000000000000"
        );
        assert_eq!(
            hex(&Serdes::double().serialize(&-f64::NAN).unwrap()),
            "7ff8000000000000"
        );
        let u = Uuid(0x123e4567_e89b_12d3_a456_426614174000);
        let text = Serdes::uuid().serialize(&u).unwrap();
        assert_eq!(text, b"123e4567-e89b-12d3-a456-426614174000");
        assert_eq!(Serdes::uuid().deserialize(&text).unwrap(), u);
        assert!(Serdes::uuid().deserialize(b"123e4567").is_err());
        assert_eq!(Serdes::void().serialize(&()), None);
        assert!(Serdes::void().deserialize(b"x").is_err());
        assert_eq!(
            Serdes::bytes().serialize(&Bytes(vec![0, 255])).unwrap(),
            vec![0, 255]
        );
        let e = Serdes::long().deserialize(&[0; 7]).unwrap_err();
        assert!(e.reason().contains("not 8 (got 7 bytes)"), "{e}");
    }

    #[test]
    fn defaults_by_type_and_nulls() {
        assert_eq!(default_serde::<String>().unwrap().name(), "String");
        assert_eq!(default_serde::<Option<i64>>().unwrap().name(), "Long");
        assert!(default_serde::<(u8, u8)>().is_none());
        let s = default_serde::<Option<String>>().unwrap();
        // A null reads as `None` of an `Option` type, and as nothing for a plain type.
        let null = s.deserialize(None).unwrap().unwrap();
        assert_eq!(null.downcast_ref::<Option<String>>(), Some(&None));
        assert!(default_serde::<String>()
            .unwrap()
            .deserialize(None)
            .unwrap()
            .is_none());
        assert_eq!(s.serialize(&None::<String>).unwrap(), None);
        assert!(s.serialize(&5i64).is_err(), "wrong type is an error");
    }
}
