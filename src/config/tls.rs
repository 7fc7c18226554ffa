//! TLS settings: trusted CAs, client certificates, broker name verification.

use std::fmt;
use std::path::PathBuf;

/// Where certificates come from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CertificateSource {
    /// A PEM file with one or more `CERTIFICATE` sections.
    PemFile(PathBuf),
    /// PEM text with one or more `CERTIFICATE` sections.
    Pem(Vec<u8>),
    /// DER certificates (a chain: leaf first).
    Der(Vec<Vec<u8>>),
}

/// Where a client private key comes from: PKCS#8, PKCS#1 (RSA) or SEC1 (EC), unencrypted.
/// `Debug` never shows key material.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PrivateKeySource {
    /// A PEM file with a `PRIVATE KEY`, `RSA PRIVATE KEY` or `EC PRIVATE KEY` section.
    PemFile(PathBuf),
    /// PEM text with a private key section.
    Pem(Vec<u8>),
    /// A DER key; the format is recognised from its structure.
    Der(Vec<u8>),
}

impl fmt::Debug for PrivateKeySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PrivateKeySource::PemFile(p) => f.debug_tuple("PemFile").field(p).finish(),
            PrivateKeySource::Pem(_) => f.write_str("Pem(<redacted>)"),
            PrivateKeySource::Der(_) => f.write_str("Der(<redacted>)"),
        }
    }
}

/// TLS settings for `SSL` and `SASL_SSL`.
///
/// Defaults: trust the platform's root store, verify the broker's hostname, no client
/// certificate, TLS 1.2 and 1.3 only.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsConfig {
    ca: Vec<CertificateSource>,
    platform_roots: Option<bool>,
    server_name: Option<String>,
    client_auth: Option<(CertificateSource, PrivateKeySource)>,
    dangerous_disable_hostname_verification: bool,
}

impl TlsConfig {
    /// Defaults: platform roots, hostname verification on, no client certificate.
    pub fn new() -> Self {
        Self::default()
    }

    /// Trusts the CA certificates in a PEM file. Once any CA is given the platform roots are
    /// no longer trusted unless [`trust_platform_roots(true)`](Self::trust_platform_roots).
    pub fn ca_pem_file(self, path: impl Into<PathBuf>) -> Self {
        self.ca(CertificateSource::PemFile(path.into()))
    }

    /// Trusts the CA certificates in PEM text.
    pub fn ca_pem(self, pem: impl Into<Vec<u8>>) -> Self {
        self.ca(CertificateSource::Pem(pem.into()))
    }

    /// Trusts one DER CA certificate.
    pub fn ca_der(self, der: impl Into<Vec<u8>>) -> Self {
        self.ca(CertificateSource::Der(vec![der.into()]))
    }

    /// Trusts certificates from any source.
    pub fn ca(mut self, source: CertificateSource) -> Self {
        self.ca.push(source);
        self
    }

    /// Whether to trust the platform's root store (default: only when no CA is given).
    pub fn trust_platform_roots(mut self, trust: bool) -> Self {
        self.platform_roots = Some(trust);
        self
    }

    /// Verifies brokers against this name instead of the host in their address (useful when
    /// brokers are reached by IP or through a tunnel). Default: the address's host.
    pub fn server_name(mut self, name: impl Into<String>) -> Self {
        self.server_name = Some(name.into());
        self
    }

    /// Mutual TLS: client certificate chain and key from PEM files.
    pub fn client_cert_pem_file(self, cert: impl Into<PathBuf>, key: impl Into<PathBuf>) -> Self {
        self.client_auth(
            CertificateSource::PemFile(cert.into()),
            PrivateKeySource::PemFile(key.into()),
        )
    }

    /// Mutual TLS: client certificate chain and key from PEM text.
    pub fn client_cert_pem(self, cert: impl Into<Vec<u8>>, key: impl Into<Vec<u8>>) -> Self {
        self.client_auth(
            CertificateSource::Pem(cert.into()),
            PrivateKeySource::Pem(key.into()),
        )
    }

    /// Mutual TLS: DER certificate chain (leaf first) and DER key.
    pub fn client_cert_der(self, chain: Vec<Vec<u8>>, key: impl Into<Vec<u8>>) -> Self {
        self.client_auth(
            CertificateSource::Der(chain),
            PrivateKeySource::Der(key.into()),
        )
    }

    /// Mutual TLS from any sources.
    pub fn client_auth(mut self, cert: CertificateSource, key: PrivateKeySource) -> Self {
        self.client_auth = Some((cert, key));
        self
    }

    /// **Dangerous**: accept a broker certificate whose names do not match the broker's
    /// host. The chain, validity period and key usage are still verified against the trusted
    /// roots, so an untrusted or expired certificate is still refused; only the name check
    /// goes. Default `false`. Prefer [`server_name`](Self::server_name).
    pub fn dangerous_disable_hostname_verification(mut self, disable: bool) -> Self {
        self.dangerous_disable_hostname_verification = disable;
        self
    }

    /// The configured CA sources.
    pub fn ca_sources(&self) -> &[CertificateSource] {
        &self.ca
    }

    /// Whether the platform root store is trusted.
    pub fn uses_platform_roots(&self) -> bool {
        self.platform_roots.unwrap_or(self.ca.is_empty())
    }

    /// The server-name override, if any.
    pub fn server_name_override(&self) -> Option<&str> {
        self.server_name.as_deref()
    }

    /// The client certificate and key, if mutual TLS is configured.
    pub fn client_auth_sources(&self) -> Option<(&CertificateSource, &PrivateKeySource)> {
        self.client_auth.as_ref().map(|(c, k)| (c, k))
    }

    /// Whether hostname verification is disabled.
    pub fn hostname_verification_disabled(&self) -> bool {
        self.dangerous_disable_hostname_verification
    }
}
