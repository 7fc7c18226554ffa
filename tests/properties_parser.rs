//! The Java `.properties` syntax accepted by `kafka_streams_group::properties::parse`.

use kafka_streams_group::properties::{parse, read_file};
use kafka_streams_group::Error;

fn pairs(text: &str) -> Vec<(String, String)> {
    parse(text).unwrap_or_else(|e| panic!("{text:?} should parse: {e}"))
}

fn one(text: &str) -> (String, String) {
    let mut p = pairs(text);
    assert_eq!(p.len(), 1, "{text:?} -> {p:?}");
    p.remove(0)
}

fn kv(k: &str, v: &str) -> (String, String) {
    (k.to_owned(), v.to_owned())
}

fn reason(e: Error) -> String {
    match e {
        Error::InvalidConfiguration { field, reason } => {
            assert_eq!(field, "properties");
            reason
        }
        other => panic!("expected InvalidConfiguration, got {other:?}"),
    }
}

#[test]
fn separators_equals_colon_and_whitespace() {
    assert_eq!(one("a=b"), kv("a", "b"));
    assert_eq!(one("a: b"), kv("a", "b"));
    assert_eq!(one("a:b"), kv("a", "b"));
    assert_eq!(one("a b"), kv("a", "b"));
    assert_eq!(one("a \t = \t b"), kv("a", "b"));
    assert_eq!(
        one("a = b=c:d"),
        kv("a", "b=c:d"),
        "only the first separator counts"
    );
    assert_eq!(
        one("a : : b"),
        kv("a", ": b"),
        "only one separator is skipped"
    );
    assert_eq!(one("key"), kv("key", ""));
    assert_eq!(one("key ="), kv("key", ""));
}

#[test]
fn keys_and_values_are_trimmed() {
    assert_eq!(
        one("   bootstrap.servers  =  h:1   \t"),
        kv("bootstrap.servers", "h:1")
    );
    assert_eq!(one("\u{c}a=b"), kv("a", "b"), "form feed is whitespace");
}

#[test]
fn comments_and_blank_lines() {
    let text = "# comment\n! also a comment\n\n   \n  # indented comment\na=1 # not a comment\nb=2";
    assert_eq!(
        pairs(text),
        vec![kv("a", "1 # not a comment"), kv("b", "2")]
    );
}

#[test]
fn comment_lines_do_not_continue() {
    assert_eq!(pairs("# comment \\\na=1"), vec![kv("a", "1")]);
}

#[test]
fn line_endings() {
    assert_eq!(
        pairs("a=1\r\nb=2\rc=3\nd=4"),
        vec![kv("a", "1"), kv("b", "2"), kv("c", "3"), kv("d", "4")]
    );
}

#[test]
fn continuation_lines() {
    assert_eq!(
        one("a=one, \\\n    two, \\\n\tthree"),
        kv("a", "one, two, three")
    );
    assert_eq!(one("a=x\\\r\n  y"), kv("a", "xy"));
    // An even number of backslashes is an escaped backslash, not a continuation.
    assert_eq!(pairs("a=x\\\\\nb=y"), vec![kv("a", "x\\"), kv("b", "y")]);
    // The key itself can continue.
    assert_eq!(
        one("boot\\\n  strap.servers=h:1"),
        kv("bootstrap.servers", "h:1")
    );
    // A continuation at the very end continues into nothing.
    assert_eq!(one("a=x\\"), kv("a", "x"));
    // A continuation into a blank line ends the entry there.
    assert_eq!(pairs("a=x\\\n\nb=y"), vec![kv("a", "x"), kv("b", "y")]);
}

#[test]
fn escapes() {
    assert_eq!(one(r"a=tab\there"), kv("a", "tab\there"));
    assert_eq!(one(r"a=new\nline"), kv("a", "new\nline"));
    assert_eq!(one(r"a=cr\rff\f"), kv("a", "cr\rff\u{c}"));
    assert_eq!(one(r"a=back\\slash"), kv("a", "back\\slash"));
    assert_eq!(one(r"a=\u00e9t\u00C9"), kv("a", "étÉ"));
    assert_eq!(one(r"a=\uD83D\uDE00"), kv("a", "😀"), "surrogate pair");
    assert_eq!(
        one(r"a=\q\z"),
        kv("a", "qz"),
        "unknown escapes stand for the character"
    );
    assert_eq!(one("a=é unicode"), kv("a", "é unicode"));
}

#[test]
fn escaped_separators_in_keys() {
    assert_eq!(one(r"a\=b=c"), kv("a=b", "c"));
    assert_eq!(one(r"a\:b:c"), kv("a:b", "c"));
    assert_eq!(one(r"a\ b c"), kv("a b", "c"));
    assert_eq!(one(r"\#notcomment=1"), kv("#notcomment", "1"));
}

#[test]
fn escaped_trailing_space_survives_trimming() {
    assert_eq!(one("a=x\\ "), kv("a", "x "));
    assert_eq!(one("a=x\\  \t "), kv("a", "x "));
    assert_eq!(one("a=\\ x"), kv("a", " x"), "escaped leading space kept");
    assert_eq!(one("a=x\\t"), kv("a", "x\t"), "escaped tab kept at the end");
}

#[test]
fn duplicates_are_kept_in_order() {
    assert_eq!(pairs("a=1\na=2"), vec![kv("a", "1"), kv("a", "2")]);
}

#[test]
fn malformed_unicode_escapes_are_errors_naming_line_and_key_only() {
    for (text, problem) in [
        ("ok=1\nsasl.password=hunter2\\u12", "four hex digits"),
        ("ok=1\nsasl.password=hunter2\\uZZZZ", "four hex digits"),
        ("ok=1\nsasl.password=hunter2\\uD83D", "high surrogate"),
        ("ok=1\nsasl.password=hunter2\\uD83Dx", "high surrogate"),
        ("ok=1\nsasl.password=hunter2\\uDE00", "low surrogate"),
    ] {
        let r = reason(parse(text).unwrap_err());
        assert!(r.contains("line 2"), "{r}");
        assert!(r.contains("sasl.password"), "{r}");
        assert!(r.contains(problem), "{r}");
        assert!(!r.contains("hunter2"), "the value must not be echoed: {r}");
    }
}

#[test]
fn read_file_reads_parses_and_names_the_file() {
    let dir = std::env::temp_dir().join(format!("ksg-props-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("good.properties");
    std::fs::write(&good, "# x\nbootstrap.servers = h:1\n").unwrap();
    assert_eq!(
        read_file(&good).unwrap(),
        vec![kv("bootstrap.servers", "h:1")]
    );

    let bad = dir.join("bad.properties");
    std::fs::write(&bad, "a=\\u00g0\n").unwrap();
    let r = reason(read_file(&bad).unwrap_err());
    assert!(r.contains("bad.properties") && r.contains("line 1"), "{r}");

    let latin1 = dir.join("latin1.properties");
    std::fs::write(&latin1, b"a=caf\xe9\n").unwrap();
    let r = reason(read_file(&latin1).unwrap_err());
    assert!(r.contains("not UTF-8"), "{r}");

    let r = reason(read_file(dir.join("missing.properties")).unwrap_err());
    assert!(
        r.contains("cannot read") && r.contains("missing.properties"),
        "{r}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
