//! Field tables for the data-path APIs (Fetch, ListOffsets, Produce, InitProducerId,
//! OffsetForLeaderEpoch, DeleteRecords), from the schema files. Record payloads are opaque bytes here; see
//! `kafka_writes` in the harness for how Kafka's JSON converter shows them.

use crate::model::{ANY, NEVER};
use crate::Run;
use kafka_streams_group::protocol::api::{
    delete_records as dr, fetch as f, init_producer_id as ip, list_offsets as lo,
    offset_for_leader_epoch as oe, produce as p,
};
use kafka_streams_group::protocol::Uuid;

// Shared by Fetch and Produce responses.
conf!(f::LeaderIdAndEpoch {
    leader_id: "leaderId" [0, ANY, NEVER] = -1,
    leader_epoch: "leaderEpoch" [0, ANY, NEVER] = -1,
});
conf!(f::NodeEndpoint {
    node_id: "nodeId" [0, ANY, NEVER] = 0,
    host: "host" [0, ANY, NEVER] = String::new(),
    port: "port" [0, ANY, NEVER] = 0,
    rack: "rack" [0, ANY, 0] = None,
});

// Fetch (1), 4-18, flexible 12+.
conf!(f::ReplicaState {
    replica_id: "replicaId" [0, ANY, NEVER] = -1,
    replica_epoch: "replicaEpoch" [0, ANY, NEVER] = -1,
});
conf!(f::FetchPartition {
    partition: "partition" [0, ANY, NEVER] = 0,
    current_leader_epoch: "currentLeaderEpoch" [9, ANY, NEVER] = -1,
    fetch_offset: "fetchOffset" [0, ANY, NEVER] = 0,
    last_fetched_epoch: "lastFetchedEpoch" [12, ANY, NEVER] = -1,
    log_start_offset: "logStartOffset" [5, ANY, NEVER] = -1,
    partition_max_bytes: "partitionMaxBytes" [0, ANY, NEVER] = 0,
    replica_directory_id: "replicaDirectoryId" tagged [17, ANY, NEVER] = Uuid::ZERO,
    high_watermark: "highWatermark" tagged [18, ANY, NEVER] = i64::MAX,
});
conf!(f::FetchTopic {
    topic: "topic" [0, 12, NEVER] = String::new(),
    topic_id: "topicId" [13, ANY, NEVER] = Uuid::ZERO,
    partitions: "partitions" [0, ANY, NEVER] = Vec::new(),
});
conf!(f::ForgottenTopic {
    topic: "topic" [7, 12, NEVER] = String::new(),
    topic_id: "topicId" [13, ANY, NEVER] = Uuid::ZERO,
    partitions: "partitions" [7, ANY, NEVER] = Vec::new(),
});
conf!(f::FetchRequest {
    cluster_id: "clusterId" tagged [12, ANY, 12] = None,
    replica_id: "replicaId" [0, 14, NEVER] = -1,
    replica_state: "replicaState" tagged [15, ANY, NEVER] = f::ReplicaState::default(),
    max_wait_ms: "maxWaitMs" [0, ANY, NEVER] = 0,
    min_bytes: "minBytes" [0, ANY, NEVER] = 0,
    max_bytes: "maxBytes" [3, ANY, NEVER] = i32::MAX,
    isolation_level: "isolationLevel" [4, ANY, NEVER] = 0,
    session_id: "sessionId" [7, ANY, NEVER] = 0,
    session_epoch: "sessionEpoch" [7, ANY, NEVER] = -1,
    topics: "topics" [0, ANY, NEVER] = Vec::new(),
    forgotten_topics_data: "forgottenTopicsData" [7, ANY, NEVER] = Vec::new(),
    rack_id: "rackId" [11, ANY, NEVER] = String::new(),
});
conf!(f::EpochEndOffset {
    epoch: "epoch" [0, ANY, NEVER] = -1,
    end_offset: "endOffset" [0, ANY, NEVER] = -1,
});
conf!(f::SnapshotId {
    end_offset: "endOffset" [0, ANY, NEVER] = -1,
    epoch: "epoch" [0, ANY, NEVER] = -1,
});
conf!(f::AbortedTransaction {
    producer_id: "producerId" [4, ANY, NEVER] = 0,
    first_offset: "firstOffset" [4, ANY, NEVER] = 0,
});
conf!(f::PartitionData {
    partition_index: "partitionIndex" [0, ANY, NEVER] = 0,
    error_code: "errorCode" [0, ANY, NEVER] = 0,
    high_watermark: "highWatermark" [0, ANY, NEVER] = 0,
    last_stable_offset: "lastStableOffset" [4, ANY, NEVER] = -1,
    log_start_offset: "logStartOffset" [5, ANY, NEVER] = -1,
    diverging_epoch: "divergingEpoch" tagged [12, ANY, NEVER] = f::EpochEndOffset::default(),
    current_leader: "currentLeader" tagged [12, ANY, NEVER] = f::LeaderIdAndEpoch::default(),
    snapshot_id: "snapshotId" tagged [12, ANY, NEVER] = f::SnapshotId::default(),
    aborted_transactions: "abortedTransactions" [4, ANY, 4] = None,
    preferred_read_replica: "preferredReadReplica" [11, ANY, NEVER] = -1,
    records: "records" [0, ANY, 0] = None,
});
conf!(f::FetchableTopicResponse {
    topic: "topic" [0, 12, NEVER] = String::new(),
    topic_id: "topicId" [13, ANY, NEVER] = Uuid::ZERO,
    partitions: "partitions" [0, ANY, NEVER] = Vec::new(),
});
conf!(f::FetchResponse {
    throttle_time_ms: "throttleTimeMs" [1, ANY, NEVER] = 0,
    error_code: "errorCode" [7, ANY, NEVER] = 0,
    session_id: "sessionId" [7, ANY, NEVER] = 0,
    responses: "responses" [0, ANY, NEVER] = Vec::new(),
    node_endpoints: "nodeEndpoints" tagged [16, ANY, NEVER] = Vec::new(),
});

