//! Unit tests for the primitives: golden bytes, bounds, hostile lengths, round-trips.

use super::*;
use proptest::prelude::*;

fn enc<F: FnOnce(&mut Encoder<'_>)>(f: F) -> Vec<u8> {
    let mut buf = Vec::new();
    f(&mut Encoder::new(&mut buf));
    buf
}

#[test]
fn fixed_width_golden() {
    let b = enc(|e| {
        e.i8(-2);
        e.i16(0x0102);
        e.i32(-1);
        e.i64(1);
        e.u16(0xfffe);
        e.u32(7);
        e.bool(true);
        e.bool(false);
        e.f64(1.0);
    });
    assert_eq!(
        b,
        [
            0xfe, 1, 2, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xfe, 0, 0, 0, 7, 1,
            0, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0
        ]
    );
    let mut d = Decoder::new(&b);
    assert_eq!(d.i8("a").unwrap(), -2);
    assert_eq!(d.i16("a").unwrap(), 0x0102);
    assert_eq!(d.i32("a").unwrap(), -1);
    assert_eq!(d.i64("a").unwrap(), 1);
    assert_eq!(d.u16("a").unwrap(), 0xfffe);
    assert_eq!(d.u32("a").unwrap(), 7);
    assert!(d.bool("a").unwrap());
    assert!(!d.bool("a").unwrap());
    assert_eq!(d.f64("a").unwrap(), 1.0);
    assert!(d.is_empty());
    assert_eq!(d.position(), b.len());
}

#[test]
fn varint_golden() {
    assert_eq!(enc(|e| e.unsigned_varint(0)), [0]);
    assert_eq!(enc(|e| e.unsigned_varint(127)), [0x7f]);
    assert_eq!(enc(|e| e.unsigned_varint(128)), [0x80, 1]);
    assert_eq!(enc(|e| e.unsigned_varint(300)), [0xac, 2]);
    assert_eq!(
        enc(|e| e.unsigned_varint(u32::MAX)),
        [0xff, 0xff, 0xff, 0xff, 0x0f]
    );
    // zig-zag: 0→0, -1→1, 1→2, -2→3
    assert_eq!(enc(|e| e.varint(-1)), [1]);
    assert_eq!(enc(|e| e.varint(1)), [2]);
    assert_eq!(enc(|e| e.varint(-2)), [3]);
    assert_eq!(enc(|e| e.varint(i32::MIN)), [0xff, 0xff, 0xff, 0xff, 0x0f]);
    assert_eq!(enc(|e| e.varlong(-1)), [1]);
    assert_eq!(
        enc(|e| e.varlong(i64::MIN)),
        [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1]
    );
}

#[test]
fn varint_overflow_is_typed() {
    let mut d = Decoder::with_context(&[0xff, 0xff, 0xff, 0xff, 0x1f], "X", 3);
    assert_eq!(
        d.unsigned_varint("F"),
        Err(DecodeError::VarintOverflow {
            api: "X",
            version: 3,
            field: "F"
        })
    );
    let mut d = Decoder::new(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x01]);
    assert!(matches!(
        d.unsigned_varint("F"),
        Err(DecodeError::VarintOverflow { .. })
    ));
    let mut d = Decoder::new(&[0xff; 11]);
    assert!(matches!(
        d.varlong("F"),
        Err(DecodeError::VarintOverflow { .. })
    ));
    let mut d = Decoder::new(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02]);
    assert!(matches!(
        d.varlong("F"),
        Err(DecodeError::VarintOverflow { .. })
    ));
}

