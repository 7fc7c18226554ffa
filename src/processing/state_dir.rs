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
    let mut j = Json {
        s: text.as_bytes(),
        i: 0,
    };
    let mut id = None;
    j.expect(b'{')?;
    if !j.eat(b'}') {
        loop {
            let key = j.string()?;
            j.expect(b':')?;
            if key == "processId" {
                id = match j.peek() {
                    Some(b'n') => {
                        j.literal("null")?;
                        None
                    }
                    Some(b'"') => Some(uuid(&j.string()?)?),
                    _ => return Err("processId is not a string".into()),
                };
            } else {
                j.skip_value(0)?;
            }
            if j.eat(b'}') {
                break;
            }
            j.expect(b',')?;
        }
    }
    Ok(id)
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

/// A minimal JSON reader: enough to find one string field of an object and skip the rest.
struct Json<'a> {
    s: &'a [u8],
    i: usize,
}

impl Json<'_> {
    fn peek(&mut self) -> Option<u8> {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
        self.s.get(self.i).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        let found = self.peek() == Some(c);
        if found {
            self.i += 1;
        }
        found
    }

    fn expect(&mut self, c: u8) -> Result<(), String> {
        match self.eat(c) {
            true => Ok(()),
            false => Err(format!("expected '{}' at byte {}", char::from(c), self.i)),
        }
    }

    fn literal(&mut self, word: &str) -> Result<(), String> {
        self.peek();
        match self.s[self.i..].starts_with(word.as_bytes()) {
            true => {
                self.i += word.len();
                Ok(())
            }
            false => Err(format!("unexpected token at byte {}", self.i)),
        }
    }

    fn string(&mut self) -> Result<String, String> {
        self.expect(b'"')?;
        let mut out = Vec::new();
        loop {
            let c = *self.s.get(self.i).ok_or("unterminated string")?;
            self.i += 1;
            match c {
                b'"' => break,
                b'\\' => {
                    let e = *self.s.get(self.i).ok_or("unterminated string")?;
                    self.i += 1;
                    let ch = match e {
                        b'"' | b'\\' | b'/' => char::from(e),
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let hex = self.s.get(self.i..self.i + 4).ok_or("short \\u escape")?;
                            self.i += 4;
                            let code = std::str::from_utf8(hex)
                                .ok()
                                .and_then(|h| u32::from_str_radix(h, 16).ok())
                                .ok_or("bad \\u escape")?;
                            char::from_u32(code).unwrap_or('\u{fffd}')
                        }
                        _ => return Err(format!("bad escape at byte {}", self.i)),
                    };
                    out.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes());
                }
                c if c < 0x20 => return Err("control character in a string".into()),
                c => out.push(c),
            }
        }
        String::from_utf8(out).map_err(|e| e.to_string())
    }

    fn skip_value(&mut self, depth: usize) -> Result<(), String> {
        if depth > 64 {
            return Err("nested too deep".into());
        }
        match self.peek().ok_or("unexpected end")? {
            b'"' => self.string().map(|_| ()),
            b'{' | b'[' => {
                let close = if self.s[self.i] == b'{' { b'}' } else { b']' };
                self.i += 1;
                if self.eat(close) {
                    return Ok(());
                }
                loop {
                    if close == b'}' {
                        self.string()?;
                        self.expect(b':')?;
                    }
                    self.skip_value(depth + 1)?;
                    if self.eat(close) {
                        return Ok(());
                    }
                    self.expect(b',')?;
                }
            }
            b't' => self.literal("true"),
            b'f' => self.literal("false"),
            b'n' => self.literal("null"),
            b'-' | b'0'..=b'9' => {
                let start = self.i;
                while self
                    .s
                    .get(self.i)
                    .is_some_and(|c| matches!(c, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
                {
                    self.i += 1;
                }
                std::str::from_utf8(&self.s[start..self.i])
                    .ok()
                    .and_then(|n| n.parse::<f64>().ok())
                    .map(|_| ())
                    .ok_or_else(|| format!("bad number at byte {start}"))
            }
            _ => Err(format!("unexpected token at byte {}", self.i)),
        }
    }
}

#[cfg(test)]
#[path = "state_dir_tests.rs"]
mod tests;
