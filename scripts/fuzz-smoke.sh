#!/usr/bin/env bash
# Fuzz smoke test: builds every cargo-fuzz target (stable toolchain, no sanitizer) and runs each
# one for a bounded time, seeded with the committed corpus under fuzz/seeds/<target>/.
#
#   scripts/fuzz-smoke.sh [SECONDS_PER_TARGET]     (default 5)
#
# Fails if any target crashes, aborts (e.g. the >64 MiB allocation guard), times out or runs out
# of memory. Reproducers are written to fuzz/regressions/<target>/, where `cargo test --test
# fuzz_regressions` replays them; commit them together with the fix.
# New interesting inputs accumulate in fuzz/corpus/<target>/ (git-ignored, reused next run).
# Environment: FUZZ_TOOLCHAIN (e.g. "+nightly") to override the toolchain; FUZZ_TARGETS to run a
# space-separated subset; FUZZ_MAX_LEN (default 4096) for the input size limit; FUZZ_PROFILE
# (dev, the default, or release).
# Why dev by default: on a 2-core machine the optimised build takes about 5 min of CI, the dev
# build about 2.4; a dev target runs some 10-40 thousand inputs in 3 s where an optimised one
# runs some 700 thousand. For a smoke test (every target builds, its seeds and their near
# mutations do not crash) that is enough; a fuzzing campaign is `cargo fuzz run <target>`.
set -euo pipefail

secs="${1:-5}"
if ! [[ "$secs" =~ ^[0-9]+$ ]] || [ "$secs" -lt 1 ]; then
    echo "usage: $0 [SECONDS_PER_TARGET]" >&2
    exit 2
fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
fuzz="$root/fuzz"
toolchain="${FUZZ_TOOLCHAIN:-}"
max_len="${FUZZ_MAX_LEN:-4096}"

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "== installing cargo-fuzz"
    cargo install cargo-fuzz --locked
fi

start=$(date +%s)
cd "$fuzz"
echo "== building fuzz targets ($(cargo $toolchain --version))"
# -s none: no sanitizer, which is what lets this build on the stable toolchain. Coverage
# instrumentation, debug assertions and overflow checks are still on (cargo-fuzz defaults).
profile="${FUZZ_PROFILE:-dev}"
case "$profile" in
    dev) cargo $toolchain fuzz build -s none --dev; profile_dir=debug ;;
    release) cargo $toolchain fuzz build -s none; profile_dir=release ;;
    *) echo "FUZZ_PROFILE must be dev or release, not $profile" >&2; exit 2 ;;
esac
bindir="$fuzz/target/$(rustc $toolchain -vV | sed -n 's/^host: //p')/$profile_dir"

targets="${FUZZ_TARGETS:-$(cargo $toolchain fuzz list)}"
failed=()
logdir="$fuzz/target/fuzz-smoke-logs"
mkdir -p "$logdir"
for t in $targets; do
    corpus="$fuzz/corpus/$t"
    seeds="$fuzz/seeds/$t"
    regressions="$fuzz/regressions/$t"
    mkdir -p "$corpus" "$seeds" "$regressions"
    log="$logdir/$t.log"
    echo "== $t: ${secs}s"
    rc=0
    # The first directory receives new corpus entries; the seeds are only read.
    nice -n 10 "$bindir/$t" "$corpus" "$seeds" \
        -max_total_time="$secs" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$regressions/" >"$log" 2>&1 || rc=$?
    # libFuzzer's closing stats line: "#<execs> DONE cov: ... exec/s: ..."
    done_line="$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n1 || true)"
    echo "   ${done_line:-no DONE line}"
    if [ "$rc" -ne 0 ]; then
        echo "   FAILED (exit $rc); log: $log"
        grep -E '^(==[0-9]+==|thread .* panicked|alloc_guard:|artifact_prefix|Test unit written)' "$log" | head -n 20 | sed 's/^/   /' || true
        failed+=("$t")
    fi
done

total=$(( $(date +%s) - start ))
echo "== total time: ${total}s"
if [ "${#failed[@]}" -ne 0 ]; then
    echo "== FAILED targets: ${failed[*]} (reproducers in fuzz/regressions/<target>/)"
    exit 1
fi
echo "== all targets ok"
