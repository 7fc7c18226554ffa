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

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use crate::config::{
    parse_bootstrap, ClientConfig, SaslConfig, SecurityProtocol, TlsConfig, MIN_MAX_FRAME_SIZE,
};
use crate::error::Error;
use crate::runtime::StreamsGroupConfig;
use crate::streams::StreamsTopology;

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

/// Keys [`StreamsGroupConfig::from_properties`] accepts besides [`CLIENT_KEYS`]
/// (`client.tag.` is a prefix: `client.tag.<key>`).
pub const STREAMS_KEYS: &[&str] = &[
    "application.id",
    "application.server",
    "client.rack",
    "client.tag.",
    "group.instance.id",
    "max.poll.interval.ms",
];

const CLIENT_TAG_PREFIX: &str = "client.tag.";

fn invalid(reason: String) -> Error {
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

// ---------------------------------------------------------------------------------------------
// The .properties parser
// ---------------------------------------------------------------------------------------------

/// Parses Java `.properties` text into `(key, value)` pairs, in file order (duplicates kept;
/// the configuration builders let the last one win).
///
/// Supported: `#` and `!` comment lines; `key=value`, `key: value` and `key value`; whitespace
/// around keys and values is trimmed (an escaped `\ ` keeps a space); a line ending in an odd
/// number of `\` continues on the next line, whose leading whitespace is dropped; the escapes
/// `\t`, `\n`, `\r`, `\f`, `\\`, `\uXXXX` (UTF-16, surrogate pairs combined), and `\` before
/// any other character stands for that character (`\=`, `\:`, `\#`, `\ `). Lines end with
/// `\n`, `\r\n` or `\r`.
///
/// Unlike Java, trailing whitespace of a value is removed (a stray space after a password is
/// a classic mistake), and a malformed `\u` escape is an error naming the line and key —
/// never the value, which may be a password.
pub fn parse(text: &str) -> Result<Vec<(String, String)>, Error> {
    let mut out = Vec::new();
    for logical in logical_lines(text) {
        let (key, value) = split_entry(&logical.text).map_err(|problem| {
            invalid(format!(
                "line {}: {problem} (in the entry starting {})",
                logical.line,
                entry_label(&logical.text)
            ))
        })?;
        out.push((key, value));
    }
    Ok(out)
}

/// Reads and [`parse`]s a `.properties` file (UTF-8).
pub fn read_file(path: impl AsRef<Path>) -> Result<Vec<(String, String)>, Error> {
    let path = path.as_ref();
    let bytes =
        std::fs::read(path).map_err(|e| invalid(format!("cannot read {}: {e}", path.display())))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        invalid(format!(
            "{}: not UTF-8 (invalid byte at offset {}); save the file as UTF-8 or use \\uXXXX escapes",
            path.display(),
            e.utf8_error().valid_up_to()
        ))
    })?;
    parse(&text).map_err(|e| match e {
        Error::InvalidConfiguration { field, reason } => Error::InvalidConfiguration {
            field,
            reason: format!("{}: {reason}", path.display()),
        },
        other => other,
    })
}

/// A key-only label for error messages about a logical line: the raw key part, so that a
/// secret value is never shown.
fn entry_label(text: &str) -> String {
    let mut key = String::new();
    let mut escaped = false;
    for c in text.chars() {
        if !escaped && (c == '=' || c == ':' || c.is_whitespace()) {
            break;
        }
        escaped = !escaped && c == '\\';
        key.push(c);
    }
    format!("{key:?}")
}

struct LogicalLine {
    /// 1-based number of the natural line where it starts.
    line: usize,
    /// The joined text, leading whitespace removed, continuation backslashes removed.
    text: String,
}

