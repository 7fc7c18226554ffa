//! Shared checks for the per-API unit tests.

use crate::protocol::codec::{
    decode_message, encode_message, ApiMessage, DecodeError, EncodeError,
};
use std::fmt::Debug;

/// Encodes `m` at `v`, asserts the bytes equal `golden`, and that they decode back to `m`.
pub fn golden<M: ApiMessage + Debug + PartialEq>(m: &M, v: i16, golden: &[u8]) {
    let mut buf = Vec::new();
    encode_message(&mut buf, m, v).expect("encode");
    assert_eq!(
        buf,
        golden,
        "{} v{v} encoding differs from golden bytes",
        M::NAME
    );
    let back: M = decode_message(golden, v).expect("decode golden");
    assert_eq!(&back, m, "{} v{v} golden decode", M::NAME);
    every_prefix_fails::<M>(golden, v);
}

/// Every strict prefix of a valid encoding must fail to decode (and never panic).
pub fn every_prefix_fails<M: ApiMessage + Debug>(bytes: &[u8], v: i16) {
    for n in 0..bytes.len() {
        match decode_message::<M>(&bytes[..n], v) {
            Err(e) => assert_error_names_api::<M>(&e, v),
            Ok(m) => panic!(
                "{} v{v}: prefix {n}/{} decoded to {m:?}",
                M::NAME,
                bytes.len()
            ),
        }
    }
}

/// Message-level decode errors must carry the message name and version.
pub fn assert_error_names_api<M: ApiMessage>(e: &DecodeError, v: i16) {
    let text = e.to_string();
    assert!(
        text.contains(&format!("{} v{v}", M::NAME)),
        "error lacks context: {text}"
    );
}

/// Round-trip: `m` (already valid for `v`) encodes and decodes to itself, and re-encodes to
/// identical bytes.
pub fn round_trip<M: ApiMessage + Debug + PartialEq>(m: &M, v: i16) -> Result<(), String> {
    let mut buf = Vec::new();
    encode_message(&mut buf, m, v).map_err(|e| format!("encode {e}"))?;
    let back: M = decode_message(&buf, v).map_err(|e| format!("decode {e}"))?;
    if &back != m {
        return Err(format!("{} v{v}: {m:?} decoded as {back:?}", M::NAME));
    }
    let mut again = Vec::new();
    encode_message(&mut again, &back, v).map_err(|e| format!("re-encode {e}"))?;
    if again != buf {
        return Err("re-encoding differs".into());
    }
    Ok(())
}

/// For an arbitrary (not version-normalized) `m`: `expected` is what the schema says
/// (`Some(m with ignorable absent fields reset)` or `None` if a non-ignorable absent field holds a
/// non-default value or a null is not allowed). Encoding must succeed exactly when `expected`
/// is `Some`, and then decode to it; on failure the buffer must be rolled back.
pub fn lossy_or_rejected<M: ApiMessage + Debug + PartialEq>(
    m: &M,
    expected: Option<M>,
    v: i16,
) -> Result<(), String> {
    let mut buf = vec![0xEE];
    match (encode_message(&mut buf, m, v), expected) {
        (Ok(()), Some(expected)) => {
            let back: M = decode_message(&buf[1..], v).map_err(|e| format!("decode {e}"))?;
            if back != expected {
                return Err(format!(
                    "{} v{v}: {m:?} decoded as {back:?}, expected {expected:?}",
                    M::NAME
                ));
            }
            round_trip(&expected, v)
        }
        (Err(EncodeError::FieldNotInVersion { .. } | EncodeError::NullNotAllowed { .. }), None) => {
            if buf != [0xEE] {
                return Err("buffer not rolled back after encode error".into());
            }
            Ok(())
        }
        (Ok(()), None) => Err(format!(
            "{} v{v}: unrepresentable value accepted: {m:?}",
            M::NAME
        )),
        (Err(e), _) => Err(format!("{} v{v}: encode error {e} for {m:?}", M::NAME)),
    }
}

/// Proptest settings for message round-trips: small default collections keep nested arrays
/// (topics × partitions × replicas) from exploding in debug builds.
pub fn prop_config(cases: u32) -> proptest::test_runner::Config {
    proptest::test_runner::Config {
        cases,
        max_default_size_range: 5,
        ..Default::default()
    }
}

/// Strategy for `Vec` fields in derived `Arbitrary` impls: 0-3 elements.
pub fn small_vec<T: proptest::arbitrary::Arbitrary>(
) -> impl proptest::strategy::Strategy<Value = Vec<T>> {
    proptest::collection::vec(proptest::arbitrary::any::<T>(), 0..4)
}

/// Strategy for nullable array fields: `None` or 0-3 elements.
pub fn small_opt_vec<T: proptest::arbitrary::Arbitrary>(
) -> impl proptest::strategy::Strategy<Value = Option<Vec<T>>> {
    proptest::option::of(small_vec())
}
