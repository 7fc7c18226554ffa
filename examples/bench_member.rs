//! Benchmark helper binary (issue 8); `scripts/bench.sh` drives it. Not part of the tests.
//!
//! ```text
//! bench_member mock [--interval-ms N]           serve the mock coordinator; prints `addr H:P`,
//!                                               exits on stdin EOF
//! bench_member idle --bootstrap H:P [--secs S]  join, then idle S s on the heartbeat thread;
//!                                               prints CPU time and wake-ups of that window
//! bench_member hb-loop --bootstrap H:P --n N    join, N x heartbeat_now(), close (callgrind)
//! bench_member hb-loop --hop-floor --n N        N x the hop floor of benches/heartbeat_rtt.rs
//! bench_member peer --bootstrap H:P --group G --input T
//!                                               a member speaking a subset of the Java
//!                                               streams-peer's stdin/stdout control protocol:
//!                                               `ready`, `tasks`, `rss`, `close` → `closed`
//! bench_member create-topic --bootstrap H:P --topic T --partitions N
//! bench_member encode-loop --n N                N steady heartbeat encodes (allocation count)
//! bench_member reconcile-probe --n N [--setup-only]   one rebalance reconcile (callgrind)
//! bench_member codec-probe --case C --n N       N x one codec case of items 1-2 (callgrind):
//!                                               steady-encode, steady-encode-floor,
//!                                               response-into, response-floor,
//!                                               metadata-ours, metadata-kafka-protocol
//! ```
//!
//! CPU time is read from `/proc/self/task/<tid>/schedstat` (nanoseconds on the CPU), wake-ups
//! from `voluntary_ctxt_switches` in `/proc/self/task/<tid>/status`: every voluntary switch is
//! one sleep, so one wake-up.

#[path = "../benches/support/mock.rs"]
mod mock;

#[path = "../benches/support/codec_cases.rs"]
mod codec_cases;

#[path = "../benches/support/metadata_case.rs"]
mod metadata_case;

use std::collections::BTreeMap;
use std::io::{BufRead, Read, Write};
use std::time::{Duration, Instant};

use kafka_streams_group::protocol::api::streams_group_heartbeat::StreamsGroupHeartbeatRequest;
use kafka_streams_group::protocol::frame::encode_request_frame;
use kafka_streams_group::{
    StreamsGroupConfig, StreamsGroupSession, StreamsGroupSessionHandle, StreamsTopology,
    Subtopology, TopicInfo,
};

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

/// Per-thread (name, cpu ns, voluntary switches, involuntary switches).
fn threads() -> BTreeMap<u32, (String, u64, u64, u64)> {
    let mut out = BTreeMap::new();
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return out;
    };
    for e in dir.flatten() {
        let Ok(tid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let p = e.path();
        let name = std::fs::read_to_string(p.join("comm"))
            .unwrap_or_default()
            .trim()
            .to_string();
        let cpu = std::fs::read_to_string(p.join("schedstat"))
            .ok()
            .and_then(|s| s.split_whitespace().next().and_then(|v| v.parse().ok()))
            .unwrap_or(0);
        let status = std::fs::read_to_string(p.join("status")).unwrap_or_default();
        let field = |k: &str| -> u64 {
            status
                .lines()
                .find_map(|l| l.strip_prefix(k))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0)
        };
        out.insert(
            tid,
            (
                name,
                cpu,
                field("voluntary_ctxt_switches:"),
                field("nonvoluntary_ctxt_switches:"),
            ),
        );
    }
    out
}

fn rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn simple_topology() -> StreamsTopology {
    StreamsTopology::new().subtopology(Subtopology::new("0").source_topic("in"))
}

/// The Java peer's topology (testing/streams-peer), as its joining heartbeat sends it.
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

