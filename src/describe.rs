//! Describing Streams groups (`StreamsGroupDescribe`, API key 89): what the broker's group
//! coordinator knows about a group — its state and epochs, the topology it initialised, and
//! every member with its process, endpoint, tags and tasks. This is the data
//! `kafka-streams-groups.sh --describe --members --verbose` prints.
//!
//! ```no_run
//! use std::time::Duration;
//! use kafka_streams_group::{describe, ClientConfig};
//!
//! let config = ClientConfig::new("127.0.0.1:9092");
//! let groups = describe::describe_streams_groups(&config, &["my-app"], Duration::from_secs(10))?;
//! for member in &groups[0].members {
//!     let active: Vec<String> = member.assignment.active.iter().map(|t| t.to_string()).collect();
//!     println!("{} (process {}): {}", member.member_id, member.process_id, active.join(","));
//! }
//! # Ok::<(), kafka_streams_group::Error>(())
//! ```
//!
//! Each group is sent to its own coordinator (found with `FindCoordinator`); groups that share a
//! coordinator go in one request. Coordinator moves and loading coordinators are retried until
//! the timeout; any other per-group error code fails the call as an [`Error::Broker`] naming
//! the group (e.g. `GROUP_ID_NOT_FOUND` for a group that does not exist or is not a Streams
//! group).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::time::{Duration, Instant};

use crate::client::coordinator::retriable_lookup;
use crate::client::{BrokerTarget, Client, ClientError, CoordinatorKey};
use crate::config::ClientConfig;
use crate::connect::client_error;
use crate::error::{BrokerErrorContext, Error};
use crate::protocol::api::streams_group_describe::{
    self as wire, DescribedGroup, StreamsGroupDescribeRequest,
};
use crate::protocol::BrokerErrorKind;
use crate::streams::{StreamsTaskId, StreamsTopology, Subtopology, TopicInfo, UserEndpoint};

mod refusal;
pub(crate) use refusal::explain_topology_refusal;

/// Pause before asking again after a coordinator move, a loading coordinator or a lost
/// connection.
const RETRY_BACKOFF: Duration = Duration::from_millis(100);

/// The state of a Streams group as its coordinator reports it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DescribedGroupState {
    /// No members.
    Empty,
    /// Members, but the topology is not ready (missing or badly partitioned source topics,
    /// internal topics not created yet).
    NotReady,
    /// A new target assignment is being computed.
    Assigning,
    /// Members are moving to the target assignment.
    Reconciling,
    /// Every member runs the target assignment.
    Stable,
    /// The group is being removed.
    Dead,
    /// A state this library does not know, as the broker spelled it.
    Unknown(String),
}

impl DescribedGroupState {
    /// Parses the broker's state string (`"Stable"`, `"NotReady"`, …; case and `_` ignored).
    pub fn parse(s: &str) -> Self {
        let norm: String = s
            .chars()
            .filter(|c| *c != '_' && *c != ' ')
            .flat_map(char::to_lowercase)
            .collect();
        match norm.as_str() {
            "empty" => Self::Empty,
            "notready" => Self::NotReady,
            "assigning" => Self::Assigning,
            "reconciling" => Self::Reconciling,
            "stable" => Self::Stable,
            "dead" => Self::Dead,
            _ => Self::Unknown(s.to_string()),
        }
    }
}

impl fmt::Display for DescribedGroupState {
    /// Kafka's spelling, as `kafka-streams-groups.sh` prints it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Empty => "Empty",
            Self::NotReady => "NotReady",
            Self::Assigning => "Assigning",
            Self::Reconciling => "Reconciling",
            Self::Stable => "Stable",
            Self::Dead => "Dead",
            Self::Unknown(s) => s,
        })
    }
}

/// A member's tasks by role, as sets.
///
/// Sets rather than [`crate::StreamsTaskAssignment`] because a describe is a report, not an
/// instruction: whatever the broker says is shown, even a task in two roles.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DescribedTasks {
    /// Active tasks.
    pub active: BTreeSet<StreamsTaskId>,
    /// Standby tasks.
    pub standby: BTreeSet<StreamsTaskId>,
    /// Warm-up tasks (brokers 4.4+).
    pub warmup: BTreeSet<StreamsTaskId>,
}

impl DescribedTasks {
    /// True if no task is held in any role.
    pub fn is_empty(&self) -> bool {
        self.active.is_empty() && self.standby.is_empty() && self.warmup.is_empty()
    }

