//! Heap-allocation limits of the wire codec, measured with a counting global allocator
//! (`dhat`, in testing mode; it needs no `unsafe` on our side).
//!
//! * Hostile lengths: a tiny frame whose array count or string length claims ~2^31 elements
//!   must fail with a typed [`DecodeError`] (`InvalidLength`, naming the field), and the claim
//!   itself must cost nothing: the decode allocates no more than the same frame with an honest
//!   length does, plus less than twice the input. A sweep puts the claim at every offset of
//!   every message (so nested lengths are hit too) and requires no panic and no allocation that
//!   could scale with the claim (< 1 MiB for inputs under 1 KiB).
//! * `Decoder::array_of` once reserved `min(count, remaining_bytes)` *elements*, up to
//!   `size_of::<T>()` bytes per input byte (~20 GiB for a 100 MiB frame); it now caps the
//!   reservation at the remaining bytes, and the fuzz regression
//!   `fuzz/regressions/streams_group_describe_response/groups-count-4e5-preallocation` keeps it so.
//! * Steady-state heartbeat: encoding a `StreamsGroupHeartbeat` request (epoch > 0, every
//!   optional field null) into a reused buffer that already has the capacity allocates nothing.
//!
//! The allocator's counters are process-wide, so everything runs inside ONE test function (a
//! second concurrently running test — or libtest printing its result — would pollute them).
//! Checks collect their failures and the test reports them all at the end.

use std::fmt::Debug;

use kafka_streams_group::protocol::api::api_versions::{ApiVersion, ApiVersionsResponse};
use kafka_streams_group::protocol::api::create_topics::{
    CreatableTopicResult, CreateTopicsResponse,
};
use kafka_streams_group::protocol::api::find_coordinator::{Coordinator, FindCoordinatorResponse};
use kafka_streams_group::protocol::api::metadata::{
    MetadataResponse, MetadataResponseBroker, MetadataResponseTopic,
};
use kafka_streams_group::protocol::api::sasl_authenticate::SaslAuthenticateResponse;
use kafka_streams_group::protocol::api::sasl_handshake::SaslHandshakeResponse;
use kafka_streams_group::protocol::api::streams_group_describe::{
    DescribedGroup, StreamsGroupDescribeResponse,
};
use kafka_streams_group::protocol::api::streams_group_heartbeat::{
    Status, StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse, TaskIds,
};
use kafka_streams_group::protocol::codec::{decode_message, encode_message};
use kafka_streams_group::protocol::frame::encode_request_frame;
use kafka_streams_group::protocol::{ApiMessage, DecodeError};

#[path = "alloc_limits/memory_per_record.rs"]
mod memory_per_record;
#[path = "alloc_limits/word_count_path.rs"]
mod word_count_path;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// Heap blocks and bytes allocated (reallocations count as new blocks of their new size) while
/// `f` runs.
fn allocations<R>(f: impl FnOnce() -> R) -> (R, u64, u64) {
    let before = dhat::HeapStats::get();
    let r = f();
    let after = dhat::HeapStats::get();
    (
        r,
        after.total_blocks - before.total_blocks,
        after.total_bytes - before.total_bytes,
    )
}

/// Compact (flexible-version) lengths are `N + 1` as an unsigned varint: this claims
/// N = 2^31 elements/bytes.
const COMPACT_2_POW_31: [u8; 5] = [0x81, 0x80, 0x80, 0x80, 0x08];
/// The largest unsigned varint a decoder accepts (N = 2^32 - 2).
const COMPACT_MAX: [u8; 5] = [0xff, 0xff, 0xff, 0xff, 0x0f];
/// Classic (non-flexible) array/bytes count: i32::MAX = 2^31 - 1.
const CLASSIC_I32_MAX: [u8; 4] = [0x7f, 0xff, 0xff, 0xff];
/// Classic array/bytes count: i32::MIN (negative but not the null marker).
const CLASSIC_I32_MIN: [u8; 4] = [0x80, 0, 0, 0];
/// Classic string length: i16::MAX (the most an int16 length can claim).
const CLASSIC_I16_MAX: [u8; 2] = [0x7f, 0xff];
/// Classic string length: i16::MIN.
const CLASSIC_I16_MIN: [u8; 2] = [0x80, 0];

