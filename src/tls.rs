//! rustls client setup from a [`TlsConfig`]: trust roots, client certificate, server name,
//! and the hostname-verification opt-out that still verifies the chain.
//!
//! Setup, not transport: it reads the configured files and reports [`TlsProblem`]s, so it
//! sits with `config` and `error` above the client layer (it was `transport::tls`, which made
//! the transport import the configuration); the transport only receives the finished
//! `rustls::ClientConfig`.
//!
//! * Provider: ring (the crate's only crypto stack). Versions: TLS 1.3 and TLS 1.2 only;
//!   anything older is refused by the client (see [`PROTOCOL_VERSIONS`]).
//! * Trust: the platform's root store by default (via `rustls-native-certs`, which also
//!   honours `SSL_CERT_FILE` / `SSL_CERT_DIR`), or the configured CA certificates.
//! * Client authentication: certificate chain + PKCS#8 / PKCS#1 / SEC1 key, PEM or DER.
//!
//! Building is done once per client ([`TlsConnector::new`]); each connection then gets a
//! fresh [`rustls::ClientConnection`] from [`TlsConnector::connect`].

use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::{self, PemObject};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};

use crate::config::{CertificateSource, PrivateKeySource, TlsConfig};
use crate::error::{Error, TlsProblem};

/// TLS versions the client offers, newest first. TLS 1.1 and older are not implemented by
/// rustls at all, so a broker that only speaks them fails the handshake.
pub static PROTOCOL_VERSIONS: &[&rustls::SupportedProtocolVersion] =
    &[&rustls::version::TLS13, &rustls::version::TLS12];

/// Largest certificate or key file read (a PEM bundle of every public CA is ~250 KiB);
/// protects against a path that names a device or a huge file by mistake.
const MAX_PEM_FILE: u64 = 16 * 1024 * 1024;

/// A ready TLS client setup; cheap to clone and share across connections.
#[derive(Debug, Clone)]
pub struct TlsConnector {
    config: Arc<rustls::ClientConfig>,
    server_name: Option<ServerName<'static>>,
}

impl TlsConnector {
    /// Loads roots, client certificate and key, and builds the rustls configuration.
    pub fn new(tls: &TlsConfig) -> Result<Self, Error> {
        let server_name = tls
            .server_name_override()
            .map(parse_server_name)
            .transpose()?;
        Ok(TlsConnector {
            config: build_client_config(tls)?,
            server_name,
        })
    }

    /// The rustls configuration.
    pub fn client_config(&self) -> &Arc<rustls::ClientConfig> {
        &self.config
    }

    /// The name certificates are verified against for a broker at `host`: the configured
    /// override, else `host` itself (DNS name or IP literal, IPv6 without brackets).
    pub fn server_name_for(&self, host: &str) -> Result<ServerName<'static>, Error> {
        match &self.server_name {
            Some(name) => Ok(name.clone()),
            None => parse_server_name(host),
        }
    }

    /// A new client session for a broker at `host` (handshake not yet started).
    pub fn connect(&self, host: &str) -> Result<rustls::ClientConnection, Error> {
        let name = self.server_name_for(host)?;
        rustls::ClientConnection::new(Arc::clone(&self.config), name).map_err(|source| Error::Tls {
            broker: Some(host.to_owned()),
            source,
        })
    }
}

fn parse_server_name(name: &str) -> Result<ServerName<'static>, Error> {
    let trimmed = name
        .strip_prefix('[')
        .and_then(|n| n.strip_suffix(']'))
        .unwrap_or(name);
    ServerName::try_from(trimmed.to_owned()).map_err(|_| {
        Error::TlsSetup(TlsProblem::InvalidServerName {
            name: name.to_owned(),
        })
    })
}

