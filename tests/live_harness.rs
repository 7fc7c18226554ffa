//! Proves the test harness end to end with no library code: a hand-built ApiVersions request
//! over plain TCP to the harness broker, which must advertise StreamsGroupHeartbeat (key 88).

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

const API_VERSIONS: i16 = 18;
const STREAMS_GROUP_HEARTBEAT: i16 = 88;
const STREAMS_GROUP_DESCRIBE: i16 = 89;

/// ApiVersions v3 request, written field by field from ApiVersionsRequest.json and
/// RequestHeader.json (header v2, because v3 is the first flexible version).
fn api_versions_v3_request(correlation_id: i32) -> Vec<u8> {
    let mut body = Vec::new();
    body.extend_from_slice(&API_VERSIONS.to_be_bytes()); // RequestApiKey
    body.extend_from_slice(&3i16.to_be_bytes()); // RequestApiVersion
    body.extend_from_slice(&correlation_id.to_be_bytes()); // CorrelationId
    let client_id = b"ksg-harness";
    body.extend_from_slice(&(client_id.len() as i16).to_be_bytes()); // ClientId (nullable string)
    body.extend_from_slice(client_id);
    body.push(0); // header tagged fields
    for s in [&b"kafka-streams-group"[..], &b"0.1.0"[..]] {
        body.push(s.len() as u8 + 1); // compact string length + 1
        body.extend_from_slice(s);
    }
    body.push(0); // body tagged fields
    let mut frame = (body.len() as i32).to_be_bytes().to_vec();
    frame.extend_from_slice(&body);
    frame
}

fn read_exact(stream: &mut TcpStream, n: usize) -> Vec<u8> {
    let mut buf = vec![0; n];
    stream
        .read_exact(&mut buf)
        .expect("broker closed the connection");
    buf
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn broker_advertises_streams_group_heartbeat() {
    let cluster = common::Cluster::get();
    let mut stream =
        TcpStream::connect(cluster.plaintext_first()).expect("connect to PLAINTEXT listener");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream.write_all(&api_versions_v3_request(7)).unwrap();

    let len = i32::from_be_bytes(read_exact(&mut stream, 4).try_into().unwrap());
    assert!(
        (6..1_000_000).contains(&len),
        "implausible frame length {len}"
    );
    let resp = read_exact(&mut stream, len as usize);

    // Response header v0 (ApiVersions responses always use v0): CorrelationId only.
    assert_eq!(i32::from_be_bytes(resp[0..4].try_into().unwrap()), 7);
    let error_code = i16::from_be_bytes(resp[4..6].try_into().unwrap());
    assert_eq!(error_code, 0, "ApiVersions error code");
    // ApiKeys: compact array (unsigned varint length + 1; < 128 entries fits one byte).
    let count = resp[6] as usize - 1;
    let mut apis = std::collections::BTreeMap::new();
    let mut at = 7;
    for _ in 0..count {
        let key = i16::from_be_bytes(resp[at..at + 2].try_into().unwrap());
        let min = i16::from_be_bytes(resp[at + 2..at + 4].try_into().unwrap());
        let max = i16::from_be_bytes(resp[at + 4..at + 6].try_into().unwrap());
        assert_eq!(resp[at + 6], 0, "no tagged fields expected per api key");
        apis.insert(key, (min, max));
        at += 7;
    }
    eprintln!(
        "Kafka {}: {} APIs advertised; StreamsGroupHeartbeat {:?}, StreamsGroupDescribe {:?}",
        cluster.value("KSG_KAFKA_VERSION"),
        apis.len(),
        apis.get(&STREAMS_GROUP_HEARTBEAT),
        apis.get(&STREAMS_GROUP_DESCRIBE)
    );
    let (min, max) = *apis
        .get(&STREAMS_GROUP_HEARTBEAT)
        .expect("broker does not advertise StreamsGroupHeartbeat (key 88)");
    assert_eq!(min, 0);
    // 4.2 and 4.3 serve v0 only; 4.4 adds v1.
    let expected_max = if cluster.kafka_version() >= (4, 4, 0) {
        1
    } else {
        0
    };
    assert_eq!(max, expected_max, "StreamsGroupHeartbeat max version");
    assert!(apis.contains_key(&STREAMS_GROUP_DESCRIBE));
}
