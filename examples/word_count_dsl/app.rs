//! Kafka's WordCountDemo written with the DSL: the same program as Java's, so it derives
//! Java's topology (`KSTREAM-AGGREGATE-STATE-STORE-0000000003`, its repartition and
//! changelog topics) and a Rust instance and Java instances share one application.
//!
//! ```text
//! builder.stream(input)
//!     .flatMapValues(value -> Arrays.asList(value.toLowerCase().split("\\W+")))
//!     .groupBy((key, word) -> word)
//!     .count()
//!     .toStream()
//!     .to(output, Produced.with(Serdes.String(), Serdes.Long()));
//! ```
//!
//! The input's keys are null (WordCountDemo's producer writes none), so the key type is
//! `Option<String>`; `String` and `i64` have Java's `Serdes.String()` and `Serdes.Long()`
//! bytes as their built-in serdes. The live test `tests/live_word_count_dsl.rs` compiles
//! this file too.

use kafka_streams_group::dsl::{DslTopology, StreamsBuilder};
use kafka_streams_group::processing::StreamsApp;
use kafka_streams_group::topology::HeartbeatTopologyOptions;
use kafka_streams_group::topology::TopologyBuildError;
use kafka_streams_group::Error;

/// Splits a line into words as Java's `toLowerCase().split("\\W+")` does.
pub type Splitter = fn(&str) -> Vec<String>;

/// The WordCount program reading `input`, writing `(word, count)` to `output`. With
/// `print`, a `foreach` also prints each new count (`count "word" n`): one more processor,
/// no topic, so the group's topology stays Java's.
pub fn program(
    input: &str,
    output: &str,
    split: Splitter,
    print: bool,
) -> Result<DslTopology, TopologyBuildError> {
    let builder = StreamsBuilder::new();
    let counts = builder
        .stream::<Option<String>, String>(input)
        .flat_map_values(move |line: &String| split(line))
        .group_by(|_key, word: &String| word.clone())
        .count()
        .to_stream();
    counts.to(output);
    if print {
        counts.foreach(|word: &String, n: &i64| println!("count {word:?} {n}"));
    }
    builder.build()
}

/// The application `application_id` of [`program`], ready for `ProcessingRuntime::start`.
pub fn app(
    application_id: &str,
    input: &str,
    output: &str,
    split: Splitter,
    print: bool,
) -> Result<StreamsApp, Error> {
    let program =
        program(input, output, split, print).map_err(|e| Error::InvalidConfiguration {
            field: "dsl",
            reason: e.to_string(),
        })?;
    StreamsApp::from_dsl(&program, &HeartbeatTopologyOptions::new(application_id))
}
