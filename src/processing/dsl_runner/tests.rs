//! Each operation through the test driver, and a DSL program in the stream thread.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::*;
use crate::dsl::{
    Consumed, Grouped, Materialized, Produced, Serdes, StreamsBuilder, TypedSerde, Uuid,
};
use crate::processing::{DeserializationHandler, DslTestDriver};

fn be(n: i64) -> Vec<u8> {
    n.to_be_bytes().to_vec()
}

/// Key, value, timestamp.
type Kv = (Option<Vec<u8>>, Option<Vec<u8>>, i64);

fn kv(records: Vec<TestRecord>) -> Vec<Kv> {
    records
        .into_iter()
        .map(|r| (r.key, r.value, r.timestamp))
        .collect()
}

fn word_count() -> DslTopology {
    let builder = StreamsBuilder::new();
    builder
        .stream::<Option<String>, String>("lines")
        .flat_map_values(|l: &String| l.split(' ').map(str::to_string).collect::<Vec<_>>())
        .group_by(|_, w: &String| w.clone())
        .count()
        .to_stream()
        .to("counts");
    builder.build().unwrap()
}

/// WordCount: the repartition records, the counts, the store and its changelog carry
/// Java's bytes (key = word, value = Long BE; the store value without the timestamp prefix
/// in the changelog, the aggregate's timestamp = the max seen).
#[test]
fn word_count_writes_javas_bytes() {
    let mut d = DslTestDriver::new(&word_count(), "wc").unwrap();
    d.pipe_input("lines", None, Some(b"a b"), 20).unwrap();
    d.pipe_input("lines", Some(b"k"), Some(b"a"), 10).unwrap();
    let repartition = "wc-KSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition";
    let r = kv(d.read_output(repartition));
    let w = |s: &str| Some(s.as_bytes().to_vec());
    assert_eq!(
        r,
        [
            (w("a"), w("a"), 20),
            (w("b"), w("b"), 20),
            (w("a"), w("a"), 10)
        ]
    );
    let out = kv(d.read_output("counts"));
    assert_eq!(
        out,
        [
            (w("a"), Some(be(1)), 20),
            (w("b"), Some(be(1)), 20),
            (w("a"), Some(be(2)), 20)
        ]
    );
    let store = "KSTREAM-AGGREGATE-STATE-STORE-0000000003";
    assert_eq!(
        d.store_entries(store),
        [(b"a".to_vec(), be(2), 20), (b"b".to_vec(), be(1), 20)]
    );
    let log: Vec<_> = d
        .take_changelog(store)
        .into_iter()
        .map(|c| (c.key, c.value, c.timestamp))
        .collect();
    assert_eq!(
        log,
        [
            (b"a".to_vec(), Some(be(1)), 20),
            (b"b".to_vec(), Some(be(1)), 20),
            (b"a".to_vec(), Some(be(2)), 20)
        ]
    );
    assert_eq!(d.stream_time(), 20);
}

/// Headers piped in reach every topic the record's processing writes (repartition topic
/// and output, the cached count's flush included), and no changelog record.
#[test]
fn piped_headers_pass_through_sinks() {
    let mut d = DslTestDriver::new(&word_count(), "wc").unwrap();
    let h = vec![(b"h".to_vec(), Some(b"1".to_vec())), (b"n".to_vec(), None)];
    d.pipe_input_with_headers("lines", None, Some(b"a"), 5, h.clone())
        .unwrap();
    let repartition = "wc-KSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition";
    assert_eq!(d.read_output(repartition)[0].headers, h);
    assert_eq!(d.read_output("counts")[0].headers, h);
    assert_eq!(d.output_topics(), ["counts", repartition]);
    assert_eq!(
        d.store_names(),
        ["KSTREAM-AGGREGATE-STATE-STORE-0000000003"]
    );
}