/// Builds the rustls client configuration described by `tls`.
pub fn build_client_config(tls: &TlsConfig) -> Result<Arc<rustls::ClientConfig>, Error> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let roots = load_roots(tls)?;
    let webpki =
        WebPkiServerVerifier::builder_with_provider(Arc::new(roots), Arc::clone(&provider))
            .build()
            .map_err(|e| TlsProblem::NoTrustAnchors {
                reason: e.to_string(),
            })?;

    let builder = rustls::ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_protocol_versions(PROTOCOL_VERSIONS)
        .map_err(|e| TlsProblem::NoTrustAnchors {
            reason: format!("ring provider rejected TLS 1.2/1.3: {e}"),
        })?;
    let builder = if tls.hostname_verification_disabled() {
        log::warn!(
            "TLS hostname verification is disabled (dangerous_disable_hostname_verification); \
             certificate chains are still verified"
        );
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(ChainOnlyVerifier { inner: webpki }))
    } else {
        builder.with_webpki_verifier(webpki)
    };

    let config = match tls.client_auth_sources() {
        None => builder.with_no_client_auth(),
        Some((cert, key)) => {
            let chain = load_certificates(cert, "client certificate")?;
            let key = load_private_key(key)?;
            // Load the key on its own first so that an unusable key is reported as such,
            // not as a certificate/key mismatch.
            provider
                .key_provider
                .load_private_key(key.clone_key())
                .map_err(|e| TlsProblem::UnreadablePrivateKey {
                    origin: key_origin(tls),
                    reason: e.to_string(),
                })?;
            builder.with_client_auth_cert(chain, key).map_err(|e| {
                TlsProblem::ClientCertificate {
                    reason: e.to_string(),
                }
            })?
        }
    };
    Ok(Arc::new(config))
}

fn key_origin(tls: &TlsConfig) -> String {
    match tls.client_auth_sources() {
        Some((_, k)) => origin("client private key", key_path(k)),
        None => "client private key".to_owned(),
    }
}

fn key_path(k: &PrivateKeySource) -> Option<&Path> {
    match k {
        PrivateKeySource::PemFile(p) => Some(p),
        _ => None,
    }
}

fn origin(what: &str, path: Option<&Path>) -> String {
    match path {
        Some(p) => format!("{what} file {}", p.display()),
        None => what.to_owned(),
    }
}

fn load_roots(tls: &TlsConfig) -> Result<RootCertStore, TlsProblem> {
    let mut roots = RootCertStore::empty();
    if tls.uses_platform_roots() {
        let found = rustls_native_certs::load_native_certs();
        for e in &found.errors {
            log::warn!("platform root store: {e}");
        }
        let (added, ignored) = roots.add_parsable_certificates(found.certs);
        if ignored > 0 {
            log::warn!("platform root store: ignored {ignored} unparsable certificates");
        }
        if added == 0 && tls.ca_sources().is_empty() {
            let detail = found
                .errors
                .first()
                .map(|e| e.to_string())
                .unwrap_or_else(|| "the platform store is empty".to_owned());
            return Err(TlsProblem::NoTrustAnchors {
                reason: format!(
                    "{detail}; install the system CA bundle, set SSL_CERT_FILE, or configure a CA"
                ),
            });
        }
    }
    for source in tls.ca_sources() {
        let what = "CA certificate";
        let certs = load_certificates(source, what)?;
        for cert in certs {
            roots
                .add(cert)
                .map_err(|e| TlsProblem::InvalidCertificate {
                    origin: origin(what, source_path(source)),
                    reason: e.to_string(),
                })?;
        }
    }
    if roots.is_empty() {
        return Err(TlsProblem::NoTrustAnchors {
            reason: "platform roots are disabled and no CA certificate is configured".to_owned(),
        });
    }
    Ok(roots)
}

fn source_path(s: &CertificateSource) -> Option<&Path> {
    match s {
        CertificateSource::PemFile(p) => Some(p),
        _ => None,
    }
}

fn read_file(path: &Path, what: &str) -> Result<Vec<u8>, TlsProblem> {
    let unreadable = |e: std::io::Error| TlsProblem::FileUnreadable {
        origin: what.to_owned(),
        path: path.to_owned(),
        reason: e.to_string(),
    };
    let file = File::open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => TlsProblem::FileNotFound {
            origin: what.to_owned(),
            path: path.to_owned(),
        },
        _ => unreadable(e),
    })?;
    let mut bytes = Vec::new();
    file.take(MAX_PEM_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    if bytes.len() as u64 > MAX_PEM_FILE {
        return Err(TlsProblem::FileUnreadable {
            origin: what.to_owned(),
            path: path.to_owned(),
            reason: format!("larger than {MAX_PEM_FILE} bytes"),
        });
    }
    Ok(bytes)
}

