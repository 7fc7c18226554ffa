//! The checks behind every fuzz target, as plain safe functions of the input bytes.
//!
//! This file is compiled twice: as `kafka_streams_group_fuzz::harness` for the libFuzzer
//! binaries, and via `#[path]` inside the main package's `tests/fuzz_regressions/main.rs`,
//! which replays the committed seeds and crash reproducers through exactly the same checks on
//! every `cargo test`. So it may use only the library's public API and `std`.
//!
//! Properties checked for every input:
//! * decoding never panics (any failure must be a typed `DecodeError`);
//! * if decoding succeeds, re-encoding at the same version succeeds, decoding the re-encoded
//!   bytes gives an equal value, and encoding that value again gives identical bytes;
//! * for the frame splitter: the frames (and the error, if any) do not depend on how the byte
//!   stream was chunked, and no frame exceeds the configured maximum.
#![allow(dead_code)] // the test build uses only part of this module

use std::fmt::Debug;

use kafka_streams_group::protocol::api::api_versions::{
    decode_api_versions_response_frame, ApiVersionsRequest, ApiVersionsResponse,
};
use kafka_streams_group::protocol::api::create_topics::CreateTopicsResponse;
use kafka_streams_group::protocol::api::delete_records::DeleteRecordsResponse;
use kafka_streams_group::protocol::api::fetch::FetchResponse;
use kafka_streams_group::protocol::api::find_coordinator::FindCoordinatorResponse;
use kafka_streams_group::protocol::api::init_producer_id::InitProducerIdResponse;
use kafka_streams_group::protocol::api::list_offsets::ListOffsetsResponse;
use kafka_streams_group::protocol::api::metadata::MetadataResponse;
use kafka_streams_group::protocol::api::offset_commit::OffsetCommitResponse;
use kafka_streams_group::protocol::api::offset_fetch::OffsetFetchResponse;
use kafka_streams_group::protocol::api::offset_for_leader_epoch::OffsetForLeaderEpochResponse;
use kafka_streams_group::protocol::api::produce::{ProduceRequest, ProduceResponse};
use kafka_streams_group::protocol::api::sasl_authenticate::SaslAuthenticateResponse;
use kafka_streams_group::protocol::api::sasl_handshake::SaslHandshakeResponse;
use kafka_streams_group::protocol::api::streams_group_describe::{
    StreamsGroupDescribeRequest, StreamsGroupDescribeResponse,
};
use kafka_streams_group::protocol::api::streams_group_heartbeat::{
    StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse,
};
use kafka_streams_group::protocol::codec::{decode_message, encode_message};
use kafka_streams_group::protocol::frame::{
    decode_request_frame, decode_response_frame, encode_request_frame, encode_response_frame,
    peek_correlation_id, FrameDecoder,
};
use kafka_streams_group::protocol::header::ResponseHeader;
use kafka_streams_group::protocol::records::{
    admit_uncommitted, AbortedTransaction, BatchBuilder, BatchReader, DecodeLimits, Header,
    ReadCommitted, RecordSpec,
};
use kafka_streams_group::protocol::{ApiMessage, DecodeError, Decoder, Encoder};

/// The check a target runs on one input.
pub type Check = fn(&[u8]);

