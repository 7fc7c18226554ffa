//! Client-level faults against a loopback mock broker (std TcpListener + thread), speaking
//! real Kafka frames through the protocol module.
//!
//! The mock broker and its answers are here; the tests are grouped by what they exercise:
//! [`negotiation`] (ApiVersions at connect), [`faults`] (one misbehaving connection),
//! [`client`] (several brokers, the observer) and [`sasl_and_coordinator`].

mod client;
mod faults;
#[path = "../support/mock_fetch_cluster.rs"]
mod mock_fetch_cluster;
mod negotiation;
mod reconnect;
mod sasl_and_coordinator;
mod setup_timeout;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use kafka_streams_group::client::BrokerConnectOptions;
use kafka_streams_group::protocol::api::api_versions::{
    ApiVersion, ApiVersionsRequest, ApiVersionsResponse,
};
use kafka_streams_group::protocol::frame::encode_response_frame;
use kafka_streams_group::protocol::header::RequestHeader;
use kafka_streams_group::protocol::Decoder;

/// What the mock does with one request.
enum Act {
    /// Send these bytes (usually a whole frame).
    Send(Vec<u8>),
    /// Say nothing; keep the socket open for this long.
    Silence(Duration),
    /// Send these bytes, then close.
    SendThenClose(Vec<u8>),
}

struct Mock {
    addr: String,
    accepted: Arc<AtomicUsize>,
    seen: Arc<Mutex<Vec<(i16, i16, i32)>>>,
    /// Every request frame payload, in arrival order.
    payloads: Arc<Mutex<Vec<Vec<u8>>>>,
}

/// A broker that handles up to `conns` connections with `handler(header, request_index)`.
fn mock<F>(conns: usize, handler: F) -> Mock
where
    F: Fn(&RequestHeader, usize) -> Act + Send + Sync + 'static,
{
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = l.local_addr().expect("addr").to_string();
    let accepted = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let payloads = Arc::new(Mutex::new(Vec::new()));
    let (acc, sn, pl) = (accepted.clone(), seen.clone(), payloads.clone());
    let handler = Arc::new(handler);
    thread::spawn(move || {
        for _ in 0..conns {
            let Ok((s, _)) = l.accept() else { return };
            acc.fetch_add(1, Ordering::SeqCst);
            let (h, sn, pl) = (handler.clone(), sn.clone(), pl.clone());
            thread::spawn(move || serve(s, &*h, &sn, &pl));
        }
    });
    Mock {
        addr,
        accepted,
        seen,
        payloads,
    }
}

fn serve(
    mut s: TcpStream,
    handler: &dyn Fn(&RequestHeader, usize) -> Act,
    seen: &Mutex<Vec<(i16, i16, i32)>>,
    payloads: &Mutex<Vec<Vec<u8>>>,
) {
    for i in 0.. {
        let mut len = [0u8; 4];
        if s.read_exact(&mut len).is_err() {
            return;
        }
        let mut payload = vec![0u8; i32::from_be_bytes(len) as usize];
        if s.read_exact(&mut payload).is_err() {
            return;
        }
        let mut dec = Decoder::new(&payload);
        // Header v1 is a prefix of v2: enough to route.
        let Ok(h) = RequestHeader::decode(&mut dec, 1) else {
            return;
        };
        seen.lock()
            .unwrap()
            .push((h.api_key, h.api_version, h.correlation_id));
        payloads.lock().unwrap().push(payload.clone());
        match handler(&h, i) {
            Act::Send(b) => {
                if s.write_all(&b).is_err() {
                    return;
                }
            }
            Act::Silence(d) => thread::sleep(d),
            Act::SendThenClose(b) => {
                let _ = s.write_all(&b);
                return;
            }
        }
    }
}

fn api_versions_body(error: i16, keys: &[(i16, i16, i16)]) -> ApiVersionsResponse {
    ApiVersionsResponse {
        error_code: error,
        api_keys: keys
            .iter()
            .map(|&(api_key, min_version, max_version)| ApiVersion {
                api_key,
                min_version,
                max_version,
            })
            .collect(),
        ..Default::default()
    }
}

/// A normal ApiVersions answer advertising ApiVersions 0-4 and Metadata 0-12.
fn api_versions_ok(h: &RequestHeader) -> Vec<u8> {
    let mut b = Vec::new();
    encode_response_frame::<ApiVersionsRequest>(
        &mut b,
        h.correlation_id,
        &api_versions_body(0, &[(18, 0, 4), (3, 0, 12)]),
        h.api_version,
    )
    .expect("encode");
    b
}

fn opts() -> BrokerConnectOptions {
    let mut o = BrokerConnectOptions::default();
    o.transport.connect_timeout = Duration::from_secs(2);
    o.client_id = Some("mock-test".to_string());
    o
}

fn soon() -> Instant {
    Instant::now() + Duration::from_secs(5)
}
