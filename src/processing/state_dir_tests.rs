use super::*;

use std::sync::atomic::{AtomicUsize, Ordering};

/// The file Kafka Streams 4.4.0's `StateDirectory` wrote (Jackson's `ObjectMapper` output of
/// `StateDirectoryProcessFile`: 52 bytes, no line end), copied from the state directory of
/// the streams peer (`--topology wordcount --state-dir …`, RocksDB stores) on 2026-12-05.
const JAVA_FILE: &str = r#"{"processId":"f3187cd7-0d85-4e5c-ab0d-90555ac89216"}"#;
const JAVA_ID: &str = "f3187cd7-0d85-4e5c-ab0d-90555ac89216";

fn scratch() -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "ksg-state-dir-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn reads_and_writes_javas_process_file() {
    assert_eq!(parse_process_file(JAVA_FILE), Ok(Some(JAVA_ID.into())));
    assert_eq!(render_process_file(JAVA_ID), JAVA_FILE);
}

#[test]
fn ignores_unknown_fields_and_takes_javas_lower_case() {
    let text = r#" { "version" : 2, "extra": {"a": [1, -2.5e3, true, null, "x\"y"]},
        "processId" : "F3187CD7-0D85-4E5C-AB0D-90555AC89216", "z": false } "#;
    assert_eq!(parse_process_file(text), Ok(Some(JAVA_ID.into())));
    let escaped = r#"{"processId":"\u0066\u0033187cd7-0d85-4e5c-ab0d-90555ac89216"}"#;
    assert_eq!(parse_process_file(escaped), Ok(Some(JAVA_ID.into())));
}

#[test]
fn no_id_or_null_is_none_and_garbage_is_an_error() {
    assert_eq!(parse_process_file("{}"), Ok(None));
    assert_eq!(parse_process_file(r#"{"processId":null}"#), Ok(None));
    assert_eq!(parse_process_file(r#"{"other":"x"}"#), Ok(None));
    for bad in [
        "",
        "garbage",
        "null",
        "[]",
        r#"{"processId":"not-a-uuid"}"#,
        r#"{"processId":42}"#,
        // Truncated: no closing brace; a cut UUID; one digit short; no colon.
        r#"{"processId":"f3187cd7-0d85-4e5c-ab0d-90555ac89216""#,
        r#"{"processId":"f3187cd7-0d85-4e5c-ab0d-90555ac8921"#,
        r#"{"processId":"f3187cd7-0d85-4e5c-ab0d-90555ac8921"}"#,
        r#"{"processId" "f3187cd7-0d85-4e5c-ab0d-90555ac89216"}"#,
        "{\"processId\":\"f3187cd7-0d85-4e5c-ab0d-90555ac89216\"\u{0}",
    ] {
        assert!(parse_process_file(bad).is_err(), "{bad:?} was accepted");
    }
}

#[test]
fn a_restart_reads_the_id_the_first_start_wrote() {
    let base = scratch();
    let (dir, first, source) = StateDirectory::open(&base, "wordcount").unwrap();
    assert_eq!(source, ProcessIdSource::Fresh);
    assert_eq!(dir.path(), base.join("wordcount"));
    let file = base.join("wordcount").join(PROCESS_FILE_NAME);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        render_process_file(&first)
    );
    assert!(base.join("wordcount").join(LOCK_FILE_NAME).exists());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o750, "rwxr-x---, as Java sets it");
    }
    drop(dir);
    let (dir, again, source) = StateDirectory::open(&base, "wordcount").unwrap();
    assert_eq!(
        (again.as_str(), source),
        (first.as_str(), ProcessIdSource::Read)
    );
    drop(dir);
    // Another application in the same state.dir has its own directory and id.
    let (_other, other, _) = StateDirectory::open(&base, "orders").unwrap();
    assert_ne!(other, first);
    std::fs::remove_dir_all(&base).unwrap();
}

#[test]
fn a_java_process_file_is_taken_as_is() {
    let base = scratch();
    std::fs::create_dir_all(base.join("app")).unwrap();
    std::fs::write(base.join("app").join(PROCESS_FILE_NAME), JAVA_FILE).unwrap();
    let (_dir, id, source) = StateDirectory::open(&base, "app").unwrap();
    assert_eq!(id, JAVA_ID);
    assert_eq!(source, ProcessIdSource::Read);
    drop(_dir);
    std::fs::remove_dir_all(&base).unwrap();
}

#[test]
fn a_locked_state_directory_is_refused() {
    let base = scratch();
    let (held, _, _) = StateDirectory::open(&base, "app").unwrap();
    let e = StateDirectory::open(&base, "app").unwrap_err().to_string();
    assert!(e.contains("state.dir"), "{e}");
    assert!(
        e.contains("multiple instances of Kafka Streams are running in the same state directory"),
        "{e}"
    );
    drop(held);
    assert!(
        StateDirectory::open(&base, "app").is_ok(),
        "released on drop"
    );
    std::fs::remove_dir_all(&base).unwrap();
}

#[test]
fn a_corrupt_or_empty_file_gets_a_fresh_id_written_over_it() {
    let base = scratch();
    let file = base.join("app").join(PROCESS_FILE_NAME);
    std::fs::create_dir_all(base.join("app")).unwrap();
    for (content, expect_replaced) in [
        (&b"{\"processId\":\"f3187cd7-0d85"[..], true),
        (&b"\xff\xfe garbage"[..], true),
        (&b""[..], true),
        (&b"{\"processId\":null}"[..], false),
    ] {
        std::fs::write(&file, content).unwrap();
        let (dir, id, source) = StateDirectory::open(&base, "app").unwrap();
        assert_eq!(
            matches!(source, ProcessIdSource::Replaced(_)),
            expect_replaced,
            "{content:?}: {source:?}"
        );
        assert_eq!(uuid(&id), Ok(id.clone()), "a fresh UUID");
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            render_process_file(&id)
        );
        drop(dir);
        let (_dir, again, source) = StateDirectory::open(&base, "app").unwrap();
        assert_eq!((again, source), (id, ProcessIdSource::Read));
    }
    std::fs::remove_dir_all(&base).unwrap();
}

#[cfg(unix)]
#[test]
fn an_unwritable_state_directory_fails_the_start() {
    let base = scratch();
    std::fs::create_dir_all(&base).unwrap();
    // A file where the application's directory should be.
    std::fs::write(base.join("app"), b"x").unwrap();
    let e = StateDirectory::open(&base, "app").unwrap_err().to_string();
    assert!(e.contains("couldn't be created"), "{e}");
    std::fs::remove_dir_all(&base).unwrap();
}
