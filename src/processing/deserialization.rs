//! Input records that cannot be deserialized: Kafka Streams'
//! `default.deserialization.exception.handler` choice ([`DeserializationHandler`]) and the
//! helpers that give processors the typed [`Error::Deserialization`] with the record's
//! topic, partition and offset ([`InputRecord::key_with`], [`InputRecord::value_with`]).
//!
//! Java deserializes a record before its processor runs; here the processor does, so a
//! processor should deserialize before any side effect (send, store write): a record skipped
//! by `LogAndContinue` still has whatever the processor did before the error sent along.

use std::fmt;

use crate::error::Error;
use crate::streams::StreamsTaskId;

use super::serde::{Serde, SerdeError};
use super::task::InputRecord;

/// Java's `LogAndFailExceptionHandler` class name.
pub const LOG_AND_FAIL_CLASS: &str = "org.apache.kafka.streams.errors.LogAndFailExceptionHandler";
/// Java's `LogAndContinueExceptionHandler` class name.
pub const LOG_AND_CONTINUE_CLASS: &str =
    "org.apache.kafka.streams.errors.LogAndContinueExceptionHandler";

/// What the runtime does when a processor returns [`Error::Deserialization`] for the record
/// it is processing (Kafka Streams' `default.deserialization.exception.handler`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DeserializationHandler {
    /// Log the error and fail the runtime, as any processor error does: the record is not
    /// committed past, so the next instance reads it again (Java's default,
    /// `LogAndFailExceptionHandler`).
    #[default]
    LogAndFail,
    /// Log the error (`warn`), count the record in
    /// [`ProcessingStats::dropped_records`](super::ProcessingStats::dropped_records) and go
    /// on: the committed position moves past it, so it is never read again
    /// (`LogAndContinueExceptionHandler`).
    LogAndContinue,
}

impl DeserializationHandler {
    /// Reads a `default.deserialization.exception.handler` (or
    /// `deserialization.exception.handler`) value: Java's class name, full or simple
    /// (`org.apache.kafka.streams.errors.LogAndContinueExceptionHandler`,
    /// `LogAndContinueExceptionHandler`), or `LogAndFail` / `LogAndContinue`. Any other
    /// class is refused: a Java handler's code cannot run here.
    pub fn from_property(value: &str) -> Result<Self, Error> {
        let simple = value.trim().rsplit('.').next().unwrap_or_default();
        match simple {
            "LogAndFailExceptionHandler" | "LogAndFail" => Ok(Self::LogAndFail),
            "LogAndContinueExceptionHandler" | "LogAndContinue" => Ok(Self::LogAndContinue),
            _ => Err(Error::InvalidConfiguration {
                field: "default.deserialization.exception.handler",
                reason: format!(
                    "{value:?}: only {LOG_AND_FAIL_CLASS} (the default) and \
                     {LOG_AND_CONTINUE_CLASS} are supported; a custom Java handler cannot \
                     run here (decide in the processor instead)"
                ),
            }),
        }
    }

    /// Java's class name of this handler.
    pub fn class_name(self) -> &'static str {
        match self {
            Self::LogAndFail => LOG_AND_FAIL_CLASS,
            Self::LogAndContinue => LOG_AND_CONTINUE_CLASS,
        }
    }

    /// Decides on a processor's `result` for `record` of `task`: `Ok(false)` processed,
    /// `Ok(true)` skipped (a deserialization error of this very record under
    /// `LogAndContinue`, logged at `warn`), or the error (logged at `error`) that fails the
    /// runtime.
    pub(crate) fn decide(
        self,
        result: Result<(), Error>,
        task: &StreamsTaskId,
        record: &InputRecord,
    ) -> Result<bool, Error> {
        let e = match result {
            Ok(()) => return Ok(false),
            Err(e) => e,
        };
        let tp = &record.partition;
        if self == Self::LogAndContinue && is_about(&e, record) {
            log::warn!(
                "task {task}: skipping the record at {tp}@{} (LogAndContinue): {e}",
                record.offset
            );
            return Ok(true);
        }
        log::error!(
            "processing {tp}@{} of task {task} failed: {e}",
            record.offset
        );
        Err(e)
    }
}

impl fmt::Display for DeserializationHandler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.class_name())
    }
}

/// Whether `e` is a deserialization error of `record` (another record's, or another error,
/// is a processing failure, whatever the handler).
fn is_about(e: &Error, record: &InputRecord) -> bool {
    matches!(e, Error::Deserialization { topic, partition, offset, .. }
        if *topic == record.partition.topic
            && *partition == record.partition.partition
            && *offset == record.offset)
}

impl InputRecord {
    /// The key read with `serde` (`None` for a Kafka null); bytes the serde cannot read give
    /// [`Error::Deserialization`] naming this record, which the runtime's
    /// [`DeserializationHandler`] acts on when the processor returns it.
    ///
    /// ```
    /// # use kafka_streams_group::processing::{InputRecord, LongSerde, StringSerde};
    /// # use kafka_streams_group::{Error, TopicPartition};
    /// let record = InputRecord::new(TopicPartition::new("clicks", 2), 41, 0, Some(b"alice"), Some(&[0; 7]));
    /// assert_eq!(record.key_with(&StringSerde)?.as_deref(), Some("alice"));
    /// match record.value_with(&LongSerde) {
    ///     Err(Error::Deserialization { topic, partition: 2, offset: 41, part: "value", .. }) => {
    ///         assert_eq!(topic, "clicks")
    ///     }
    ///     other => panic!("{other:?}"),
    /// }
    /// # Ok::<(), Error>(())
    /// ```
    pub fn key_with<T, S>(&self, serde: &S) -> Result<Option<T::Owned>, Error>
    where
        T: ?Sized + ToOwned,
        S: Serde<T> + ?Sized,
    {
        self.read("key", self.key.as_deref(), serde)
    }

