//! Unit tests of the small helpers: id encodings and the backoff curve. The state machine's
//! scenarios are in `limits::machine_tests` and in tests/streams_membership.rs.

use super::ids::base64_url_no_pad;
use super::*;

#[test]
fn base64_matches_known_vectors() {
    assert_eq!(base64_url_no_pad(b""), "");
    assert_eq!(base64_url_no_pad(b"f"), "Zg");
    assert_eq!(base64_url_no_pad(b"fo"), "Zm8");
    assert_eq!(base64_url_no_pad(b"foo"), "Zm9v");
    assert_eq!(base64_url_no_pad(&[0xfb, 0xff]), "-_8");
    assert_eq!(base64_url_no_pad(&[0u8; 16]), "AAAAAAAAAAAAAAAAAAAAAA");
}

#[test]
fn backoff_curve() {
    let b = RetryBackoff::default();
    assert_eq!(b.delay(0, 0.5), Duration::from_millis(100));
    assert_eq!(b.delay(1, 0.5), Duration::from_millis(200));
    assert_eq!(b.delay(3, 0.5), Duration::from_millis(800));
    assert_eq!(b.delay(4, 0.5), Duration::from_millis(1000));
    assert_eq!(b.delay(400, 0.99), Duration::from_millis(1000));
    assert_eq!(b.delay(0, 0.0), Duration::from_millis(80));
    let hi = b.delay(0, 0.999_999);
    assert!(hi > Duration::from_millis(119) && hi < Duration::from_millis(120));
    assert_eq!(b.delay(0, f64::NAN), Duration::from_millis(100));
}

#[test]
fn process_id_is_a_v4_uuid() {
    let mut rng = StdRng::seed_from_u64(7);
    let id = random_process_id(&mut rng);
    assert_eq!(id.len(), 36);
    assert_eq!(&id[14..15], "4");
    assert!(matches!(&id[19..20], "8" | "9" | "a" | "b"));
    assert_eq!(id.matches('-').count(), 4);
}
