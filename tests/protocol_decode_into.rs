//! `decode_message_into` (in-place decoding that reuses a previous value's allocations) must be
//! indistinguishable from a fresh `decode_message`: for any bytes and any previous value, the
//! same `Ok` value (`==`) or the same error, and no panic. It must also really reuse: decoding a
//! response of the same shape again keeps every string's and list's buffer.

use kafka_streams_group::protocol::api::streams_group_heartbeat::{
    Endpoint, EndpointToPartitions, Status, StreamsGroupHeartbeatResponse, TaskIds, TopicPartitions,
};
use kafka_streams_group::protocol::codec::{decode_message, decode_message_into, encode_message};
use kafka_streams_group::protocol::DecodeError;
use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;

type Response = StreamsGroupHeartbeatResponse;

/// Mostly short strings (multi-byte characters included), sometimes long enough for a
/// two-byte length varint.
fn s() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => "[a-zA-Z0-9._\u{e9}\u{1f600}-]{0,8}",
        1 => "[a-z\u{e9}]{120,200}",
    ]
}

fn ints(max: usize) -> impl Strategy<Value = Vec<i32>> {
    vec(any::<i32>(), 0..max)
}

fn task_ids() -> impl Strategy<Value = TaskIds> {
    (s(), ints(6)).prop_map(|(subtopology_id, partitions)| TaskIds {
        subtopology_id,
        partitions,
    })
}

fn tasks() -> impl Strategy<Value = Option<Vec<TaskIds>>> {
    option::of(vec(task_ids(), 0..5))
}

fn topic_partition() -> impl Strategy<Value = TopicPartitions> {
    (s(), ints(4)).prop_map(|(topic, partitions)| TopicPartitions { topic, partitions })
}

fn endpoint_to_partitions() -> impl Strategy<Value = EndpointToPartitions> {
    (
        (s(), any::<u16>()).prop_map(|(host, port)| Endpoint { host, port }),
        vec(topic_partition(), 0..4),
        vec(topic_partition(), 0..3),
    )
        .prop_map(|(user_endpoint, active_partitions, standby_partitions)| {
            EndpointToPartitions {
                user_endpoint,
                active_partitions,
                standby_partitions,
            }
        })
}

prop_compose! {
    /// Any response value; `normalize_for` makes it encodable at a version.
    fn response()(
        head in (any::<i32>(), any::<i16>(), option::of(s()), s(), any::<i32>(), any::<i32>(),
                 any::<i32>(), any::<i32>(), any::<i64>()),
        status in option::of(vec((any::<i8>(), s()).prop_map(|(status_code, status_detail)|
            Status { status_code, status_detail }), 0..3)),
        tasks in (tasks(), tasks(), tasks()),
        tdr in any::<bool>(),
        epoch in any::<i32>(),
        iq in option::of(vec(endpoint_to_partitions(), 0..4)),
    ) -> Response {
        Response {
            throttle_time_ms: head.0, error_code: head.1, error_message: head.2, member_id: head.3,
            member_epoch: head.4, heartbeat_interval_ms: head.5,
            acceptable_recovery_lag_legacy: head.6, task_offset_interval_ms: head.7,
            acceptable_recovery_lag: head.8, status, active_tasks: tasks.0,
            standby_tasks: tasks.1, warmup_tasks: tasks.2, topology_description_required: tdr,
            endpoint_information_epoch: epoch, partitions_by_user_endpoint: iq,
        }
    }
}

/// Clears the fields `version` cannot carry, so the value encodes.
fn normalize_for(mut r: Response, version: i16) -> Response {
    if version >= 1 {
        r.acceptable_recovery_lag_legacy = 0;
    } else {
        r.acceptable_recovery_lag = -1;
        r.topology_description_required = false;
    }
    r
}

fn encode(r: &Response, version: i16) -> Vec<u8> {
    let mut buf = Vec::new();
    encode_message(&mut buf, r, version).expect("normalized response encodes");
    buf
}

/// Decodes `bytes` into a clone of `prev` and compares with a fresh decode: same value or same
/// error. Returns the fresh result.
fn check_same(
    bytes: &[u8],
    version: i16,
    prev: &Response,
) -> Result<Result<Response, DecodeError>, TestCaseError> {
    let fresh = decode_message::<Response>(bytes, version);
    let mut reused = prev.clone();
    let into = decode_message_into(bytes, version, &mut reused);
    match &fresh {
        Ok(f) => {
            prop_assert_eq!(into, Ok(()));
            prop_assert_eq!(&reused, f);
        }
        Err(e) => prop_assert_eq!(into, Err(e.clone())),
    }
    Ok(fresh)
}

