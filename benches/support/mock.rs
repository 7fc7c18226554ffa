//! A minimal in-process coordinator for the benchmarks: it answers ApiVersions, FindCoordinator
//! (pointing at itself) and StreamsGroupHeartbeat (one fixed response) on loopback, one thread
//! per connection. Shared by `benches/heartbeat_rtt.rs` and `examples/bench_member.rs`.
//!
//! Every answer is precomputed: the serve loop only reads a frame, peeks the api key, version
//! and correlation id, and writes `[len][correlation id][tagged fields][body]`. The raw TCP
//! ping-pong baseline uses the very same loop, so the server's share of a round trip is equal
//! on both sides of the comparison.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;

use kafka_streams_group::protocol::api::api_versions::{ApiVersion, ApiVersionsResponse};
use kafka_streams_group::protocol::api::find_coordinator::{
    Coordinator, FindCoordinatorRequest, FindCoordinatorResponse,
};
use kafka_streams_group::protocol::api::streams_group_heartbeat::{
    StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse,
};
use kafka_streams_group::protocol::codec::encode_message;
use kafka_streams_group::protocol::{ApiMessage, Request};

/// The fixed heartbeat answer: epoch 1, no tasks, no statuses, the given interval.
pub fn heartbeat_response(interval_ms: i32) -> StreamsGroupHeartbeatResponse {
    StreamsGroupHeartbeatResponse {
        member_id: "bench-member".into(),
        member_epoch: 1,
        heartbeat_interval_ms: interval_ms,
        acceptable_recovery_lag: 10_000,
        active_tasks: Some(Vec::new()),
        standby_tasks: Some(Vec::new()),
        warmup_tasks: Some(Vec::new()),
        status: Some(Vec::new()),
        endpoint_information_epoch: 0,
        ..Default::default()
    }
}

/// One precomputed answer per (api key, version): the body bytes, and whether the response
/// header is flexible (v1 carries an empty tagged-field section after the correlation id).
struct Answers {
    table: Vec<(i16, i16, bool, Vec<u8>)>,
}

impl Answers {
    fn build(port: u16, interval_ms: i32) -> Answers {
        let mut table = Vec::new();
        let av = ApiVersionsResponse {
            api_keys: vec![
                av_key(18, 0, 4),
                av_key(3, 0, 12),
                av_key(10, 0, 6),
                av_key(88, 0, 1),
            ],
            ..Default::default()
        };
        for v in 0..=ApiVersionsResponse::MAX_VERSION {
            table.push((18, v, false, body(&av, v)));
        }
        for v in 0..=FindCoordinatorResponse::MAX_VERSION {
            // v0-3 carry one coordinator in top-level fields, v4+ a list.
            let mut fc = FindCoordinatorResponse::default();
            if v < 4 {
                fc.node_id = 1;
                fc.host = "127.0.0.1".into();
                fc.port = i32::from(port);
            }
            let fc = FindCoordinatorResponse {
                coordinators: if v >= 4 {
                    vec![Coordinator {
                        key: "bench-group".into(),
                        node_id: 1,
                        host: "127.0.0.1".into(),
                        port: i32::from(port),
                        error_code: 0,
                        error_message: None,
                    }]
                } else {
                    Vec::new()
                },
                ..fc
            };
            let flex = FindCoordinatorRequest::response_header_version(v) == 1;
            table.push((10, v, flex, body(&fc, v)));
        }
        let hb = heartbeat_response(interval_ms);
        for v in 0..=1 {
            table.push((88, v, true, body(&hb, v)));
        }
        Answers { table }
    }

    fn find(&self, key: i16, version: i16) -> Option<(bool, &[u8])> {
        self.table
            .iter()
            .find(|(k, v, _, _)| *k == key && *v == version)
            .map(|(_, _, f, b)| (*f, b.as_slice()))
    }
}

fn av_key(api_key: i16, min_version: i16, max_version: i16) -> ApiVersion {
    ApiVersion {
        api_key,
        min_version,
        max_version,
    }
}

fn body<M: ApiMessage>(m: &M, v: i16) -> Vec<u8> {
    let mut b = Vec::new();
    encode_message(&mut b, m, v).expect("encode mock answer");
    b
}

