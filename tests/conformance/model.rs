//! The test-side model of Kafka messages: a seeded generator of random values and a writer of
//! Kafka's JSON-converter format, both driven by per-struct field tables (`conf!`).
//!
//! A field table lists, for each schema field, the Rust field, Kafka's JSON name (lowerCamel of
//! the schema name), the versions that carry the field, the first version in which it is
//! nullable, and its schema default. The tables are written from the schema files; the oracle
//! checks them (a wrong JSON name or version range makes Kafka's converter fail or disagree).

use kafka_streams_group::protocol::node_ids::NodeIds;
use kafka_streams_group::protocol::Uuid;
use serde_json::{Map, Value};

/// No version: for `nullable_from` when a field is never nullable.
pub const NEVER: i16 = i16::MAX;
/// Highest version of anything, for open-ended ranges (`"0+"`).
pub const ANY: i16 = i16::MAX;
/// Passed to [`Field::json`] instead of a version: write every field of every version, so that
/// Kafka's converter (which reads whatever fields are present) rebuilds the exact value.
pub const ALL_FIELDS: i16 = -1;

/// SplitMix64: tiny, seedable, good enough to drive test data and fully reproducible.
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    /// Next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// True with probability `1/n`.
    pub fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }
    /// A signed integer that is an edge value (0, ±1, MIN, MAX) a third of the time, else small
    /// or fully random.
    pub fn int(&mut self, min: i64, max: i64) -> i64 {
        match self.below(6) {
            0 => [0, -1, 1, min, max][self.below(5) as usize].clamp(min, max),
            1 | 2 => (self.below(200) as i64 - 50).clamp(min, max),
            _ => {
                let span = (max as i128 - min as i128 + 1) as u128;
                (min as i128 + (self.next() as u128 % span) as i128) as i64
            }
        }
    }
    /// A short array length.
    pub fn len(&mut self) -> usize {
        [0, 0, 1, 1, 1, 2, 2, 3][self.below(8) as usize]
    }
}

/// A value that can be generated for a version and written as Kafka JSON.
pub trait Field: Sized {
    /// True for scalars: arrays of them are sometimes made long (multi-byte length varints)
    /// without the size blow-up that long arrays of structs would cause.
    const LEAF: bool = false;
    /// A random value; `nullable` says whether `None` is allowed (for `Option`s).
    fn gen(r: &mut Rng, version: i16, nullable: bool) -> Self;
    /// The value in Kafka's JSON-converter format.
    fn json(&self, version: i16) -> Value;
}

macro_rules! int_field {
    ($($t:ty),*) => {$(
        impl Field for $t {
            const LEAF: bool = true;
            fn gen(r: &mut Rng, _: i16, _: bool) -> Self {
                r.int(<$t>::MIN as i64, <$t>::MAX as i64) as $t
            }
            fn json(&self, _: i16) -> Value {
                Value::from(*self)
            }
        }
    )*};
}
int_field!(i8, i16, i32, i64, u16);

impl Field for u32 {
    fn gen(r: &mut Rng, _: i16, _: bool) -> Self {
        r.int(0, u32::MAX as i64) as u32
    }
    fn json(&self, _: i16) -> Value {
        Value::from(*self)
    }
}

impl Field for bool {
    fn gen(r: &mut Rng, _: i16, _: bool) -> Self {
        r.one_in(2)
    }
    fn json(&self, _: i16) -> Value {
        Value::Bool(*self)
    }
}

impl Field for String {
    const LEAF: bool = true;
    fn gen(r: &mut Rng, _: i16, _: bool) -> Self {
        // ASCII, 2-, 3- and 4-byte UTF-8, and characters JSON must escape.
        const CHARS: &[char] = &[
            'a', 'b', 'z', '0', '9', '-', '.', '_', ' ', '"', '\\', '/', '\n', '\u{1}', 'é', '€',
            '中', '😀',
        ];
        // Now and then long enough for a multi-byte length varint (compact length >= 128).
        let n = if r.one_in(40) {
            40 + r.below(200) as usize
        } else {
            [0, 1, 1, 2, 3, 5, 8, 13][r.below(8) as usize]
        };
        (0..n)
            .map(|_| CHARS[r.below(CHARS.len() as u64) as usize])
            .collect()
    }
    fn json(&self, _: i16) -> Value {
        Value::String(self.clone())
    }
}

