//! The Kafka oracle process (testing/oracle): spawned once, driven over pipes.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// A running oracle JVM.
pub struct Oracle {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Oracle {
    /// Starts the oracle: `$KSG_ORACLE_CMD` if set (a shell command), else
    /// `scripts/oracle.sh run`, which builds it first if needed. Panics (fails the test) if it
    /// cannot be started or does not answer `ping`.
    pub fn start() -> Oracle {
        let cmd = std::env::var("KSG_ORACLE_CMD")
            .unwrap_or_else(|_| format!("'{}/scripts/oracle.sh' run", env!("CARGO_MANIFEST_DIR")));
        eprintln!("conformance: starting oracle: {cmd}");
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(&cmd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot spawn the Kafka oracle ({cmd}): {e}"));
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut o = Oracle {
            child,
            stdin: Some(stdin),
            stdout,
        };
        match o.ping().as_deref() {
            Some("ok pong") => o,
            other => panic!(
                "the Kafka oracle ({cmd}) did not start (answer {other:?}); it needs java 17 and \
                 mvn (first build fetches kafka-clients from Maven Central); try scripts/oracle.sh build"
            ),
        }
    }

    /// One `ping` round trip, without panicking if the process is gone.
    fn ping(&mut self) -> Option<String> {
        let stdin = self.stdin.as_mut()?;
        stdin.write_all(b"ping\n").ok()?;
        stdin.flush().ok()?;
        let mut line = String::new();
        match self.stdout.read_line(&mut line) {
            Ok(n) if n > 0 => Some(line.trim_end().to_owned()),
            _ => None,
        }
    }

    /// Sends every command and returns one answer line per command, in order.
    ///
    /// Commands are written from a second thread while answers are read here: the JVM answers
    /// as it reads, and with both pipes full a single-threaded writer would deadlock.
    pub fn batch(&mut self, commands: &[String]) -> Vec<String> {
        let stdin = self.stdin.as_mut().expect("oracle stdin open");
        let stdout = &mut self.stdout;
        std::thread::scope(|s| {
            let writer = s.spawn(move || -> std::io::Result<()> {
                let mut w = std::io::BufWriter::with_capacity(1 << 16, &mut *stdin);
                for c in commands {
                    debug_assert!(!c.contains('\n'));
                    w.write_all(c.as_bytes())?;
                    w.write_all(b"\n")?;
                }
                w.flush()
            });
            let mut answers = Vec::with_capacity(commands.len());
            let mut line = String::new();
            for _ in commands {
                line.clear();
                let n = stdout.read_line(&mut line).unwrap_or(0);
                if n == 0 {
                    break;
                }
                answers.push(line.trim_end_matches(['\n', '\r']).to_owned());
            }
            let wrote = writer.join().expect("writer thread");
            assert!(
                answers.len() == commands.len(),
                "the Kafka oracle exited early ({} of {} answers; write result {wrote:?})",
                answers.len(),
                commands.len()
            );
            answers
        })
    }
}

impl Drop for Oracle {
    fn drop(&mut self) {
        // Closing stdin ends the oracle's read loop; wait so no JVM outlives the test.
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}
