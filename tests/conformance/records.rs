//! Record batches and the default partitioner against Kafka's own `MemoryRecords`,
//! `MemoryRecordsBuilder`, `Utils.murmur2` and `BuiltInPartitioner` (oracle commands
//! `records-write`, `records-marker`, `records-read`, `partition`).
//!
//! * Java writes batches of every codec → the crate decodes them to the records Java reads
//!   back from the same bytes, and to the records that were written;
//! * the crate writes the same batches → Java reads them (CRC checked) to equal records; for
//!   `none` the crate's bytes are identical to Java's;
//! * Java's commit/abort markers → the crate recognises them and its read_committed filter
//!   drops exactly the aborted transaction's data;
//! * random keys → the crate's murmur2 and partition equal Java's.

use crate::model::Rng;
use crate::{hex, oracle::Oracle, unhex};
use kafka_streams_group::protocol::records::{
    murmur2, partition_for_key, AbortedTransaction, Admit, BatchBuilder, BatchReader, Compression,
    ControlRecordType, DecodeLimits, Header, ReadCommitted, RecordBatch, RecordSpec,
};
use serde_json::{json, Value};

struct SpecRecord {
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
    headers: Vec<(String, Option<Vec<u8>>)>,
    timestamp: i64,
}

struct SpecBatch {
    codec: Compression,
    base_offset: i64,
    leader_epoch: i32,
    producer_id: i64,
    producer_epoch: i16,
    base_sequence: i32,
    transactional: bool,
    records: Vec<SpecRecord>,
}

fn bytes(r: &mut Rng, big: bool) -> Option<Vec<u8>> {
    if r.one_in(8) {
        return None;
    }
    let n = if big && r.one_in(300) {
        100 * 1024
    } else {
        [0, 1, 5, 20, 200, 3000][r.below(6) as usize]
    };
    // Half compressible text, half noise.
    Some(if r.one_in(2) {
        (0..n).map(|i| b"kafka-streams-"[i % 14]).collect()
    } else {
        (0..n).map(|_| r.next() as u8).collect()
    })
}

fn gen_batch(r: &mut Rng, codec: Compression) -> SpecBatch {
    let idempotent = !r.one_in(3);
    let most = if r.one_in(5) { 300 } else { 12 };
    let n = 1 + r.below(most) as usize;
    let base_ts = r.below(1 << 41) as i64;
    let records = (0..n)
        .map(|_| SpecRecord {
            key: bytes(r, false),
            value: bytes(r, true),
            headers: (0..r.len())
                .map(|i| {
                    let pick = r.below(4) as usize;
                    let key = ["", "trace-id", "ü-header", "k"][(i + pick) % 4];
                    (key.to_owned(), bytes(r, false))
                })
                .collect(),
            timestamp: match r.below(10) {
                0 => -1,
                1 => base_ts - r.below(100_000) as i64,
                _ => base_ts + r.below(100_000) as i64,
            },
        })
        .collect();
    SpecBatch {
        codec,
        base_offset: r.below(1 << 40) as i64,
        leader_epoch: if r.one_in(2) {
            -1
        } else {
            r.below(1000) as i32
        },
        producer_id: if idempotent {
            r.below(1 << 40) as i64
        } else {
            -1
        },
        producer_epoch: if idempotent {
            r.below(32768) as i16
        } else {
            -1
        },
        base_sequence: if idempotent {
            if r.one_in(5) {
                i32::MAX - r.below(5) as i32
            } else {
                r.below(1 << 30) as i32
            }
        } else {
            -1
        },
        transactional: idempotent && r.one_in(3),
        records,
    }
}

fn opt_hex(b: &Option<Vec<u8>>) -> Value {
    b.as_ref().map_or(Value::Null, |b| Value::String(hex(b)))
}

/// The `records-write` command for a spec.
fn write_cmd(s: &SpecBatch) -> String {
    let records: Vec<Value> = s
        .records
        .iter()
        .map(|r| {
            json!({
                "timestamp": r.timestamp,
                "key": opt_hex(&r.key),
                "value": opt_hex(&r.value),
                "headers": r.headers.iter().map(|(k, v)| json!({"key": k, "value": opt_hex(v)})).collect::<Vec<_>>(),
            })
        })
        .collect();
    let spec = json!({
        "compression": s.codec.name(),
        "baseOffset": s.base_offset,
        "partitionLeaderEpoch": s.leader_epoch,
        "producerId": s.producer_id,
        "producerEpoch": s.producer_epoch,
        "baseSequence": s.base_sequence,
        "transactional": s.transactional,
        "records": records,
    });
    format!("records-write {spec}")
}

