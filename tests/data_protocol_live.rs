//! The data-path messages against a real broker (issue 15): ListOffsets earliest/latest,
//! InitProducerId, Produce of a hand-built minimal record batch (magic 2, uncompressed,
//! idempotent), Fetch of it back and OffsetForLeaderEpoch of the current epoch, at the
//! negotiated versions and at the last version that names topics (Fetch v12, Produce v12) as
//! well as the topic-id versions (v13+).
//!
//! The record batch is built here byte by byte (CRC-32C by a small helper): the record-batch
//! codec is not this test's subject, and the broker checks the CRC, so a wrong helper fails.
//!
//! Run: `KSG_CLUSTER_ENV=.kafka/run/cluster.env cargo test --test data_protocol_live -- --ignored`.

mod common;

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::{create_topic, unique_name, Cluster, LIVE};
use kafka_streams_group::client::{BrokerConnectOptions, BrokerConnection};
use kafka_streams_group::protocol::api::fetch::{
    FetchPartition, FetchRequest, FetchResponse, FetchTopic, PartitionData,
};
use kafka_streams_group::protocol::api::init_producer_id::{
    InitProducerIdRequest, InitProducerIdResponse,
};
use kafka_streams_group::protocol::api::list_offsets::{
    ListOffsetsPartition, ListOffsetsPartitionResponse, ListOffsetsRequest, ListOffsetsTopic,
    EARLIEST_TIMESTAMP, LATEST_TIMESTAMP,
};
use kafka_streams_group::protocol::api::metadata::MetadataRequest;
use kafka_streams_group::protocol::api::offset_for_leader_epoch::{
    EpochEndOffset, OffsetForLeaderEpochRequest, OffsetForLeaderPartition, OffsetForLeaderTopic,
    CONSUMER_REPLICA_ID,
};
use kafka_streams_group::protocol::api::produce::{
    PartitionProduceData, PartitionProduceResponse, ProduceRequest, TopicProduceData, ACKS_ALL,
};
use kafka_streams_group::protocol::{ApiMessage, BrokerErrorKind, Uuid};

fn deadline() -> Instant {
    Instant::now() + Duration::from_secs(30)
}

