//! Proves every mode of the test fault proxy against a tiny echo server (no Kafka needed),
//! and, as an ignored live test, that it carries (and breaks) real Kafka traffic.

#[path = "support/fault_proxy.rs"]
mod fault_proxy;

mod common;

use fault_proxy::{Fault, FaultProxy, Limits, POLL};
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// An echo server on loopback that counts what it received; stops (and joins its threads)
/// when dropped.
struct Echo {
    addr: SocketAddr,
    received: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Echo {
    fn start() -> Echo {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind echo");
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("addr");
        let received = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (r, s) = (Arc::clone(&received), Arc::clone(&stop));
        let thread = thread::spawn(move || {
            let mut conns: Vec<JoinHandle<()>> = Vec::new();
            while !s.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((mut c, _)) => {
                        let (r, s) = (Arc::clone(&r), Arc::clone(&s));
                        conns.push(thread::spawn(move || {
                            c.set_nonblocking(false).expect("blocking");
                            c.set_read_timeout(Some(Duration::from_millis(20)))
                                .expect("timeout");
                            let mut buf = [0u8; 8192];
                            while !s.load(Ordering::SeqCst) {
                                match c.read(&mut buf) {
                                    Ok(0) => break,
                                    Ok(n) => {
                                        r.fetch_add(n as u64, Ordering::SeqCst);
                                        if c.write_all(&buf[..n]).is_err() {
                                            break;
                                        }
                                    }
                                    Err(e)
                                        if matches!(
                                            e.kind(),
                                            ErrorKind::WouldBlock | ErrorKind::TimedOut
                                        ) => {}
                                    Err(_) => break,
                                }
                            }
                        }));
                    }
                    Err(_) => thread::sleep(Duration::from_millis(2)),
                }
            }
            for c in conns {
                let _ = c.join();
            }
        });
        Echo {
            addr,
            received,
            stop,
            thread: Some(thread),
        }
    }

    fn received(&self) -> u64 {
        self.received.load(Ordering::SeqCst)
    }
}

impl Drop for Echo {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn connect(proxy: &FaultProxy) -> TcpStream {
    let s = TcpStream::connect(proxy.addr()).expect("connect to proxy");
    s.set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    s
}

fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 + 3) as u8).collect()
}

/// Reads until end-of-stream, an error, or `max` bytes; returns the bytes and how it ended.
fn read_to_end(s: &mut TcpStream, max: usize) -> (Vec<u8>, Option<ErrorKind>) {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    while out.len() < max {
        match s.read(&mut buf) {
            Ok(0) => return (out, None),
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) => return (out, Some(e.kind())),
        }
    }
    (out, None)
}

fn echo_round_trip(s: &mut TcpStream, data: &[u8]) -> Vec<u8> {
    s.write_all(data).expect("write");
    let mut got = vec![0u8; data.len()];
    s.read_exact(&mut got).expect("read echo");
    got
}

fn wait(timeout: Duration, cond: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if cond() {
            return true;
        }
        thread::sleep(Duration::from_millis(5));
    }
    cond()
}

#[test]
fn pass_through_echoes_and_counts() {
    let echo = Echo::start();
    let proxy = FaultProxy::start(echo.addr);
    assert_eq!(proxy.fault(), Fault::PassThrough);
    let mut c = connect(&proxy);
    let data = pattern(100_000);
    // Write from a helper thread: 100 kB both ways could fill the socket buffers otherwise.
    let mut w = c.try_clone().expect("clone");
    let d2 = data.clone();
    let writer = thread::spawn(move || w.write_all(&d2).expect("write"));
    let mut got = vec![0u8; data.len()];
    c.read_exact(&mut got).expect("read");
    writer.join().expect("writer");
    assert_eq!(got, data);
    // A pump counts bytes once its write returns, which can be just after the peer read them
    // (both directions: the echo may answer before the upstream pump counted). The limit is
    // generous for a loaded 2-core CI box; the wait ends as soon as both counts are there.
    assert!(
        proxy.wait_until(Duration::from_secs(10), |s| s.bytes_to_client == 100_000
            && s.bytes_to_upstream == 100_000)
    );
    let stats = proxy.stats();
    assert_eq!(stats.accepted, 1);
    assert_eq!(stats.bytes_to_upstream, 100_000);
    assert_eq!(stats.bytes_to_client, 100_000);
    assert_eq!(stats.open_connections, 1);
    assert_eq!(stats.open_threads, 3, "accept thread + two pumps");
    drop(c);
    assert!(
        proxy.wait_until(Duration::from_secs(10), |s| s.open_connections == 0
            && s.open_threads == 1)
    );
}