    fn from_wire(a: &wire::Assignment) -> Self {
        let set = |lists: &[wire::TaskIds]| -> BTreeSet<StreamsTaskId> {
            lists
                .iter()
                .flat_map(|t| {
                    t.partitions
                        .iter()
                        .map(|p| StreamsTaskId::new(t.subtopology_id.clone(), *p))
                })
                .collect()
        };
        Self {
            active: set(&a.active_tasks),
            standby: set(&a.standby_tasks),
            warmup: set(&a.warmup_tasks),
        }
    }
}

/// One member of a described Streams group.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamsGroupMemberDescription {
    /// The member id.
    pub member_id: String,
    /// The member epoch.
    pub member_epoch: i32,
    /// Static-membership instance id (`group.instance.id`).
    pub instance_id: Option<String>,
    /// Rack id.
    pub rack_id: Option<String>,
    /// Client id (for Kafka Streams: `<app>-<process>-StreamThread-<n>-consumer`).
    pub client_id: String,
    /// Client host as the broker saw it (e.g. `/127.0.0.1`).
    pub client_host: String,
    /// The topology epoch the member runs.
    pub topology_epoch: i32,
    /// The process id: members of the same application instance share it.
    pub process_id: String,
    /// The interactive-queries endpoint (`application.server`), if set.
    pub user_endpoint: Option<UserEndpoint>,
    /// Client tags (`client.tag.*`), by key.
    pub client_tags: BTreeMap<String, String>,
    /// Cumulative changelog offsets the member reported, by task.
    pub task_offsets: BTreeMap<StreamsTaskId, i64>,
    /// Changelog end offsets the member reported, by task.
    pub task_end_offsets: BTreeMap<StreamsTaskId, i64>,
    /// The tasks the member currently holds (as far as the coordinator knows).
    pub assignment: DescribedTasks,
    /// The tasks the coordinator wants the member to hold.
    pub target_assignment: DescribedTasks,
    /// True for a member still using the classic protocol.
    pub is_classic: bool,
}

/// A described Streams group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamsGroupDescription {
    /// The group id.
    pub group_id: String,
    /// The group state.
    pub state: DescribedGroupState,
    /// The group epoch (bumped on every membership or topology change).
    pub group_epoch: i32,
    /// The epoch of the current target assignment.
    pub target_assignment_epoch: i32,
    /// The epoch of the topology the coordinator initialised; -1 if none.
    pub topology_epoch: i32,
    /// The initialised topology, with partition counts resolved; `None` if the group has no
    /// initialised topology yet (no members, missing source topics, internal topics pending).
    /// Copartition groups are not part of a describe and are always empty.
    pub topology: Option<StreamsTopology>,
    /// The members, in the broker's order.
    pub members: Vec<StreamsGroupMemberDescription>,
    /// The task assignor the coordinator uses (StreamsGroupDescribe v1, brokers 4.4+).
    pub assignor_name: Option<String>,
}

impl StreamsGroupDescription {
    /// The member with id `member_id`.
    pub fn member(&self, member_id: &str) -> Option<&StreamsGroupMemberDescription> {
        self.members.iter().find(|m| m.member_id == member_id)
    }

    /// Every active task of every member, with the member holding it; a task that two members
    /// claim appears twice.
    pub fn active_tasks(&self) -> Vec<(&StreamsTaskId, &StreamsGroupMemberDescription)> {
        self.members
            .iter()
            .flat_map(|m| m.assignment.active.iter().map(move |t| (t, m)))
            .collect()
    }

    /// Converts one wire entry; a non-zero error code becomes an [`Error::Broker`].
    fn from_wire(g: DescribedGroup) -> Result<Self, Error> {
        if g.error_code != 0 {
            return Err(group_error(&g, None));
        }
        let (topology_epoch, topology) = match g.topology {
            None => (-1, None),
            Some(t) => (
                t.epoch,
                t.subtopologies.map(|subs| StreamsTopology {
                    subtopologies: subs.into_iter().map(subtopology_from_wire).collect(),
                    ..StreamsTopology::default()
                }),
            ),
        };
        Ok(Self {
            state: DescribedGroupState::parse(&g.group_state),
            group_id: g.group_id,
            group_epoch: g.group_epoch,
            target_assignment_epoch: g.assignment_epoch,
            topology_epoch,
            topology,
            members: g.members.into_iter().map(member_from_wire).collect(),
            assignor_name: g.assignor_name,
        })
    }
}

fn topic_from_wire(t: wire::TopicInfo) -> TopicInfo {
    TopicInfo {
        name: t.name,
        partitions: t.partitions,
        replication_factor: t.replication_factor,
        topic_configs: t
            .topic_configs
            .into_iter()
            .map(|kv| (kv.key, kv.value))
            .collect(),
    }
}

