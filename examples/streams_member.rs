//! A Streams group member that prints every assignment transition.
//!
//! It creates the input topic if needed, joins the group with the topology of a small
//! counting application (`stream(input).selectKey(..).groupByKey().count()`, the same one the
//! Java peer in testing/streams-peer runs, so Java instances can join the same group), keeps
//! its task runtime in step with the broker's assignment in the safe two-phase order (revoked
//! tasks released only after they were stopped, new tasks started from their committed
//! offsets, then acknowledged), and leaves cleanly on Ctrl-C or after `--duration`.
//!
//! ```text
//! cargo run --example streams_member -- --bootstrap-server 127.0.0.1:19092 \
//!     --group demo-app --input demo-input --partitions 4 --duration 30
//! ```
//!
//! `scripts/demo.sh` starts a local broker and runs this.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kafka_streams_group::admin::{self, NewTopic};
use kafka_streams_group::{
    ClientConfig, Error, OffsetFetchOutcome, StreamsGroupConfig, StreamsGroupSession,
    StreamsTaskRole, StreamsTaskRuntime, StreamsTopology, Subtopology, TopicInfo,
};

struct Args {
    bootstrap: String,
    group: String,
    input: String,
    partitions: i32,
    duration: Option<Duration>,
    endpoint: Option<(String, u16)>,
}

const USAGE: &str = "usage: streams_member [--bootstrap-server HOST:PORT] [--group ID] \
[--input TOPIC] [--partitions N] [--duration SECONDS] [--endpoint HOST:PORT]";

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        bootstrap: "127.0.0.1:19092".into(),
        group: "demo-app".into(),
        input: "demo-input".into(),
        partitions: 4,
        duration: None,
        endpoint: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || {
            it.next()
                .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))
        };
        match flag.as_str() {
            "--bootstrap-server" => args.bootstrap = value()?,
            "--group" => args.group = value()?,
            "--input" => args.input = value()?,
            "--partitions" => {
                args.partitions = value()?.parse().map_err(|e| format!("--partitions: {e}"))?
            }
            "--duration" => {
                let secs: f64 = value()?.parse().map_err(|e| format!("--duration: {e}"))?;
                args.duration = Some(Duration::from_secs_f64(secs));
            }
            "--endpoint" => {
                let v = value()?;
                let (host, port) = v
                    .rsplit_once(':')
                    .ok_or_else(|| format!("--endpoint wants HOST:PORT, got {v}"))?;
                let port = port.parse().map_err(|e| format!("--endpoint port: {e}"))?;
                args.endpoint = Some((host.to_string(), port));
            }
            "-h" | "--help" => return Err(USAGE.to_string()),
            other => return Err(format!("unknown argument {other}\n{USAGE}")),
        }
    }
    Ok(args)
}

