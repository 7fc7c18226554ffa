//! The bootstrap list: `host:port` entries.

use std::fmt;
use std::net::Ipv6Addr;
use std::str::FromStr;

use super::Error;

/// One `host:port` from the bootstrap list.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BrokerAddress {
    /// Host name or IP literal (IPv6 without brackets).
    pub host: String,
    /// TCP port (1..=65535).
    pub port: u16,
}

impl fmt::Display for BrokerAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

impl FromStr for BrokerAddress {
    type Err = Error;

    /// Parses `host:port`, `1.2.3.4:port` or `[v6]:port`.
    fn from_str(entry: &str) -> Result<Self, Self::Err> {
        let bad = |reason: String| Error::InvalidConfiguration {
            field: "bootstrap",
            reason,
        };
        let entry = entry.trim();
        if entry.is_empty() {
            return Err(bad("empty entry in the bootstrap list".to_owned()));
        }
        let (host, port) = if let Some(rest) = entry.strip_prefix('[') {
            let (v6, after) = rest
                .split_once(']')
                .ok_or_else(|| bad(format!("{entry:?}: '[' without matching ']'")))?;
            v6.parse::<Ipv6Addr>()
                .map_err(|_| bad(format!("{entry:?}: {v6:?} is not an IPv6 address")))?;
            let port = after
                .strip_prefix(':')
                .ok_or_else(|| bad(format!("{entry:?}: missing ':port' after ']'")))?;
            (v6, port)
        } else {
            let (host, port) = entry
                .rsplit_once(':')
                .ok_or_else(|| bad(format!("{entry:?}: expected host:port")))?;
            if host.contains(':') {
                return Err(bad(format!(
                    "{entry:?}: IPv6 addresses must be written in brackets, e.g. [::1]:9092"
                )));
            }
            if host.is_empty() {
                return Err(bad(format!("{entry:?}: empty host")));
            }
            let host_ok = host
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b));
            if !host_ok {
                return Err(bad(format!("{entry:?}: invalid character in host")));
            }
            (host, port)
        };
        let port: u16 = match port.parse::<u32>() {
            Ok(p @ 1..=65535) => p as u16,
            Ok(p) => return Err(bad(format!("{entry:?}: port {p} outside 1..=65535"))),
            Err(_) => return Err(bad(format!("{entry:?}: port {port:?} is not a number"))),
        };
        Ok(BrokerAddress {
            host: host.to_owned(),
            port,
        })
    }
}

/// Parses a comma-separated bootstrap list; empty entries are errors.
pub fn parse_bootstrap(list: &str) -> Result<Vec<BrokerAddress>, Error> {
    if list.trim().is_empty() {
        return Err(Error::InvalidConfiguration {
            field: "bootstrap",
            reason: "bootstrap list is empty".to_owned(),
        });
    }
    list.split(',').map(str::parse).collect()
}