#[test]
fn delay_holds_back_each_chunk() {
    let echo = Echo::start();
    let proxy = FaultProxy::start(echo.addr);
    let mut c = connect(&proxy);
    let t = Instant::now();
    echo_round_trip(&mut c, b"fast");
    let fast = t.elapsed();
    proxy.set_fault(Fault::Delay(Duration::from_millis(200)));
    let t = Instant::now();
    assert_eq!(echo_round_trip(&mut c, b"slow"), b"slow");
    let slow = t.elapsed();
    // Delayed on the way in and on the way back.
    assert!(
        slow >= Duration::from_millis(400),
        "delayed round trip took {slow:?}"
    );
    assert!(
        fast < Duration::from_millis(200),
        "plain round trip took {fast:?}"
    );
}

#[test]
fn blackhole_swallows_everything_until_lifted() {
    let echo = Echo::start();
    let proxy = FaultProxy::start(echo.addr);
    proxy.set_fault(Fault::Blackhole);
    let mut c = connect(&proxy);
    c.set_read_timeout(Some(Duration::from_millis(300)))
        .expect("timeout");
    c.write_all(b"into the void").expect("write");
    let mut buf = [0u8; 16];
    let err = c.read(&mut buf).expect_err("blackhole answered");
    assert!(matches!(
        err.kind(),
        ErrorKind::WouldBlock | ErrorKind::TimedOut
    ));
    assert!(proxy.wait_until(Duration::from_secs(1), |s| s.accepted == 1));
    assert_eq!(
        echo.received(),
        0,
        "the server must not see blackholed bytes"
    );
    assert_eq!(proxy.bytes_to_upstream(), 0);
    assert_eq!(proxy.bytes_to_client(), 0);
    // The same connection works again once the fault is lifted (what was swallowed is lost).
    proxy.set_fault(Fault::PassThrough);
    c.set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    assert_eq!(echo_round_trip(&mut c, b"back"), b"back");
}

#[test]
fn reset_aborts_existing_and_new_connections_with_rst() {
    let echo = Echo::start();
    let proxy = FaultProxy::start(echo.addr);
    let mut c = connect(&proxy);
    assert_eq!(echo_round_trip(&mut c, b"hi"), b"hi");
    proxy.set_fault(Fault::Reset);
    let (data, end) = read_to_end(&mut c, 1);
    assert!(data.is_empty());
    assert_eq!(end, Some(ErrorKind::ConnectionReset), "existing connection");
    let mut fresh = connect(&proxy);
    let (data, end) = read_to_end(&mut fresh, 1);
    assert!(data.is_empty());
    assert_eq!(end, Some(ErrorKind::ConnectionReset), "new connection");
    assert!(proxy.wait_until(Duration::from_secs(2), |s| s.open_connections == 0));
}

#[test]
fn half_close_ends_the_stream_toward_the_client_only() {
    let echo = Echo::start();
    let proxy = FaultProxy::start(echo.addr);
    let mut c = connect(&proxy);
    assert_eq!(echo_round_trip(&mut c, b"before"), b"before");
    proxy.set_fault(Fault::HalfClose);
    let (data, end) = read_to_end(&mut c, 1);
    assert!(data.is_empty());
    assert_eq!(end, None, "the client reads end-of-stream, not an error");
    // The client can still send; the server still gets it.
    c.write_all(b"still heard").expect("write after half-close");
    assert!(wait(Duration::from_secs(2), || echo.received() == 6 + 11));
    assert_eq!(
        proxy.bytes_to_client(),
        6,
        "echoes after the half-close are dropped"
    );
}

