//! Unit tests of the WordCount application (`app.rs`): Java's split semantics and the topology
//! Kafka Streams sends. `cargo test --example word_count` runs them (and `cargo test`, as the
//! example is declared with `test = true` in Cargo.toml).

use super::app::{split_words, topology};

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

#[test]
fn split_matches_java_probes() {
    // streams-data-path.md §6.1 [probe] (Java 17, ROOT locale).
    assert_eq!(split_words(" hello  world "), s(&["", "hello", "world"]));
    assert_eq!(split_words("a-b_c"), s(&["a", "b_c"]));
    assert_eq!(split_words("ÄÖ über"), s(&["", "ber"]));
    assert_eq!(split_words(""), s(&[""]));
}

#[test]
fn split_edge_cases_follow_string_split() {
    // Only delimiters: every token is empty, trailing empties are dropped -> [].
    assert_eq!(split_words(" "), Vec::<String>::new());
    assert_eq!(split_words("--"), Vec::<String>::new());
    assert_eq!(split_words("Hello"), s(&["hello"]));
    assert_eq!(split_words("a,,b,"), s(&["a", "b"]));
    assert_eq!(split_words(",a"), s(&["", "a"]));
    assert_eq!(
        split_words("Kafka Streams 4"),
        s(&["kafka", "streams", "4"])
    );
    // Kelvin sign lower-cases to ASCII 'k'; emoji are delimiters.
    assert_eq!(split_words("\u{212A}afka🙂x"), s(&["kafka", "x"]));
}

#[test]
fn topology_is_java_wordcount_demo() {
    let t = topology("streams-wordcount", "streams-plaintext-input");
    let one = t.subtopology_by_id("1").unwrap();
    assert_eq!(
        one.state_changelog_topics[0].name,
        "streams-wordcount-KSTREAM-AGGREGATE-STATE-STORE-0000000003-changelog"
    );
    assert_eq!(
        one.repartition_source_topics[0].name,
        "streams-wordcount-KSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition"
    );
    let zero = t.subtopology_by_id("0").unwrap();
    assert_eq!(
        zero.source_topics,
        vec!["streams-plaintext-input".to_string()]
    );
}
