//! Why the broker refused a joining member's topology: the group's stored topology, fetched
//! with `StreamsGroupDescribe`, compared field by field with the member's.

use std::time::Duration;

use super::{describe_streams_group, StreamsGroupDescription};
use crate::config::ClientConfig;
use crate::error::Error;
use crate::protocol::BrokerErrorKind;
use crate::streams::{StreamsTopology, TopicInfo};

/// The broker's message when a joining member's topology differs from the group's.
const TOPOLOGY_REFUSED: &str = "Topology updates are not supported yet";

/// Explains a join the broker refused with `INVALID_REQUEST "Topology updates are not
/// supported yet."`: fetches the group's stored topology with `StreamsGroupDescribe` (within
/// `timeout`) and appends the first field in which it differs from `ours` (canonical) to the
/// error's message. Any other error is returned unchanged.
///
/// `StreamsGroupDescribe` does not report copartition groups; when everything else matches,
/// they are what differs, and the message lists this member's and says where Java's order
/// comes from.
pub(crate) fn explain_topology_refusal(
    error: Error,
    config: &ClientConfig,
    group_id: &str,
    ours: &StreamsTopology,
    timeout: Duration,
) -> Error {
    use crate::streams::MembershipError;
    let Error::Membership(MembershipError::Broker {
        group,
        error: BrokerErrorKind::InvalidRequest,
        message: Some(message),
    }) = &error
    else {
        return error;
    };
    if !message.contains(TOPOLOGY_REFUSED) {
        return error;
    }
    let explanation = match describe_streams_group(config, group_id, timeout) {
        Ok(StreamsGroupDescription {
            topology: Some(stored),
            ..
        }) => topology_refusal_reason(ours, &stored),
        Ok(_) => "the group has no stored topology to compare with (it was just deleted?);                   join again"
            .to_string(),
        Err(e) => format!(
            "could not fetch the group's stored topology with StreamsGroupDescribe to compare: {e}"
        ),
    };
    Error::Membership(MembershipError::Broker {
        group: group.clone(),
        error: BrokerErrorKind::InvalidRequest,
        message: Some(format!(
            "{message} This member's topology is not the one the group's first member \
             declared; {explanation}"
        )),
    })
}

/// Why `ours` is not `stored` (as described; without copartition groups), in words.
fn topology_refusal_reason(ours: &StreamsTopology, stored: &StreamsTopology) -> String {
    let mut visible = ours.clone();
    for s in &mut visible.subtopologies {
        s.copartition_groups.clear();
    }
    // StreamsGroupDescribe shows the partition counts the broker derived (changelogs and
    // repartition topics sent with 0 = "derive"), not the 0 the members sent.
    let mut stored = stored.clone();
    for s in &mut stored.subtopologies {
        let Some(mine) = visible.subtopology_by_id(&s.id) else {
            continue;
        };
        let derived = |list: &[TopicInfo], name: &str| {
            list.iter().any(|t| t.name == name && t.partitions == 0)
        };
        for t in &mut s.state_changelog_topics {
            if derived(&mine.state_changelog_topics, &t.name) {
                t.partitions = 0;
            }
        }
        for t in &mut s.repartition_source_topics {
            if derived(&mine.repartition_source_topics, &t.name) {
                t.partitions = 0;
            }
        }
    }
    if let Some(d) = visible.first_difference(&stored) {
        return format!("the first difference (StreamsGroupDescribe) is at {d}");
    }
    let groups: Vec<String> = ours
        .subtopologies
        .iter()
        .filter(|s| !s.copartition_groups.is_empty())
        .map(|s| {
            let named: Vec<Vec<&str>> = s
                .copartition_groups
                .iter()
                .map(|g| {
                    let src = g.source_topics.iter().filter_map(|&i| {
                        s.source_topics
                            .get(usize::try_from(i).ok()?)
                            .map(String::as_str)
                    });
                    let rep = g.repartition_source_topics.iter().filter_map(|&i| {
                        s.repartition_source_topics
                            .get(usize::try_from(i).ok()?)
                            .map(|t| t.name.as_str())
                    });
                    src.chain(rep).collect()
                })
                .collect();
            format!("subtopology {:?} copartition_groups {named:?}", s.id)
        })
        .collect();
    format!(
        "every field StreamsGroupDescribe shows matches, so the difference is in the \
         copartition groups, which it does not show: this member sends [{}]. Java lists them in \
         the order of its HashSets: check the order of the names given to copartition_topics \
         (it decides between names that share a hash bucket) and \
         StreamsTopology::with_java_hash_set_sizing (JDK 17 vs 19+)",
        groups.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::streams::Subtopology;

    #[test]
    fn refusal_reason_ignores_derived_partitions_and_falls_back_to_copartition_groups() {
        let ours = StreamsTopology::new()
            .subtopology(
                Subtopology::new("0")
                    .source_topic("orders")
                    .source_topic("customers")
                    .state_changelog_topic(TopicInfo::new("app-changelog"))
                    .copartition_topics(["orders", "customers"])
                    .unwrap(),
            )
            .canonical()
            .unwrap();
        // As described: no copartition groups, the changelog's derived partition count.
        let mut stored = ours.clone();
        stored.subtopologies[0].copartition_groups.clear();
        stored.subtopologies[0].state_changelog_topics[0].partitions = 4;
        let why = topology_refusal_reason(&ours, &stored);
        assert!(why.contains("difference is in the"), "{why}");
        assert!(why.contains(r#"[["orders", "customers"]]"#), "{why}");
        stored.subtopologies[0].source_topics[0] = "clients".into();
        let why = topology_refusal_reason(&ours, &stored);
        assert!(why.contains(r#"subtopology "0" source_topics"#), "{why}");
        // Not a topology refusal: unchanged.
        let e = Error::Membership(crate::streams::MembershipError::Broker {
            group: "g".into(),
            error: BrokerErrorKind::InvalidRequest,
            message: Some("something else".into()),
        });
        let config = ClientConfig::new("127.0.0.1:9");
        let same = explain_topology_refusal(e.clone(), &config, "g", &ours, Duration::ZERO);
        assert_eq!(same.to_string(), e.to_string());
    }
}
