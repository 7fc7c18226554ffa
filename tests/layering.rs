//! Imports point down the layers: every `crate::…` path and every `super::…` path that leaves
//! a top-level module, in every file under `src/` (tests included), is checked against the
//! layer table in `src/lib.rs`'s module docs. A module may name modules of its own layer or of
//! lower ones; the top-level modules must not import each other in a circle.
//!
//! The table is the one place the order is written: a row is
//! `//! | <number> | <name> | `module`, `module` | <what> |`.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// One row of the layer table.
struct Layer {
    number: usize,
    name: String,
}

/// Top-level module → its layer, read from `src/lib.rs`.
fn layers(lib_rs: &str) -> BTreeMap<String, Layer> {
    let mut out = BTreeMap::new();
    for line in lib_rs.lines() {
        let Some(row) = line.trim().strip_prefix("//! |") else {
            continue;
        };
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let (Some(number), Some(name), Some(modules)) = (cells.first(), cells.get(1), cells.get(2))
        else {
            continue;
        };
        let Ok(number) = number.parse::<usize>() else {
            continue;
        };
        for module in modules.split(',') {
            let module = module.trim().trim_matches('`');
            let layer = Layer {
                number,
                name: (*name).to_string(),
            };
            assert!(
                out.insert(module.to_string(), layer).is_none(),
                "src/lib.rs: module `{module}` is in two rows of the layer table"
            );
        }
    }
    out
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a file below `src/`: `src/a/b.rs` and `src/a/b/mod.rs` are `[a, b]`.
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_string());
    }
    parts
}