fn encode<M: ApiMessage>(m: &M, version: i16) -> Vec<u8> {
    let mut buf = Vec::new();
    if let Err(e) = encode_message(&mut buf, m, version) {
        panic!("{} v{version}: test message does not encode: {e}", M::NAME);
    }
    buf
}

/// Index of the first byte where `a` and `b` differ.
fn first_difference(a: &[u8], b: &[u8]) -> usize {
    a.iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .expect("encodings differ")
}

/// What kind of length a field has.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// A string: int16 length in classic versions.
    Str,
    /// An array or byte string: int32 length in classic versions.
    Arr,
}

/// A field to attack: `base` and `changed` differ only in that field's length, by a small amount
/// (e.g. `""` vs `"a"`, one element vs none), so their encodings first differ in the length's
/// last byte.
struct Case<M> {
    field: &'static str,
    kind: Kind,
    base: M,
    changed: M,
}

fn case<M>(field: &'static str, kind: Kind, base: &M, changed: M) -> Case<M>
where
    M: Clone,
{
    Case {
        field,
        kind,
        base: base.clone(),
        changed,
    }
}

/// A hostile length aimed at a located field.
struct Targeted {
    /// Encoding of a valid message.
    valid: Vec<u8>,
    /// Offset of the length field inside `valid`.
    at: usize,
    /// Its width in bytes (1 for a small compact length, 2 or 4 for classic ones).
    width: usize,
    /// Schema field name the decoder must name in its error.
    field: &'static str,
    kind: Kind,
}

impl<M: ApiMessage> Case<M> {
    fn locate(&self, version: i16) -> Targeted {
        let valid = encode(&self.base, version);
        let last = first_difference(&valid, &encode(&self.changed, version));
        let width = match (M::is_flexible(version), self.kind) {
            (true, _) => 1,
            (false, Kind::Str) => 2,
            (false, Kind::Arr) => 4,
        };
        Targeted {
            valid,
            at: last + 1 - width,
            width,
            field: self.field,
            kind: self.kind,
        }
    }
}

fn hostiles(flexible: bool, kind: Kind) -> Vec<&'static [u8]> {
    match (flexible, kind) {
        (true, _) => vec![&COMPACT_2_POW_31, &COMPACT_MAX],
        (false, Kind::Str) => vec![&CLASSIC_I16_MAX, &CLASSIC_I16_MIN],
        (false, Kind::Arr) => vec![&CLASSIC_I32_MAX, &CLASSIC_I32_MIN],
    }
}

#[derive(Default)]
struct Report {
    /// Assert total allocation < 2 x input (the ignored test) on top of the properties the
    /// current codec meets.
    strict: bool,
    failures: Vec<String>,
    cases: usize,
    invalid_length_errors: usize,
    worst_ratio: f64,
    worst_case: String,
}

impl Report {
    fn fail(&mut self, msg: String) {
        self.failures.push(msg);
    }

    /// Records the worst total-allocation ratio; in strict mode also asserts total < 2 x input.
    fn total(&mut self, what: &str, input_len: usize, bytes: u64, strict_applies: bool) {
        self.cases += 1;
        let ratio = bytes as f64 / input_len as f64;
        if ratio > self.worst_ratio {
            self.worst_ratio = ratio;
            self.worst_case = format!("{what}: {bytes} bytes for a {input_len}-byte input");
        }
        if self.strict && strict_applies && bytes >= 2 * input_len as u64 {
            self.fail(format!(
                "{what}: allocated {bytes} bytes in total decoding a {input_len}-byte input \
                 (limit: < 2x)"
            ));
        }
    }
}