/// The stateless operations, in one chain, with Java's results.
#[test]
fn stateless_operations() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (s1, s2) = (seen.clone(), seen.clone());
    let builder = StreamsBuilder::new();
    let s = builder.stream_with::<String, i64>(&["in"], Consumed::default());
    s.filter(|_, v| *v > 0)
        .filter_not(|k, _| k == "skip")
        .peek(move |k, _| s1.lock().unwrap().push(format!("peek {k}")))
        .map_values(|v| *v * 10)
        .map(|k, v| (v.to_string(), k.clone()))
        .flat_map(|k, v| vec![(k.clone(), v.clone()), (format!("{k}!"), v.clone())])
        .select_key(|k, _| format!("<{k}>"))
        .flat_map_values(|v| vec![v.len() as i32])
        .to("out");
    s.foreach(move |k, v| s2.lock().unwrap().push(format!("each {k}={v}")));
    s.to_extractor("x", |k, _| format!("t-{k}"), Produced::default());
    let mut d = DslTestDriver::new(&builder.build().unwrap(), "app").unwrap();
    for (k, v, ts) in [("ab", 3i64, 1), ("skip", 4, 2), ("c", -1, 3)] {
        d.pipe("in", &k.to_string(), &v, ts).unwrap();
    }
    let out = d.read_typed::<String, i32>("out").unwrap();
    assert_eq!(out, [("<30>".into(), 2, 1), ("<30!>".into(), 2, 1)]);
    assert_eq!(
        *seen.lock().unwrap(),
        ["peek ab", "each ab=3", "each skip=4", "each c=-1"]
    );
    assert_eq!(
        d.read_typed::<String, i64>("t-c").unwrap(),
        [("c".into(), -1, 3)]
    );
    assert_eq!(d.read_output("t-ab").len(), 1);
}

/// `reduce` and `aggregate` with given serdes (Integer, Double, a user serde), through a
/// named repartition (`<name>-repartition`).
#[test]
fn reduce_and_aggregate_with_serdes() {
    let csv: TypedSerde<Vec<i32>> = TypedSerde::new(
        "csv",
        |v: &Vec<i32>| {
            let t: Vec<String> = v.iter().map(i32::to_string).collect();
            t.join(",").into_bytes()
        },
        |b| {
            String::from_utf8_lossy(b)
                .split(',')
                .filter(|s| !s.is_empty())
                .map(|s| {
                    s.parse()
                        .map_err(|_| crate::common::SerdeError::new("csv", s))
                })
                .collect()
        },
    );
    let builder = StreamsBuilder::new();
    let s = builder.stream_with::<i32, f64>(
        &["in"],
        Consumed::serdes(Serdes::integer(), Serdes::double()),
    );
    let g = s
        .select_key(|k, _| k % 2)
        .group_by_key_with(Grouped::named("parity"));
    g.reduce_with(Some("sum"), Materialized::named("sums"), |a, b| a + b)
        .to_stream()
        .to_with(
            "sums",
            Produced::serdes(Serdes::integer(), Serdes::double()),
        );
    g.aggregate_with(
        None,
        Materialized::named("lists").with_value_serde(csv.clone()),
        Vec::new,
        |_, v: &f64, agg: &Vec<i32>| {
            let mut a = agg.clone();
            a.push(*v as i32);
            a
        },
    )
    .to_stream()
    .to_with("lists", Produced::default().with_value_serde(csv));
    let p = builder.build().unwrap();
    let mut d = DslTestDriver::new(&p, "app").unwrap();
    for (k, v, ts) in [(1, 1.5, 5), (3, 2.0, 4), (2, 7.0, 6)] {
        d.pipe("in", &k, &v, ts).unwrap();
    }
    assert_eq!(d.read_output("app-parity-repartition").len(), 3);
    let sums = d.read_typed::<i32, f64>("sums").unwrap();
    assert_eq!(sums, [(1, 1.5, 5), (1, 3.5, 5), (0, 7.0, 6)]);
    let lists: Vec<_> = kv(d.read_output("lists"))
        .into_iter()
        .map(|(_, v, _)| String::from_utf8(v.unwrap()).unwrap())
        .collect();
    assert_eq!(lists, ["1", "1,2", "7"]);
    let sums_store = d.store_entries("sums");
    assert_eq!(
        sums_store[1],
        (be(1)[4..].to_vec(), 3.5f64.to_be_bytes().to_vec(), 5)
    );
}