fn subtopology_from_wire(s: wire::DescribedSubtopology) -> Subtopology {
    Subtopology {
        id: s.subtopology_id,
        source_topics: s.source_topics,
        repartition_sink_topics: s.repartition_sink_topics,
        repartition_source_topics: s
            .repartition_source_topics
            .into_iter()
            .map(topic_from_wire)
            .collect(),
        state_changelog_topics: s
            .state_changelog_topics
            .into_iter()
            .map(topic_from_wire)
            .collect(),
        copartition_groups: Vec::new(),
    }
}

fn offsets_from_wire(offsets: Vec<wire::TaskOffset>) -> BTreeMap<StreamsTaskId, i64> {
    offsets
        .into_iter()
        .map(|o| (StreamsTaskId::new(o.subtopology_id, o.partition), o.offset))
        .collect()
}

fn member_from_wire(m: wire::Member) -> StreamsGroupMemberDescription {
    StreamsGroupMemberDescription {
        assignment: DescribedTasks::from_wire(&m.assignment),
        target_assignment: DescribedTasks::from_wire(&m.target_assignment),
        member_id: m.member_id,
        member_epoch: m.member_epoch,
        instance_id: m.instance_id,
        rack_id: m.rack_id,
        client_id: m.client_id,
        client_host: m.client_host,
        topology_epoch: m.topology_epoch,
        process_id: m.process_id,
        user_endpoint: m.user_endpoint.map(|e| UserEndpoint::new(e.host, e.port)),
        client_tags: m
            .client_tags
            .into_iter()
            .map(|kv| (kv.key, kv.value))
            .collect(),
        task_offsets: offsets_from_wire(m.task_offsets),
        task_end_offsets: offsets_from_wire(m.task_end_offsets),
        is_classic: m.is_classic,
    }
}

fn group_error(g: &DescribedGroup, broker: Option<String>) -> Error {
    Error::Broker {
        kind: BrokerErrorKind::from_code(g.error_code),
        code: g.error_code,
        message: g.error_message.clone(),
        context: BrokerErrorContext {
            api: Some("StreamsGroupDescribe"),
            group: Some(g.group_id.clone()),
            broker,
        },
    }
}

/// Describes one Streams group. See [`describe_streams_groups`].
pub fn describe_streams_group(
    config: &ClientConfig,
    group_id: &str,
    timeout: Duration,
) -> Result<StreamsGroupDescription, Error> {
    describe_streams_groups(config, &[group_id], timeout)?
        .pop()
        .ok_or_else(|| Error::Protocol {
            broker: None,
            message: format!("StreamsGroupDescribe returned nothing for group {group_id}"),
        })
}

/// Describes Streams groups, each at its coordinator, and returns them in the order asked
/// (a group named twice is described once and returned once).
///
/// Blocks until every group is described or `timeout` passes. Coordinator moves, loading
/// coordinators and lost connections are retried; any other error is returned at once, a
/// per-group error code as [`Error::Broker`] with the group in its context (`GROUP_ID_NOT_FOUND`
/// when the group does not exist or is not a Streams group, `GROUP_AUTHORIZATION_FAILED`, …).
/// A broker without `StreamsGroupDescribe` (before Kafka 4.0 or with the Streams protocol
/// disabled) gives [`Error::Unsupported`].
pub fn describe_streams_groups(
    config: &ClientConfig,
    group_ids: &[&str],
    timeout: Duration,
) -> Result<Vec<StreamsGroupDescription>, Error> {
    let deadline = Instant::now() + timeout;
    let mut order: Vec<&str> = Vec::new();
    for g in group_ids {
        if !order.contains(g) {
            order.push(g);
        }
    }
    if order.is_empty() {
        return Ok(Vec::new());
    }
    // from_config keeps a refused login or certificate typed (and not retried).
    let mut client = Client::from_config(config, timeout)?;
    let mut done: HashMap<String, StreamsGroupDescription> = HashMap::new();
    let mut last_retriable: Option<Error> = None;
    loop {
        let pending: Vec<&str> = order
            .iter()
            .copied()
            .filter(|g| !done.contains_key(*g))
            .collect();
        if pending.is_empty() {
            break;
        }
        match describe_round(&mut client, &pending, deadline, &mut done) {
            Ok(()) => {}
            Err(e) if e.is_retriable() => last_retriable = Some(e),
            Err(e) => return Err(e),
        }
        if order.iter().all(|g| done.contains_key(*g)) {
            break;
        }
        if Instant::now() + RETRY_BACKOFF >= deadline {
            let last = last_retriable
                .map(|e| format!(" (last error: {e})"))
                .unwrap_or_default();
            return Err(Error::Timeout {
                operation: format!("describing streams groups {pending:?}{last}"),
                limit: timeout,
            });
        }
        std::thread::sleep(RETRY_BACKOFF);
    }
    Ok(order
        .iter()
        .filter_map(|g| done.remove(*g))
        .collect::<Vec<_>>())
}

