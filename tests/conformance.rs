//! Conformance of the crate's message codecs against Apache Kafka's own (kafka-clients 4.4.0).
//!
//! For every implemented message, kind (request/response) and version, with seeded random
//! values (`KSG_CONFORMANCE_CASES` per direction, default 1000):
//!
//! * (a) the crate encodes a value → the oracle decodes the bytes with Kafka's generated class
//!   (consuming every byte) → Kafka's JSON must equal the crate value's JSON; the crate must
//!   also decode its own bytes back to the value;
//! * (b) the crate value's JSON → the oracle builds Kafka's object and serialises it → the crate
//!   decodes those bytes to an equal value and re-encodes them to identical bytes;
//! * (c) half as many damaged copies of Kafka's bytes (a byte changed, flipped, inserted, or the
//!   body truncated) are decoded by both: where both accept, they must read the same message.
//!   Where only one side accepts, the strictness difference is counted and reported, not failed.
//!
//! One oracle JVM serves the whole run. It is found via `KSG_ORACLE_CMD` (a shell command) or
//! started with `scripts/oracle.sh run`; if it cannot start, the test fails. The default seed is
//! fixed; reproduce another run with `KSG_CONFORMANCE_SEED=<seed printed at the start>`
//! (`random` picks a fresh seed).
//!
//!     cargo test --test conformance -- --ignored --nocapture

#[path = "conformance/model.rs"]
#[macro_use]
mod model;
#[path = "conformance/core.rs"]
mod core_apis;
#[path = "conformance/data.rs"]
mod data_apis;
#[path = "conformance/headers.rs"]
mod headers;
#[path = "conformance/offsets.rs"]
mod offsets;
#[path = "conformance/oracle.rs"]
mod oracle;
#[path = "conformance/records.rs"]
mod records;
#[path = "conformance/streams.rs"]
mod streams;

use kafka_streams_group::protocol::codec::{decode_message, encode_message, ApiMessage};
use model::{Field, Rng};
use serde_json::Value;
use std::fmt::Debug;
use std::fmt::Write as _;

/// Failures kept per message/version/direction (the rest are only counted).
const SHOWN: usize = 3;

struct Run {
    oracle: oracle::Oracle,
    seed: u64,
    cases: usize,
    total: usize,
    failures: Vec<String>,
    failed_groups: Vec<String>,
    /// Damaged inputs only one side accepts, by kind: (count, first example). Informational.
    samples: std::collections::BTreeMap<String, (usize, String)>,
}

fn hex(b: &[u8]) -> String {
    b.iter()
        .fold(String::with_capacity(b.len() * 2), |mut s, x| {
            let _ = write!(s, "{x:02x}");
            s
        })
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// The JSON Kafka's converter writes for a value whose JSON the model wrote: the same, except
/// that non-null `records` (Fetch and Produce record payloads) are written as an empty byte
/// string (the generated converters never serialise record contents, only a placeholder).
/// Reading JSON, Kafka does take the bytes, so direction (b) still checks record contents.
fn kafka_writes(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .map(|(k, v)| match (k.as_str(), v) {
                    ("records", Value::String(_)) => (k, Value::String(String::new())),
                    (_, v) => (k, kafka_writes(v)),
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.into_iter().map(kafka_writes).collect()),
        other => other,
    }
}

/// Paths at which two JSON values differ (for readable failure reports).
fn diff(a: &Value, b: &Value, path: &str, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, v) in x {
                match y.get(k) {
                    Some(w) => diff(v, w, &format!("{path}.{k}"), out),
                    None => out.push(format!("{path}.{k}: crate {v}, Kafka has no such field")),
                }
            }
            for (k, w) in y {
                if !x.contains_key(k) {
                    out.push(format!("{path}.{k}: crate has no such field, Kafka {w}"));
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                diff(v, w, &format!("{path}[{i}]"), out);
            }
        }
        _ if a != b => out.push(format!("{path}: crate {a}, Kafka {b}")),
        _ => {}
    }
}