/// `table` materialized: puts and deletes by tombstone, forwards each update; `toStream`.
#[test]
fn table_source_and_to_stream() {
    let builder = StreamsBuilder::new();
    builder
        .table_with::<String, Option<String>>(
            "users",
            Consumed::default(),
            Materialized::named("users-store"),
        )
        .to_stream()
        .to("changes");
    let mut d = DslTestDriver::new(&builder.build().unwrap(), "app").unwrap();
    d.pipe_input("users", Some(b"u1"), Some(b"ann"), 1).unwrap();
    d.pipe_input("users", Some(b"u2"), Some(b"bob"), 2).unwrap();
    d.pipe_input("users", Some(b"u1"), None, 3).unwrap();
    d.pipe_input("users", None, Some(b"nokey"), 4).unwrap();
    let out = kv(d.read_output("changes"));
    assert_eq!(out.len(), 3, "{out:?}");
    assert_eq!(out[2], (Some(b"u1".to_vec()), None, 3));
    assert_eq!(
        d.store_entries("users-store"),
        [(b"u2".to_vec(), b"bob".to_vec(), 2)]
    );
    let log = d.take_changelog("users-store");
    assert_eq!(log.len(), 3);
    assert_eq!(log[2].value, None, "a tombstone");
}

/// As Java's `TopologyTestDriver` (record cache on by default, flushed after each record):
/// a cached store forwards and logs one update per key per record, the last; a cached table drops a delete of a key it did not hold; a store
/// with caching disabled shows every update at once.
#[test]
fn cached_stores_flush_after_each_record() {
    let builder = StreamsBuilder::new();
    let words = |l: &String| l.split(' ').map(str::to_string).collect::<Vec<_>>();
    builder
        .stream::<String, String>("lines")
        .flat_map_values(words)
        .group_by_key()
        .count_with(None, Materialized::named("cached"))
        .to_stream()
        .to("counts");
    builder
        .stream::<String, String>("raw")
        .flat_map_values(words)
        .group_by_key()
        .count_with(None, Materialized::named("plain").with_caching_disabled())
        .to_stream()
        .to("all");
    builder
        .table_with::<String, Option<String>>("t", Consumed::default(), Materialized::named("ts"))
        .to_stream()
        .to("table");
    let mut d = DslTestDriver::new(&builder.build().unwrap(), "app").unwrap();
    d.pipe_input("lines", Some(b"k"), Some(b"a b c"), 10)
        .unwrap();
    d.pipe_input("lines", Some(b"j"), Some(b"x"), 11).unwrap();
    assert_eq!(
        kv(d.read_output("counts")),
        [
            (Some(b"k".to_vec()), Some(be(3)), 10),
            (Some(b"j".to_vec()), Some(be(1)), 11)
        ]
    );
    let log: Vec<_> = d
        .take_changelog("cached")
        .into_iter()
        .map(|c| c.value)
        .collect();
    assert_eq!(log, [Some(be(3)), Some(be(1))]);
    d.pipe_input("raw", Some(b"k"), Some(b"a b"), 12).unwrap();
    let all: Vec<_> = kv(d.read_output("all")).into_iter().map(|r| r.1).collect();
    assert_eq!(all, [Some(be(1)), Some(be(2))]);
    assert_eq!(d.take_changelog("plain").len(), 2);
    d.pipe_input("t", Some(b"x"), None, 5).unwrap();
    d.pipe_input("t", Some(b"x"), Some(b"1"), 6).unwrap();
    d.pipe_input("t", Some(b"x"), None, 7).unwrap();
    let w = |s: &str| Some(s.as_bytes().to_vec());
    assert_eq!(
        kv(d.read_output("table")),
        [(w("x"), w("1"), 6), (w("x"), None, 7)]
    );
    let log: Vec<_> = d
        .take_changelog("ts")
        .into_iter()
        .map(|c| c.value)
        .collect();
    assert_eq!(log, [w("1"), None]);
}

/// Records waiting in two repartition topics are taken as Java's `PartitionGroup` takes
/// them (equal timestamps: the topics alternate), not in the order they were written.
#[test]
fn repartition_topics_are_read_in_javas_order() {
    let builder = StreamsBuilder::new();
    let s = builder.stream::<String, String>("in");
    for upper in [false, true] {
        s.flat_map(move |_, v: &String| {
            v.split(' ')
                .map(|w| match upper {
                    true => (w.to_uppercase(), v.clone()),
                    false => (w.to_string(), v.clone()),
                })
                .collect::<Vec<_>>()
        })
        .group_by_key()
        .count()
        .to_stream()
        .to("out");
    }
    let mut d = DslTestDriver::new(&builder.build().unwrap(), "app").unwrap();
    d.pipe("in", &"k".to_string(), &"a b".to_string(), 7)
        .unwrap();
    let keys: Vec<String> = d
        .read_typed::<String, i64>("out")
        .unwrap()
        .into_iter()
        .map(|(k, _, _)| k)
        .collect();
    assert_eq!(keys, ["a", "A", "b", "B"]);
}