/// Every fuzz target: its name (= the binary in `fuzz/fuzz_targets/` and the directory under
/// `fuzz/seeds/` and `fuzz/regressions/`) and the check it runs on one input.
pub const TARGETS: &[(&str, Check)] = &[
    ("frame_decoder", frame_decoder),
    (
        "api_versions_response",
        message_round_trip::<ApiVersionsResponse>,
    ),
    ("api_versions_response_frame", api_versions_response_frame),
    ("metadata_response", message_round_trip::<MetadataResponse>),
    (
        "find_coordinator_response",
        message_round_trip::<FindCoordinatorResponse>,
    ),
    (
        "sasl_handshake_response",
        message_round_trip::<SaslHandshakeResponse>,
    ),
    (
        "sasl_authenticate_response",
        message_round_trip::<SaslAuthenticateResponse>,
    ),
    (
        "create_topics_response",
        message_round_trip::<CreateTopicsResponse>,
    ),
    (
        "streams_group_heartbeat_response",
        message_round_trip::<StreamsGroupHeartbeatResponse>,
    ),
    (
        "streams_group_describe_response",
        message_round_trip::<StreamsGroupDescribeResponse>,
    ),
    (
        "streams_group_heartbeat_request",
        message_round_trip::<StreamsGroupHeartbeatRequest>,
    ),
    (
        "streams_group_heartbeat_request_frame",
        heartbeat_request_frame,
    ),
    (
        "streams_group_describe_request",
        message_round_trip::<StreamsGroupDescribeRequest>,
    ),
    (
        "offset_commit_response",
        message_round_trip::<OffsetCommitResponse>,
    ),
    (
        "offset_fetch_response",
        message_round_trip::<OffsetFetchResponse>,
    ),
    ("fetch_response", message_round_trip::<FetchResponse>),
    (
        "list_offsets_response",
        message_round_trip::<ListOffsetsResponse>,
    ),
    ("produce_response", message_round_trip::<ProduceResponse>),
    ("produce_request", message_round_trip::<ProduceRequest>),
    (
        "init_producer_id_response",
        message_round_trip::<InitProducerIdResponse>,
    ),
    (
        "offset_for_leader_epoch_response",
        message_round_trip::<OffsetForLeaderEpochResponse>,
    ),
    (
        "delete_records_response",
        message_round_trip::<DeleteRecordsResponse>,
    ),
    ("record_batches", record_batches),
];

/// Looks up a target's check by name.
pub fn target(name: &str) -> Option<Check> {
    TARGETS.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
}

/// The message version a message target uses: the first input byte modulo the number of
/// versions implemented, so every version is reachable from any input.
pub fn pick_version<M: ApiMessage>(selector: u8) -> i16 {
    let span = i32::from(M::MAX_VERSION) - i32::from(M::MIN_VERSION) + 1;
    // span >= 1 and the remainder < span <= i16 range, so the sum stays within the versions.
    (i32::from(M::MIN_VERSION) + i32::from(selector) % span) as i16
}

/// The fuzz input that makes a message target decode `msg` at `version`: the version selector
/// byte, then the encoded body. Used to write seeds.
pub fn message_input<M: ApiMessage>(msg: &M, version: i16) -> Vec<u8> {
    let mut out = vec![(version - M::MIN_VERSION) as u8];
    if let Err(e) = encode_message(&mut out, msg, version) {
        panic!("{} v{version}: seed does not encode: {e}", M::NAME);
    }
    out
}

/// Message target: decode the body after the version byte; when that succeeds, check the
/// round trip.
pub fn message_round_trip<M: ApiMessage + PartialEq + Debug>(data: &[u8]) {
    let Some((&selector, body)) = data.split_first() else {
        return;
    };
    let version = pick_version::<M>(selector);
    let msg = match decode_message::<M>(body, version) {
        Ok(m) => m,
        Err(e) => {
            // Error rendering is part of the decode path a client logs; it must not panic.
            let _ = e.to_string();
            return;
        }
    };
    assert_round_trip(&msg, version);
}

/// Encodes `msg`, decodes it back, compares, and checks that encoding is deterministic.
pub fn assert_round_trip<M: ApiMessage + PartialEq + Debug>(msg: &M, version: i16) {
    let name = M::NAME;
    let mut first = Vec::new();
    if let Err(e) = encode_message(&mut first, msg, version) {
        panic!("{name} v{version}: decoded but cannot be re-encoded: {e}\nvalue: {msg:?}");
    }
    let again = match decode_message::<M>(&first, version) {
        Ok(m) => m,
        Err(e) => panic!("{name} v{version}: re-encoded bytes do not decode: {e}\nvalue: {msg:?}"),
    };
    assert_eq!(
        &again, msg,
        "{name} v{version}: round trip changed the value"
    );
    // Encoding appends to a reused buffer without touching what is already there.
    let mut second = vec![0xA5; 3];
    if let Err(e) = encode_message(&mut second, &again, version) {
        panic!("{name} v{version}: second encode failed: {e}");
    }
    assert_eq!(
        &second[..3],
        &[0xA5; 3],
        "{name} v{version}: prefix overwritten"
    );
    assert_eq!(
        &second[3..],
        &first[..],
        "{name} v{version}: encoding not deterministic"
    );
}

