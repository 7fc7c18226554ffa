//! The Rust side of issue 25's like-for-like benchmarks (`scripts/bench-issue25.sh`), on the
//! WordCount application of `examples/word_count/app.rs` (the same file, compiled in here):
//!
//! ```text
//! bench_streams run --bootstrap-server H:P --application-id A --input T --output T [--commit-ms MS]
//!     a WordCount instance that prints `bench <event> <epoch ms>` lines: `start` (main entered),
//!     `state <State>` for each runtime state change, `first-record` (its first count update),
//!     and at the end `bench stats processed=… changelog=… restored=…`; stops on `close` or
//!     EOF on stdin.
//! bench_streams fill-changelog --bootstrap-server H:P --topic T --partitions P --records N --keys K
//!     writes N changelog records of a count store: key `w<k>` (k = i mod K, always on
//!     partition k mod P), value the key's running count as a big-endian Long.
//! bench_streams restore --bootstrap-server H:P --topic T --partitions P
//!     restores every partition of T into an in-memory timestamped store with
//!     processing::ChangelogReader (one after the other, as a member restores its tasks) and
//!     prints `restore records=N ms=T rate=R keys=K`.
//! bench_streams watch-final --bootstrap-server H:P --topic T --partitions P --words N [--timeout S]
//!     reads a WordCount output topic until the last count of every word adds up to N (so it
//!     also ends when a record cache dropped intermediate updates) and prints the records read.
//! ```

use std::collections::HashMap;
use std::io::BufRead;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use kafka_streams_group::consumer::{Fetcher, FetcherConfig, OffsetReset};
use kafka_streams_group::processing::{
    ChangelogReader, KeyValueStore, LongSerde, ProcessingConfig, ProcessingRuntime, Serde,
    StoreFormat,
};
use kafka_streams_group::producer::{Producer, ProducerConfig, ProducerRecord};
use kafka_streams_group::streams::commit::TopicPartition;
use kafka_streams_group::{ClientConfig, Error};

#[allow(dead_code)] // the app module also serves main.rs and the tests
#[path = "word_count/app.rs"]
mod app;

const USAGE: &str = "usage: bench_streams run|fill-changelog|restore|watch-final \
--bootstrap-server H:P [--application-id A] [--input T] [--output T] [--commit-ms MS] \
[--topic T] [--partitions P] [--records N] [--keys K] [--words N] [--timeout S]";

/// Every option of every subcommand (each uses the ones it needs).
struct Args {
    bootstrap: String,
    application_id: String,
    input: String,
    output: String,
    commit_ms: u64,
    topic: String,
    partitions: i32,
    records: u64,
    keys: u64,
    words: i64,
    timeout: u64,
}

fn parse(mut it: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut a = Args {
        bootstrap: "127.0.0.1:19092".into(),
        application_id: "bench-streams".into(),
        input: "bench-in".into(),
        output: "bench-out".into(),
        commit_ms: 1000,
        topic: String::new(),
        partitions: 4,
        records: 5_000_000,
        keys: 100_000,
        words: 0,
        timeout: 900,
    };
    while let Some(flag) = it.next() {
        let v = it
            .next()
            .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
        let num = |v: &str| v.parse::<u64>().map_err(|e| format!("{flag}: {e}"));
        match flag.as_str() {
            "--bootstrap-server" => a.bootstrap = v,
            "--application-id" => a.application_id = v,
            "--input" => a.input = v,
            "--output" => a.output = v,
            "--commit-ms" => a.commit_ms = num(&v)?,
            "--topic" => a.topic = v,
            "--partitions" => a.partitions = num(&v)? as i32,
            "--records" => a.records = num(&v)?,
            "--keys" => a.keys = num(&v)?.max(1),
            "--words" => a.words = num(&v)? as i64,
            "--timeout" => a.timeout = num(&v)?,
            other => return Err(format!("unknown argument {other}\n{USAGE}")),
        }
    }
    Ok(a)
}

fn epoch_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0)
}

/// Warnings and errors, plus the changelog reader's restore lines (debug: `restoring …`, info:
/// `restored …`), each stamped with epoch milliseconds so a script can time the restore.
struct EpochLogger;

static LOGGER: EpochLogger = EpochLogger;

impl log::Log for EpochLogger {
    fn enabled(&self, m: &log::Metadata<'_>) -> bool {
        m.level() <= log::Level::Warn
            || m.target()
                .starts_with("kafka_streams_group::processing::changelog")
            // The restore loop moved to state::restore; without it item 2 read no restore lines.
            || m.target().starts_with("kafka_streams_group::state::restore")
    }

    fn log(&self, r: &log::Record<'_>) {
        if self.enabled(r.metadata()) {
            eprintln!("[{} {} {}] {}", epoch_ms(), r.level(), r.target(), r.args());
        }
    }

    fn flush(&self) {}
}

fn event(what: &str) {
    println!("bench {what} {}", epoch_ms());
}