/// The crate's encoding of a spec.
fn encode(s: &SpecBatch) -> Vec<u8> {
    let mut b = BatchBuilder::new(s.codec)
        .base_offset(s.base_offset)
        .partition_leader_epoch(s.leader_epoch)
        .producer(s.producer_id, s.producer_epoch, s.base_sequence)
        .transactional(s.transactional);
    for r in &s.records {
        let headers: Vec<Header<'_>> = r
            .headers
            .iter()
            .map(|(k, v)| Header {
                key: k.as_bytes(),
                value: v.as_deref(),
            })
            .collect();
        let spec = RecordSpec::new(r.key.as_deref(), r.value.as_deref(), r.timestamp)
            .with_headers(&headers);
        b.push(&spec).expect("encodable record");
    }
    let mut out = Vec::new();
    b.finish(&mut out).expect("encodable batch");
    out
}

/// A decoded batch in the JSON shape of the oracle's `records-read`.
fn batch_json(b: &RecordBatch<'_>) -> Value {
    let h = &b.header;
    let records: Vec<Value> = b
        .records()
        .map(|r| {
            let opt = |x: Option<&[u8]>| x.map_or(Value::Null, |x| Value::String(hex(x)));
            json!({
                "offset": r.offset,
                "timestamp": r.timestamp,
                "sequence": r.sequence,
                "key": opt(r.key),
                "value": opt(r.value),
                "headers": r.headers().map(|h| json!({"key": h.key_str(), "value": opt(h.value)})).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "baseOffset": h.base_offset,
        "lastOffset": h.last_offset(),
        "partitionLeaderEpoch": h.partition_leader_epoch,
        "magic": h.magic,
        "crc": h.crc,
        "compression": h.attributes.compression.name(),
        "timestampType": match h.attributes.timestamp_type {
            kafka_streams_group::protocol::records::TimestampType::CreateTime => "CreateTime",
            kafka_streams_group::protocol::records::TimestampType::LogAppendTime => "LogAppendTime",
        },
        "maxTimestamp": h.max_timestamp,
        "producerId": h.producer_id,
        "producerEpoch": h.producer_epoch,
        "baseSequence": h.base_sequence,
        "transactional": h.attributes.transactional,
        "control": h.attributes.control,
        "count": h.records_count,
        "records": records,
    })
}

/// What any reader must see for a spec (everything but the CRC).
fn spec_json(s: &SpecBatch) -> Value {
    let n = s.records.len() as i64;
    let records: Vec<Value> = s
        .records
        .iter()
        .enumerate()
        .map(|(i, r)| {
            json!({
                "offset": s.base_offset + i as i64,
                "timestamp": r.timestamp,
                "sequence": if s.base_sequence < 0 { -1 } else { ((s.base_sequence as i64 + i as i64) % (1i64 << 31)) as i32 },
                "key": opt_hex(&r.key),
                "value": opt_hex(&r.value),
                "headers": r.headers.iter().map(|(k, v)| json!({"key": k, "value": opt_hex(v)})).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "baseOffset": s.base_offset,
        "lastOffset": s.base_offset + n - 1,
        "partitionLeaderEpoch": s.leader_epoch,
        "magic": 2,
        "compression": s.codec.name(),
        "timestampType": "CreateTime",
        "maxTimestamp": s.records.iter().map(|r| r.timestamp).max().unwrap_or(-1),
        "producerId": s.producer_id,
        "producerEpoch": s.producer_epoch,
        "baseSequence": s.base_sequence,
        "transactional": s.transactional,
        "control": false,
        "count": n,
        "records": records,
    })
}

fn without_crc(mut v: Value) -> Value {
    if let Some(o) = v.as_object_mut() {
        o.remove("crc");
    }
    v
}

fn crate_read(bytes: &[u8]) -> Result<Vec<Value>, String> {
    let mut reader = BatchReader::new(bytes);
    let mut out = Vec::new();
    for raw in reader.by_ref() {
        let raw = raw.map_err(|e| e.to_string())?;
        let b = raw
            .decode(&DecodeLimits::default())
            .map_err(|e| e.to_string())?;
        out.push(batch_json(&b));
    }
    if !reader.remainder().is_empty() {
        return Err(format!("{} trailing bytes", reader.remainder().len()));
    }
    Ok(out)
}

fn java_read(oracle: &mut Oracle, blobs: &[Vec<u8>]) -> Vec<Result<Vec<Value>, String>> {
    let cmds: Vec<String> = blobs
        .iter()
        .map(|b| format!("records-read {}", hex(b)))
        .collect();
    oracle
        .batch(&cmds)
        .into_iter()
        .map(|a| match a.strip_prefix("ok ") {
            Some(j) => match serde_json::from_str::<Value>(j) {
                Ok(Value::Array(v)) => Ok(v),
                other => Err(format!("unexpected oracle JSON {other:?}")),
            },
            None => Err(a),
        })
        .collect()
}

fn short(v: &impl std::fmt::Debug) -> String {
    let s = format!("{v:?}");
    if s.len() > 600 {
        format!("{}…", &s[..600])
    } else {
        s
    }
}

/// Runs every records check; returns the failures.
pub fn run(oracle: &mut Oracle, seed: u64, per_codec: usize) -> Vec<String> {
    let mut failures = Vec::new();
    let mut fail = |msg: String| {
        if failures.len() < 20 {
            eprintln!("records conformance: FAIL {msg}");
        }
        failures.push(msg);
    };
    for codec in Compression::ALL {
        let mut r = Rng::new(seed ^ u64::from(codec.code()) << 56);
        let specs: Vec<SpecBatch> = (0..per_codec).map(|_| gen_batch(&mut r, codec)).collect();
        let cmds: Vec<String> = specs.iter().map(write_cmd).collect();
        let java_bytes: Vec<Vec<u8>> = oracle
            .batch(&cmds)
            .into_iter()
            .map(|a| {
                a.strip_prefix("ok ")
                    .and_then(unhex)
                    .unwrap_or_else(|| panic!("Java cannot write a {codec} batch: {a}"))
            })
            .collect();
        let ours: Vec<Vec<u8>> = specs.iter().map(encode).collect();
        let java_of_java = java_read(oracle, &java_bytes);
        let java_of_ours = java_read(oracle, &ours);
        let (mut records, mut bytes_total) = (0, 0);
        for (i, s) in specs.iter().enumerate() {
            let want = spec_json(s);
            records += s.records.len();
            bytes_total += java_bytes[i].len();
            // Java → crate.
            match (crate_read(&java_bytes[i]), &java_of_java[i]) {
                (Ok(c), Ok(j)) if c.len() == 1 && c == *j => {
                    if without_crc(c[0].clone()) != want {
                        fail(format!("{codec} #{i}: Java and the crate agree but not with what was written: {}", short(&c)));
                    }
                }
                (c, j) => fail(format!(
                    "{codec} #{i}: Java-written batch: crate {} vs Java {}",
                    short(&c),
                    short(j)
                )),
            }
            // crate → Java.
            match (crate_read(&ours[i]), &java_of_ours[i]) {
                (Ok(c), Ok(j)) if c.len() == 1 && c == *j => {
                    if without_crc(c[0].clone()) != want {
                        fail(format!(
                            "{codec} #{i}: crate-written batch reads back wrong: {}",
                            short(&c)
                        ));
                    }
                }
                (c, j) => fail(format!(
                    "{codec} #{i}: crate-written batch: crate {} vs Java {}",
                    short(&c),
                    short(j)
                )),
            }
            if codec == Compression::None && ours[i] != java_bytes[i] {
                fail(format!(
                    "none #{i}: crate bytes differ from Java's:\n  crate {}\n  Java  {}",
                    hex(&ours[i]),
                    hex(&java_bytes[i])
                ));
            }
        }
        // Concatenated, as in a Fetch response.
        let blob: Vec<u8> = java_bytes.concat();
        match crate_read(&blob) {
            Ok(v) if v.len() == specs.len() => {}
            other => fail(format!(
                "{codec}: concatenated Java batches: {}",
                short(&other)
            )),
        }
        eprintln!(
            "records conformance: {codec:<6} {} batches ({records} records, {bytes_total} bytes as Java writes them) both ways",
            specs.len()
        );
    }
    markers(oracle, seed, &mut fail);
    partitions(oracle, seed, &mut fail);
    failures
}

/// Java's commit/abort markers and a read_committed pass over a Java-written partition log.
fn markers(oracle: &mut Oracle, seed: u64, fail: &mut impl FnMut(String)) {
    let mut r = Rng::new(seed ^ 0x6d61726b);
    // Offsets: 0 pid 1 (tx), 1 pid 2 (tx), 2 abort pid 1, 3 pid 2 data, 4 commit pid 2.
    let data = |offset: i64, pid: i64, seq: i32, value: &str| {
        format!(
            "records-write {}",
            json!({"compression": "zstd", "baseOffset": offset, "producerId": pid, "producerEpoch": 0,
                   "baseSequence": seq, "transactional": true,
                   "records": [{"timestamp": 1, "key": null, "value": hex(value.as_bytes())}]})
        )
    };
    let epoch = r.below(1000) as i32;
    let marker = |offset: i64, pid: i64, commit: bool| {
        format!(
            "records-marker {}",
            json!({"baseOffset": offset, "producerId": pid, "producerEpoch": 0, "commit": commit,
                   "coordinatorEpoch": epoch})
        )
    };
    let cmds = vec![
        data(0, 1, 0, "aborted"),
        data(1, 2, 0, "committed-a"),
        marker(2, 1, false),
        data(3, 2, 1, "committed-b"),
        marker(4, 2, true),
    ];
    let answers = oracle.batch(&cmds);
    let mut log = Vec::new();
    for a in &answers {
        match a.strip_prefix("ok ").and_then(unhex) {
            Some(b) => log.extend(b),
            None => return fail(format!("markers: oracle: {a}")),
        }
    }
    let mut rc = ReadCommitted::new([AbortedTransaction {
        producer_id: 1,
        first_offset: 0,
    }]);
    let mut delivered = Vec::new();
    let mut kinds = Vec::new();
    for raw in BatchReader::new(&log) {
        let raw = match raw {
            Ok(b) => b,
            Err(e) => return fail(format!("markers: {e}")),
        };
        let admit = rc.admit(&raw);
        let b = raw.decode(&DecodeLimits::default()).expect("decodes");
        if let Some(c) = b.control_record() {
            let c = c.expect("control record parses");
            kinds.push((c.kind, c.coordinator_epoch));
        }
        if admit == Ok(Admit::Deliver) {
            delivered.extend(b.records().map(|r| r.value.unwrap_or_default().to_vec()));
        }
    }
    let want_kinds = vec![
        (ControlRecordType::Abort, Some(epoch)),
        (ControlRecordType::Commit, Some(epoch)),
    ];
    if kinds != want_kinds {
        fail(format!("markers: read {kinds:?}, want {want_kinds:?}"));
    }
    if delivered != [b"committed-a".to_vec(), b"committed-b".to_vec()] {
        fail(format!("markers: read_committed delivered {delivered:?}"));
    }
    eprintln!("records conformance: Java markers and read_committed checked");
}

/// The crate's partitioner against Java's on random keys.
fn partitions(oracle: &mut Oracle, seed: u64, fail: &mut impl FnMut(String)) {
    const KEYS: usize = 20_000;
    let mut r = Rng::new(seed ^ 0x7061_7274);
    let keys: Vec<(Vec<u8>, i32)> = (0..KEYS)
        .map(|i| {
            let len = match i % 4 {
                0 => r.below(8) as usize,
                1 => r.below(64) as usize,
                2 => r.below(300) as usize,
                _ => 0,
            };
            let key = if i % 4 == 3 {
                format!("user-{}", r.next()).into_bytes()
            } else {
                (0..len).map(|_| r.next() as u8).collect()
            };
            let any = 1 + r.below(10_000) as i32;
            let n = [1, 3, 6, 12, 100, any][r.below(6) as usize];
            (key, n)
        })
        .collect();
    let cmds: Vec<String> = keys
        .iter()
        .map(|(k, n)| format!("partition {} {n}", hex(k)))
        .collect();
    let answers = oracle.batch(&cmds);
    let mut bad = 0;
    for ((k, n), a) in keys.iter().zip(&answers) {
        let ours = format!(
            "ok {} {}",
            murmur2(k),
            partition_for_key(k, *n).unwrap_or(-1)
        );
        if &ours != a {
            bad += 1;
            if bad <= 3 {
                fail(format!(
                    "partition of key {} among {n}: crate {ours}, Java {a}",
                    hex(k)
                ));
            }
        }
    }
    if bad > 3 {
        fail(format!("partition: {bad} of {KEYS} keys differ"));
    }
    eprintln!("records conformance: {KEYS} random keys: murmur2 and partition equal Java's ({bad} differ)");
}
