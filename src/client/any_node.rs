//! Choosing the node for a request any broker can answer (InitProducerId without a
//! transactional id; FindCoordinator's retries), so that its retries spread over the cluster.
//!
//! [`BrokerTarget::Any`] is the bootstrap connection or the first open node: a caller that
//! retries against it asks the same broker again and again. That broker may be the one that
//! cannot answer: a broker just restarted has no producer id block from the controller yet
//! and answers InitProducerId with COORDINATOR_LOAD_IN_PROGRESS until it gets one (Kafka's
//! `RPCProducerIdManager`), for as long as its AllocateProducerIds to the controller takes.
//! Java's clients send these requests to `NetworkClient.leastLoadedNode()`, which starts its
//! scan at a random node; a [`NodeRotation`] does the same for a blocking client (where no
//! request is ever in flight beside the one being sent, so "least loaded" is "connected"),
//! and remembers the nodes that just failed so that each retry goes to another node while
//! there is one.

use std::time::Instant;

use super::backoff::Peer;
use super::{BrokerTarget, Client, ClientError};
use crate::protocol::Request;

/// One node [`NodeRotation::pick`] may choose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeCandidate {
    /// Node id.
    pub node: i32,
    /// Whether a connection to it is open (no connect needed).
    pub connected: bool,
    /// Whether it is inside its reconnect backoff after failed connection attempts.
    pub backing_off: bool,
}

/// The node choice for one operation that any broker can answer, retried until it succeeds:
/// a random first node, then each retry on a node that has not failed yet. See the module
/// docs. Pure: the caller gives the candidates and says which node failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeRotation {
    /// Where the scan over the candidates (in node id order) starts.
    start: usize,
    /// Nodes whose last try failed (an error answer or a broken connection), oldest first.
    failed: Vec<i32>,
}

impl Default for NodeRotation {
    fn default() -> Self {
        Self::new()
    }
}

impl NodeRotation {
    /// A rotation starting at a random node, as Java's `leastLoadedNode` does (so that many
    /// clients do not all pick the same broker).
    pub fn new() -> Self {
        Self::starting_at(rand::random::<u32>() as usize)
    }

    /// A rotation whose scan starts at candidate `start` (modulo their count): for tests.
    pub fn starting_at(start: usize) -> Self {
        NodeRotation {
            start,
            failed: Vec::new(),
        }
    }

    /// The node to try next, or `None` if there is no candidate. Nodes that have not failed
    /// come first, then (once every node failed) the one that failed longest ago; among
    /// equals, a node outside its reconnect backoff, then a connected one, then the scan
    /// order (node ids from the random start).
    pub fn pick(&self, candidates: &[NodeCandidate]) -> Option<i32> {
        let mut sorted = candidates.to_vec();
        sorted.sort_by_key(|c| c.node);
        sorted.dedup_by_key(|c| c.node);
        let n = sorted.len();
        if n == 0 {
            return None;
        }
        let first = self.start % n;
        (0..n)
            .map(|i| (i, sorted[(first + i) % n]))
            .min_by_key(|(i, c)| {
                let failed = self
                    .failed
                    .iter()
                    .position(|f| *f == c.node)
                    .map_or(0, |p| p + 1);
                (failed, c.backing_off, !c.connected, *i)
            })
            .map(|(_, c)| c.node)
    }

    /// Notes that the try on `target` failed: the next [`pick`](Self::pick) prefers other
    /// nodes. [`BrokerTarget::Any`] (no node known) is not remembered.
    pub fn failed(&mut self, target: BrokerTarget) {
        if let BrokerTarget::Node(node) = target {
            self.failed.retain(|f| *f != node);
            self.failed.push(node);
        }
    }

    /// The nodes that failed, oldest first (for logs).
    pub fn failed_nodes(&self) -> &[i32] {
        &self.failed
    }
}

impl Client {
    /// The target for the next try of an operation any broker can answer: the node
    /// `rotation` picks among the known brokers (learned by a Metadata request first when
    /// none is known yet). [`BrokerTarget::Any`] only if that Metadata named no broker.
    pub fn any_node(
        &mut self,
        rotation: &NodeRotation,
        deadline: Instant,
    ) -> Result<BrokerTarget, ClientError> {
        if self.brokers.is_empty() {
            self.metadata(Some(&[]), deadline)?;
        }
        Ok(self.known_node(rotation))
    }

