//! Live: WordCount written with the DSL (`examples/word_count_dsl/app.rs`) runs in one
//! application with Java's WordCount (the streams peer, same application id, same group):
//! the topology the Rust member sends is the one Java derives (the group accepts both),
//! Java stops and the Rust instance takes every task over (restoring the counts Java wrote
//! to the changelog), Java returns, and the last count per word is exact (issue 23).

mod common;
mod word_count_support;

#[path = "../examples/word_count_dsl/app.rs"]
mod word_count_dsl;

use std::time::Duration;

use common::{init_logging, unique_name, Cluster, LIVE};
use word_count_support::{
    create_topics, diff, feed, input, java_word_count, wait_for, word_count, Counts, RustInstance,
};

const PARTITIONS: i32 = 4;

fn rust(name: &str, bootstrap: &str, app: &str, in_t: &str, out_t: &str) -> RustInstance {
    let wc =
        word_count_dsl::app(app, in_t, out_t, word_count::split_words, false).expect("DSL app");
    RustInstance::start_app(name, bootstrap, app, wc, 1)
}

/// The DSL WordCount and Java's WordCount count one input exactly between them, with Java
/// leaving and coming back while the input flows.
#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn dsl_word_count_and_java_count_exactly() {
    let _ = LIVE;
    init_logging();
    let cluster = Cluster::get();
    let bootstrap = cluster.plaintext().to_string();
    let app = unique_name("wcdsl");
    let (in_t, out_t) = (format!("{app}-in"), format!("{app}-out"));
    create_topics(&bootstrap, &in_t, &out_t, PARTITIONS);
    // The DSL derives the hand-stated WordCount topology exactly.
    let derived = word_count_dsl::app(&app, &in_t, &out_t, word_count::split_words, false)
        .expect("DSL app")
        .topology()
        .clone();
    assert_eq!(derived, word_count::topology(&app, &in_t));
    let (lines, expected) = input(10_000, 500, 2323);
    let total: u64 = expected.values().sum::<i64>() as u64;
    let mut j = java_word_count(&cluster, &app, &in_t, &out_t);
    j.wait_state(Duration::from_secs(60), |s| s == "RUNNING");
    let r = rust("rust-dsl", &bootstrap, &app, &in_t, &out_t);
    let feeder = feed(&bootstrap, &in_t, lines, 100, Duration::from_millis(120));
    let mut counts = Counts::new(&bootstrap, &out_t, PARTITIONS);
    let progress = |counts: &mut Counts, min: u64| {
        wait_for("more counts", Duration::from_secs(60), || {
            counts.read(Duration::from_millis(300));
            counts.updates >= min.min(total)
        });
    };
    progress(&mut counts, 1_500);
    eprintln!("java stops ({} updates)", counts.updates);
    j.close();
    let before = counts.updates;
    progress(&mut counts, before + 1_500);
    eprintln!("java returns ({} updates)", counts.updates);
    j = java_word_count(&cluster, &app, &in_t, &out_t);
    j.wait_state(Duration::from_secs(60), |s| s == "RUNNING");
    feeder.join().expect("feeder");
    let ok = counts.settle_exact(&expected, Duration::from_secs(3), Duration::from_secs(120));
    let stats = r.close();
    j.close();
    assert!(ok, "{}", diff(&counts.last, &expected));
    assert!(stats.processed > 0, "the DSL instance processed: {stats:?}");
    assert!(
        stats.restored > 0,
        "the DSL instance restored the counts Java had written: {stats:?}"
    );
    eprintln!(
        "DSL + Java: exact ({} distinct words, {total} words, {} updates); {stats:?}",
        expected.len(),
        counts.updates
    );
}
