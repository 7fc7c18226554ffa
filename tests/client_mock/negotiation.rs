//! Connecting: ApiVersions negotiation, its fallbacks, inconsistent answers and APIs the broker
//! lacks.

use kafka_streams_group::client::{BrokerConnection, ClientError};
use kafka_streams_group::protocol::api::api_versions::ApiVersionsRequest;
use kafka_streams_group::protocol::frame::encode_response_frame;
use kafka_streams_group::protocol::{ApiMessage, BrokerErrorKind};

use crate::{api_versions_body, api_versions_ok, mock, opts, soon, Act};

#[test]
fn connect_negotiates_api_versions_and_correlation_ids_increase() {
    let m = mock(1, |h, _| Act::Send(api_versions_ok(h)));
    let mut c = BrokerConnection::connect(&m.addr, &opts(), soon()).expect("connect");
    assert_eq!(c.api_versions().range(3), Some((0, 12)));
    assert_eq!(c.api_versions().range(18), Some((0, 4)));
    assert_eq!(c.api_versions().range(19), None);
    let v = c.pick_version::<ApiVersionsRequest>().expect("pick");
    assert_eq!(v, 4.min(ApiVersionsRequest::MAX_VERSION));
    for _ in 0..3 {
        c.send_request(&ApiVersionsRequest::default(), v, soon())
            .expect("send");
    }
    let seen = m.seen.lock().unwrap().clone();
    let cids: Vec<i32> = seen.iter().map(|s| s.2).collect();
    assert_eq!(cids, vec![0, 1, 2, 3]);
    assert!(seen.iter().all(|s| s.0 == 18));
    // The first ApiVersions goes out at the newest version this library knows.
    assert_eq!(seen[0].1, ApiVersionsRequest::MAX_VERSION);
}

#[test]
fn unsupported_api_versions_version_falls_back() {
    // An "old broker": knows ApiVersions 0-2 only; answers anything newer with
    // UNSUPPORTED_VERSION in a v0 body (what real brokers do).
    let m = mock(1, |h, _| {
        let mut b = Vec::new();
        if h.api_version > 2 {
            encode_response_frame::<ApiVersionsRequest>(
                &mut b,
                h.correlation_id,
                &api_versions_body(BrokerErrorKind::UnsupportedVersion.code(), &[(18, 0, 2)]),
                0,
            )
            .expect("encode");
        } else {
            encode_response_frame::<ApiVersionsRequest>(
                &mut b,
                h.correlation_id,
                &api_versions_body(0, &[(18, 0, 2), (3, 1, 9)]),
                h.api_version,
            )
            .expect("encode");
        }
        Act::Send(b)
    });
    let c = BrokerConnection::connect(&m.addr, &opts(), soon()).expect("connect");
    assert_eq!(c.api_versions().range(3), Some((1, 9)));
    let versions: Vec<i16> = m.seen.lock().unwrap().iter().map(|s| s.1).collect();
    assert_eq!(versions, vec![ApiVersionsRequest::MAX_VERSION, 2]);
}

#[test]
fn unsupported_without_a_range_falls_back_to_v0() {
    let m = mock(1, |h, _| {
        let mut b = Vec::new();
        let body = if h.api_version > 0 {
            api_versions_body(BrokerErrorKind::UnsupportedVersion.code(), &[])
        } else {
            api_versions_body(0, &[(18, 0, 0)])
        };
        encode_response_frame::<ApiVersionsRequest>(&mut b, h.correlation_id, &body, 0)
            .expect("encode");
        Act::Send(b)
    });
    let c = BrokerConnection::connect(&m.addr, &opts(), soon()).expect("connect");
    assert_eq!(c.api_versions().range(18), Some((0, 0)));
    let versions: Vec<i16> = m.seen.lock().unwrap().iter().map(|s| s.1).collect();
    assert_eq!(versions, vec![ApiVersionsRequest::MAX_VERSION, 0]);
}

#[test]
fn v0_fallback_body_without_unsupported_version_is_rejected() {
    // A broker that answers a flexible ApiVersions request with a v0 body saying "no error":
    // not something Kafka does; the client must not trust it.
    let m = mock(1, |h, _| {
        let mut b = Vec::new();
        encode_response_frame::<ApiVersionsRequest>(
            &mut b,
            h.correlation_id,
            &api_versions_body(0, &[(18, 0, 4)]),
            0,
        )
        .expect("encode");
        Act::Send(b)
    });
    let err = BrokerConnection::connect(&m.addr, &opts(), soon()).expect_err("inconsistent");
    assert!(matches!(err, ClientError::Protocol { .. }), "{err:?}");
}

#[test]
fn api_missing_on_broker_is_unsupported_api() {
    let m = mock(1, |h, _| Act::Send(api_versions_ok(h)));
    let c = BrokerConnection::connect(&m.addr, &opts(), soon()).expect("connect");
    let err = c
        .pick_version::<kafka_streams_group::protocol::api::sasl_handshake::SaslHandshakeRequest>()
        .expect_err("not listed");
    assert!(
        matches!(
            err,
            ClientError::UnsupportedApi {
                broker_range: None,
                ..
            }
        ),
        "{err:?}"
    );
}