fn join(bootstrap: &str, group: &str, topology: StreamsTopology) -> StreamsGroupSessionHandle {
    StreamsGroupSession::join(
        StreamsGroupConfig::new(bootstrap, group, topology).join_timeout(Duration::from_secs(30)),
    )
    .expect("join")
    .spawn_heartbeat_thread()
    .expect("spawn heartbeat thread")
}

fn idle(args: &[String]) {
    let secs: u64 = arg(args, "--secs")
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    let interval: i32 = arg(args, "--interval-ms")
        .and_then(|s| s.parse().ok())
        .unwrap_or(500);
    let (bootstrap, in_process) = match arg(args, "--bootstrap") {
        Some(b) => (b, None),
        None => {
            let m = mock::start(interval);
            (m.addr.clone(), Some(m))
        }
    };
    let handle = join(&bootstrap, "bench-group", simple_topology());
    // The floor, measured in the same window: a plain thread that sleeps `interval` and then
    // does one blocking TCP round trip of the same heartbeat bytes against a ping-pong server.
    let pp = mock::start_ping_pong(mock::heartbeat_response_body(interval, 1), true);
    let req = StreamsGroupHeartbeatRequest {
        group_id: "bench-group".into(),
        member_id: handle.member_id(),
        member_epoch: 1,
        rebalance_timeout_ms: -1,
        ..Default::default()
    };
    let mut frame = Vec::new();
    encode_request_frame(&mut frame, 7, Some("kafka-streams-group"), &req, 1).expect("frame");
    let period = Duration::from_millis(u64::try_from(interval).unwrap_or(500));
    std::thread::Builder::new()
        .name("floor-pingpong".into())
        .spawn(move || {
            let mut s = std::net::TcpStream::connect(&pp).expect("connect ping-pong");
            let _ = s.set_nodelay(true);
            let mut resp = Vec::new();
            loop {
                std::thread::sleep(period);
                if s.write_all(&frame).is_err() {
                    return;
                }
                let mut len = [0u8; 4];
                if s.read_exact(&mut len).is_err() {
                    return;
                }
                resp.resize(i32::from_be_bytes(len).max(0) as usize, 0);
                if s.read_exact(&mut resp).is_err() {
                    return;
                }
            }
        })
        .expect("spawn floor thread");
    // Let the join settle (first periodic heartbeat), then open the window.
    std::thread::sleep(Duration::from_millis(
        u64::try_from(interval).unwrap_or(500) + 200,
    ));
    let before = threads();
    let hb_before = handle.metrics().heartbeats;
    let t0 = Instant::now();
    std::thread::sleep(Duration::from_secs(secs));
    let wall = t0.elapsed();
    let after = threads();
    let heartbeats = handle.metrics().heartbeats - hb_before;
    let mut hb = (0u64, 0u64, 0u64);
    let mut floor = (0u64, 0u64);
    let mut others = (0u64, 0u64);
    for (tid, (name, cpu, vol, invol)) in &after {
        let (_, cpu0, vol0, invol0) = before.get(tid).cloned().unwrap_or((String::new(), 0, 0, 0));
        if name.starts_with("ksg-heartbeat") {
            hb = (cpu - cpu0, vol - vol0, invol - invol0);
        } else if name.starts_with("floor-pingpong") {
            floor = (cpu - cpu0, vol - vol0);
        } else if !name.starts_with("mock") {
            others.0 += cpu - cpu0;
            others.1 += vol - vol0;
        }
    }
    println!(
        "idle wall_s={:.1} interval_ms={interval} heartbeats={heartbeats} hb_thread_cpu_us={} \
         hb_thread_wakeups={} hb_thread_involuntary={} other_threads_cpu_us={} \
         other_threads_wakeups={} floor_thread_cpu_us={} floor_thread_wakeups={} mock={}",
        wall.as_secs_f64(),
        hb.0 / 1000,
        hb.1,
        hb.2,
        others.0 / 1000,
        others.1,
        floor.0 / 1000,
        floor.1,
        if in_process.is_some() {
            "in-process"
        } else {
            "external"
        }
    );
    let _ = handle.close();
}

