//! Unknown keys: the error naming them, with the closest accepted key as a suggestion.

use super::build::foreign_key;
use super::{invalid, CLIENT_KEYS, CLIENT_TAG_PREFIX, STREAMS_KEYS};
use crate::error::Error;

/// Levenshtein distance over characters.
pub(super) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitution = prev[j] + usize::from(ca != cb);
            cur[j + 1] = substitution.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The accepted key closest to `key` (case-insensitive, `_` read as `.`), if close enough to
/// be a plausible typo.
pub(super) fn suggestion(key: &str, known: &[&[&'static str]]) -> Option<&'static str> {
    let wanted = key.to_ascii_lowercase().replace('_', ".");
    let limit = (wanted.chars().count() / 3).max(2);
    let mut best: Option<(usize, &'static str)> = None;
    for list in known {
        for &candidate in *list {
            let d = edit_distance(&wanted, candidate);
            if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
                best = Some((d, candidate));
            }
        }
    }
    best.map(|(_, k)| k)
}

pub(super) fn unknown_key(key: &str, streams: bool) -> Error {
    let known: &[&[&'static str]] = if streams {
        &[CLIENT_KEYS, STREAMS_KEYS]
    } else {
        &[CLIENT_KEYS]
    };
    let accepted = if streams {
        "the librdkafka client keys and application.id, application.server, client.rack, \
         client.tag.<key>, group.instance.id, max.poll.interval.ms"
    } else {
        "bootstrap.servers, client.id, security.protocol, sasl.*, ssl.*.location, \
         ssl.endpoint.identification.algorithm, *.timeout.ms, retry.backoff*.ms, \
         reconnect.backoff*.ms, *message.max.bytes"
    };
    unknown_among(key, known, accepted)
}

/// The error for a key that is neither one of [`CLIENT_KEYS`] nor one of a configuration's
/// own keys (`own`, described in `accepted`), for configurations that take the client keys
/// plus their own: Java-client keys with a librdkafka-style equivalent get the keys to use
/// instead; any other key gets the closest of [`CLIENT_KEYS`] and `own` as a suggestion.
pub(crate) fn reject_key(key: &str, own: &[&'static str], accepted: &str) -> Error {
    // `streams = true`: a Streams member key is not "for StreamsGroupConfig" here, just
    // not accepted by this configuration.
    foreign_key(key, true).unwrap_or_else(|| unknown_among(key, &[CLIENT_KEYS, own], accepted))
}

fn unknown_among(key: &str, known: &[&[&'static str]], accepted: &str) -> Error {
    let hint = match suggestion(key, known) {
        Some(k) if k == CLIENT_TAG_PREFIX => format!("; did you mean {CLIENT_TAG_PREFIX}<key>?"),
        Some(k) => format!("; did you mean {k:?}?"),
        None => String::new(),
    };
    invalid(format!(
        "unknown key {key:?}{hint} (accepted: {accepted}; see the kafka_streams_group::properties docs)"
    ))
}
