#!/usr/bin/env bash
# Issue 25: producer throughput with up to max.in.flight.requests.per.connection batches per
# partition in flight, side by side with a baseline, in one run (farm-bench --vs: A B A B ...,
# ratio taken pair by pair, medians quoted).
#
#   KSG_CLUSTER_ENV=.kafka/run/cluster.env scripts/bench-inflight.sh [RECORDS] [RUNS] [BASELINE_BIN]
#
# A is this tree's examples/bench_clients (release) producing RECORDS (default 300000) records
# of 100 bytes (null keys, idempotent, acks=all, linger.ms 5, batch.size 16384, no
# compression) into a fresh 3-partition topic with 5 in flight. B is, in turn:
#   1. BASELINE_BIN (if given): a bench_clients built from an earlier commit (one batch per
#      partition in flight, the producer before issue 25's change), same arguments. Build it
#      in a target directory of its own: built from another checkout into this tree's target,
#      cargo takes the old library as up to date for this tree (same package, same hash) and
#      both binaries are the same (the script refuses that);
#   2. the same binary as A with max.in.flight.requests.per.connection=1.
# Each command's own line (records=… secs=… mb_per_s=…) is kept in
# target/bench-report/inflight-*.log; farm-bench's report (wall, cpu, peak RSS, A/B) is
# printed and kept in target/bench-report/inflight.txt. Not part of scripts/test.sh.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
records=${1:-300000}
runs=${2:-5}
baseline=${3:-}
env_file=${KSG_CLUSTER_ENV:?set KSG_CLUSTER_ENV to the cluster.env of a running broker: scripts/kafka.sh start}
boot=$(awk -F= '/^KSG_BOOTSTRAP_PLAINTEXT=/ {print $2}' "$env_file")
run_dir=$(awk -F= '/^KSG_RUN_DIR=/ {print $2}' "$env_file")
out=$repo/target/bench-report
mkdir -p "$out"
bin=$repo/target/release/examples/bench_clients
log() { printf '[bench-inflight.sh] %s\n' "$*" >&2; }

log "building examples/bench_clients (release)"
cargo build --quiet --release --example bench_clients
export KSG_RUN_DIR=$run_dir
topic=bench-inflight-$$
bash "$repo/scripts/kafka.sh" tool org.apache.kafka.tools.TopicCommand --bootstrap-server "$boot" \
  --create --topic "$topic" --partitions 3 --replication-factor 1 > /dev/null
args=(produce "$boot" "$topic" "$records" 100 none 16384 5)
if [ -n "$baseline" ] && cmp -s "$bin" "$baseline"; then
  log "$baseline is the same binary as $bin: build the baseline in its own CARGO_TARGET_DIR"
  exit 1
fi
report=$out/inflight.txt
printf 'load before: %s\n' "$(uptime)" | tee "$report"
# compare NAME A-COMMAND B-COMMAND: farm-bench A vs B, each run's own line kept.
compare() {
  local name=$1 a=$2 b=$3
  rm -f "$out/inflight-$name-a.log" "$out/inflight-$name-b.log"
  log "$name: $runs pairs"
  farm-bench -n "$runs" --timeout 1800 \
    --vs "sh -c 'exec $b >>$out/inflight-$name-b.log 2>&1'" \
    -- sh -c "exec $a >>$out/inflight-$name-a.log 2>&1" | tee -a "$report"
  for side in a b; do
    printf '%s %s mb_per_s: %s\n' "$name" "$side" \
      "$(sed -nE 's/.*mb_per_s=([0-9.]+).*/\1/p' "$out/inflight-$name-$side.log" | tr '\n' ' ')" |
      tee -a "$report"
  done
}
if [ -n "$baseline" ]; then
  compare before "$bin ${args[*]} 5" "$baseline ${args[*]}"
fi
compare one "$bin ${args[*]} 5" "$bin ${args[*]} 1"
printf 'load after: %s\n' "$(uptime)" | tee -a "$report"
