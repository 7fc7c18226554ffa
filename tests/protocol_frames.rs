//! End-to-end frame tests: requests and responses through `encode_*_frame`, an arbitrarily
//! chunked `FrameDecoder`, and `decode_*_frame`, as a client and a test broker would use them.

use kafka_streams_group::protocol::api::api_versions::{
    ApiVersion, ApiVersionsRequest, ApiVersionsResponse,
};
use kafka_streams_group::protocol::api::find_coordinator::{
    Coordinator, FindCoordinatorRequest, FindCoordinatorResponse,
};
use kafka_streams_group::protocol::api::metadata::{MetadataRequest, MetadataResponse};
use kafka_streams_group::protocol::codec::{EncodeError, Request};
use kafka_streams_group::protocol::frame::{
    decode_request_frame, decode_response_frame, encode_request_frame, encode_response_frame,
    peek_correlation_id, FrameDecoder,
};
use kafka_streams_group::protocol::header::RequestHeader;

#[test]
fn api_versions_request_frame_golden() {
    let mut buf = Vec::new();
    let req = ApiVersionsRequest {
        client_software_name: "k".into(),
        client_software_version: "1".into(),
        ..Default::default()
    };
    let range = encode_request_frame(&mut buf, 1, Some("c"), &req, 3).unwrap();
    #[rustfmt::skip]
    let expected = [
        0, 0, 0, 17,                          // length
        0, 18, 0, 3, 0, 0, 0, 1, 0, 1, b'c',  // header v2: key, version, correlation, client id
        0,                                    // header tagged fields
        2, b'k', 2, b'1', 0,                  // body
    ];
    assert_eq!(buf, expected);
    assert_eq!(range, 0..21);

    // v0 uses header v1: no tagged fields, empty body.
    let mut buf = vec![9, 9];
    let range = encode_request_frame(&mut buf, 2, None, &ApiVersionsRequest::default(), 0).unwrap();
    assert_eq!(
        buf,
        [9, 9, 0, 0, 0, 10, 0, 18, 0, 0, 0, 0, 0, 2, 0xff, 0xff]
    );
    assert_eq!(range, 2..16);
}