/// Every heap buffer of a response (strings and lists, in a fixed order), by address.
fn buffers(r: &Response) -> Vec<usize> {
    fn task_bufs(out: &mut Vec<usize>, t: &Option<Vec<TaskIds>>) {
        if let Some(t) = t {
            out.push(t.as_ptr() as usize);
            for t in t {
                out.push(t.subtopology_id.as_ptr() as usize);
                out.push(t.partitions.as_ptr() as usize);
            }
        }
    }
    let mut out = vec![r.member_id.as_ptr() as usize];
    if let Some(m) = &r.error_message {
        out.push(m.as_ptr() as usize);
    }
    if let Some(st) = &r.status {
        out.push(st.as_ptr() as usize);
        out.extend(st.iter().map(|s| s.status_detail.as_ptr() as usize));
    }
    task_bufs(&mut out, &r.active_tasks);
    task_bufs(&mut out, &r.standby_tasks);
    task_bufs(&mut out, &r.warmup_tasks);
    if let Some(iq) = &r.partitions_by_user_endpoint {
        out.push(iq.as_ptr() as usize);
        for e in iq {
            out.push(e.user_endpoint.host.as_ptr() as usize);
            for l in [&e.active_partitions, &e.standby_partitions] {
                out.push(l.as_ptr() as usize);
                for tp in l {
                    out.push(tp.topic.as_ptr() as usize);
                    out.push(tp.partitions.as_ptr() as usize);
                }
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// A valid response decoded into any previous value equals the fresh decode (and the
    /// original), and decoding the same bytes again reuses every buffer.
    #[test]
    fn decode_into_equals_fresh_decode(r in response(), prev in response(), v in 0i16..=1) {
        let r = normalize_for(r, v);
        let bytes = encode(&r, v);
        let fresh = check_same(&bytes, v, &prev)?;
        prop_assert_eq!(fresh.as_ref(), Ok(&r));

        let mut reused = prev;
        decode_message_into(&bytes, v, &mut reused).expect("decodes");
        let before = buffers(&reused);
        decode_message_into(&bytes, v, &mut reused).expect("decodes again");
        prop_assert_eq!(&reused, &r);
        prop_assert_eq!(buffers(&reused), before, "a same-shape decode must reuse every buffer");
    }

    /// Corrupted encodings (a flipped byte, a truncation) give the same value or the same error
    /// both ways, whatever the previous value.
    #[test]
    fn corrupted_input_same_result(
        r in response(),
        prev in response(),
        v in 0i16..=1,
        at in any::<prop::sample::Index>(),
        xor in 1u8..=255,
        cut in any::<prop::sample::Index>(),
    ) {
        let bytes = encode(&normalize_for(r, v), v);
        let mut flipped = bytes.clone();
        let i = at.index(flipped.len());
        flipped[i] ^= xor;
        let _ = check_same(&flipped, v, &prev)?;
        let _ = check_same(&bytes[..cut.index(bytes.len())], v, &prev)?;
    }

    /// Arbitrary bytes: never a panic, same outcome both ways.
    #[test]
    fn arbitrary_bytes_same_result(bytes in vec(any::<u8>(), 0..300), prev in response(), v in 0i16..=1) {
        let _ = check_same(&bytes, v, &prev)?;
    }
}

#[test]
fn unsupported_version_leaves_the_value_untouched() {
    let mut r = Response {
        member_id: "m".into(),
        ..Response::default()
    };
    let before = r.clone();
    let err = decode_message_into(&[], 7, &mut r).expect_err("v7 is not implemented");
    assert!(matches!(
        err,
        DecodeError::UnsupportedVersion { version: 7, .. }
    ));
    assert_eq!(r, before);
}

/// Lists that shrink, grow and turn null between consecutive responses.
#[test]
fn shapes_change_between_responses() {
    let big = Response {
        member_id: "member-with-a-long-id".into(),
        error_message: Some("first".into()),
        active_tasks: Some(
            (0..5)
                .map(|i| TaskIds {
                    subtopology_id: format!("sub-{i}"),
                    partitions: (0..i).collect(),
                })
                .collect(),
        ),
        standby_tasks: Some(Vec::new()),
        ..Response::default()
    };
    let small = Response {
        member_id: "m".into(),
        error_message: None,
        active_tasks: Some(vec![TaskIds {
            subtopology_id: "x".into(),
            partitions: vec![7],
        }]),
        standby_tasks: None,
        warmup_tasks: Some(vec![TaskIds::default()]),
        ..Response::default()
    };
    let mut reused = Response::default();
    for (r, v) in [(&big, 1), (&small, 1), (&big, 1), (&small, 0), (&big, 0)] {
        let r = normalize_for(r.clone(), v);
        decode_message_into(&encode(&r, v), v, &mut reused).expect("decodes");
        assert_eq!(reused, r);
    }
}