#[test]
fn truncate_after_forwards_exactly_n_bytes_then_closes() {
    let echo = Echo::start();
    let proxy = FaultProxy::start(echo.addr);
    proxy.set_fault(Fault::TruncateAfter(10));
    let mut c = connect(&proxy);
    let data = pattern(100);
    c.write_all(&data).expect("write");
    let (got, end) = read_to_end(&mut c, 1000);
    assert_eq!(got, &data[..10]);
    assert_eq!(end, None, "closed with FIN");

    // On an existing connection the budget counts from the moment the fault is set.
    proxy.set_fault(Fault::PassThrough);
    let mut c = connect(&proxy);
    assert_eq!(echo_round_trip(&mut c, &data), data);
    proxy.set_fault(Fault::TruncateAfter(5));
    c.write_all(&data).expect("write");
    let (got, end) = read_to_end(&mut c, 1000);
    assert_eq!(got, &data[..5]);
    assert_eq!(end, None);
}

#[test]
fn corrupt_byte_flips_exactly_one_server_byte() {
    let echo = Echo::start();
    let proxy = FaultProxy::start(echo.addr);
    proxy.set_fault(Fault::CorruptByte { offset: 70 });
    let mut c = connect(&proxy);
    // Two writes, so the corrupted offset lies in the second chunk the proxy sees.
    let first = pattern(50);
    assert_eq!(echo_round_trip(&mut c, &first), first);
    let second = pattern(50);
    let got = echo_round_trip(&mut c, &second);
    let diffs: Vec<usize> = (0..50).filter(|&i| got[i] != second[i]).collect();
    assert_eq!(diffs, vec![20]);
    assert_eq!(got[20], second[20] ^ 0xFF);
    // Client→server bytes are untouched: the echo server got the original.
    assert_eq!(echo.received(), 100);
    // Later bytes pass unchanged.
    assert_eq!(echo_round_trip(&mut c, &second), second);
}

#[test]
fn throttle_limits_the_rate() {
    let echo = Echo::start();
    let proxy = FaultProxy::start(echo.addr);
    proxy.set_fault(Fault::Throttle {
        bytes_per_sec: 20_000,
    });
    let mut c = connect(&proxy);
    let data = pattern(20_000);
    let t = Instant::now();
    assert_eq!(echo_round_trip(&mut c, &data), data);
    let took = t.elapsed();
    // 20 kB at 20 kB/s: about one second (the two directions overlap, slice by slice).
    assert!(
        took >= Duration::from_millis(800),
        "throttled echo took {took:?}"
    );
    assert!(
        took < Duration::from_secs(5),
        "throttled echo took {took:?}"
    );
}

#[test]
fn refuse_new_closes_the_door_but_keeps_existing_connections() {
    let echo = Echo::start();
    let proxy = FaultProxy::start(echo.addr);
    let mut c = connect(&proxy);
    // Only accepted connections count as existing: one still in the kernel's backlog when the
    // listener closes is reset with it. A round trip proves this one was accepted.
    assert_eq!(echo_round_trip(&mut c, b"accepted"), b"accepted");
    proxy.set_fault(Fault::RefuseNew);
    // The accept thread closes the listener within its poll interval.
    assert!(wait(Duration::from_secs(2), || TcpStream::connect(
        proxy.addr()
    )
    .is_err_and(|e| e.kind() == ErrorKind::ConnectionRefused)));
    assert_eq!(echo_round_trip(&mut c, b"existing"), b"existing");
    proxy.set_fault(Fault::PassThrough);
    // Same port again.
    assert!(wait(Duration::from_secs(2), || TcpStream::connect(
        proxy.addr()
    )
    .is_ok()));
    let mut fresh = connect(&proxy);
    assert_eq!(echo_round_trip(&mut fresh, b"new"), b"new");
}

#[test]
fn disconnect_drops_all_connections_and_new_ones() {
    let echo = Echo::start();
    let proxy = FaultProxy::start(echo.addr);
    let mut a = connect(&proxy);
    let mut b = connect(&proxy);
    assert_eq!(echo_round_trip(&mut a, b"a"), b"a");
    assert_eq!(echo_round_trip(&mut b, b"b"), b"b");
    assert_eq!(proxy.open_connections(), 2);
    proxy.set_fault(Fault::Disconnect);
    for s in [&mut a, &mut b] {
        let (data, end) = read_to_end(s, 1);
        assert!(data.is_empty());
        assert_eq!(end, None, "closed with FIN");
    }
    let mut fresh = connect(&proxy);
    let (data, end) = read_to_end(&mut fresh, 1);
    assert!(
        data.is_empty() && end.is_none(),
        "new connection closed at once"
    );
    assert!(
        proxy.wait_until(Duration::from_secs(2), |s| s.open_connections == 0
            && s.open_threads == 1)
    );
}

