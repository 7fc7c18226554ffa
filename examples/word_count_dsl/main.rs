//! WordCount written with the DSL (`app.rs`), as a member of the Streams group
//! `--application-id`: Java WordCount instances of the same application share its work.
//!
//! ```text
//! cargo run --example word_count_dsl -- --bootstrap-server 127.0.0.1:19092 \
//!     --application-id streams-wordcount --input streams-plaintext-input \
//!     --output streams-wordcount-output
//! ```
//!
//! The input and output topics are created if missing (2 partitions). Each new count is
//! printed (`count "word" n`) unless `--quiet`. Every line read on stdin is written to the
//! input topic (so `echo "hello kafka" | …` feeds it); `close` on stdin, or stdin closing,
//! commits and leaves the group (`left cleanly`).

use std::io::BufRead;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kafka_streams_group::admin::{self, NewTopic};
use kafka_streams_group::processing::{ProcessingConfig, ProcessingRuntime};
use kafka_streams_group::producer::{Producer, ProducerConfig, ProducerRecord};
use kafka_streams_group::{ClientConfig, Error};

mod app;
#[path = "../word_count/app.rs"]
#[allow(dead_code)]
mod word_count;

fn arg(args: &[String], name: &str, default: &str) -> String {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
        .unwrap_or_else(|| default.to_string())
}

fn main() {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let args: Vec<String> = std::env::args().collect();
    if let Err(e) = run(&args) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run(args: &[String]) -> Result<(), Error> {
    let bootstrap = arg(args, "--bootstrap-server", "127.0.0.1:19092");
    let app_id = arg(args, "--application-id", "streams-wordcount");
    let input = arg(args, "--input", "streams-plaintext-input");
    let output = arg(args, "--output", "streams-wordcount-output");
    let client = ClientConfig::new(bootstrap.clone());
    let topics = [NewTopic::new(&input, 2), NewTopic::new(&output, 2)];
    admin::create_topics(&client, &topics, Duration::from_secs(30))?;
    let mut feeder = Producer::new(ProducerConfig::new(client))?;
    let print = !args.iter().any(|a| a == "--quiet");
    let app = app::app(&app_id, &input, &output, word_count::split_words, print)?;
    let mut runtime = ProcessingRuntime::start(ProcessingConfig::new(bootstrap, app_id), app)?;
    println!("joined as {}", runtime.handle().member_id());
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let (lines_tx, lines_rx) = crossbeam_channel::unbounded::<String>();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if line.trim() == "close" || lines_tx.send(line).is_err() {
                break;
            }
        }
        flag.store(true, Ordering::SeqCst);
    });
    while !stop.load(Ordering::SeqCst) || !lines_rx.is_empty() {
        let mut fed = false;
        while let Ok(line) = lines_rx.try_recv() {
            feeder.send(ProducerRecord::new(
                input.clone(),
                None,
                Some(line.as_bytes()),
            ))?;
            fed = true;
        }
        if fed {
            feeder.flush(Instant::now() + Duration::from_secs(30))?;
        }
        runtime.run_once()?;
    }
    // Let what was fed last be processed before leaving.
    let grace = Instant::now() + Duration::from_millis(1500);
    while Instant::now() < grace {
        runtime.run_once()?;
    }
    runtime.close()?;
    println!("left cleanly");
    Ok(())
}
