//! Coordinator lookup, the one for every caller: which broker coordinates a group or a
//! transaction (`FindCoordinator`, API 10), remembered per key type and key until an answer
//! says the coordinator moved.
//!
//! ```text
//!   client.coordinator(&key, deadline)      cached, else FindCoordinator (retried while the
//!                                           broker answers "not available / loading"; each
//!                                           retry on another known node, NodeRotation)
//!   client.coordinator_failed(&key, kind)   NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE:
//!                                           forgotten, the next call looks it up again
//!   client.forget_coordinator(&key)         any other reason to ask again (a broken
//!                                           connection to it)
//! ```
//!
//! The heartbeat driver, the offset client, describe and [`Client::lookup_coordinator`] all go
//! through here; each checks the API versions its own requests need on the connection.

use std::time::Instant;

use super::{cap, BrokerAddress, BrokerTarget, Client, ClientError, NodeRotation, RETRY_BACKOFF};
use crate::protocol::api::find_coordinator::{FindCoordinatorRequest, FindCoordinatorResponse};
use crate::protocol::BrokerErrorKind;

/// What a coordinator coordinates (`FindCoordinator` `KeyType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CoordinatorType {
    /// A consumer or Streams group (key type 0); the key is the group id.
    Group,
    /// A transactional producer (key type 1); the key is the transactional id.
    Transaction,
}

impl CoordinatorType {
    /// The wire value of `KeyType`.
    pub fn key_type(self) -> i8 {
        match self {
            CoordinatorType::Group => 0,
            CoordinatorType::Transaction => 1,
        }
    }
}

/// A key whose coordinator is asked for: a group id or a transactional id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CoordinatorKey {
    kind: CoordinatorType,
    key: String,
}

impl CoordinatorKey {
    /// The coordinator of group `group_id`.
    pub fn group(group_id: impl Into<String>) -> Self {
        CoordinatorKey {
            kind: CoordinatorType::Group,
            key: group_id.into(),
        }
    }

    /// The coordinator of transactional id `transactional_id`.
    pub fn transaction(transactional_id: impl Into<String>) -> Self {
        CoordinatorKey {
            kind: CoordinatorType::Transaction,
            key: transactional_id.into(),
        }
    }

    /// Group or transaction.
    pub fn kind(&self) -> CoordinatorType {
        self.kind
    }

    /// The group id or transactional id.
    pub fn key(&self) -> &str {
        &self.key
    }
}

// The pure membership core (a layer below) defines when a coordinator moved; the client's
// cache and every caller use that one definition.
pub use crate::streams::commit::coordinator_moved;

/// Answers worth asking again after a pause: the coordinator moved (a new lookup finds the
/// new one) or is still loading the group.
pub(crate) fn retriable_lookup(kind: BrokerErrorKind) -> bool {
    coordinator_moved(kind) || kind == BrokerErrorKind::CoordinatorLoadInProgress
}

impl Client {
    /// The coordinator of `key`: the one found before, or else looked up with
    /// [`find_coordinator_of`](Self::find_coordinator_of) before `deadline`.
    pub fn coordinator(
        &mut self,
        key: &CoordinatorKey,
        deadline: Instant,
    ) -> Result<BrokerAddress, ClientError> {
        match self.coordinators.get(key) {
            Some(addr) => Ok(addr.clone()),
            None => self.find_coordinator_of(key, deadline),
        }
    }

    /// Forgets the coordinator of `key` when `error`, from a request sent to it, says it
    /// moved ([`coordinator_moved`]). Returns whether it was forgotten.
    pub fn coordinator_failed(&mut self, key: &CoordinatorKey, error: BrokerErrorKind) -> bool {
        let moved = coordinator_moved(error);
        if moved {
            self.forget_coordinator(key);
        }
        moved
    }

    /// Forgets the coordinator of `key`: the next [`coordinator`](Self::coordinator) call
    /// looks it up again.
    pub fn forget_coordinator(&mut self, key: &CoordinatorKey) {
        self.coordinators.remove(key);
    }

    /// Finds the coordinator of consumer/streams group `group` afresh; see
    /// [`find_coordinator_of`](Self::find_coordinator_of).
    pub fn find_coordinator(
        &mut self,
        group: &str,
        deadline: Instant,
    ) -> Result<BrokerAddress, ClientError> {
        self.find_coordinator_of(&CoordinatorKey::group(group), deadline)
    }

