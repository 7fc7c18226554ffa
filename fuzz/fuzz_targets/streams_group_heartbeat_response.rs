//! Fuzz target `streams_group_heartbeat_response`: see `harness` for the properties checked, plus
//! in-place decoding: `decode_message_into` over a dirty previous value must give exactly what a
//! fresh `decode_message` gives (the same value, or the same error), never panic, and decoding
//! the same bytes again into the result must be a no-op.
#![no_main]

use kafka_streams_group::protocol::api::streams_group_heartbeat::{
    Endpoint, EndpointToPartitions, Status, StreamsGroupHeartbeatResponse, TaskIds,
    TopicPartitions,
};
use kafka_streams_group::protocol::codec::{decode_message, decode_message_into};
use kafka_streams_group_fuzz::harness::pick_version;

/// A previous value with every list present and longer than most inputs' (so elements are
/// reused, truncated and, for longer inputs, appended), and long strings.
fn dirty() -> StreamsGroupHeartbeatResponse {
    let tasks = |n: usize| -> Option<Vec<TaskIds>> {
        Some(
            (0..n)
                .map(|i| TaskIds {
                    subtopology_id: "previous-subtopology-".repeat(i + 1),
                    partitions: (0..i as i32 * 3).collect(),
                })
                .collect(),
        )
    };
    let tp = |n: usize| -> Vec<TopicPartitions> {
        (0..n)
            .map(|i| TopicPartitions {
                topic: format!("previous-topic-{i}"),
                partitions: vec![i as i32; i],
            })
            .collect()
    };
    StreamsGroupHeartbeatResponse {
        throttle_time_ms: 99,
        error_code: 15,
        error_message: Some("previous error message".into()),
        member_id: "previous-member-id".into(),
        member_epoch: 12,
        heartbeat_interval_ms: 3,
        acceptable_recovery_lag_legacy: 77,
        task_offset_interval_ms: 5,
        acceptable_recovery_lag: 123,
        status: Some(vec![
            Status {
                status_code: 1,
                status_detail: "previous status".into(),
            };
            3
        ]),
        active_tasks: tasks(4),
        standby_tasks: tasks(2),
        warmup_tasks: tasks(1),
        topology_description_required: true,
        endpoint_information_epoch: 8,
        partitions_by_user_endpoint: Some(
            (0..3)
                .map(|i| EndpointToPartitions {
                    user_endpoint: Endpoint {
                        host: format!("previous-host-{i}"),
                        port: 9000,
                    },
                    active_partitions: tp(3),
                    standby_partitions: tp(i),
                })
                .collect(),
        ),
    }
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let check = kafka_streams_group_fuzz::harness::target("streams_group_heartbeat_response")
        .expect("target is registered");
    check(data);

    let Some((&selector, body)) = data.split_first() else {
        return;
    };
    let version = pick_version::<StreamsGroupHeartbeatResponse>(selector);
    let fresh = decode_message::<StreamsGroupHeartbeatResponse>(body, version);
    for prev in [dirty(), StreamsGroupHeartbeatResponse::default()] {
        let mut reused = prev;
        let into = decode_message_into(body, version, &mut reused);
        match &fresh {
            Ok(f) => {
                assert_eq!(into, Ok(()), "v{version}: decode_into failed, fresh decode did not");
                assert_eq!(&reused, f, "v{version}: decode_into differs from a fresh decode");
                // Again into the result itself: every element is reused this time.
                decode_message_into(body, version, &mut reused).expect("second decode_into");
                assert_eq!(&reused, f, "v{version}: second decode_into differs");
            }
            Err(e) => assert_eq!(into, Err(e.clone()), "v{version}: different errors"),
        }
    }
});
