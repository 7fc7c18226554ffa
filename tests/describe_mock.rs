//! `describe_streams_groups` against a loopback mock broker (std TcpListener + threads, real
//! Kafka frames): coordinator moves are retried, a broker without StreamsGroupDescribe is
//! `Unsupported`, a coordinator that never loads ends in a timeout, per-group errors are typed.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use kafka_streams_group::protocol::api::api_versions::{
    ApiVersion, ApiVersionsRequest, ApiVersionsResponse,
};
use kafka_streams_group::protocol::api::find_coordinator::{
    Coordinator, FindCoordinatorRequest, FindCoordinatorResponse,
};
use kafka_streams_group::protocol::api::streams_group_describe::{
    DescribedGroup, Member, StreamsGroupDescribeRequest, StreamsGroupDescribeResponse,
};
use kafka_streams_group::protocol::frame::encode_response_frame;
use kafka_streams_group::protocol::header::RequestHeader;
use kafka_streams_group::protocol::{BrokerErrorKind, Decodable, Decoder, Request};
use kafka_streams_group::{
    describe_streams_groups, ClientConfig, DescribedGroupState, Error, StreamsTaskId,
};

/// How the mock answers StreamsGroupDescribe: (call index, group id) → error code.
type DescribeRule = dyn Fn(usize, &str) -> i16 + Send + Sync;

struct Mock {
    addr: String,
    describes: Arc<AtomicUsize>,
    lookups: Arc<AtomicUsize>,
}

fn mock(
    advertise_describe: bool,
    rule: impl Fn(usize, &str) -> i16 + Send + Sync + 'static,
) -> Mock {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().expect("addr").port();
    let describes = Arc::new(AtomicUsize::new(0));
    let lookups = Arc::new(AtomicUsize::new(0));
    let rule: Arc<DescribeRule> = Arc::new(rule);
    let (d, f) = (describes.clone(), lookups.clone());
    thread::spawn(move || {
        for s in l.incoming() {
            let Ok(s) = s else { return };
            let (d, f, rule) = (d.clone(), f.clone(), rule.clone());
            thread::spawn(move || serve(s, port, advertise_describe, &d, &f, &*rule));
        }
    });
    Mock {
        addr: format!("127.0.0.1:{port}"),
        describes,
        lookups,
    }
}

fn serve(
    mut s: TcpStream,
    port: u16,
    advertise_describe: bool,
    describes: &AtomicUsize,
    lookups: &AtomicUsize,
    rule: &DescribeRule,
) {
    loop {
        let mut len = [0u8; 4];
        if s.read_exact(&mut len).is_err() {
            return;
        }
        let mut payload = vec![0u8; i32::from_be_bytes(len) as usize];
        if s.read_exact(&mut payload).is_err() {
            return;
        }
        let mut peek = Decoder::new(&payload);
        let Ok(h) = RequestHeader::decode(&mut peek, 1) else {
            return;
        };
        let mut out = Vec::new();
        match h.api_key {
            18 => {
                let mut keys = vec![(18, 0, 4), (10, 0, 6)];
                if advertise_describe {
                    keys.push((89, 0, 1));
                }
                let body = ApiVersionsResponse {
                    api_keys: keys
                        .into_iter()
                        .map(|(api_key, min_version, max_version)| ApiVersion {
                            api_key,
                            min_version,
                            max_version,
                        })
                        .collect(),
                    ..Default::default()
                };
                encode_response_frame::<ApiVersionsRequest>(
                    &mut out,
                    h.correlation_id,
                    &body,
                    h.api_version,
                )
                .expect("encode");
            }
            10 => {
                lookups.fetch_add(1, Ordering::SeqCst);
                let v = h.api_version;
                let mut dec = Decoder::new(&payload);
                RequestHeader::decode(&mut dec, FindCoordinatorRequest::request_header_version(v))
                    .expect("header");
                let req = FindCoordinatorRequest::decode(&mut dec, v).expect("find coordinator");
                let body = if v < 4 {
                    FindCoordinatorResponse {
                        node_id: 1,
                        host: "127.0.0.1".into(),
                        port: i32::from(port),
                        ..Default::default()
                    }
                } else {
                    FindCoordinatorResponse {
                        coordinators: req
                            .coordinator_keys
                            .iter()
                            .map(|k| Coordinator {
                                key: k.clone(),
                                node_id: 1,
                                host: "127.0.0.1".into(),
                                port: i32::from(port),
                                ..Default::default()
                            })
                            .collect(),
                        ..Default::default()
                    }
                };
                encode_response_frame::<FindCoordinatorRequest>(
                    &mut out,
                    h.correlation_id,
                    &body,
                    v,
                )
                .expect("encode");
            }
            89 => {
                let call = describes.fetch_add(1, Ordering::SeqCst);
                let v = h.api_version;
                let mut dec = Decoder::new(&payload);
                RequestHeader::decode(
                    &mut dec,
                    StreamsGroupDescribeRequest::request_header_version(v),
                )
                .expect("header");
                let req = StreamsGroupDescribeRequest::decode(&mut dec, v).expect("describe");
                let body = StreamsGroupDescribeResponse {
                    throttle_time_ms: 0,
                    groups: req
                        .group_ids
                        .iter()
                        .map(|g| described(g, rule(call, g)))
                        .collect(),
                };
                encode_response_frame::<StreamsGroupDescribeRequest>(
                    &mut out,
                    h.correlation_id,
                    &body,
                    v,
                )
                .expect("encode");
            }
            _ => return,
        }
        if s.write_all(&out).is_err() {
            return;
        }
    }
}

