//! Kafka's WordCountDemo as a Rust instance of a Kafka Streams application: it joins the
//! Streams group `--application-id`, processes the tasks the group gives it (split lines →
//! group by word → count → output topic, exactly Java's topology, so Java WordCount instances
//! can share the work), and prints each new count.
//!
//! ```text
//! cargo run --example word_count -- --bootstrap-server 127.0.0.1:19092 \
//!     --application-id streams-wordcount --input streams-plaintext-input \
//!     --output streams-wordcount-output
//! ```
//!
//! Arguments fall back to the environment (`KSG_BOOTSTRAP`, `KSG_APPLICATION_ID`,
//! `KSG_INPUT`, `KSG_OUTPUT`) and then to WordCountDemo's names. The input and output topics
//! are created if missing (`--partitions`, default 2). Every other line read on stdin is
//! written to the input topic (so `echo "hello kafka" | …` feeds it); `close` on stdin, or
//! stdin closing, commits and leaves the group cleanly. `--quiet` prints only progress lines.
//!
//! The application itself (topology and processors) is in `app.rs`; this file is its command
//! line.

use std::io::BufRead;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kafka_streams_group::admin::{self, NewTopic};
use kafka_streams_group::processing::{ProcessingConfig, ProcessingGuarantee, ProcessingRuntime};
use kafka_streams_group::producer::{Producer, ProducerConfig, ProducerRecord};
use kafka_streams_group::{ClientConfig, Error};

mod app;
#[cfg(test)]
mod tests;

struct Args {
    bootstrap: String,
    application_id: String,
    input: String,
    output: String,
    partitions: i32,
    commit_ms: u64,
    threads: usize,
    cache_max_bytes: Option<u64>,
    exactly_once: bool,
    state_dir: Option<String>,
    quiet: bool,
    stdin_lines: bool,
}

const USAGE: &str = "usage: word_count [--bootstrap-server HOST:PORT] [--application-id ID] \
[--input TOPIC] [--output TOPIC] [--partitions N] [--commit-ms MS] [--threads N] [--cache-max-bytes N] \
[--processing-guarantee at_least_once|exactly_once_v2] [--state-dir DIR] [--quiet] \
[--no-stdin-input]";

fn env_or(key: &str, default: &str) -> String {
    std::env::var(key).unwrap_or_else(|_| default.to_string())
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        bootstrap: env_or("KSG_BOOTSTRAP", "127.0.0.1:19092"),
        application_id: env_or("KSG_APPLICATION_ID", "streams-wordcount"),
        input: env_or("KSG_INPUT", "streams-plaintext-input"),
        output: env_or("KSG_OUTPUT", "streams-wordcount-output"),
        partitions: 2,
        commit_ms: 1000,
        threads: 1,
        cache_max_bytes: None,
        exactly_once: false,
        state_dir: None,
        quiet: false,
        stdin_lines: true,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || {
            it.next()
                .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))
        };
        match flag.as_str() {
            "--bootstrap-server" => args.bootstrap = value()?,
            "--application-id" => args.application_id = value()?,
            "--input" => args.input = value()?,
            "--output" => args.output = value()?,
            "--partitions" => {
                args.partitions = value()?.parse().map_err(|e| format!("--partitions: {e}"))?
            }
            "--commit-ms" => {
                args.commit_ms = value()?.parse().map_err(|e| format!("--commit-ms: {e}"))?
            }
            "--threads" => {
                args.threads = value()?.parse().map_err(|e| format!("--threads: {e}"))?
            }
            "--cache-max-bytes" => {
                let v = value()?.parse();
                args.cache_max_bytes = Some(v.map_err(|e| format!("--cache-max-bytes: {e}"))?)
            }
            "--processing-guarantee" => {
                args.exactly_once = match value()?.as_str() {
                    "at_least_once" => false,
                    "exactly_once_v2" => true,
                    other => return Err(format!("--processing-guarantee {other}\n{USAGE}")),
                }
            }
            "--state-dir" => args.state_dir = Some(value()?),
            "--quiet" => args.quiet = true,
            "--no-stdin-input" => args.stdin_lines = false,
            "-h" | "--help" => return Err(USAGE.to_string()),
            other => return Err(format!("unknown argument {other}\n{USAGE}")),
        }
    }
    Ok(args)
}

