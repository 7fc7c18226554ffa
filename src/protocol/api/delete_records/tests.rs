use super::*;
use crate::protocol::api::test_util::*;
use crate::protocol::codec::decode_message;
use proptest::prelude::*;

fn purge(topic: &str, partition: i32, offset: i64) -> DeleteRecordsRequest {
    DeleteRecordsRequest {
        topics: vec![DeleteRecordsTopic {
            name: topic.into(),
            partitions: vec![DeleteRecordsPartition {
                partition_index: partition,
                offset,
            }],
        }],
        timeout_ms: 30_000,
    }
}

#[test]
fn request_golden() {
    let r = purge("t", 1, 42);
    #[rustfmt::skip]
    golden(&r, 1, &[
        0, 0, 0, 1, 0, 1, b't',                 // Topics: 1, Name
        0, 0, 0, 1, 0, 0, 0, 1,                 // Partitions: 1, index 1
        0, 0, 0, 0, 0, 0, 0, 42,                // Offset
        0, 0, 0x75, 0x30,                       // TimeoutMs 30000
    ]);
    #[rustfmt::skip]
    golden(&r, 2, &[
        2, 2, b't',                             // Topics (compact), Name
        2, 0, 0, 0, 1,                          // Partitions, index 1
        0, 0, 0, 0, 0, 0, 0, 42, 0,             // Offset, tags
        0,                                      // topic tags
        0, 0, 0x75, 0x30,                       // TimeoutMs
        0,
    ]);
    every_prefix_fails::<DeleteRecordsRequest>(&[2, 2, b't', 2, 0, 0, 0, 1], 2);
}

#[test]
fn response_golden() {
    let r = DeleteRecordsResponse {
        throttle_time_ms: 0,
        topics: vec![DeleteRecordsTopicResult {
            name: "t".into(),
            partitions: vec![
                DeleteRecordsPartitionResult {
                    partition_index: 0,
                    low_watermark: 42,
                    error_code: 0,
                },
                DeleteRecordsPartitionResult {
                    partition_index: 1,
                    low_watermark: -1,
                    error_code: 1,
                },
            ],
        }],
    };
    #[rustfmt::skip]
    golden(&r, 2, &[
        0, 0, 0, 0,                                     // ThrottleTimeMs
        2, 2, b't', 3,                                  // Topics, Name, Partitions: 2
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 42, 0, 0, 0,   // p0, LowWatermark 42, NONE, tags
        0, 0, 0, 1,                                     // p1
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // LowWatermark -1
        0, 1, 0,                                        // OFFSET_OUT_OF_RANGE, tags
        0, 0,
    ]);
    assert_eq!(r.partition("t", 0).map(|p| p.low_watermark), Some(42));
    assert_eq!(
        r.partition("t", 1).map(|p| p.error()),
        Some(BrokerErrorKind::OffsetOutOfRange)
    );
    assert!(r.partition("u", 0).is_none());
    let e = decode_message::<DeleteRecordsResponse>(&[0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff], 1)
        .unwrap_err();
    assert_error_names_api::<DeleteRecordsResponse>(&e, 1);
}

proptest! {
    #![proptest_config(prop_config(128))]

    #[test]
    fn prop_request(m in any::<DeleteRecordsRequest>()) {
        for v in 0..=2 {
            prop_assert_eq!(round_trip(&m, v), Ok(()));
        }
    }

    #[test]
    fn prop_response(m in any::<DeleteRecordsResponse>()) {
        for v in 0..=2 {
            prop_assert_eq!(round_trip(&m, v), Ok(()));
        }
    }

    #[test]
    fn prop_garbage(b in proptest::collection::vec(any::<u8>(), 0..80)) {
        for v in 0..=2 {
            let _ = decode_message::<DeleteRecordsResponse>(&b, v);
            let _ = decode_message::<DeleteRecordsRequest>(&b, v);
        }
    }
}