#[test]
fn strings_golden() {
    assert_eq!(enc(|e| e.string("s", "hi").unwrap()), [0, 2, b'h', b'i']);
    assert_eq!(enc(|e| e.nullable_string("s", None).unwrap()), [0xff, 0xff]);
    assert_eq!(
        enc(|e| e.compact_string("s", "hi").unwrap()),
        [3, b'h', b'i']
    );
    assert_eq!(enc(|e| e.compact_nullable_string("s", None).unwrap()), [0]);
    assert_eq!(enc(|e| e.compact_string("s", "").unwrap()), [1]);
    assert_eq!(enc(|e| e.bytes("b", &[9]).unwrap()), [0, 0, 0, 1, 9]);
    assert_eq!(enc(|e| e.nullable_bytes("b", None).unwrap()), [0xff; 4]);
    assert_eq!(enc(|e| e.compact_bytes("b", &[9]).unwrap()), [2, 9]);
    assert_eq!(enc(|e| e.compact_nullable_bytes("b", None).unwrap()), [0]);
    assert_eq!(enc(|e| e.array_len("a", 2).unwrap()), [0, 0, 0, 2]);
    assert_eq!(enc(|e| e.nullable_array_len("a", None).unwrap()), [0xff; 4]);
    assert_eq!(enc(|e| e.compact_array_len("a", 2).unwrap()), [3]);
    assert_eq!(
        enc(|e| e.compact_nullable_array_len("a", None).unwrap()),
        [0]
    );

    let mut d = Decoder::new(&[0, 2, b'h', b'i', 0xff, 0xff, 3, b'h', b'i', 0]);
    assert_eq!(d.string("s").unwrap(), "hi");
    assert_eq!(d.nullable_string("s").unwrap(), None);
    assert_eq!(d.compact_string("s").unwrap(), "hi");
    assert_eq!(d.compact_nullable_string("s").unwrap(), None);
    assert!(d.is_empty());
}

#[test]
fn overlong_string_is_encode_error() {
    let s = "x".repeat(i16::MAX as usize + 1);
    let mut buf = Vec::new();
    let mut e = Encoder::new(&mut buf);
    assert_eq!(
        e.string("ClientId", &s),
        Err(EncodeError::LengthOverflow {
            field: "ClientId",
            len: 32768,
            max: 32767
        })
    );
    assert!(matches!(
        e.compact_string("X", &s),
        Err(EncodeError::LengthOverflow { field: "X", .. })
    ));
    assert!(buf.is_empty(), "nothing written on error");
    let ok = "x".repeat(i16::MAX as usize);
    Encoder::new(&mut buf).string("ClientId", &ok).unwrap();
    assert_eq!(buf.len(), 2 + 32767);
}

#[test]
fn null_where_not_nullable_names_field() {
    let mut d = Decoder::with_context(&[0xff, 0xff], "MetadataRequest", 4);
    assert_eq!(
        d.string("Name"),
        Err(DecodeError::UnexpectedNull {
            api: "MetadataRequest",
            version: 4,
            field: "Name"
        })
    );
    let mut d = Decoder::new(&[0]);
    assert!(matches!(
        d.compact_array_len("A"),
        Err(DecodeError::UnexpectedNull { field: "A", .. })
    ));
}

#[test]
fn hostile_lengths_are_typed_errors() {
    // Array claiming 2^31-1 elements in a 10-byte frame.
    let mut frame = vec![0x7f, 0xff, 0xff, 0xff];
    frame.extend([0; 6]);
    let mut d = Decoder::with_context(&frame, "Api", 1);
    assert_eq!(
        d.array_len("Topics"),
        Err(DecodeError::InvalidLength {
            api: "Api",
            version: 1,
            field: "Topics",
            length: i32::MAX as i64,
            remaining: 6
        })
    );
    // Negative non-null lengths.
    let mut d = Decoder::new(&[0x80, 0, 0, 0, 0]);
    assert!(matches!(
        d.nullable_array_len("A"),
        Err(DecodeError::InvalidLength {
            length: -2147483648,
            ..
        })
    ));
    let mut d = Decoder::new(&[0xff, 0xfe]);
    assert!(matches!(
        d.nullable_string("S"),
        Err(DecodeError::InvalidLength { length: -2, .. })
    ));
    // Compact array/string claiming 2^32-2 elements.
    let mut d = Decoder::new(&[0xff, 0xff, 0xff, 0xff, 0x0f, 1, 2]);
    assert!(matches!(
        d.compact_array_len("A"),
        Err(DecodeError::InvalidLength { .. })
    ));
    let mut d = Decoder::new(&[0xff, 0xff, 0xff, 0xff, 0x0f, 1, 2]);
    assert!(matches!(
        d.compact_string("S"),
        Err(DecodeError::InvalidLength { .. })
    ));
    let mut d = Decoder::new(&[0x7f, 0xff, 0xff, 0xff, 1]);
    assert!(matches!(
        d.bytes("B"),
        Err(DecodeError::InvalidLength { .. })
    ));
    let mut d = Decoder::new(&[0x7f, 0xff, 1]);
    assert!(matches!(
        d.string("S"),
        Err(DecodeError::InvalidLength { .. })
    ));
    // Tagged-field section claiming 2^32-1 fields / a huge field size.
    let mut d = Decoder::new(&[0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0]);
    assert!(matches!(
        d.skip_tagged_fields(),
        Err(DecodeError::InvalidLength { .. })
    ));
    let mut d = Decoder::new(&[1, 0, 0xff, 0xff, 0xff, 0xff, 0x07, 1]);
    assert!(matches!(
        d.skip_tagged_fields(),
        Err(DecodeError::Truncated { .. })
    ));
}

