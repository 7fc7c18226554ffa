//! Host name resolution with a deadline.
//!
//! The system resolver (`getaddrinfo`, behind `ToSocketAddrs`) blocks, has no timeout of its
//! own and cannot be cancelled; with a DNS server that does not answer it holds the caller for
//! many seconds per attempt. Every connect of this crate has a deadline, so a host name is
//! looked up on a short-lived thread and the caller waits for it only until its deadline.

use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

use crossbeam_channel::RecvTimeoutError;

use super::error::TransportError;

/// Resolves `host:port` with the system resolver, blocking with no timeout of its own; prefer
/// [`resolve_within`].
pub fn resolve(addr: &str) -> Result<Vec<SocketAddr>, TransportError> {
    let addrs: Vec<SocketAddr> = addr
        .to_socket_addrs()
        .map_err(|e| TransportError::Resolve {
            addr: addr.to_string(),
            reason: e.to_string(),
        })?
        .collect();
    if addrs.is_empty() {
        return Err(TransportError::Resolve {
            addr: addr.to_string(),
            reason: "no addresses".to_string(),
        });
    }
    Ok(addrs)
}

/// Resolves `host:port` like [`resolve`], giving up after `timeout`.
///
/// An IP address (`127.0.0.1:9092`, `[::1]:9092`) is parsed on the spot. A host name is looked
/// up on a thread of its own; when `timeout` passes first, the error says so and the thread
/// finishes the lookup in the background and exits (the system resolver cannot be cancelled).
///
/// ```
/// use std::time::Duration;
/// use kafka_streams_group::transport::resolve_within;
///
/// let addrs = resolve_within("127.0.0.1:9092", Duration::from_secs(1))?;
/// assert_eq!(addrs[0].port(), 9092);
/// # Ok::<(), kafka_streams_group::transport::TransportError>(())
/// ```
pub fn resolve_within(addr: &str, timeout: Duration) -> Result<Vec<SocketAddr>, TransportError> {
    resolve_with(addr, timeout, |a| resolve(&a))
}

/// [`resolve_within`] with the lookup given, so tests can stand in a slow resolver.
fn resolve_with<F>(
    addr: &str,
    timeout: Duration,
    lookup: F,
) -> Result<Vec<SocketAddr>, TransportError>
where
    F: FnOnce(String) -> Result<Vec<SocketAddr>, TransportError> + Send + 'static,
{
    if let Ok(sa) = addr.parse::<SocketAddr>() {
        return Ok(vec![sa]);
    }
    let failed = |reason: String| TransportError::Resolve {
        addr: addr.to_string(),
        reason,
    };
    // Capacity 1: the lookup thread never blocks on sending, even after the caller gave up.
    let (tx, rx) = crossbeam_channel::bounded(1);
    let owned = addr.to_string();
    std::thread::Builder::new()
        .name("ksg-resolve".into())
        .spawn(move || {
            let _ = tx.send(lookup(owned));
        })
        .map_err(|e| failed(format!("cannot start the lookup thread: {e}")))?;
    match rx.recv_timeout(timeout) {
        Ok(result) => result,
        Err(RecvTimeoutError::Timeout) => Err(failed(format!(
            "the system resolver did not answer within {timeout:?} (check the DNS setup or use \
             an IP address)"
        ))),
        Err(RecvTimeoutError::Disconnected) => {
            Err(failed("the lookup thread stopped without an answer".into()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn ip_literals_need_no_lookup() {
        let never = |_: String| -> Result<Vec<SocketAddr>, TransportError> {
            panic!("an IP literal must not be looked up")
        };
        let v4 = resolve_with("127.0.0.1:9092", Duration::ZERO, never).expect("v4");
        assert_eq!(v4, vec!["127.0.0.1:9092".parse().expect("addr")]);
        let v6 = resolve_with("[::1]:9093", Duration::ZERO, never).expect("v6");
        assert_eq!(v6, vec!["[::1]:9093".parse().expect("addr")]);
    }

    #[test]
    fn a_host_name_resolves_through_the_lookup() {
        let addrs = resolve_within("localhost:9092", Duration::from_secs(10)).expect("localhost");
        assert!(
            addrs
                .iter()
                .all(|a| a.port() == 9092 && a.ip().is_loopback()),
            "{addrs:?}"
        );
    }

    #[test]
    fn a_resolver_that_does_not_answer_ends_at_the_timeout() {
        let slow = |_: String| {
            std::thread::sleep(Duration::from_secs(3));
            Ok(vec!["10.0.0.1:9092".parse().expect("addr")])
        };
        let start = Instant::now();
        let err = resolve_with("broker.example:9092", Duration::from_millis(100), slow)
            .expect_err("times out");
        let took = start.elapsed();
        assert!(
            took >= Duration::from_millis(100) && took < Duration::from_secs(2),
            "{took:?}"
        );
        let text = err.to_string();
        assert!(
            text.contains("broker.example:9092") && text.contains("did not answer"),
            "{text}"
        );
    }

    #[test]
    fn lookup_errors_pass_through() {
        let err = resolve_within("no-such-host.invalid:9092", Duration::from_secs(10))
            .expect_err("unknown host");
        assert!(matches!(err, TransportError::Resolve { .. }), "{err:?}");
    }
}
