//! Transport faults against a loopback mock peer (std TcpListener + thread).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread;
use std::time::{Duration, Instant};

use kafka_streams_group::transport::{ConnectOptions, Connection, TransportError};

fn opts() -> ConnectOptions {
    ConnectOptions {
        connect_timeout: Duration::from_secs(2),
        ..ConnectOptions::default()
    }
}

/// Starts a one-connection mock peer running `serve`, returns its address.
fn mock<F>(serve: F) -> (String, thread::JoinHandle<()>)
where
    F: FnOnce(TcpStream) + Send + 'static,
{
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = l.local_addr().expect("addr").to_string();
    let h = thread::spawn(move || {
        if let Ok((s, _)) = l.accept() {
            serve(s);
        }
    });
    (addr, h)
}

fn frame(payload: &[u8]) -> Vec<u8> {
    let mut v = (payload.len() as i32).to_be_bytes().to_vec();
    v.extend_from_slice(payload);
    v
}

fn read_frame(s: &mut TcpStream) -> Vec<u8> {
    let mut len = [0u8; 4];
    s.read_exact(&mut len).expect("len");
    let mut v = vec![0u8; i32::from_be_bytes(len) as usize];
    s.read_exact(&mut v).expect("payload");
    v
}

#[test]
fn frames_round_trip_including_several_in_one_read() {
    let (addr, h) = mock(|mut s| {
        let got = read_frame(&mut s);
        // Echo it back twice in one write, then a large one, to exercise buffering.
        let mut out = frame(&got);
        out.extend(frame(&got));
        out.extend(frame(&vec![7u8; 100_000]));
        s.write_all(&out).expect("write");
        thread::sleep(Duration::from_millis(200));
    });
    let mut c = Connection::connect(&addr, &opts()).expect("connect");
    let dl = Instant::now() + Duration::from_secs(5);
    c.send_frame(&frame(b"hello"), dl).expect("send");
    assert_eq!(c.recv_frame(dl).expect("1"), b"hello");
    assert_eq!(c.recv_frame(dl).expect("2"), b"hello");
    let big = c.recv_frame(dl).expect("3");
    assert_eq!(big.len(), 100_000);
    assert!(big.iter().all(|&b| b == 7));
    assert!(!c.is_broken());
    h.join().expect("mock");
}

#[test]
fn silent_peer_times_out_and_breaks_connection() {
    let (addr, h) = mock(|mut s| {
        let _ = read_frame(&mut s);
        thread::sleep(Duration::from_millis(800));
    });
    let mut c = Connection::connect(&addr, &opts()).expect("connect");
    let start = Instant::now();
    c.send_frame(&frame(b"ping"), start + Duration::from_secs(1))
        .expect("send");
    let err = c
        .recv_frame(start + Duration::from_millis(300))
        .expect_err("must time out");
    let took = start.elapsed();
    assert!(err.is_timeout(), "{err}");
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_millis(700),
        "{took:?}"
    );
    assert!(c.is_broken());
    let again = c.recv_frame(Instant::now() + Duration::from_secs(1));
    assert!(
        matches!(again, Err(TransportError::Broken { .. })),
        "{again:?}"
    );
    h.join().expect("mock");
}

