//! Sending: when the next heartbeat is due, and what it carries (a full join, a leave, or a
//! delta with only what changed since the last one sent).

use std::time::{Duration, Instant};

use super::{InFlight, MemberState, PendingLeave, StreamsMembership, JOIN_GROUP_MEMBER_EPOCH};
use crate::protocol::api::streams_group_heartbeat::{self as wire, StreamsGroupHeartbeatRequest};
use crate::streams::task::{StreamsTaskRole, WireTaskIds};
use crate::streams::topology::{StreamsTopology, TopicInfo};

fn to_wire_tasks(list: WireTaskIds) -> Vec<wire::TaskIds> {
    list.into_iter()
        .map(|(subtopology_id, partitions)| wire::TaskIds {
            subtopology_id,
            partitions,
        })
        .collect()
}

fn to_wire_topology(t: &StreamsTopology) -> wire::Topology {
    let info = |i: &TopicInfo| wire::TopicInfo {
        name: i.name.clone(),
        partitions: i.partitions,
        replication_factor: i.replication_factor,
        topic_configs: i
            .topic_configs
            .iter()
            .map(|(k, v)| wire::KeyValue {
                key: k.clone(),
                value: v.clone(),
            })
            .collect(),
    };
    wire::Topology {
        // Java's StreamsRebalanceData.topologyEpoch() is always 0 (topology updates are not
        // supported by brokers yet).
        epoch: 0,
        subtopologies: t
            .subtopologies
            .iter()
            .map(|s| wire::Subtopology {
                subtopology_id: s.id.clone(),
                source_topics: s.source_topics.clone(),
                source_topic_regex: Vec::new(),
                state_changelog_topics: s.state_changelog_topics.iter().map(info).collect(),
                repartition_sink_topics: s.repartition_sink_topics.clone(),
                repartition_source_topics: s.repartition_source_topics.iter().map(info).collect(),
                copartition_groups: s
                    .copartition_groups
                    .iter()
                    .map(|g| wire::CopartitionGroup {
                        source_topics: g.source_topics.clone(),
                        source_topic_regex: Vec::new(),
                        repartition_source_topics: g.repartition_source_topics.clone(),
                    })
                    .collect(),
            })
            .collect(),
    }
}

impl StreamsMembership {
    /// The instant at which `poll_request` will next produce a request, if one is planned.
    fn next_send_at(&self) -> Option<Instant> {
        let now = self.now?;
        self.coordinator.as_ref()?;
        if self.state == MemberState::Leaving {
            return match self.leave {
                Some(PendingLeave { sent: false, .. }) => Some(now),
                _ => None,
            };
        }
        if !self.state.is_in_group() || !self.in_flight.is_empty() {
            return None;
        }
        let prompt = self.send_asap
            || matches!(
                self.state,
                MemberState::Joining | MemberState::Acknowledging
            )
            || self.last_send_at.is_none();
        let due = match (prompt, self.last_send_at) {
            (false, Some(sent)) => sent + self.interval,
            _ => now,
        };
        Some(match self.backoff_until {
            Some(b) if b > due => b,
            _ => due,
        })
    }

