//! Unit tests of the small helpers: id encodings and the backoff curve. The state machine's
//! scenarios are in `limits::machine_tests` and in tests/streams_membership/.

use super::*;

#[test]
fn member_ids_are_22_url_safe_base64_characters_without_a_dash() {
    let mut rng = StdRng::seed_from_u64(11);
    for _ in 0..1000 {
        let id = generate_member_id(&mut rng);
        assert_eq!(id.len(), 22, "{id}");
        assert!(!id.contains('-'), "{id}");
        let parsed: crate::protocol::codec::Uuid = id.parse().expect("a Kafka Uuid string");
        assert_eq!(parsed.to_string(), id);
    }
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
