//! The Java Kafka Streams peer (testing/streams-peer) as live tests drive it: a child process
//! speaking the control protocol on stdin/stdout, killed when dropped. (The same helper as in
//! tests/live_interop.rs, shared here for the offset tests.)

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use kafka_streams_group::StreamsTaskId;

/// A running Java Kafka Streams peer. Killed (SIGKILL) and reaped on drop.
pub struct Peer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// Every `state …` line seen so far, in order.
    pub states: Vec<String>,
    /// Other asynchronous lines (`uncaught …`, `closed`).
    pub events: Vec<String>,
    name: String,
}

pub struct PeerOptions<'a> {
    pub group: &'a str,
    pub input: &'a str,
    pub app_server: Option<String>,
    pub tags: Vec<(&'a str, &'a str)>,
}

impl Peer {
    pub fn start(cluster: &super::Cluster, opts: PeerOptions<'_>) -> Peer {
        Peer::start_with(cluster, opts, &[])
    }

    /// [`start`](Self::start) with extra peer arguments after the usual ones (a repeated
    /// option wins, e.g. `["--topology", "wordcount", "--output", "counts"]`).
    pub fn start_with(cluster: &super::Cluster, opts: PeerOptions<'_>, extra: &[&str]) -> Peer {
        let script = std::env::var_os("KSG_STREAMS_PEER")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/streams-peer.sh")
            });
        let log_file =
            PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{}-peer.log", opts.group));
        let mut cmd = Command::new("bash");
        cmd.arg(&script)
            .arg("run")
            .args(["--group", opts.group])
            .args(["--bootstrap", cluster.plaintext()])
            .args(["--input", opts.input])
            .args(["--output", &format!("{}-out", opts.group)])
            .arg("--log-file")
            .arg(&log_file)
            .args(extra);
        if let Some(s) = &opts.app_server {
            cmd.args(["--app-server", s]);
        }
        for (k, v) in &opts.tags {
            cmd.args(["--tag", &format!("{k}={v}")]);
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start the Java peer {}: {e}", script.display()));
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        let mut peer = Peer {
            child,
            stdin,
            lines,
            states: Vec::new(),
            events: Vec::new(),
            name: format!("peer[{}]", opts.group),
        };
        // `ready` comes once the KafkaStreams instance is built (JVM start: a few seconds;
        // the first run may build the peer first).
        peer.expect_line(Duration::from_secs(60), |l| l == "ready");
        eprintln!(
            "{}: ready (pid {}, log {})",
            peer.name,
            peer.pid(),
            log_file.display()
        );
        peer
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Next line, filing `state …`/`uncaught …` lines away; None on timeout or EOF.
    pub fn next_line(&mut self, deadline: Instant) -> Option<String> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(left) {
            Ok(line) => {
                if let Some(s) = line.strip_prefix("state ") {
                    self.states.push(s.to_string());
                } else if line.starts_with("uncaught ") || line == "closed" {
                    self.events.push(line.clone());
                }
                Some(line)
            }
            Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => None,
        }
    }

    /// Reads lines until one matches; panics after `timeout`.
    pub fn expect_line(&mut self, timeout: Duration, want: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            match self.next_line(deadline) {
                Some(l) if want(&l) => return l,
                Some(_) => {}
                None => panic!(
                    "{}: no expected line within {timeout:?} (states {:?}, events {:?})",
                    self.name, self.states, self.events
                ),
            }
        }
    }

    /// Sends a command and returns its reply (the first line starting with the command's name,
    /// `ok` or `err`), skipping asynchronous lines. Commands are answered in order.
    pub fn command(&mut self, line: &str) -> String {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{line}").expect("write to peer");
        stdin.flush().expect("flush peer stdin");
        let name = line
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_string();
        assert_ne!(name, "state", "the `state` reply is ambiguous; use `info`");
        let reply = self.expect_line(Duration::from_secs(30), |l| {
            l.starts_with(&format!("{name} "))
                || l == name
                || l.starts_with(&format!("ok {name}"))
                || l.starts_with("err ")
        });
        assert!(
            !reply.starts_with("err "),
            "{}: {line} -> {reply}",
            self.name
        );
        reply
    }

    /// The active tasks the Java instance runs now (`tasks` command).
    pub fn active_tasks(&mut self) -> BTreeSet<StreamsTaskId> {
        let reply = self.command("tasks");
        let active = reply
            .split_whitespace()
            .find_map(|w| w.strip_prefix("active="))
            .unwrap_or_else(|| panic!("odd tasks reply {reply:?}"));
        parse_task_list(active)
    }

    /// Java's active tasks, checked against `rust_running` (the tasks the Rust side runs now,
    /// read first): a task in both is looked at again for up to 2 s, and panics if Java still
    /// lists it. Java's `metadataForLocalThreads()` is refreshed by the stream thread's loop,
    /// so right after a revocation it can still list a task the thread already suspended and
    /// released to the broker (seen once in CI on 4.3.1); a task really running on both
    /// stays listed.
    pub fn active_tasks_disjoint_from(
        &mut self,
        rust_running: &BTreeSet<StreamsTaskId>,
    ) -> BTreeSet<StreamsTaskId> {
        let first = self.active_tasks();
        let mut theirs = first.clone();
        let until = Instant::now() + Duration::from_secs(2);
        while !theirs.is_disjoint(rust_running) {
            assert!(
                Instant::now() < until,
                "{}: tasks {:?} active on Java and Rust at once for 2 s (java {theirs:?}, \
                 rust {rust_running:?})",
                self.name,
                theirs.intersection(rust_running).collect::<Vec<_>>()
            );
            std::thread::sleep(Duration::from_millis(100));
            theirs = self.active_tasks();
        }
        if theirs != first {
            eprintln!(
                "{}: Java's thread metadata lagged: {first:?}, then {theirs:?} (rust {rust_running:?})",
                self.name
            );
        }
        theirs
    }

    /// A field of the `info` JSON (a string value).
    pub fn info_field(&mut self, key: &str) -> String {
        let reply = self.command("info");
        json_string_field(&reply, key).unwrap_or_else(|| panic!("no {key} in {reply:?}"))
    }

    /// Waits until a `state` line matching `want` arrived (or had arrived).
    pub fn wait_state(&mut self, timeout: Duration, want: impl Fn(&str) -> bool) -> String {
        if let Some(s) = self.states.iter().find(|s| want(s)) {
            return s.clone();
        }
        let line = self.expect_line(timeout, |l| l.strip_prefix("state ").is_some_and(&want));
        line.trim_start_matches("state ").to_string()
    }

    /// `close` (leave the group) and wait for `closed` and the exit.
    pub fn close(mut self) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "close").expect("write close");
        stdin.flush().expect("flush");
        self.expect_line(Duration::from_secs(40), |l| l == "closed");
        let _ = self.stdin.take();
        let status = self.child.wait().expect("wait for peer");
        assert!(status.success(), "{}: exit {status}", self.name);
    }

    /// SIGKILL: the member stays in the group until the broker's session timeout.
    pub fn kill_hard(mut self) {
        let pid = self.pid().to_string();
        let status = Command::new("kill")
            .args(["-9", &pid])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -9 {pid}");
        let _ = self.child.wait();
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// `0_0,1_3` → task ids; an empty string is no tasks.
pub fn parse_task_list(s: &str) -> BTreeSet<StreamsTaskId> {
    s.split(',')
        .filter(|t| !t.is_empty())
        .map(|t| {
            let (sub, p) = t
                .rsplit_once('_')
                .unwrap_or_else(|| panic!("bad task id {t:?}"));
            StreamsTaskId::new(sub, p.parse().expect("task partition"))
        })
        .collect()
}

/// The string value of `"key":"value"` in a flat JSON text (enough for the peer's replies).
pub fn json_string_field(json: &str, key: &str) -> Option<String> {
    let at = json.find(&format!("\"{key}\":\""))? + key.len() + 4;
    let rest = &json[at..];
    Some(rest[..rest.find('"')?].to_string())
}
