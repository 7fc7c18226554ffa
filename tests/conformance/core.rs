//! Field tables for the APIs of the `protocol-core` branch, from the schema files
//! (ApiVersions, Metadata, FindCoordinator, SaslHandshake, SaslAuthenticate, CreateTopics).

use crate::model::{ANY, NEVER};
use crate::Run;
use kafka_streams_group::protocol::api::{
    api_versions as av, create_topics as ct, find_coordinator as fc, metadata as md,
    sasl_authenticate as sa, sasl_handshake as sh,
};
use kafka_streams_group::protocol::node_ids::NodeIds;
use kafka_streams_group::protocol::Uuid;

// ApiVersions (18), 0-5, flexible 3+.
conf!(av::ApiVersionsRequest {
    client_software_name: "clientSoftwareName" [3, ANY, NEVER] = String::new(),
    client_software_version: "clientSoftwareVersion" [3, ANY, NEVER] = String::new(),
    cluster_id: "clusterId" [5, ANY, 5] = None,
    node_id: "nodeId" [5, ANY, NEVER] = -1,
});
conf!(av::ApiVersion {
    api_key: "apiKey" [0, ANY, NEVER] = 0,
    min_version: "minVersion" [0, ANY, NEVER] = 0,
    max_version: "maxVersion" [0, ANY, NEVER] = 0,
});
conf!(av::SupportedFeatureKey {
    name: "name" [3, ANY, NEVER] = String::new(),
    min_version: "minVersion" [3, ANY, NEVER] = 0,
    max_version: "maxVersion" [3, ANY, NEVER] = 0,
});
conf!(av::FinalizedFeatureKey {
    name: "name" [3, ANY, NEVER] = String::new(),
    max_version_level: "maxVersionLevel" [3, ANY, NEVER] = 0,
    min_version_level: "minVersionLevel" [3, ANY, NEVER] = 0,
});
conf!(av::ApiVersionsResponse {
    error_code: "errorCode" [0, ANY, NEVER] = 0,
    api_keys: "apiKeys" [0, ANY, NEVER] = Vec::new(),
    throttle_time_ms: "throttleTimeMs" [1, ANY, NEVER] = 0,
    supported_features: "supportedFeatures" tagged [3, ANY, NEVER] = Vec::new(),
    finalized_features_epoch: "finalizedFeaturesEpoch" tagged [3, ANY, NEVER] = -1,
    finalized_features: "finalizedFeatures" tagged [3, ANY, NEVER] = Vec::new(),
    zk_migration_ready: "zkMigrationReady" tagged [3, ANY, NEVER] = false,
});

// Metadata (3), 0-13, flexible 9+.
conf!(md::MetadataRequestTopic {
    topic_id: "topicId" [10, ANY, NEVER] = Uuid::ZERO,
    name: "name" [0, ANY, 10] = None,
});
conf!(md::MetadataRequest {
    topics: "topics" [0, ANY, 1] = None,
    allow_auto_topic_creation: "allowAutoTopicCreation" [4, ANY, NEVER] = true,
    include_cluster_authorized_operations: "includeClusterAuthorizedOperations" [8, 10, NEVER] = false,
    include_topic_authorized_operations: "includeTopicAuthorizedOperations" [8, ANY, NEVER] = false,
});
conf!(md::MetadataResponseBroker {
    node_id: "nodeId" [0, ANY, NEVER] = 0,
    host: "host" [0, ANY, NEVER] = String::new(),
    port: "port" [0, ANY, NEVER] = 0,
    rack: "rack" [1, ANY, 1] = None,
});
conf!(md::MetadataResponsePartition {
    error_code: "errorCode" [0, ANY, NEVER] = 0,
    partition_index: "partitionIndex" [0, ANY, NEVER] = 0,
    leader_id: "leaderId" [0, ANY, NEVER] = 0,
    leader_epoch: "leaderEpoch" [7, ANY, NEVER] = -1,
    replica_nodes: "replicaNodes" [0, ANY, NEVER] = NodeIds::new(),
    isr_nodes: "isrNodes" [0, ANY, NEVER] = NodeIds::new(),
    offline_replicas: "offlineReplicas" [5, ANY, NEVER] = NodeIds::new(),
});
conf!(md::MetadataResponseTopic {
    error_code: "errorCode" [0, ANY, NEVER] = 0,
    name: "name" [0, ANY, 12] = None,
    topic_id: "topicId" [10, ANY, NEVER] = Uuid::ZERO,
    is_internal: "isInternal" [1, ANY, NEVER] = false,
    partitions: "partitions" [0, ANY, NEVER] = Vec::new(),
    topic_authorized_operations: "topicAuthorizedOperations" [8, ANY, NEVER] = i32::MIN,
});
conf!(md::MetadataResponse {
    throttle_time_ms: "throttleTimeMs" [3, ANY, NEVER] = 0,
    brokers: "brokers" [0, ANY, NEVER] = Vec::new(),
    cluster_id: "clusterId" [2, ANY, 2] = None,
    controller_id: "controllerId" [1, ANY, NEVER] = -1,
    topics: "topics" [0, ANY, NEVER] = Vec::new(),
    cluster_authorized_operations: "clusterAuthorizedOperations" [8, 10, NEVER] = i32::MIN,
    error_code: "errorCode" [13, ANY, NEVER] = 0,
});

