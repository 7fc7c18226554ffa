//! Join a Streams group over `SASL_SSL` with `SCRAM-SHA-512`, trusting a private CA, then leave.
//!
//! The connection settings are librdkafka-style properties (see
//! `kafka_streams_group::properties`), from one of three places:
//!
//! ```text
//! # 1. A .properties file (any accepted key; application.id defaults to --group):
//! cargo run --example tls_sasl -- --properties client.properties
//!
//! # 2. The harness broker's cluster.env (SASL_SSL address, SCRAM user, CA file):
//! scripts/kafka.sh start        # prints .kafka/run-19092/cluster.env
//! cargo run --example tls_sasl -- --cluster-env .kafka/run-19092/cluster.env
//!
//! # 3. Flags (the password comes from KSG_SASL_PASSWORD, never from the command line):
//! KSG_SASL_PASSWORD=ksg-scram-secret cargo run --example tls_sasl -- \
//!     --bootstrap-server localhost:19095 --ca .kafka/run-19092/tls/ca.pem --username ksg-scram
//! ```
//!
//! A `client.properties` for the harness broker (values from its `cluster.env`:
//! `KSG_BOOTSTRAP_SASL_SSL`, `KSG_SCRAM_USERNAME`, `KSG_SCRAM_PASSWORD`, `KSG_CA_PEM`):
//!
//! ```text
//! bootstrap.servers=localhost:19095
//! security.protocol=SASL_SSL
//! sasl.mechanism=SCRAM-SHA-512
//! sasl.username=ksg-scram
//! sasl.password=ksg-scram-secret
//! ssl.ca.location=.kafka/run-19092/tls/ca.pem
//! ```
//!
//! The broker certificate is issued for `localhost` and `127.0.0.1`, so hostname verification
//! stays on. Other options: `--group ID` (default `tls-sasl-demo`), `--input TOPIC` (created
//! with 2 partitions if missing, default `tls-sasl-input`), `--duration SECONDS` (default 10).
//! Set `RUST_LOG=debug` to watch the TLS handshake and SCRAM exchange.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use kafka_streams_group::admin::{self, NewTopic};
use kafka_streams_group::properties;
use kafka_streams_group::{
    Error, StreamsGroupConfig, StreamsGroupSession, StreamsTaskRuntime, StreamsTopology,
    Subtopology,
};

const USAGE: &str = "usage: tls_sasl (--properties FILE | --cluster-env FILE | \
--bootstrap-server HOST:PORT --ca PEM --username USER [password in KSG_SASL_PASSWORD]) \
[--group ID] [--input TOPIC] [--duration SECONDS]";

struct Args {
    props: Vec<(String, String)>,
    input: String,
    duration: Duration,
}

/// Reads `KEY=VALUE` lines of a harness `cluster.env`.
fn read_env_file(path: &str) -> Result<BTreeMap<String, String>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    Ok(text
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect())
}