/// Splices `hostile` over the length at `t.at`, keeps at most 8 following bytes, and decodes:
/// the result must be `InvalidLength` naming `t.field`, and the claim must cost (almost)
/// nothing beyond the honest length.
fn targeted<M: ApiMessage + Debug>(r: &mut Report, version: i16, t: &Targeted, hostile: &[u8]) {
    let mut input = t.valid[..t.at].to_vec();
    input.extend_from_slice(hostile);
    let tail = &t.valid[t.at + t.width..];
    input.extend_from_slice(&tail[..tail.len().min(8)]);
    let what = format!("{} v{version} {} = {hostile:02x?}", M::NAME, t.field);
    let (res, _, bytes) = allocations(|| decode_message::<M>(&input, version).map(|_| ()));
    match res {
        Err(DecodeError::InvalidLength { field, .. }) if field == t.field => {
            r.invalid_length_errors += 1;
        }
        other => r.fail(format!(
            "{what}: expected InvalidLength for it, got {other:?}"
        )),
    }
    // The same tiny frame with the honest length: what decoding the prefix legitimately costs.
    let honest = &t.valid[..(t.at + t.width + 8).min(t.valid.len())];
    let (_, _, honest_bytes) = allocations(|| decode_message::<M>(honest, version).map(|_| ()));
    let excess = bytes.saturating_sub(honest_bytes);
    if excess >= 2 * input.len() as u64 {
        r.fail(format!(
            "{what}: the claim cost {excess} bytes more than the honest length \
             ({bytes} vs {honest_bytes}) for a {}-byte input",
            input.len()
        ));
    }
    r.total(&what, input.len(), bytes, true);
}

/// A count that is plausible against the remaining bytes (`count` = the number of zero bytes
/// that follow) but not against the element size: each element needs several bytes, and the
/// zeros make decoding fail early. Only asserted in strict mode (see the module docs).
fn plausible_count<M: ApiMessage + Debug>(r: &mut Report, version: i16, t: &Targeted) {
    const N: u32 = 4096;
    let mut input = t.valid[..t.at].to_vec();
    if M::is_flexible(version) {
        let mut n = N + 1; // compact: N + 1 as an unsigned varint
        while n >= 0x80 {
            input.push((n as u8) | 0x80);
            n >>= 7;
        }
        input.push(n as u8);
    } else {
        input.extend_from_slice(&(N as i32).to_be_bytes());
    }
    input.resize(input.len() + N as usize, 0);
    let what = format!(
        "{} v{version} {} = {N} over {N} zero bytes",
        M::NAME,
        t.field
    );
    let (_, _, bytes) = allocations(|| decode_message::<M>(&input, version).map(|_| ()));
    r.total(&what, input.len(), bytes, true);
}

/// Puts each hostile length at EVERY offset of a valid encoding (followed by at most 8 of the
/// bytes that came after), so every length field of the message — nested and tagged ones
/// included — is hit without having to know where it is. Whatever the outcome, it must not
/// panic and must not allocate anything that could scale with the claim.
fn sweep<M: ApiMessage + Debug>(r: &mut Report, version: i16, valid: &[u8]) {
    let flexible = M::is_flexible(version);
    let claims: Vec<&[u8]> = if flexible {
        vec![&COMPACT_2_POW_31, &COMPACT_MAX]
    } else {
        vec![&CLASSIC_I32_MAX, &CLASSIC_I32_MIN]
    };
    let before = r.invalid_length_errors;
    for at in 0..valid.len() {
        for hostile in &claims {
            let mut input = valid[..at].to_vec();
            input.extend_from_slice(hostile);
            let tail = &valid[(at + hostile.len()).min(valid.len())..];
            input.extend_from_slice(&tail[..tail.len().min(8)]);
            let (res, _, bytes) = allocations(|| decode_message::<M>(&input, version).map(|_| ()));
            if let Err(DecodeError::InvalidLength { .. }) = res {
                r.invalid_length_errors += 1;
            }
            let what = format!("{} v{version} sweep at {at} = {hostile:02x?}", M::NAME);
            // Inputs here are under 1 KiB: anything near 1 MiB can only come from a length.
            if bytes >= 1 << 20 {
                r.fail(format!("{what}: allocated {bytes} bytes"));
            }
            // Not strict: partially decoded *legitimate* elements may outweigh a tiny input.
            r.total(&what, input.len(), bytes, false);
        }
    }
    if r.invalid_length_errors == before {
        r.fail(format!(
            "{} v{version}: the sweep never produced InvalidLength (is it hitting lengths?)",
            M::NAME
        ));
    }
}

