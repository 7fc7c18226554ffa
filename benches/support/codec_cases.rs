//! The StreamsGroupHeartbeat cases of issue 8 item 1, shared by `benches/codec.rs` (criterion,
//! wall time) and `examples/bench_member.rs codec-probe` (instruction counts under callgrind):
//! the join, steady and response fixtures, the hand-written FLOOR writer that produces the same
//! bytes with direct slice copies, and the flat floor decoder of the response.
#![allow(dead_code)]

use kafka_streams_group::protocol::api::streams_group_heartbeat::{
    CopartitionGroup, Endpoint, EndpointToPartitions, KeyValue, Status,
    StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse, Subtopology, TaskIds, TaskOffset,
    TopicInfo, TopicPartitions, Topology,
};

pub const V: i16 = 1;

pub fn kv(k: &str, v: &str) -> KeyValue {
    KeyValue {
        key: k.into(),
        value: v.into(),
    }
}

pub fn topic_info(name: String, configs: usize) -> TopicInfo {
    let all = [
        ("cleanup.policy", "compact"),
        ("message.timestamp.type", "CreateTime"),
        ("segment.bytes", "52428800"),
    ];
    TopicInfo {
        name,
        partitions: 0,
        replication_factor: 0,
        topic_configs: all[..configs].iter().map(|(k, v)| kv(k, v)).collect(),
    }
}

/// The joining heartbeat of a 10-subtopology application with every optional field set.
pub fn join_request() -> StreamsGroupHeartbeatRequest {
    let app = "bench-application";
    let subtopologies = (0..10)
        .map(|i| Subtopology {
            subtopology_id: i.to_string(),
            source_topics: vec![format!("{app}-input-{i}-a"), format!("{app}-input-{i}-b")],
            source_topic_regex: Vec::new(),
            state_changelog_topics: vec![
                topic_info(format!("{app}-store-{i}-a-changelog"), 3),
                topic_info(format!("{app}-store-{i}-b-changelog"), 3),
            ],
            repartition_sink_topics: vec![format!("{app}-repartition-{}", i + 1)],
            repartition_source_topics: vec![topic_info(format!("{app}-repartition-{i}"), 3)],
            copartition_groups: vec![CopartitionGroup {
                source_topics: vec![0, 1],
                source_topic_regex: Vec::new(),
                repartition_source_topics: vec![0],
            }],
        })
        .collect();
    StreamsGroupHeartbeatRequest {
        group_id: app.into(),
        member_id: "Zm9vYmFyYmF6cXV4cXV1eA".into(),
        member_epoch: 0,
        endpoint_information_epoch: 0,
        instance_id: Some("instance-1".into()),
        rack_id: Some("rack-a".into()),
        rebalance_timeout_ms: 300_000,
        topology: Some(Topology {
            epoch: 1,
            subtopologies,
        }),
        active_tasks: Some(Vec::new()),
        standby_tasks: Some(Vec::new()),
        warmup_tasks: Some(Vec::new()),
        process_id: Some("8c4b7a0e-4f5e-4c1b-9f7e-2b1d6c3a9e10".into()),
        user_endpoint: Some(Endpoint {
            host: "app-host-1.example".into(),
            port: 7001,
        }),
        client_tags: Some(vec![kv("zone", "eu-west-1a"), kv("cluster", "blue")]),
        task_offsets: Some(vec![TaskOffset {
            subtopology_id: "0".into(),
            partition: 0,
            offset: 1234,
        }]),
        task_end_offsets: Some(vec![TaskOffset {
            subtopology_id: "0".into(),
            partition: 0,
            offset: 5678,
        }]),
        shutdown_application: false,
    }
}

/// A steady-state heartbeat: positive epoch, every optional field null.
pub fn steady_request() -> StreamsGroupHeartbeatRequest {
    StreamsGroupHeartbeatRequest {
        group_id: "bench-application".into(),
        member_id: "Zm9vYmFyYmF6cXV4cXV1eA".into(),
        member_epoch: 17,
        endpoint_information_epoch: 4,
        rebalance_timeout_ms: -1,
        ..Default::default()
    }
}

