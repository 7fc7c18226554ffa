//! Properties-style configuration: build a [`ClientConfig`] or a [`StreamsGroupConfig`] from
//! the `key=value` settings Kafka users already have (librdkafka and Kafka Streams names).
//!
//! ```
//! use kafka_streams_group::{ClientConfig, StreamsGroupConfig, StreamsTopology, Subtopology};
//!
//! let client = ClientConfig::from_properties([
//!     ("bootstrap.servers", "broker-1:9093,broker-2:9093"),
//!     ("security.protocol", "SASL_SSL"),
//!     ("sasl.mechanism", "SCRAM-SHA-512"),
//!     ("sasl.username", "app"),
//!     ("sasl.password", "secret"),
//!     ("ssl.ca.location", "/etc/kafka/ca.pem"),
//! ])?;
//! assert_eq!(client.get_sasl().unwrap().mechanism_name(), "SCRAM-SHA-512");
//!
//! let topology = StreamsTopology::new().subtopology(Subtopology::new("0").source_topic("in"));
//! let member = StreamsGroupConfig::from_properties(
//!     [("bootstrap.servers", "127.0.0.1:9092"), ("application.id", "orders")],
//!     topology,
//! )?;
//! assert_eq!(member.group_id(), "orders");
//! # Ok::<(), kafka_streams_group::Error>(())
//! ```
//!
//! The entry points are inherent constructors on the configuration types (they live here so
//! the builders stay free of string parsing):
//!
//! * [`ClientConfig::from_properties`] / [`ClientConfig::from_properties_file`]
//! * [`StreamsGroupConfig::from_properties`] / [`StreamsGroupConfig::from_properties_file`]
//!   (these also need the topology, which a properties file cannot describe)
//! * [`parse`] and [`read_file`] give the raw `(key, value)` pairs of Java `.properties` text.
//!
//! # Accepted keys
//!
//! | key | meaning |
//! | --- | --- |
//! | `bootstrap.servers` | required; comma-separated `host:port` / `[v6]:port` |
//! | `client.id` | [`ClientConfig::client_id`] |
//! | `security.protocol` | `PLAINTEXT`, `SSL`, `SASL_PLAINTEXT`, `SASL_SSL` (any case) |
//! | `sasl.mechanism` (librdkafka alias `sasl.mechanisms`) | `PLAIN`, `SCRAM-SHA-256`, `SCRAM-SHA-512` |
//! | `sasl.username`, `sasl.password` | credentials for those mechanisms |
//! | `ssl.ca.location` | PEM file of trusted CAs (replaces the platform roots) |
//! | `ssl.certificate.location`, `ssl.key.location` | mutual TLS: PEM chain and unencrypted PEM key (both or neither) |
//! | `ssl.endpoint.identification.algorithm` | `https` (default) verifies the broker's name; `none` or empty turns that off (logged as a warning) |
//! | `request.timeout.ms` | [`ClientConfig::request_timeout`] |
//! | `socket.connection.setup.timeout.ms` | [`ClientConfig::connect_timeout`] |
//! | `retry.backoff.ms`, `retry.backoff.max.ms` | [`ClientConfig::retry_backoff`]; as in Java, a base above the maximum gives a constant backoff of the maximum |
//! | `reconnect.backoff.ms`, `reconnect.backoff.max.ms` | [`ClientConfig::reconnect_backoff`]; `0` allowed (no backoff); as in Java, `reconnect.backoff.ms` without `reconnect.backoff.max.ms` is a constant backoff (logged), and a base above the maximum a constant backoff of the maximum |
//! | `receive.message.max.bytes`, `message.max.bytes` | [`ClientConfig::max_frame_size`] (the former wins when both are given) |
//! | `application.id` | Streams only, required: the group id |
//! | `application.server` | Streams only: the interactive-query endpoint `host:port` |
//! | `client.rack` | Streams only: [`StreamsGroupConfig::rack_id`] |
//! | `client.tag.<key>` | Streams only: one client tag per key |
//! | `group.instance.id` | Streams only: static membership |
//! | `max.poll.interval.ms` | Streams only: the rebalance timeout |
//!
//! # Errors, never silence
//!
//! Every problem is an [`Error::InvalidConfiguration`] with `field` `"properties"` and a reason
//! naming the key:
//!
//! * an unknown key, with the closest accepted key as a suggestion (Kafka Streams settings this
//!   library has no use for, such as `num.stream.threads`, are unknown too: silently ignoring
//!   them would hide that they have no effect);
//! * a value that does not parse, quoting the value — except for secrets (`sasl.password`,
//!   `sasl.jaas.config`, `ssl.*password`), whose values never appear in any message;
//! * Java-client settings that have a librdkafka-style equivalent here (`sasl.jaas.config`,
//!   `ssl.truststore.*`, `ssl.keystore.*`), with the keys to use instead;
//! * `sasl.mechanism=OAUTHBEARER`, whose token callback can only be given in code.
//!
//! A later duplicate key replaces an earlier one, as in Java's `Properties`.
//!
//! The returned [`ClientConfig`] has passed [`ClientConfig::validate`], with one exception
//! kept for `OAUTHBEARER`: a `SASL_*` protocol with no `sasl.*` key at all returns a
//! configuration without SASL, to which the application adds
//! [`SaslConfig::oauthbearer`](crate::SaslConfig::oauthbearer). The returned
//! [`StreamsGroupConfig`] is checked key by key; the topology is checked by
//! [`StreamsGroupConfig::validate`] (which joining runs).
//!
//! The Streams half (`StreamsGroupConfig::from_properties`) is defined with the member's
//! configuration in `session`, above this module: properties parsing is vocabulary that the
//! configurations use, and names none of them but [`ClientConfig`].
//!
//! [`StreamsGroupConfig`]: crate::StreamsGroupConfig
//! [`StreamsGroupConfig::from_properties`]: crate::StreamsGroupConfig::from_properties
//! [`StreamsGroupConfig::from_properties_file`]: crate::StreamsGroupConfig::from_properties_file
//! [`StreamsGroupConfig::rack_id`]: crate::StreamsGroupConfig::rack_id
//! [`StreamsGroupConfig::validate`]: crate::StreamsGroupConfig::validate

