//! [`SharedClient`]: one [`Client`] (one set of broker connections) used by several
//! components driven from the same thread, e.g. a processing runtime's fetcher, changelog
//! reader, producer and purger.

use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Mutex, MutexGuard};

use crate::config::ClientConfig;
use crate::error::Error;

use super::Client;

/// A [`Client`] shared by the components that clone this handle.
///
/// Each component keeps its own metadata cache, deadlines and retries; only the broker
/// connections, the address book, the coordinator cache and the reconnect backoff are
/// common. A connection one user finds broken is dropped from the client and reopened by
/// whichever user needs that broker next, so every user sees the same reopened connection.
///
/// The client is behind a mutex so that the handles are `Send`, but it is meant for users
/// that take turns on one thread (each request is a blocking round trip that holds the
/// lock): a user on another thread would wait for the request in flight, e.g. a Fetch
/// waiting `fetch.max.wait.ms`. A thread with its own timing (the heartbeat thread) keeps a
/// client of its own.
#[derive(Clone, Debug)]
pub struct SharedClient {
    inner: Arc<Mutex<Client>>,
}

impl SharedClient {
    /// Shares `client`.
    pub fn new(client: Client) -> SharedClient {
        SharedClient {
            inner: Arc::new(Mutex::new(client)),
        }
    }

    /// Connects a client for `config` within `timeout` (see [`Client::from_config`]) and
    /// shares it.
    pub fn connect(config: &ClientConfig, timeout: Duration) -> Result<SharedClient, Error> {
        Client::from_config(config, timeout).map(SharedClient::new)
    }

    /// The client, for one request or a few in a row. Do not hold the guard while calling
    /// another user of the same handle: the lock is not reentrant. A user that panicked
    /// while holding it leaves the client usable (parking_lot's lock is not poisoned; a
    /// connection the panic broke is dropped by the next request).
    pub fn lock(&self) -> MutexGuard<'_, Client> {
        self.inner.lock()
    }

    /// How many handles share this client (this one included).
    pub fn users(&self) -> usize {
        Arc::strong_count(&self.inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::ClientOptions;

    #[test]
    fn clones_share_one_client() {
        let opts = ClientOptions::new(vec!["127.0.0.1:1".to_string()]);
        let a = SharedClient::new(Client::unconnected(opts));
        let b = a.clone();
        assert_eq!(a.users(), 2);
        assert!(Arc::ptr_eq(&a.inner, &b.inner));
        assert_eq!(b.lock().connection_count(), 0);
        drop(b);
        assert_eq!(a.users(), 1);
    }
}