/// A null key reaching a function of a type that cannot hold null is an error naming the
/// node and the type; an aggregation skips null keys as Java does.
#[test]
fn nulls() {
    let builder = StreamsBuilder::new();
    builder
        .stream::<String, String>("in")
        .select_key(|k, _| k.clone())
        .to("out");
    let mut d = DslTestDriver::new(&builder.build().unwrap(), "app").unwrap();
    let e = d
        .pipe_input("in", None, Some(b"v"), 1)
        .unwrap_err()
        .to_string();
    assert!(e.contains("KSTREAM-KEY-SELECT-0000000001"), "{e}");
    assert!(e.contains("cannot hold null"), "{e}");

    let builder = StreamsBuilder::new();
    builder
        .stream::<Option<String>, String>("in")
        .group_by_key()
        .count()
        .to_stream()
        .to("out");
    let mut d = DslTestDriver::new(&builder.build().unwrap(), "app").unwrap();
    d.pipe_input("in", None, Some(b"v"), 1).unwrap();
    d.pipe_input("in", Some(b"k"), Some(b"v"), 2).unwrap();
    assert_eq!(
        kv(d.read_output("out")),
        [(Some(b"k".to_vec()), Some(be(1)), 2)]
    );
    // A key-changing operation giving null keys: the repartition step's filter drops them
    // before the repartition topic.
    let builder = StreamsBuilder::new();
    builder
        .stream::<String, String>("in")
        .select_key(|k: &String, _| (k != "none").then(|| k.clone()))
        .group_by_key_with(Grouped::named("g"))
        .count()
        .to_stream()
        .to("out");
    let mut d = DslTestDriver::new(&builder.build().unwrap(), "app").unwrap();
    d.pipe_input("in", Some(b"none"), Some(b"v"), 1).unwrap();
    d.pipe_input("in", Some(b"k"), Some(b"v"), 2).unwrap();
    let repartitioned = kv(d.read_output("app-g-repartition"));
    assert_eq!(
        repartitioned,
        [(Some(b"k".to_vec()), Some(b"v".to_vec()), 2)]
    );
}