/// A per-group seed, so each message/version/direction reproduces on its own.
fn group_seed(seed: u64, key: i16, kind: &str, version: i16, dir: u8) -> u64 {
    let mut r = Rng::new(seed ^ ((key as u64) << 32) ^ ((version as u64) << 16) ^ u64::from(dir));
    r.next() ^ if kind == "request" { 0 } else { 0x5555_5555 }
}

impl Run {
    fn note(&mut self, kind: String, example: impl FnOnce() -> String) {
        self.samples.entry(kind).or_insert_with(|| (0, example())).0 += 1;
    }

    fn fail(&mut self, shown: &mut usize, group: &str, msg: String) {
        if *shown < SHOWN {
            self.failures.push(format!("{group}: {msg}"));
        }
        *shown += 1;
    }

    /// Both directions for message `M` at `version`.
    fn check<M>(&mut self, kind: &'static str, version: i16)
    where
        M: ApiMessage + Field + PartialEq + Debug,
    {
        let key = if M::API_KEY == headers::HEADER_KEY {
            "header".to_owned()
        } else {
            M::API_KEY.to_string()
        };
        let group = format!("{} v{version}", M::NAME);

        // (a) crate bytes -> Kafka decode -> JSON equal.
        let mut r = Rng::new(group_seed(self.seed, M::API_KEY, kind, version, b'a'));
        let values: Vec<M> = (0..self.cases)
            .map(|_| M::gen(&mut r, version, false))
            .collect();
        let mut shown = 0;
        let mut cmds = Vec::with_capacity(values.len());
        let mut encoded: Vec<(usize, String)> = Vec::with_capacity(values.len());
        for (i, v) in values.iter().enumerate() {
            let mut buf = Vec::new();
            match encode_message(&mut buf, v, version) {
                Ok(()) => {
                    match decode_message::<M>(&buf, version) {
                        Ok(back) if &back == v => {}
                        Ok(back) => self.fail(&mut shown, &group, format!("(a#{i}) crate round-trip changed the value:\n  value {v:?}\n  back  {back:?}")),
                        Err(e) => self.fail(&mut shown, &group, format!("(a#{i}) crate cannot decode its own bytes {}: {e}", hex(&buf))),
                    }
                    let h = hex(&buf);
                    cmds.push(format!("decode {key} {version} {kind} {h}"));
                    encoded.push((i, h));
                }
                Err(e) => self.fail(
                    &mut shown,
                    &group,
                    format!("(a#{i}) crate cannot encode {v:?}: {e}"),
                ),
            }
        }
        let answers = self.oracle.batch(&cmds);
        for ((i, bytes), answer) in encoded.iter().zip(&answers) {
            let i = *i;
            let want = kafka_writes(values[i].json(version));
            match answer.strip_prefix("ok ") {
                Some(json) => match serde_json::from_str::<Value>(json) {
                    Ok(got) if got == want => {}
                    Ok(got) => {
                        let mut d = Vec::new();
                        diff(&want, &got, "", &mut d);
                        let msg = format!("(a#{i}) Kafka decodes the crate's bytes differently: {}\n  bytes {bytes}", d.join("; "));
                        self.fail(&mut shown, &group, msg);
                    }
                    Err(e) => self.fail(
                        &mut shown,
                        &group,
                        format!("(a#{i}) oracle JSON unparsable: {e}"),
                    ),
                },
                None => {
                    let msg = format!("(a#{i}) Kafka rejects the crate's bytes: {answer}\n  value {:?}\n  bytes {bytes}", values[i]);
                    self.fail(&mut shown, &group, msg);
                }
            }
        }
        let a_failed = shown;

        // (b) crate JSON -> Kafka bytes -> crate decode equal, re-encode identical.
        let mut r = Rng::new(group_seed(self.seed, M::API_KEY, kind, version, b'b'));
        let values: Vec<M> = (0..self.cases)
            .map(|_| M::gen(&mut r, version, false))
            .collect();
        let mut shown = 0;
        let cmds: Vec<String> = values
            .iter()
            .map(|v| format!("encode {key} {version} {kind} {}", v.json(version)))
            .collect();
        let answers = self.oracle.batch(&cmds);
        let mut kafka_bytes = Vec::with_capacity(answers.len());
        for (i, (v, answer)) in values.iter().zip(&answers).enumerate() {
            let Some(bytes) = answer.strip_prefix("ok ").and_then(unhex) else {
                self.fail(
                    &mut shown,
                    &group,
                    format!(
                        "(b#{i}) Kafka cannot encode the crate's JSON: {answer}\n  json {}",
                        v.json(version)
                    ),
                );
                continue;
            };
            kafka_bytes.push(bytes.clone());
            match decode_message::<M>(&bytes, version) {
                Ok(back) => {
                    if &back != v {
                        self.fail(&mut shown, &group, format!("(b#{i}) crate decodes Kafka's bytes to a different value:\n  bytes {}\n  want {v:?}\n  got  {back:?}", hex(&bytes)));
                        continue;
                    }
                    let mut again = Vec::new();
                    match encode_message(&mut again, &back, version) {
                        Ok(()) if again == bytes => {}
                        Ok(()) => self.fail(
                            &mut shown,
                            &group,
                            format!(
                                "(b#{i}) crate re-encodes differently:\n  Kafka {}\n  crate {}",
                                hex(&bytes),
                                hex(&again)
                            ),
                        ),
                        Err(e) => self.fail(
                            &mut shown,
                            &group,
                            format!("(b#{i}) crate cannot re-encode: {e}"),
                        ),
                    }
                }
                Err(e) => self.fail(
                    &mut shown,
                    &group,
                    format!(
                        "(b#{i}) crate cannot decode Kafka's bytes {}: {e}",
                        hex(&bytes)
                    ),
                ),
            }
        }
        let b_failed = shown;

        // (c) differential decoding of damaged Kafka bytes: where both sides accept the
        // bytes, they must read the same message. Where only one side accepts, that is a
        // difference in strictness (e.g. Java replaces invalid UTF-8, the crate rejects it):
        // counted and sampled, not failed.
        let mut r = Rng::new(group_seed(self.seed, M::API_KEY, kind, version, b'c'));
        let mut damaged = Vec::new();
        for _ in 0..self.cases / 2 {
            if kafka_bytes.is_empty() {
                break;
            }
            let mut b = kafka_bytes[r.below(kafka_bytes.len() as u64) as usize].clone();
            let at = r.below(b.len() as u64 + 1) as usize;
            match r.below(4) {
                0 if at < b.len() => b[at] = r.next() as u8,
                1 => b.truncate(at),
                2 => b.insert(at, r.next() as u8),
                _ if at < b.len() => b[at] ^= 1 << r.below(8),
                _ => b.push(0),
            }
            damaged.push(b);
        }
        let cmds: Vec<String> = damaged
            .iter()
            .map(|b| format!("decode {key} {version} {kind} {}", hex(b)))
            .collect();
        let answers = self.oracle.batch(&cmds);
        let mut shown = 0;
        let (mut both_ok, mut both_err, mut kafka_only, mut crate_only) = (0, 0, 0, 0);
        for (i, (b, answer)) in damaged.iter().zip(&answers).enumerate() {
            let ours = decode_message::<M>(b, version);
            match (ours, answer.strip_prefix("ok ")) {
                (Ok(v), Some(json)) => {
                    both_ok += 1;
                    let got: Value = serde_json::from_str(json).unwrap_or(Value::Null);
                    let want = kafka_writes(v.json(version));
                    if got != want {
                        let mut d = Vec::new();
                        diff(&want, &got, "", &mut d);
                        let msg = format!("(c#{i}) both accept damaged bytes but read them differently: {}\n  bytes {}", d.join("; "), hex(b));
                        self.fail(&mut shown, &group, msg);
                    }
                }
                (Err(_), None) => both_err += 1,
                (Err(e), Some(_)) => {
                    kafka_only += 1;
                    // Keyed by the crate's error variant, e.g. `InvalidUtf8`.
                    let kind = format!("{e:?}")
                        .split([' ', '{', '('])
                        .next()
                        .unwrap_or("")
                        .to_owned();
                    self.note(format!("only Kafka accepts; crate error {kind}"), || {
                        format!("{group}: {} (crate: {e})", hex(b))
                    });
                }
                (Ok(_), None) => {
                    crate_only += 1;
                    let kind = answer.split([':', ' ']).nth(1).unwrap_or("").to_owned();
                    self.note(
                        format!("only the crate accepts; Kafka error {kind}"),
                        || format!("{group}: {} (Kafka: {answer})", hex(b)),
                    );
                }
            }
        }
        let c_failed = shown;

        // (d) values made for another version, encoded at this one: Kafka drops what the
        // version cannot carry if it is ignorable or default, and refuses otherwise (also for
        // a null the version cannot carry). The crate must make the same choice, and produce
        // the same bytes when both encode.
        let mut r = Rng::new(group_seed(self.seed, M::API_KEY, kind, version, b'd'));
        let span = (M::MAX_VERSION - M::MIN_VERSION + 1) as u64;
        let foreign: Vec<M> = (0..self.cases / 2)
            .map(|_| {
                let w = M::MIN_VERSION + r.below(span) as i16;
                M::gen(&mut r, w, false)
            })
            .collect();
        let cmds: Vec<String> = foreign
            .iter()
            .map(|v| {
                format!(
                    "encode {key} {version} {kind} {}",
                    v.json(model::ALL_FIELDS)
                )
            })
            .collect();
        let answers = self.oracle.batch(&cmds);
        let mut shown = 0;
        let (mut d_ok, mut d_err, mut d_skip) = (0, 0, 0);
        for (i, (v, answer)) in foreign.iter().zip(&answers).enumerate() {
            // Kafka's JSON converter cannot even read a nested struct at a version the struct
            // does not exist in (its binary writer would have dropped it, being ignorable);
            // such cases say nothing about the crate.
            if answer.contains("UnsupportedVersionException: Can't read version") {
                d_skip += 1;
                continue;
            }
            let mut ours = Vec::new();
            let ours = encode_message(&mut ours, v, version).map(|()| ours);
            match (ours, answer.strip_prefix("ok ").and_then(unhex)) {
                (Ok(a), Some(b)) if a == b => d_ok += 1,
                (Ok(a), Some(b)) => self.fail(&mut shown, &group, format!("(d#{i}) crate and Kafka encode a foreign-version value differently:\n  value {v:?}\n  crate {}\n  Kafka {}", hex(&a), hex(&b))),
                (Err(_), None) => d_err += 1,
                (Ok(a), None) => self.fail(&mut shown, &group, format!("(d#{i}) crate encodes what Kafka refuses ({answer}):\n  value {v:?}\n  crate {}", hex(&a))),
                (Err(e), Some(_)) => self.fail(&mut shown, &group, format!("(d#{i}) crate refuses what Kafka encodes: {e}\n  value {v:?}")),
            }
        }
        let d_failed = shown;

        self.total += 2 * self.cases + damaged.len() + foreign.len();
        let failed = a_failed + b_failed + c_failed + d_failed;
        let status = if failed == 0 {
            "ok".to_owned()
        } else {
            format!("FAILED (a: {a_failed}, b: {b_failed}, c: {c_failed}, d: {d_failed})")
        };
        eprintln!(
            "conformance: {group:<34} {kind:<8} a {} b {} c {} (agree {both_ok} ok/{both_err} err, only Kafka {kafka_only}, only crate {crate_only}) d {} (both {d_ok} ok/{d_err} refused, {d_skip} not testable)  {status}",
            self.cases, self.cases, damaged.len(), foreign.len()
        );
        if failed > 0 {
            self.failed_groups.push(group);
        }
    }

    /// All versions of a request/response pair; `versions` is what the crate must implement.
    fn pair<Req, Resp>(&mut self, versions: std::ops::RangeInclusive<i16>)
    where
        Req: ApiMessage + Field + PartialEq + Debug,
        Resp: ApiMessage + Field + PartialEq + Debug,
    {
        for (name, min, max) in [
            (Req::NAME, Req::MIN_VERSION, Req::MAX_VERSION),
            (Resp::NAME, Resp::MIN_VERSION, Resp::MAX_VERSION),
        ] {
            if (min, max) != (*versions.start(), *versions.end()) {
                self.failures.push(format!(
                    "{name}: the crate implements v{min}-{max}, expected {versions:?}"
                ));
                self.failed_groups.push(name.to_owned());
            }
        }
        for v in versions {
            self.check::<Req>("request", v);
            self.check::<Resp>("response", v);
        }
    }
}

#[test]
#[ignore = "needs the Kafka oracle (scripts/test.sh runs it)"]
fn conformance_against_kafka() {
    let seed = match std::env::var("KSG_CONFORMANCE_SEED").as_deref() {
        Ok("random") => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1),
        Ok(s) => s
            .parse()
            .expect("KSG_CONFORMANCE_SEED must be a u64 or 'random'"),
        Err(_) => 0x6b73_675f_3130_3731, // fixed default: CI runs are reproducible
    };
    let cases = std::env::var("KSG_CONFORMANCE_CASES")
        .ok()
        .map(|s| s.parse().expect("KSG_CONFORMANCE_CASES must be a number"))
        .unwrap_or(1000);
    eprintln!("conformance: seed {seed} (KSG_CONFORMANCE_SEED={seed} reproduces), {cases} cases per direction");
    let started = std::time::Instant::now();
    let mut run = Run {
        oracle: oracle::Oracle::start(),
        seed,
        cases,
        total: 0,
        failures: Vec::new(),
        failed_groups: Vec::new(),
        samples: Default::default(),
    };