mod build;
mod parser;
mod suggest;

pub(crate) use build::{build_client, collect, parse_u64};
pub use parser::{parse, read_file};
pub(crate) use suggest::reject_key;

use crate::error::Error;
// Named by the module docs.
#[cfg(doc)]
use crate::config::ClientConfig;

/// The `field` of every [`Error::InvalidConfiguration`] raised here.
pub const FIELD: &str = "properties";

/// Keys [`ClientConfig::from_properties`] accepts.
pub const CLIENT_KEYS: &[&str] = &[
    "bootstrap.servers",
    "client.id",
    "security.protocol",
    "sasl.mechanism",
    "sasl.mechanisms",
    "sasl.username",
    "sasl.password",
    "ssl.ca.location",
    "ssl.certificate.location",
    "ssl.key.location",
    "ssl.endpoint.identification.algorithm",
    "request.timeout.ms",
    "socket.connection.setup.timeout.ms",
    "retry.backoff.ms",
    "retry.backoff.max.ms",
    "reconnect.backoff.ms",
    "reconnect.backoff.max.ms",
    "message.max.bytes",
    "receive.message.max.bytes",
];

/// Keys [`StreamsGroupConfig::from_properties`](crate::StreamsGroupConfig::from_properties) accepts besides [`CLIENT_KEYS`]
/// (`client.tag.` is a prefix: `client.tag.<key>`).
pub const STREAMS_KEYS: &[&str] = &[
    "application.id",
    "application.server",
    "client.rack",
    "client.tag.",
    "group.instance.id",
    "max.poll.interval.ms",
];

pub(crate) const CLIENT_TAG_PREFIX: &str = "client.tag.";

pub(crate) fn invalid(reason: String) -> Error {
    Error::InvalidConfiguration {
        field: FIELD,
        reason,
    }
}

/// Whether the value of `key` is a secret that must never be quoted back.
fn is_secret(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    k.contains("password") || k.contains("secret") || k == "sasl.jaas.config"
}

/// Renders a value for an error message: quoted, or `<redacted>` for secrets.
fn shown(key: &str, value: &str) -> String {
    if is_secret(key) {
        "<redacted>".to_owned()
    } else {
        format!("{value:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::suggest::{edit_distance, suggestion};
    use super::*;

    #[test]
    fn edit_distance_basics() {
        assert_eq!(edit_distance("", ""), 0);
        assert_eq!(edit_distance("abc", ""), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("client.id", "client.id"), 0);
        assert_eq!(edit_distance("clientid", "client.id"), 1);
        assert_eq!(edit_distance("é", "e"), 1, "characters, not bytes");
    }

    #[test]
    fn suggestion_threshold() {
        assert_eq!(
            suggestion("bootstrap.server", &[CLIENT_KEYS]),
            Some("bootstrap.servers")
        );
        assert_eq!(suggestion("xyz", &[CLIENT_KEYS]), None);
        assert_eq!(suggestion("application.id", &[CLIENT_KEYS]), None);
        assert_eq!(
            suggestion("application.di", &[CLIENT_KEYS, STREAMS_KEYS]),
            Some("application.id")
        );
    }

    #[test]
    fn secret_keys() {
        for k in [
            "sasl.password",
            "ssl.key.password",
            "ssl.truststore.password",
            "sasl.jaas.config",
            "sasl.oauthbearer.client.secret",
            "SASL.PASSWORD",
        ] {
            assert!(is_secret(k), "{k}");
            assert_eq!(shown(k, "v"), "<redacted>");
        }
        assert!(!is_secret("sasl.username"));
        assert_eq!(shown("sasl.username", "v"), "\"v\"");
    }
}
