//! Key interpretation: the settings collected from the pairs, checked key by key and built
//! into a [`ClientConfig`] or a [`StreamsGroupConfig`](crate::StreamsGroupConfig).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use super::suggest::unknown_key;
use super::{invalid, read_file, shown, CLIENT_KEYS, CLIENT_TAG_PREFIX, STREAMS_KEYS};
use crate::config::{
    parse_bootstrap, ClientConfig, SaslConfig, SecurityProtocol, TlsConfig, MIN_MAX_FRAME_SIZE,
};
use crate::error::Error;

/// Errors for keys that exist in other Kafka clients but are spelled differently here.
pub(super) fn foreign_key(key: &str, streams: bool) -> Option<Error> {
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
pub(crate) struct ClientSettings {
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

pub(crate) fn parse_u64(key: &str, value: &str) -> Result<u64, Error> {
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
pub(crate) fn build_client(settings: &ClientSettings) -> Result<ClientConfig, Error> {
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
pub(crate) fn collect<I, K, V>(
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
    /// (syntax: [`parse`](super::parse)).
    pub fn from_properties_file(path: impl AsRef<Path>) -> Result<ClientConfig, Error> {
        client_from(read_file(path)?, false)
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
