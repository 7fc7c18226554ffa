//! The Metadata case of issue 8 item 2, shared by `benches/differential.rs` (criterion, wall
//! time) and `examples/bench_member.rs codec-probe` (instruction counts under callgrind): a
//! v12 response of `topics` topics × `partitions` partitions, 3 brokers, replication factor 3.
#![allow(dead_code)]

use kafka_streams_group::protocol::api::metadata::{
    MetadataResponse, MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
};
use kafka_streams_group::protocol::Uuid;

/// The Metadata version both decoders are measured at.
pub const METADATA_V: i16 = 12;

pub fn metadata(topics: usize, partitions: i32) -> MetadataResponse {
    MetadataResponse {
        brokers: (1..=3)
            .map(|n| MetadataResponseBroker {
                node_id: n,
                host: format!("broker-{n}.kafka.example"),
                port: 9092,
                rack: Some(format!("rack-{n}")),
            })
            .collect(),
        cluster_id: Some("MkU3OEVBNTcwNTJENDM2Qg".into()),
        controller_id: 1,
        topics: (0..topics)
            .map(|t| {
                let mut id = [0u8; 16];
                id[..8].copy_from_slice(&(t as u64 + 1).to_be_bytes());
                MetadataResponseTopic {
                    error_code: 0,
                    name: Some(format!("bench-topic-{t:04}")),
                    topic_id: Uuid(id),
                    is_internal: false,
                    partitions: (0..partitions)
                        .map(|p| MetadataResponsePartition {
                            error_code: 0,
                            partition_index: p,
                            leader_id: 1 + p % 3,
                            leader_epoch: 7,
                            replica_nodes: [1 + p % 3, 1 + (p + 1) % 3, 1 + (p + 2) % 3].into(),
                            isr_nodes: [1 + p % 3, 1 + (p + 1) % 3, 1 + (p + 2) % 3].into(),
                            offline_replicas: Default::default(),
                        })
                        .collect(),
                    topic_authorized_operations: -2147483648,
                }
            })
            .collect(),
        cluster_authorized_operations: -2147483648,
        ..Default::default()
    }
}