/// 64 active + 64 standby `TaskIds` of 4 partitions each, endpoint partitions for 8 endpoints.
pub fn big_response() -> StreamsGroupHeartbeatResponse {
    let tasks = |off: i32| -> Vec<TaskIds> {
        (0..64)
            .map(|s| TaskIds {
                subtopology_id: s.to_string(),
                partitions: (0..4).map(|p| off + p).collect(),
            })
            .collect()
    };
    let endpoints = (0..8)
        .map(|e| EndpointToPartitions {
            user_endpoint: Endpoint {
                host: format!("app-host-{e}.example"),
                port: 7000 + e as u16,
            },
            active_partitions: (0..4)
                .map(|t| TopicPartitions {
                    topic: format!("bench-application-input-{t}"),
                    partitions: (0..8).map(|p| e * 8 + p).collect(),
                })
                .collect(),
            standby_partitions: (0..2)
                .map(|t| TopicPartitions {
                    topic: format!("bench-application-input-{t}"),
                    partitions: (0..4).map(|p| e * 4 + p).collect(),
                })
                .collect(),
        })
        .collect();
    StreamsGroupHeartbeatResponse {
        member_id: "Zm9vYmFyYmF6cXV4cXV1eA".into(),
        member_epoch: 18,
        heartbeat_interval_ms: 5000,
        acceptable_recovery_lag: 10_000,
        status: Some(vec![Status {
            status_code: 5,
            status_detail: "Assignment delayed".into(),
        }]),
        active_tasks: Some(tasks(0)),
        standby_tasks: Some(tasks(4)),
        warmup_tasks: Some(Vec::new()),
        endpoint_information_epoch: 4,
        partitions_by_user_endpoint: Some(endpoints),
        ..Default::default()
    }
}

// ------------------------------------------------------------------------------------------
// The floors: the same bytes with no checks, no Results, direct slice copies.

#[inline(always)]
pub fn uvarint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

#[inline(always)]
pub fn cstr(out: &mut Vec<u8>, s: &str) {
    uvarint(out, s.len() as u32 + 1);
    out.extend_from_slice(s.as_bytes());
}

#[inline(always)]
pub fn cnstr(out: &mut Vec<u8>, s: Option<&str>) {
    match s {
        Some(s) => cstr(out, s),
        None => out.push(0),
    }
}

pub fn floor_kvs(out: &mut Vec<u8>, kvs: &[KeyValue]) {
    uvarint(out, kvs.len() as u32 + 1);
    for kv in kvs {
        cstr(out, &kv.key);
        cstr(out, &kv.value);
        out.push(0);
    }
}

pub fn floor_topic_info(out: &mut Vec<u8>, t: &TopicInfo) {
    cstr(out, &t.name);
    out.extend_from_slice(&t.partitions.to_be_bytes());
    out.extend_from_slice(&t.replication_factor.to_be_bytes());
    floor_kvs(out, &t.topic_configs);
    out.push(0);
}

pub fn floor_strs(out: &mut Vec<u8>, v: &[String]) {
    uvarint(out, v.len() as u32 + 1);
    for s in v {
        cstr(out, s);
    }
}

pub fn floor_i16s(out: &mut Vec<u8>, v: &[i16]) {
    uvarint(out, v.len() as u32 + 1);
    for x in v {
        out.extend_from_slice(&x.to_be_bytes());
    }
}

pub fn floor_task_ids(out: &mut Vec<u8>, v: Option<&[TaskIds]>) {
    let Some(v) = v else {
        out.push(0);
        return;
    };
    uvarint(out, v.len() as u32 + 1);
    for t in v {
        cstr(out, &t.subtopology_id);
        uvarint(out, t.partitions.len() as u32 + 1);
        for p in &t.partitions {
            out.extend_from_slice(&p.to_be_bytes());
        }
        out.push(0);
    }
}

