//! `topology.optimization=all`'s repartition-topic merging (Java's
//! `InternalStreamsBuilder.mergeRepartitionTopics`), applied when the program is built.
//!
//! Java registers every optimizable repartition step (the one an aggregation, a stream–table
//! join or `toTable` writes after a key change; not an explicit `repartition()`) with its
//! key-changing operation (`map`, `flatMap`, `selectKey`, `groupBy`), if no value-changing
//! operation (`mapValues`, `flatMapValues`) is nearer. At build time each key-changing
//! operation with registered steps gets one repartition step right after it, named after the
//! first step's topic (`<topic>-filter`, `<topic>-sink`, `<topic>-source`); the branch that
//! led to each old step moves after it and the old steps disappear (their copartition entries
//! name the new source). A `merge` node below key changers all of whose steps lie below it
//! takes their steps over, and its single step follows the merge node (Java's
//! `maybeUpdateKeyChangingRepartitionNodeMap`).

use std::collections::BTreeMap;

use super::grouped::RepartitionStep;
use super::Inner;
use crate::topology::{NodeKind, TopologyBuildError, TopologyBuilder};

/// What the DSL records while lowering, for the optimizer.
#[derive(Clone, Debug, Default)]
pub(super) struct GraphMarks {
    /// Key-changing operations, in the order they were added.
    pub(super) key_changers: Vec<String>,
    /// Value-changing operations.
    pub(super) value_changers: Vec<String>,
    /// Optimizable repartition steps, in the order they were added (no duplicates).
    pub(super) steps: Vec<RepartitionStep>,
    /// `merge` nodes, in the order they were added.
    pub(super) merge_nodes: Vec<String>,
    /// The latest repartition source a stream–table join wrote after a stream's node
    /// (Java's `KStreamImpl.repartitionNode`, reused by a later unnamed join of that stream).
    pub(super) join_repartitions: Vec<(String, String)>,
}

impl GraphMarks {
    /// Records an optimizable repartition step.
    pub(super) fn step(&mut self, step: RepartitionStep) {
        if !self.steps.iter().any(|s| s.source == step.source) {
            self.steps.push(step);
        }
    }
}

/// One merge: the key-changing node, its steps, the new step.
struct Merge {
    key_changer: String,
    steps: Vec<RepartitionStep>,
    /// For each step, the child of the key changer on the way to it (the step itself:
    /// `None`).
    moved: Vec<Option<String>>,
    merged: RepartitionStep,
}

/// `findParentNodeMatching`: `start` if it matches, else depth-first through the parents in
/// order.
fn find_matching(
    topology: &TopologyBuilder,
    start: &str,
    matches: &dyn Fn(&str) -> bool,
    depth: usize,
) -> Option<String> {
    if matches(start) {
        return Some(start.to_string());
    }
    if depth > topology.nodes().len() {
        return None;
    }
    let node = topology.node(start)?;
    node.predecessors
        .iter()
        .find_map(|p| find_matching(topology, p, matches, depth + 1))
}

/// The parent of a step's filter (the node the step was written after).
fn step_parent(topology: &TopologyBuilder, step: &RepartitionStep) -> Option<String> {
    topology
        .node(&step.filter)
        .and_then(|n| n.predecessors.first().cloned())
}

/// `getKeyChangingParentNode`: the nearest key-changing ancestor, unless a value-changing
/// one is nearer.
fn key_changer_of(
    topology: &TopologyBuilder,
    marks: &GraphMarks,
    step: &RepartitionStep,
) -> Option<String> {
    let parent = step_parent(topology, step)?;
    let is_key = |n: &str| marks.key_changers.iter().any(|k| k == n);
    let is_changing = |n: &str| is_key(n) || marks.value_changers.iter().any(|k| k == n);
    let nearest = find_matching(topology, &parent, &is_changing, 0)?;
    let key = find_matching(topology, &parent, &is_key, 0)?;
    (nearest == key).then_some(key)
}

/// `keyChangingOperationsToOptimizableRepartitionNodes`: every key changer (in order) with
/// the steps registered with it.
fn registered(
    topology: &TopologyBuilder,
    marks: &GraphMarks,
) -> Vec<(String, Vec<RepartitionStep>)> {
    let mut entries: Vec<(String, Vec<RepartitionStep>)> = marks
        .key_changers
        .iter()
        .map(|k| (k.clone(), Vec::new()))
        .collect();
    for step in &marks.steps {
        if let Some(k) = key_changer_of(topology, marks, step) {
            if let Some(entry) = entries.iter_mut().find(|(name, _)| *name == k) {
                entry.1.push(step.clone());
            }
        }
    }
    entries
}