/// A record the source's serde cannot read: log-and-fail names topic, partition and
/// offset; log-and-continue skips it.
#[test]
fn bad_records_follow_the_deserialization_handler() {
    let builder = StreamsBuilder::new();
    builder.stream::<String, i64>("in").to("out");
    let p = builder.build().unwrap();
    let mut d = DslTestDriver::new(&p, "app").unwrap();
    d.pipe_input("in", Some(b"k"), Some(&be(1)), 1).unwrap();
    let e = d
        .pipe_input("in", Some(b"k"), Some(&[0; 7]), 2)
        .unwrap_err();
    match e {
        Error::Deserialization {
            topic,
            partition,
            offset,
            part,
            message,
        } => {
            assert_eq!(
                (topic.as_str(), partition, offset, part),
                ("in", 0, 1, "value")
            );
            assert!(message.contains("not 8"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    let mut d = DslTestDriver::new(&p, "app")
        .unwrap()
        .deserialization_handler(DeserializationHandler::LogAndContinue);
    d.pipe_input("in", Some(b"k"), Some(&[0; 7]), 2).unwrap();
    d.pipe_input("in", Some(b"k"), Some(&be(5)), 3).unwrap();
    assert_eq!(d.read_output("out").len(), 1);
}

/// What cannot run is refused before anything runs, naming the node.
#[test]
fn unknown_operations_missing_serdes_and_unlogged_stores_are_refused() {
    let builder = StreamsBuilder::new();
    builder
        .stream::<String, String>("in")
        .filter(|_, _| true)
        .to("out");
    let mut p = builder.build().unwrap();
    p.forget_exec("KSTREAM-FILTER-0000000001");
    let e = DslTestDriver::new(&p, "app").unwrap_err().to_string();
    assert!(e.contains("KSTREAM-FILTER-0000000001"), "{e}");
    assert!(e.contains("does not execute yet"), "{e}");

    let builder = StreamsBuilder::new();
    builder
        .stream::<String, String>("in")
        .map_values(|v| (v.clone(), 1u8))
        .to("out");
    let e = DslTestDriver::new(&builder.build().unwrap(), "app")
        .unwrap_err()
        .to_string();
    assert!(e.contains("KSTREAM-SINK-0000000002"), "{e}");
    assert!(
        e.contains("no value serde for type (alloc::string::String, u8)"),
        "{e}"
    );

    // A serde of another type than the stream's is refused at build, not met per record.
    let builder = StreamsBuilder::new();
    builder
        .stream_with::<String, String>(&["in"], Consumed::serdes(Serdes::long(), Serdes::string()))
        .to("out");
    let e = DslTestDriver::new(&builder.build().unwrap(), "app")
        .unwrap_err()
        .to_string();
    assert!(e.contains("KSTREAM-SOURCE-0000000000"), "{e}");
    assert!(e.contains("the key serde Long serves i64"), "{e}");
}

/// UUID keys and `Void` values round-trip with Java's bytes.
#[test]
fn uuid_and_void() {
    let builder = StreamsBuilder::new();
    builder.stream::<Uuid, ()>("in").to("out");
    let mut d = DslTestDriver::new(&builder.build().unwrap(), "app").unwrap();
    let u = b"123e4567-e89b-12d3-a456-426614174000";
    d.pipe_input("in", Some(u), None, 1).unwrap();
    assert_eq!(kv(d.read_output("out")), [(Some(u.to_vec()), None, 1)]);
    assert!(d.pipe_input("in", Some(u), Some(b"x"), 1).is_err());
    d.advance_wall_clock_time(Duration::from_secs(2));
    assert_eq!(d.wall_clock_time(), 2000);
}

/// The application of a DSL program sends the derived topology, declares its stores, and
/// runs in the stream thread: records in, counts out, the store change-logged.
#[test]
fn a_dsl_program_runs_in_the_stream_thread() {
    use super::super::testkit::{changelog, input, Harness, Shared, APP, INPUT, OUTPUT, STORE};
    use crate::streams::StreamsTaskRole;
    let builder = StreamsBuilder::new();
    builder
        .stream::<String, String>(INPUT)
        .group_by_key()
        .count_with(None, Materialized::named(STORE))
        .to_stream()
        .to(OUTPUT);
    let p = builder.build().unwrap();
    let options = HeartbeatTopologyOptions::new(APP);
    let app = StreamsApp::from_dsl(&p, &options).unwrap();
    assert_eq!(app.topology, p.streams_topology(&options).unwrap());
    assert_eq!(
        app.stores["0"],
        [(STORE.to_string(), StoreFormat::TimestampedKeyValue)]
    );
    app.validate(APP).unwrap();
    let shared = Shared::default();
    shared.lock().now = Some(std::time::Instant::now());
    let mut h = Harness::with_factory(shared, app.factory, Duration::from_secs(3600));
    for (i, w) in ["a", "b", "a"].iter().enumerate() {
        h.shared.append(&input(0), w, Some(b"x"), 10 + i as i64);
    }
    h.assign(&[(0, StreamsTaskRole::Active)]);
    h.step();
    h.assign(&[]);
    h.step();
    let out = h.shared.log(&crate::TopicPartition::new(OUTPUT, 0));
    let values: Vec<_> = out.iter().map(|(_, v, _)| v.clone().unwrap()).collect();
    assert_eq!(values, [be(1), be(1), be(2)]);
    let log = h.shared.log(&changelog(0));
    assert!(!log.is_empty());
    assert_eq!(log.last().unwrap().1, Some(be(2)));
}

/// Operations that are derived but not executed yet are refused by name before anything
/// runs; a program built with `topology.optimization=all` runs in the test driver but is
/// refused by the runtime (it cannot restore a table from its source topic yet).
#[test]
fn derived_only_operations_and_optimized_programs_are_refused() {
    let builder = StreamsBuilder::new();
    builder
        .stream::<String, String>("t")
        .process::<String, String>((), &[])
        .to("out");
    let e = DslTestDriver::new(&builder.build().unwrap(), "app")
        .unwrap_err()
        .to_string();
    assert!(e.contains("KSTREAM-PROCESSOR-"), "{e}");
    assert!(e.contains("does not execute yet"), "{e}");

    let builder = StreamsBuilder::with_optimization(crate::dsl::Optimization::All);
    builder
        .stream::<String, String>("in")
        .filter(|_, _| true)
        .to("out");
    let p = builder.build().unwrap();
    let mut d = DslTestDriver::new(&p, "app").unwrap();
    d.pipe_input("in", Some(b"k"), Some(b"v"), 1).unwrap();
    assert_eq!(d.read_output("out").len(), 1);
    let e = StreamsApp::from_dsl(&p, &HeartbeatTopologyOptions::new("app"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("topology.optimization=all"), "{e}");
    assert!(e.contains("not yet in the runtime"), "{e}");
}

/// A store with its changelog disabled runs in the test driver: it counts as a logged one
/// does, and writes no changelog records (the logged store beside it does).
#[test]
fn a_store_without_changelog_logs_nothing_in_the_driver() {
    let builder = StreamsBuilder::new();
    let g = builder.stream::<String, String>("in").group_by_key();
    g.count_with(None, Materialized::named("quiet").with_logging_disabled())
        .to_stream()
        .to("out");
    g.count_with(None, Materialized::named("loud"));
    let mut d = DslTestDriver::new(&builder.build().unwrap(), "app").unwrap();
    for (i, k) in ["a", "b", "a"].iter().enumerate() {
        d.pipe_input("in", Some(k.as_bytes()), Some(b"x"), 10 + i as i64)
            .unwrap();
    }
    let out: Vec<_> = d.read_output("out").into_iter().map(|r| r.value).collect();
    assert_eq!(out, [Some(be(1)), Some(be(1)), Some(be(2))]);
    assert_eq!(
        d.store_entries("quiet"),
        [(b"a".to_vec(), be(2), 12), (b"b".to_vec(), be(1), 11)]
    );
    assert!(d.take_changelog("quiet").is_empty());
    assert_eq!(d.take_changelog("loud").len(), 3);
}

/// In the runtime a store with its changelog disabled has no changelog topic in the
/// topology, is not restored (it starts empty though its would-be changelog holds a
/// record) and writes nothing to a changelog.
#[test]
fn a_store_without_changelog_is_neither_restored_nor_logged_in_the_runtime() {
    use super::super::testkit::{changelog, input, Harness, Shared, APP, INPUT, OUTPUT, STORE};
    use crate::streams::StreamsTaskRole;
    let builder = StreamsBuilder::new();
    builder
        .stream::<String, String>(INPUT)
        .group_by_key()
        .count_with(None, Materialized::named(STORE).with_logging_disabled())
        .to_stream()
        .to(OUTPUT);
    let p = builder.build().unwrap();
    let options = HeartbeatTopologyOptions::new(APP);
    let app = StreamsApp::from_dsl(&p, &options).unwrap();
    let sub = app.topology.subtopology_by_id("0").unwrap();
    assert!(sub.state_changelog_topics.is_empty(), "{sub:?}");
    assert!(app.unlogged.contains(STORE));
    app.validate(APP).unwrap();
    let shared = Shared::default();
    shared.lock().now = Some(std::time::Instant::now());
    // A record where the changelog would be: a restore would start "a" at 5.
    shared.append(&changelog(0), "a", Some(&be(5)), 1);
    let mut h = Harness::with_factory(shared, app.factory, Duration::from_secs(3600));
    h.thread
        .state
        .set_without_changelog(app.unlogged.iter().cloned().collect());
    for (i, w) in ["a", "b", "a"].iter().enumerate() {
        h.shared.append(&input(0), w, Some(b"x"), 10 + i as i64);
    }
    h.assign(&[(0, StreamsTaskRole::Active)]);
    h.step();
    h.assign(&[]);
    h.step();
    // Back after its revocation, the task starts the store empty, as Java's closed
    // in-memory store without logging (the logged stores kept meanwhile are reused).
    h.shared.append(&input(0), "a", Some(b"x"), 20);
    h.assign(&[(0, StreamsTaskRole::Active)]);
    h.step();
    h.assign(&[]);
    h.step();
    let out = h.shared.log(&crate::TopicPartition::new(OUTPUT, 0));
    let values: Vec<_> = out.iter().map(|(_, v, _)| v.clone().unwrap()).collect();
    assert_eq!(values, [be(1), be(1), be(2), be(1)]);
    let log = h.shared.log(&changelog(0));
    assert_eq!(
        log.len(),
        1,
        "only the record put there by the test: {log:?}"
    );
}
