use super::*;
use crate::protocol::api::offset_commit::{
    OffsetCommitResponsePartition, OffsetCommitResponseTopic,
};
use crate::protocol::api::offset_fetch::{
    OffsetFetchResponseGroup, OffsetFetchResponsePartition, OffsetFetchResponseTopic,
};
use crate::streams::topology::{Subtopology, TopicInfo};

fn topology() -> StreamsTopology {
    StreamsTopology::new()
        .subtopology(Subtopology::new("0").source_topic("in").source_topic("in2"))
        .subtopology(Subtopology::new("1").repartition_source_topic(TopicInfo::new("app-rep")))
}

fn active(tasks: &[(&str, i32)]) -> StreamsTaskAssignment {
    StreamsTaskAssignment::from_tasks(
        tasks
            .iter()
            .map(|(s, p)| (StreamsTaskId::new(*s, *p), StreamsTaskRole::Active)),
    )
    .unwrap()
}

#[test]
fn task_partitions_cover_sources_and_repartition_sources() {
    let t = topology();
    assert_eq!(
        task_partitions(&t, &StreamsTaskId::new("0", 2)),
        vec![TopicPartition::new("in", 2), TopicPartition::new("in2", 2)]
    );
    assert_eq!(
        task_partitions(&t, &StreamsTaskId::new("1", 0)),
        vec![TopicPartition::new("app-rep", 0)]
    );
    assert!(task_partitions(&t, &StreamsTaskId::new("9", 0)).is_empty());
}

#[test]
fn ownership_counts_only_active_tasks() {
    let t = topology();
    let mut owned = active(&[("0", 1)]);
    owned = StreamsTaskAssignment::from_tasks(
        owned
            .iter()
            .map(|(k, r)| (k.clone(), r))
            .chain([(StreamsTaskId::new("1", 0), StreamsTaskRole::Standby)]),
    )
    .unwrap();
    let asked = [
        TopicPartition::new("in", 1),
        TopicPartition::new("in", 0),
        TopicPartition::new("app-rep", 0),
    ];
    assert_eq!(
        partitions_not_in(&t, [&owned], asked.iter()),
        vec![
            TopicPartition::new("in", 0),
            TopicPartition::new("app-rep", 0)
        ]
    );
}

#[test]
fn commit_request_groups_by_topic() {
    let offsets: BTreeMap<_, _> = [
        (TopicPartition::new("a", 1), CommitOffset::new(5)),
        (
            TopicPartition::new("a", 0),
            CommitOffset::new(7).leader_epoch(3).metadata("m"),
        ),
        (TopicPartition::new("b", 0), CommitOffset::new(1)),
    ]
    .into_iter()
    .collect();
    let r = commit_request("g", "m1", 4, None, &offsets);
    assert_eq!(r.generation_id_or_member_epoch, 4);
    assert_eq!(r.member_id, "m1");
    assert_eq!(r.topics.len(), 2);
    assert_eq!(r.topics[0].name, "a");
    assert_eq!(r.topics[0].partitions[0].partition_index, 0);
    assert_eq!(r.topics[0].partitions[0].committed_leader_epoch, 3);
    assert_eq!(r.topics[0].partitions[1].committed_leader_epoch, -1);
    assert_eq!(
        r.topics[0].partitions[1].committed_metadata.as_deref(),
        Some("")
    );
}

#[test]
fn partition_time_metadata_matches_java() {
    // Values from Java's TopicPartitionMetadata.encode (streams-data-path.md §2.3).
    assert_eq!(
        CommitOffset::new(0).partition_time(-1).metadata.as_deref(),
        Some("Av//////////")
    );
}

fn commit_response(codes: &[i16]) -> OffsetCommitResponse {
    OffsetCommitResponse {
        throttle_time_ms: 0,
        topics: vec![OffsetCommitResponseTopic {
            name: "in".into(),
            partitions: codes
                .iter()
                .enumerate()
                .map(|(i, &c)| OffsetCommitResponsePartition {
                    partition_index: i as i32,
                    error_code: c,
                })
                .collect(),
            ..Default::default()
        }],
    }
}

#[test]
fn commit_answers() {
    assert_eq!(
        classify_commit(&commit_response(&[0, 0])),
        CommitAnswer::Committed
    );
    assert_eq!(
        classify_commit(&commit_response(&[113, 113])),
        CommitAnswer::StaleEpoch
    );
    assert_eq!(
        classify_commit(&commit_response(&[25, 25])),
        CommitAnswer::Fenced(BrokerErrorKind::UnknownMemberId)
    );
    assert_eq!(
        classify_commit(&commit_response(&[16])),
        CommitAnswer::Retriable(BrokerErrorKind::NotCoordinator)
    );
    assert_eq!(
        classify_commit(&commit_response(&[0, 12])),
        CommitAnswer::Failed {
            committed: vec![TopicPartition::new("in", 0)],
            failed: vec![(
                TopicPartition::new("in", 1),
                BrokerErrorKind::OffsetMetadataTooLarge
            )],
        }
    );
}

#[test]
fn fetch_answers() {
    let asked: BTreeSet<_> = [TopicPartition::new("in", 0), TopicPartition::new("in", 1)]
        .into_iter()
        .collect();
    let req = fetch_request("g", "m", 3, &asked);
    assert!(req.require_stable);
    assert_eq!(req.groups[0].member_epoch, 3);
    assert_eq!(
        req.groups[0].topics.as_ref().unwrap()[0].partition_indexes,
        vec![0, 1]
    );
    let answer = |group_error: i16, p0: (i64, i16)| OffsetFetchResponse {
        groups: vec![OffsetFetchResponseGroup {
            group_id: "g".into(),
            topics: vec![OffsetFetchResponseTopic {
                name: "in".into(),
                partitions: vec![
                    OffsetFetchResponsePartition {
                        partition_index: 0,
                        committed_offset: p0.0,
                        error_code: p0.1,
                        metadata: Some("x".into()),
                        ..Default::default()
                    },
                    OffsetFetchResponsePartition {
                        partition_index: 1,
                        committed_offset: -1,
                        ..Default::default()
                    },
                ],
                ..Default::default()
            }],
            error_code: group_error,
        }],
        ..Default::default()
    };
    match classify_fetch(&answer(0, (42, 0)), "g", &asked) {
        FetchAnswer::Fetched(m) => {
            assert_eq!(
                m[&TopicPartition::new("in", 0)].as_ref().unwrap().offset,
                42
            );
            assert_eq!(m[&TopicPartition::new("in", 1)], None);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        classify_fetch(&answer(113, (0, 0)), "g", &asked),
        FetchAnswer::StaleEpoch
    );
    assert_eq!(
        classify_fetch(&answer(110, (0, 0)), "g", &asked),
        FetchAnswer::Fenced(BrokerErrorKind::FencedMemberEpoch)
    );
    assert_eq!(
        classify_fetch(&answer(0, (0, 88)), "g", &asked),
        FetchAnswer::Retriable(BrokerErrorKind::UnstableOffsetCommit)
    );
    assert!(matches!(
        classify_fetch(&answer(0, (0, 0)), "other", &asked),
        FetchAnswer::Failed { .. }
    ));
}