/// Whether `node`'s parents include `parent`.
fn has_parent(topology: &TopologyBuilder, node: &str, parent: &str) -> bool {
    topology
        .node(node)
        .is_some_and(|n| n.predecessors.iter().any(|p| p == parent))
}

/// `maybeUpdateKeyChangingRepartitionNodeMap`: a merge node below key changers all of whose
/// steps are below it takes their steps over (its entry goes last).
fn regroup_through_merges(
    topology: &TopologyBuilder,
    merge_nodes: &[String],
    entries: Vec<(String, Vec<RepartitionStep>)>,
) -> Vec<(String, Vec<RepartitionStep>)> {
    let mut taken: Vec<String> = Vec::new();
    let mut added: Vec<(String, Vec<RepartitionStep>)> = Vec::new();
    for merge in merge_nodes {
        let below_merge = |n: &str| has_parent(topology, n, merge);
        let mut steps = Vec::new();
        for (key, key_steps) in &entries {
            let all_below = key_steps
                .iter()
                .all(|s| find_matching(topology, &s.filter, &below_merge, 0).is_some());
            let below_key = |n: &str| has_parent(topology, n, key);
            if all_below && find_matching(topology, merge, &below_key, 0).is_some() {
                steps.extend(key_steps.iter().cloned());
                taken.push(key.clone());
            }
        }
        added.push((merge.clone(), steps));
    }
    entries
        .into_iter()
        .filter(|(k, _)| !taken.contains(k))
        .chain(added)
        .collect()
}

/// The merges Java would make, with their new names (each uses up three numbers).
fn plan(inner: &mut Inner) -> Vec<Merge> {
    let entries = registered(&inner.topology, &inner.marks);
    let entries = regroup_through_merges(&inner.topology, &inner.marks.merge_nodes, entries);
    let mut merges = Vec::new();
    for (key_changer, steps) in entries {
        let Some(first) = steps.first() else {
            continue;
        };
        let topic = first.topic.clone();
        // createRepartitionedSource with the topic as prefix: numbers used up, names from
        // the topic (it ends in "-repartition", never a generated name).
        for prefix in ["KSTREAM-SINK-", "KSTREAM-FILTER-", "KSTREAM-SOURCE-"] {
            inner.next_name(prefix);
        }
        let merged = RepartitionStep {
            sink: format!("{topic}-sink"),
            filter: format!("{topic}-filter"),
            source: format!("{topic}-source"),
            topic,
        };
        let moved = steps
            .iter()
            .map(|s| moved_child(&inner.topology, &key_changer, s))
            .collect();
        merges.push(Merge {
            key_changer,
            steps,
            moved,
            merged,
        });
    }
    merges
}

/// The child of `key_changer` on the way to `step` (`None`: the step itself).
fn moved_child(
    topology: &TopologyBuilder,
    key_changer: &str,
    step: &RepartitionStep,
) -> Option<String> {
    let parent = step_parent(topology, step)?;
    if parent == key_changer {
        return None;
    }
    let has_key_parent = |n: &str| {
        topology
            .node(n)
            .is_some_and(|n| n.predecessors.iter().any(|p| p == key_changer))
    };
    find_matching(topology, &parent, &has_key_parent, 0)
}

/// Applies Java's repartition merging to the program's topology (a no-op without
/// optimizable steps).
pub(super) fn merge_repartitions(inner: &mut Inner) -> Result<(), TopologyBuildError> {
    let merges = plan(inner);
    if merges.is_empty() {
        return Ok(());
    }
    inner.topology = rebuild(&inner.topology, &merges)?;
    // The merged step runs as the first merged step did (Java's `getRepartitionSerdes`
    // takes the first step's serdes; steps under one key change carry the same types).
    for m in &merges {
        let Some(first) = m.steps.first() else {
            continue;
        };
        for (old, new) in [
            (&first.filter, &m.merged.filter),
            (&first.sink, &m.merged.sink),
            (&first.source, &m.merged.source),
        ] {
            if let Some(exec) = inner.execs.get(old).cloned() {
                inner.execs.insert(new.clone(), exec);
            }
        }
    }
    Ok(())
}

/// Where the records of a removed node now come from.
fn redirects(merges: &[Merge]) -> (Vec<String>, BTreeMap<String, String>, Vec<String>) {
    let mut removed = Vec::new();
    let mut redirect = BTreeMap::new();
    let mut removed_topics = Vec::new();
    for m in merges {
        for (step, moved) in m.steps.iter().zip(&m.moved) {
            removed.extend([step.filter.clone(), step.sink.clone(), step.source.clone()]);
            removed_topics.push(step.topic.clone());
            let target = match moved {
                None => m.merged.source.clone(),
                Some(_) => String::new(),
            };
            redirect.insert(step.source.clone(), target);
        }
    }
    (removed, redirect, removed_topics)
}

