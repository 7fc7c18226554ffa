//! Replays every committed fuzz input — the seeds under `fuzz/seeds/<target>/` and the crash
//! reproducers under `fuzz/regressions/<target>/` — through the same checks the fuzz targets run
//! (`fuzz/src/harness.rs`, compiled into this test), so a fixed crash stays fixed without
//! needing cargo-fuzz.
//!
//! It also (re)generates the seeds, on request only:
//!
//! ```text
//! KSG_WRITE_FUZZ_SEEDS=1 cargo test --test fuzz_regressions -- --ignored write_fuzz_seeds
//! ```
//!
//! Seeds are valid messages built with the library's own encoders, prefixed as the targets
//! expect (see `harness::message_input`), so fuzzing starts from inputs that reach deep into
//! each decoder.
//!
//! Modules: [`replay`] runs the committed inputs; [`seeds`] builds the seeds (from the valid
//! messages of [`messages`]), checks them and writes them on request.

#[path = "../../fuzz/src/harness.rs"]
mod harness;

// For its wire task-list builder `tasks`, shared with the other test binaries.
#[path = "../support/mock_coordinator.rs"]
mod mock_coordinator;

mod messages;
mod replay;
mod seeds;

use std::path::{Path, PathBuf};

/// The fuzz crate's directory (`fuzz/`), home of the targets and every committed input.
fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}
