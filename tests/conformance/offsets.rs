//! Field tables for OffsetCommit (8) and OffsetFetch (9), from the schema files.

use crate::model::{ANY, NEVER};
use crate::Run;
use kafka_streams_group::protocol::api::{offset_commit as oc, offset_fetch as of};
use kafka_streams_group::protocol::Uuid;

// OffsetCommit (8), 2-10, flexible 8+.
conf!(oc::OffsetCommitRequestPartition {
    partition_index: "partitionIndex" [0, ANY, NEVER] = 0,
    committed_offset: "committedOffset" [0, ANY, NEVER] = 0,
    committed_leader_epoch: "committedLeaderEpoch" [6, ANY, NEVER] = -1,
    committed_metadata: "committedMetadata" [0, ANY, 0] = None,
});
conf!(oc::OffsetCommitRequestTopic {
    name: "name" [0, 9, NEVER] = String::new(),
    topic_id: "topicId" [10, ANY, NEVER] = Uuid::ZERO,
    partitions: "partitions" [0, ANY, NEVER] = Vec::new(),
});
conf!(oc::OffsetCommitRequest {
    group_id: "groupId" [0, ANY, NEVER] = String::new(),
    generation_id_or_member_epoch: "generationIdOrMemberEpoch" [1, ANY, NEVER] = -1,
    member_id: "memberId" [1, ANY, NEVER] = String::new(),
    group_instance_id: "groupInstanceId" [7, ANY, 7] = None,
    retention_time_ms: "retentionTimeMs" [2, 4, NEVER] = -1,
    topics: "topics" [0, ANY, NEVER] = Vec::new(),
});
conf!(oc::OffsetCommitResponsePartition {
    partition_index: "partitionIndex" [0, ANY, NEVER] = 0,
    error_code: "errorCode" [0, ANY, NEVER] = 0,
});
conf!(oc::OffsetCommitResponseTopic {
    name: "name" [0, 9, NEVER] = String::new(),
    topic_id: "topicId" [10, ANY, NEVER] = Uuid::ZERO,
    partitions: "partitions" [0, ANY, NEVER] = Vec::new(),
});
conf!(oc::OffsetCommitResponse {
    throttle_time_ms: "throttleTimeMs" [3, ANY, NEVER] = 0,
    topics: "topics" [0, ANY, NEVER] = Vec::new(),
});

// OffsetFetch (9), 1-10, flexible 6+. The v1-7 and v8+ topic/partition structs share one Rust
// type each (their fields differ only by version range).
conf!(of::OffsetFetchRequestTopic {
    name: "name" [0, 9, NEVER] = String::new(),
    topic_id: "topicId" [10, ANY, NEVER] = Uuid::ZERO,
    partition_indexes: "partitionIndexes" [0, ANY, NEVER] = Vec::new(),
});
conf!(of::OffsetFetchRequestGroup {
    group_id: "groupId" [8, ANY, NEVER] = String::new(),
    member_id: "memberId" [9, ANY, 9] = None,
    member_epoch: "memberEpoch" [9, ANY, NEVER] = -1,
    topics: "topics" [8, ANY, 8] = Some(Vec::new()),
});
conf!(of::OffsetFetchRequest {
    group_id: "groupId" [0, 7, NEVER] = String::new(),
    topics: "topics" [0, 7, 2] = Some(Vec::new()),
    groups: "groups" [8, ANY, NEVER] = Vec::new(),
    require_stable: "requireStable" [7, ANY, NEVER] = false,
});
conf!(of::OffsetFetchResponsePartition {
    partition_index: "partitionIndex" [0, ANY, NEVER] = 0,
    committed_offset: "committedOffset" [0, ANY, NEVER] = 0,
    committed_leader_epoch: "committedLeaderEpoch" [5, ANY, NEVER] = -1,
    metadata: "metadata" [0, ANY, 0] = None,
    error_code: "errorCode" [0, ANY, NEVER] = 0,
});
conf!(of::OffsetFetchResponseTopic {
    name: "name" [0, 9, NEVER] = String::new(),
    topic_id: "topicId" [10, ANY, NEVER] = Uuid::ZERO,
    partitions: "partitions" [0, ANY, NEVER] = Vec::new(),
});
conf!(of::OffsetFetchResponseGroup {
    group_id: "groupId" [8, ANY, NEVER] = String::new(),
    topics: "topics" [8, ANY, NEVER] = Vec::new(),
    error_code: "errorCode" [8, ANY, NEVER] = 0,
});
conf!(of::OffsetFetchResponse {
    throttle_time_ms: "throttleTimeMs" [3, ANY, NEVER] = 0,
    topics: "topics" [0, 7, NEVER] = Vec::new(),
    error_code: "errorCode" [2, 7, NEVER] = 0,
    groups: "groups" [8, ANY, NEVER] = Vec::new(),
});

/// Runs both offset APIs, every version.
pub fn run(run: &mut Run) {
    run.pair::<oc::OffsetCommitRequest, oc::OffsetCommitResponse>(2..=10);
    run.pair::<of::OffsetFetchRequest, of::OffsetFetchResponse>(1..=10);
}