/// Runs the targeted claims, the plausible counts (arrays) and the sweep for every version.
fn attack<M: ApiMessage + Debug>(r: &mut Report, cases: impl Fn(i16) -> Vec<Case<M>>) {
    for v in M::MIN_VERSION..=M::MAX_VERSION {
        let cases = cases(v);
        assert!(!cases.is_empty(), "{} v{v}: no cases", M::NAME);
        for c in &cases {
            let t = c.locate(v);
            for h in hostiles(M::is_flexible(v), t.kind) {
                targeted::<M>(r, v, &t, h);
            }
            if t.kind == Kind::Arr {
                plausible_count::<M>(r, v, &t);
            }
        }
        sweep::<M>(r, v, &encode(&cases[0].base, v));
    }
}

// ---------------------------------------------------------------------------------------------
// The cases, one function per message type.

fn heartbeat_response(_v: i16) -> Vec<Case<StreamsGroupHeartbeatResponse>> {
    let base = StreamsGroupHeartbeatResponse {
        member_id: "m".into(),
        member_epoch: 3,
        error_message: Some("e".into()),
        status: Some(vec![Status {
            status_code: 5,
            status_detail: "delayed".into(),
        }]),
        active_tasks: Some(vec![TaskIds {
            subtopology_id: "0".into(),
            partitions: vec![0, 1, 2],
        }]),
        ..StreamsGroupHeartbeatResponse::default()
    };
    vec![
        case("Status", Kind::Arr, &base, {
            let mut m = base.clone();
            m.status = Some(Vec::new());
            m
        }),
        case("MemberId", Kind::Str, &base, {
            let mut m = base.clone();
            m.member_id = String::new();
            m
        }),
        case("ErrorMessage", Kind::Str, &base, {
            let mut m = base.clone();
            m.error_message = Some(String::new());
            m
        }),
    ]
}

fn describe_response(_v: i16) -> Vec<Case<StreamsGroupDescribeResponse>> {
    let group = DescribedGroup {
        group_id: "app".into(),
        group_state: "Stable".into(),
        ..DescribedGroup::default()
    };
    let base = StreamsGroupDescribeResponse {
        throttle_time_ms: 0,
        groups: vec![group],
    };
    vec![
        case("Groups", Kind::Arr, &base, {
            let mut m = base.clone();
            m.groups.clear();
            m
        }),
        case("GroupId", Kind::Str, &base, {
            let mut m = base.clone();
            m.groups[0].group_id = "ap".into();
            m
        }),
    ]
}

/// The mock broker decodes heartbeat requests, so they get the same treatment.
fn heartbeat_request(_v: i16) -> Vec<Case<StreamsGroupHeartbeatRequest>> {
    let base = StreamsGroupHeartbeatRequest {
        group_id: "app".into(),
        member_id: "m".into(),
        member_epoch: 4,
        active_tasks: Some(vec![TaskIds {
            subtopology_id: "0".into(),
            partitions: vec![0],
        }]),
        ..StreamsGroupHeartbeatRequest::default()
    };
    vec![
        case("ActiveTasks", Kind::Arr, &base, {
            let mut m = base.clone();
            m.active_tasks = Some(Vec::new());
            m
        }),
        case("GroupId", Kind::Str, &base, {
            let mut m = base.clone();
            m.group_id = "ap".into();
            m
        }),
    ]
}

fn api_versions_response(_v: i16) -> Vec<Case<ApiVersionsResponse>> {
    let base = ApiVersionsResponse {
        api_keys: vec![ApiVersion {
            api_key: 18,
            min_version: 0,
            max_version: 4,
        }],
        ..ApiVersionsResponse::default()
    };
    vec![case("ApiKeys", Kind::Arr, &base, {
        let mut m = base.clone();
        m.api_keys.clear();
        m
    })]
}

fn metadata_response(_v: i16) -> Vec<Case<MetadataResponse>> {
    let base = MetadataResponse {
        brokers: vec![MetadataResponseBroker {
            node_id: 1,
            host: "h".into(),
            port: 9092,
            rack: None,
        }],
        topics: vec![MetadataResponseTopic {
            name: Some("t".into()),
            ..MetadataResponseTopic::default()
        }],
        ..MetadataResponse::default()
    };
    vec![
        case("Brokers", Kind::Arr, &base, {
            let mut m = base.clone();
            m.brokers.clear();
            m
        }),
        case("Host", Kind::Str, &base, {
            let mut m = base.clone();
            m.brokers[0].host = String::new();
            m
        }),
        case("Topics", Kind::Arr, &base, {
            let mut m = base.clone();
            m.topics.clear();
            m
        }),
    ]
}

