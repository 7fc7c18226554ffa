#!/usr/bin/env bash
# Runs every benchmark of issue 8 and regenerates the results table in BENCHMARKS.md.
#
#   scripts/bench.sh                 everything (about 15 minutes on 2 cores)
#   scripts/bench.sh --no-live       skip the live broker / Java peer comparison (items 6, 7)
#   scripts/bench.sh --idle-secs N   idle window of item 5 (default 60)
#   scripts/bench.sh --reps N        repetitions of the live scenarios (default 3)
#   scripts/bench.sh --no-criterion  reuse target/criterion from an earlier run (items 1-4)
#
# Benchmarks are never part of the test suite: scripts/test.sh does not run this.
# The live part uses the harness broker on KSG_PORT_BASE=19692 (started here if not running,
# and stopped again) and testing/streams-peer (built if needed).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
out=$repo/target/bench-report
mkdir -p "$out"
live=1
idle_secs=60
reps=3
criterion=1
while [ $# -gt 0 ]; do
  case "$1" in
    --no-live) live=0 ;;
    --idle-secs) idle_secs=$2; shift ;;
    --reps) reps=$2; shift ;;
    --no-criterion) criterion=0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
log() { printf '[bench.sh] %s\n' "$*" >&2; }
member=$repo/target/release/examples/bench_member
crit=(--warm-up-time 1 --measurement-time 3)

# ---- machine ---------------------------------------------------------------------------------
{
  echo "nproc=$(nproc)"
  echo "cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
  echo "mem_total_kb=$(awk '/MemTotal/ {print $2}' /proc/meminfo)"
  echo "load=$(cut -d' ' -f1-3 /proc/loadavg)"
  echo "rustc=$(rustc --version)"
  echo "date=$(date -u +%Y-%m-%dT%H:%MZ)"
} > "$out/machine.txt"

log "building benches and the bench_member example (bench profile)"
cargo build --quiet --profile bench --benches --example bench_member

# ---- 1-4: criterion ------------------------------------------------------------------------
if [ "$criterion" = 1 ]; then
  for b in codec differential task_runtime heartbeat_rtt; do
    log "cargo bench --bench $b -- ${crit[*]}"
    cargo bench --quiet --bench "$b" -- "${crit[@]}" > "$out/$b.log" 2>&1
  done
fi

# ---- 1: allocations of the steady encode (valgrind's heap summary, n=0 vs n=10000) -----------
allocs() {
  valgrind "$member" encode-loop --n "$1" 2>&1 | awk '/total heap usage/ {gsub(",","",$5); print $5}'
}
if command -v valgrind >/dev/null; then
  a0=$(allocs 0); a1=$(allocs 10000)
  echo "encodes=10000 allocs_n0=$a0 allocs_n10000=$a1" > "$out/allocs.txt"
else
  echo "encodes=0 allocs_n0=0 allocs_n10000=0 (no valgrind)" > "$out/allocs.txt"
fi

