//! The little administration a Streams application needs around its group: creating the
//! input topics (the broker creates the internal ones itself).
//!
//! ```no_run
//! use std::time::Duration;
//! use kafka_streams_group::{admin, ClientConfig};
//!
//! let config = ClientConfig::new("127.0.0.1:9092");
//! admin::create_topics(&config, &[admin::NewTopic::new("input", 4)], Duration::from_secs(30))?;
//! # Ok::<(), kafka_streams_group::Error>(())
//! ```

use std::time::{Duration, Instant};

use crate::client::{BrokerTarget, Client};
use crate::config::ClientConfig;
use crate::connect::config_error;
use crate::error::{BrokerErrorContext, Error};
use crate::protocol::api::create_topics::{
    CreatableTopic, CreatableTopicConfig, CreateTopicsRequest,
};
use crate::protocol::BrokerErrorKind;

/// A topic to create.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewTopic {
    /// Topic name.
    pub name: String,
    /// Number of partitions.
    pub partitions: i32,
    /// Replication factor; -1 = the broker's `default.replication.factor`.
    pub replication_factor: i16,
    /// Topic configs (`cleanup.policy`, `retention.ms`, …).
    pub configs: Vec<(String, String)>,
}

impl NewTopic {
    /// A topic with `partitions` partitions and the broker's default replication factor.
    pub fn new(name: impl Into<String>, partitions: i32) -> Self {
        Self {
            name: name.into(),
            partitions,
            replication_factor: -1,
            configs: Vec::new(),
        }
    }

    /// Sets the replication factor.
    pub fn replication_factor(mut self, factor: i16) -> Self {
        self.replication_factor = factor;
        self
    }

    /// Adds a topic config.
    pub fn config(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.configs.push((key.into(), value.into()));
        self
    }
}

/// Creates `topics`, treating a topic that already exists as created. Blocks until the
/// controller answered or `timeout` passed; the first per-topic error is returned.
pub fn create_topics(
    config: &ClientConfig,
    topics: &[NewTopic],
    timeout: Duration,
) -> Result<(), Error> {
    let deadline = Instant::now() + timeout;
    // from_config, not Client::connect: a refused password or certificate stays a typed
    // SaslAuthentication / Tls error instead of a "no broker reachable" string.
    let mut client = Client::from_config(config, timeout)?;
    let request = CreateTopicsRequest {
        topics: topics
            .iter()
            .map(|t| CreatableTopic {
                name: t.name.clone(),
                num_partitions: t.partitions,
                replication_factor: t.replication_factor,
                assignments: Vec::new(),
                configs: t
                    .configs
                    .iter()
                    .map(|(k, v)| CreatableTopicConfig {
                        name: k.clone(),
                        value: Some(v.clone()),
                    })
                    .collect(),
            })
            .collect(),
        timeout_ms: i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX),
        validate_only: false,
    };
    let response = client
        .send(BrokerTarget::Any, &request, deadline)
        .map_err(|e| config_error(config, e))?;
    for result in response.topics {
        let kind = BrokerErrorKind::from_code(result.error_code);
        if kind.is_none() || kind == BrokerErrorKind::TopicAlreadyExists {
            continue;
        }
        return Err(Error::broker(
            result.error_code,
            Some(format!(
                "creating topic {}: {}",
                result.name,
                result
                    .error_message
                    .unwrap_or_else(|| kind.description().to_string())
            )),
            BrokerErrorContext {
                api: Some("CreateTopics"),
                group: None,
                broker: None,
            },
        ));
    }
    Ok(())
}