// ListOffsets (2), 1-11, flexible 6+.
conf!(lo::ListOffsetsPartition {
    partition_index: "partitionIndex" [0, ANY, NEVER] = 0,
    current_leader_epoch: "currentLeaderEpoch" [4, ANY, NEVER] = -1,
    timestamp: "timestamp" [0, ANY, NEVER] = 0,
});
conf!(lo::ListOffsetsTopic {
    name: "name" [0, ANY, NEVER] = String::new(),
    partitions: "partitions" [0, ANY, NEVER] = Vec::new(),
});
conf!(lo::ListOffsetsRequest {
    replica_id: "replicaId" [0, ANY, NEVER] = -1,
    isolation_level: "isolationLevel" [2, ANY, NEVER] = 0,
    topics: "topics" [0, ANY, NEVER] = Vec::new(),
    timeout_ms: "timeoutMs" [10, ANY, NEVER] = 0,
});
conf!(lo::ListOffsetsPartitionResponse {
    partition_index: "partitionIndex" [0, ANY, NEVER] = 0,
    error_code: "errorCode" [0, ANY, NEVER] = 0,
    timestamp: "timestamp" [1, ANY, NEVER] = -1,
    offset: "offset" [1, ANY, NEVER] = -1,
    leader_epoch: "leaderEpoch" [4, ANY, NEVER] = -1,
});
conf!(lo::ListOffsetsTopicResponse {
    name: "name" [0, ANY, NEVER] = String::new(),
    partitions: "partitions" [0, ANY, NEVER] = Vec::new(),
});
conf!(lo::ListOffsetsResponse {
    throttle_time_ms: "throttleTimeMs" [2, ANY, NEVER] = 0,
    topics: "topics" [0, ANY, NEVER] = Vec::new(),
});

// Produce (0), 3-13, flexible 9+.
conf!(p::PartitionProduceData {
    index: "index" [0, ANY, NEVER] = 0,
    records: "records" [0, ANY, 0] = None,
});
conf!(p::TopicProduceData {
    name: "name" [0, 12, NEVER] = String::new(),
    topic_id: "topicId" [13, ANY, NEVER] = Uuid::ZERO,
    partition_data: "partitionData" [0, ANY, NEVER] = Vec::new(),
});
conf!(p::ProduceRequest {
    transactional_id: "transactionalId" [3, ANY, 3] = None,
    acks: "acks" [0, ANY, NEVER] = 0,
    timeout_ms: "timeoutMs" [0, ANY, NEVER] = 0,
    topic_data: "topicData" [0, ANY, NEVER] = Vec::new(),
});
conf!(p::BatchIndexAndErrorMessage {
    batch_index: "batchIndex" [8, ANY, NEVER] = 0,
    batch_index_error_message: "batchIndexErrorMessage" [8, ANY, 8] = None,
});
conf!(p::PartitionProduceResponse {
    index: "index" [0, ANY, NEVER] = 0,
    error_code: "errorCode" [0, ANY, NEVER] = 0,
    base_offset: "baseOffset" [0, ANY, NEVER] = 0,
    log_append_time_ms: "logAppendTimeMs" [2, ANY, NEVER] = -1,
    log_start_offset: "logStartOffset" [5, ANY, NEVER] = -1,
    record_errors: "recordErrors" [8, ANY, NEVER] = Vec::new(),
    error_message: "errorMessage" [8, ANY, 8] = None,
    current_leader: "currentLeader" tagged [10, ANY, NEVER] = f::LeaderIdAndEpoch::default(),
});
conf!(p::TopicProduceResponse {
    name: "name" [0, 12, NEVER] = String::new(),
    topic_id: "topicId" [13, ANY, NEVER] = Uuid::ZERO,
    partition_responses: "partitionResponses" [0, ANY, NEVER] = Vec::new(),
});
conf!(p::ProduceResponse {
    responses: "responses" [0, ANY, NEVER] = Vec::new(),
    throttle_time_ms: "throttleTimeMs" [1, ANY, NEVER] = 0,
    node_endpoints: "nodeEndpoints" tagged [10, ANY, NEVER] = Vec::new(),
});