/// The topology Kafka Streams 4.4 sends for `stream(input).selectKey(..).groupByKey()
/// .count(Materialized.as("counts"))`: subtopology 0 re-keys into a repartition topic,
/// subtopology 1 counts into a store with a changelog.
fn counts_topology(group: &str, input: &str) -> StreamsTopology {
    let repartition = format!("{group}-counts-repartition");
    StreamsTopology::new()
        .subtopology(
            Subtopology::new("0")
                .source_topic(input)
                .repartition_sink_topic(repartition.clone()),
        )
        .subtopology(
            Subtopology::new("1")
                .repartition_source_topic(
                    TopicInfo::new(repartition)
                        .config("cleanup.policy", "delete")
                        .config("message.timestamp.type", "CreateTime")
                        .config("retention.ms", "-1")
                        .config("segment.bytes", "52428800"),
                )
                .state_changelog_topic(
                    TopicInfo::new(format!("{group}-counts-changelog"))
                        .config("cleanup.policy", "compact")
                        .config("message.timestamp.type", "CreateTime"),
                ),
        )
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
    println!(
        "creating topic {} ({} partitions) on {}",
        args.input, args.partitions, args.bootstrap
    );
    admin::create_topics(
        &ClientConfig::new(args.bootstrap.clone()),
        &[NewTopic::new(args.input.clone(), args.partitions)],
        Duration::from_secs(30),
    )?;

    let mut config = StreamsGroupConfig::new(
        args.bootstrap.clone(),
        args.group.clone(),
        counts_topology(&args.group, &args.input),
    )
    .client_id(format!("{}-rust-member", args.group));
    if let Some((host, port)) = &args.endpoint {
        config = config.user_endpoint(host.clone(), *port);
    }
    println!("joining group {} ...", args.group);
    let started = Instant::now();
    let handle = StreamsGroupSession::join(config)?.spawn_heartbeat_thread()?;
    println!(
        "joined as member {} at epoch {} after {:?}",
        handle.member_id(),
        handle.member_epoch(),
        started.elapsed()
    );

    let stop = Arc::new(AtomicBool::new(false));
    let stop_flag = stop.clone();
    if let Err(e) = ctrlc::set_handler(move || stop_flag.store(true, Ordering::SeqCst)) {
        eprintln!("cannot install a Ctrl-C handler ({e}); use --duration");
    }

    let end = args.duration.map(|d| Instant::now() + d);
    let mut runtime = StreamsTaskRuntime::new();
    let mut changes = handle.subscribe_assignment();
    let mut last_statuses = Vec::new();
    while !stop.load(Ordering::SeqCst) && end.is_none_or(|e| Instant::now() < e) {
        let assignment = match changes.recv_timeout(Duration::from_millis(200)) {
            Ok(a) => a,
            Err(Error::Timeout { .. }) => continue,
            Err(e) => {
                println!("the session ended: {e}");
                return Err(e);
            }
        };
        let statuses: Vec<String> = assignment
            .statuses
            .iter()
            .map(|s| format!("{:?}: {}", s.code, s.detail))
            .collect();
        if statuses != last_statuses {
            for s in &statuses {
                println!("status  {s}");
            }
            last_statuses = statuses;
        }
        if assignment.shutdown_requested() {
            println!("a member requested an application shutdown; leaving");
            break;
        }
        // The safe handover order (as Kafka Streams does it): drop lost tasks without
        // committing; stop revoked tasks and commit their progress; only then report them
        // released; take the new tasks (resuming at their committed offsets); acknowledge.
        let step = handle.begin_reconciliation(&mut runtime)?;
        for (task, role) in &step.plan().lost {
            println!("task    lost {task} ({role:?}): dropped, not committed");
        }
        for (task, role) in &step.plan().revoked {
            println!("task    stop {task} ({role:?})");
            // This example processes no records, so there is no progress to commit; a real
            // application commits here, while the task is still its own:
            // handle.commit_offsets(&offsets_of(task), Duration::from_secs(10))?;
        }
        handle.release_revoked(&mut runtime, &step)?;
        for (task, role) in &step.plan().assigned {
            let resume = if *role == StreamsTaskRole::Active {
                let partitions = handle.task_partitions(task).into_iter().collect();
                match handle.fetch_committed_offsets(&partitions, Duration::from_secs(10))? {
                    OffsetFetchOutcome::Fetched(committed) => committed
                        .iter()
                        .map(|(tp, c)| match c {
                            Some(c) => format!(" {tp}@{}", c.offset),
                            None => format!(" {tp}@(none)"),
                        })
                        .collect::<String>(),
                    other => format!(" (committed offsets: {other:?})"),
                }
            } else {
                String::new()
            };
            println!("task    start {task} ({role:?}){resume}");
        }
        handle.acknowledge_assigned(&mut runtime, &step)?;
        if !step.plan().is_empty() {
            let owned = runtime.owned_assignment();
            println!(
                "epoch {}: {} active, {} standby, {} warm-up task(s); group ready: {}",
                assignment.member_epoch,
                owned.active().count(),
                owned.standby().count(),
                owned.warmup().count(),
                assignment.is_group_ready
            );
        }
    }
    println!("leaving group {} ...", args.group);
    let metrics = handle.metrics();
    handle.close()?;
    println!(
        "left cleanly: {} heartbeats (mean {:?}, max {:?}), {} rebalance(s)",
        metrics.heartbeats,
        metrics.heartbeat_latency_mean,
        metrics.heartbeat_latency_max,
        metrics.rebalances
    );
    Ok(())
}