fn hb_loop(args: &[String]) {
    let n: usize = arg(args, "--n")
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000);
    if args.iter().any(|a| a == "--hop-floor") {
        return hop_floor_loop(n);
    }
    let (bootstrap, _m) = match arg(args, "--bootstrap") {
        Some(b) => (b, None),
        None => {
            let m = mock::start(3_600_000);
            (m.addr.clone(), Some(m))
        }
    };
    let handle = join(&bootstrap, "bench-group", simple_topology());
    let t0 = Instant::now();
    for _ in 0..n {
        handle.heartbeat_now().expect("heartbeat");
    }
    println!(
        "hb-loop n={n} mean_us={:.1}",
        t0.elapsed().as_secs_f64() * 1e6 / n.max(1) as f64
    );
    let _ = handle.close();
}

/// `hb-loop --hop-floor`: the reference of `benches/heartbeat_rtt.rs`'s "hop floor" line, N
/// times: the steady heartbeat's bytes ping-ponged by an I/O thread that this thread hands
/// each request to over a crossbeam channel and gets the answer from over another. Under
/// `perf stat`, its context switches and system calls per call are the least any design
/// with a dedicated I/O thread needs, to hold `hb-loop`'s against.
fn hop_floor_loop(n: usize) {
    let pp = mock::start_ping_pong(mock::heartbeat_response_body(3_600_000, 1), true);
    let req = StreamsGroupHeartbeatRequest {
        group_id: "bench-group".into(),
        member_id: "Zm9vYmFyYmF6cXV4cXV1eA".into(),
        member_epoch: 1,
        rebalance_timeout_ms: -1,
        ..Default::default()
    };
    let mut frame = Vec::new();
    encode_request_frame(&mut frame, 7, Some("kafka-streams-group"), &req, 1).expect("frame");
    let (go_tx, go_rx) = crossbeam_channel::bounded::<()>(1);
    let (done_tx, done_rx) = crossbeam_channel::bounded::<usize>(1);
    let mut s = std::net::TcpStream::connect(&pp).expect("connect ping-pong");
    s.set_nodelay(true).expect("nodelay");
    let io = std::thread::spawn(move || {
        let mut resp = Vec::new();
        for () in go_rx {
            s.write_all(&frame).expect("write");
            let mut len = [0u8; 4];
            s.read_exact(&mut len).expect("read");
            resp.resize(i32::from_be_bytes(len).max(0) as usize, 0);
            s.read_exact(&mut resp).expect("read");
            if done_tx.send(resp.len()).is_err() {
                return;
            }
        }
    });
    let t0 = Instant::now();
    for _ in 0..n {
        go_tx.send(()).expect("hand off");
        done_rx.recv().expect("answer");
    }
    println!(
        "hop-floor-loop n={n} mean_us={:.1}",
        t0.elapsed().as_secs_f64() * 1e6 / n.max(1) as f64
    );
    drop(go_tx);
    let _ = io.join();
}

fn serve_mock(args: &[String]) {
    let interval: i32 = arg(args, "--interval-ms")
        .and_then(|s| s.parse().ok())
        .unwrap_or(500);
    let m = mock::start(interval);
    println!("addr {}", m.addr);
    // Serve until stdin closes.
    let mut sink = String::new();
    while std::io::stdin()
        .read_line(&mut sink)
        .map(|n| n > 0)
        .unwrap_or(false)
    {
        sink.clear();
    }
}