pub fn floor_offsets(out: &mut Vec<u8>, v: Option<&[TaskOffset]>) {
    let Some(v) = v else {
        out.push(0);
        return;
    };
    uvarint(out, v.len() as u32 + 1);
    for t in v {
        cstr(out, &t.subtopology_id);
        out.extend_from_slice(&t.partition.to_be_bytes());
        out.extend_from_slice(&t.offset.to_be_bytes());
        out.push(0);
    }
}

/// Hand-written request writer (both the join and the steady shapes).
pub fn floor_encode_request(out: &mut Vec<u8>, r: &StreamsGroupHeartbeatRequest) {
    cstr(out, &r.group_id);
    cstr(out, &r.member_id);
    out.extend_from_slice(&r.member_epoch.to_be_bytes());
    out.extend_from_slice(&r.endpoint_information_epoch.to_be_bytes());
    cnstr(out, r.instance_id.as_deref());
    cnstr(out, r.rack_id.as_deref());
    out.extend_from_slice(&r.rebalance_timeout_ms.to_be_bytes());
    match &r.topology {
        None => out.push(0xff),
        Some(t) => {
            out.push(1);
            out.extend_from_slice(&t.epoch.to_be_bytes());
            uvarint(out, t.subtopologies.len() as u32 + 1);
            for s in &t.subtopologies {
                cstr(out, &s.subtopology_id);
                floor_strs(out, &s.source_topics);
                floor_strs(out, &s.source_topic_regex);
                uvarint(out, s.state_changelog_topics.len() as u32 + 1);
                for ti in &s.state_changelog_topics {
                    floor_topic_info(out, ti);
                }
                floor_strs(out, &s.repartition_sink_topics);
                uvarint(out, s.repartition_source_topics.len() as u32 + 1);
                for ti in &s.repartition_source_topics {
                    floor_topic_info(out, ti);
                }
                uvarint(out, s.copartition_groups.len() as u32 + 1);
                for g in &s.copartition_groups {
                    floor_i16s(out, &g.source_topics);
                    floor_i16s(out, &g.source_topic_regex);
                    floor_i16s(out, &g.repartition_source_topics);
                    out.push(0);
                }
                out.push(0);
            }
            out.push(0);
        }
    }
    floor_task_ids(out, r.active_tasks.as_deref());
    floor_task_ids(out, r.standby_tasks.as_deref());
    floor_task_ids(out, r.warmup_tasks.as_deref());
    cnstr(out, r.process_id.as_deref());
    match &r.user_endpoint {
        None => out.push(0xff),
        Some(e) => {
            out.push(1);
            cstr(out, &e.host);
            out.extend_from_slice(&e.port.to_be_bytes());
            out.push(0);
        }
    }
    match &r.client_tags {
        None => out.push(0),
        Some(t) => floor_kvs(out, t),
    }
    floor_offsets(out, r.task_offsets.as_deref());
    floor_offsets(out, r.task_end_offsets.as_deref());
    out.push(u8::from(r.shutdown_application));
    out.push(0);
}

/// The flat decode floor's output: every string in one arena, every partition list in one Vec.
#[derive(Default)]
pub struct FlatResponse {
    pub fixed: [i64; 8],
    pub text: String,
    /// (start, end) of each string in `text`, in wire order.
    pub spans: Vec<(u32, u32)>,
    /// Every i32 of every partition list, in wire order.
    pub ints: Vec<i32>,
    /// Per list: (kind, start index into `ints`, count).
    pub lists: Vec<(u8, u32, u32)>,
}

pub struct Flat<'a> {
    b: &'a [u8],
    p: usize,
}