fn main() {
    let started = epoch_ms();
    log::set_logger(&LOGGER).ok();
    log::set_max_level(log::LevelFilter::Debug);
    let mut argv = std::env::args().skip(1);
    let cmd = argv.next().unwrap_or_default();
    let args = match parse(argv) {
        Ok(a) => a,
        Err(msg) => {
            eprintln!("{msg}");
            std::process::exit(2);
        }
    };
    let result = match cmd.as_str() {
        "run" => {
            println!("bench start {started}");
            run(&args)
        }
        "fill-changelog" => fill_changelog(&args),
        "restore" => restore(&args),
        "watch-final" => watch_final(&args),
        _ => {
            eprintln!("{USAGE}");
            std::process::exit(2);
        }
    };
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// A WordCount instance with events; stops on `close` or EOF on stdin.
fn run(a: &Args) -> Result<(), Error> {
    static FIRST: AtomicBool = AtomicBool::new(false);
    let observer: app::CountObserver = Arc::new(|_: &str, _: i64| {
        if !FIRST.load(Ordering::Relaxed) && !FIRST.swap(true, Ordering::SeqCst) {
            event("first-record");
        }
    });
    let config = ProcessingConfig::new(a.bootstrap.clone(), a.application_id.clone())
        .commit_interval(Duration::from_millis(a.commit_ms));
    let wc = app::app(&a.application_id, &a.input, &a.output, Some(observer))
        .state_listener(|new, _old| event(&format!("state {new:?}")));
    let mut runtime = ProcessingRuntime::start(config, wc)?;
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        std::thread::spawn(move || {
            for line in std::io::stdin().lock().lines() {
                match line {
                    Ok(l) if l.trim() != "close" => continue,
                    _ => break,
                }
            }
            stop.store(true, Ordering::SeqCst);
        });
    }
    runtime.run_until(&stop)?;
    let s = runtime.stats();
    runtime.close()?;
    println!(
        "bench stats processed={} sent={} changelog={} restored={} commits={}",
        s.processed, s.sent, s.changelog_records, s.restored, s.commits
    );
    Ok(())
}

/// N records of a count store's changelog, K keys, each key on one partition.
fn fill_changelog(a: &Args) -> Result<(), Error> {
    let client = ClientConfig::new(a.bootstrap.clone());
    let mut producer =
        Producer::new(ProducerConfig::new(client).linger(Duration::from_millis(20)))?;
    let t0 = Instant::now();
    let now = epoch_ms() as i64;
    for i in 0..a.records {
        let k = i % a.keys;
        let count = (i / a.keys + 1) as i64;
        let key = format!("w{k}");
        let value = LongSerde.serialize(&count);
        let partition = (k % a.partitions.max(1) as u64) as i32;
        producer.send(
            ProducerRecord::new(a.topic.clone(), Some(key.as_bytes()), Some(&value))
                .partition(partition)
                .timestamp(now),
        )?;
    }
    producer.flush(Instant::now() + Duration::from_secs(300))?;
    println!(
        "filled {} records ({} keys) into {} in {} ms",
        a.records,
        a.keys,
        a.topic,
        t0.elapsed().as_millis()
    );
    Ok(())
}

/// Restores every partition of the changelog into an in-memory store, one after the other.
fn restore(a: &Args) -> Result<(), Error> {
    let client = ClientConfig::new(a.bootstrap.clone());
    let mut reader = ChangelogReader::connect(client, Duration::from_secs(30))?;
    let deadline = Instant::now() + Duration::from_secs(a.timeout);
    let t0 = Instant::now();
    event("restore-begin");
    let (mut records, mut keys) = (0u64, 0usize);
    for p in 0..a.partitions {
        let tp = TopicPartition::new(a.topic.clone(), p);
        let mut store = KeyValueStore::new(app::STORE, StoreFormat::TimestampedKeyValue);
        let summary = reader.restore(&tp, &mut store, deadline)?;
        records += summary.records;
        keys += store.len();
    }
    event("restore-done");
    let ms = t0.elapsed().as_secs_f64() * 1000.0;
    println!(
        "restore records={records} ms={ms:.0} rate={:.0} keys={keys}",
        records as f64 / (ms / 1000.0).max(1e-3)
    );
    Ok(())
}

/// Reads a WordCount output until the last counts add up to `--words`.
fn watch_final(a: &Args) -> Result<(), Error> {
    let start = Instant::now();
    let config = FetcherConfig::new(ClientConfig::new(a.bootstrap.clone()))
        .auto_offset_reset(OffsetReset::Earliest)
        .fetch_max_wait(Duration::from_millis(100));
    let mut fetcher = Fetcher::connect(config, Duration::from_secs(30))?;
    fetcher.assign((0..a.partitions).map(|p| TopicPartition::new(a.topic.clone(), p)));
    let mut last: HashMap<Vec<u8>, i64> = HashMap::new();
    let (mut sum, mut seen, mut first) = (0i64, 0u64, None);
    while sum < a.words {
        if start.elapsed() > Duration::from_secs(a.timeout) {
            println!("timeout: counts add up to {sum} of {} words", a.words);
            std::process::exit(1);
        }
        for part in fetcher.poll(Instant::now() + Duration::from_millis(500))? {
            part.for_each_record(|r| {
                let (Some(k), Some(v)) = (r.key, r.value) else {
                    return;
                };
                let count = LongSerde.deserialize(v).unwrap_or(0);
                let old = last.insert(k.to_vec(), count).unwrap_or(0);
                sum += count - old;
                seen += 1;
            })
            .map_err(|e| Error::Protocol {
                broker: None,
                message: e.to_string(),
            })?;
            if seen > 0 && first.is_none() {
                first = Some(start.elapsed());
            }
        }
    }
    let last_at = start.elapsed();
    let first = first.unwrap_or(last_at);
    println!(
        "first={:.3} last={:.3} records={seen} keys={} rate={:.0}",
        first.as_secs_f64(),
        last_at.as_secs_f64(),
        last.len(),
        seen as f64 / (last_at - first).as_secs_f64().max(1e-3)
    );
    Ok(())
}
