//! Reading a topic back for the producer's live tests: raw Fetch requests and the
//! record-batch decoder, independent of the crate's fetcher.
//!
//! Include it from a test binary with
//! `#[path = "support/producer_read.rs"] mod producer_read;` (from a directory binary `tests/x/main.rs`: `"../support/producer_read.rs"`).
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use kafka_streams_group::client::{BrokerConnectOptions, BrokerConnection};
use kafka_streams_group::protocol::api::fetch::{FetchPartition, FetchRequest, FetchTopic};
use kafka_streams_group::protocol::api::metadata::MetadataRequest;
use kafka_streams_group::protocol::records::{BatchReader, DecodeLimits, Record};
use kafka_streams_group::protocol::{BrokerErrorKind, Uuid};

/// 30 s from now: the deadline of each request of the live producer tests.
pub fn deadline() -> Instant {
    Instant::now() + Duration::from_secs(30)
}

/// One record as read back (or as expected).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub headers: Vec<(Vec<u8>, Option<Vec<u8>>)>,
    pub timestamp: i64,
}

impl Seen {
    /// The record's key, value, headers and timestamp, copied.
    pub fn of(r: &Record<'_>) -> Seen {
        Seen {
            key: r.key.map(<[u8]>::to_vec),
            value: r.value.map(<[u8]>::to_vec),
            headers: r
                .headers()
                .map(|h| (h.key.to_vec(), h.value.map(<[u8]>::to_vec)))
                .collect(),
            timestamp: r.timestamp,
        }
    }
}

/// Reads every record of `topic`'s `partitions` partitions with raw Fetch requests
/// (negotiated version, topic id where it uses one) until each partition's high watermark.
pub fn read_back_partitions(
    bootstrap: &str,
    topic: &str,
    partitions: i32,
) -> BTreeMap<i32, Vec<Seen>> {
    let opts = BrokerConnectOptions {
        client_id: Some("ksg-live-producer-reader".into()),
        ..Default::default()
    };
    let mut conn = BrokerConnection::connect(bootstrap, &opts, deadline()).expect("connect");
    let v = conn.pick_version::<MetadataRequest>().expect("Metadata");
    let md = conn
        .send_request(&MetadataRequest::for_topics([topic]), v, deadline())
        .expect("metadata");
    let topic_id: Uuid = md.topic(topic).expect("topic").topic_id;
    let fv = conn.pick_version::<FetchRequest>().expect("Fetch");
    let mut out = BTreeMap::new();
    for p in 0..partitions {
        let mut records = Vec::new();
        let mut offset = 0i64;
        let until = deadline();
        loop {
            let req = FetchRequest {
                max_wait_ms: 100,
                min_bytes: 1,
                max_bytes: 8 << 20,
                topics: vec![FetchTopic {
                    topic: topic.to_string(),
                    topic_id,
                    partitions: vec![FetchPartition {
                        partition: p,
                        fetch_offset: offset,
                        partition_max_bytes: 4 << 20,
                        ..Default::default()
                    }],
                }],
                ..Default::default()
            };
            let resp = conn.send_request(&req, fv, deadline()).expect("fetch");
            let pd = &resp.responses[0].partitions[0];
            assert_eq!(pd.error(), BrokerErrorKind::None, "Fetch v{fv} {topic}-{p}");
            for raw in BatchReader::new(pd.records_bytes()) {
                let raw = raw.expect("batch");
                let batch = raw.decode(&DecodeLimits::default()).expect("decode");
                for r in batch.records() {
                    if r.offset < offset {
                        continue;
                    }
                    assert_eq!(r.offset, offset, "offsets are consecutive");
                    offset += 1;
                    records.push(Seen::of(&r));
                }
            }
            if offset >= pd.high_watermark {
                break;
            }
            assert!(Instant::now() < until, "{topic}-{p}: stuck at {offset}");
        }
        out.insert(p, records);
    }
    out
}

/// Asserts that each of `partitions` partitions holds exactly the values sent to it
/// (`expected`), in order, once: a duplicate or a gap shows as the first difference.
pub fn assert_each_partition_holds(
    expected: &BTreeMap<i32, Vec<Vec<u8>>>,
    got: &BTreeMap<i32, Vec<Seen>>,
    partitions: i32,
) {
    for part in 0..partitions {
        let want = expected.get(&part).cloned().unwrap_or_default();
        let have: Vec<Vec<u8>> = got
            .get(&part)
            .map(|v| {
                v.iter()
                    .map(|r| r.value.clone().unwrap_or_default())
                    .collect()
            })
            .unwrap_or_default();
        if have != want {
            let first = have.iter().zip(&want).position(|(h, w)| h != w);
            panic!(
                "partition {part}: {} records read, {} sent; first difference at {first:?}",
                have.len(),
                want.len()
            );
        }
    }
}