/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), bit by bit: small and obviously
/// right, which is all a test helper needs.
fn crc32c(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0x82F6_3B78
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

fn varint(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    while z >= 0x80 {
        out.push((z as u8) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

/// A magic-2 batch of `values` (null keys, no headers), uncompressed, idempotent.
fn record_batch(producer_id: i64, epoch: i16, base_sequence: i32, values: &[&[u8]]) -> Vec<u8> {
    let ts = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_millis() as i64;
    let mut records = Vec::new();
    for (i, v) in values.iter().enumerate() {
        let mut r = vec![0u8]; // attributes
        varint(&mut r, 0); // timestamp delta
        varint(&mut r, i as i64); // offset delta
        varint(&mut r, -1); // null key
        varint(&mut r, v.len() as i64);
        r.extend_from_slice(v);
        varint(&mut r, 0); // headers
        varint(&mut records, r.len() as i64);
        records.extend_from_slice(&r);
    }
    // From attributes to the end: what the CRC covers.
    let mut body = Vec::new();
    body.extend_from_slice(&0i16.to_be_bytes()); // attributes: none
    body.extend_from_slice(&(values.len() as i32 - 1).to_be_bytes()); // last offset delta
    body.extend_from_slice(&ts.to_be_bytes()); // base timestamp
    body.extend_from_slice(&ts.to_be_bytes()); // max timestamp
    body.extend_from_slice(&producer_id.to_be_bytes());
    body.extend_from_slice(&epoch.to_be_bytes());
    body.extend_from_slice(&base_sequence.to_be_bytes());
    body.extend_from_slice(&(values.len() as i32).to_be_bytes());
    body.extend_from_slice(&records);
    let mut batch = Vec::new();
    batch.extend_from_slice(&0i64.to_be_bytes()); // base offset (the broker assigns it)
    batch.extend_from_slice(&((4 + 1 + 4 + body.len()) as i32).to_be_bytes()); // batch length
    batch.extend_from_slice(&(-1i32).to_be_bytes()); // partition leader epoch
    batch.push(2); // magic
    batch.extend_from_slice(&crc32c(&body).to_be_bytes());
    batch.extend_from_slice(&body);
    batch
}

#[test]
fn crc32c_known_answer() {
    // RFC 3720 B.4 test vector: 32 bytes of zeros.
    assert_eq!(crc32c(&[0; 32]), 0x8A91_36AA);
    assert_eq!(crc32c(b"123456789"), 0xE306_9283);
}

struct Broker {
    conn: BrokerConnection,
    topic: String,
    topic_id: Uuid,
}

impl Broker {
    fn open(topic: &str) -> Broker {
        let cluster = Cluster::get();
        create_topic(&cluster, topic, 1);
        let opts = BrokerConnectOptions {
            client_id: Some("ksg-data-protocol-live".into()),
            ..Default::default()
        };
        let mut conn =
            BrokerConnection::connect(cluster.plaintext(), &opts, deadline()).expect("connect");
        // Wait until the new partition has a leader and read the topic id.
        let v = conn.pick_version::<MetadataRequest>().expect("Metadata");
        let until = deadline();
        let topic_id = loop {
            let md = conn
                .send_request(&MetadataRequest::for_topics([topic]), v, deadline())
                .expect("metadata");
            let t = md.topic(topic).expect("topic in metadata");
            if t.error() == BrokerErrorKind::None
                && t.partitions.first().is_some_and(|p| p.leader_id >= 0)
            {
                break t.topic_id;
            }
            assert!(Instant::now() < until, "no leader for {topic}: {t:?}");
            std::thread::sleep(Duration::from_millis(100));
        };
        assert_ne!(topic_id, Uuid::ZERO, "Metadata v{v} carries topic ids");
        Broker {
            conn,
            topic: topic.to_string(),
            topic_id,
        }
    }

    fn list_offset(&mut self, timestamp: i64) -> ListOffsetsPartitionResponse {
        let v = self
            .conn
            .pick_version::<ListOffsetsRequest>()
            .expect("ListOffsets");
        let req = ListOffsetsRequest {
            topics: vec![ListOffsetsTopic {
                name: self.topic.clone(),
                partitions: vec![ListOffsetsPartition {
                    partition_index: 0,
                    timestamp,
                    ..Default::default()
                }],
            }],
            ..Default::default()
        };
        let until = deadline();
        loop {
            let resp = self
                .conn
                .send_request(&req, v, deadline())
                .expect("list offsets");
            let p = *resp.partition(&self.topic, 0).expect("partition answered");
            // A partition created a moment ago may not have its leader epoch everywhere yet.
            if p.error().is_retriable() && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(100));
                continue;
            }
            assert_eq!(p.error(), BrokerErrorKind::None, "ListOffsets v{v}: {p:?}");
            return p;
        }
    }

    fn epoch_end(&mut self, current: i32, epoch: i32) -> EpochEndOffset {
        let v = self
            .conn
            .pick_version::<OffsetForLeaderEpochRequest>()
            .expect("OffsetForLeaderEpoch");
        let req = OffsetForLeaderEpochRequest {
            replica_id: CONSUMER_REPLICA_ID,
            topics: vec![OffsetForLeaderTopic {
                topic: self.topic.clone(),
                partitions: vec![OffsetForLeaderPartition {
                    partition: 0,
                    current_leader_epoch: current,
                    leader_epoch: epoch,
                }],
            }],
        };
        let resp = self
            .conn
            .send_request(&req, v, deadline())
            .expect("epoch end");
        assert_eq!(resp.topics.len(), 1, "OffsetForLeaderEpoch v{v}: {resp:?}");
        resp.topics[0].partitions[0]
    }

    fn produce(&mut self, version: i16, batch: &[u8]) -> PartitionProduceResponse {
        let by_id = version >= 13;
        let req = ProduceRequest {
            transactional_id: None,
            acks: ACKS_ALL,
            timeout_ms: 10_000,
            topic_data: vec![TopicProduceData {
                name: if by_id {
                    String::new()
                } else {
                    self.topic.clone()
                },
                topic_id: if by_id { self.topic_id } else { Uuid::ZERO },
                partition_data: vec![PartitionProduceData {
                    index: 0,
                    records: Some(batch.to_vec()),
                }],
            }],
        };
        let resp = self
            .conn
            .send_request(&req, version, deadline())
            .expect("produce");
        assert_eq!(resp.responses.len(), 1, "Produce v{version}: {resp:?}");
        let t = &resp.responses[0];
        if by_id {
            assert_eq!(t.topic_id, self.topic_id);
        } else {
            assert_eq!(t.name, self.topic);
        }
        t.partition_responses[0].clone()
    }

    fn fetch(&mut self, version: i16, offset: i64) -> PartitionData {
        let by_id = version >= 13;
        let req = FetchRequest {
            max_wait_ms: 500,
            min_bytes: 1,
            max_bytes: 1 << 20,
            topics: vec![FetchTopic {
                topic: if by_id {
                    String::new()
                } else {
                    self.topic.clone()
                },
                topic_id: if by_id { self.topic_id } else { Uuid::ZERO },
                partitions: vec![FetchPartition {
                    partition: 0,
                    fetch_offset: offset,
                    partition_max_bytes: 1 << 20,
                    ..Default::default()
                }],
            }],
            ..Default::default()
        };
        let resp: FetchResponse = self
            .conn
            .send_request(&req, version, deadline())
            .expect("fetch");
        assert_eq!(
            resp.error(),
            BrokerErrorKind::None,
            "Fetch v{version}: {resp:?}"
        );
        assert_eq!(resp.responses.len(), 1, "Fetch v{version}: {resp:?}");
        resp.responses[0].partitions[0].clone()
    }
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn list_offsets_init_producer_id_produce_and_fetch() {
    let _ = LIVE;
    let topic = unique_name("ksg-data-protocol");
    let mut b = Broker::open(&topic);
    let versions = b.conn.api_versions().clone();
    for (name, key, ours) in [
        (
            "Produce",
            ProduceRequest::API_KEY,
            ProduceRequest::MAX_VERSION,
        ),
        ("Fetch", FetchRequest::API_KEY, FetchRequest::MAX_VERSION),
        (
            "ListOffsets",
            ListOffsetsRequest::API_KEY,
            ListOffsetsRequest::MAX_VERSION,
        ),
        (
            "InitProducerId",
            InitProducerIdRequest::API_KEY,
            InitProducerIdRequest::MAX_VERSION,
        ),
        (
            "OffsetForLeaderEpoch",
            OffsetForLeaderEpochRequest::API_KEY,
            OffsetForLeaderEpochRequest::MAX_VERSION,
        ),
    ] {
        eprintln!(
            "{name}: broker {:?}, crate max v{ours}",
            versions.range(key)
        );
    }

    // An empty partition: earliest = latest = 0.
    assert_eq!(b.list_offset(EARLIEST_TIMESTAMP).offset, 0);
    let latest = b.list_offset(LATEST_TIMESTAMP);
    assert_eq!(latest.offset, 0);
    assert!(
        latest.leader_epoch >= 0,
        "ListOffsets answers the leader epoch: {latest:?}"
    );

    // An idempotent producer id.
    let v = b
        .conn
        .pick_version::<InitProducerIdRequest>()
        .expect("InitProducerId");
    // Right after a broker starts, the first answers can be COORDINATOR_LOAD_IN_PROGRESS
    // (retriable, as Java's producer treats it); retry those until the deadline.
    let until = deadline();
    let pid: InitProducerIdResponse = loop {
        let pid: InitProducerIdResponse = b
            .conn
            .send_request(
                &InitProducerIdRequest {
                    transaction_timeout_ms: 60_000,
                    ..Default::default()
                },
                v,
                deadline(),
            )
            .expect("init producer id");
        if pid.error().is_retriable() && Instant::now() < until {
            eprintln!("InitProducerId v{v}: {}, retrying", pid.error());
            std::thread::sleep(Duration::from_millis(200));
            continue;
        }
        break pid;
    };
    assert_eq!(
        pid.error(),
        BrokerErrorKind::None,
        "InitProducerId v{v}: {pid:?}"
    );
    assert!(pid.producer_id >= 0 && pid.producer_epoch >= 0, "{pid:?}");

    // Produce at the last name version and at the negotiated one (topic ids from v13).
    let produce_max = b.conn.pick_version::<ProduceRequest>().expect("Produce");
    let mut produce_versions = vec![12.min(produce_max)];
    if produce_max > 12 {
        produce_versions.push(produce_max);
    }
    let values: [&[u8]; 3] = [b"a", b"", b"value three"];
    let mut batches = Vec::new();
    let mut next_offset = 0i64;
    for (i, &version) in produce_versions.iter().enumerate() {
        let seq = (i * values.len()) as i32;
        let batch = record_batch(pid.producer_id, pid.producer_epoch, seq, &values);
        let p = b.produce(version, &batch);
        assert_eq!(
            p.error(),
            BrokerErrorKind::None,
            "Produce v{version}: {p:?}"
        );
        assert_eq!(p.base_offset, next_offset, "Produce v{version}");
        // The same batch again (a retry): the broker recognises the sequence and answers
        // with the first append's offset instead of writing it twice.
        let again = b.produce(version, &batch);
        assert_eq!(
            again.error(),
            BrokerErrorKind::None,
            "retry v{version}: {again:?}"
        );
        assert_eq!(again.base_offset, next_offset, "retry v{version}");
        next_offset += values.len() as i64;
        batches.push(batch);
    }
    assert_eq!(b.list_offset(LATEST_TIMESTAMP).offset, next_offset);
    assert_eq!(b.list_offset(EARLIEST_TIMESTAMP).offset, 0);

    // Leader-epoch validation (KIP-320): the current epoch ends at the log end offset; an
    // epoch above the leader's is UNKNOWN_LEADER_EPOCH.
    let epoch = b.list_offset(LATEST_TIMESTAMP).leader_epoch;
    let end = b.epoch_end(epoch, epoch);
    assert_eq!(end.error(), BrokerErrorKind::None, "{end:?}");
    assert_eq!((end.leader_epoch, end.end_offset), (epoch, next_offset));
    let ahead = b.epoch_end(epoch + 1, epoch);
    assert_eq!(
        ahead.error(),
        BrokerErrorKind::UnknownLeaderEpoch,
        "{ahead:?}"
    );

    // Fetch everything back at the last name version and at the negotiated one.
    let fetch_max = b.conn.pick_version::<FetchRequest>().expect("Fetch");
    let mut fetch_versions = vec![12.min(fetch_max)];
    if fetch_max > 12 {
        fetch_versions.push(fetch_max);
    }
    for version in fetch_versions {
        let p = b.fetch(version, 0);
        assert_eq!(p.error(), BrokerErrorKind::None, "Fetch v{version}: {p:?}");
        assert_eq!(p.high_watermark, next_offset, "Fetch v{version}");
        let mut rest = p.records_bytes();
        let mut base = 0i64;
        for sent in &batches {
            assert!(rest.len() >= sent.len(), "Fetch v{version}: short records");
            let (got, tail) = rest.split_at(sent.len());
            // The broker assigns the base offset and the partition leader epoch (neither is
            // under the CRC); everything from the CRC on comes back as sent.
            assert_eq!(i64::from_be_bytes(got[..8].try_into().unwrap()), base);
            assert_eq!(&got[8..12], &sent[8..12], "batch length");
            assert!(i32::from_be_bytes(got[12..16].try_into().unwrap()) >= 0);
            assert_eq!(&got[16..], &sent[16..], "Fetch v{version}: batch content");
            assert_eq!(
                crc32c(&got[21..]),
                u32::from_be_bytes(got[17..21].try_into().unwrap())
            );
            base += values.len() as i64;
            rest = tail;
        }
        assert!(
            rest.is_empty(),
            "Fetch v{version}: {} extra bytes",
            rest.len()
        );
        // From the end: nothing, and no error.
        let end = b.fetch(version, next_offset);
        assert_eq!(end.error(), BrokerErrorKind::None);
        assert!(end.records_bytes().is_empty());
        // Past the end: OFFSET_OUT_OF_RANGE.
        let past = b.fetch(version, next_offset + 100);
        assert_eq!(
            past.error(),
            BrokerErrorKind::OffsetOutOfRange,
            "Fetch v{version}"
        );
    }
}