#[test]
fn one_shot_disconnect_and_reset_leave_the_mode_alone() {
    let echo = Echo::start();
    let proxy = FaultProxy::start(echo.addr);
    let mut a = connect(&proxy);
    assert_eq!(echo_round_trip(&mut a, b"a"), b"a");
    proxy.disconnect_all();
    assert_eq!(read_to_end(&mut a, 1), (Vec::new(), None));
    let mut b = connect(&proxy);
    assert_eq!(echo_round_trip(&mut b, b"b"), b"b");
    proxy.reset_all();
    assert_eq!(
        read_to_end(&mut b, 1),
        (Vec::new(), Some(ErrorKind::ConnectionReset))
    );
    assert_eq!(proxy.fault(), Fault::PassThrough);
    let mut c = connect(&proxy);
    assert_eq!(echo_round_trip(&mut c, b"c"), b"c");
}

#[test]
fn dropping_the_proxy_joins_every_thread_and_closes_connections() {
    let echo = Echo::start();
    let proxy = FaultProxy::start(echo.addr);
    let mut clients: Vec<TcpStream> = (0..5).map(|_| connect(&proxy)).collect();
    for c in &mut clients {
        assert_eq!(echo_round_trip(c, b"x"), b"x");
    }
    assert_eq!(proxy.open_threads(), 1 + 2 * 5);
    // A throttled, delayed pump must not hold up the drop either.
    proxy.set_fault(Fault::Delay(Duration::from_secs(30)));
    clients[0].write_all(b"stuck").expect("write");
    thread::sleep(POLL * 2);
    let probe = proxy.probe();
    let t = Instant::now();
    drop(proxy);
    assert!(
        t.elapsed() < Duration::from_secs(2),
        "drop took {:?}",
        t.elapsed()
    );
    assert_eq!(
        probe.open_threads(),
        0,
        "no proxy thread outlives the proxy"
    );
    assert_eq!(probe.stats().open_connections, 0);
    for c in &mut clients {
        let (data, end) = read_to_end(c, 1);
        assert!(data.is_empty());
        assert_eq!(end, None);
    }
}

#[test]
fn finished_connections_release_their_threads() {
    let echo = Echo::start();
    let proxy = FaultProxy::start(echo.addr);
    for i in 0..40u8 {
        let mut c = connect(&proxy);
        assert_eq!(echo_round_trip(&mut c, &[i]), [i]);
    }
    assert!(
        proxy.wait_until(Duration::from_secs(3), |s| s.open_connections == 0
            && s.open_threads == 1)
    );
    assert_eq!(proxy.accepted(), 40);
}

#[test]
fn connection_cap_turns_away_the_excess() {
    let echo = Echo::start();
    let limits = Limits {
        max_connections: 2,
        ..Limits::default()
    };
    let proxy = FaultProxy::start_with(echo.addr, limits).expect("start");
    let mut a = connect(&proxy);
    let mut b = connect(&proxy);
    assert_eq!(echo_round_trip(&mut a, b"a"), b"a");
    assert_eq!(echo_round_trip(&mut b, b"b"), b"b");
    let mut c = connect(&proxy);
    assert_eq!(read_to_end(&mut c, 1), (Vec::new(), None));
    assert_eq!(proxy.stats().rejected, 1);
    drop(a);
    assert!(proxy.wait_until(Duration::from_secs(2), |s| s.open_connections == 1));
    let mut d = connect(&proxy);
    assert_eq!(echo_round_trip(&mut d, b"d"), b"d");
}