fn find_coordinator_response(v: i16) -> Vec<Case<FindCoordinatorResponse>> {
    if v < 4 {
        let base = FindCoordinatorResponse {
            node_id: 1,
            host: "h".into(),
            port: 9092,
            ..FindCoordinatorResponse::default()
        };
        vec![case("Host", Kind::Str, &base, {
            let mut m = base.clone();
            m.host = String::new();
            m
        })]
    } else {
        let base = FindCoordinatorResponse {
            coordinators: vec![Coordinator {
                key: "app".into(),
                node_id: 1,
                host: "h".into(),
                port: 9092,
                ..Coordinator::default()
            }],
            ..FindCoordinatorResponse::default()
        };
        vec![
            case("Coordinators", Kind::Arr, &base, {
                let mut m = base.clone();
                m.coordinators.clear();
                m
            }),
            case("Key", Kind::Str, &base, {
                let mut m = base.clone();
                m.coordinators[0].key = "ap".into();
                m
            }),
        ]
    }
}

fn sasl_handshake_response(_v: i16) -> Vec<Case<SaslHandshakeResponse>> {
    let base = SaslHandshakeResponse {
        error_code: 0,
        mechanisms: vec!["PLAIN".into()],
    };
    vec![
        case("Mechanisms", Kind::Arr, &base, {
            let mut m = base.clone();
            m.mechanisms.clear();
            m
        }),
        case("Mechanisms", Kind::Str, &base, {
            let mut m = base.clone();
            m.mechanisms[0] = "PLAI".into();
            m
        }),
    ]
}

fn sasl_authenticate_response(_v: i16) -> Vec<Case<SaslAuthenticateResponse>> {
    let base = SaslAuthenticateResponse {
        error_code: 0,
        error_message: Some("e".into()),
        auth_bytes: b"r=abc".to_vec(),
        session_lifetime_ms: 0,
    };
    vec![
        case("AuthBytes", Kind::Arr, &base, {
            let mut m = base.clone();
            m.auth_bytes.pop();
            m
        }),
        case("ErrorMessage", Kind::Str, &base, {
            let mut m = base.clone();
            m.error_message = Some(String::new());
            m
        }),
    ]
}

fn create_topics_response(_v: i16) -> Vec<Case<CreateTopicsResponse>> {
    let base = CreateTopicsResponse {
        throttle_time_ms: 0,
        topics: vec![CreatableTopicResult {
            name: "t".into(),
            ..CreatableTopicResult::default()
        }],
    };
    vec![
        case("Topics", Kind::Arr, &base, {
            let mut m = base.clone();
            m.topics.clear();
            m
        }),
        case("Name", Kind::Str, &base, {
            let mut m = base.clone();
            m.topics[0].name = String::new();
            m
        }),
    ]
}

/// (b): a steady-state heartbeat encoded into a reused buffer makes no heap allocation.
fn steady_state_heartbeat_encode(r: &mut Report) {
    let req = StreamsGroupHeartbeatRequest {
        group_id: "my-streams-app".into(),
        member_id: "8TnMsxH3RL2lcHRy0l0jBQ".into(),
        member_epoch: 17,
        endpoint_information_epoch: 4,
        ..StreamsGroupHeartbeatRequest::default()
    };
    let mut buf: Vec<u8> = Vec::with_capacity(4096);
    for v in 0..=1 {
        for round in 0..3 {
            buf.clear();
            let (res, blocks, bytes) = allocations(|| {
                encode_request_frame(&mut buf, 100 + round, Some("ksg-client"), &req, v)
            });
            if let Err(e) = res {
                r.fail(format!("steady heartbeat v{v}: encode failed: {e}"));
            }
            if blocks != 0 || bytes != 0 {
                r.fail(format!(
                    "steady heartbeat v{v} round {round}: {blocks} allocations ({bytes} bytes) \
                     encoding into a reused buffer"
                ));
            }
        }
        // The body alone, appended after existing content, also allocates nothing.
        let (res, blocks, _) = allocations(|| encode_message(&mut buf, &req, v));
        if res.is_err() || blocks != 0 {
            r.fail(format!(
                "steady heartbeat body v{v}: {res:?}, {blocks} allocations"
            ));
        }
    }
}