#[test]
fn invalid_utf8_is_typed() {
    let mut d = Decoder::with_context(&[0, 1, 0xff], "A", 0);
    assert_eq!(
        d.string("Host"),
        Err(DecodeError::InvalidUtf8 {
            api: "A",
            version: 0,
            field: "Host"
        })
    );
}

#[test]
fn truncated_names_field_and_counts() {
    let mut d = Decoder::with_context(&[1, 2], "StreamsGroupHeartbeatResponse", 0);
    assert_eq!(
        d.i32("MemberEpoch"),
        Err(DecodeError::Truncated {
            api: "StreamsGroupHeartbeatResponse",
            version: 0,
            field: "MemberEpoch",
            needed: 4,
            remaining: 2
        })
    );
    let msg = d.i32("MemberEpoch").unwrap_err().to_string();
    assert!(
        msg.contains("StreamsGroupHeartbeatResponse v0") && msg.contains("MemberEpoch"),
        "{msg}"
    );
}

#[test]
fn tagged_fields_known_and_unknown() {
    let mut buf = Vec::new();
    let mut e = Encoder::new(&mut buf);
    e.unsigned_varint(3);
    e.tagged_field(0, |e| e.compact_string("S", "ab")).unwrap();
    e.tagged_field(5, |e| {
        e.raw(&[7u8; 200]);
        Ok(())
    })
    .unwrap();
    e.tagged_field(9, |e| {
        e.i32(42);
        Ok(())
    })
    .unwrap();
    // tag 0, size 3, [3,'a','b']; tag 5, size 200 (varint c8 01); tag 9, size 4.
    assert_eq!(&buf[..6], &[3, 0, 3, 3, b'a', b'b']);
    assert_eq!(&buf[6..9], &[5, 0xc8, 0x01]);
    assert_eq!(&buf[209..], &[9, 4, 0, 0, 0, 42]);

    let mut d = Decoder::new(&buf);
    let mut s = None;
    let mut n = None;
    d.tagged_fields(|tag, sub| match tag {
        0 => {
            s = Some(sub.compact_string("S")?);
            Ok(true)
        }
        9 => {
            n = Some(sub.i32("N")?);
            Ok(true)
        }
        _ => Ok(false),
    })
    .unwrap();
    assert!(d.is_empty());
    assert_eq!(s.as_deref(), Some("ab"));
    assert_eq!(n, Some(42));

    let raw = Decoder::new(&buf).raw_tagged_fields().unwrap();
    assert_eq!(raw.len(), 3);
    assert_eq!(raw[1].tag, 5);
    assert_eq!(raw[1].data.len(), 200);
    let mut again = Vec::new();
    Encoder::new(&mut again).tagged_fields(&raw).unwrap();
    assert_eq!(again, buf);
}

#[test]
fn known_tag_with_trailing_bytes_rejected() {
    let buf = [1, 0, 2, 1, 2];
    let mut d = Decoder::new(&buf);
    let r = d.tagged_fields(|_, sub| {
        sub.i8("X")?;
        Ok(true)
    });
    assert!(matches!(r, Err(DecodeError::InvalidValue { .. })));
}