/// What draining a [`FrameDecoder`] produced.
#[derive(Debug, PartialEq)]
struct Drained {
    frames: Vec<Vec<u8>>,
    error: Option<DecodeError>,
    /// Bytes still buffered at the end (only compared when there was no error).
    buffered: usize,
}

/// Pushes `chunks` one at a time, taking every complete frame after each push; stops at the
/// first error (the stream is then out of sync, as the decoder documents).
fn drain(max: usize, chunks: &[&[u8]]) -> Drained {
    let mut dec = FrameDecoder::with_max_frame_size(max);
    let mut frames = Vec::new();
    for chunk in chunks {
        dec.push(chunk);
        loop {
            match dec.next_frame() {
                Ok(Some(f)) => {
                    assert!(f.len() <= max, "frame of {} bytes, max {max}", f.len());
                    frames.push(f);
                }
                Ok(None) => {
                    assert!(
                        dec.check().is_ok(),
                        "check() fails where next_frame() waits"
                    );
                    // Waiting means the pending frame is incomplete: less than prefix + max.
                    assert!(
                        dec.buffered() < 4 + max,
                        "waiting with {} bytes buffered, max frame {max}",
                        dec.buffered()
                    );
                    break;
                }
                Err(e) => {
                    assert_eq!(dec.check(), Err(e.clone()), "check() disagrees");
                    let _ = e.to_string();
                    return Drained {
                        frames,
                        error: Some(e),
                        buffered: 0,
                    };
                }
            }
        }
    }
    Drained {
        frames,
        error: None,
        buffered: dec.buffered(),
    }
}

/// Frame target. Input: `[max/4, n, n split lengths..., stream...]`. The stream is fed to a
/// `FrameDecoder` (max frame size = 4 × the first byte, so oversized prefixes are common) in the
/// chunks the split lengths describe, and the result compared with feeding it in one piece.
/// Every frame is then decoded as a response header (v0 and v1) and as a whole
/// StreamsGroupHeartbeat response frame, round-tripping whatever decodes.
pub fn frame_decoder(data: &[u8]) {
    let [max_sel, nsplit, rest @ ..] = data else {
        return;
    };
    let max = usize::from(*max_sel) * 4;
    let nsplit = usize::from(*nsplit % 8).min(rest.len());
    let (splits, stream) = rest.split_at(nsplit);

    let mut chunks: Vec<&[u8]> = Vec::new();
    let mut pos = 0;
    for &len in splits {
        let end = (pos + usize::from(len)).min(stream.len());
        chunks.push(&stream[pos..end]);
        pos = end;
    }
    chunks.push(&stream[pos..]);

    let whole = drain(max, &[stream]);
    let split = drain(max, &chunks);
    assert_eq!(split, whole, "result depends on how the stream was split");
    if whole.error.is_none() {
        let used: usize = whole.frames.iter().map(|f| f.len() + 4).sum();
        assert_eq!(whole.buffered, stream.len() - used, "buffered() is wrong");
    }
    for frame in &whole.frames {
        response_frame(frame);
    }
}

/// Decodes one frame payload the ways a client would.
fn response_frame(frame: &[u8]) {
    for hv in [0, 1] {
        let mut dec = Decoder::new(frame);
        let Ok(h) = ResponseHeader::decode(&mut dec, hv) else {
            continue;
        };
        assert_eq!(peek_correlation_id(frame), Ok(h.correlation_id));
        let mut buf = Vec::new();
        if let Err(e) = h.encode(&mut Encoder::new(&mut buf), hv) {
            panic!("response header v{hv} decoded but does not encode: {e}");
        }
        let mut dec = Decoder::new(&buf);
        assert_eq!(ResponseHeader::decode(&mut dec, hv), Ok(h));
        assert!(dec.is_empty(), "header v{hv} re-encoding has extra bytes");
    }
    type Hb = StreamsGroupHeartbeatRequest;
    for v in Hb::MIN_VERSION..=Hb::MAX_VERSION {
        let Ok((h, body)) = decode_response_frame::<Hb>(frame, v) else {
            continue;
        };
        let mut buf = Vec::new();
        if let Err(e) = encode_response_frame::<Hb>(&mut buf, h.correlation_id, &body, v) {
            panic!("heartbeat response frame v{v} decoded but does not encode: {e}");
        }
        match decode_response_frame::<Hb>(&buf[4..], v) {
            Ok((h2, body2)) => {
                assert_eq!(h2, h);
                assert_eq!(body2, body);
            }
            Err(e) => panic!("heartbeat response frame v{v} re-encoding does not decode: {e}"),
        }
    }
}

