//! What a serde reports when it cannot read bytes. The serdes live in `processing`; the
//! error sits here, below the crate's [`Error`](crate::Error), which wraps it.

use std::fmt;

/// Bytes a serde cannot read (e.g. 7 bytes for a `Long`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SerdeError {
    serde: &'static str,
    reason: String,
    topic: Option<String>,
}

impl SerdeError {
    /// An error of the serde named `serde` (e.g. `"LongSerde"`).
    pub fn new(serde: &'static str, reason: impl Into<String>) -> Self {
        SerdeError {
            serde,
            reason: reason.into(),
            topic: None,
        }
    }

    /// Adds the topic whose record could not be read.
    pub fn with_topic(mut self, topic: impl Into<String>) -> Self {
        self.topic = Some(topic.into());
        self
    }

    /// The serde that failed.
    pub fn serde(&self) -> &'static str {
        self.serde
    }

    /// What is wrong with the bytes.
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// The topic, if the caller added it.
    pub fn topic(&self) -> Option<&str> {
        self.topic.as_deref()
    }
}

impl fmt::Display for SerdeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.serde, self.reason)?;
        if let Some(t) = &self.topic {
            write!(f, " (topic {t})")?;
        }
        f.write_str("; check that the serde matches what the writer used")
    }
}

impl std::error::Error for SerdeError {}
