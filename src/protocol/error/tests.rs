//! Tests for the generated error table (kept outside the generated file so the script stays simple).

use super::BrokerErrorKind;
use std::collections::HashSet;

#[test]
fn every_variant_round_trips_code_and_name() {
    let mut names = HashSet::new();
    for &kind in BrokerErrorKind::ALL {
        assert_eq!(BrokerErrorKind::from_code(kind.code()), kind);
        assert!(names.insert(kind.name()), "duplicate name {}", kind.name());
        assert!(!kind.description().is_empty());
        assert!(!matches!(kind, BrokerErrorKind::Unknown(_)));
    }
    assert_eq!(BrokerErrorKind::ALL.len(), 138);
    let codes: Vec<i16> = BrokerErrorKind::ALL.iter().map(|k| k.code()).collect();
    assert_eq!(codes, (-1..=136).collect::<Vec<i16>>());
}

#[test]
fn well_known_codes() {
    assert_eq!(BrokerErrorKind::from_code(69).name(), "GROUP_ID_NOT_FOUND");
    assert_eq!(BrokerErrorKind::from_code(0), BrokerErrorKind::None);
    assert!(BrokerErrorKind::None.is_none());
    assert_eq!(
        BrokerErrorKind::from_code(110).name(),
        "FENCED_MEMBER_EPOCH"
    );
    assert_eq!(
        BrokerErrorKind::from_code(130).name(),
        "STREAMS_INVALID_TOPOLOGY"
    );
    assert!(BrokerErrorKind::from_code(16).is_retriable()); // NOT_COORDINATOR
    assert!(BrokerErrorKind::from_code(15).is_retriable()); // COORDINATOR_NOT_AVAILABLE
    assert!(!BrokerErrorKind::from_code(-1).is_retriable());
    assert!(!BrokerErrorKind::from_code(132).is_retriable());
}

#[test]
fn unknown_codes_survive() {
    for code in [i16::MAX, 137, -2, i16::MIN] {
        let k = BrokerErrorKind::from_code(code);
        assert_eq!(k, BrokerErrorKind::Unknown(code));
        assert_eq!(k.code(), code);
        assert_eq!(k.name(), "UNKNOWN");
        assert!(!k.is_retriable());
    }
    assert_eq!(
        BrokerErrorKind::Unknown(32767).to_string(),
        "UNKNOWN(32767)"
    );
    assert!(BrokerErrorKind::from_code(69)
        .to_string()
        .starts_with("GROUP_ID_NOT_FOUND (69): "));
}

/// Cross-checks the generated table against the shared TSV when it is available on this machine.
#[test]
fn matches_shared_tsv_if_present() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/kafka-protocol/error-codes.tsv"
    );
    let alt = "/work/shared/kafka-protocol/error-codes.tsv";
    let text = match std::fs::read_to_string(path).or_else(|_| std::fs::read_to_string(alt)) {
        Ok(t) => t,
        Err(_) => {
            eprintln!("error-codes.tsv not found; skipping cross-check");
            return;
        }
    };
    let mut n = 0;
    for line in text.lines().skip(1).filter(|l| !l.is_empty()) {
        let cols: Vec<&str> = line.split('\t').collect();
        assert_eq!(cols.len(), 4, "bad row {line}");
        let code: i16 = cols[0].parse().expect("code column");
        let kind = BrokerErrorKind::from_code(code);
        assert_eq!(kind.name(), cols[1]);
        assert_eq!(
            kind.is_retriable(),
            cols[2] == "true",
            "retriable of {}",
            cols[1]
        );
        assert_eq!(kind.description(), cols[3]);
        n += 1;
    }
    assert_eq!(n, BrokerErrorKind::ALL.len());
}