/// Mock-broker target: the whole input is a request frame payload (header + body) that must be a
/// StreamsGroupHeartbeat request; whatever decodes must round-trip through
/// `encode_request_frame`.
pub fn heartbeat_request_frame(data: &[u8]) {
    type Hb = StreamsGroupHeartbeatRequest;
    let Ok((h, body)) = decode_request_frame::<Hb>(data) else {
        return;
    };
    let mut buf = Vec::new();
    if let Err(e) = encode_request_frame::<Hb>(
        &mut buf,
        h.correlation_id,
        h.client_id.as_deref(),
        &body,
        h.api_version,
    ) {
        panic!("request frame decoded but does not encode: {e}\n{h:?}\n{body:?}");
    }
    match decode_request_frame::<Hb>(&buf[4..]) {
        Ok((h2, body2)) => {
            assert_eq!(h2, h);
            assert_eq!(body2, body);
        }
        Err(e) => panic!("request frame re-encoding does not decode: {e}"),
    }
}

/// ApiVersions response frame as the client reads it (header v0, body at the requested version
/// with Kafka's fallback to v0). Input: `[version selector, frame payload...]`. Whatever decodes
/// must round-trip at the body version that decoded.
pub fn api_versions_response_frame(data: &[u8]) {
    let Some((&selector, frame)) = data.split_first() else {
        return;
    };
    let version = pick_version::<ApiVersionsResponse>(selector);
    let Ok((h, body, used)) = decode_api_versions_response_frame(frame, version) else {
        return;
    };
    assert!(
        used == version || used == 0,
        "decoded at v{used}, asked for v{version}"
    );
    let mut buf = Vec::new();
    if let Err(e) =
        encode_response_frame::<ApiVersionsRequest>(&mut buf, h.correlation_id, &body, used)
    {
        panic!("ApiVersions response frame v{used} decoded but does not encode: {e}\n{body:?}");
    }
    match decode_api_versions_response_frame(&buf[4..], used) {
        Ok((h2, body2, used2)) => {
            assert_eq!(h2, h);
            assert_eq!(used2, used);
            assert_eq!(body2, body);
        }
        Err(e) => panic!("ApiVersions response frame v{used} re-encoding does not decode: {e}"),
    }
}

/// Decompressed bytes one fuzzed batch may produce: far above what a 4 KiB input needs for
/// real data, far below the allocation guard.
pub const FUZZ_MAX_DECOMPRESSED: usize = 4 << 20;

/// One decoded record, owned, for comparisons.
type OwnedRecord = (
    i64,
    Option<Vec<u8>>,
    Option<Vec<u8>>,
    Vec<(Vec<u8>, Option<Vec<u8>>)>,
);

/// Record batches: the input is a records blob (as in a Fetch response). Reading, decoding
/// (within a decompression bound), iterating records and headers, the control marker and the
/// read-committed filter never panic; every batch that decodes re-encodes (same codec and
/// attributes) to a batch that decodes to the same timestamps, keys, values and headers.
pub fn record_batches(data: &[u8]) {
    record_batches_once(data);
    // Random mutations almost never keep a CRC-32C valid, which would stop the fuzzer at the
    // CRC check: run the same checks on a copy whose batch CRCs are recomputed.
    let fixed = with_fixed_crcs(data);
    if fixed != data {
        record_batches_once(&fixed);
    }
}

