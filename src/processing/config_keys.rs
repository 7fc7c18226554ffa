//! The Kafka Streams keys [`ProcessingConfig::from_properties`] reads, so one properties file
//! serves the Java and the Rust instances of an application: every `StreamsConfig` key is
//! either applied, refused with the reason when its value asks for something this crate does
//! not do, or ignored with one `info` line saying why (it only matters to a JVM, or to the
//! broker under the Streams protocol).

use std::time::Duration;

use crate::error::Error;
use crate::properties;
use crate::session::StreamsGroupConfig;
use crate::streams::{StreamsTopology, Subtopology, UserEndpoint};

use super::config::{ProcessingConfig, ProcessingGuarantee};
use super::deserialization::DeserializationHandler;

/// Membership keys, read by [`StreamsGroupConfig::from_properties`]'s own rules
/// (`client.tag.<key>` too).
const MEMBER_KEYS: &[&str] = &[
    "application.server",
    "client.rack",
    "group.instance.id",
    "max.poll.interval.ms",
];
const CLIENT_TAG_PREFIX: &str = "client.tag.";

/// Keys with an effect (or a checked value) here, besides the client and member keys.
const OWN_KEYS: &[&str] = &[
    "application.id",
    "commit.interval.ms",
    "repartition.purge.interval.ms",
    "poll.ms",
    "processing.guarantee",
    "group.protocol",
    "default.deserialization.exception.handler",
    "deserialization.exception.handler",
    "num.stream.threads",
    "replication.factor",
    "max.task.idle.ms",
    "buffered.records.per.partition",
    "statestore.cache.max.bytes",
    "cache.max.bytes.buffering",
    "topology.optimization",
    "state.dir",
];

const JVM: &str = "JVM only (a Java class, metrics, JVM client tuning or upgrade setting)";
const BROKER_ASSIGNS: &str = "under the streams protocol (KIP-1071) the broker assigns tasks \
     with its group configs (streams.num.standby.replicas, ...; kafka-configs --entity-type \
     groups)";

/// Keys accepted and ignored, with the reason logged at `info`.
const IGNORED: &[(&str, &str)] = &[
    (
        "default.key.serde",
        "serdes are Rust types chosen in the processor code",
    ),
    (
        "default.value.serde",
        "serdes are Rust types chosen in the processor code",
    ),
    ("default.list.key.serde.inner", JVM),
    ("default.list.key.serde.type", JVM),
    ("default.list.value.serde.inner", JVM),
    ("default.list.value.serde.type", JVM),
    ("windowed.inner.class.serde", JVM),
    ("window.size.ms", JVM),
    ("windowstore.changelog.additional.retention.ms", JVM),
    ("default.dsl.store", JVM),
    ("dsl.store.suppliers.class", JVM),
    ("rocksdb.config.setter", JVM),
    ("default.client.supplier", JVM),
    ("processor.wrapper.class", JVM),
    ("metric.reporters", JVM),
    ("metrics.num.samples", JVM),
    ("metrics.recording.level", JVM),
    ("metrics.sample.window.ms", JVM),
    ("built.in.metrics.version", JVM),
    ("enable.metrics.push", JVM),
    ("log.summary.interval.ms", JVM),
    ("upgrade.from", JVM),
    ("connections.max.idle.ms", JVM),
    ("metadata.max.age.ms", JVM),
    ("metadata.recovery.strategy", JVM),
    ("metadata.recovery.rebootstrap.trigger.ms", JVM),
    ("receive.buffer.bytes", JVM),
    ("send.buffer.bytes", JVM),
    (
        "state.cleanup.delay.ms",
        "not configurable here yet: stores of a revoked task are kept 10 min (Java's default)",
    ),
    (
        "task.timeout.ms",
        "each blocking operation here has its own deadline (60 s for commits, flushes and \
         restores)",
    ),
    ("num.standby.replicas", BROKER_ASSIGNS),
    ("acceptable.recovery.lag", BROKER_ASSIGNS),
    ("max.warmup.replicas", BROKER_ASSIGNS),
    ("probing.rebalance.interval.ms", BROKER_ASSIGNS),
    ("task.assignor.class", BROKER_ASSIGNS),
    ("rack.aware.assignment.strategy", BROKER_ASSIGNS),
    ("rack.aware.assignment.tags", BROKER_ASSIGNS),
    ("rack.aware.assignment.traffic_cost", BROKER_ASSIGNS),
    ("rack.aware.assignment.non_overlap_cost", BROKER_ASSIGNS),
];