# ---- 1, 2: instructions per operation (callgrind; n=N minus n=0, same set-up) ---------------
# Criterion's wall times on this shared box move by ±50 % with the load, enough to put a ratio
# on either side of its target from one run to the next; instruction counts of the same code
# on the same bytes do not. Each case runs in `bench_member codec-probe`.
ir() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$member" codec-probe \
    --case "$1" --n "$2" 2>&1 | awk '/Collected/ {print $4}'
}
if command -v valgrind >/dev/null; then
  log "callgrind: instructions per codec operation (items 1, 2)"
  for spec in steady-encode:20000 steady-encode-floor:20000 response-into:2000 \
    response-floor:2000 metadata-ours:10 metadata-kafka-protocol:10; do
    case_=${spec%:*}; n=${spec#*:}
    i0=$(ir "$case_" 0); i1=$(ir "$case_" "$n")
    echo "$case_ n=$n ir_n0=$i0 ir_n=$i1 per_op=$(( (i1 - i0) / n ))"
  done > "$out/codec_ir.txt"
else
  : > "$out/codec_ir.txt"
fi

# A mock coordinator in its own process, alive while fd 9 is open.
mock_pid=
# Call it directly, not in $(…): a subshell would close fd 9 (and so stop the mock) on exit.
addr=
start_mock() {
  local fifo=$out/mock.fifo
  rm -f "$fifo" "$out/mock.addr"; mkfifo "$fifo"
  "$member" mock --interval-ms "$1" < "$fifo" > "$out/mock.addr" &
  mock_pid=$!
  exec 9> "$fifo"
  for _ in $(seq 50); do [ -s "$out/mock.addr" ] && break; sleep 0.1; done
  addr=$(awk '{print $2}' "$out/mock.addr")
}
stop_mock() { exec 9>&-; wait "$mock_pid" 2>/dev/null || true; rm -f "$out/mock.fifo"; }

# ---- 8: callgrind of the steady heartbeat path (instructions per heartbeat) -------------------
if command -v valgrind >/dev/null; then
  log "callgrind: steady heartbeat path"
  start_mock 3600000
  for n in 100 1100; do
    valgrind --tool=callgrind --callgrind-out-file="$out/callgrind.hb.$n" \
      "$member" hb-loop --bootstrap "$addr" --n "$n" > "$out/callgrind.hb.$n.log" 2>&1
  done
  stop_mock
  callgrind_annotate "$out/callgrind.hb.1100" > "$out/callgrind.hb.annotate.txt" 2>/dev/null || true
  sed -n '/file:function/,$p' "$out/callgrind.hb.annotate.txt" | sed -n '1,25p' > "$out/callgrind.hb.top.txt"
  for n in 100 1100; do
    printf 'n=%s ir=%s\n' "$n" "$(grep -m1 '^summary:' "$out/callgrind.hb.$n" | awk '{print $2}')"
  done > "$out/callgrind.hb.txt"
fi

# ---- 3: instructions of one rebalance reconcile (growth without cache effects) ---------------
if command -v valgrind >/dev/null; then
  log "callgrind: reconcile instructions at 1k, 10k, 100k tasks"
  : > "$out/reconcile_ir.txt"
  for n in 1000 10000 100000; do
    for mode in setup full; do
      flag=; [ "$mode" = setup ] && flag=--setup-only
      ir=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$member" reconcile-probe \
             --n "$n" $flag 2>&1 | awk '/Collected :/ {print $4}')
      echo "n=$n mode=$mode ir=$ir" >> "$out/reconcile_ir.txt"
    done
  done
fi

# ---- 5: idle cost ---------------------------------------------------------------------------
log "idle: ${idle_secs}s of 500 ms heartbeats against the mock"
start_mock 500
"$member" idle --bootstrap "$addr" --secs "$idle_secs" > "$out/idle.txt"
stop_mock

# ---- 6, 7: live, Rust members vs Java peers --------------------------------------------------
if [ "$live" = 1 ]; then
  export KSG_PORT_BASE=19692
  env_file=$repo/.kafka/run-19692/cluster.env
  started=0
  if ! bash scripts/kafka.sh status >/dev/null 2>&1 || [ ! -f "$env_file" ]; then
    log "starting the harness broker (KSG_PORT_BASE=19692)"
    bash scripts/kafka.sh start >/dev/null
    started=1
  fi
  bash scripts/streams-peer.sh build
  boot=$(awk -F= '/^KSG_BOOTSTRAP_PLAINTEXT=/ {print $2}' "$env_file")
  log "live scenarios against $boot, $reps repetitions each"
  python3 benches/support/live.py "$boot" "$reps" > "$out/live.jsonl"
  if [ "$started" = 1 ]; then bash scripts/kafka.sh stop >/dev/null || true; fi
fi

# ---- the table --------------------------------------------------------------------------------
python3 benches/support/report.py "$out" BENCHMARKS.md
log "BENCHMARKS.md regenerated from $out"