fn parse_args() -> Result<Args, String> {
    let mut file = None;
    let mut env_file = None;
    let (mut bootstrap, mut ca, mut username) = (None, None, None);
    let mut group = "tls-sasl-demo".to_owned();
    let mut input = "tls-sasl-input".to_owned();
    let mut duration = Duration::from_secs(10);
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || {
            it.next()
                .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))
        };
        match flag.as_str() {
            "--properties" => file = Some(value()?),
            "--cluster-env" => env_file = Some(value()?),
            "--bootstrap-server" => bootstrap = Some(value()?),
            "--ca" => ca = Some(value()?),
            "--username" => username = Some(value()?),
            "--group" => group = value()?,
            "--input" => input = value()?,
            "--duration" => {
                let secs: f64 = value()?.parse().map_err(|e| format!("--duration: {e}"))?;
                duration = Duration::from_secs_f64(secs);
            }
            "-h" | "--help" => return Err(USAGE.to_owned()),
            other => return Err(format!("unknown argument {other}\n{USAGE}")),
        }
    }
    let kv = |k: &str, v: String| (k.to_owned(), v);
    let scram_sasl_ssl = || {
        vec![
            kv("security.protocol", "SASL_SSL".into()),
            kv("sasl.mechanism", "SCRAM-SHA-512".into()),
        ]
    };
    let mut props = if let Some(path) = file {
        properties::read_file(&path).map_err(|e| e.to_string())?
    } else if let Some(path) = env_file {
        let env = read_env_file(&path)?;
        let get = |k: &str| {
            env.get(k)
                .cloned()
                .ok_or_else(|| format!("{path} has no {k}"))
        };
        let mut p = scram_sasl_ssl();
        p.push(kv("bootstrap.servers", get("KSG_BOOTSTRAP_SASL_SSL")?));
        p.push(kv("sasl.username", get("KSG_SCRAM_USERNAME")?));
        p.push(kv("sasl.password", get("KSG_SCRAM_PASSWORD")?));
        p.push(kv("ssl.ca.location", get("KSG_CA_PEM")?));
        p
    } else {
        let missing = |what: &str| format!("{what} is required without --properties\n{USAGE}");
        let password = std::env::var("KSG_SASL_PASSWORD")
            .map_err(|_| missing("the KSG_SASL_PASSWORD environment variable"))?;
        let mut p = scram_sasl_ssl();
        p.push(kv(
            "bootstrap.servers",
            bootstrap.ok_or_else(|| missing("--bootstrap-server"))?,
        ));
        p.push(kv("ssl.ca.location", ca.ok_or_else(|| missing("--ca"))?));
        p.push(kv(
            "sasl.username",
            username.ok_or_else(|| missing("--username"))?,
        ));
        p.push(kv("sasl.password", password));
        p
    };
    if !props.iter().any(|(k, _)| k == "application.id") {
        props.push(kv("application.id", group.clone()));
    }
    if !props.iter().any(|(k, _)| k == "client.id") {
        props.push(kv("client.id", format!("{group}-tls-sasl-example")));
    }
    Ok(Args {
        props,
        input,
        duration,
    })
}

fn main() {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info"))
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
    let topology =
        StreamsTopology::new().subtopology(Subtopology::new("0").source_topic(args.input.clone()));
    let config = StreamsGroupConfig::from_properties(args.props, topology)?;
    let client = config.get_client_config();
    println!(
        "connecting to {} with {} / {} ...",
        client.bootstrap(),
        client.get_security_protocol(),
        client.get_sasl().map_or("no SASL", |s| s.mechanism_name())
    );
    admin::create_topics(
        client,
        &[NewTopic::new(args.input.clone(), 2)],
        Duration::from_secs(30),
    )?;
    println!(
        "topic {} is there; joining group {} ...",
        args.input,
        config.group_id()
    );

    let group = config.group_id().to_owned();
    let started = Instant::now();
    let handle = StreamsGroupSession::join(config)?.spawn_heartbeat_thread()?;
    println!(
        "joined as member {} at epoch {} after {:?}",
        handle.member_id(),
        handle.member_epoch(),
        started.elapsed()
    );

    let mut runtime = StreamsTaskRuntime::new();
    let mut changes = handle.subscribe_assignment();
    let end = Instant::now() + args.duration;
    while Instant::now() < end {
        match changes.recv_timeout(Duration::from_millis(200)) {
            Ok(_) => {}
            Err(Error::Timeout { .. }) => continue,
            Err(e) => return Err(e),
        }
        for t in handle.reconcile_task_runtime(&mut runtime)? {
            println!("task    {t}");
        }
    }
    println!(
        "leaving group {} holding {} task(s) ...",
        group,
        runtime.len()
    );
    let metrics = handle.metrics();
    handle.close()?;
    println!(
        "left cleanly after {} heartbeat(s) over SASL_SSL",
        metrics.heartbeats
    );
    Ok(())
}