#[test]
fn api_versions_response_header_is_always_v0() {
    let resp = ApiVersionsResponse {
        api_keys: vec![ApiVersion {
            api_key: 88,
            min_version: 0,
            max_version: 1,
        }],
        ..Default::default()
    };
    let mut buf = Vec::new();
    encode_response_frame::<ApiVersionsRequest>(&mut buf, 5, &resp, 3).unwrap();
    // length 19 = correlation (4) + body 15: no header tagged-field byte.
    assert_eq!(&buf[..8], &[0, 0, 0, 19, 0, 0, 0, 5]);
    assert_eq!(&buf[8..], &[0, 0, 2, 0, 88, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
    let (h, body) = decode_response_frame::<ApiVersionsRequest>(&buf[4..], 3).unwrap();
    assert_eq!(h.correlation_id, 5);
    assert_eq!(body, resp);
}

#[test]
fn flexible_response_header_has_tags() {
    let mut buf = Vec::new();
    encode_response_frame::<MetadataRequest>(&mut buf, 7, &MetadataResponse::default(), 12)
        .unwrap();
    // correlation id, header tags (0), then the body.
    assert_eq!(&buf[4..9], &[0, 0, 0, 7, 0]);
    assert_eq!(peek_correlation_id(&buf[4..]).unwrap(), 7);
    let mut buf = Vec::new();
    encode_response_frame::<MetadataRequest>(&mut buf, 7, &MetadataResponse::default(), 8).unwrap();
    assert_eq!(
        &buf[4..9],
        &[0, 0, 0, 7, 0],
        "v8 body starts right after the correlation id (throttle 0)"
    );
    assert_eq!(
        buf.len(),
        4 + 4 + 4 + 4 + 2 + 4 + 4 + 4,
        "no header tag byte in v8"
    );
}

#[test]
fn request_round_trip_through_frame_decoder_any_split() {
    let mut stream = Vec::new();
    encode_request_frame(
        &mut stream,
        1,
        Some("cli"),
        &ApiVersionsRequest::default(),
        4,
    )
    .unwrap();
    encode_request_frame(
        &mut stream,
        2,
        Some("cli"),
        &MetadataRequest::for_topics(["a", "b"]),
        12,
    )
    .unwrap();
    let fc = FindCoordinatorRequest {
        coordinator_keys: vec!["app".into()],
        ..Default::default()
    };
    encode_request_frame(&mut stream, 3, None, &fc, 6).unwrap();

    for split in 0..=stream.len() {
        let mut dec = FrameDecoder::new();
        let mut frames = Vec::new();
        for chunk in [&stream[..split], &stream[split..]] {
            dec.push(chunk);
            while let Some(f) = dec.next_frame().unwrap() {
                frames.push(f);
            }
        }
        assert_eq!(frames.len(), 3, "split {split}");
        let (h, r) = decode_request_frame::<ApiVersionsRequest>(&frames[0]).unwrap();
        assert_eq!(
            (
                h.api_key,
                h.api_version,
                h.correlation_id,
                h.client_id.as_deref()
            ),
            (18, 4, 1, Some("cli"))
        );
        assert_eq!(r, ApiVersionsRequest::default());
        let (h, r) = decode_request_frame::<MetadataRequest>(&frames[1]).unwrap();
        assert_eq!(h.correlation_id, 2);
        assert_eq!(r, MetadataRequest::for_topics(["a", "b"]));
        assert_eq!(RequestHeader::peek_api(&frames[2]).unwrap(), (10, 6));
        let (h, r) = decode_request_frame::<FindCoordinatorRequest>(&frames[2]).unwrap();
        assert_eq!((h.correlation_id, h.client_id), (3, None));
        assert_eq!(r, fc);
        // Wrong type for the frame is a typed error, not a misparse.
        assert!(decode_request_frame::<MetadataRequest>(&frames[2]).is_err());
    }
}

#[test]
fn response_round_trip_and_trailing_bytes() {
    let resp = FindCoordinatorResponse {
        coordinators: vec![Coordinator {
            key: "app".into(),
            node_id: 1,
            host: "localhost".into(),
            port: 9092,
            error_code: 0,
            error_message: None,
        }],
        ..Default::default()
    };
    let mut buf = Vec::new();
    encode_response_frame::<FindCoordinatorRequest>(&mut buf, 42, &resp, 6).unwrap();
    let (h, r) = decode_response_frame::<FindCoordinatorRequest>(&buf[4..], 6).unwrap();
    assert_eq!((h.correlation_id, r), (42, resp));
    let mut extra = buf[4..].to_vec();
    extra.push(0);
    let e = decode_response_frame::<FindCoordinatorRequest>(&extra, 6).unwrap_err();
    assert!(e.to_string().contains("FindCoordinatorResponse v6"), "{e}");
}

#[test]
fn failed_encode_leaves_buffer_untouched() {
    let mut buf = vec![1, 2, 3];
    let cap = buf.capacity();
    let bad = FindCoordinatorRequest {
        key: "g".into(),
        key_type: 1,
        ..Default::default()
    };
    assert!(matches!(
        encode_request_frame(&mut buf, 1, None, &bad, 0),
        Err(EncodeError::FieldNotInVersion {
            field: "KeyType",
            ..
        })
    ));
    assert_eq!(buf, [1, 2, 3]);
    assert!(buf.capacity() >= cap);
    assert!(matches!(
        encode_request_frame(&mut buf, 1, None, &ApiVersionsRequest::default(), 6),
        Err(EncodeError::UnsupportedVersion {
            api: "ApiVersionsRequest",
            version: 6
        })
    ));
    assert_eq!(buf, [1, 2, 3]);
}

#[test]
fn header_versions_follow_flexibility() {
    assert_eq!(MetadataRequest::request_header_version(8), 1);
    assert_eq!(MetadataRequest::request_header_version(9), 2);
    assert_eq!(MetadataRequest::response_header_version(8), 0);
    assert_eq!(MetadataRequest::response_header_version(9), 1);
    assert_eq!(ApiVersionsRequest::response_header_version(4), 0);
}

/// Proxy for "no allocation when the buffer has capacity": the reused buffer is never
/// reallocated. (A counting global allocator would be the real proof, but it needs `unsafe`,
/// which this package forbids.)
#[test]
fn reused_buffer_is_not_reallocated() {
    let mut buf = Vec::with_capacity(4096);
    let req = MetadataRequest::for_topics(["input", "output"]);
    let fc = FindCoordinatorRequest {
        coordinator_keys: vec!["app".into()],
        ..Default::default()
    };
    let ptr = buf.as_ptr();
    for i in 0..100 {
        buf.clear();
        encode_request_frame(&mut buf, i, Some("client"), &req, 12).unwrap();
        encode_request_frame(&mut buf, i, Some("client"), &fc, 6).unwrap();
        encode_response_frame::<ApiVersionsRequest>(
            &mut buf,
            i,
            &ApiVersionsResponse {
                finalized_features_epoch: 1,
                ..Default::default()
            },
            4,
        )
        .unwrap();
        assert_eq!(buf.as_ptr(), ptr);
        assert_eq!(buf.capacity(), 4096);
    }
}
