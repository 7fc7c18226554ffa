//! `state.dir`: the instance's directory `<state.dir>/<application.id>/`, which keeps its
//! process id across restarts as Kafka Streams' `StateDirectory#initializeProcessId` does.
//!
//! The process id names the instance in the group (the heartbeat's `ProcessId`) and in every
//! stream thread's `transactional.id` (`<application.id>-<process id>-<thread>`). Kept, it
//! lets a restarted instance fence its predecessor's producer at once (InitProducerId with
//! the same `transactional.id` aborts what it left open); a new one per start would leave
//! that transaction open, holding `read_committed` readers back until
//! `transaction.timeout.ms`.
//!
//! What Java does, and this module too:
//! * the directory is created if missing (permissions `rwxr-x---`, also on `state.dir` if
//!   it is created here; Java sets them on an existing `state.dir` too) and locked through the
//!   file `.lock` in it; a directory another instance holds is refused ("multiple instances
//!   running in the same state directory") — each instance needs its own `state.dir`;
//! * the file `kafka-streams-process-metadata` holds `{"processId":"<uuid>"}` (Jackson's
//!   output of `StateDirectoryProcessFile`; unknown fields are ignored, as Jackson's
//!   `ignoreUnknown` does);
//! * a file that is unreadable, not JSON, or whose `processId` is not a UUID is logged at
//!   `warn` ("Failed to read json process file") and replaced by a fresh id; one without a
//!   `processId` (or with `null`) gets a fresh id without warning; failing to write the file
//!   fails the start (Java's `ProcessorStateException`).
//!
//! Differences: Java does this only when the topology has persistent stores (else it takes a
//! random id per start); here the stores are in memory and it is done whenever `state.dir` is
//! set. The lock is `flock` (std's `File::try_lock`), Java's is `fcntl`: on Linux they do not
//! see each other, so a Java and a Rust instance must not share a state directory (they
//! would share the process id). The file is replaced atomically (written beside, renamed).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::common::json::{self, Value};
use crate::error::Error;
use crate::streams::membership::random_process_id;

/// Java's `StateDirectory.PROCESS_FILE_NAME`.
pub(crate) const PROCESS_FILE_NAME: &str = "kafka-streams-process-metadata";
/// Java's `StateDirectory.LOCK_FILE_NAME`.
pub(crate) const LOCK_FILE_NAME: &str = ".lock";

/// The application's state directory, locked for as long as this value lives.
#[derive(Debug)]
pub(crate) struct StateDirectory {
    dir: PathBuf,
    /// Held open: closing it (dropping this value, or the process dying) releases the lock.
    _lock: File,
}

/// Where a process id came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ProcessIdSource {
    /// Read from the process file.
    Read,
    /// Fresh: no file, or one without an id.
    Fresh,
    /// Fresh, replacing a file that could not be read (why).
    Replaced(String),
}

impl StateDirectory {
    /// Creates and locks `<base>/<app_id>/`, then reads its process id, or makes a fresh one
    /// and writes it (see the module docs).
    pub(crate) fn open(
        base: &Path,
        app_id: &str,
    ) -> Result<(StateDirectory, String, ProcessIdSource), Error> {
        let dir = base.join(app_id);
        let new_base = !base.exists();
        std::fs::create_dir_all(&dir)
            .map_err(|e| fail(&dir, format!("doesn't exist and couldn't be created: {e}")))?;
        if new_base {
            restrict_permissions(base);
        }
        restrict_permissions(&dir);
        let lock = lock(&dir)?;
        let state = StateDirectory { dir, _lock: lock };
        let file = state.dir.join(PROCESS_FILE_NAME);
        let read = match std::fs::read(&file) {
            Ok(bytes) => Some(
                String::from_utf8(bytes)
                    .map_err(|e| e.to_string())
                    .and_then(|text| parse_process_file(&text)),
            ),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => Some(Err(e.to_string())),
        };
        let source = match read {
            Some(Ok(Some(id))) => {
                log::info!("Reading UUID from process file {}: {id}", file.display());
                return Ok((state, id, ProcessIdSource::Read));
            }
            Some(Ok(None)) | None => ProcessIdSource::Fresh,
            Some(Err(why)) => {
                log::warn!("Failed to read json process file {}: {why}", file.display());
                ProcessIdSource::Replaced(why)
            }
        };
        let id = random_process_id(&mut rand::rng());
        log::info!("No process id found on disk, got fresh process id {id}");
        write_atomically(&file, render_process_file(&id).as_bytes())
            .map_err(|e| fail(&file, format!("unable to write the process file: {e}")))?;
        Ok((state, id, source))
    }

    /// `<state.dir>/<application.id>`.
    pub(crate) fn path(&self) -> &Path {
        &self.dir
    }
}

fn fail(path: &Path, reason: String) -> Error {
    Error::InvalidConfiguration {
        field: "state.dir",
        reason: format!("{}: {reason}", path.display()),
    }
}

fn lock(dir: &Path) -> Result<File, Error> {
    let path = dir.join(LOCK_FILE_NAME);
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| fail(&path, format!("failed to lock the state directory: {e}")))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(fail(
            dir,
            "unable to initialize state, this can happen if multiple instances of Kafka \
             Streams are running in the same state directory (it is locked by another one)"
                .into(),
        )),
        Err(std::fs::TryLockError::Error(e)) => Err(fail(
            &path,
            format!("failed to lock the state directory: {e}"),
        )),
    }
}

#[cfg(unix)]
fn restrict_permissions(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    if let Err(e) = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o750)) {
        log::error!(
            "Error changing permissions for the directory {}: {e}",
            dir.display()
        );
    }
}

#[cfg(not(unix))]
fn restrict_permissions(_dir: &Path) {}

fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    let mut f = File::create(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    drop(f);
    std::fs::rename(&tmp, path)
}

/// The process file's text for `process_id`, byte for byte what Jackson writes for Java's
/// `StateDirectoryProcessFile`.
pub(crate) fn render_process_file(process_id: &str) -> String {
    format!("{{\"processId\":\"{process_id}\"}}")
}

/// Reads a process file as Jackson reads `StateDirectoryProcessFile`: a JSON object whose
/// `processId` is a UUID (returned in Java's lower-case form); other fields are ignored;
/// `Ok(None)` if there is no `processId` or it is `null`; `Err(why)` if the text is not a
/// JSON object or the id not a UUID (Java then warns and takes a fresh id).
pub(crate) fn parse_process_file(text: &str) -> Result<Option<String>, String> {
    let members = json::members(text.as_bytes()).ok_or("not a JSON object")?;
    match members.into_iter().find(|(k, _)| k == "processId") {
        None | Some((_, Value::Null)) => Ok(None),
        Some((_, Value::Str(id))) => uuid(&id).map(Some),
        Some(_) => Err("processId is not a string".into()),
    }
}

/// `s` as a UUID in Java's `toString` form (lower case), if it is one in the canonical
/// 8-4-4-4-12 hex form.
fn uuid(s: &str) -> Result<String, String> {
    let b = s.as_bytes();
    let ok = b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        });
    match ok {
        true => Ok(s.to_ascii_lowercase()),
        false => Err(format!("processId {s:?} is not a UUID")),
    }
}

#[cfg(test)]
#[path = "state_dir_tests.rs"]
mod tests;
