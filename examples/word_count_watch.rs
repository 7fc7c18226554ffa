//! Watches a WordCount output topic for the bench (`scripts/bench-wordcount.sh`): reads it
//! from the beginning until `--records N` updates arrived, then prints when the first and
//! the last arrived (seconds since the watcher started) and the rate in between.
//! `--read-committed` reads as `read_committed` readers do (exactly-once runs: aborted
//! records and open transactions are not counted).
//!
//! ```text
//! cargo run --release --example word_count_watch -- --bootstrap-server 127.0.0.1:19092 \
//!     --topic streams-wordcount-output --partitions 4 --records 800000 --timeout 600
//! ```

use std::time::{Duration, Instant};

use kafka_streams_group::consumer::{Fetcher, FetcherConfig, IsolationLevel, OffsetReset};
use kafka_streams_group::streams::commit::TopicPartition;
use kafka_streams_group::{ClientConfig, Error};

fn main() {
    let mut bootstrap = "127.0.0.1:19092".to_string();
    let mut topic = "streams-wordcount-output".to_string();
    let mut partitions = 4;
    let mut records: u64 = 0;
    let mut timeout = 600u64;
    let mut isolation = IsolationLevel::ReadUncommitted;
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--read-committed" {
            isolation = IsolationLevel::ReadCommitted;
            continue;
        }
        let v = it.next().unwrap_or_default();
        match flag.as_str() {
            "--bootstrap-server" => bootstrap = v,
            "--topic" => topic = v,
            "--partitions" => partitions = v.parse().unwrap_or(4),
            "--records" => records = v.parse().unwrap_or(0),
            "--timeout" => timeout = v.parse().unwrap_or(600),
            _ => {
                eprintln!("usage: word_count_watch --bootstrap-server H:P --topic T --partitions N --records N [--timeout S] [--read-committed]");
                std::process::exit(2);
            }
        }
    }
    if let Err(e) = watch(
        &bootstrap,
        &topic,
        partitions,
        records,
        Duration::from_secs(timeout),
        isolation,
    ) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn watch(
    bootstrap: &str,
    topic: &str,
    partitions: i32,
    want: u64,
    timeout: Duration,
    isolation: IsolationLevel,
) -> Result<(), Error> {
    let start = Instant::now();
    let config = FetcherConfig::new(ClientConfig::new(bootstrap))
        .auto_offset_reset(OffsetReset::Earliest)
        .isolation_level(isolation)
        .fetch_max_wait(Duration::from_millis(100));
    let mut fetcher = Fetcher::connect(config, Duration::from_secs(30))?;
    fetcher.assign((0..partitions).map(|p| TopicPartition::new(topic, p)));
    let mut seen = 0u64;
    let mut first = None;
    while seen < want {
        if start.elapsed() > timeout {
            println!(
                "timeout: {seen} of {want} records after {:?}",
                start.elapsed()
            );
            std::process::exit(1);
        }
        for part in fetcher.poll(Instant::now() + Duration::from_millis(500))? {
            let n = part.next_offset() - part.first_offset();
            if n > 0 && first.is_none() {
                first = Some(start.elapsed());
            }
            seen += part.for_each_record(|_| ()).map_err(|e| Error::Protocol {
                broker: None,
                message: e.to_string(),
            })? as u64;
        }
    }
    let last = start.elapsed();
    let first = first.unwrap_or(last);
    let span = (last - first).as_secs_f64().max(1e-3);
    println!(
        "first={:.3} last={:.3} records={seen} rate={:.0}",
        first.as_secs_f64(),
        last.as_secs_f64(),
        seen as f64 / span
    );
    Ok(())
}
