//! Test PKI and an in-memory TLS handshake (no sockets) for the security tests.
#![allow(dead_code)]

use std::io::Cursor;
use std::path::PathBuf;
use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{ClientConnection, RootCertStore, ServerConfig, ServerConnection};

/// A test certificate authority.
pub struct Ca {
    pub cert: rcgen::Certificate,
    pub issuer: Issuer<'static, KeyPair>,
}

impl Ca {
    pub fn new(name: &str) -> Ca {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let cert = params.self_signed(&key).unwrap();
        Ca {
            cert,
            issuer: Issuer::new(params, key),
        }
    }

    pub fn pem(&self) -> String {
        self.cert.pem()
    }

    pub fn der(&self) -> CertificateDer<'static> {
        self.cert.der().clone()
    }
}

/// Validity window for a leaf.
#[derive(Clone, Copy)]
pub enum Validity {
    Current,
    Expired,
    NotYetValid,
}

/// A leaf certificate and its key.
pub struct Leaf {
    pub cert: rcgen::Certificate,
    pub key: KeyPair,
}

impl Leaf {
    pub fn key_der(&self) -> PrivateKeyDer<'static> {
        PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(self.key.serialize_der()))
    }
    pub fn chain(&self) -> Vec<CertificateDer<'static>> {
        vec![self.cert.der().clone()]
    }
}

pub fn leaf_with_key(
    ca: &Ca,
    names: &[&str],
    validity: Validity,
    client: bool,
    key: KeyPair,
) -> Leaf {
    let cn = names.first().copied().unwrap_or("client");
    leaf_with_names(ca, names, cn, validity, client, key)
}

/// A server certificate whose only name is its common name `cn`: no subjectAltName at all.
pub fn server_leaf_without_san(ca: &Ca, cn: &str) -> Leaf {
    leaf_with_names(
        ca,
        &[],
        cn,
        Validity::Current,
        false,
        KeyPair::generate().unwrap(),
    )
}

fn leaf_with_names(
    ca: &Ca,
    names: &[&str],
    cn: &str,
    validity: Validity,
    client: bool,
    key: KeyPair,
) -> Leaf {
    let mut params =
        CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
    params.distinguished_name.push(DnType::CommonName, cn);
    params.extended_key_usages = vec![if client {
        ExtendedKeyUsagePurpose::ClientAuth
    } else {
        ExtendedKeyUsagePurpose::ServerAuth
    }];
    match validity {
        Validity::Current => {
            params.not_before = rcgen::date_time_ymd(2020, 1, 1);
            params.not_after = rcgen::date_time_ymd(2090, 1, 1);
        }
        Validity::Expired => {
            params.not_before = rcgen::date_time_ymd(2020, 1, 1);
            params.not_after = rcgen::date_time_ymd(2021, 1, 1);
        }
        Validity::NotYetValid => {
            params.not_before = rcgen::date_time_ymd(2090, 1, 1);
            params.not_after = rcgen::date_time_ymd(2095, 1, 1);
        }
    }
    let cert = params.signed_by(&key, &ca.issuer).unwrap();
    Leaf { cert, key }
}

pub fn server_leaf(ca: &Ca, names: &[&str], validity: Validity) -> Leaf {
    leaf_with_key(ca, names, validity, false, KeyPair::generate().unwrap())
}

pub fn client_leaf(ca: &Ca, key: KeyPair) -> Leaf {
    leaf_with_key(ca, &["kafka-client"], Validity::Current, true, key)
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A broker-side TLS config: `versions`, optionally requiring client certs from `client_ca`.
pub fn server_config(
    leaf: &Leaf,
    client_ca: Option<&Ca>,
    versions: &[&'static rustls::SupportedProtocolVersion],
) -> Arc<ServerConfig> {
    let builder = ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(versions)
        .unwrap();
    let builder = match client_ca {
        Some(ca) => {
            let mut roots = RootCertStore::empty();
            roots.add(ca.der()).unwrap();
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider())
                .build()
                .unwrap();
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    Arc::new(
        builder
            .with_single_cert(leaf.chain(), leaf.key_der())
            .unwrap(),
    )
}

/// How an in-memory handshake ended.
#[derive(Debug)]
pub enum Outcome {
    /// Handshake done and one application record went through.
    Ok {
        version: rustls::ProtocolVersion,
        server_saw_client_cert: bool,
    },
    /// The client refused.
    ClientError(rustls::Error),
    /// The server refused.
    ServerError(rustls::Error),
}

impl Outcome {
    pub fn is_ok(&self) -> bool {
        matches!(self, Outcome::Ok { .. })
    }
    pub fn client_error(&self) -> Option<&rustls::Error> {
        match self {
            Outcome::ClientError(e) => Some(e),
            _ => None,
        }
    }
}

fn transfer(from: &mut dyn FnMut(&mut Vec<u8>) -> bool, buf: &mut Vec<u8>) {
    buf.clear();
    while from(buf) {}
}

/// Pumps bytes between `client` and a fresh server session until both finish or one fails.
pub fn handshake(mut client: ClientConnection, server_config: Arc<ServerConfig>) -> Outcome {
    use std::io::{Read, Write};
    let mut server = ServerConnection::new(server_config).unwrap();
    client.writer().write_all(b"ping").unwrap();
    let mut buf = Vec::new();
    for _ in 0..64 {
        transfer(
            &mut |b| client.wants_write() && client.write_tls(b).unwrap() > 0,
            &mut buf,
        );
        let mut cur = Cursor::new(&buf[..]);
        while (cur.position() as usize) < buf.len() {
            server.read_tls(&mut cur).unwrap();
            if let Err(e) = server.process_new_packets() {
                return Outcome::ServerError(e);
            }
        }
        transfer(
            &mut |b| server.wants_write() && server.write_tls(b).unwrap() > 0,
            &mut buf,
        );
        let mut cur = Cursor::new(&buf[..]);
        while (cur.position() as usize) < buf.len() {
            client.read_tls(&mut cur).unwrap();
            if let Err(e) = client.process_new_packets() {
                return Outcome::ClientError(e);
            }
        }
        if !client.is_handshaking() && !server.is_handshaking() {
            let mut got = [0u8; 4];
            if server.reader().read_exact(&mut got).is_ok() {
                assert_eq!(&got, b"ping");
                return Outcome::Ok {
                    version: client.protocol_version().unwrap(),
                    server_saw_client_cert: server.peer_certificates().is_some(),
                };
            }
        }
    }
    panic!("handshake did not finish in 64 rounds");
}

/// A unique path in the temp dir holding `contents`.
pub fn temp_file(name: &str, contents: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ksg-security-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path
}

pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}
