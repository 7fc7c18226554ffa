//! The public protocol API as a user outside the crate finds it (issue 13, item 8): glob
//! imports of several API modules compile together, the message functions sit beside the
//! traits, responses frame and decode by their own type, and raw codes have typed views.

use kafka_streams_group::protocol::api::fetch::*;
use kafka_streams_group::protocol::api::find_coordinator::*;
use kafka_streams_group::protocol::api::init_producer_id::*;
use kafka_streams_group::protocol::api::list_offsets::*;
use kafka_streams_group::protocol::api::metadata::*;
use kafka_streams_group::protocol::api::produce::*;
use kafka_streams_group::protocol::api::streams_group_describe::*;
use kafka_streams_group::protocol::api::streams_group_heartbeat::*;
use kafka_streams_group::protocol::frame::*;
use kafka_streams_group::protocol::*;

/// Both describe and heartbeat modules are glob-imported above: `Topology` and `Subtopology`
/// are the heartbeat's, the describe answer's are `DescribedTopology`/`DescribedSubtopology`.
#[test]
fn glob_imports_of_heartbeat_and_describe_do_not_collide() {
    let heartbeat = Topology {
        epoch: 1,
        subtopologies: vec![Subtopology {
            subtopology_id: "0".into(),
            source_topics: vec!["in".into()],
            ..Default::default()
        }],
    };
    let described = DescribedTopology {
        epoch: 1,
        subtopologies: Some(vec![DescribedSubtopology {
            subtopology_id: "0".into(),
            source_topics: vec!["in".into()],
            ..Default::default()
        }]),
    };
    assert_eq!(heartbeat.subtopologies[0].source_topics, ["in"]);
    assert_eq!(
        described
            .subtopologies
            .as_ref()
            .map(|s| s[0].subtopology_id.as_str()),
        Some("0")
    );
}

/// `encode_message`, `decode_message` and `decode_message_into` come with `protocol::*`.
#[test]
fn message_functions_sit_beside_the_traits() {
    let req = ListOffsetsRequest {
        topics: vec![ListOffsetsTopic {
            name: "t".into(),
            partitions: vec![ListOffsetsPartition {
                partition_index: 0,
                timestamp: EARLIEST_TIMESTAMP,
                ..Default::default()
            }],
        }],
        ..Default::default()
    };
    let mut buf = Vec::new();
    encode_message(&mut buf, &req, ListOffsetsRequest::MAX_VERSION).expect("encode");
    let back: ListOffsetsRequest =
        decode_message(&buf, ListOffsetsRequest::MAX_VERSION).expect("decode");
    assert_eq!(back, req);
    let mut md = Vec::new();
    encode_message(&mut md, &MetadataRequest::for_topics(["t"]), 12).expect("encode");
    assert!(decode_message::<MetadataRequest>(&md, 12).is_ok());

    let mut hb = StreamsGroupHeartbeatResponse::default();
    let mut bytes = Vec::new();
    let sent = StreamsGroupHeartbeatResponse {
        member_epoch: 3,
        ..Default::default()
    };
    encode_message(&mut bytes, &sent, 0).expect("encode");
    decode_message_into(&bytes, 0, &mut hb).expect("decode into");
    assert_eq!(hb, sent);
}

/// A response frames and decodes by naming the response type only; the bytes equal the
/// request-keyed form.
#[test]
fn responses_frame_by_their_own_type() {
    let body = InitProducerIdResponse {
        producer_id: 4000,
        producer_epoch: 2,
        ..Default::default()
    };
    for version in InitProducerIdResponse::MIN_VERSION..=InitProducerIdResponse::MAX_VERSION {
        let mut keyed_by_response = Vec::new();
        encode_response(&mut keyed_by_response, 9, &body, version).expect("encode");
        let mut keyed_by_request = Vec::new();
        encode_response_frame::<InitProducerIdRequest>(&mut keyed_by_request, 9, &body, version)
            .expect("encode");
        assert_eq!(keyed_by_response, keyed_by_request, "v{version}");
        let (header, back) =
            decode_response::<InitProducerIdResponse>(&keyed_by_response[4..], version)
                .expect("decode");
        assert_eq!((header.correlation_id, back.producer_id), (9, 4000));
    }
    // The header version follows the request's rule: ApiVersions answers always use v0.
    let mut wire = Vec::new();
    let av = kafka_streams_group::protocol::api::api_versions::ApiVersionsResponse::default();
    encode_response(&mut wire, 1, &av, 3).expect("encode");
    assert_eq!(
        <kafka_streams_group::protocol::api::api_versions::ApiVersionsResponse as Response>::response_header_version(3),
        0
    );
    // In place, for responses that support it (the heartbeat loop's).
    let sent = StreamsGroupHeartbeatResponse {
        member_epoch: 8,
        ..Default::default()
    };
    let mut wire = Vec::new();
    encode_response(&mut wire, 2, &sent, 0).expect("encode");
    let mut into = StreamsGroupHeartbeatResponse::default();
    let header = decode_response_into(&wire[4..], 0, &mut into).expect("decode into");
    assert_eq!((header.correlation_id, into), (2, sent));
}

/// Raw integer codes have typed views that keep unknown codes.
#[test]
fn raw_codes_have_typed_views() {
    let group = DescribedGroup {
        topology_description_status: 3,
        ..Default::default()
    };
    assert_eq!(
        group.description_status(),
        TopologyDescriptionStatus::Available
    );
    assert_eq!(
        TopologyDescriptionStatus::from_code(9),
        TopologyDescriptionStatus::Unknown(9)
    );
    assert_eq!(
        TopologyDescriptionStatus::NotStored.to_string(),
        "NOT_STORED(1)"
    );

    let node = TopologyDescriptionNode {
        node_type: 3,
        ..Default::default()
    };
    assert_eq!(node.kind(), NodeType::Sink);
    assert_eq!(NodeType::from(1), NodeType::Source);
    assert_eq!(i8::from(NodeType::Processor), 2);

    let req = FindCoordinatorRequest {
        key_type: KEY_TYPE_TRANSACTION,
        ..Default::default()
    };
    assert_eq!(req.kind(), KeyType::Transaction);
    assert_eq!(KeyType::Share.code(), KEY_TYPE_SHARE);
    assert_eq!(KeyType::from_code(7).name(), "UNKNOWN");

    let status = Status {
        status_code: 5,
        status_detail: String::new(),
    };
    assert_eq!(status.code(), StatusCode::AssignmentDelayed);
}

/// The data-path APIs are registered as API keys.
#[test]
fn data_path_api_keys() {
    for (key, code) in [
        (ApiKey::Produce, ProduceRequest::API_KEY),
        (ApiKey::Fetch, FetchRequest::API_KEY),
        (ApiKey::ListOffsets, ListOffsetsRequest::API_KEY),
        (ApiKey::InitProducerId, InitProducerIdRequest::API_KEY),
    ] {
        assert_eq!(key.code(), code);
        assert_eq!(ApiKey::from_code(code), Some(key));
    }
}