fn peer(args: &[String]) {
    let bootstrap = arg(args, "--bootstrap").expect("--bootstrap");
    let group = arg(args, "--group").expect("--group");
    let input = arg(args, "--input").expect("--input");
    println!("ready");
    let handle = join(&bootstrap, &group, counts_topology(&group, &input));
    println!("joined");
    // Commands arrive on a reader thread; the main thread does what a Streams application
    // does: whenever the target changes, run exactly the target and report it as owned (the
    // broker only moves a task to another member after its owner has given it up).
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut runtime = kafka_streams_group::StreamsTaskRuntime::new();
    let mut assignments = handle.subscribe_assignment();
    let _ = handle.reconcile_task_runtime(&mut runtime);
    loop {
        if assignments.try_recv().is_some() {
            let _ = handle.reconcile_task_runtime(&mut runtime);
        }
        let line = match rx.recv_timeout(Duration::from_millis(10)) {
            Ok(l) => l,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => continue,
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
        };
        match line.trim() {
            "tasks" => {
                let owned = runtime.owned_assignment();
                let list = |it: &mut dyn Iterator<Item = String>| it.collect::<Vec<_>>().join(",");
                println!(
                    "tasks active={} standby={}",
                    list(&mut owned.active().map(|t| t.to_string())),
                    list(&mut owned.standby().map(|t| t.to_string()))
                );
            }
            "rss" => println!("rss {}", rss_kb()),
            "close" => break,
            other => println!("err {other} unknown command"),
        }
    }
    let _ = handle.close();
    println!("closed");
}

fn create_topic(args: &[String]) {
    let bootstrap = arg(args, "--bootstrap").expect("--bootstrap");
    let topic = arg(args, "--topic").expect("--topic");
    let partitions: i32 = arg(args, "--partitions")
        .and_then(|s| s.parse().ok())
        .unwrap_or(4);
    kafka_streams_group::admin::create_topics(
        &kafka_streams_group::ClientConfig::new(bootstrap),
        &[kafka_streams_group::admin::NewTopic::new(topic, partitions)],
        Duration::from_secs(30),
    )
    .expect("create topic");
}

/// Encodes the steady-state heartbeat `--n` times into one reused buffer; run under
/// `valgrind` twice (n = 0 and n = 10000), the difference in "total heap usage" is the number
/// of allocations of `n` encodes.
fn encode_loop(args: &[String]) {
    use kafka_streams_group::protocol::codec::encode_message;
    let n: usize = arg(args, "--n").and_then(|s| s.parse().ok()).unwrap_or(0);
    let req = codec_cases::steady_request();
    let mut buf = Vec::with_capacity(4096);
    let mut total = 0usize;
    for _ in 0..n {
        buf.clear();
        encode_message(&mut buf, std::hint::black_box(&req), 1).expect("encode");
        total += buf.len();
    }
    println!("encode-loop n={n} bytes={total}");
}

/// One rebalance reconcile of `--n` tasks (a quarter removed, a quarter added, the
/// active/standby boundary moved); `--setup-only` builds the same inputs and stops. Under
/// callgrind, the difference of the two instruction counts is the reconcile alone, which shows
/// the algorithmic growth without the cache effects that dominate wall time at 100k tasks.
fn reconcile_probe(args: &[String]) {
    use kafka_streams_group::{StreamsTaskAssignment, StreamsTaskRuntime};
    let n: usize = arg(args, "--n")
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000);
    let setup_only = args.iter().any(|a| a == "--setup-only");
    let subtopologies = 50;
    let per = (n / subtopologies) as i32;
    let build = |off: i32| {
        let split = per * 3 / 4;
        let mut active = Vec::new();
        let mut standby = Vec::new();
        for s in 0..subtopologies {
            active.push((s.to_string(), (off..off + split).collect::<Vec<i32>>()));
            standby.push((
                s.to_string(),
                (off + split..off + per).collect::<Vec<i32>>(),
            ));
        }
        StreamsTaskAssignment::from_wire(&active, &standby, &[]).expect("valid")
    };
    let before = build(0);
    let after = build(per / 4);
    let mut rt = StreamsTaskRuntime::new();
    rt.reconcile(&before).expect("reconcile");
    let transitions = if setup_only {
        0
    } else {
        rt.reconcile(std::hint::black_box(&after))
            .expect("reconcile")
            .len()
    };
    println!("reconcile-probe n={n} transitions={transitions}");
}

