//! One connection against a misbehaving broker: wrong correlation ids, silence, truncated or
//! undecodable frames, resets.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::thread;
use std::time::{Duration, Instant};

use kafka_streams_group::client::{BrokerConnection, ClientError};
use kafka_streams_group::protocol::api::api_versions::ApiVersionsRequest;
use kafka_streams_group::protocol::header::RequestHeader;
use kafka_streams_group::protocol::Decoder;
use kafka_streams_group::transport::TransportError;

use crate::{api_versions_ok, mock, opts, soon, Act};

#[test]
fn wrong_correlation_id_drops_the_connection() {
    let m = mock(1, |h, i| {
        if i == 0 {
            return Act::Send(api_versions_ok(h));
        }
        let mut wrong = h.clone();
        wrong.correlation_id += 7;
        Act::Send(api_versions_ok(&wrong))
    });
    let mut c = BrokerConnection::connect(&m.addr, &opts(), soon()).expect("connect");
    let err = c
        .send_request(&ApiVersionsRequest::default(), 3, soon())
        .expect_err("mismatch");
    assert!(
        matches!(
            err,
            ClientError::CorrelationMismatch {
                expected: 1,
                got: 8,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(c.is_broken());
    let again = c.send_request(&ApiVersionsRequest::default(), 3, soon());
    assert!(
        matches!(
            again,
            Err(ClientError::Transport(TransportError::Broken { .. }))
        ),
        "{again:?}"
    );
}

#[test]
fn silent_broker_request_timeout_fires() {
    let m = mock(1, |h, i| {
        if i == 0 {
            Act::Send(api_versions_ok(h))
        } else {
            Act::Silence(Duration::from_secs(2))
        }
    });
    let mut c = BrokerConnection::connect(&m.addr, &opts(), soon()).expect("connect");
    let start = Instant::now();
    let err = c
        .send_request(
            &ApiVersionsRequest::default(),
            3,
            start + Duration::from_millis(300),
        )
        .expect_err("timeout");
    assert!(err.is_timeout(), "{err:?}");
    let took = start.elapsed();
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_secs(1),
        "{took:?}"
    );
    assert!(c.is_broken());
}

#[test]
fn silent_broker_during_connect_respects_deadline() {
    let m = mock(1, |_, _| Act::Silence(Duration::from_secs(2)));
    let start = Instant::now();
    let err = BrokerConnection::connect(&m.addr, &opts(), start + Duration::from_millis(300))
        .expect_err("timeout");
    assert!(err.is_timeout(), "{err:?}");
    assert!(start.elapsed() < Duration::from_secs(1));
}

#[test]
fn truncated_response_is_eof_mid_frame() {
    let m = mock(1, |h, i| {
        let full = api_versions_ok(h);
        if i == 0 {
            Act::Send(full)
        } else {
            Act::SendThenClose(full[..full.len() - 3].to_vec())
        }
    });
    let mut c = BrokerConnection::connect(&m.addr, &opts(), soon()).expect("connect");
    let err = c
        .send_request(&ApiVersionsRequest::default(), 3, soon())
        .expect_err("eof");
    assert!(
        matches!(
            err,
            ClientError::Transport(TransportError::Eof {
                mid_frame: true,
                ..
            })
        ),
        "{err:?}"
    );
    assert!(c.is_broken());
}

#[test]
fn undecodable_response_is_a_decode_error_and_drops_the_connection() {
    let m = mock(1, |h, i| {
        if i == 0 {
            return Act::Send(api_versions_ok(h));
        }
        // Right correlation id, then a body cut short (frame itself complete).
        let mut p = h.correlation_id.to_be_bytes().to_vec();
        p.extend([0, 0, 0]);
        let mut f = (p.len() as i32).to_be_bytes().to_vec();
        f.extend(p);
        Act::Send(f)
    });
    let mut c = BrokerConnection::connect(&m.addr, &opts(), soon()).expect("connect");
    let err = c
        .send_request(&ApiVersionsRequest::default(), 3, soon())
        .expect_err("decode");
    assert!(matches!(err, ClientError::Decode { .. }), "{err:?}");
    assert!(c.is_broken());
}

#[test]
fn reset_during_request_is_a_transport_error() {
    // Server side: after ApiVersions, read only the next frame's length prefix and close while
    // the rest is unread, which makes Linux answer with RST.
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = l.local_addr().expect("addr").to_string();
    thread::spawn(move || {
        let (mut s, _) = l.accept().expect("accept");
        let mut len = [0u8; 4];
        s.read_exact(&mut len).expect("len");
        let mut p = vec![0u8; i32::from_be_bytes(len) as usize];
        s.read_exact(&mut p).expect("payload");
        let h = RequestHeader::decode(&mut Decoder::new(&p), 1).expect("header");
        s.write_all(&api_versions_ok(&h)).expect("reply");
        s.read_exact(&mut len).expect("len2");
        thread::sleep(Duration::from_millis(100));
    });
    let mut c = BrokerConnection::connect(&addr, &opts(), soon()).expect("connect");
    let big = ApiVersionsRequest {
        client_software_name: "x".repeat(1000),
        client_software_version: "1".to_string(),
        ..Default::default()
    };
    let err = c.send_request(&big, 3, soon()).expect_err("reset");
    match &err {
        ClientError::Transport(TransportError::Io { source, .. }) => {
            assert_eq!(source.kind(), std::io::ErrorKind::ConnectionReset, "{err}")
        }
        other => panic!("expected a reset, got {other:?}"),
    }
    assert!(c.is_broken());
}
