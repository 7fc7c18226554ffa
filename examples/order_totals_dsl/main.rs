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
//! `printf 'customer c1 north\norder o1 c1 5\n' | …` feeds it. `query REGION` asks for a
//! region's total (`total north 5` if this instance hosts it, else `north is on HOST:PORT`,
//! the `--application-server` of the instance that does). Every 2 s a reader thread prints the
//! totals of the regions this instance hosts if they changed (`totals {"north": 5}`). Both
//! read the store with interactive queries (`ProcessingRuntime::store`) from threads of
//! their own while the main thread runs the runtime. `close` on stdin, or stdin closing,
//! commits and leaves the group (`left cleanly`).

use std::collections::BTreeMap;
use std::io::BufRead;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kafka_streams_group::admin::{self, NewTopic};
use kafka_streams_group::processing::{
    ProcessingConfig, ProcessingRuntime, ReadOnlyKeyValueStore, StreamsMetadataHandle, StringSerde,
};
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

type Totals = ReadOnlyKeyValueStore<String, i64>;

/// The totals of the regions this instance hosts, read from a thread of its own while the
/// main thread keeps the runtime running (stream thread 1 answers inside `run_once`).
fn read_totals(runtime: &mut ProcessingRuntime, totals: &Totals) -> Result<String, Error> {
    let reader = {
        let totals = totals.clone();
        std::thread::spawn(move || totals.all())
    };
    while !reader.is_finished() {
        runtime.run_once()?;
    }
    Ok(match reader.join().expect("the reader thread") {
        Ok(all) => format!("totals {:?}", all.into_iter().collect::<BTreeMap<_, _>>()),
        Err(e) => format!("totals not readable now: {e}"),
    })
}

/// Answers `query REGION` on a thread of its own: the total if this instance hosts the
/// region, else the instance that does.
fn query(region: String, totals: Totals, metadata: StreamsMetadataHandle) {
    std::thread::spawn(move || match totals.get(&region) {
        Ok(Some(total)) => println!("total {region} {total}"),
        Ok(None) => {
            match metadata.query_metadata_for_key(app::STORE, region.as_str(), &StringSerde) {
                Ok(m) => match m.active_host {
                    Some(host) => println!("{region} is on {}:{}", host.host, host.port),
                    None => println!("{region}: no instance known to host it (yet)"),
                },
                Err(e) => println!("{region}: {e}"),
            }
        }
        Err(e) if e.is_retriable() => println!("{region}: not readable now, retry: {e}"),
        Err(e) => println!("{region}: {e}"),
    });
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
    let stop = Arc::new(AtomicBool::new(false));
    let stop_flag = stop.clone();
    let app = app::app(&app_id, &orders, &customers, &output)?;
    let mut config = ProcessingConfig::new(bootstrap, app_id);
    let server = arg(args, "--application-server", "");
    if let Some((host, port)) = server.rsplit_once(':') {
        let port = port.parse().map_err(|_| Error::InvalidConfiguration {
            field: "--application-server",
            reason: format!("{server:?} is not HOST:PORT"),
        })?;
        config = config.user_endpoint(host, port);
    }
    let mut runtime = ProcessingRuntime::start(config, app)?;
    println!("joined as {}", runtime.handle().member_id());
    // The aggregation's store, typed by the program's serdes; Clone + Send + Sync.
    let totals: Totals = runtime
        .store(app::STORE)
        .map_err(|e| Error::InvalidConfiguration {
            field: "store",
            reason: e.to_string(),
        })?;
    let metadata = runtime.metadata_handle();
    {
        // Every 2 s, the hosted totals if they changed, read from this thread.
        let (totals, stop) = (totals.clone(), stop_flag.clone());
        std::thread::spawn(move || {
            let mut shown = Vec::new();
            while !stop.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_secs(2));
                match totals.all() {
                    Ok(all) if all != shown => {
                        println!(
                            "totals {:?}",
                            all.iter().cloned().collect::<BTreeMap<_, _>>()
                        );
                        shown = all;
                    }
                    Ok(_) => {}
                    Err(_) if stop.load(Ordering::SeqCst) => break, // closing
                    Err(e) if e.is_retriable() => log::debug!("totals: {e}"),
                    Err(e) => log::warn!("totals: {e}"),
                }
            }
        });
    }
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
            if let Some(region) = line.trim().strip_prefix("query ") {
                query(region.trim().to_string(), totals.clone(), metadata.clone());
                continue;
            }
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
    }
    // Let what was fed last be processed before leaving.
    let grace = Instant::now() + Duration::from_millis(1500);
    while Instant::now() < grace {
        runtime.run_once()?;
    }
    println!("{}", read_totals(&mut runtime, &totals)?);
    runtime.close()?;
    println!("left cleanly");
    Ok(())
}