/// Splits text into natural lines on `\n`, `\r\n` and `\r`.
fn natural_lines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let bytes = text.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                lines.push(&text[start..i]);
                start = i + 1;
            }
            b'\r' => {
                lines.push(&text[start..i]);
                if bytes.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

/// Whether a line ends in an odd number of backslashes (a continuation).
fn continues(line: &str) -> bool {
    line.bytes().rev().take_while(|&b| b == b'\\').count() % 2 == 1
}

fn is_properties_whitespace(c: char) -> bool {
    // Java's set (space, tab, form feed) plus other Unicode whitespace, which a trimmed
    // configuration value should not keep either.
    c.is_whitespace()
}

fn logical_lines(text: &str) -> Vec<LogicalLine> {
    let lines = natural_lines(text);
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let first = lines[i].trim_start_matches(is_properties_whitespace);
        let line_no = i + 1;
        i += 1;
        if first.is_empty() || first.starts_with('#') || first.starts_with('!') {
            // Comment lines never continue, even when they end in a backslash (as in Java).
            continue;
        }
        let mut joined = String::new();
        let mut current = first;
        loop {
            if continues(current) {
                joined.push_str(&current[..current.len() - 1]);
                match lines.get(i) {
                    Some(next) => {
                        i += 1;
                        current = next.trim_start_matches(is_properties_whitespace);
                    }
                    // A continuation at the end of the text continues into nothing.
                    None => break,
                }
            } else {
                joined.push_str(current);
                break;
            }
        }
        out.push(LogicalLine {
            line: line_no,
            text: joined,
        });
    }
    out
}

/// Splits one logical line into an unescaped, trimmed key and value.
fn split_entry(text: &str) -> Result<(String, String), String> {
    // Find the end of the key: the first unescaped '=', ':' or whitespace.
    let mut key_end = text.len();
    let mut escaped = false;
    for (pos, c) in text.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        if c == '\\' {
            escaped = true;
        } else if c == '=' || c == ':' || is_properties_whitespace(c) {
            key_end = pos;
            break;
        }
    }
    let raw_key = &text[..key_end];
    // Skip whitespace, at most one separator, then whitespace again.
    let mut rest = text[key_end..].trim_start_matches(is_properties_whitespace);
    if let Some(stripped) = rest.strip_prefix(['=', ':']) {
        rest = stripped.trim_start_matches(is_properties_whitespace);
    }
    let key = unescape(raw_key).map_err(|p| format!("key: {p}"))?;
    let value = unescape(rest).map_err(|p| format!("value of {key:?}: {p}"))?;
    Ok((key, value))
}

/// Resolves escapes and drops unescaped trailing whitespace.
fn unescape(raw: &str) -> Result<String, String> {
    let mut out = String::with_capacity(raw.len());
    // Length of `out` up to the last character that must survive trimming.
    let mut keep = 0;
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            if !is_properties_whitespace(c) {
                keep = out.len();
            }
            continue;
        }
        let Some(e) = chars.next() else {
            // A lone trailing backslash (only possible at the end of the text): dropped.
            break;
        };
        match e {
            't' => out.push('\t'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            'f' => out.push('\u{c}'),
            'u' => {
                let unit = hex4(&mut chars)?;
                let c = match unit {
                    0xD800..=0xDBFF => {
                        // A high surrogate needs a following \uDC00..\uDFFF.
                        let low = match (chars.next(), chars.next()) {
                            (Some('\\'), Some('u')) => hex4(&mut chars)?,
                            _ => return Err("\\u escape: high surrogate without a low one".into()),
                        };
                        if !(0xDC00..=0xDFFF).contains(&low) {
                            return Err("\\u escape: high surrogate without a low one".into());
                        }
                        let code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                        char::from_u32(code).ok_or("\\u escape: invalid code point")?
                    }
                    0xDC00..=0xDFFF => {
                        return Err("\\u escape: low surrogate without a high one".into())
                    }
                    _ => char::from_u32(unit).ok_or("\\u escape: invalid code point")?,
                };
                out.push(c);
            }
            other => out.push(other),
        }
        keep = out.len();
    }
    out.truncate(keep);
    Ok(out)
}

fn hex4(chars: &mut std::str::Chars<'_>) -> Result<u32, String> {
    let mut value = 0u32;
    for _ in 0..4 {
        let digit = chars
            .next()
            .and_then(|c| c.to_digit(16))
            .ok_or("malformed \\uXXXX escape (four hex digits expected)")?;
        value = value * 16 + digit;
    }
    Ok(value)
}

// ---------------------------------------------------------------------------------------------
// Suggestions
// ---------------------------------------------------------------------------------------------

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitution = prev[j] + usize::from(ca != cb);
            cur[j + 1] = substitution.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The accepted key closest to `key` (case-insensitive, `_` read as `.`), if close enough to
