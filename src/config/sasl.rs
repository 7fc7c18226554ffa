//! SASL credentials.

use std::fmt;
use std::sync::Arc;

use super::{Error, OAuthToken, OAuthTokenCallback, ScramAlgorithm, Secret};

/// SASL credentials for `SASL_PLAINTEXT` / `SASL_SSL`. `Debug` never shows secrets.
#[derive(Clone)]
#[non_exhaustive]
pub enum SaslConfig {
    /// `PLAIN`.
    Plain {
        /// Authentication identity.
        username: String,
        /// Password.
        password: Secret,
    },
    /// `SCRAM-SHA-256` or `SCRAM-SHA-512`.
    Scram {
        /// Hash function.
        algorithm: ScramAlgorithm,
        /// Username (escaped on the wire as RFC 5802 requires).
        username: String,
        /// Password.
        password: Secret,
    },
    /// `OAUTHBEARER` with a token from the application, fetched on every authentication.
    OAuthBearer {
        /// Produces the token.
        callback: OAuthTokenCallback,
    },
}

impl fmt::Debug for SaslConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SaslConfig::Plain { username, password } => f
                .debug_struct("Plain")
                .field("username", username)
                .field("password", password)
                .finish(),
            SaslConfig::Scram {
                algorithm,
                username,
                password,
            } => f
                .debug_struct("Scram")
                .field("algorithm", algorithm)
                .field("username", username)
                .field("password", password)
                .finish(),
            SaslConfig::OAuthBearer { .. } => f
                .debug_struct("OAuthBearer")
                .field("callback", &"<callback>")
                .finish(),
        }
    }
}

impl SaslConfig {
    /// `PLAIN` credentials.
    pub fn plain(username: impl Into<String>, password: impl Into<Secret>) -> Self {
        SaslConfig::Plain {
            username: username.into(),
            password: password.into(),
        }
    }

    /// `SCRAM-SHA-256` credentials.
    pub fn scram_sha256(username: impl Into<String>, password: impl Into<Secret>) -> Self {
        SaslConfig::Scram {
            algorithm: ScramAlgorithm::Sha256,
            username: username.into(),
            password: password.into(),
        }
    }

    /// `SCRAM-SHA-512` credentials.
    pub fn scram_sha512(username: impl Into<String>, password: impl Into<Secret>) -> Self {
        SaslConfig::Scram {
            algorithm: ScramAlgorithm::Sha512,
            username: username.into(),
            password: password.into(),
        }
    }

    /// `OAUTHBEARER` with a token callback.
    pub fn oauthbearer<F>(callback: F) -> Self
    where
        F: Fn() -> Result<OAuthToken, String> + Send + Sync + 'static,
    {
        SaslConfig::OAuthBearer {
            callback: Arc::new(callback),
        }
    }

    /// The mechanism name sent in `SaslHandshake`.
    pub fn mechanism_name(&self) -> &'static str {
        match self {
            SaslConfig::Plain { .. } => "PLAIN",
            SaslConfig::Scram { algorithm, .. } => algorithm.mechanism_name(),
            SaslConfig::OAuthBearer { .. } => "OAUTHBEARER",
        }
    }

    pub(super) fn validate(&self) -> Result<(), Error> {
        let check = |username: &str, password: &Secret| {
            let reason = if username.is_empty() {
                "username is empty"
            } else if username.contains('\0') {
                "username contains NUL"
            } else if password.expose().is_empty() {
                "password is empty"
            } else if matches!(self, SaslConfig::Plain { .. }) && password.expose().contains('\0') {
                "password contains NUL"
            } else {
                return Ok(());
            };
            Err(Error::InvalidConfiguration {
                field: "sasl",
                reason: format!("{}: {reason}", self.mechanism_name()),
            })
        };
        match self {
            SaslConfig::Plain { username, password }
            | SaslConfig::Scram {
                username, password, ..
            } => check(username, password),
            SaslConfig::OAuthBearer { .. } => Ok(()),
        }
    }
}