/// Replays `old` node by node with the merges applied.
fn rebuild(old: &TopologyBuilder, merges: &[Merge]) -> Result<TopologyBuilder, TopologyBuildError> {
    let (removed, mut redirect, removed_topics) = redirects(merges);
    // A step reached through a moved child: its source's children read the step's parent.
    for m in merges {
        for (step, moved) in m.steps.iter().zip(&m.moved) {
            if moved.is_some() {
                if let Some(p) = step_parent(old, step) {
                    redirect.insert(step.source.clone(), p);
                }
            }
        }
    }
    let mut new = TopologyBuilder::new();
    for node in old.nodes() {
        if removed.contains(&node.name) {
            continue;
        }
        let parents = new_parents(&node.predecessors, &node.name, &redirect, merges);
        let refs: Vec<&str> = parents.iter().map(String::as_str).collect();
        match &node.kind {
            NodeKind::Source {
                topics,
                key_serde,
                value_serde,
            } => new.add_source_with_serdes(
                &node.name,
                topics.iter().cloned(),
                key_serde.as_deref(),
                value_serde.as_deref(),
            )?,
            NodeKind::Processor { .. } => new.add_processor(&node.name, &refs)?,
            NodeKind::Sink { target } => new.add_sink(&node.name, target.clone(), &refs)?,
        }
        if let Some(m) = merges.iter().find(|m| m.key_changer == node.name) {
            write_step(&mut new, &m.merged, &node.name)?;
        }
    }
    copy_rest(old, &mut new, &removed, &removed_topics, merges)?;
    Ok(new)
}

/// The parents of `child` after the merges: a removed step's source is replaced by where its
/// records now come from; a moved child loses its key changer and gains the new step's
/// source last (`addChild` appends, `removeChild` removes).
fn new_parents(
    parents: &[String],
    child: &str,
    redirect: &BTreeMap<String, String>,
    merges: &[Merge],
) -> Vec<String> {
    let mut out = Vec::new();
    let mut appended = Vec::new();
    for parent in parents {
        let moved = merges.iter().find(|m| {
            *parent == m.key_changer && m.moved.iter().any(|c| c.as_deref() == Some(child))
        });
        match (moved, redirect.get(parent)) {
            (Some(m), _) => appended.push(m.merged.source.clone()),
            (None, Some(target)) if !target.is_empty() => out.push(target.clone()),
            _ => out.push(parent.clone()),
        }
    }
    out.extend(appended);
    out
}

/// `OptimizableRepartitionNode.writeToTopology` for the merged step.
fn write_step(
    new: &mut TopologyBuilder,
    step: &RepartitionStep,
    parent: &str,
) -> Result<(), TopologyBuildError> {
    new.add_internal_topic(&step.topic, None);
    new.add_processor(&step.filter, &[parent])?;
    new.add_sink(
        &step.sink,
        crate::topology::SinkTarget::Topic(step.topic.clone()),
        &[&step.filter],
    )?;
    new.add_source(&step.source, [step.topic.clone()])
}

/// Stores, internal topics, copartition groups and source changelogs, without the removed
/// steps (`maybeUpdateCopartitionSourceGroups`: a removed source becomes the new one).
fn copy_rest(
    old: &TopologyBuilder,
    new: &mut TopologyBuilder,
    removed: &[String],
    removed_topics: &[String],
    merges: &[Merge],
) -> Result<(), TopologyBuildError> {
    for (spec, users) in old.stores() {
        let users: Vec<&str> = users.iter().map(String::as_str).collect();
        new.add_state_store(spec.clone(), &users)?;
    }
    for (topic, partitions) in old.internal_topics() {
        if !removed_topics.contains(topic) {
            new.add_internal_topic(topic, *partitions);
        }
    }
    for group in old.copartition_groups() {
        let mut names: Vec<String> = Vec::new();
        for name in group {
            let name = if removed.contains(name) {
                merges
                    .iter()
                    .find(|m| m.steps.iter().any(|s| &s.source == name))
                    .map_or(name.clone(), |m| m.merged.source.clone())
            } else {
                name.clone()
            };
            if !names.contains(&name) {
                names.push(name);
            }
        }
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        new.copartition_sources(&refs)?;
    }
    for (store, topic) in old.source_changelogs() {
        new.connect_source_store_and_topic(store, topic)?;
    }
    Ok(())
}
