//! Wire helpers shared with `streams_group_describe` (both APIs are flexible in every version).

use crate::protocol::codec::{
    Decodable, DecodeError, DecodeInto, Decoder, Encodable, EncodeError, Encoder,
};

/// Writes a non-null compact array of structs.
#[inline]
pub(in crate::protocol::api) fn put_structs<T: Encodable>(
    enc: &mut Encoder<'_>,
    field: &'static str,
    items: &[T],
    version: i16,
) -> Result<(), EncodeError> {
    enc.compact_array_len(field, items.len())?;
    items.iter().try_for_each(|i| i.encode(enc, version))
}

/// Writes a nullable compact array of structs.
#[inline]
pub(in crate::protocol::api) fn put_nullable_structs<T: Encodable>(
    enc: &mut Encoder<'_>,
    field: &'static str,
    items: Option<&[T]>,
    version: i16,
) -> Result<(), EncodeError> {
    match items {
        Some(items) => put_structs(enc, field, items, version),
        None => enc.compact_nullable_array_len(field, None),
    }
}

/// Reads a non-null compact array of structs.
pub(in crate::protocol::api) fn get_structs<T: Decodable>(
    dec: &mut Decoder<'_>,
    field: &'static str,
    version: i16,
) -> Result<Vec<T>, DecodeError> {
    let n = dec.compact_array_len(field)?;
    dec.array_of(n, |d| T::decode(d, version))
}

/// Reads a nullable compact array of structs.
pub(in crate::protocol::api) fn get_nullable_structs<T: Decodable>(
    dec: &mut Decoder<'_>,
    field: &'static str,
    version: i16,
) -> Result<Option<Vec<T>>, DecodeError> {
    match dec.compact_nullable_array_len(field)? {
        Some(n) => dec.array_of(n, |d| T::decode(d, version)).map(Some),
        None => Ok(None),
    }
}

/// Reads a non-null compact array of structs into `out`, reusing its elements' allocations.
pub(super) fn get_structs_into<T: DecodeInto>(
    dec: &mut Decoder<'_>,
    field: &'static str,
    version: i16,
    out: &mut Vec<T>,
) -> Result<(), DecodeError> {
    let n = dec.compact_array_len(field)?;
    dec.array_into(n, out, version)
}

/// Reads a nullable compact array of structs into `out`, reusing its elements' allocations.
pub(super) fn get_nullable_structs_into<T: DecodeInto>(
    dec: &mut Decoder<'_>,
    field: &'static str,
    version: i16,
    out: &mut Option<Vec<T>>,
) -> Result<(), DecodeError> {
    let n = dec.compact_nullable_array_len(field)?;
    dec.nullable_array_into(n, out, version)
}

/// Writes a nullable struct field: Kafka marks it with an `int8`, -1 for null and 1 for present.
#[inline]
pub(in crate::protocol::api) fn put_nullable_struct<T: Encodable>(
    enc: &mut Encoder<'_>,
    item: Option<&T>,
    version: i16,
) -> Result<(), EncodeError> {
    match item {
        Some(item) => {
            enc.i8(1);
            item.encode(enc, version)
        }
        None => {
            enc.i8(-1);
            Ok(())
        }
    }
}

/// Reads a nullable struct field; like Kafka, any negative marker means null.
pub(in crate::protocol::api) fn get_nullable_struct<T: Decodable>(
    dec: &mut Decoder<'_>,
    field: &'static str,
    version: i16,
) -> Result<Option<T>, DecodeError> {
    if dec.i8(field)? < 0 {
        Ok(None)
    } else {
        T::decode(dec, version).map(Some)
    }
}

/// Writes a compact array of compact strings.
#[inline]
pub(in crate::protocol::api) fn put_strings(
    enc: &mut Encoder<'_>,
    field: &'static str,
    items: &[String],
) -> Result<(), EncodeError> {
    enc.compact_array_len(field, items.len())?;
    items.iter().try_for_each(|s| enc.compact_string(field, s))
}

/// Reads a compact array of compact strings.
pub(in crate::protocol::api) fn get_strings(
    dec: &mut Decoder<'_>,
    field: &'static str,
) -> Result<Vec<String>, DecodeError> {
    let n = dec.compact_array_len(field)?;
    dec.array_of(n, |d| d.compact_string(field))
}

/// Writes a compact array of `int32`.
#[inline]
pub(super) fn put_i32s(
    enc: &mut Encoder<'_>,
    field: &'static str,
    items: &[i32],
) -> Result<(), EncodeError> {
    enc.compact_array_len(field, items.len())?;
    items.iter().for_each(|&v| enc.i32(v));
    Ok(())
}

/// Reads a compact array of `int32`.
pub(super) fn get_i32s(
    dec: &mut Decoder<'_>,
    field: &'static str,
) -> Result<Vec<i32>, DecodeError> {
    let n = dec.compact_array_len(field)?;
    let mut out = Vec::new();
    dec.i32s_into(field, n, &mut out)?;
    Ok(out)
}

/// Reads a compact array of `int32` into `out`, reusing its allocation; on error `out` is
/// valid but unspecified. Always inlined: its two callers decode most of a large response.
#[inline(always)]
pub(super) fn get_i32s_into(
    dec: &mut Decoder<'_>,
    field: &'static str,
    out: &mut Vec<i32>,
) -> Result<(), DecodeError> {
    let n = dec.compact_array_len(field)?;
    out.clear();
    dec.i32s_into(field, n, out)
}

#[inline]
pub(super) fn put_i16s(
    enc: &mut Encoder<'_>,
    field: &'static str,
    items: &[i16],
) -> Result<(), EncodeError> {
    enc.compact_array_len(field, items.len())?;
    items.iter().for_each(|&v| enc.i16(v));
    Ok(())
}

pub(super) fn get_i16s(
    dec: &mut Decoder<'_>,
    field: &'static str,
) -> Result<Vec<i16>, DecodeError> {
    let n = dec.compact_array_len(field)?;
    dec.array_of(n, |d| d.i16(field))
}

/// The error for a non-default, non-ignorable field that `version` cannot carry.
pub(in crate::protocol::api) fn not_in_version(
    api: &'static str,
    version: i16,
    field: &'static str,
) -> EncodeError {
    EncodeError::FieldNotInVersion {
        api,
        version,
        field,
    }
}
