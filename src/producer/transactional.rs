//! The transactional calls of the blocking [`Producer`]: `init_transactions`,
//! `begin_transaction`, `send_offsets_to_transaction`, `commit_transaction` and
//! `abort_transaction`, each bounded by `max.block.ms`. They drive the
//! [`TransactionManager`](super::transaction::TransactionManager): send the request it asks
//! for to its coordinator (looked up through the shared client's cache), feed it the answer,
//! back off and resend when it says so.

use std::collections::BTreeMap;
use std::time::Instant;

use super::shell::{fatal, Producer};
use super::transaction::{
    GroupMetadata, Step, TransactionManager, TxnCoordinator, TxnError, TxnRequest, TxnState,
    TxnVersion,
};
use crate::client::{BrokerTarget, Client, ClientError, CoordinatorKey};
use crate::common::TopicPartition;
use crate::connect::client_error;
use crate::error::{BrokerErrorContext, Error};
use crate::protocol::api::api_versions::ApiVersionsRequest;
use crate::protocol::{ApiMessage, Request};
use crate::streams::commit::CommitOffset;

/// The finalised feature that says which transaction protocol the cluster runs.
const TRANSACTION_VERSION: &str = "transaction.version";

/// A transactional call's failure.
#[derive(Debug, thiserror::Error)]
pub enum TransactionError {
    /// The transaction failed: [`TxnError::is_abortable`] → call
    /// [`Producer::abort_transaction`] and go on; fenced or fatal → drop the producer.
    #[error("{0}")]
    Txn(#[from] TxnError),
    /// The call did not finish: `max.block.ms` passed (the transaction state is kept: call
    /// the same method again to continue, as with Java's `TimeoutException`), a connection
    /// or authentication error, or a producer without `transactional.id`.
    #[error("{0}")]
    Other(#[from] Error),
}

impl TransactionError {
    /// Whether aborting the transaction lets the producer go on.
    pub fn is_abortable(&self) -> bool {
        matches!(self, TransactionError::Txn(e) if e.is_abortable())
    }

    /// Whether another producer with the same `transactional.id` fenced this one.
    pub fn is_fenced(&self) -> bool {
        matches!(self, TransactionError::Txn(e) if e.is_fenced())
    }

    /// Whether the call ran out of `max.block.ms` (calling it again continues).
    pub fn is_timeout(&self) -> bool {
        matches!(self, TransactionError::Other(Error::Timeout { .. }))
    }
}

impl From<TxnError> for Error {
    fn from(e: TxnError) -> Error {
        Error::Broker {
            kind: e.kind,
            code: e.kind.code(),
            message: Some(e.to_string()),
            context: BrokerErrorContext::api(e.api),
        }
    }
}

impl From<TransactionError> for Error {
    fn from(e: TransactionError) -> Error {
        match e {
            TransactionError::Txn(e) => e.into(),
            TransactionError::Other(e) => e,
        }
    }
}

impl Producer {
    /// The transaction state (`None` without `transactional.id`).
    pub fn transaction_state(&self) -> Option<TxnState> {
        self.txn.as_ref().map(TransactionManager::state)
    }

    /// The transaction protocol version in use (`None` without `transactional.id`):
    /// version 2 when the transaction coordinator finalised `transaction.version` >= 2.
    pub fn transaction_version(&self) -> Option<TxnVersion> {
        self.txn.as_ref().map(TransactionManager::version)
    }

    fn txn_mut(&mut self) -> Result<&mut TransactionManager, TransactionError> {
        self.txn.as_mut().ok_or_else(|| {
            TransactionError::Other(Error::InvalidConfiguration {
                field: "transactional.id",
                reason: "this producer has no transactional.id: set it (ProducerConfig::\
                         transactional_id) to use transactions"
                    .to_string(),
            })
        })
    }

    fn max_block_deadline(&self) -> Instant {
        Instant::now() + self.config.get_max_block()
    }

    /// Java's `initTransactions`: finds the transaction coordinator, learns the transaction
    /// version it runs, and takes the producer id and epoch of `transactional.id`
    /// (InitProducerId). This fences every older producer with the same id and aborts its
    /// open transaction. Call once, before the first transaction; after a timeout, call it
    /// again to continue.
    pub fn init_transactions(&mut self) -> Result<(), TransactionError> {
        let deadline = self.max_block_deadline();
        self.txn_mut()?.initialize()?;
        let version = self.coordinator_transaction_version(deadline)?;
        log::info!(
            "transactional.id {:?}: transaction version {version:?}",
            self.txn_mut()?.transactional_id()
        );
        self.txn_mut()?.set_version(version);
        self.drive("init_transactions", deadline)?;
        self.adopt_identity();
        Ok(())
    }

    /// Java's `beginTransaction`: opens a transaction (no request; the first record or
    /// offsets add to it).
    pub fn begin_transaction(&mut self) -> Result<(), TransactionError> {
        self.txn_mut()?.begin()?;
        Ok(())
    }

    /// Java's `sendOffsetsToTransaction`: commits `offsets` (per input partition, the offset
    /// of the next record to read) for `group` as part of the open transaction: they become
    /// visible to the group only if the transaction commits. The group coordinator checks
    /// the member id, member epoch and instance id like an OffsetCommit (KIP-447).
    /// Transaction version 1 sends AddOffsetsToTxn first; version 2 only TxnOffsetCommit.
    ///
    /// An offset is an `i64`, or a [`CommitOffset`] to commit a leader epoch and metadata
    /// with it (Java's `OffsetAndMetadata`; Kafka Streams puts the partition time there,
    /// [`CommitOffset::partition_time`]).
    pub fn send_offsets_to_transaction<O>(
        &mut self,
        offsets: &BTreeMap<TopicPartition, O>,
        group: &GroupMetadata,
    ) -> Result<(), TransactionError>
    where
        O: Clone + Into<CommitOffset>,
    {
        let deadline = self.max_block_deadline();
        let offsets = offsets
            .iter()
            .map(|(tp, o)| (tp.clone(), o.clone().into()))
            .collect();
        self.txn_mut()?.send_offsets(offsets, group.clone())?;
        self.drive("send_offsets_to_transaction", deadline)
    }

    /// Java's `commitTransaction`: sends every queued record, then ends the transaction
    /// (EndTxn commit). If a record or the offsets failed, the error says the transaction
    /// must be aborted ([`TransactionError::is_abortable`]). A timeout leaves the commit
    /// under way: call `commit_transaction` again to finish it.
    pub fn commit_transaction(&mut self) -> Result<(), TransactionError> {
        let deadline = self.max_block_deadline();
        let state = self.txn_mut()?.state();
        if state == TxnState::InTransaction {
            if let Err(e) = self.flush(deadline) {
                if let Some(txn_error) = self.txn_mut()?.last_error().cloned() {
                    return Err(txn_error.into());
                }
                return Err(e.into());
            }
        }
        self.txn_mut()?.begin_commit()?;
        self.drive("commit_transaction", deadline)?;
        self.adopt_identity();
        Ok(())
    }

    /// Java's `abortTransaction`: drops the records not yet sent, then ends the transaction
    /// (EndTxn abort): nothing of it becomes visible to `read_committed` readers. Needed
    /// after an abortable error. A timeout leaves the abort under way: call it again.
    pub fn abort_transaction(&mut self) -> Result<(), TransactionError> {
        let deadline = self.max_block_deadline();
        let state = self.txn_mut()?.state();
        // Answers of requests in flight first: a batch must not reach its partition after
        // the abort marker. One that does not come by the deadline breaks its connection.
        if let Err(e) = self.await_all(deadline) {
            log::debug!("abort_transaction: reading Produce answers in flight: {e}");
        }
        let (dropped, sealed) = match state {
            TxnState::InTransaction | TxnState::AbortableError => self.acc.drop_all(),
            _ => (0, false),
        };
        if dropped > 0 {
            log::info!("abort_transaction: {dropped} records not sent are dropped");
        }
        self.failures.clear();
        self.txn_mut()?.begin_abort(sealed)?;
        self.drive("abort_transaction", deadline)?;
        self.adopt_identity();
        Ok(())
    }

    /// Transaction version 1: adds the partitions of newly queued records before their
    /// batches go (AddPartitionsToTxn), within `deadline`.
    pub(super) fn add_partitions_to_txn(&mut self, deadline: Instant) -> Result<(), Error> {
        match &self.txn {
            Some(t) if t.partitions_pending() => {}
            Some(t) if matches!(t.state(), TxnState::AbortableError | TxnState::FatalError) => {
                // Nothing more goes out of a failed transaction.
                return Err(t.last_error().cloned().map_or(Error::Closed, Error::from));
            }
            _ => return Ok(()),
        }
        self.drive("send", deadline).map_err(Error::from)
    }

    /// The highest Produce version for this producer: a transactional producer on
    /// transaction version 1 stays below v12 (v12+ adds partitions implicitly, KIP-890), as
    /// Java's does.
    pub(super) fn produce_version_cap(&self) -> i16 {
        match self.transaction_version() {
            Some(TxnVersion::V1) => 11,
            _ => i16::MAX,
        }
    }

    /// Gives the accumulator the identity the transaction coordinator handed out (after
    /// InitProducerId, or a version 2 EndTxn that bumped the epoch).
    fn adopt_identity(&mut self) {
        if let Some(id) = self.txn.as_ref().and_then(TransactionManager::identity) {
            if self.acc.current_identity() != Some(id) {
                log::debug!(
                    "transactional producer id {} epoch {}",
                    id.producer_id,
                    id.producer_epoch
                );
            }
            self.acc.set_identity(id);
        }
    }

    /// Sends what the transaction manager asks for until it asks for nothing more, an error
    /// ends it, or `deadline` passes.
    fn drive(
        &mut self,
        operation: &'static str,
        deadline: Instant,
    ) -> Result<(), TransactionError> {
        let started = Instant::now();
        let mut last: Option<String> = None;
        loop {
            let Some(request) = self.txn_mut()?.next_request() else {
                return self.settled();
            };
            if Instant::now() >= deadline {
                return Err(Error::Timeout {
                    operation: format!(
                        "{operation}: {} not answered{} (max.block.ms passed; the transaction \
                         state is kept: call {operation} again to continue, or raise \
                         max.block.ms)",
                        request.api(),
                        last.map(|l| format!(", last: {l}")).unwrap_or_default()
                    ),
                    limit: started.elapsed(),
                }
                .into());
            }
            match self.round_trip(&request, deadline)? {
                Step::Done => last = None,
                Step::Retry { lookup, kind } => {
                    log::debug!("{}: {kind}; retrying", request.api());
                    last = Some(format!("{} {kind}", request.api()));
                    if lookup {
                        let key = self.key_of(&request)?;
                        if let Some(c) = &self.client {
                            c.lock().forget_coordinator(&key);
                        }
                    }
                    self.config.client().get_metrics().record_retry();
                    let pause = self
                        .backoff()
                        .min(deadline.saturating_duration_since(Instant::now()));
                    std::thread::sleep(pause);
                }
                Step::Failed(e) => return Err(e.into()),
            }
        }
    }

    /// After the manager asks for nothing more: an error state is the call's error.
    fn settled(&mut self) -> Result<(), TransactionError> {
        let txn = self.txn_mut()?;
        match txn.state() {
            TxnState::FatalError | TxnState::AbortableError => {
                Err(txn.last_error().cloned().map_or(
                    TransactionError::Other(Error::Closed),
                    TransactionError::Txn,
                ))
            }
            _ => Ok(()),
        }
    }

    fn key_of(&mut self, request: &TxnRequest) -> Result<CoordinatorKey, TransactionError> {
        Ok(match request.coordinator() {
            TxnCoordinator::Transaction => {
                CoordinatorKey::transaction(self.txn_mut()?.transactional_id())
            }
            TxnCoordinator::Group(g) => CoordinatorKey::group(g),
        })
    }

    /// One request to its coordinator, its answer applied. A lost or timed-out round trip
    /// is a retry after a new lookup; only errors no retry can fix end the call.
    fn round_trip(
        &mut self,
        request: &TxnRequest,
        deadline: Instant,
    ) -> Result<Step, TransactionError> {
        let key = self.key_of(request)?;
        let request_deadline = self.request_deadline(deadline);
        let v2 = self.transaction_version() == Some(TxnVersion::V2);
        let answer = {
            let mut client = self.client(request_deadline)?;
            match client.coordinator(&key, request_deadline) {
                Err(e) => Err(e),
                Ok(addr) => {
                    let target = BrokerTarget::Node(addr.node_id);
                    send_capped(&mut client, target, request, v2, request_deadline)
                }
            }
        };
        let txn = self.txn_mut()?;
        match answer {
            Ok(Answer::Init(r)) => Ok(txn.on_init_producer_id(&r)),
            Ok(Answer::AddPartitions(r)) => Ok(txn.on_add_partitions(&r)),
            Ok(Answer::AddOffsets(r)) => Ok(txn.on_add_offsets(&r)),
            Ok(Answer::Offsets(r)) => Ok(txn.on_txn_offset_commit(&r)),
            Ok(Answer::End(r)) => Ok(txn.on_end_txn(&r)),
            Err(ClientError::Broker { kind, .. }) if kind.is_retriable() => {
                Ok(Step::Retry { lookup: true, kind })
            }
            Err(e) if fatal(&e) || matches!(e, ClientError::Broker { .. }) => {
                Err(client_error(e).into())
            }
            Err(e) => {
                log::debug!(
                    "{}: no answer ({e}); looking the coordinator up again",
                    request.api()
                );
                Ok(txn.on_no_answer())
            }
        }
    }

    /// The `transaction.version` the cluster finalised, from the transaction coordinator's
    /// ApiVersions (retried until `deadline` while it cannot be reached).
    fn coordinator_transaction_version(
        &mut self,
        deadline: Instant,
    ) -> Result<TxnVersion, TransactionError> {
        let key = CoordinatorKey::transaction(self.txn_mut()?.transactional_id());
        let started = Instant::now();
        loop {
            let request_deadline = self.request_deadline(deadline);
            let r = {
                let mut client = self.client(request_deadline)?;
                client.coordinator(&key, request_deadline).and_then(|addr| {
                    let req = ApiVersionsRequest {
                        client_software_name: "kafka-streams-group-rs".to_string(),
                        client_software_version: env!("CARGO_PKG_VERSION").to_string(),
                        ..Default::default()
                    };
                    client.send(BrokerTarget::Node(addr.node_id), &req, request_deadline)
                })
            };
            let e = match r {
                Ok(resp) => {
                    let level = resp
                        .finalized_features
                        .iter()
                        .find(|f| f.name == TRANSACTION_VERSION)
                        .map(|f| f.max_version_level);
                    return Ok(TxnVersion::from_feature_level(level));
                }
                Err(e) if fatal(&e) => return Err(client_error(e).into()),
                Err(e) => e,
            };
            if Instant::now() + self.backoff() >= deadline {
                return Err(Error::Timeout {
                    operation: format!(
                        "init_transactions: finding the transaction coordinator (last error: \
                         {e}; check the brokers, or raise max.block.ms)"
                    ),
                    limit: started.elapsed(),
                }
                .into());
            }
            log::debug!("init_transactions: transaction coordinator lookup: {e}; retrying");
            if let Some(c) = &self.client {
                c.lock().forget_coordinator(&key);
            }
            std::thread::sleep(self.backoff());
        }
    }
}

/// A typed answer.
enum Answer {
    Init(crate::protocol::api::init_producer_id::InitProducerIdResponse),
    AddPartitions(crate::protocol::api::add_partitions_to_txn::AddPartitionsToTxnResponse),
    AddOffsets(crate::protocol::api::add_offsets_to_txn::AddOffsetsToTxnResponse),
    Offsets(crate::protocol::api::txn_offset_commit::TxnOffsetCommitResponse),
    End(crate::protocol::api::end_txn::EndTxnResponse),
}

/// Sends `request` to `target` at the highest version both sides speak, capped as Java
/// caps it per transaction version: version 1 stays below EndTxn v5 and TxnOffsetCommit v5
/// (the KIP-890 forms); TxnOffsetCommit stays at v5 (v6 names topics by id).
fn send_capped(
    client: &mut Client,
    target: BrokerTarget,
    request: &TxnRequest,
    v2: bool,
    deadline: Instant,
) -> Result<Answer, ClientError> {
    fn at<R: Request>(
        client: &mut Client,
        target: BrokerTarget,
        r: &R,
        cap: i16,
        deadline: Instant,
    ) -> Result<R::Response, ClientError> {
        let v = client.connection(target, deadline)?.pick_version::<R>()?;
        client.send_at(target, r, v.min(cap).max(R::MIN_VERSION), deadline)
    }
    let (end_cap, offsets_cap) = if v2 { (5, 5) } else { (4, 4) };
    Ok(match request {
        TxnRequest::InitProducerId(r) => Answer::Init(at(client, target, r, 5, deadline)?),
        TxnRequest::AddPartitions(r) => {
            Answer::AddPartitions(at(client, target, r, r_max(r), deadline)?)
        }
        TxnRequest::AddOffsets(r) => Answer::AddOffsets(at(client, target, r, r_max(r), deadline)?),
        TxnRequest::TxnOffsetCommit(r) => {
            Answer::Offsets(at(client, target, r, offsets_cap, deadline)?)
        }
        TxnRequest::EndTxn(r) => Answer::End(at(client, target, r, end_cap, deadline)?),
    })
}

fn r_max<R: ApiMessage>(_: &R) -> i16 {
    R::MAX_VERSION
}
