//! [`StreamsGroupConfig::from_properties`]: a member's configuration from Kafka Streams
//! properties. The keys and the checks are documented in [`crate::properties`], whose
//! parsing this builds on.

use std::path::Path;

use super::StreamsGroupConfig;
use crate::error::Error;
use crate::properties::{build_client, collect, invalid, parse_u64, read_file, CLIENT_TAG_PREFIX};
use crate::streams::StreamsTopology;

impl StreamsGroupConfig {
    /// Builds a member configuration from properties (client keys plus the Kafka Streams
    /// keys `application.id` (required), `application.server`, `client.rack`,
    /// `client.tag.<key>`, `group.instance.id` and `max.poll.interval.ms`) and the
    /// `topology`, which properties cannot express. See the [`properties`](crate::properties)
    /// module for the accepted keys and the checks.
    pub fn from_properties<I, K, V>(
        props: I,
        topology: StreamsTopology,
    ) -> Result<StreamsGroupConfig, Error>
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        streams_from(props, topology, true)
    }

    /// [`from_properties`](Self::from_properties) on the pairs of a Java `.properties` file
    /// (syntax: [`parse`](crate::properties::parse)).
    pub fn from_properties_file(
        path: impl AsRef<Path>,
        topology: StreamsTopology,
    ) -> Result<StreamsGroupConfig, Error> {
        streams_from(read_file(path)?, topology, false)
    }
}

fn streams_from<I, K, V>(
    props: I,
    topology: StreamsTopology,
    trim: bool,
) -> Result<StreamsGroupConfig, Error>
where
    I: IntoIterator<Item = (K, V)>,
    K: AsRef<str>,
    V: AsRef<str>,
{
    let (settings, streams) = collect(props, true, trim)?;
    let group_id = match streams.get("application.id") {
        Some(id) if !id.is_empty() => id.clone(),
        Some(_) => return Err(invalid("application.id is empty".to_owned())),
        None => {
            return Err(invalid(
                "application.id is missing; it is the Streams group id".to_owned(),
            ))
        }
    };
    let client = build_client(&settings)?;
    let mut config = StreamsGroupConfig::new(client.bootstrap().to_owned(), group_id, topology)
        .client_config(client);
    let mut tags = Vec::new();
    for (key, value) in &streams {
        match key.as_str() {
            "application.id" => {}
            "application.server" => {
                let (host, port) = parse_endpoint(value)?;
                config = config.user_endpoint(host, port);
            }
            "client.rack" => {
                if value.is_empty() {
                    return Err(invalid("client.rack is empty; leave it out".to_owned()));
                }
                config = config.rack_id(value.clone());
            }
            "group.instance.id" => {
                if value.is_empty() {
                    return Err(invalid(
                        "group.instance.id is empty; leave it out for a dynamic member".to_owned(),
                    ));
                }
                config = config.instance_id(value.clone());
            }
            "max.poll.interval.ms" => {
                let ms = parse_u64(key, value)?;
                let ms = i32::try_from(ms).ok().filter(|ms| *ms > 0).ok_or_else(|| {
                    invalid(format!(
                        "max.poll.interval.ms={ms}: outside 1..={}",
                        i32::MAX
                    ))
                })?;
                config = config.rebalance_timeout_ms(ms);
            }
            _ => {
                // Only client.tag.<key> is left (collect admits nothing else).
                let tag = key.strip_prefix(CLIENT_TAG_PREFIX).unwrap_or_default();
                if tag.is_empty() {
                    return Err(invalid(
                        "client.tag. needs a tag name: client.tag.<key>=<value>".to_owned(),
                    ));
                }
                tags.push((tag.to_owned(), value.clone()));
            }
        }
    }
    if !tags.is_empty() {
        config = config.client_tags(tags);
    }
    Ok(config)
}

fn parse_endpoint(value: &str) -> Result<(String, u16), Error> {
    let bad = |why: &str| {
        invalid(format!(
            "application.server={value:?}: {why} (expected host:port)"
        ))
    };
    let (host, port) = value.rsplit_once(':').ok_or_else(|| bad("no port"))?;
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    if host.is_empty() {
        return Err(bad("empty host"));
    }
    let port = port
        .parse::<u16>()
        .ok()
        .filter(|p| *p != 0)
        .ok_or_else(|| bad("port is not a number in 1..=65535"))?;
    Ok((host.to_owned(), port))
}