/// One attempt for every pending group: find coordinators, send one request per coordinator.
/// Groups that need another try (coordinator moved) are left out of `done`; the first
/// retriable failure is returned after the other coordinators were asked.
fn describe_round(
    client: &mut Client,
    pending: &[&str],
    deadline: Instant,
    done: &mut HashMap<String, StreamsGroupDescription>,
) -> Result<(), Error> {
    let mut by_node: BTreeMap<i32, (String, Vec<String>)> = BTreeMap::new();
    let mut retry: Option<Error> = None;
    for g in pending {
        match client.coordinator(&CoordinatorKey::group(*g), deadline) {
            Ok(addr) => by_node
                .entry(addr.node_id)
                .or_insert_with(|| (addr.addr(), Vec::new()))
                .1
                .push((*g).to_string()),
            Err(e) => {
                let e = with_group(client_error(e), g);
                if !e.is_retriable() {
                    return Err(e);
                }
                retry.get_or_insert(e);
            }
        }
    }
    for (node, (addr, groups)) in by_node {
        let request = StreamsGroupDescribeRequest {
            group_ids: groups.clone(),
            include_authorized_operations: false,
            include_topology_description: false,
        };
        let response = match client.send(BrokerTarget::Node(node), &request, deadline) {
            Ok(r) => r,
            Err(ClientError::UnsupportedApi { .. }) => {
                return Err(Error::Unsupported {
                    what: format!(
                        "StreamsGroupDescribe on {addr}: the broker does not offer it (Kafka 4.0+ \
                         with the streams rebalance protocol enabled is needed)"
                    ),
                })
            }
            Err(e) => {
                let e = client_error(e);
                if !e.is_retriable() {
                    return Err(e);
                }
                // Not reachable: look these groups' coordinators up again next round.
                for g in &groups {
                    client.forget_coordinator(&CoordinatorKey::group(g.as_str()));
                }
                retry.get_or_insert(e);
                continue;
            }
        };
        for g in response.groups {
            if !groups.contains(&g.group_id) {
                // Not asked for: a confused broker; ignore rather than trust it.
                log::warn!(
                    "StreamsGroupDescribe from {addr} describes unrequested group {}",
                    g.group_id
                );
                continue;
            }
            let kind = BrokerErrorKind::from_code(g.error_code);
            if retriable_lookup(kind) {
                client.coordinator_failed(&CoordinatorKey::group(g.group_id.as_str()), kind);
                log::debug!("StreamsGroupDescribe({}): {kind}, retrying", g.group_id);
                retry.get_or_insert(group_error(&g, Some(addr.clone())));
                continue;
            }
            if g.error_code != 0 {
                return Err(group_error(&g, Some(addr.clone())));
            }
            let id = g.group_id.clone();
            done.insert(id, StreamsGroupDescription::from_wire(g)?);
        }
    }
    match retry {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Adds the group to a broker error's context.
fn with_group(e: Error, group: &str) -> Error {
    match e {
        Error::Broker {
            kind,
            code,
            message,
            mut context,
        } => {
            context.group = Some(group.to_string());
            Error::Broker {
                kind,
                code,
                message,
                context,
            }
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::api::streams_group_describe::{
        Assignment, DescribedTopology, Endpoint, KeyValue, Member, TaskIds, TaskOffset,
    };

    fn ids(sub: &str, parts: &[i32]) -> TaskIds {
        TaskIds {
            subtopology_id: sub.into(),
            partitions: parts.to_vec(),
        }
    }

    fn wire_group() -> DescribedGroup {
        DescribedGroup {
            group_id: "app".into(),
            group_state: "Stable".into(),
            group_epoch: 7,
            assignment_epoch: 6,
            topology: Some(DescribedTopology {
                epoch: 2,
                subtopologies: Some(vec![wire::DescribedSubtopology {
                    subtopology_id: "0".into(),
                    source_topics: vec!["in".into()],
                    repartition_sink_topics: vec![],
                    state_changelog_topics: vec![wire::TopicInfo {
                        name: "app-s-changelog".into(),
                        partitions: 4,
                        replication_factor: 1,
                        topic_configs: vec![KeyValue {
                            key: "cleanup.policy".into(),
                            value: "compact".into(),
                        }],
                    }],
                    repartition_source_topics: vec![],
                }]),
            }),
            members: vec![Member {
                member_id: "m1".into(),
                member_epoch: 6,
                client_id: "c".into(),
                client_host: "/127.0.0.1".into(),
                process_id: "p1".into(),
                user_endpoint: Some(Endpoint {
                    host: "h".into(),
                    port: 7001,
                }),
                client_tags: vec![KeyValue {
                    key: "zone".into(),
                    value: "a".into(),
                }],
                task_offsets: vec![TaskOffset {
                    subtopology_id: "0".into(),
                    partition: 1,
                    offset: 42,
                }],
                assignment: Assignment {
                    active_tasks: vec![ids("0", &[0, 1])],
                    standby_tasks: vec![ids("0", &[2])],
                    warmup_tasks: vec![],
                },
                target_assignment: Assignment {
                    active_tasks: vec![ids("0", &[0, 1, 3])],
                    ..Default::default()
                },
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[test]
    fn wire_groups_become_the_public_model() {
        let d = StreamsGroupDescription::from_wire(wire_group()).unwrap();
        assert_eq!(d.state, DescribedGroupState::Stable);
        assert_eq!(
            (d.group_epoch, d.target_assignment_epoch, d.topology_epoch),
            (7, 6, 2)
        );
        let topo = d.topology.as_ref().unwrap();
        assert_eq!(topo.subtopologies[0].id, "0");
        assert_eq!(
            topo.subtopologies[0].state_changelog_topics[0].topic_configs,
            vec![("cleanup.policy".to_string(), "compact".to_string())]
        );
        let m = d.member("m1").unwrap();
        assert_eq!(m.user_endpoint, Some(UserEndpoint::new("h", 7001)));
        assert_eq!(m.client_tags.get("zone").map(String::as_str), Some("a"));
        assert_eq!(m.task_offsets.get(&StreamsTaskId::new("0", 1)), Some(&42));
        let active: Vec<String> = m.assignment.active.iter().map(|t| t.to_string()).collect();
        assert_eq!(active, ["0_0", "0_1"]);
        assert_eq!(m.assignment.standby.len(), 1);
        assert_eq!(m.target_assignment.active.len(), 3);
        assert!(m.target_assignment.standby.is_empty());
        assert_eq!(d.active_tasks().len(), 2);
    }

    #[test]
    fn an_uninitialised_topology_is_none_and_a_missing_one_has_epoch_minus_one() {
        let mut g = wire_group();
        g.topology = Some(DescribedTopology {
            epoch: 0,
            subtopologies: None,
        });
        let d = StreamsGroupDescription::from_wire(g).unwrap();
        assert_eq!((d.topology_epoch, d.topology), (0, None));
        let mut g = wire_group();
        g.topology = None;
        assert_eq!(
            StreamsGroupDescription::from_wire(g)
                .unwrap()
                .topology_epoch,
            -1
        );
    }

    #[test]
    fn per_group_error_codes_are_typed_errors_naming_the_group() {
        let mut g = wire_group();
        g.error_code = 69; // GROUP_ID_NOT_FOUND
        g.error_message = Some("Group app is not a streams group.".into());
        let e = StreamsGroupDescription::from_wire(g).unwrap_err();
        assert_eq!(
            e.broker_error_kind(),
            Some(BrokerErrorKind::GroupIdNotFound)
        );
        let text = e.to_string();
        assert!(text.contains("group app"), "{text}");
        assert!(text.contains("not a streams group"), "{text}");
        assert!(retriable_lookup(BrokerErrorKind::NotCoordinator));
        assert!(retriable_lookup(BrokerErrorKind::CoordinatorLoadInProgress));
        assert!(!retriable_lookup(BrokerErrorKind::GroupIdNotFound));
    }

    #[test]
    fn group_states_parse_in_any_spelling() {
        for (s, want) in [
            ("Stable", DescribedGroupState::Stable),
            ("NotReady", DescribedGroupState::NotReady),
            ("not_ready", DescribedGroupState::NotReady),
            ("EMPTY", DescribedGroupState::Empty),
            ("reconciling", DescribedGroupState::Reconciling),
            ("Assigning", DescribedGroupState::Assigning),
            ("Dead", DescribedGroupState::Dead),
        ] {
            assert_eq!(DescribedGroupState::parse(s), want, "{s}");
        }
        let odd = DescribedGroupState::parse("Sleepy");
        assert_eq!(odd, DescribedGroupState::Unknown("Sleepy".into()));
        assert_eq!(odd.to_string(), "Sleepy");
        assert_eq!(DescribedGroupState::NotReady.to_string(), "NotReady");
    }
}
