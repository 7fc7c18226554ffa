//! The `.properties` parser: Java's `Properties.load` syntax, stricter where Java is silent.

use std::path::Path;

use super::invalid;
use crate::error::Error;

/// Parses Java `.properties` text into `(key, value)` pairs, in file order (duplicates kept;
/// the configuration builders let the last one win).
///
/// Supported: `#` and `!` comment lines; `key=value`, `key: value` and `key value`; whitespace
/// around keys and values is trimmed (an escaped `\ ` keeps a space); a line ending in an odd
/// number of `\` continues on the next line, whose leading whitespace is dropped; the escapes
/// `\t`, `\n`, `\r`, `\f`, `\\`, `\uXXXX` (UTF-16, surrogate pairs combined), and `\` before
/// any other character stands for that character (`\=`, `\:`, `\#`, `\ `). Lines end with
/// `\n`, `\r\n` or `\r`.
///
/// Unlike Java, trailing whitespace of a value is removed (a stray space after a password is
/// a classic mistake), and a malformed `\u` escape is an error naming the line and key —
/// never the value, which may be a password.
pub fn parse(text: &str) -> Result<Vec<(String, String)>, Error> {
    let mut out = Vec::new();
    for logical in logical_lines(text) {
        let (key, value) = split_entry(&logical.text).map_err(|problem| {
            invalid(format!(
                "line {}: {problem} (in the entry starting {})",
                logical.line,
                entry_label(&logical.text)
            ))
        })?;
        out.push((key, value));
    }
    Ok(out)
}

/// Reads and [`parse`]s a `.properties` file (UTF-8).
pub fn read_file(path: impl AsRef<Path>) -> Result<Vec<(String, String)>, Error> {
    let path = path.as_ref();
    let bytes =
        std::fs::read(path).map_err(|e| invalid(format!("cannot read {}: {e}", path.display())))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        invalid(format!(
            "{}: not UTF-8 (invalid byte at offset {}); save the file as UTF-8 or use \\uXXXX escapes",
            path.display(),
            e.utf8_error().valid_up_to()
        ))
    })?;
    parse(&text).map_err(|e| match e {
        Error::InvalidConfiguration { field, reason } => Error::InvalidConfiguration {
            field,
            reason: format!("{}: {reason}", path.display()),
        },
        other => other,
    })
}

/// A key-only label for error messages about a logical line: the raw key part, so that a
/// secret value is never shown.
fn entry_label(text: &str) -> String {
    let mut key = String::new();
    let mut escaped = false;
    for c in text.chars() {
        if !escaped && (c == '=' || c == ':' || c.is_whitespace()) {
            break;
        }
        escaped = !escaped && c == '\\';
        key.push(c);
    }
    format!("{key:?}")
}

struct LogicalLine {
    /// 1-based number of the natural line where it starts.
    line: usize,
    /// The joined text, leading whitespace removed, continuation backslashes removed.
    text: String,
}

/// Splits text into natural lines on `\n`, `\r\n` and `\r`.
fn natural_lines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let bytes = text.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                lines.push(&text[start..i]);
                start = i + 1;
            }
            b'\r' => {
                lines.push(&text[start..i]);
                if bytes.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

/// Whether a line ends in an odd number of backslashes (a continuation).
fn continues(line: &str) -> bool {
    line.bytes().rev().take_while(|&b| b == b'\\').count() % 2 == 1
}

fn is_properties_whitespace(c: char) -> bool {
    // Java's set (space, tab, form feed) plus other Unicode whitespace, which a trimmed
    // configuration value should not keep either.
    c.is_whitespace()
}

fn logical_lines(text: &str) -> Vec<LogicalLine> {
    let lines = natural_lines(text);
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let first = lines[i].trim_start_matches(is_properties_whitespace);
        let line_no = i + 1;
        i += 1;
        if first.is_empty() || first.starts_with('#') || first.starts_with('!') {
            // Comment lines never continue, even when they end in a backslash (as in Java).
            continue;
        }
        let mut joined = String::new();
        let mut current = first;
        loop {
            if continues(current) {
                joined.push_str(&current[..current.len() - 1]);
                match lines.get(i) {
                    Some(next) => {
                        i += 1;
                        current = next.trim_start_matches(is_properties_whitespace);
                    }
                    // A continuation at the end of the text continues into nothing.
                    None => break,
                }
            } else {
                joined.push_str(current);
                break;
            }
        }
        out.push(LogicalLine {
            line: line_no,
            text: joined,
        });
    }
    out
}

/// Splits one logical line into an unescaped, trimmed key and value.
fn split_entry(text: &str) -> Result<(String, String), String> {
    // Find the end of the key: the first unescaped '=', ':' or whitespace.
    let mut key_end = text.len();
    let mut escaped = false;
    for (pos, c) in text.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        if c == '\\' {
            escaped = true;
        } else if c == '=' || c == ':' || is_properties_whitespace(c) {
            key_end = pos;
            break;
        }
    }
    let raw_key = &text[..key_end];
    // Skip whitespace, at most one separator, then whitespace again.
    let mut rest = text[key_end..].trim_start_matches(is_properties_whitespace);
    if let Some(stripped) = rest.strip_prefix(['=', ':']) {
        rest = stripped.trim_start_matches(is_properties_whitespace);
    }
    let key = unescape(raw_key).map_err(|p| format!("key: {p}"))?;
    let value = unescape(rest).map_err(|p| format!("value of {key:?}: {p}"))?;
    Ok((key, value))
}

/// Resolves escapes and drops unescaped trailing whitespace.
fn unescape(raw: &str) -> Result<String, String> {
    let mut out = String::with_capacity(raw.len());
    // Length of `out` up to the last character that must survive trimming.
    let mut keep = 0;
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            if !is_properties_whitespace(c) {
                keep = out.len();
            }
            continue;
        }
        let Some(e) = chars.next() else {
            // A lone trailing backslash (only possible at the end of the text): dropped.
            break;
        };
        match e {
            't' => out.push('\t'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            'f' => out.push('\u{c}'),
            'u' => {
                let unit = hex4(&mut chars)?;
                let c = match unit {
                    0xD800..=0xDBFF => {
                        // A high surrogate needs a following \uDC00..\uDFFF.
                        let low = match (chars.next(), chars.next()) {
                            (Some('\\'), Some('u')) => hex4(&mut chars)?,
                            _ => return Err("\\u escape: high surrogate without a low one".into()),
                        };
                        if !(0xDC00..=0xDFFF).contains(&low) {
                            return Err("\\u escape: high surrogate without a low one".into());
                        }
                        let code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                        char::from_u32(code).ok_or("\\u escape: invalid code point")?
                    }
                    0xDC00..=0xDFFF => {
                        return Err("\\u escape: low surrogate without a high one".into())
                    }
                    _ => char::from_u32(unit).ok_or("\\u escape: invalid code point")?,
                };
                out.push(c);
            }
            other => out.push(other),
        }
        keep = out.len();
    }
    out.truncate(keep);
    Ok(out)
}

fn hex4(chars: &mut std::str::Chars<'_>) -> Result<u32, String> {
    let mut value = 0u32;
    for _ in 0..4 {
        let digit = chars
            .next()
            .and_then(|c| c.to_digit(16))
            .ok_or("malformed \\uXXXX escape (four hex digits expected)")?;
        value = value * 16 + digit;
    }
    Ok(value)
}
