//! Replays the committed seeds, crash reproducers and known bugs through the fuzz checks.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

use crate::{fuzz_dir, harness};

/// The input files of `fuzz/<kind>/<target>/` (dot-files such as `.gitkeep` excluded).
fn inputs(kind: &str, target: &str) -> Vec<PathBuf> {
    let dir = fuzz_dir().join(kind).join(target);
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .filter(|p| {
            !p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with('.'))
        })
        .collect();
    files.sort();
    files
}

#[test]
fn every_target_has_a_binary_and_seeds() {
    for (name, _) in harness::TARGETS {
        let bin = fuzz_dir().join("fuzz_targets").join(format!("{name}.rs"));
        assert!(bin.is_file(), "no fuzz binary {}", bin.display());
        assert!(
            !inputs("seeds", name).is_empty(),
            "no seeds for {name}: run the write_fuzz_seeds test (see the module docs)"
        );
    }
}

#[test]
fn replay_seeds_and_regressions() {
    let mut failures = Vec::new();
    let mut replayed = 0;
    for (name, check) in harness::TARGETS {
        for kind in ["seeds", "regressions"] {
            for file in inputs(kind, name) {
                let data = std::fs::read(&file).expect("readable input file");
                replayed += 1;
                if catch_unwind(AssertUnwindSafe(|| check(&data))).is_err() {
                    failures.push(file.display().to_string());
                }
            }
        }
    }
    assert!(
        replayed > 0,
        "no fuzz inputs found under {}",
        fuzz_dir().display()
    );
    assert!(failures.is_empty(), "fuzz inputs that fail: {failures:#?}");
}

/// Known, unfixed findings (see `fuzz/known-bugs/README.md`): fails while any still fails.
/// Fixed findings move to `fuzz/regressions/`, which every run replays.
#[test]
fn known_bugs_are_fixed() {
    let mut still_failing = Vec::new();
    for (name, check) in harness::TARGETS {
        for file in inputs("known-bugs", name) {
            let data = std::fs::read(&file).expect("readable input file");
            if catch_unwind(AssertUnwindSafe(|| check(&data))).is_err() {
                still_failing.push(file.display().to_string());
            }
        }
    }
    assert!(
        still_failing.is_empty(),
        "still failing: {still_failing:#?}"
    );
}

#[test]
fn an_unknown_target_name_is_not_registered() {
    // The fuzz binaries look their check up by name; a typo must not silently fuzz nothing.
    assert!(harness::target("no_such_target").is_none());
    assert!(harness::target("frame_decoder").is_some());
}