/// Writes one response frame: length, correlation id, optional empty tagged fields, body.
pub fn write_frame(out: &mut Vec<u8>, correlation_id: i32, flexible: bool, body: &[u8]) {
    let len = 4 + usize::from(flexible) + body.len();
    out.clear();
    out.extend_from_slice(&(len as i32).to_be_bytes());
    out.extend_from_slice(&correlation_id.to_be_bytes());
    if flexible {
        out.push(0);
    }
    out.extend_from_slice(body);
}

/// A running mock coordinator.
pub struct MockCoordinator {
    /// `127.0.0.1:port`.
    pub addr: String,
    /// Heartbeats answered so far (all connections).
    pub heartbeats: Arc<AtomicU64>,
}

/// Starts the mock on an ephemeral loopback port; it lives until the process ends.
pub fn start(interval_ms: i32) -> MockCoordinator {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind mock");
    let port = l.local_addr().expect("addr").port();
    let answers = Arc::new(Answers::build(port, interval_ms));
    let heartbeats = Arc::new(AtomicU64::new(0));
    let hb = heartbeats.clone();
    thread::Builder::new()
        .name("mock-accept".into())
        .spawn(move || {
            for s in l.incoming() {
                let Ok(s) = s else { return };
                let (a, hb) = (answers.clone(), hb.clone());
                let _ = thread::Builder::new()
                    .name("mock-conn".into())
                    .spawn(move || serve(s, &a, &hb));
            }
        })
        .expect("spawn mock");
    MockCoordinator {
        addr: format!("127.0.0.1:{port}"),
        heartbeats,
    }
}

fn serve(mut s: TcpStream, answers: &Answers, heartbeats: &AtomicU64) {
    let _ = s.set_nodelay(true);
    let mut payload = Vec::new();
    let mut out = Vec::new();
    loop {
        let mut len = [0u8; 4];
        if s.read_exact(&mut len).is_err() {
            return;
        }
        payload.resize(i32::from_be_bytes(len).max(0) as usize, 0);
        if s.read_exact(&mut payload).is_err() || payload.len() < 8 {
            return;
        }
        let key = i16::from_be_bytes([payload[0], payload[1]]);
        let version = i16::from_be_bytes([payload[2], payload[3]]);
        let corr = i32::from_be_bytes([payload[4], payload[5], payload[6], payload[7]]);
        let Some((flex, body)) = answers.find(key, version) else {
            return; // unknown request: hang up, the client reports it
        };
        if key == StreamsGroupHeartbeatRequest::API_KEY {
            heartbeats.fetch_add(1, Ordering::Relaxed);
        }
        write_frame(&mut out, corr, flex, body);
        if s.write_all(&out).is_err() {
            return;
        }
    }
}

/// A raw ping-pong server for the baseline: answers every frame with `response` (a complete
/// frame whose correlation id is patched to the request's), through the same read/peek/write
/// steps as the mock.
pub fn start_ping_pong(response_body: Vec<u8>, flexible: bool) -> String {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind ping-pong");
    let addr = l.local_addr().expect("addr").to_string();
    let accept = thread::Builder::new().name("mock-pp-accept".into());
    accept
        .spawn(move || {
            for s in l.incoming() {
                let Ok(mut s) = s else { return };
                let b = response_body.clone();
                let conn = thread::Builder::new().name("mock-pp-conn".into());
                let _ = conn.spawn(move || {
                    let _ = s.set_nodelay(true);
                    let mut payload = Vec::new();
                    let mut out = Vec::new();
                    loop {
                        let mut len = [0u8; 4];
                        if s.read_exact(&mut len).is_err() {
                            return;
                        }
                        payload.resize(i32::from_be_bytes(len).max(0) as usize, 0);
                        if s.read_exact(&mut payload).is_err() || payload.len() < 8 {
                            return;
                        }
                        let corr =
                            i32::from_be_bytes([payload[4], payload[5], payload[6], payload[7]]);
                        write_frame(&mut out, corr, flexible, &b);
                        if s.write_all(&out).is_err() {
                            return;
                        }
                    }
                });
            }
        })
        .expect("spawn ping-pong");
    addr
}

/// The body of the fixed heartbeat answer at `version`, as the mock sends it.
pub fn heartbeat_response_body(interval_ms: i32, version: i16) -> Vec<u8> {
    body(&heartbeat_response(interval_ms), version)
}