/// `data` with the CRC of every complete v2-sized batch recomputed.
fn with_fixed_crcs(data: &[u8]) -> Vec<u8> {
    let mut out = data.to_vec();
    let mut at = 0usize;
    while let Some(len) = out.get(at + 8..at + 12) {
        let len = i32::from_be_bytes([len[0], len[1], len[2], len[3]]);
        let Ok(len) = usize::try_from(len) else { break };
        let end = at + 12 + len;
        if len < 49 || end > out.len() {
            break;
        }
        let crc = crc32c(&out[at + 21..end]).to_be_bytes();
        out[at + 17..at + 21].copy_from_slice(&crc);
        at = end;
    }
    out
}

/// CRC-32C (Castagnoli), bitwise: the harness may use only std and the library's public API.
fn crc32c(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0x82f6_3b78
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

fn record_batches_once(data: &[u8]) {
    let limits = DecodeLimits {
        max_decompressed_bytes: FUZZ_MAX_DECOMPRESSED,
    };
    // An aborted-transactions list drawn from the input, so the filter's paths are reached.
    let aborted = data.chunks(9).take(3).map(|c| AbortedTransaction {
        producer_id: i64::from(c.first().copied().unwrap_or(0) % 4),
        first_offset: i64::from(c.get(1).copied().unwrap_or(0)),
    });
    let mut committed = ReadCommitted::new(aborted);
    let mut reader = BatchReader::new(data);
    for raw in reader.by_ref() {
        let raw = match raw {
            Ok(raw) => raw,
            Err(e) => {
                let _ = e.to_string();
                break;
            }
        };
        let _ = admit_uncommitted(&raw);
        if let Err(e) = committed.admit(&raw) {
            let _ = e.to_string();
        }
        let batch = match raw.decode(&limits) {
            Ok(b) => b,
            Err(e) => {
                let _ = e.to_string();
                continue;
            }
        };
        if let Some(Err(e)) = batch.control_record() {
            let _ = e.to_string();
        }
        let records: Vec<OwnedRecord> = batch
            .records()
            .map(|r| {
                let _ = (r.offset, r.sequence, r.attributes);
                let headers = r
                    .headers()
                    .map(|h| {
                        let _ = h.key_str();
                        (h.key.to_vec(), h.value.map(<[u8]>::to_vec))
                    })
                    .collect();
                (
                    r.timestamp,
                    r.key.map(<[u8]>::to_vec),
                    r.value.map(<[u8]>::to_vec),
                    headers,
                )
            })
            .collect();
        assert_eq!(records.len(), batch.len());
        if records.is_empty() {
            continue;
        }
        let h = raw.header;
        let a = h.attributes;
        let mut b = BatchBuilder::new(a.compression)
            .producer(h.producer_id, h.producer_epoch, h.base_sequence)
            .transactional(a.transactional)
            .control(a.control)
            .timestamp_type(a.timestamp_type)
            .base_offset(h.base_offset);
        for (ts, k, v, hs) in &records {
            let headers: Vec<Header<'_>> = hs
                .iter()
                .map(|(k, v)| Header {
                    key: k,
                    value: v.as_deref(),
                })
                .collect();
            b.push(&RecordSpec::new(k.as_deref(), v.as_deref(), *ts).with_headers(&headers))
                .expect("a decoded record re-encodes");
        }
        let mut wire = Vec::new();
        b.finish(&mut wire).expect("a decoded batch re-encodes");
        let again = BatchReader::new(&wire)
            .next()
            .expect("one batch")
            .expect("the re-encoded batch parses");
        let again = again
            .decode(&DecodeLimits::default())
            .expect("the re-encoded batch decodes");
        let back: Vec<OwnedRecord> = again
            .records()
            .map(|r| {
                let headers = r
                    .headers()
                    .map(|h| (h.key.to_vec(), h.value.map(<[u8]>::to_vec)))
                    .collect();
                (
                    r.timestamp,
                    r.key.map(<[u8]>::to_vec),
                    r.value.map(<[u8]>::to_vec),
                    headers,
                )
            })
            .collect();
        assert_eq!(records, back, "re-encoding changed the records");
    }
    let _ = reader.remainder();
}

#[cfg(test)]
mod crc_tests {
    #[test]
    fn crc32c_check_value() {
        assert_eq!(super::crc32c(b"123456789"), 0xe306_9283);
    }
}
