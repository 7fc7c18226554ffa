//! `reconnect.backoff.ms` / `reconnect.backoff.max.ms`: the builder, the properties keys
//! (read as Java's clients read them) and validation.

use std::time::Duration;

use kafka_streams_group::config::{DEFAULT_RECONNECT_BACKOFF, DEFAULT_RECONNECT_BACKOFF_MAX};
use kafka_streams_group::{ClientConfig, Error};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn from(extra: &[(&str, &str)]) -> Result<ClientConfig, Error> {
    ClientConfig::from_properties(
        std::iter::once(("bootstrap.servers", "127.0.0.1:9092")).chain(extra.iter().copied()),
    )
}

fn backoff(extra: &[(&str, &str)]) -> (Duration, Duration) {
    from(extra)
        .unwrap_or_else(|e| panic!("{extra:?}: {e}"))
        .get_reconnect_backoff()
}

#[test]
fn defaults_are_javas() {
    assert_eq!(
        (DEFAULT_RECONNECT_BACKOFF, DEFAULT_RECONNECT_BACKOFF_MAX),
        (ms(50), ms(1000))
    );
    assert_eq!(
        ClientConfig::new("b:9092").get_reconnect_backoff(),
        (ms(50), ms(1000))
    );
    assert_eq!(backoff(&[]), (ms(50), ms(1000)));
}

#[test]
fn builder_sets_and_validate_checks_the_order() {
    let c = ClientConfig::new("b:9092").reconnect_backoff(ms(20), ms(5000));
    assert_eq!(c.get_reconnect_backoff(), (ms(20), ms(5000)));
    c.validate().expect("valid");
    ClientConfig::new("b:9092")
        .reconnect_backoff(Duration::ZERO, Duration::ZERO)
        .validate()
        .expect("zero turns the backoff off");
    match ClientConfig::new("b:9092")
        .reconnect_backoff(ms(2000), ms(1000))
        .validate()
    {
        Err(Error::InvalidConfiguration { field, reason }) => {
            assert_eq!(field, "reconnect_backoff");
            assert!(reason.contains("larger than max"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn properties_read_both_keys_as_java_does() {
    assert_eq!(
        backoff(&[
            ("reconnect.backoff.ms", "20"),
            ("reconnect.backoff.max.ms", "5000")
        ]),
        (ms(20), ms(5000))
    );
    // The maximum alone: the base stays at its default.
    assert_eq!(
        backoff(&[("reconnect.backoff.max.ms", "3000")]),
        (ms(50), ms(3000))
    );
    // The base alone: Java's postProcessReconnectBackoffConfigs makes the maximum equal to
    // it, a constant backoff.
    assert_eq!(
        backoff(&[("reconnect.backoff.ms", "200")]),
        (ms(200), ms(200))
    );
    // A base above the maximum: Java's ExponentialBackoff gives a constant maximum.
    assert_eq!(
        backoff(&[
            ("reconnect.backoff.ms", "5000"),
            ("reconnect.backoff.max.ms", "300")
        ]),
        (ms(300), ms(300))
    );
    // 0 is allowed (atLeast(0) in Java): no backoff.
    assert_eq!(
        backoff(&[
            ("reconnect.backoff.ms", "0"),
            ("reconnect.backoff.max.ms", "0")
        ]),
        (Duration::ZERO, Duration::ZERO)
    );
}

#[test]
fn properties_reject_values_that_are_not_milliseconds() {
    for key in ["reconnect.backoff.ms", "reconnect.backoff.max.ms"] {
        for value in ["-1", "1s", ""] {
            match from(&[(key, value)]) {
                Err(Error::InvalidConfiguration { field, reason }) => {
                    assert_eq!(field, "properties");
                    assert!(reason.contains(key), "{reason}");
                }
                other => panic!("{key}={value:?}: {other:?}"),
            }
        }
    }
    // A typo gets the right key suggested.
    match from(&[("reconect.backoff.ms", "10")]) {
        Err(Error::InvalidConfiguration { reason, .. }) => {
            assert!(reason.contains("\"reconnect.backoff.ms\""), "{reason}");
        }
        other => panic!("{other:?}"),
    }
}