/// Prefixed keys accepted and ignored: Java's per-client overrides and internal topic
/// configs.
const IGNORED_PREFIXES: &[(&str, &str)] = &[
    ("consumer.", "overrides of Java's consumers"),
    ("main.consumer.", "overrides of Java's main consumer"),
    ("restore.consumer.", "overrides of Java's restore consumer"),
    ("global.consumer.", "overrides of Java's global consumer"),
    ("producer.", "overrides of Java's producer"),
    ("admin.", "overrides of Java's admin client"),
    (
        "topic.",
        "internal topic configs are the StreamsApp topology's (TopicInfo::config)",
    ),
];

/// Class keys accepted only with Java's default class (whose behaviour is this crate's):
/// `(key, default class, what happens here)`.
const DEFAULT_CLASS_ONLY: &[(&str, &str, &str)] = &[
    (
        "default.timestamp.extractor",
        "org.apache.kafka.streams.processor.FailOnInvalidTimestamp",
        "a record's timestamp is the one in the batch",
    ),
    (
        "processing.exception.handler",
        "org.apache.kafka.streams.errors.LogAndFailProcessingExceptionHandler",
        "a processor error fails the runtime",
    ),
    (
        "default.production.exception.handler",
        "org.apache.kafka.streams.errors.DefaultProductionExceptionHandler",
        "a send that fails fails the runtime",
    ),
    (
        "production.exception.handler",
        "org.apache.kafka.streams.errors.DefaultProductionExceptionHandler",
        "a send that fails fails the runtime",
    ),
];

const ACCEPTED: &str = "the client keys (bootstrap.servers, client.id, security.protocol, \
     sasl.*, ssl.*.location, ...), the member keys (application.server, client.rack, \
     client.tag.<key>, group.instance.id, max.poll.interval.ms) and Kafka Streams' \
     StreamsConfig keys (see the README's Processing table)";

/// Reads the pairs; see [`ProcessingConfig::from_properties`].
pub(super) fn read<I, K, V>(props: I) -> Result<ProcessingConfig, Error>
where
    I: IntoIterator<Item = (K, V)>,
    K: AsRef<str>,
    V: AsRef<str>,
{
    let mut r = Reader::default();
    for (k, v) in props {
        r.key(k.as_ref().trim(), v.as_ref().trim())?;
    }
    r.finish()
}

#[derive(Default)]
struct Reader {
    app: Option<String>,
    client: Vec<(String, String)>,
    member: Vec<(String, String)>,
    commit: Option<Duration>,
    guarantee: Option<ProcessingGuarantee>,
    purge: Option<Duration>,
    poll: Option<Duration>,
    handler: Option<DeserializationHandler>,
    replication_factor: Option<Option<i16>>,
    buffered: Option<usize>,
    task_idle: Option<i64>,
    threads: Option<usize>,
    cache: Option<u64>,
    deprecated_cache: Option<u64>,
    state_dir: Option<String>,
}

impl Reader {
    fn key(&mut self, k: &str, v: &str) -> Result<(), Error> {
        match k {
            "application.id" => self.app = Some(v.to_string()),
            "commit.interval.ms" => self.commit = Some(millis("commit.interval.ms", v)?),
            "repartition.purge.interval.ms" => {
                self.purge = Some(millis("repartition.purge.interval.ms", v)?)
            }
            "poll.ms" => self.poll = Some(millis("poll.ms", v)?),
            "processing.guarantee" => self.guarantee = Some(guarantee(v)?),
            "group.protocol" => check_group_protocol(v)?,
            "default.deserialization.exception.handler" | "deserialization.exception.handler" => {
                self.handler = Some(DeserializationHandler::from_property(v)?)
            }
            "num.stream.threads" => {
                let n = number(k, v, 1)?;
                self.threads = Some(usize::try_from(n).unwrap_or(usize::MAX));
            }
            "replication.factor" => self.replication_factor = Some(replication_factor(v)?),
            "max.task.idle.ms" => self.task_idle = Some(check_task_idle(v)?),
            "buffered.records.per.partition" => {
                let n = number(k, v, 1)?;
                self.buffered = Some(usize::try_from(n).unwrap_or(usize::MAX));
            }
            "statestore.cache.max.bytes" => self.cache = Some(number(k, v, 0)?.unsigned_abs()),
            "cache.max.bytes.buffering" => {
                self.deprecated_cache = Some(number(k, v, 0)?.unsigned_abs())
            }
            "topology.optimization" => check_optimization(v)?,
            "state.dir" => self.state_dir = Some(v.to_string()).filter(|d| !d.is_empty()),
            _ if properties::CLIENT_KEYS.contains(&k) => {
                self.client.push((k.to_string(), v.to_string()))
            }
            _ if MEMBER_KEYS.contains(&k) || k.starts_with(CLIENT_TAG_PREFIX) => {
                self.member.push((k.to_string(), v.to_string()))
            }
            _ => other(k, v)?,
        }
        Ok(())
    }