#[test]
fn truncated_frame_is_eof_mid_frame() {
    let (addr, h) = mock(|mut s| {
        let _ = read_frame(&mut s);
        let f = frame(b"0123456789");
        s.write_all(&f[..8]).expect("write");
        // Dropping closes the socket cleanly (FIN) with half a frame sent.
    });
    let mut c = Connection::connect(&addr, &opts()).expect("connect");
    let dl = Instant::now() + Duration::from_secs(5);
    c.send_frame(&frame(b"x"), dl).expect("send");
    let err = c.recv_frame(dl).expect_err("eof");
    assert!(
        matches!(
            err,
            TransportError::Eof {
                mid_frame: true,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(c.is_broken());
    h.join().expect("mock");
}

#[test]
fn clean_close_between_frames_is_eof_not_mid_frame() {
    let (addr, h) = mock(|mut s| {
        let _ = read_frame(&mut s);
    });
    let mut c = Connection::connect(&addr, &opts()).expect("connect");
    let dl = Instant::now() + Duration::from_secs(5);
    c.send_frame(&frame(b"x"), dl).expect("send");
    let err = c.recv_frame(dl).expect_err("eof");
    assert!(
        matches!(
            err,
            TransportError::Eof {
                mid_frame: false,
                ..
            }
        ),
        "{err:?}"
    );
    h.join().expect("mock");
}

#[test]
fn reset_by_peer_is_an_io_error() {
    let (addr, h) = mock(|mut s| {
        let mut one = [0u8; 1];
        s.read_exact(&mut one).expect("read");
        // Closing with unread bytes in the receive buffer makes Linux send RST, not FIN.
        thread::sleep(Duration::from_millis(100));
    });
    let mut c = Connection::connect(&addr, &opts()).expect("connect");
    let dl = Instant::now() + Duration::from_secs(5);
    c.send_frame(&frame(&[1u8; 4096]), dl).expect("send");
    let err = c.recv_frame(dl).expect_err("reset");
    match &err {
        TransportError::Io { source, .. } => {
            assert_eq!(source.kind(), std::io::ErrorKind::ConnectionReset, "{err}")
        }
        other => panic!("expected a reset, got {other:?}"),
    }
    assert!(c.is_broken());
    h.join().expect("mock");
}

#[test]
fn oversized_frame_is_rejected_before_allocation() {
    let (addr, h) = mock(|mut s| {
        let _ = read_frame(&mut s);
        // A TLS alert record header read as a Kafka length: 0x15030300 = 352 MB.
        s.write_all(&[0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28])
            .expect("write");
        thread::sleep(Duration::from_millis(200));
    });
    let mut c = Connection::connect(&addr, &opts()).expect("connect");
    let dl = Instant::now() + Duration::from_secs(5);
    c.send_frame(&frame(b"x"), dl).expect("send");
    let err = c.recv_frame(dl).expect_err("too large");
    assert!(
        matches!(
            err,
            TransportError::FrameTooLarge {
                size: 0x1503_0300,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("TLS"), "{err}");
    h.join().expect("mock");
}

#[test]
fn negative_frame_size_is_rejected() {
    let (addr, h) = mock(|mut s| {
        let _ = read_frame(&mut s);
        s.write_all(&(-5i32).to_be_bytes()).expect("write");
        thread::sleep(Duration::from_millis(200));
    });
    let mut c = Connection::connect(&addr, &opts()).expect("connect");
    let dl = Instant::now() + Duration::from_secs(5);
    c.send_frame(&frame(b"x"), dl).expect("send");
    let err = c.recv_frame(dl).expect_err("negative");
    assert!(
        matches!(err, TransportError::FrameTooLarge { size: -5, .. }),
        "{err:?}"
    );
    h.join().expect("mock");
}

#[test]
fn connection_refused_fails_fast_within_connect_timeout() {
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let start = Instant::now();
    let err = Connection::connect(&format!("127.0.0.1:{port}"), &opts()).expect_err("refused");
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
    assert!(matches!(err, TransportError::Connect { .. }), "{err:?}");
    assert!(err.to_string().contains("refused"), "{err}");
}

#[test]
fn every_resolved_address_is_tried() {
    // "localhost" may resolve to ::1 first; the mock listens on 127.0.0.1 only.
    let (addr, h) = mock(|mut s| {
        let got = read_frame(&mut s);
        s.write_all(&frame(&got)).expect("write");
    });
    let port = addr.rsplit(':').next().expect("port");
    let mut c = Connection::connect(&format!("localhost:{port}"), &opts()).expect("connect");
    let dl = Instant::now() + Duration::from_secs(5);
    c.send_frame(&frame(b"hi"), dl).expect("send");
    assert_eq!(c.recv_frame(dl).expect("recv"), b"hi");
    h.join().expect("mock");
}

#[test]
fn unresolvable_address_is_a_resolve_error() {
    let err = Connection::connect("no-port-here", &opts()).expect_err("resolve");
    assert!(matches!(err, TransportError::Resolve { .. }), "{err:?}");
}

#[test]
fn small_frame_limit_is_enforced() {
    let (addr, h) = mock(|mut s| {
        let _ = read_frame(&mut s);
        s.write_all(&frame(&[0u8; 2000])).expect("write");
        thread::sleep(Duration::from_millis(200));
    });
    let o = ConnectOptions {
        max_frame_size: 1000,
        ..opts()
    };
    let mut c = Connection::connect(&addr, &o).expect("connect");
    let dl = Instant::now() + Duration::from_secs(5);
    c.send_frame(&frame(b"x"), dl).expect("send");
    let err = c.recv_frame(dl).expect_err("limit");
    assert!(
        matches!(
            err,
            TransportError::FrameTooLarge {
                size: 2000,
                max: 1000,
                ..
            }
        ),
        "{err:?}"
    );
    h.join().expect("mock");
}

#[test]
fn connect_timeout_fires_when_the_handshake_never_completes() {
    // A listener that never accepts: once its accept queue is full, Linux drops further SYNs,
    // so a new connect neither succeeds nor fails until the client gives up.
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = l.local_addr().expect("addr");
    let mut fillers = Vec::new();
    let mut saturated = false;
    for _ in 0..4096 {
        match TcpStream::connect_timeout(&addr, Duration::from_millis(100)) {
            Ok(s) => fillers.push(s),
            Err(_) => {
                saturated = true;
                break;
            }
        }
    }
    assert!(
        saturated,
        "accept queue never filled ({} connections)",
        fillers.len()
    );
    let o = ConnectOptions {
        connect_timeout: Duration::from_millis(300),
        ..ConnectOptions::default()
    };
    let start = Instant::now();
    let err = Connection::connect(&addr.to_string(), &o).expect_err("must time out");
    let took = start.elapsed();
    assert!(
        matches!(err, TransportError::Timeout { op: "connect", .. }),
        "{err:?}"
    );
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_secs(2),
        "{took:?}"
    );
    drop(l);
}

#[test]
fn tls_handshake_timeout_fires_against_a_silent_peer() {
    let (addr, h) = mock(|s| {
        thread::sleep(Duration::from_millis(800));
        drop(s);
    });
    let cfg = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("versions")
    .with_root_certificates(rustls::RootCertStore::empty())
    .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from("localhost").expect("name");
    let o = ConnectOptions {
        connect_timeout: Duration::from_millis(300),
        tls: Some((std::sync::Arc::new(cfg), name)),
        ..ConnectOptions::default()
    };
    let start = Instant::now();
    let err = Connection::connect(&addr, &o).expect_err("handshake must time out");
    assert!(
        matches!(
            err,
            TransportError::Timeout {
                op: "TLS handshake",
                ..
            }
        ),
        "{err:?}"
    );
    assert!(start.elapsed() < Duration::from_millis(750));
    h.join().expect("mock");
}

#[test]
fn tls_peer_speaking_garbage_is_a_tls_error() {
    let (addr, h) = mock(|mut s| {
        let mut buf = [0u8; 512];
        let _ = s.read(&mut buf);
        let _ = s.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n");
        thread::sleep(Duration::from_millis(200));
    });
    let cfg = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("versions")
    .with_root_certificates(rustls::RootCertStore::empty())
    .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from("localhost").expect("name");
    let o = ConnectOptions {
        connect_timeout: Duration::from_secs(2),
        tls: Some((std::sync::Arc::new(cfg), name)),
        ..ConnectOptions::default()
    };
    let err = Connection::connect(&addr, &o).expect_err("not TLS");
    assert!(matches!(err, TransportError::Tls { .. }), "{err:?}");
    h.join().expect("mock");
}

#[test]
fn resolved_addresses_are_tried_in_order() {
    let dead: std::net::SocketAddr = {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr")
    };
    let (live, h) = mock(|mut s| {
        let got = read_frame(&mut s);
        s.write_all(&frame(&got)).expect("write");
    });
    let live: std::net::SocketAddr = live.parse().expect("addr");
    let mut c =
        Connection::connect_addrs("broker:1", &[dead, live], &opts()).expect("second works");
    assert_eq!(c.peer_addr(), live);
    assert!(c.peer().starts_with("broker:1"), "{}", c.peer());
    let dl = Instant::now() + Duration::from_secs(5);
    c.send_frame(&frame(b"ok"), dl).expect("send");
    assert_eq!(c.recv_frame(dl).expect("recv"), b"ok");
    h.join().expect("mock");

    let err = Connection::connect_addrs("broker:1", &[dead], &opts()).expect_err("refused");
    assert!(matches!(err, TransportError::Connect { .. }), "{err:?}");
    let err = Connection::connect_addrs("broker:1", &[], &opts()).expect_err("empty");
    assert!(matches!(err, TransportError::Resolve { .. }), "{err:?}");
}