#[test]
fn lifetime_cap_stops_the_proxy_by_itself() {
    let echo = Echo::start();
    let limits = Limits {
        max_lifetime: Duration::from_millis(300),
        ..Limits::default()
    };
    let proxy = FaultProxy::start_with(echo.addr, limits).expect("start");
    let mut c = connect(&proxy);
    assert_eq!(echo_round_trip(&mut c, b"c"), b"c");
    assert_eq!(read_to_end(&mut c, 1), (Vec::new(), None));
    assert!(proxy.wait_until(Duration::from_secs(2), |s| s.open_threads == 0));
    assert!(TcpStream::connect(proxy.addr()).is_err(), "still listening");
}

#[test]
fn unreachable_upstream_resets_the_client() {
    // A port nobody listens on: bind, learn the port, close.
    let dead = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("port");
    let proxy = FaultProxy::start(dead);
    let mut c = connect(&proxy);
    let (data, end) = read_to_end(&mut c, 1);
    assert!(data.is_empty());
    assert_eq!(end, Some(ErrorKind::ConnectionReset));
    assert_eq!(proxy.stats().upstream_connect_failures, 1);
    // Redirecting to a live server fixes new connections.
    let echo = Echo::start();
    proxy.set_upstream(echo.addr);
    let mut c = connect(&proxy);
    assert_eq!(echo_round_trip(&mut c, b"ok"), b"ok");
}

/// ApiVersions v0 (no body), header v1: the smallest request every broker answers.
fn api_versions_v0(correlation_id: i32) -> Vec<u8> {
    let mut body = Vec::new();
    body.extend_from_slice(&18i16.to_be_bytes()); // ApiVersions
    body.extend_from_slice(&0i16.to_be_bytes()); // version 0
    body.extend_from_slice(&correlation_id.to_be_bytes());
    body.extend_from_slice(&(-1i16).to_be_bytes()); // null client id
    let mut frame = (body.len() as i32).to_be_bytes().to_vec();
    frame.extend_from_slice(&body);
    frame
}

/// The frame of one response: length prefix and body.
fn read_frame(s: &mut TcpStream) -> Vec<u8> {
    let mut len = [0u8; 4];
    s.read_exact(&mut len).expect("frame length");
    let len = i32::from_be_bytes(len);
    assert!(
        (6..1_000_000).contains(&len),
        "implausible frame length {len}"
    );
    let mut body = vec![0u8; len as usize];
    s.read_exact(&mut body).expect("frame body");
    body
}

#[test]
#[ignore = "live: needs a Kafka broker (scripts/test.sh runs it)"]
fn carries_and_breaks_real_kafka_traffic() {
    let cluster = common::Cluster::get();
    // Multi-node runs list every node; the first one will do.
    let broker: SocketAddr = cluster
        .plaintext()
        .split(',')
        .next()
        .and_then(|a| a.parse().ok())
        .expect("PLAINTEXT address");
    let proxy = FaultProxy::start(broker);

    let mut c = connect(&proxy);
    c.write_all(&api_versions_v0(41)).expect("write");
    let resp = read_frame(&mut c);
    assert_eq!(i32::from_be_bytes(resp[0..4].try_into().unwrap()), 41);
    assert_eq!(i16::from_be_bytes(resp[4..6].try_into().unwrap()), 0);

    // Offset 4 of the stream is the first byte of the next response's correlation id.
    proxy.set_fault(Fault::CorruptByte { offset: 4 });
    thread::sleep(POLL * 3);
    c.write_all(&api_versions_v0(42)).expect("write");
    let resp = read_frame(&mut c);
    assert_eq!(
        i32::from_be_bytes(resp[0..4].try_into().unwrap()),
        42 ^ (0xFF << 24),
        "the broker's answer arrives with its first correlation-id byte inverted"
    );

    proxy.set_fault(Fault::TruncateAfter(6));
    thread::sleep(POLL * 3);
    c.write_all(&api_versions_v0(43)).expect("write");
    let (got, end) = read_to_end(&mut c, 1 << 20);
    assert_eq!(got.len(), 6, "length prefix and two bytes, then closed");
    assert_eq!(end, None);

    proxy.set_fault(Fault::Reset);
    let mut c = connect(&proxy);
    assert_eq!(read_to_end(&mut c, 1).1, Some(ErrorKind::ConnectionReset));
    let stats = proxy.stats();
    assert_eq!(stats.accepted, 2);
    assert!(stats.bytes_to_client > 6, "the first answers went through");
}