/// Runs one codec case of items 1 and 2 `--n` times on fixed input; under callgrind, the
/// instruction count at `--n N` minus the one at `--n 0` (same set-up) divided by N is the
/// cost of one operation. Instruction counts do not move with the load of this shared box
/// the way criterion's wall times do, so they show whether a ratio target holds.
fn codec_probe(args: &[String]) {
    use kafka_protocol::protocol::Decodable as _;
    use kafka_streams_group::protocol::api::metadata::MetadataResponse;
    use kafka_streams_group::protocol::codec::{
        decode_message, decode_message_into, encode_message,
    };
    use std::hint::black_box;
    let n: usize = arg(args, "--n").and_then(|s| s.parse().ok()).unwrap_or(0);
    let case = arg(args, "--case").unwrap_or_default();
    let mut out = Vec::with_capacity(16 * 1024);
    let mut done = 0usize;
    match case.as_str() {
        "steady-encode" | "steady-encode-floor" => {
            let req = codec_cases::steady_request();
            for _ in 0..n {
                out.clear();
                if case == "steady-encode" {
                    encode_message(&mut out, black_box(&req), codec_cases::V).expect("encode");
                } else {
                    codec_cases::floor_encode_request(&mut out, black_box(&req));
                }
                done += out.len();
            }
        }
        "response-into" | "response-floor" => {
            encode_message(&mut out, &codec_cases::big_response(), codec_cases::V).expect("enc");
            // One warm-up decode each, so the reused values hold their buffers before counting
            // (the criterion benchmark reuses them the same way).
            let mut resp: kafka_streams_group::protocol::api::streams_group_heartbeat::StreamsGroupHeartbeatResponse =
                decode_message(&out, codec_cases::V).expect("decode");
            let mut flat = codec_cases::FlatResponse::default();
            codec_cases::floor_decode_response(&out, &mut flat).expect("floor");
            for _ in 0..n {
                if case == "response-into" {
                    decode_message_into(black_box(&out), codec_cases::V, &mut resp)
                        .expect("decode");
                    done += resp.active_tasks.as_ref().map_or(0, Vec::len);
                } else {
                    codec_cases::floor_decode_response(black_box(&out), &mut flat).expect("floor");
                    done += flat.ints.len();
                }
            }
        }
        "metadata-ours" | "metadata-kafka-protocol" => {
            let v = metadata_case::METADATA_V;
            encode_message(&mut out, &metadata_case::metadata(1000, 16), v).expect("encode");
            let bytes = bytes::Bytes::from(out.clone());
            for _ in 0..n {
                if case == "metadata-ours" {
                    let r: MetadataResponse = decode_message(black_box(&out), v).expect("decode");
                    done += r.topics.len();
                } else {
                    let mut b = black_box(&bytes).clone();
                    let r = kafka_protocol::messages::MetadataResponse::decode(&mut b, v)
                        .expect("decode");
                    done += r.topics.len();
                }
            }
        }
        other => {
            eprintln!("codec-probe: unknown --case {other:?}");
            std::process::exit(2);
        }
    }
    println!("codec-probe case={case} n={n} done={done}");
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("mock") => serve_mock(&args),
        Some("idle") => idle(&args),
        Some("hb-loop") => hb_loop(&args),
        Some("peer") => peer(&args),
        Some("create-topic") => create_topic(&args),
        Some("encode-loop") => encode_loop(&args),
        Some("reconcile-probe") => reconcile_probe(&args),
        Some("codec-probe") => codec_probe(&args),
        _ => {
            eprintln!("usage: bench_member mock|idle|hb-loop|peer … (see the file's docs)");
            std::process::exit(2);
        }
    }
}