    /// When the driver should call [`poll_request`](Self::poll_request) next (it may be in the
    /// past, meaning "now"). `None`: nothing is scheduled until an input arrives.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.next_send_at()
    }

    /// The next heartbeat to send, if one is due at `now`. Encode it with
    /// [`api_version`](Self::api_version).
    pub fn poll_request(&mut self, now: Instant) -> Option<StreamsGroupHeartbeatRequest> {
        self.tick(now);
        let at = self.next_send_at()?;
        if at > now {
            return None;
        }
        let version = self.api_version()?;
        if self.state == MemberState::Leaving {
            let leave = self.leave.as_mut()?;
            leave.sent = true;
            let epoch = leave.epoch;
            self.in_flight.push_back(InFlight::Leave);
            self.last_send_at = Some(now);
            return Some(self.base_request(version, epoch));
        }
        // Until the broker hands out a positive epoch, every heartbeat is a join: a request
        // at epoch 0 must carry the topology and empty task lists (the broker rejects a
        // delta at epoch 0), even if an answer at epoch 0 moved the state on. A successful
        // answer with a negative epoch (a broker bug) is recovered from the same way.
        let req = if self.state == MemberState::Joining || self.assignment.member_epoch <= 0 {
            self.join_request(version)
        } else {
            self.delta_request(version, now)
        };
        self.in_flight.push_back(InFlight::Heartbeat);
        self.last_send_at = Some(now);
        self.send_asap = false;
        if self.state == MemberState::Acknowledging {
            self.set_state(MemberState::Stable);
        }
        Some(req)
    }

    fn base_request(&self, version: i16, epoch: i32) -> StreamsGroupHeartbeatRequest {
        StreamsGroupHeartbeatRequest {
            group_id: self.config.group_id.clone(),
            member_id: self.member_id.clone(),
            member_epoch: epoch,
            endpoint_information_epoch: self.assignment.endpoint_information_epoch,
            // v0 brokers reject any instance id; static + v0 never gets this far.
            instance_id: if version >= 1 {
                self.config.instance_id.clone()
            } else {
                None
            },
            shutdown_application: self.shutdown_requested,
            ..StreamsGroupHeartbeatRequest::default()
        }
    }

    fn join_request(&mut self, version: i16) -> StreamsGroupHeartbeatRequest {
        let mut req = self.base_request(version, JOIN_GROUP_MEMBER_EPOCH);
        req.topology = Some(to_wire_topology(&self.config.topology));
        req.rebalance_timeout_ms = self.config.rebalance_timeout_ms;
        req.process_id = Some(self.config.process_id.clone());
        req.user_endpoint = self.config.user_endpoint.as_ref().map(|e| wire::Endpoint {
            host: e.host.clone(),
            port: e.port,
        });
        req.rack_id = self.config.rack_id.clone();
        req.client_tags = Some(
            self.config
                .client_tags
                .iter()
                .map(|(k, v)| wire::KeyValue {
                    key: k.clone(),
                    value: v.clone(),
                })
                .collect(),
        );
        req.active_tasks = Some(Vec::new());
        req.standby_tasks = Some(Vec::new());
        req.warmup_tasks = Some(Vec::new());
        // As in Java, the join's empty lists are not "last sent": the first heartbeat after the
        // join reports the owned tasks.
        self.forget_last_sent();
        if version >= 1 {
            // The join carries the full current sums, which become "last sent".
            if let Some(offsets) = &self.task_offsets {
                req.task_offsets = Some(offsets.to_wire(false));
                req.task_end_offsets = Some(offsets.to_wire(true));
                self.last_sent_offsets = req.task_offsets.clone();
                self.last_sent_end_offsets = req.task_end_offsets.clone();
                self.offsets_sent_at = self.now;
            }
        }
        req
    }

    /// Java's rule (`StreamsGroupHeartbeatRequestManager`): offsets are evaluated when the
    /// owned tasks change, when `TaskOffsetIntervalMs` has passed since the last evaluation,
    /// or while a warm-up task is hot; each list is then sent only if it differs from the
    /// last one sent.
    fn add_task_offsets(
        &mut self,
        req: &mut StreamsGroupHeartbeatRequest,
        owned_changed: bool,
        now: Instant,
    ) {
        let Some(offsets) = &self.task_offsets else {
            return;
        };
        let interval =
            Duration::from_millis(u64::try_from(self.task_offset_interval_ms).unwrap_or(0));
        let interval_due = !interval.is_zero()
            && self
                .offsets_sent_at
                .is_none_or(|at| now.saturating_duration_since(at) >= interval);
        if !(owned_changed || interval_due || self.has_hot_warmup_task()) {
            return;
        }
        let sums = offsets.to_wire(false);
        let ends = offsets.to_wire(true);
        if self.last_sent_offsets.as_ref() != Some(&sums) {
            req.task_offsets = Some(sums.clone());
            self.last_sent_offsets = Some(sums);
        }
        if self.last_sent_end_offsets.as_ref() != Some(&ends) {
            req.task_end_offsets = Some(ends.clone());
            self.last_sent_end_offsets = Some(ends);
        }
        self.offsets_sent_at = Some(now);
    }

    /// A warm-up task whose lag (end offset minus offset) is within the broker's
    /// `AcceptableRecoveryLag`.
    pub(super) fn has_hot_warmup_task(&self) -> bool {
        let (Some(lag), Some(offsets)) = (self.acceptable_recovery_lag, &self.task_offsets) else {
            return false;
        };
        self.owned
            .tasks_with_role(StreamsTaskRole::Warmup)
            .any(|task| offsets.lag(task).is_some_and(|l| l <= lag))
    }

    /// After any error (and on rejoin or leave) the next heartbeat re-sends everything.
    pub(super) fn forget_last_sent(&mut self) {
        self.last_sent_owned = None;
        self.last_sent_offsets = None;
        self.last_sent_end_offsets = None;
    }

    fn delta_request(&mut self, version: i16, now: Instant) -> StreamsGroupHeartbeatRequest {
        let mut req = self.base_request(version, self.assignment.member_epoch);
        let owned_changed = self.last_sent_owned.as_ref() != Some(&self.owned);
        if version >= 1 {
            self.add_task_offsets(&mut req, owned_changed, now);
        }
        if owned_changed {
            req.active_tasks = Some(to_wire_tasks(self.owned.to_wire(StreamsTaskRole::Active)));
            req.standby_tasks = Some(to_wire_tasks(self.owned.to_wire(StreamsTaskRole::Standby)));
            req.warmup_tasks = Some(if version >= 1 {
                to_wire_tasks(self.owned.to_wire(StreamsTaskRole::Warmup))
            } else {
                // v0 brokers reject non-empty warm-up lists (and never assign warm-ups).
                Vec::new()
            });
            self.last_sent_owned = Some(self.owned.clone());
        }
        req
    }
}