/// Describes a PEM parse failure without echoing input bytes (which, for a key file, would be
/// key material).
fn pem_reason(e: &pem::Error) -> String {
    match e {
        pem::Error::MissingSectionEnd { .. } => "a section has no END line".to_owned(),
        pem::Error::IllegalSectionStart { .. } => "malformed BEGIN line".to_owned(),
        pem::Error::Base64Decode(_) => "invalid base64 inside a section".to_owned(),
        pem::Error::Io(e) => e.to_string(),
        pem::Error::NoItemsFound => "no items found".to_owned(),
        pem::Error::SectionTooLarge => "a section is too large".to_owned(),
        _ => "unreadable PEM".to_owned(),
    }
}

/// Loads certificates (leaf first for a chain) from `source`.
pub fn load_certificates(
    source: &CertificateSource,
    what: &str,
) -> Result<Vec<CertificateDer<'static>>, TlsProblem> {
    let origin = origin(what, source_path(source));
    let certs = match source {
        CertificateSource::PemFile(path) => parse_pem_certs(&read_file(path, &origin)?, &origin)?,
        CertificateSource::Pem(bytes) => parse_pem_certs(bytes, &origin)?,
        CertificateSource::Der(list) => list
            .iter()
            .map(|d| CertificateDer::from(d.clone()))
            .collect(),
    };
    if certs.is_empty() {
        return Err(TlsProblem::NoCertificate { origin });
    }
    Ok(certs)
}

fn parse_pem_certs(bytes: &[u8], origin: &str) -> Result<Vec<CertificateDer<'static>>, TlsProblem> {
    CertificateDer::pem_slice_iter(bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| TlsProblem::InvalidPem {
            origin: origin.to_owned(),
            reason: pem_reason(&e),
        })
}

/// Loads a private key (PKCS#8, PKCS#1 RSA or SEC1 EC) from `source`.
pub fn load_private_key(source: &PrivateKeySource) -> Result<PrivateKeyDer<'static>, TlsProblem> {
    let origin = origin("client private key", key_path(source));
    match source {
        PrivateKeySource::PemFile(path) => parse_pem_key(&read_file(path, &origin)?, &origin),
        PrivateKeySource::Pem(bytes) => parse_pem_key(bytes, &origin),
        PrivateKeySource::Der(bytes) => PrivateKeyDer::try_from(bytes.clone()).map_err(|reason| {
            TlsProblem::UnreadablePrivateKey {
                origin,
                reason: reason.to_owned(),
            }
        }),
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn parse_pem_key(bytes: &[u8], origin: &str) -> Result<PrivateKeyDer<'static>, TlsProblem> {
    match PrivateKeyDer::from_pem_slice(bytes) {
        Ok(key) => Ok(key),
        Err(pem::Error::NoItemsFound) => {
            // PKCS#8 `ENCRYPTED PRIVATE KEY`, or OpenSSL's legacy `Proc-Type: 4,ENCRYPTED`
            // header: say so rather than "no key".
            if contains(bytes, b"ENCRYPTED PRIVATE KEY")
                || contains(bytes, b"Proc-Type: 4,ENCRYPTED")
            {
                Err(TlsProblem::EncryptedPrivateKey {
                    origin: origin.to_owned(),
                })
            } else {
                Err(TlsProblem::NoPrivateKey {
                    origin: origin.to_owned(),
                })
            }
        }
        Err(e) => Err(TlsProblem::InvalidPem {
            origin: origin.to_owned(),
            reason: pem_reason(&e),
        }),
    }
}

/// Verifies the chain, validity period and signatures like rustls's WebPKI verifier, and
/// accepts a certificate whose names do not cover the server name. Only a *name* mismatch is
/// forgiven: an untrusted issuer, an expired certificate or a bad signature still fail.
#[derive(Debug)]
struct ChainOnlyVerifier {
    inner: Arc<WebPkiServerVerifier>,
}

impl ServerCertVerifier for ChainOnlyVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        // The WebPKI verifier checks the chain first and the name last, so reaching a name
        // error means everything else passed.
        match self.inner.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        ) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }

    fn root_hint_subjects(&self) -> Option<&[rustls::DistinguishedName]> {
        self.inner.root_hint_subjects()
    }
}

/// The crypto provider this module builds on (ring), for callers that build matching
/// server-side configurations in tests.
pub fn crypto_provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}