/// The counter must see allocations, or every "zero allocations" result would be vacuous.
fn counter_is_live(r: &mut Report) {
    let (v, blocks, bytes) = allocations(|| Vec::<u8>::with_capacity(100));
    drop(v);
    if blocks != 1 || bytes != 100 {
        r.fail(format!(
            "counter not live: {blocks} blocks / {bytes} bytes for one 100-byte Vec"
        ));
    }
    // Encoding into a fresh (capacity 0) buffer must be seen allocating.
    let req = StreamsGroupHeartbeatRequest {
        group_id: "g".into(),
        member_epoch: 1,
        ..StreamsGroupHeartbeatRequest::default()
    };
    let (_, blocks, _) = allocations(|| {
        let mut fresh = Vec::new();
        encode_request_frame(&mut fresh, 1, None, &req, 0).map(|_| fresh.len())
    });
    if blocks == 0 {
        r.fail("encoding into a fresh Vec was counted as allocation-free".into());
    }
}

fn run(strict: bool) {
    let _profiler = dhat::Profiler::builder().testing().build();
    let mut r = Report {
        strict,
        ..Report::default()
    };
    counter_is_live(&mut r);
    steady_state_heartbeat_encode(&mut r);
    attack(&mut r, heartbeat_response);
    attack(&mut r, describe_response);
    attack(&mut r, heartbeat_request);
    attack(&mut r, api_versions_response);
    attack(&mut r, metadata_response);
    attack(&mut r, find_coordinator_response);
    attack(&mut r, sasl_handshake_response);
    attack(&mut r, sasl_authenticate_response);
    attack(&mut r, create_topics_response);
    word_count_path::check(&mut r.failures);
    memory_per_record::check(&mut r.failures);
    eprintln!(
        "alloc_limits: {} hostile decodes, {} InvalidLength; worst total allocation ratio {:.2} \
         ({})",
        r.cases, r.invalid_length_errors, r.worst_ratio, r.worst_case
    );
    if !r.failures.is_empty() {
        let n = r.failures.len();
        let shown: Vec<&String> = r.failures.iter().take(40).collect();
        panic!("{n} allocation-limit failures (first 40):\n{shown:#?}");
    }
}

/// The targeted checks (the allocation counters are process-wide, so one test function).
///
/// The strict pass (`run(true)`: *total* allocation < 2× input) is not asserted: it also
/// counts honest decoding, and a valid frame of many tiny elements legitimately inflates
/// (4 KiB of Metadata v0 holding 512 empty topics needs ~120 KB of `MetadataResponseTopic`s).
/// What a hostile length must not do — cost more than the same frame with an honest length,
/// plus less than 2× the input, or reserve more than the input's bytes — is what `run(false)`
/// asserts, at every offset of every message.
#[test]
fn alloc_limits() {
    run(false);
    preallocation_is_bounded_by_the_input();
}

/// The fuzz finding `groups-count-4e5-preallocation`: a 400 kB StreamsGroupDescribe response
/// whose group count is plausible against the remaining bytes but not against the size of a
/// `DescribedGroup` made the decoder reserve 86 MB at once. The peak heap of decoding it must
/// stay within a small multiple of the input.
fn preallocation_is_bounded_by_the_input() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fuzz/regressions/streams_group_describe_response/groups-count-4e5-preallocation"
    );
    let data = std::fs::read(path).expect("the fuzz regression input");
    let (&selector, body) = data.split_first().expect("non-empty");
    let span =
        StreamsGroupDescribeResponse::MAX_VERSION - StreamsGroupDescribeResponse::MIN_VERSION + 1;
    let version = StreamsGroupDescribeResponse::MIN_VERSION + (i16::from(selector) % span);
    let profiler = dhat::Profiler::builder().testing().build();
    let decoded = kafka_streams_group::protocol::codec::decode_message::<
        StreamsGroupDescribeResponse,
    >(body, version);
    let stats = dhat::HeapStats::get();
    drop(decoded);
    drop(profiler);
    eprintln!(
        "groups-count-4e5-preallocation: {} input bytes, peak heap {} bytes",
        data.len(),
        stats.max_bytes
    );
    assert!(
        stats.max_bytes < 4 * data.len(),
        "peak heap {} bytes decoding a {}-byte frame",
        stats.max_bytes,
        data.len()
    );
}
