//! `Topology#describe()`: the same description, in the same order, as Java prints.
//!
//! Java (`InternalTopologyBuilder.describe`) connects the nodes of each sub-topology in the
//! iteration order of a `HashMap<String, node>`, and each connection adds the child's sub-tree
//! size to the parent and all of the parent's *current* ancestors. Nodes are then ordered by
//! sub-tree size (largest first), ties by name, in `TreeSet`s: the sub-topology's node list
//! once all sizes are final, but each node's predecessor and successor lists while the sizes
//! are still growing. This module repeats those steps in the same order (with
//! [`JavaTreeSet`](super::tree_set::JavaTreeSet)) so the printed text is byte-identical.

use std::cmp::Ordering;
use std::fmt;

use super::tree_set::JavaTreeSet;
use super::{NodeKind, SinkTarget, TopologyBuilder};
use crate::topology::java_order::string_set;

/// What `Topology#describe()` returns; its [`Display`](fmt::Display) is Java's `toString()`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopologyDescription {
    /// The sub-topologies, by id.
    pub subtopologies: Vec<SubtopologyDescription>,
}

/// One sub-topology of a [`TopologyDescription`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubtopologyDescription {
    /// Its id (0, 1, …).
    pub id: usize,
    /// Its nodes in Java's order (largest sub-tree first, ties by name).
    pub nodes: Vec<NodeDescription>,
}

/// One node of a [`SubtopologyDescription`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeDescription {
    /// The node's name.
    pub name: String,
    /// `Source: … (topics: [..])`, `Processor: … (stores: [..])` or `Sink: … (topic: ..)`.
    pub kind: NodeKind,
    /// The source topics or processor stores as Java prints them (a `HashSet`'s order).
    pub printed_set: Vec<String>,
    /// Successor names, in Java's order.
    pub successors: Vec<String>,
    /// Predecessor names, in Java's order.
    pub predecessors: Vec<String>,
}

/// A node while the description is being built.
struct Working {
    size: usize,
    preds: JavaTreeSet<usize>,
    succs: JavaTreeSet<usize>,
    parents: Vec<usize>,
}

/// Java's `String.compareTo`: UTF-16 code units.
fn java_compare(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

impl TopologyBuilder {
    /// `Topology#describe()`; print it with `{}` for Java's text.
    pub fn describe(&self) -> TopologyDescription {
        let subtopologies = self
            .node_groups()
            .into_iter()
            .enumerate()
            .map(|(id, group)| SubtopologyDescription {
                id,
                nodes: self.describe_group(&group),
            })
            .collect();
        TopologyDescription { subtopologies }
    }

    fn describe_group(&self, group: &[usize]) -> Vec<NodeDescription> {
        // `group` is already in the HashMap<String, node> iteration order (same names, same
        // insertion order as the HashSet it was built from).
        let local = |global: usize| group.iter().position(|&g| g == global);
        let mut work: Vec<Working> = group
            .iter()
            .map(|_| Working {
                size: 1,
                preds: JavaTreeSet::new(),
                succs: JavaTreeSet::new(),
                parents: Vec::new(),
            })
            .collect();
        let names: Vec<&str> = group.iter().map(|&g| self.nodes[g].name.as_str()).collect();
        for n in 0..group.len() {
            for parent in &self.nodes[group[n]].predecessors {
                let Some(p) = self.index.get(parent.as_str()).and_then(|&g| local(g)) else {
                    continue;
                };
                let sizes: Vec<usize> = work.iter().map(|w| w.size).collect();
                let cmp = |a: &usize, b: &usize| compare(&sizes, &names, *a, *b);
                work[n].preds.insert(p, cmp);
                work[n].parents.push(p);
                work[p].succs.insert(n, cmp);
                let delta = work[n].size;
                add_size(&mut work, p, delta);
            }
        }
        let sizes: Vec<usize> = work.iter().map(|w| w.size).collect();
        let mut order: Vec<usize> = (0..group.len()).collect();
        order.sort_by(|a, b| compare(&sizes, &names, *a, *b));
        order
            .into_iter()
            .map(|n| {
                let node = &self.nodes[group[n]];
                let printed_set = match &node.kind {
                    NodeKind::Source { topics, .. } => java_set(topics),
                    NodeKind::Processor { stores } => java_set(stores),
                    NodeKind::Sink { .. } => Vec::new(),
                };
                let to_names =
                    |v: Vec<usize>| v.into_iter().map(|i| names[i].to_string()).collect();
                NodeDescription {
                    name: node.name.clone(),
                    kind: node.kind.clone(),
                    printed_set,
                    successors: to_names(work[n].succs.items()),
                    predecessors: to_names(work[n].preds.items()),
                }
            })
            .collect()
    }
}

/// Java's `NodeComparator`: larger sub-tree first, then by name.
fn compare(sizes: &[usize], names: &[&str], a: usize, b: usize) -> Ordering {
    if a == b {
        return Ordering::Equal;
    }
    sizes[b]
        .cmp(&sizes[a])
        .then_with(|| java_compare(names[a], names[b]))
}

/// Java's `updateSize`: the node and, recursively, all its predecessors known so far.
fn add_size(work: &mut [Working], node: usize, delta: usize) {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        work[n].size += delta;
        stack.extend(work[n].parents.iter().copied());
    }
}

/// `new HashSet<>(list)` iterated.
fn java_set(items: &[String]) -> Vec<String> {
    string_set(items.iter().map(String::as_str))
        .iter()
        .map(|s| s.to_string())
        .collect()
}

/// Java's `nodeNames`: `a, b` or `none`.
fn node_names(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}

impl fmt::Display for NodeDescription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let set = self.printed_set.join(", ");
        match &self.kind {
            NodeKind::Source { .. } => write!(
                f,
                "Source: {} (topics: [{set}])\n      --> {}",
                self.name,
                node_names(&self.successors)
            ),
            NodeKind::Processor { .. } => write!(
                f,
                "Processor: {} (stores: [{set}])\n      --> {}\n      <-- {}",
                self.name,
                node_names(&self.successors),
                node_names(&self.predecessors)
            ),
            NodeKind::Sink { target } => {
                match target {
                    SinkTarget::Topic(t) => write!(f, "Sink: {} (topic: {t})", self.name)?,
                    SinkTarget::Extractor(e) => {
                        write!(f, "Sink: {} (extractor class: {e})", self.name)?
                    }
                }
                write!(f, "\n      <-- {}", node_names(&self.predecessors))
            }
        }
    }
}

impl fmt::Display for SubtopologyDescription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "Sub-topology: {}", self.id)?;
        for node in &self.nodes {
            writeln!(f, "    {node}")?;
        }
        writeln!(f)
    }
}

impl fmt::Display for TopologyDescription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Topologies:\n ")?;
        for s in &self.subtopologies {
            write!(f, "  {s}")?;
        }
        Ok(())
    }
}