    /// The value read with `serde`, as [`key_with`](Self::key_with) reads the key.
    pub fn value_with<T, S>(&self, serde: &S) -> Result<Option<T::Owned>, Error>
    where
        T: ?Sized + ToOwned,
        S: Serde<T> + ?Sized,
    {
        self.read("value", self.value.as_deref(), serde)
    }

    /// [`Error::Deserialization`] for this record's `part` (`"key"` or `"value"`), for a
    /// processor that reads the bytes its own way (JSON, Avro, ...).
    pub fn deserialization_error(&self, part: &'static str, message: impl fmt::Display) -> Error {
        Error::Deserialization {
            topic: self.partition.topic.clone(),
            partition: self.partition.partition,
            offset: self.offset,
            part,
            message: message.to_string(),
        }
    }

    fn read<T, S>(
        &self,
        part: &'static str,
        bytes: Option<&[u8]>,
        serde: &S,
    ) -> Result<Option<T::Owned>, Error>
    where
        T: ?Sized + ToOwned,
        S: Serde<T> + ?Sized,
    {
        bytes
            .map(|b| {
                serde
                    .deserialize(b)
                    .map_err(|e| self.deserialization_error(part, serde_message(&e)))
            })
            .transpose()
    }
}

/// The serde's own words, without [`SerdeError`]'s advice (the error adds its own).
fn serde_message(e: &SerdeError) -> String {
    format!("{}: {}", e.serde(), e.reason())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::TopicPartition;
    use crate::processing::{IntegerSerde, LongSerde, StringSerde};

    fn record(value: &[u8]) -> InputRecord {
        InputRecord::new(TopicPartition::new("in", 3), 17, 5, None, Some(value))
    }

    #[test]
    fn a_bad_value_names_the_record_and_the_serde() {
        let r = record(&[0; 7]);
        assert_eq!(r.key_with(&LongSerde).unwrap(), None, "a null key is None");
        let e = r.value_with(&LongSerde).unwrap_err();
        let text = e.to_string();
        match &e {
            Error::Deserialization {
                topic,
                partition,
                offset,
                part,
                message,
            } => {
                assert_eq!((topic.as_str(), *partition, *offset), ("in", 3, 17));
                assert_eq!(*part, "value");
                assert!(message.contains("is not 8"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        assert!(text.contains("in-3 offset 17"), "{text}");
        assert!(text.contains("LogAndContinue"), "{text}");
        assert!(!e.is_retriable());
        assert_eq!(
            record(&[0, 0, 1, 2]).value_with(&IntegerSerde).unwrap(),
            Some(258)
        );
        assert_eq!(
            record(b"ok").value_with(&StringSerde).unwrap().as_deref(),
            Some("ok")
        );
    }

    #[test]
    fn handler_names_are_java_class_names() {
        use DeserializationHandler::*;
        for (v, want) in [
            (LOG_AND_FAIL_CLASS, LogAndFail),
            (LOG_AND_CONTINUE_CLASS, LogAndContinue),
            ("LogAndContinueExceptionHandler", LogAndContinue),
            (" LogAndFail ", LogAndFail),
        ] {
            assert_eq!(DeserializationHandler::from_property(v).unwrap(), want);
        }
        let e = DeserializationHandler::from_property("com.acme.SendToDlqHandler").unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("default.deserialization.exception.handler")
                && text.contains("SendToDlqHandler")
                && text.contains(LOG_AND_CONTINUE_CLASS),
            "{text}"
        );
        assert_eq!(DeserializationHandler::default(), LogAndFail);
    }

    #[test]
    fn continue_skips_only_this_records_deserialization_error() {
        use DeserializationHandler::*;
        let task = StreamsTaskId::new("0", 3);
        let r = record(&[0; 7]);
        let bad = || r.value_with(&LongSerde).map(|_| ());
        assert!(!LogAndContinue.decide(Ok(()), &task, &r).unwrap());
        assert!(!LogAndFail.decide(Ok(()), &task, &r).unwrap());
        assert!(LogAndContinue.decide(bad(), &task, &r).unwrap(), "skipped");
        assert!(matches!(
            LogAndFail.decide(bad(), &task, &r),
            Err(Error::Deserialization { offset: 17, .. })
        ));
        // Another record's deserialization error, or another error, fails either way.
        let mut other = r.clone();
        other.offset = 18;
        let foreign = Err(other.deserialization_error("key", "bad"));
        assert!(LogAndContinue.decide(foreign, &task, &r).is_err());
        let processing = Err(Error::InvalidConfiguration {
            field: "record",
            reason: "x".into(),
        });
        assert!(LogAndContinue.decide(processing, &task, &r).is_err());
    }
}