    /// Looks the coordinator of `key` up afresh and remembers it. Uses the batched form
    /// (FindCoordinator v4+) when the broker supports it. Retries "not available / loading"
    /// answers until `deadline` (the first lookup creates `__consumer_offsets`).
    pub fn find_coordinator_of(
        &mut self,
        key: &CoordinatorKey,
        deadline: Instant,
    ) -> Result<BrokerAddress, ClientError> {
        let deadline = cap(&self.opts, deadline);
        self.coordinators.remove(key);
        // The first try on the usual connection; retries on other known nodes, as Java's
        // leastLoadedNode spreads them (a broker whose metadata lags answers "not available"
        // longer than the others).
        let mut rotation = NodeRotation::new();
        let mut target = BrokerTarget::Any;
        loop {
            let r = self.find_coordinator_once(key, target, deadline);
            let error = match &r {
                Err(ClientError::Broker { kind, .. }) if retriable_lookup(*kind) => {
                    r.as_ref().err()
                }
                // A node picked for a retry may be down: another one is tried.
                Err(e) if target != BrokerTarget::Any && e.is_retriable() => Some(e),
                _ => None,
            };
            let Some(error) = error.filter(|_| Instant::now() + RETRY_BACKOFF < deadline) else {
                return r;
            };
            log::debug!(
                "FindCoordinator({}) to {target:?}: {error}; retrying",
                key.key
            );
            rotation.failed(target);
            if let Some(o) = &self.opts.observer {
                o.retried();
            }
            std::thread::sleep(RETRY_BACKOFF);
            target = self.known_node(&rotation);
        }
    }

    fn find_coordinator_once(
        &mut self,
        key: &CoordinatorKey,
        target: BrokerTarget,
        deadline: Instant,
    ) -> Result<BrokerAddress, ClientError> {
        let (key_type, group) = (key.kind.key_type(), key.key.as_str());
        let version = self
            .connection(target, deadline)?
            .pick_version::<FindCoordinatorRequest>()?;
        let req = if version >= 4 {
            FindCoordinatorRequest {
                key_type,
                coordinator_keys: vec![group.to_string()],
                ..Default::default()
            }
        } else {
            FindCoordinatorRequest {
                key: group.to_string(),
                key_type,
                ..Default::default()
            }
        };
        let resp: FindCoordinatorResponse = self.send_at(target, &req, version, deadline)?;
        let (code, message, node_id, host, port) = if version >= 4 {
            let c = resp
                .coordinators
                .into_iter()
                .find(|c| c.key == group)
                .ok_or_else(|| ClientError::Protocol {
                    broker: self.any_addr(),
                    reason: format!("FindCoordinator v{version} response lacks key {group:?}"),
                })?;
            (c.error_code, c.error_message, c.node_id, c.host, c.port)
        } else {
            (
                resp.error_code,
                resp.error_message,
                resp.node_id,
                resp.host,
                resp.port,
            )
        };
        let kind = BrokerErrorKind::from(code);
        if kind != BrokerErrorKind::None {
            return Err(self.broker_error("FindCoordinator", kind, message));
        }
        let addr = BrokerAddress {
            node_id,
            host,
            port,
        };
        self.learn(addr.clone());
        self.coordinators.insert(key.clone(), addr.clone());
        Ok(addr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinator_lookup_retries_only_transient_errors() {
        assert!(retriable_lookup(BrokerErrorKind::CoordinatorNotAvailable));
        assert!(retriable_lookup(BrokerErrorKind::CoordinatorLoadInProgress));
        assert!(retriable_lookup(BrokerErrorKind::NotCoordinator));
        assert!(!retriable_lookup(BrokerErrorKind::GroupAuthorizationFailed));
        assert!(!retriable_lookup(BrokerErrorKind::InvalidRequest));
    }

    #[test]
    fn only_a_moved_or_missing_coordinator_is_forgotten() {
        assert!(coordinator_moved(BrokerErrorKind::NotCoordinator));
        assert!(coordinator_moved(BrokerErrorKind::CoordinatorNotAvailable));
        assert!(!coordinator_moved(
            BrokerErrorKind::CoordinatorLoadInProgress
        ));
        assert!(!coordinator_moved(BrokerErrorKind::GroupIdNotFound));
    }

    #[test]
    fn keys_of_the_two_types_differ() {
        let g = CoordinatorKey::group("x");
        let t = CoordinatorKey::transaction("x");
        assert_ne!(g, t);
        assert_eq!((g.kind().key_type(), t.kind().key_type()), (0, 1));
        assert_eq!(t.key(), "x");
    }
}