    fn finish(self) -> Result<ProcessingConfig, Error> {
        let app = self
            .app
            .filter(|a| !a.is_empty())
            .ok_or(Error::InvalidConfiguration {
                field: "application.id",
                reason: "required: set application.id (it is the Streams group id)".into(),
            })?;
        let client = crate::config::ClientConfig::from_properties(self.client)?;
        let bootstrap = client.bootstrap().to_owned();
        let mut c = ProcessingConfig::new(bootstrap.clone(), app.clone()).client_config(client);
        if let Some(g) = self.guarantee {
            c = c.processing_guarantee(g);
        }
        if let Some(d) = self.commit {
            c = c.commit_interval(d);
        }
        if let Some(d) = self.purge {
            c = c.purge_interval(d);
        }
        if let Some(d) = self.poll {
            c = c.poll_wait(d);
        }
        if let Some(n) = self.threads {
            c = c.num_stream_threads(n);
        }
        if let Some(n) = self.buffered {
            c = c.buffered_records_per_partition(n);
        }
        if let Some(ms) = self.task_idle {
            c = c.max_task_idle_ms(ms);
        }
        if let Some(h) = self.handler {
            c = c.deserialization_handler(h);
        }
        if let Some(d) = self.state_dir {
            c = c.state_dir(d);
        }
        // Java: the deprecated key counts only when the new one is not set.
        if let Some(bytes) = self.cache.or(self.deprecated_cache) {
            c = c.cache_max_bytes(bytes);
        }
        if let Some(Some(rf)) = self.replication_factor {
            c = c.replication_factor(rf);
        }
        if !self.member.is_empty() {
            c = member_settings(c, self.member, &app, &bootstrap)?;
        }
        c.validate()?;
        Ok(c)
    }
}

/// Applies the member keys with exactly [`StreamsGroupConfig::from_properties`]'s checks and
/// messages: it parses them (with a placeholder topology, which properties cannot give) and
/// the membership it would join with is read back.
fn member_settings(
    mut c: ProcessingConfig,
    member: Vec<(String, String)>,
    app: &str,
    bootstrap: &str,
) -> Result<ProcessingConfig, Error> {
    let placeholder = StreamsTopology::new().subtopology(Subtopology::new("0").source_topic("_"));
    let base = [("application.id", app), ("bootstrap.servers", bootstrap)];
    let props = base
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .chain(member.iter().cloned());
    let m = StreamsGroupConfig::from_properties(props, placeholder)?.build_config()?;
    if let Some(UserEndpoint { host, port }) = m.user_endpoint {
        c = c.user_endpoint(host, port);
    }
    if let Some(id) = m.instance_id {
        c = c.instance_id(id);
    }
    if let Some(rack) = m.rack_id {
        c = c.rack_id(rack);
    }
    if !m.client_tags.is_empty() {
        c = c.client_tags(m.client_tags);
    }
    if member.iter().any(|(k, _)| k == "max.poll.interval.ms") {
        c = c.rebalance_timeout_ms(m.rebalance_timeout_ms);
    }
    Ok(c)
}

/// A key none of the arms took: ignored (logged), refused with the reason, or unknown.
fn other(k: &str, v: &str) -> Result<(), Error> {
    if let Some((_, default, here)) = DEFAULT_CLASS_ONLY.iter().find(|(key, ..)| *key == k) {
        let simple = |c: &str| c.rsplit('.').next().unwrap_or_default().to_owned();
        if simple(v) != simple(default) {
            return Err(Error::InvalidConfiguration {
                field: "properties",
                reason: format!(
                    "{k}={v:?}: a Java class cannot run here; only {default} (the default) is \
                     accepted, which is what this crate does: {here}"
                ),
            });
        }
        log::info!("{k}={v} accepted: {here}");
        return Ok(());
    }
    let ignored = IGNORED
        .iter()
        .find(|(key, _)| *key == k)
        .or_else(|| IGNORED_PREFIXES.iter().find(|(p, _)| k.starts_with(p)));
    if let Some((_, why)) = ignored {
        log::info!("{k}={v:?} ignored: {why}");
        return Ok(());
    }
    let known: Vec<&'static str> = OWN_KEYS
        .iter()
        .chain(MEMBER_KEYS)
        .copied()
        .chain(IGNORED.iter().map(|(key, _)| *key))
        .chain(DEFAULT_CLASS_ONLY.iter().map(|(key, ..)| *key))
        .collect();
    Err(properties::reject_key(k, &known, ACCEPTED))
}