fn described(group: &str, error_code: i16) -> DescribedGroup {
    if error_code != 0 {
        return DescribedGroup {
            error_code,
            error_message: Some(format!("mock error for {group}")),
            group_id: group.into(),
            ..Default::default()
        };
    }
    let mut member = Member {
        member_id: format!("{group}-m1"),
        member_epoch: 5,
        process_id: "p1".into(),
        ..Default::default()
    };
    member.assignment.active_tasks.push(
        kafka_streams_group::protocol::api::streams_group_describe::TaskIds {
            subtopology_id: "0".into(),
            partitions: vec![1, 0],
        },
    );
    DescribedGroup {
        group_id: group.into(),
        group_state: "Stable".into(),
        group_epoch: 5,
        assignment_epoch: 5,
        members: vec![member],
        ..Default::default()
    }
}

fn config(m: &Mock) -> ClientConfig {
    ClientConfig::new(m.addr.as_str())
}

#[test]
fn not_coordinator_is_retried_at_a_fresh_lookup() {
    // First describe: NOT_COORDINATOR (16) for every group; then success.
    let m = mock(true, |call, _| if call == 0 { 16 } else { 0 });
    let ds = describe_streams_groups(&config(&m), &["b", "a"], Duration::from_secs(5))
        .expect("describe after retry");
    assert_eq!(ds.len(), 2);
    assert_eq!(ds[0].group_id, "b", "order as asked");
    assert_eq!(ds[1].group_id, "a");
    assert_eq!(ds[0].state, DescribedGroupState::Stable);
    let active: Vec<_> = ds[1].members[0].assignment.active.iter().cloned().collect();
    assert_eq!(
        active,
        [StreamsTaskId::new("0", 0), StreamsTaskId::new("0", 1)]
    );
    assert_eq!(
        m.describes.load(Ordering::SeqCst),
        2,
        "one retry, both groups in one request"
    );
    assert!(
        m.lookups.load(Ordering::SeqCst) >= 4,
        "coordinators looked up again"
    );
}

#[test]
fn a_per_group_error_is_typed_and_names_the_group() {
    let m = mock(true, |_, g| if g == "gone" { 69 } else { 0 });
    let err = describe_streams_groups(&config(&m), &["ok", "gone"], Duration::from_secs(5))
        .expect_err("gone is not found");
    match &err {
        Error::Broker {
            kind,
            message,
            context,
            ..
        } => {
            assert_eq!(*kind, BrokerErrorKind::GroupIdNotFound);
            assert_eq!(context.group.as_deref(), Some("gone"));
            assert_eq!(context.api, Some("StreamsGroupDescribe"));
            assert_eq!(message.as_deref(), Some("mock error for gone"));
        }
        other => panic!("expected a broker error, got {other:?}"),
    }
    assert!(!err.is_retriable());
}

#[test]
fn a_coordinator_that_never_loads_times_out() {
    let m = mock(true, |_, _| 14); // COORDINATOR_LOAD_IN_PROGRESS
    let started = Instant::now();
    let err = describe_streams_groups(&config(&m), &["g"], Duration::from_millis(800))
        .expect_err("never loads");
    let took = started.elapsed();
    assert!(matches!(err, Error::Timeout { .. }), "{err:?}");
    assert!(
        err.to_string().contains("COORDINATOR_LOAD_IN_PROGRESS"),
        "{err}"
    );
    assert!(took < Duration::from_secs(3), "took {took:?}");
    assert!(m.describes.load(Ordering::SeqCst) >= 2, "retried");
}

#[test]
fn a_broker_without_streams_group_describe_is_unsupported() {
    let m = mock(false, |_, _| 0);
    let err = describe_streams_groups(&config(&m), &["g"], Duration::from_secs(5))
        .expect_err("unsupported");
    assert!(matches!(err, Error::Unsupported { .. }), "{err:?}");
    assert_eq!(m.describes.load(Ordering::SeqCst), 0);
}

#[test]
fn no_groups_is_no_request() {
    // Nothing listens here: an empty list must not even connect.
    let ds = describe_streams_groups(
        &ClientConfig::new("127.0.0.1:1"),
        &[],
        Duration::from_millis(100),
    )
    .expect("empty");
    assert!(ds.is_empty());
}