#[test]
fn uuid_display_and_parse() {
    assert_eq!(Uuid::ZERO.to_string(), "AAAAAAAAAAAAAAAAAAAAAA");
    let u = Uuid([0xff; 16]);
    // 15 bytes → 20 chars of '_', last byte 0xff → '_' then 0b110000 = 'w'.
    assert_eq!(u.to_string(), "_____________________w");
    let mut raw = [0u8; 16];
    for (i, b) in raw.iter_mut().enumerate() {
        *b = i as u8;
    }
    // Base64url of 00 01 02 ... 0f is "AAECAwQFBgcICQoLDA0ODw" (standard encoders agree).
    assert_eq!(Uuid(raw).to_string(), "AAECAwQFBgcICQoLDA0ODw");
    assert_eq!("AAECAwQFBgcICQoLDA0ODw".parse::<Uuid>().unwrap(), Uuid(raw));
    assert!(
        "AAECAwQFBgcICQoLDA0ODx".parse::<Uuid>().is_err(),
        "non-canonical tail"
    );
    assert!("AAECAwQFBgcICQoLDA0OD".parse::<Uuid>().is_err());
    assert!("AAECAwQFBgcICQoLDA0OD+".parse::<Uuid>().is_err());
}

#[test]
fn encoder_appends_and_patches() {
    let mut buf = vec![1, 2];
    let mut e = Encoder::new(&mut buf);
    let at = e.position();
    e.i32(0);
    e.i8(5);
    e.patch_i32(at, 0x01020304);
    assert_eq!(e.len(), 7);
    assert_eq!(buf, [1, 2, 1, 2, 3, 4, 5]);
}

#[test]
fn array_of_bounded() {
    let mut d = Decoder::new(&[0, 0, 0, 2, 1, 2]);
    let n = d.array_len("A").unwrap();
    let v = d.array_of(n, |d| d.i8("E")).unwrap();
    assert_eq!(v, [1, 2]);
}

proptest! {
    #[test]
    fn prop_varints_round_trip(u in any::<u32>(), i in any::<i32>(), l in any::<i64>()) {
        let mut buf = Vec::new();
        let mut e = Encoder::new(&mut buf);
        e.unsigned_varint(u);
        e.varint(i);
        e.varlong(l);
        let mut d = Decoder::new(&buf);
        prop_assert_eq!(d.unsigned_varint("u")?, u);
        prop_assert_eq!(d.varint("i")?, i);
        prop_assert_eq!(d.varlong("l")?, l);
        prop_assert!(d.is_empty());
    }

    #[test]
    fn prop_strings_round_trip(s in ".{0,40}", o in proptest::option::of(".{0,10}"), b in proptest::collection::vec(any::<u8>(), 0..40)) {
        let mut buf = Vec::new();
        let mut e = Encoder::new(&mut buf);
        e.string("s", &s).unwrap();
        e.compact_string("s", &s).unwrap();
        e.nullable_string("o", o.as_deref()).unwrap();
        e.compact_nullable_string("o", o.as_deref()).unwrap();
        e.bytes("b", &b).unwrap();
        e.compact_bytes("b", &b).unwrap();
        let mut d = Decoder::new(&buf);
        prop_assert_eq!(d.string("s")?, s.clone());
        prop_assert_eq!(d.compact_string("s")?, s);
        prop_assert_eq!(d.nullable_string("o")?, o.clone());
        prop_assert_eq!(d.compact_nullable_string("o")?, o);
        prop_assert_eq!(d.bytes("b")?, b.clone());
        prop_assert_eq!(d.compact_bytes("b")?, b);
        prop_assert!(d.is_empty());
    }

    #[test]
    fn prop_uuid_round_trip(b in any::<[u8; 16]>()) {
        let u = Uuid(b);
        let s = u.to_string();
        prop_assert_eq!(s.len(), 22);
        prop_assert_eq!(s.parse::<Uuid>().unwrap(), u);
    }

    #[test]
    fn prop_garbage_never_panics(b in proptest::collection::vec(any::<u8>(), 0..64)) {
        let mut d = Decoder::new(&b);
        let _ = d.compact_nullable_string("a");
        let _ = d.nullable_array_len("b");
        let _ = d.skip_tagged_fields();
        let _ = d.varlong("c");
        let _ = d.nullable_bytes("d");
    }
}