// FindCoordinator (10), 0-6, flexible 3+.
conf!(fc::FindCoordinatorRequest {
    key: "key" [0, 3, NEVER] = String::new(),
    key_type: "keyType" [1, ANY, NEVER] = 0,
    coordinator_keys: "coordinatorKeys" [4, ANY, NEVER] = Vec::new(),
});
conf!(fc::Coordinator {
    key: "key" [4, ANY, NEVER] = String::new(),
    node_id: "nodeId" [4, ANY, NEVER] = 0,
    host: "host" [4, ANY, NEVER] = String::new(),
    port: "port" [4, ANY, NEVER] = 0,
    error_code: "errorCode" [4, ANY, NEVER] = 0,
    error_message: "errorMessage" [4, ANY, 4] = None,
});
conf!(fc::FindCoordinatorResponse {
    throttle_time_ms: "throttleTimeMs" [1, ANY, NEVER] = 0,
    error_code: "errorCode" [0, 3, NEVER] = 0,
    error_message: "errorMessage" [1, 3, 1] = None,
    node_id: "nodeId" [0, 3, NEVER] = 0,
    host: "host" [0, 3, NEVER] = String::new(),
    port: "port" [0, 3, NEVER] = 0,
    coordinators: "coordinators" [4, ANY, NEVER] = Vec::new(),
});

// SaslHandshake (17), 0-1, never flexible.
conf!(sh::SaslHandshakeRequest {
    mechanism: "mechanism" [0, ANY, NEVER] = String::new(),
});
conf!(sh::SaslHandshakeResponse {
    error_code: "errorCode" [0, ANY, NEVER] = 0,
    mechanisms: "mechanisms" [0, ANY, NEVER] = Vec::new(),
});

// SaslAuthenticate (36), 0-2, flexible 2+.
conf!(sa::SaslAuthenticateRequest {
    auth_bytes: "authBytes" [0, ANY, NEVER] = Vec::new(),
});
conf!(sa::SaslAuthenticateResponse {
    error_code: "errorCode" [0, ANY, NEVER] = 0,
    error_message: "errorMessage" [0, ANY, 0] = None,
    auth_bytes: "authBytes" [0, ANY, NEVER] = Vec::new(),
    session_lifetime_ms: "sessionLifetimeMs" [1, ANY, NEVER] = 0,
});

// CreateTopics (19), 2-7, flexible 5+.
conf!(ct::CreatableReplicaAssignment {
    partition_index: "partitionIndex" [0, ANY, NEVER] = 0,
    broker_ids: "brokerIds" [0, ANY, NEVER] = Vec::new(),
});
conf!(ct::CreatableTopicConfig {
    name: "name" [0, ANY, NEVER] = String::new(),
    value: "value" [0, ANY, 0] = None,
});
conf!(ct::CreatableTopic {
    name: "name" [0, ANY, NEVER] = String::new(),
    num_partitions: "numPartitions" [0, ANY, NEVER] = 0,
    replication_factor: "replicationFactor" [0, ANY, NEVER] = 0,
    assignments: "assignments" [0, ANY, NEVER] = Vec::new(),
    configs: "configs" [0, ANY, NEVER] = Vec::new(),
});
conf!(ct::CreateTopicsRequest {
    topics: "topics" [0, ANY, NEVER] = Vec::new(),
    timeout_ms: "timeoutMs" [0, ANY, NEVER] = 60_000,
    validate_only: "validateOnly" [1, ANY, NEVER] = false,
});
conf!(ct::CreatableTopicConfigs {
    name: "name" [5, ANY, NEVER] = String::new(),
    value: "value" [5, ANY, 5] = None,
    read_only: "readOnly" [5, ANY, NEVER] = false,
    config_source: "configSource" [5, ANY, NEVER] = -1,
    is_sensitive: "isSensitive" [5, ANY, NEVER] = false,
});
conf!(ct::CreatableTopicResult {
    name: "name" [0, ANY, NEVER] = String::new(),
    topic_id: "topicId" [7, ANY, NEVER] = Uuid::ZERO,
    error_code: "errorCode" [0, ANY, NEVER] = 0,
    error_message: "errorMessage" [1, ANY, 0] = None,
    topic_config_error_code: "topicConfigErrorCode" tagged [5, ANY, NEVER] = 0,
    num_partitions: "numPartitions" [5, ANY, NEVER] = -1,
    replication_factor: "replicationFactor" [5, ANY, NEVER] = -1,
    configs: "configs" [5, ANY, 5] = Some(Vec::new()),
});
conf!(ct::CreateTopicsResponse {
    throttle_time_ms: "throttleTimeMs" [2, ANY, NEVER] = 0,
    topics: "topics" [0, ANY, NEVER] = Vec::new(),
});

/// Runs every core API, every version the crate implements.
pub fn run(run: &mut Run) {
    run.pair::<av::ApiVersionsRequest, av::ApiVersionsResponse>(0..=5);
    run.pair::<md::MetadataRequest, md::MetadataResponse>(0..=13);
    run.pair::<fc::FindCoordinatorRequest, fc::FindCoordinatorResponse>(0..=6);
    run.pair::<sh::SaslHandshakeRequest, sh::SaslHandshakeResponse>(0..=1);
    run.pair::<sa::SaslAuthenticateRequest, sa::SaslAuthenticateResponse>(0..=2);
    run.pair::<ct::CreateTopicsRequest, ct::CreateTopicsResponse>(2..=7);
}