/// `text` with comments blanked and string and character literals emptied, so that only code
/// is searched; line breaks are kept, so line numbers stay right.
fn code_only(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let keep_newlines = |s: &[char], out: &mut String| {
        out.extend(s.iter().filter(|c| **c == '\n'));
    };
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let start = i;
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            keep_newlines(&b[start..i.min(b.len())], &mut out);
        } else if let Some(end) = string_end(&b, i) {
            keep_newlines(&b[i..end], &mut out);
            out.push_str("\"\"");
            i = end;
        } else if c == '\'' && char_literal_end(&b, i).is_some() {
            i = char_literal_end(&b, i).unwrap_or(i + 1);
            out.push_str("' '");
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// If a string literal (`"…"`, `b"…"`, `r#"…"#`, `br"…"`) starts at `i`, the index after it.
fn string_end(b: &[char], i: usize) -> Option<usize> {
    let mut j = i;
    if b[i] != '"' {
        if i > 0 && (b[i - 1].is_alphanumeric() || b[i - 1] == '_') {
            return None; // inside an identifier
        }
        if b[j] == 'b' {
            j += 1;
        }
        if b.get(j) == Some(&'r') {
            let hashes = b[j + 1..].iter().take_while(|c| **c == '#').count();
            let body = j + 1 + hashes;
            if b.get(body) != Some(&'"') {
                return None;
            }
            let close: Vec<char> = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            let end = (body + 1..b.len()).find(|&k| b[k..].starts_with(&close))?;
            return Some(end + close.len());
        }
        if j == i || b.get(j) != Some(&'"') {
            return None;
        }
    }
    let mut k = j + 1;
    while k < b.len() {
        match b[k] {
            '\\' => k += 2,
            '"' => return Some(k + 1),
            _ => k += 1,
        }
    }
    Some(b.len())
}

/// If a character literal (not a lifetime) starts at `i`, the index after it.
fn char_literal_end(b: &[char], i: usize) -> Option<usize> {
    match (b.get(i + 1), b.get(i + 2)) {
        (Some('\\'), _) => (i + 3..b.len().min(i + 14))
            .find(|&k| b[k] == '\'')
            .map(|k| k + 1),
        (Some(_), Some('\'')) => Some(i + 3),
        _ => None,
    }
}

/// One path that leaves its top-level module.
struct Import {
    line: usize,
    target: String,
}

/// The top-level modules a file's code names: `crate::x`, `$crate::x`, `crate::{x, …}`, and
/// `super::…` chains that climb to the crate root. `file_module` is the file's module path;
/// inline `mod name { … }` blocks are followed so that `super` counts from the right place.
fn imports(code: &str, file_module: &[String]) -> Vec<Import> {
    let tokens = tokenize(code);
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let (line, tok) = (tokens[i].0, tokens[i].1.as_str());
        match tok {
            "{" => depth += 1,
            "}" => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
            }
            "mod" if tokens.get(i + 2).is_some_and(|t| t.1 == "{") => {
                inline.push((tokens[i + 1].1.clone(), depth));
            }
            "crate" if tokens.get(i + 1).is_some_and(|t| t.1 == "::") => {
                let mut here = Vec::new();
                first_segments(&tokens, i + 2, &mut here);
                out.extend(here.into_iter().map(|target| Import { line, target }));
            }
            "super" if i == 0 || tokens[i - 1].1 != "::" => {
                let mut module: Vec<String> = file_module.to_vec();
                module.extend(inline.iter().map(|(m, _)| m.clone()));
                let mut k = i;
                while tokens.get(k).is_some_and(|t| t.1 == "super")
                    && tokens.get(k + 1).is_some_and(|t| t.1 == "::")
                {
                    module.pop();
                    k += 2;
                }
                if module.is_empty() {
                    let mut here = Vec::new();
                    first_segments(&tokens, k, &mut here);
                    out.extend(here.into_iter().map(|target| Import { line, target }));
                }
                i = k.max(i + 1);
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The first path segment(s) at token `i`: one identifier, or each first segment inside a
/// `{ … }` group.
fn first_segments(tokens: &[(usize, String)], i: usize, out: &mut Vec<String>) {
    match tokens.get(i).map(|t| t.1.as_str()) {
        Some("{") => {
            let mut depth = 0;
            let mut expect = true;
            for (_, t) in &tokens[i..] {
                match t.as_str() {
                    "{" => {
                        depth += 1;
                        expect = depth == 1;
                    }
                    "}" => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    "," if depth == 1 => expect = true,
                    t if expect && depth == 1 && is_ident(t) => {
                        out.push(t.to_string());
                        expect = false;
                    }
                    _ if depth == 1 => expect = false,
                    _ => {}
                }
            }
        }
        Some(t) if is_ident(t) => out.push(t.to_string()),
        _ => {}
    }
}

fn is_ident(t: &str) -> bool {
    t.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && t.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// Identifiers, `::` and single punctuation characters, each with its line number.
fn tokenize(code: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c.is_alphanumeric() || c == '_' {
                let start = i;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                out.push((n + 1, chars[start..i].iter().collect()));
            } else if c == ':' && chars.get(i + 1) == Some(&':') {
                out.push((n + 1, "::".to_string()));
                i += 2;
            } else {
                if !c.is_whitespace() {
                    out.push((n + 1, c.to_string()));
                }
                i += 1;
            }
        }
    }
    out
}

/// A circle among the top-level modules, if any: the modules on it, in order.
fn find_circle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        v: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(v.to_string(), 1);
        path.push(v.to_string());
        for w in edges.get(v).into_iter().flatten() {
            match state.get(w.as_str()) {
                Some(1) => {
                    let at = path.iter().position(|p| p == w).unwrap_or(0);
                    let mut circle = path[at..].to_vec();
                    circle.push(w.clone());
                    return Some(circle);
                }
                Some(_) => {}
                None => {
                    if let Some(c) = visit(w, edges, state, path) {
                        return Some(c);
                    }
                }
            }
        }
        path.pop();
        state.insert(v.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for v in edges.keys() {
        if !state.contains_key(v.as_str()) {
            if let Some(c) = visit(v, edges, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn imports_point_down_the_layers() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib_rs = fs::read_to_string(root.join("lib.rs")).expect("src/lib.rs");
    let layers = layers(&lib_rs);
    assert!(
        layers.len() >= 10,
        "src/lib.rs: the layer table was not found (rows `//! | n | name | `module` | … |`)"
    );
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut problems: Vec<String> = layers
        .keys()
        .filter(|m| !root.join(format!("{m}.rs")).is_file() && !root.join(m).is_dir())
        .map(|m| format!("src/lib.rs: the layer table names `{m}`, which is no module; remove it"))
        .collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let rel = file.strip_prefix(&root).expect("under src/");
        let module = module_path(rel);
        let Some(top) = module.first() else {
            continue; // src/lib.rs: the crate root may name every module
        };
        let shown = format!("src/{}", rel.display());
        let Some(own) = layers.get(top) else {
            problems.push(format!(
                "{shown}: module `{top}` is in no row of the layer table in src/lib.rs; add it"
            ));
            continue;
        };
        let text = fs::read_to_string(file).expect("readable source");
        for import in imports(&code_only(&text), &module) {
            if import.target == *top || import.target == "self" {
                continue;
            }
            let Some(theirs) = layers.get(&import.target) else {
                continue; // a name defined in lib.rs (a re-export or a macro), not a module
            };
            edges
                .entry(top.clone())
                .or_default()
                .insert(import.target.clone());
            if theirs.number > own.number {
                problems.push(format!(
                    "{shown}:{}: `{top}` (layer {} {}) imports `{}` (layer {} {}), which is \
                     above it; move what it needs down, or the code that needs it up",
                    import.line, own.number, own.name, import.target, theirs.number, theirs.name
                ));
            }
        }
    }
    if let Some(circle) = find_circle(&edges) {
        problems.push(format!(
            "the top-level modules import each other in a circle: {}",
            circle.join(" -> ")
        ));
    }
    assert!(
        problems.is_empty(),
        "{} layering problem(s) (layer table: src/lib.rs):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn the_scanner_sees_paths_and_skips_comments_and_strings() {
    let code = code_only(
        "use crate::a::X; // crate::b\n/* crate::c */ let s = \"crate::d\";\n\
         use crate::{e::Y, f};\nmod tests { use super::super::g::Z; }\n\
         let r = r#\"crate::h\"#; let c = '\"'; $crate::i::m!();\n",
    );
    let found: Vec<(usize, String)> = imports(&code, &["top".to_string()])
        .into_iter()
        .map(|i| (i.line, i.target))
        .collect();
    let want = [(1, "a"), (3, "e"), (3, "f"), (4, "g"), (5, "i")];
    let want: Vec<(usize, String)> = want.iter().map(|(l, t)| (*l, t.to_string())).collect();
    assert_eq!(found, want);
}

/// Issue 22: the stores and their restore are a layer of their own, above the fetcher and
/// the producer they use and below the processing runtime that owns them.
#[test]
fn state_sits_between_the_data_path_and_processing() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let layers = layers(&fs::read_to_string(root.join("lib.rs")).expect("src/lib.rs"));
    let n = |m: &str| {
        layers
            .get(m)
            .unwrap_or_else(|| panic!("`{m}` is in no row of the layer table"))
            .number
    };
    assert!(n("consumer") < n("state") && n("producer") < n("state"));
    assert!(n("state") < n("processing"));
    assert!(root.join("state").is_dir(), "src/state/ holds the stores");
}