    headers::run(&mut run);
    core_apis::run(&mut run);
    streams::run(&mut run);
    offsets::run(&mut run);
    data_apis::run(&mut run);

    for (kind, (n, example)) in &run.samples {
        eprintln!("conformance: strictness differs ({n}x): {kind}, e.g. {example}");
    }
    eprintln!(
        "conformance: {} cases against Kafka in {:.1}s, {} failing message versions",
        run.total,
        started.elapsed().as_secs_f64(),
        run.failed_groups.len()
    );
    assert!(
        run.failed_groups.is_empty(),
        "conformance failures (seed {seed}) in {}:\n{}",
        run.failed_groups.join(", "),
        run.failures.join("\n")
    );
}

/// Record batches of every codec and the default partitioner against Kafka's own classes
/// (`KSG_CONFORMANCE_RECORD_BATCHES` per codec and direction, default 100).
#[test]
#[ignore = "needs the Kafka oracle (scripts/test.sh runs it)"]
fn records_conformance_against_kafka() {
    let seed = match std::env::var("KSG_CONFORMANCE_SEED") {
        Ok(s) => s.parse().unwrap_or(1),
        Err(_) => 0x7265_636f_7264_7331,
    };
    let per_codec = std::env::var("KSG_CONFORMANCE_RECORD_BATCHES")
        .ok()
        .map(|s| {
            s.parse()
                .expect("KSG_CONFORMANCE_RECORD_BATCHES must be a number")
        })
        .unwrap_or(100);
    eprintln!("records conformance: seed {seed}, {per_codec} batches per codec");
    let mut oracle = oracle::Oracle::start();
    let failures = records::run(&mut oracle, seed, per_codec);
    assert!(
        failures.is_empty(),
        "{} records conformance failures (seed {seed}):\n{}",
        failures.len(),
        failures
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn model_helpers() {
    assert_eq!(model::base64(b""), "");
    assert_eq!(model::base64(b"f"), "Zg==");
    assert_eq!(model::base64(b"fo"), "Zm8=");
    assert_eq!(model::base64(b"foo"), "Zm9v");
    assert_eq!(model::base64(&[0xfb, 0xff]), "+/8=");
    let (mut a, mut b) = (Rng::new(7), Rng::new(7));
    assert!((0..100).all(|_| a.next() == b.next()));
    assert_eq!(unhex(&hex(&[0, 1, 0xab])), Some(vec![0, 1, 0xab]));
    let mut d = Vec::new();
    diff(
        &serde_json::json!({"a": [1, 2], "b": 1}),
        &serde_json::json!({"a": [1, 3], "c": 1}),
        "",
        &mut d,
    );
    assert_eq!(d.len(), 3, "{d:?}");
}