// InitProducerId (22), 0-6, flexible 2+.
conf!(ip::InitProducerIdRequest {
    transactional_id: "transactionalId" [0, ANY, 0] = None,
    transaction_timeout_ms: "transactionTimeoutMs" [0, ANY, NEVER] = 0,
    producer_id: "producerId" [3, ANY, NEVER] = -1,
    producer_epoch: "producerEpoch" [3, ANY, NEVER] = -1,
    enable_2pc: "enable2Pc" [6, ANY, NEVER] = false,
    keep_prepared_txn: "keepPreparedTxn" [6, ANY, NEVER] = false,
});
conf!(ip::InitProducerIdResponse {
    throttle_time_ms: "throttleTimeMs" [0, ANY, NEVER] = 0,
    error_code: "errorCode" [0, ANY, NEVER] = 0,
    producer_id: "producerId" [0, ANY, NEVER] = -1,
    producer_epoch: "producerEpoch" [0, ANY, NEVER] = 0,
    ongoing_txn_producer_id: "ongoingTxnProducerId" [6, ANY, NEVER] = -1,
    ongoing_txn_producer_epoch: "ongoingTxnProducerEpoch" [6, ANY, NEVER] = -1,
});

// OffsetForLeaderEpoch (23), 2-4, flexible 4+.
conf!(oe::OffsetForLeaderPartition {
    partition: "partition" [0, ANY, NEVER] = 0,
    current_leader_epoch: "currentLeaderEpoch" [2, ANY, NEVER] = -1,
    leader_epoch: "leaderEpoch" [0, ANY, NEVER] = 0,
});
conf!(oe::OffsetForLeaderTopic {
    topic: "topic" [0, ANY, NEVER] = String::new(),
    partitions: "partitions" [0, ANY, NEVER] = Vec::new(),
});
conf!(oe::OffsetForLeaderEpochRequest {
    replica_id: "replicaId" [3, ANY, NEVER] = -2,
    topics: "topics" [0, ANY, NEVER] = Vec::new(),
});
conf!(oe::EpochEndOffset {
    error_code: "errorCode" [0, ANY, NEVER] = 0,
    partition: "partition" [0, ANY, NEVER] = 0,
    leader_epoch: "leaderEpoch" [1, ANY, NEVER] = -1,
    end_offset: "endOffset" [0, ANY, NEVER] = -1,
});
conf!(oe::OffsetForLeaderTopicResult {
    topic: "topic" [0, ANY, NEVER] = String::new(),
    partitions: "partitions" [0, ANY, NEVER] = Vec::new(),
});
conf!(oe::OffsetForLeaderEpochResponse {
    throttle_time_ms: "throttleTimeMs" [2, ANY, NEVER] = 0,
    topics: "topics" [0, ANY, NEVER] = Vec::new(),
});

// DeleteRecords (21), 0-2, flexible 2+.
conf!(dr::DeleteRecordsPartition {
    partition_index: "partitionIndex" [0, ANY, NEVER] = 0,
    offset: "offset" [0, ANY, NEVER] = 0,
});
conf!(dr::DeleteRecordsTopic {
    name: "name" [0, ANY, NEVER] = String::new(),
    partitions: "partitions" [0, ANY, NEVER] = Vec::new(),
});
conf!(dr::DeleteRecordsRequest {
    topics: "topics" [0, ANY, NEVER] = Vec::new(),
    timeout_ms: "timeoutMs" [0, ANY, NEVER] = 0,
});
conf!(dr::DeleteRecordsPartitionResult {
    partition_index: "partitionIndex" [0, ANY, NEVER] = 0,
    low_watermark: "lowWatermark" [0, ANY, NEVER] = 0,
    error_code: "errorCode" [0, ANY, NEVER] = 0,
});
conf!(dr::DeleteRecordsTopicResult {
    name: "name" [0, ANY, NEVER] = String::new(),
    partitions: "partitions" [0, ANY, NEVER] = Vec::new(),
});
conf!(dr::DeleteRecordsResponse {
    throttle_time_ms: "throttleTimeMs" [0, ANY, NEVER] = 0,
    topics: "topics" [0, ANY, NEVER] = Vec::new(),
});

/// Runs every data-path API, every version the crate implements.
pub fn run(run: &mut Run) {
    run.pair::<p::ProduceRequest, p::ProduceResponse>(3..=13);
    run.pair::<f::FetchRequest, f::FetchResponse>(4..=18);
    run.pair::<lo::ListOffsetsRequest, lo::ListOffsetsResponse>(1..=11);
    run.pair::<ip::InitProducerIdRequest, ip::InitProducerIdResponse>(0..=6);
    run.pair::<oe::OffsetForLeaderEpochRequest, oe::OffsetForLeaderEpochResponse>(2..=4);
    run.pair::<dr::DeleteRecordsRequest, dr::DeleteRecordsResponse>(0..=2);
}