fn millis(key: &'static str, v: &str) -> Result<Duration, Error> {
    v.parse::<u64>()
        .map(Duration::from_millis)
        .map_err(|_| Error::InvalidConfiguration {
            field: key,
            reason: format!("{v:?} is not a number of milliseconds"),
        })
}

fn number(key: &str, v: &str, min: i64) -> Result<i64, Error> {
    v.parse::<i64>()
        .ok()
        .filter(|n| *n >= min)
        .ok_or_else(|| Error::InvalidConfiguration {
            field: "properties",
            reason: format!("{key}={v:?}: not a whole number of at least {min}"),
        })
}

fn refused(field: &'static str, reason: String) -> Error {
    Error::InvalidConfiguration { field, reason }
}

/// `-1` (Java's default) = the broker's default; else 1..=32767.
fn replication_factor(v: &str) -> Result<Option<i16>, Error> {
    match v.parse::<i16>() {
        Ok(-1) => Ok(None),
        Ok(rf) if rf > 0 => Ok(Some(rf)),
        _ => Err(refused(
            "replication.factor",
            format!("{v:?}: use -1 (the broker's default) or 1..=32767"),
        )),
    }
}

fn check_task_idle(v: &str) -> Result<i64, Error> {
    match v.parse::<i64>() {
        Ok(ms @ (0 | -1)) => Ok(ms),
        _ => Err(refused(
            "max.task.idle.ms",
            format!(
                "{v:?}: only 0 (the default: a task waits for its partitions known to have \
                 records on the broker) and -1 (never waits) are supported; waiting longer \
                 for producers is not supported yet"
            ),
        )),
    }
}

fn check_optimization(v: &str) -> Result<(), Error> {
    const KNOWN: [&str; 5] = [
        "none",
        "all",
        "reuse.ktable.source.topics",
        "merge.repartition.topics",
        "single.store.self.join",
    ];
    let values: Vec<&str> = v.split(',').map(str::trim).collect();
    if let Some(bad) = values.iter().find(|x| !KNOWN.contains(x)) {
        return Err(refused(
            "topology.optimization",
            format!("unknown value {bad:?}; Java accepts {}", KNOWN.join(", ")),
        ));
    }
    if values != ["none"] {
        log::info!(
            "topology.optimization={v}: the StreamsApp's topology is sent as given; it must be \
             the topology Java builds with this setting"
        );
    }
    Ok(())
}

fn check_group_protocol(v: &str) -> Result<(), Error> {
    if v.eq_ignore_ascii_case("streams") {
        return Ok(());
    }
    Err(refused(
        "group.protocol",
        format!(
            "{v:?}: only streams (KIP-1071) is supported; this crate does not implement the \
             classic rebalance protocol"
        ),
    ))
}

fn guarantee(v: &str) -> Result<ProcessingGuarantee, Error> {
    match v {
        "at_least_once" => Ok(ProcessingGuarantee::AtLeastOnce),
        "exactly_once_v2" => Ok(ProcessingGuarantee::ExactlyOnceV2),
        "exactly_once" | "exactly_once_beta" => Err(refused(
            "processing.guarantee",
            format!(
                "{v} was removed in Kafka 4.0 (one producer per task or per thread with \
                 the old fencing); use exactly_once_v2 (and the same on every instance of \
                 the application)"
            ),
        )),
        other => Err(refused(
            "processing.guarantee",
            format!("unknown value {other:?}; use at_least_once or exactly_once_v2"),
        )),
    }
}

/// Every key this module knows, for the README table test.
#[cfg(test)]
pub(super) fn all_keys() -> Vec<&'static str> {
    OWN_KEYS
        .iter()
        .chain(MEMBER_KEYS)
        .copied()
        .chain(IGNORED.iter().map(|(k, _)| *k))
        .chain(DEFAULT_CLASS_ONLY.iter().map(|(k, ..)| *k))
        .collect()
}