fn main() {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn"))
        .format_timestamp_millis()
        .init();
    let args = match parse_args() {
        Ok(a) => a,
        Err(msg) => {
            eprintln!("{msg}");
            std::process::exit(2);
        }
    };
    if let Err(e) = run(args) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run(args: Args) -> Result<(), Error> {
    let client = ClientConfig::new(args.bootstrap.clone());
    admin::create_topics(
        &client,
        &[
            NewTopic::new(args.input.clone(), args.partitions),
            NewTopic::new(args.output.clone(), args.partitions),
        ],
        Duration::from_secs(30),
    )?;
    let mut config = ProcessingConfig::new(args.bootstrap.clone(), args.application_id.clone())
        .commit_interval(Duration::from_millis(args.commit_ms))
        .num_stream_threads(args.threads);
    if args.exactly_once {
        config = config.processing_guarantee(ProcessingGuarantee::ExactlyOnceV2);
    }
    if let Some(dir) = &args.state_dir {
        config = config.state_dir(dir); // state.dir: the process id is kept there
    }
    if let Some(bytes) = args.cache_max_bytes {
        config = config.cache_max_bytes(bytes); // statestore.cache.max.bytes (10 MiB unless set)
    }
    let observer: Option<app::CountObserver> = if args.quiet {
        None
    } else {
        Some(Arc::new(|word: &str, count: i64| {
            println!("count {word:?} {count}")
        }))
    };
    let app = app::app(&args.application_id, &args.input, &args.output, observer);
    let mut runtime = ProcessingRuntime::start(config, app)?;
    println!(
        "joined {} as member {}: counting {} into {}",
        args.application_id,
        runtime.handle().member_id(),
        args.input,
        args.output
    );

    // stdin: "close" (or EOF) stops; other lines go to the input topic.
    let stop = Arc::new(AtomicBool::new(false));
    let (lines_tx, lines_rx) = crossbeam_channel::unbounded::<String>();
    {
        let stop = stop.clone();
        std::thread::spawn(move || {
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { break };
                if line.trim() == "close" {
                    break;
                }
                if lines_tx.send(line).is_err() {
                    break;
                }
            }
            stop.store(true, Ordering::SeqCst);
        });
    }
    let mut feeder = if args.stdin_lines {
        Some(Producer::new(ProducerConfig::new(client))?)
    } else {
        None
    };
    let mut last_progress = Instant::now();
    while !stop.load(Ordering::SeqCst) || !lines_rx.is_empty() {
        if let Some(p) = feeder.as_mut() {
            let mut fed = false;
            while let Ok(line) = lines_rx.try_recv() {
                p.send(ProducerRecord::new(
                    args.input.clone(),
                    None,
                    Some(line.as_bytes()),
                ))?;
                fed = true;
            }
            if fed {
                p.flush(Instant::now() + Duration::from_secs(30))?;
            }
        } else {
            while lines_rx.try_recv().is_ok() {}
        }
        runtime.run_once()?;
        if last_progress.elapsed() >= Duration::from_secs(5) {
            last_progress = Instant::now();
            print_progress(&runtime);
        }
    }
    // Let what was fed last be processed before leaving (a short grace, like a demo needs).
    let grace = Instant::now() + Duration::from_millis(1500);
    while Instant::now() < grace {
        runtime.run_once()?;
    }
    print_progress(&runtime);
    println!("closing: committing and leaving the group");
    runtime.close()?;
    println!("left cleanly");
    Ok(())
}

fn print_progress(runtime: &ProcessingRuntime) {
    let s = runtime.stats();
    println!(
        "progress: {} records processed, {} sent, {} changelog, {} restored, {} commits, \
         {} active / {} standby tasks",
        s.processed,
        s.sent,
        s.changelog_records,
        s.restored,
        s.commits,
        s.active_tasks,
        s.standby_tasks
    );
}
