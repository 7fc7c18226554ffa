//! The transaction errors, classified as Java's `TransactionManager` does.

use super::TxnState;
use crate::protocol::BrokerErrorKind;

/// How bad a transaction error is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnErrorClass {
    /// The open transaction cannot commit: abort it (`abort_transaction`), then go on.
    Abortable,
    /// Another producer with the same transactional id (a newer epoch) took over: this one
    /// must be dropped (Java's `ProducerFencedException`).
    Fenced,
    /// The producer cannot go on (unauthorized, an illegal call, an unexpected answer):
    /// drop it.
    Fatal,
}

/// A transaction error: its class, the API and broker code behind it, and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxnError {
    /// Abortable, fenced or fatal.
    pub class: TxnErrorClass,
    /// The request that failed (e.g. `"EndTxn"`), or the call that was illegal.
    pub api: &'static str,
    /// The broker's code (`NONE` for an illegal call).
    pub kind: BrokerErrorKind,
    /// More about it (an illegal state change, the partition of a failed batch).
    pub detail: Option<String>,
}

impl TxnError {
    /// An error of `class` from `api`'s answer `kind`.
    pub fn new(class: TxnErrorClass, api: &'static str, kind: BrokerErrorKind) -> Self {
        TxnError {
            class,
            api,
            kind,
            detail: None,
        }
    }

    /// A call the state does not allow (Java's `IllegalStateException`, which leaves the
    /// state as it was: fatal only in the sense that the call cannot succeed).
    pub(crate) fn illegal_state(from: TxnState, to: TxnState) -> Self {
        TxnError {
            class: TxnErrorClass::Fatal,
            api: "transaction state",
            kind: BrokerErrorKind::None,
            detail: Some(format!(
                "cannot move from {from:?} to {to:?} (call init_transactions once, then \
                 begin_transaction, and commit or abort each transaction before the next)"
            )),
        }
    }

    pub(crate) fn not_in_transaction(operation: &'static str, state: TxnState) -> Self {
        TxnError {
            class: TxnErrorClass::Fatal,
            api: operation,
            kind: BrokerErrorKind::None,
            detail: Some(format!(
                "no transaction is open (state {state:?}): call begin_transaction first"
            )),
        }
    }

    /// Whether the producer can go on after aborting the transaction.
    pub fn is_abortable(&self) -> bool {
        self.class == TxnErrorClass::Abortable
    }

    /// Whether another producer with the same transactional id fenced this one.
    pub fn is_fenced(&self) -> bool {
        self.class == TxnErrorClass::Fenced
    }
}

impl std::fmt::Display for TxnError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let fix = match self.class {
            TxnErrorClass::Abortable => {
                "the transaction cannot commit: call abort_transaction, then begin a new one"
            }
            TxnErrorClass::Fenced => {
                "another producer with the same transactional.id took over (a newer epoch): \
                 this producer must be closed"
            }
            TxnErrorClass::Fatal => "this producer cannot go on: close it",
        };
        write!(f, "{}", self.api)?;
        if self.kind != BrokerErrorKind::None {
            write!(f, " failed with {}", self.kind)?;
        }
        if let Some(d) = &self.detail {
            write!(f, ": {d}")?;
        }
        write!(f, "; {fix}")
    }
}

impl std::error::Error for TxnError {}