impl Field for Vec<u8> {
    fn gen(r: &mut Rng, _: i16, _: bool) -> Self {
        let n = if r.one_in(20) {
            120 + r.below(300) as usize
        } else {
            [0, 1, 2, 3, 4, 7, 16, 33][r.below(8) as usize]
        };
        (0..n).map(|_| r.next() as u8).collect()
    }
    fn json(&self, _: i16) -> Value {
        // Jackson writes byte[] (BinaryNode) as standard base64 with padding.
        Value::String(base64(self))
    }
}

impl Field for Uuid {
    fn gen(r: &mut Rng, _: i16, _: bool) -> Self {
        if r.one_in(4) {
            return Uuid::ZERO;
        }
        let mut b = [0u8; 16];
        b.iter_mut().for_each(|x| *x = r.next() as u8);
        Uuid(b)
    }
    fn json(&self, _: i16) -> Value {
        Value::String(self.to_string())
    }
}

impl<T: Field> Field for Option<T> {
    fn gen(r: &mut Rng, version: i16, nullable: bool) -> Self {
        if nullable && r.one_in(3) {
            None
        } else {
            Some(T::gen(r, version, false))
        }
    }
    fn json(&self, version: i16) -> Value {
        match self {
            Some(v) => v.json(version),
            None => Value::Null,
        }
    }
}

impl<T: Field> Field for Vec<T> {
    fn gen(r: &mut Rng, version: i16, _: bool) -> Self {
        let n = if T::LEAF && r.one_in(30) {
            120 + r.below(100) as usize
        } else {
            r.len()
        };
        (0..n).map(|_| T::gen(r, version, false)).collect()
    }
    fn json(&self, version: i16) -> Value {
        Value::Array(self.iter().map(|v| v.json(version)).collect())
    }
}

/// Broker id lists (Metadata partitions) are `[]int32` on the wire: generated and written as
/// `Vec<i32>`, so long lists (spilled to the heap) are covered as well as short (inline) ones.
impl Field for NodeIds {
    fn gen(r: &mut Rng, version: i16, nullable: bool) -> Self {
        Vec::<i32>::gen(r, version, nullable).into()
    }
    fn json(&self, version: i16) -> Value {
        self.to_vec().json(version)
    }
}

/// `Vec<u8>` is `bytes`, so arrays of bytes need a wrapper; not needed by any message here.
pub fn base64(b: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in b.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for k in 0..4 {
            if k <= c.len() {
                out.push(T[((n >> (18 - 6 * k)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Writes a JSON object from (name, present, value) triples; used by `conf!`.
pub fn object(fields: Vec<(&'static str, bool, Value)>) -> Value {
    let mut m = Map::new();
    for (name, present, value) in fields {
        if present {
            m.insert(name.to_owned(), value);
        }
    }
    Value::Object(m)
}

/// Implements [`Field`] for a struct from its field table:
///
/// `conf!(Path { rust_field: "jsonName" [min_version, max_version, nullable_from] = default, … });`
///
/// Fields outside `min..=max` are set to `default` when generating (a version cannot carry a
/// non-default value) and left out of the JSON (Kafka's converter leaves them out too). A field
/// written `rust_field: "jsonName" tagged [...] = default` is a tagged field: Kafka's converter
/// writes it only when it differs from its default. `rest: expr` fills Rust-only fields.
#[macro_export]
macro_rules! conf {
    ($ty:path { $($f:ident : $json:literal $($tagged:ident)? [$vmin:expr, $vmax:expr, $nmin:expr] = $def:expr),* $(,)? }
     $(rest: $rest:expr)?) => {
        impl $crate::model::Field for $ty {
            #[allow(unused_variables, clippy::absurd_extreme_comparisons)]
            fn gen(r: &mut $crate::model::Rng, v: i16, _: bool) -> Self {
                Self {
                    $($f: if ($vmin..=$vmax).contains(&v) {
                        $crate::model::Field::gen(r, v, v >= $nmin)
                    } else {
                        $def
                    },)*
                    $(..$rest)?
                }
            }
            #[allow(clippy::absurd_extreme_comparisons)]
            fn json(&self, v: i16) -> serde_json::Value {
                $crate::model::object(vec![
                    $(($json,
                       v == $crate::model::ALL_FIELDS
                           || (($vmin..=$vmax).contains(&v) $(&& { let _ = stringify!($tagged); self.$f != $def })?),
                       $crate::model::Field::json(&self.$f, v)),)*
                ])
            }
        }
    };
}