    /// The node `rotation` picks among the brokers known so far (no request), or
    /// [`BrokerTarget::Any`] if none is known.
    pub fn known_node(&self, rotation: &NodeRotation) -> BrokerTarget {
        let now = Instant::now();
        let candidates: Vec<NodeCandidate> = self
            .brokers
            .keys()
            .map(|&node| NodeCandidate {
                node,
                connected: self.nodes.contains_key(&node),
                backing_off: self.reconnects.blocked(Peer::Node(node), now).is_some(),
            })
            .collect();
        let target = rotation
            .pick(&candidates)
            .map_or(BrokerTarget::Any, BrokerTarget::Node);
        log::debug!(
            "any node: {target:?} (of {} known; failed just now: {:?})",
            candidates.len(),
            rotation.failed_nodes()
        );
        target
    }

    /// Sends `req` to the node [`any_node`](Self::any_node) picks. Returns that target with
    /// the answer, so that the caller can note a failed try with [`NodeRotation::failed`]
    /// ([`BrokerTarget::Any`] if no node could be picked).
    pub fn send_to_any<R: Request>(
        &mut self,
        rotation: &NodeRotation,
        req: &R,
        deadline: Instant,
    ) -> (BrokerTarget, Result<R::Response, ClientError>) {
        match self.any_node(rotation, deadline) {
            Ok(target) => (target, self.send(target, req, deadline)),
            Err(e) => (BrokerTarget::Any, Err(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(node: i32, connected: bool, backing_off: bool) -> NodeCandidate {
        NodeCandidate {
            node,
            connected,
            backing_off,
        }
    }

    fn plain(nodes: &[i32]) -> Vec<NodeCandidate> {
        nodes.iter().map(|&n| c(n, false, false)).collect()
    }

    #[test]
    fn no_candidate_no_node() {
        assert_eq!(NodeRotation::starting_at(3).pick(&[]), None);
    }

    #[test]
    fn the_scan_starts_at_the_start_in_node_id_order() {
        let nodes = plain(&[3, 1, 2]);
        assert_eq!(NodeRotation::starting_at(0).pick(&nodes), Some(1));
        assert_eq!(NodeRotation::starting_at(1).pick(&nodes), Some(2));
        assert_eq!(NodeRotation::starting_at(5).pick(&nodes), Some(3));
    }

    #[test]
    fn each_retry_goes_to_a_node_that_has_not_failed_then_round_robin() {
        let nodes = plain(&[1, 2, 3]);
        let mut r = NodeRotation::starting_at(1);
        let mut tried = Vec::new();
        for _ in 0..6 {
            let n = r.pick(&nodes).expect("a node");
            tried.push(n);
            r.failed(BrokerTarget::Node(n));
        }
        assert_eq!(tried, [2, 3, 1, 2, 3, 1]);
    }

    #[test]
    fn a_connected_node_outside_its_backoff_is_preferred() {
        let r = NodeRotation::starting_at(0);
        assert_eq!(
            r.pick(&[c(1, false, false), c(2, true, false)]),
            Some(2),
            "connected"
        );
        assert_eq!(
            r.pick(&[c(1, false, true), c(2, false, false)]),
            Some(2),
            "not backing off"
        );
        // A failure outweighs both.
        let mut r = NodeRotation::starting_at(0);
        r.failed(BrokerTarget::Node(2));
        assert_eq!(r.pick(&[c(1, false, true), c(2, true, false)]), Some(1));
    }

    #[test]
    fn any_is_not_remembered_and_duplicates_count_once() {
        let mut r = NodeRotation::starting_at(0);
        r.failed(BrokerTarget::Any);
        assert!(r.failed_nodes().is_empty());
        r.failed(BrokerTarget::Node(1));
        r.failed(BrokerTarget::Node(1));
        assert_eq!(r.failed_nodes(), [1]);
        assert_eq!(r.pick(&plain(&[1, 1, 2])), Some(2));
    }
}
