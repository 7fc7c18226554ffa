//! Kafka's WordCountDemo (`streams/examples/.../wordcount/WordCountDemo.java`), record for
//! record, so a Rust instance and Java instances can run one application together
//! (`streams-data-path.md` §6):
//!
//! ```text
//! stream(input) .flatMapValues(v -> v.toLowerCase().split("\\W+")) .groupBy((k, w) -> w)
//!     .count() .toStream() .to(output, Produced.with(String, Long))
//! ```
//!
//! Subtopology `0` splits each line and writes `(word, word)` to
//! `<app>-KSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition`; subtopology `1` counts into
//! the timestamped store `KSTREAM-AGGREGATE-STATE-STORE-0000000003` (changelog
//! `<app>-KSTREAM-AGGREGATE-STATE-STORE-0000000003-changelog`) and writes `(word, count)` to
//! the output, the count as a big-endian `Long`. Every update is sent to the output; the store's
//! changelog goes through the record cache (`statestore.cache.max.bytes`, on by default).
//!
//! This is application code written against the library's public API only, as a user's would
//! be: `main.rs` runs it from the command line, and the live tests (`tests/live_word_count.rs`,
//! `tests/live_standby.rs`) compile this same file into their binaries with
//! `#[path = ".../examples/word_count/app.rs"]`, so there is one WordCount to maintain.

use std::sync::Arc;

use kafka_streams_group::processing::{
    InputRecord, LongSerde, Processor, Serde, StoreFormat, StreamsApp, StringSerde, TaskContext,
};
use kafka_streams_group::streams::{StreamsTaskId, StreamsTopology, Subtopology, TopicInfo};
use kafka_streams_group::Error;

/// The count store's name (Java's generated name).
pub const STORE: &str = "KSTREAM-AGGREGATE-STATE-STORE-0000000003";

/// Called with each new count (word, count); e.g. to print progress.
pub type CountObserver = Arc<dyn Fn(&str, i64) + Send + Sync>;

/// The repartition topic of application `app`.
pub fn repartition_topic(app: &str) -> String {
    format!("{app}-{STORE}-repartition")
}

/// The changelog topic of the count store of application `app`.
pub fn changelog_topic(app: &str) -> String {
    kafka_streams_group::processing::changelog_topic(app, STORE)
}

/// The topology Kafka Streams sends for WordCountDemo with `application.id` = `app`
/// (`streams-data-path.md` §6.3).
pub fn topology(app: &str, input: &str) -> StreamsTopology {
    StreamsTopology::new()
        .subtopology(
            Subtopology::new("0")
                .source_topic(input)
                .repartition_sink_topic(repartition_topic(app)),
        )
        .subtopology(
            Subtopology::new("1")
                .repartition_source_topic(
                    TopicInfo::new(repartition_topic(app))
                        .config("cleanup.policy", "delete")
                        .config("message.timestamp.type", "CreateTime")
                        .config("retention.ms", "-1")
                        .config("segment.bytes", "52428800"),
                )
                .state_changelog_topic(
                    TopicInfo::new(changelog_topic(app))
                        .config("cleanup.policy", "compact")
                        .config("message.timestamp.type", "CreateTime"),
                ),
        )
}

/// The WordCount application: its topology, store and processors.
pub fn app(
    application_id: &str,
    input: &str,
    output: &str,
    observer: Option<CountObserver>,
) -> StreamsApp {
    let repartition = repartition_topic(application_id);
    let output = output.to_string();
    StreamsApp::new(
        topology(application_id, input),
        move |task: &StreamsTaskId| -> Result<Box<dyn Processor>, Error> {
            match task.subtopology_id.as_str() {
                "0" => Ok(Box::new(Split {
                    repartition: repartition.clone(),
                })),
                "1" => Ok(Box::new(Count {
                    output: output.clone(),
                    observer: observer.clone(),
                })),
                other => Err(Error::InvalidConfiguration {
                    field: "subtopology",
                    reason: format!("WordCount has subtopologies 0 and 1, not {other:?}"),
                }),
            }
        },
    )
    .store("1", STORE, StoreFormat::TimestampedKeyValue)
}

/// `flatMapValues(v -> Arrays.asList(v.toLowerCase(Locale.getDefault()).split("\\W+")))`:
/// Java's split semantics. `\W` is `[^a-zA-Z0-9_]` (ASCII only), a leading empty token is
/// kept, trailing empty tokens are dropped, and an input without any delimiter (`""`
/// included) is returned whole. Lower-casing is Unicode (as Java's in the root/English
/// locale): `"İ"` becomes `"i̇"`, whose `i` is a word character.
pub fn split_words(line: &str) -> Vec<String> {
    let lower = line.to_lowercase();
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    if lower.chars().all(is_word) {
        return vec![lower];
    }
    let mut words: Vec<String> = Vec::new();
    for (i, piece) in lower.split(|c: char| !is_word(c)).enumerate() {
        // Empty pieces between two delimiters belong to one `\W+` run: only the first piece
        // (before a leading delimiter) is a real empty token.
        if i == 0 || !piece.is_empty() {
            words.push(piece.to_string());
        }
    }
    while words.last().is_some_and(String::is_empty) {
        words.pop();
    }
    words
}

struct Split {
    repartition: String,
}

impl Processor for Split {
    fn process(&mut self, ctx: &mut TaskContext<'_>, record: &InputRecord) -> Result<(), Error> {
        // Serdes.String(): never fails (malformed UTF-8 becomes U+FFFD, as in Java).
        let line = record
            .value_with(&StringSerde)?
            .ok_or_else(|| Error::InvalidConfiguration {
                field: "record",
                reason: format!(
                    "null value at {}@{}: WordCount's flatMapValues fails on it as Java's does \
                 (NullPointerException)",
                    record.partition, record.offset
                ),
            })?;
        for word in split_words(&line) {
            let w = word.as_bytes();
            ctx.send(
                &self.repartition,
                Some(w),
                Some(w),
                record.timestamp,
                &record.headers,
            )?;
        }
        Ok(())
    }
}

struct Count {
    output: String,
    observer: Option<CountObserver>,
}

impl Processor for Count {
    fn process(&mut self, ctx: &mut TaskContext<'_>, record: &InputRecord) -> Result<(), Error> {
        // KStreamAggregate skips records with a null key (or value), with a warning.
        let (Some(key), Some(_)) = (record.key.as_deref(), record.value.as_deref()) else {
            log::warn!(
                "skipping a record with a null key or value at {}@{}",
                record.partition,
                record.offset
            );
            return Ok(());
        };
        let store = ctx.store(STORE)?;
        let (old, old_ts) = match store.get_with_timestamp(key) {
            Some((bytes, ts)) => (LongSerde.deserialize(bytes)?, Some(ts)),
            None => (0, None),
        };
        let count = old + 1;
        let ts = old_ts.map_or(record.timestamp, |t| t.max(record.timestamp));
        let value = LongSerde.serialize(&count);
        store.put(key, Some(&value), ts);
        ctx.send(&self.output, Some(key), Some(&value), ts, &record.headers)?;
        if let Some(o) = &self.observer {
            o(&String::from_utf8_lossy(key), count);
        }
        Ok(())
    }
}
