//! Order totals per region written with the DSL (`app.rs`: a stream–table join and an
//! aggregation), as a member of the Streams group `--application-id`: Java instances of the
//! same program (`scripts/streams-peer.sh run --topology ordertotals …`) share its work.
//!
//! ```text
//! cargo run --example order_totals_dsl -- --bootstrap-server 127.0.0.1:19092 \
//!     --application-id order-totals --orders orders --customers customers \
//!     --output region-totals-output
//! ```
//!
//! The three topics are created if missing (2 partitions each: orders and customers must be
//! copartitioned). Lines read on stdin are written to the input topics: `customer ID REGION`
//! (a customer and its region), `order ID CUSTOMER AMOUNT` (an order); so
//! `printf 'customer c1 north\norder o1 c1 5\n' | …` feeds it. Every 2 s the totals of the
//! regions this instance hosts are printed if they changed (`totals {"north": 5}`). `close`
//! on stdin, or stdin closing, commits and leaves the group (`left cleanly`).

use std::collections::BTreeMap;
use std::io::BufRead;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kafka_streams_group::admin::{self, NewTopic};
use kafka_streams_group::processing::{ProcessingConfig, ProcessingRuntime};
use kafka_streams_group::producer::{Producer, ProducerConfig, ProducerRecord};
use kafka_streams_group::{ClientConfig, Error};

mod app;

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

/// A stdin line as (topic, key, value), or why it is not one.
fn record(line: &str, orders: &str, customers: &str) -> Result<(String, String, String), String> {
    match line.split_whitespace().collect::<Vec<_>>()[..] {
        ["customer", id, region] => Ok((customers.into(), id.into(), region.into())),
        ["order", id, customer, amount] => {
            Ok((orders.into(), id.into(), format!("{customer}:{amount}")))
        }
        _ => Err(format!(
            "not `customer ID REGION` or `order ID CUSTOMER AMOUNT`: {line:?}"
        )),
    }
}

/// The totals in this instance's `region-totals` stores (active tasks).
fn local_totals(runtime: &ProcessingRuntime) -> BTreeMap<String, i64> {
    runtime
        .task_stores()
        .filter(|(_, role, store)| {
            *role == kafka_streams_group::StreamsTaskRole::Active && store.name() == app::STORE
        })
        .flat_map(|(_, _, store)| {
            store
                .iter()
                .filter_map(|(k, v)| {
                    let total: [u8; 8] = v.try_into().ok()?;
                    Some((
                        String::from_utf8_lossy(k).into_owned(),
                        i64::from_be_bytes(total),
                    ))
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

fn run(args: &[String]) -> Result<(), Error> {
    let bootstrap = arg(args, "--bootstrap-server", "127.0.0.1:19092");
    let app_id = arg(args, "--application-id", "order-totals");
    let orders = arg(args, "--orders", "orders");
    let customers = arg(args, "--customers", "customers");
    let output = arg(args, "--output", "region-totals-output");
    let client = ClientConfig::new(bootstrap.clone());
    let topics = [
        NewTopic::new(&orders, 2),
        NewTopic::new(&customers, 2),
        NewTopic::new(&output, 2),
    ];
    admin::create_topics(&client, &topics, Duration::from_secs(30))?;
    let mut feeder = Producer::new(ProducerConfig::new(client))?;
    let app = app::app(&app_id, &orders, &customers, &output)?;
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
    let mut shown = BTreeMap::new();
    let mut last_shown = Instant::now();
    while !stop.load(Ordering::SeqCst) || !lines_rx.is_empty() {
        let mut fed = false;
        while let Ok(line) = lines_rx.try_recv() {
            match record(&line, &orders, &customers) {
                Ok((topic, key, value)) => {
                    let r =
                        ProducerRecord::new(topic, Some(key.as_bytes()), Some(value.as_bytes()));
                    feeder.send(r)?;
                    fed = true;
                }
                Err(e) => eprintln!("{e}"),
            }
        }
        if fed {
            feeder.flush(Instant::now() + Duration::from_secs(30))?;
        }
        runtime.run_once()?;
        if last_shown.elapsed() >= Duration::from_secs(2) {
            last_shown = Instant::now();
            let totals = local_totals(&runtime);
            if totals != shown {
                println!("totals {totals:?}");
                shown = totals;
            }
        }
    }
    // Let what was fed last be processed before leaving.
    let grace = Instant::now() + Duration::from_millis(1500);
    while Instant::now() < grace {
        runtime.run_once()?;
    }
    println!("totals {:?}", local_totals(&runtime));
    runtime.close()?;
    println!("left cleanly");
    Ok(())
}