impl Flat<'_> {
    #[inline(always)]
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let s = self.b.get(self.p..self.p.checked_add(n)?)?;
        self.p += n;
        Some(s)
    }
    #[inline(always)]
    fn u8(&mut self) -> Option<u8> {
        let v = *self.b.get(self.p)?;
        self.p += 1;
        Some(v)
    }
    #[inline(always)]
    fn i32(&mut self) -> Option<i32> {
        Some(i32::from_be_bytes(self.take(4)?.try_into().ok()?))
    }
    #[inline(always)]
    fn uvarint(&mut self) -> Option<u32> {
        let mut v = 0u32;
        for shift in (0..35).step_by(7) {
            let b = self.u8()?;
            v |= u32::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Some(v);
            }
        }
        None
    }
    #[inline(always)]
    fn str(&mut self, out: &mut FlatResponse) -> Option<()> {
        let n = (self.uvarint()? as usize).checked_sub(1)?;
        let s = std::str::from_utf8(self.take(n)?).ok()?;
        let start = out.text.len() as u32;
        out.text.push_str(s);
        out.spans.push((start, out.text.len() as u32));
        Some(())
    }
    #[inline(always)]
    fn ints(&mut self, kind: u8, out: &mut FlatResponse) -> Option<()> {
        let n = (self.uvarint()? as usize).checked_sub(1)?;
        let raw = self.take(n.checked_mul(4)?)?;
        let start = out.ints.len() as u32;
        out.ints.extend(
            raw.chunks_exact(4)
                .map(|c| i32::from_be_bytes([c[0], c[1], c[2], c[3]])),
        );
        out.lists.push((kind, start, n as u32));
        Some(())
    }
    fn tags(&mut self) -> Option<()> {
        (self.u8()? == 0).then_some(())
    }
    fn tasks(&mut self, kind: u8, out: &mut FlatResponse) -> Option<()> {
        let n = self.uvarint()?;
        for _ in 0..n.saturating_sub(1) {
            self.str(out)?;
            self.ints(kind, out)?;
            self.tags()?;
        }
        Some(())
    }
    fn topic_partitions(&mut self, kind: u8, out: &mut FlatResponse) -> Option<()> {
        let n = self.uvarint()?;
        for _ in 0..n.saturating_sub(1) {
            self.str(out)?;
            self.ints(kind, out)?;
            self.tags()?;
        }
        Some(())
    }
}

/// Hand-written flat decoder of a v1 response (no tagged fields beyond empty sections).
pub fn floor_decode_response(b: &[u8], out: &mut FlatResponse) -> Option<()> {
    out.text.clear();
    out.spans.clear();
    out.ints.clear();
    out.lists.clear();
    let mut d = Flat { b, p: 0 };
    out.fixed[0] = i64::from(d.i32()?); // throttle
    out.fixed[1] = i64::from(i16::from_be_bytes(d.take(2)?.try_into().ok()?));
    if d.uvarint()? != 0 {
        d.p -= 1;
        d.str(out)?; // error message
    }
    d.str(out)?; // member id
    out.fixed[2] = i64::from(d.i32()?);
    out.fixed[3] = i64::from(d.i32()?);
    out.fixed[4] = i64::from(d.i32()?);
    out.fixed[5] = i64::from_be_bytes(d.take(8)?.try_into().ok()?);
    let ns = d.uvarint()?;
    for _ in 0..ns.saturating_sub(1) {
        out.fixed[6] = i64::from(d.u8()?);
        d.str(out)?;
        d.tags()?;
    }
    d.tasks(0, out)?;
    d.tasks(1, out)?;
    d.tasks(2, out)?;
    out.fixed[7] = i64::from(d.u8()?);
    let _endpoint_epoch = d.i32()?;
    let ne = d.uvarint()?;
    for _ in 0..ne.saturating_sub(1) {
        d.str(out)?;
        let _port = d.take(2)?;
        d.tags()?;
        d.topic_partitions(3, out)?;
        d.topic_partitions(4, out)?;
        d.tags()?;
    }
    d.tags()?;
    (d.p == b.len()).then_some(())
}