/// be a plausible typo.
fn suggestion(key: &str, known: &[&[&'static str]]) -> Option<&'static str> {
    let wanted = key.to_ascii_lowercase().replace('_', ".");
    let limit = (wanted.chars().count() / 3).max(2);
    let mut best: Option<(usize, &'static str)> = None;
    for list in known {
        for &candidate in *list {
            let d = edit_distance(&wanted, candidate);
            if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
                best = Some((d, candidate));
            }
        }
    }
    best.map(|(_, k)| k)
}

fn unknown_key(key: &str, streams: bool) -> Error {
    let known: &[&[&'static str]] = if streams {
        &[CLIENT_KEYS, STREAMS_KEYS]
    } else {
        &[CLIENT_KEYS]
    };
    let accepted = if streams {
        "the librdkafka client keys and application.id, application.server, client.rack, \
         client.tag.<key>, group.instance.id, max.poll.interval.ms"
    } else {
        "bootstrap.servers, client.id, security.protocol, sasl.*, ssl.*.location, \
         ssl.endpoint.identification.algorithm, *.timeout.ms, retry.backoff*.ms, \
         reconnect.backoff*.ms, *message.max.bytes"
    };
    unknown_among(key, known, accepted)
}

/// The error for a key that is neither one of [`CLIENT_KEYS`] nor one of a configuration's
/// own keys (`own`, described in `accepted`), for configurations that take the client keys
/// plus their own: Java-client keys with a librdkafka-style equivalent get the keys to use
/// instead; any other key gets the closest of [`CLIENT_KEYS`] and `own` as a suggestion.
pub(crate) fn reject_key(key: &str, own: &[&'static str], accepted: &str) -> Error {
    // `streams = true`: a Streams member key is not "for StreamsGroupConfig" here, just
    // not accepted by this configuration.
    foreign_key(key, true).unwrap_or_else(|| unknown_among(key, &[CLIENT_KEYS, own], accepted))
}

fn unknown_among(key: &str, known: &[&[&'static str]], accepted: &str) -> Error {
    let hint = match suggestion(key, known) {
        Some(k) if k == CLIENT_TAG_PREFIX => format!("; did you mean {CLIENT_TAG_PREFIX}<key>?"),
        Some(k) => format!("; did you mean {k:?}?"),
        None => String::new(),
    };
    invalid(format!(
        "unknown key {key:?}{hint} (accepted: {accepted}; see the kafka_streams_group::properties docs)"
    ))
}

// ---------------------------------------------------------------------------------------------
// Key interpretation
// ---------------------------------------------------------------------------------------------

/// Errors for keys that exist in other Kafka clients but are spelled differently here.
fn foreign_key(key: &str, streams: bool) -> Option<Error> {
    let reason = if key == "sasl.jaas.config" {
        "sasl.jaas.config (Java JAAS) is not supported; set sasl.mechanism, sasl.username and \
         sasl.password instead"
            .to_owned()
    } else if key.starts_with("ssl.truststore.") {
        format!(
            "{key} (a Java keystore) is not supported: PEM files are needed; give the CA \
             certificates as a PEM file in ssl.ca.location"
        )
    } else if key.starts_with("ssl.keystore.") {
        format!(
            "{key} (a Java keystore) is not supported: PEM files are needed; give the client \
             certificate chain in ssl.certificate.location and its unencrypted key in \
             ssl.key.location"
        )
    } else if key == "ssl.key.password" {
        "ssl.key.password: encrypted private keys are not supported; give an unencrypted \
         PKCS#8, PKCS#1 or SEC1 key in ssl.key.location"
            .to_owned()
    } else if !streams && is_streams_key(key) {
        format!(
            "{key} is a Streams group setting; use StreamsGroupConfig::from_properties, which \
             accepts it"
        )
    } else {
        return None;
    };
    Some(invalid(reason))
}

fn is_streams_key(key: &str) -> bool {
    (STREAMS_KEYS.contains(&key) && key != CLIENT_TAG_PREFIX) || key.starts_with(CLIENT_TAG_PREFIX)
}

/// The settings of the client keys, collected before building (so order does not matter and
/// cross-key checks see everything).
#[derive(Default)]
struct ClientSettings {
    /// key -> value; last one wins.
    values: BTreeMap<&'static str, String>,
}

impl ClientSettings {
    fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }

    fn present(&self, key: &str) -> bool {
        self.values.contains_key(key)
    }
}

fn parse_u64(key: &str, value: &str) -> Result<u64, Error> {
    value.parse::<u64>().map_err(|_| {
        invalid(format!(
            "{key}={}: expected a non-negative whole number",
            shown(key, value)
        ))
    })
}

fn parse_ms(key: &str, value: &str) -> Result<Duration, Error> {
    match parse_u64(key, value)? {
        0 => Err(invalid(format!("{key}=0: must be greater than zero"))),
        ms => Ok(Duration::from_millis(ms)),
    }
}

fn parse_frame_size(key: &str, value: &str) -> Result<usize, Error> {
    let n = parse_u64(key, value)?;
    let max = i32::MAX as u64;
    if n < MIN_MAX_FRAME_SIZE as u64 || n > max {
        return Err(invalid(format!(
            "{key}={n}: outside {MIN_MAX_FRAME_SIZE}..={max} (Kafka frame lengths are int32)"
        )));
    }
    usize::try_from(n).map_err(|_| invalid(format!("{key}={n}: too large for this platform")))
}

fn required<'a>(settings: &'a ClientSettings, key: &str, why: &str) -> Result<&'a str, Error> {
    match settings.get(key) {
        Some(v) if !v.is_empty() => Ok(v),
        Some(_) => Err(invalid(format!("{key} is empty; {why}"))),
        None => Err(invalid(format!("{key} is missing; {why}"))),
    }
}

fn build_sasl(
    settings: &ClientSettings,
    protocol: SecurityProtocol,
) -> Result<Option<SaslConfig>, Error> {
    const SASL_KEYS: [&str; 3] = ["sasl.mechanism", "sasl.username", "sasl.password"];
    let given: Vec<&str> = SASL_KEYS
        .into_iter()
        .filter(|k| settings.present(k))
        .collect();
    if !protocol.uses_sasl() {
        if let Some(first) = given.first() {
            return Err(invalid(format!(
                "{first} is set but security.protocol is {protocol}, which does not use SASL; \
                 set security.protocol=SASL_SSL (or SASL_PLAINTEXT)"
            )));
        }
        return Ok(None);
    }
    let Some(mechanism) = settings.get("sasl.mechanism") else {
        if given.is_empty() {
            // Left for the application to add in code (OAUTHBEARER's callback).
            return Ok(None);
        }
        return Err(invalid(format!(
            "sasl.mechanism is missing for security.protocol={protocol}; set PLAIN, \
             SCRAM-SHA-256 or SCRAM-SHA-512 (the Java default, GSSAPI, is not supported)"
        )));
    };
    let mechanism = mechanism.trim().to_ascii_uppercase();
    let why = "PLAIN and SCRAM need sasl.username and sasl.password";
    let credentials = || -> Result<(String, String), Error> {
        let username = required(settings, "sasl.username", why)?.to_owned();
        let password = required(settings, "sasl.password", why)?.to_owned();
        Ok((username, password))
    };
    let sasl = match mechanism.as_str() {
        "PLAIN" => {
            let (u, p) = credentials()?;
            SaslConfig::plain(u, p)
        }
        "SCRAM-SHA-256" => {
            let (u, p) = credentials()?;
            SaslConfig::scram_sha256(u, p)
        }
        "SCRAM-SHA-512" => {
            let (u, p) = credentials()?;
            SaslConfig::scram_sha512(u, p)
        }
        "OAUTHBEARER" => {
            return Err(invalid(
                "sasl.mechanism=OAUTHBEARER needs a token callback, which properties cannot \
                 hold: remove sasl.mechanism (and any sasl.username/sasl.password) from the \
                 properties and add .sasl(SaslConfig::oauthbearer(callback)) to the returned \
                 configuration in code"
                    .to_owned(),
            ))
        }
        _ => {
            return Err(invalid(format!(
                "sasl.mechanism={mechanism:?} is not supported; use PLAIN, SCRAM-SHA-256 or \
                 SCRAM-SHA-512 (OAUTHBEARER: set it in code)"
            )))
        }
    };
    Ok(Some(sasl))
}

fn build_tls(
    settings: &ClientSettings,
    protocol: SecurityProtocol,
) -> Result<Option<TlsConfig>, Error> {
    const TLS_KEYS: [&str; 4] = [
        "ssl.ca.location",
        "ssl.certificate.location",
        "ssl.key.location",
        "ssl.endpoint.identification.algorithm",
    ];
    if !protocol.uses_tls() {
        if let Some(first) = TLS_KEYS.into_iter().find(|k| settings.present(k)) {
            return Err(invalid(format!(
                "{first} is set but security.protocol is {protocol}, which does not use TLS; \
                 set security.protocol=SSL (or SASL_SSL)"
            )));
        }
        return Ok(None);
    }
    let mut tls = TlsConfig::new();
    if let Some(ca) = settings.get("ssl.ca.location") {
        if ca.is_empty() {
            return Err(invalid(
                "ssl.ca.location is empty; give a PEM file or leave the key out to trust the \
                 platform's roots"
                    .to_owned(),
            ));
        }
        tls = tls.ca_pem_file(ca);
    }
    match (
        settings.get("ssl.certificate.location"),
        settings.get("ssl.key.location"),
    ) {
        (Some(cert), Some(key)) if !cert.is_empty() && !key.is_empty() => {
            tls = tls.client_cert_pem_file(cert, key);
        }
        (None, None) => {}
        _ => {
            return Err(invalid(
                "mutual TLS needs both ssl.certificate.location and ssl.key.location, non-empty"
                    .to_owned(),
            ))
        }
    }
    if let Some(algorithm) = settings.get("ssl.endpoint.identification.algorithm") {
        match algorithm.trim().to_ascii_lowercase().as_str() {
            "https" => {}
            "" | "none" => {
                log::warn!(
                    "ssl.endpoint.identification.algorithm={algorithm:?}: broker hostname \
                     verification is OFF; any certificate signed by a trusted CA is accepted \
                     for any broker (prefer a certificate with the right names)"
                );
                tls = tls.dangerous_disable_hostname_verification(true);
            }
            _ => {
                return Err(invalid(format!(
                    "ssl.endpoint.identification.algorithm={algorithm:?}: expected https (verify \
                     the broker's hostname) or none"
                )))
            }
        }
    }
    Ok(Some(tls))
}

/// Applies `reconnect.backoff.ms` / `reconnect.backoff.max.ms` as Java's clients read them:
/// both at least 0 (0 = no backoff); the base alone disables the exponential growth
/// (`CommonClientConfigs.postProcessReconnectBackoffConfigs`); a base above the maximum is a
/// constant backoff of the maximum (`ExponentialBackoff`).
fn reconnect_backoff(
    settings: &ClientSettings,
    config: ClientConfig,
) -> Result<ClientConfig, Error> {
    const BASE: &str = "reconnect.backoff.ms";
    const MAX: &str = "reconnect.backoff.max.ms";
    let (mut base, mut max) = config.get_reconnect_backoff();
    if let Some(v) = settings.get(BASE) {
        base = Duration::from_millis(parse_u64(BASE, v)?);
    }
    match settings.get(MAX) {
        Some(v) => max = Duration::from_millis(parse_u64(MAX, v)?),
        None if settings.present(BASE) => {
            log::warn!(
                "{BASE} is set but {MAX} is not: the reconnect backoff stays at {base:?} \
                 instead of growing (as in Java's clients); set {MAX} for exponential backoff"
            );
            max = base;
        }
        None => {}
    }
    Ok(config.reconnect_backoff(base.min(max), max))
}

/// Builds the client configuration from collected settings.
fn build_client(settings: &ClientSettings) -> Result<ClientConfig, Error> {
    let bootstrap = required(
        settings,
        "bootstrap.servers",
        "it lists the brokers to contact first (host:port,host:port)",
    )?;
    parse_bootstrap(bootstrap).map_err(|e| {
        let detail = match e {
            Error::InvalidConfiguration { reason, .. } => reason,
            other => other.to_string(),
        };
        invalid(format!("bootstrap.servers: {detail}"))
    })?;
    let mut config = ClientConfig::new(bootstrap);
    if let Some(id) = settings.get("client.id") {
        config = config.client_id(id);
    }
    let protocol = match settings.get("security.protocol") {
        Some(p) => p.parse::<SecurityProtocol>().map_err(|_| {
            invalid(format!(
                "security.protocol={p:?}: expected PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL"
            ))
        })?,
        None => SecurityProtocol::Plaintext,
    };
    config = config.security_protocol(protocol);
    if let Some(tls) = build_tls(settings, protocol)? {
        config = config.tls(tls);
    }
    let sasl = build_sasl(settings, protocol)?;
    let sasl_pending = protocol.uses_sasl() && sasl.is_none();
    if let Some(sasl) = sasl {
        config = config.sasl(sasl);
    }
    if let Some(v) = settings.get("request.timeout.ms") {
        config = config.request_timeout(parse_ms("request.timeout.ms", v)?);
    }
    if let Some(v) = settings.get("socket.connection.setup.timeout.ms") {
        config = config.connect_timeout(parse_ms("socket.connection.setup.timeout.ms", v)?);
    }
    let (mut base, mut max) = config.get_retry_backoff();
    if let Some(v) = settings.get("retry.backoff.ms") {
        base = parse_ms("retry.backoff.ms", v)?;
    }
    if let Some(v) = settings.get("retry.backoff.max.ms") {
        max = parse_ms("retry.backoff.max.ms", v)?;
    }
    // Java (KIP-580): a base above the maximum means a constant backoff of the maximum.
    config = config.retry_backoff(base.min(max), max);
    config = reconnect_backoff(settings, config)?;
    let frame = ["receive.message.max.bytes", "message.max.bytes"]
        .into_iter()
        .find_map(|k| settings.get(k).map(|v| (k, v)));
    if let Some((key, value)) = frame {
        config = config.max_frame_size(parse_frame_size(key, value)?);
    }
    if !sasl_pending {
        config.validate().map_err(|e| match e {
            Error::InvalidConfiguration { field, reason } => {
                invalid(format!("{reason} (from the {field} check)"))
            }
            other => other,
        })?;
    }
    Ok(config)
}

/// Sorts `(key, value)` pairs into client settings and Streams settings; rejects unknown and
/// foreign keys.
fn collect<I, K, V>(
    props: I,
    streams: bool,
    trim: bool,
) -> Result<(ClientSettings, BTreeMap<String, String>), Error>
where
    I: IntoIterator<Item = (K, V)>,
    K: AsRef<str>,
    V: AsRef<str>,
{
    let mut client = ClientSettings::default();
    let mut streams_values = BTreeMap::new();
    for (key, value) in props {
        // Parsed files are already trimmed, and trimming again would drop an escaped
        // trailing space (`\ `).
        let (key, value) = if trim {
            (key.as_ref().trim(), value.as_ref().trim().to_owned())
        } else {
            (key.as_ref(), value.as_ref().to_owned())
        };
        if let Some(&known) = CLIENT_KEYS.iter().find(|k| **k == key) {
            // librdkafka's historical plural is the same setting.
            let known = if known == "sasl.mechanisms" {
                "sasl.mechanism"
            } else {
                known
            };
            client.values.insert(known, value);
        } else if let Some(e) = foreign_key(key, streams) {
            return Err(e);
        } else if streams && is_streams_key(key) {
            streams_values.insert(key.to_owned(), value);
        } else {
            return Err(unknown_key(key, streams));
        }
    }
    Ok((client, streams_values))
}

fn parse_endpoint(value: &str) -> Result<(String, u16), Error> {
    let bad = |why: &str| {
        invalid(format!(
            "application.server={value:?}: {why} (expected host:port)"
        ))
    };
    let (host, port) = value.rsplit_once(':').ok_or_else(|| bad("no port"))?;
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    if host.is_empty() {
        return Err(bad("empty host"));
    }
    let port = port
        .parse::<u16>()
        .ok()
        .filter(|p| *p != 0)
        .ok_or_else(|| bad("port is not a number in 1..=65535"))?;
    Ok((host.to_owned(), port))
}

impl ClientConfig {
    /// Builds a client configuration from librdkafka-style properties; see the
    /// [`properties`](crate::properties) module for the accepted keys and the checks.
    ///
    /// Keys and values are trimmed. Unknown keys are errors.
    pub fn from_properties<I, K, V>(props: I) -> Result<ClientConfig, Error>
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        client_from(props, true)
    }

    /// [`from_properties`](Self::from_properties) on the pairs of a Java `.properties` file
    /// (syntax: [`parse`]).
    pub fn from_properties_file(path: impl AsRef<Path>) -> Result<ClientConfig, Error> {
        client_from(read_file(path)?, false)
    }
}

impl StreamsGroupConfig {
    /// Builds a member configuration from properties (client keys plus the Kafka Streams
    /// keys `application.id` (required), `application.server`, `client.rack`,
    /// `client.tag.<key>`, `group.instance.id` and `max.poll.interval.ms`) and the
    /// `topology`, which properties cannot express. See the [`properties`](crate::properties)
    /// module for the accepted keys and the checks.
    pub fn from_properties<I, K, V>(
        props: I,
        topology: StreamsTopology,
    ) -> Result<StreamsGroupConfig, Error>
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        streams_from(props, topology, true)
    }

    /// [`from_properties`](Self::from_properties) on the pairs of a Java `.properties` file
    /// (syntax: [`parse`]).
    pub fn from_properties_file(
        path: impl AsRef<Path>,
        topology: StreamsTopology,
    ) -> Result<StreamsGroupConfig, Error> {
        streams_from(read_file(path)?, topology, false)
    }
}

fn client_from<I, K, V>(props: I, trim: bool) -> Result<ClientConfig, Error>
where
    I: IntoIterator<Item = (K, V)>,
    K: AsRef<str>,
    V: AsRef<str>,
{
    let (settings, _) = collect(props, false, trim)?;
    build_client(&settings)
}

fn streams_from<I, K, V>(
    props: I,
    topology: StreamsTopology,
    trim: bool,
) -> Result<StreamsGroupConfig, Error>
where
    I: IntoIterator<Item = (K, V)>,
    K: AsRef<str>,
    V: AsRef<str>,
{
    let (settings, streams) = collect(props, true, trim)?;
    let group_id = match streams.get("application.id") {
        Some(id) if !id.is_empty() => id.clone(),
        Some(_) => return Err(invalid("application.id is empty".to_owned())),
        None => {
            return Err(invalid(
                "application.id is missing; it is the Streams group id".to_owned(),
            ))
        }
    };
    let client = build_client(&settings)?;
    let mut config = StreamsGroupConfig::new(client.bootstrap().to_owned(), group_id, topology)
        .client_config(client);
    let mut tags = Vec::new();
    for (key, value) in &streams {
        match key.as_str() {
            "application.id" => {}
            "application.server" => {
                let (host, port) = parse_endpoint(value)?;
                config = config.user_endpoint(host, port);
            }
            "client.rack" => {
                if value.is_empty() {
                    return Err(invalid("client.rack is empty; leave it out".to_owned()));
                }
                config = config.rack_id(value.clone());
            }
            "group.instance.id" => {
                if value.is_empty() {
                    return Err(invalid(
                        "group.instance.id is empty; leave it out for a dynamic member".to_owned(),
                    ));
                }
                config = config.instance_id(value.clone());
            }
            "max.poll.interval.ms" => {
                let ms = parse_u64(key, value)?;
                let ms = i32::try_from(ms).ok().filter(|ms| *ms > 0).ok_or_else(|| {
                    invalid(format!(
                        "max.poll.interval.ms={ms}: outside 1..={}",
                        i32::MAX
                    ))
                })?;
                config = config.rebalance_timeout_ms(ms);
            }
            _ => {
                // Only client.tag.<key> is left (collect admits nothing else).
                let tag = key.strip_prefix(CLIENT_TAG_PREFIX).unwrap_or_default();
                if tag.is_empty() {
                    return Err(invalid(
                        "client.tag. needs a tag name: client.tag.<key>=<value>".to_owned(),
                    ));
                }
                tags.push((tag.to_owned(), value.clone()));
            }
        }
    }
    if !tags.is_empty() {
        config = config.client_tags(tags);
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
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
