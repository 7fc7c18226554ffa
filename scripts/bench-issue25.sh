#!/usr/bin/env bash
# Issue 25, like for like: the Rust WordCount instance against Java Kafka Streams 4.4.0 with
# in-memory and with RocksDB stores, on one broker, one input, one commit interval (1000 ms).
#
#   scripts/bench-issue25.sh [--lines N] [--partitions P] [--java-stores LIST]
#                            [--restore-records N] [--restore-keys K] [--items "1 2 3 5"]
#                            [--profile-lines N] [--paced-lines N] [--paced-rate R] [--bin-dir DIR]
#
#   1  WordCount words/s and peak RSS: scripts/bench-wordcount.sh --java-stores LIST
#      (default "memory rocksdb memory@32m": in-memory and RocksDB at the peer's -Xmx256m,
#      in-memory again at -Xmx32m, the heap the state needs).
#   2  restore: N changelog records (default 5,000,000, K = 100,000 keys, P partitions) of the
#      WordCount store restored into an in-memory store by a Rust processing member, by
#      processing::ChangelogReader alone, and by Java members (in-memory, RocksDB), one after
#      the other on the same changelog (same application id).
#   3  time to RUNNING and to the first count update, from process launch (JVM start included),
#      each instance a fresh application on the same pre-loaded input; and in the same runs
#   4  changelog records per input line / word, all with the record cache on at the default
#      statestore.cache.max.bytes (10 MiB), commit 1000 ms: Rust, Java in-memory (caching
#      enabled: --store memory-cached) and Java RocksDB (item 1 runs both sides with the cache
#      off instead, so that every word is one output record to count).
#   5  perf profile of the Rust instance's processing of the input (flame graph + top costs);
#      --profile-lines N profiles an input of N lines instead (more samples); its CPU time per
#      word is the samples' count (cpu-clock at 999 Hz) over the words.
#   paced  changelog records like for like: Rust, Java in-memory (cached) and Java RocksDB all
#      at once, each its own application on one input topic, fed --paced-lines lines (60,000)
#      at --paced-rate lines/s (2,000) once all are RUNNING (bench-issue25-items.sh says why).
#   threads  num.stream.threads 1 vs 2 on the items-3/4 input, twice each, with the CPU time
#      the process used (words/s per thread count and cores busy; bench-issue25-items.sh).
# Item 1 also runs the Rust instance with num.stream.threads=2 (bench-wordcount.sh --threads2).
# --bin-dir DIR (items 2, 3, paced, threads, 5) runs the Rust binaries (word_count, word_count_watch, bench_streams) found in
# DIR instead of building this checkout's (e.g. a baseline's, for a before/after profile).
#
# Figures go to target/bench-report/issue25-*.txt, the summary table to
# target/bench-report/issue25-summary.md (benches/support/issue25_report.py). Uses
# KSG_CLUSTER_ENV if set, else starts a broker (KSG_PORT_BASE, default 19892) and stops it.
# Not part of scripts/test.sh.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
lines=200000
partitions=4
java_stores="memory rocksdb memory@32m"
restore_records=5000000
restore_keys=100000
items="1 2 3 paced threads 5"
profile_lines=""
paced_lines=60000
paced_rate=2000
bin_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --lines) lines=$2; shift 2 ;;
    --partitions) partitions=$2; shift 2 ;;
    --java-stores) java_stores=$2; shift 2 ;;
    --restore-records) restore_records=$2; shift 2 ;;
    --restore-keys) restore_keys=$2; shift 2 ;;
    --items) items=$2; shift 2 ;;
    --profile-lines) profile_lines=$2; shift 2 ;;
    --paced-lines) paced_lines=$2; shift 2 ;;
    --paced-rate) paced_rate=$2; shift 2 ;;
    --bin-dir) bin_dir=$2; shift 2 ;;
    *) sed -n '2,36p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
  esac
done
out=$repo/target/bench-report
mkdir -p "$out"
log() { printf '[bench-issue25] %s\n' "$*" >&2; }
want() { case " $items " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
work=$(mktemp -d)
started=""
cleanup() {
  jobs -p | xargs -r kill 2>/dev/null || true
  rm -rf "$work"
  if [ -n "$started" ]; then KSG_RUN_DIR=$started bash scripts/kafka.sh stop >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

log "building (release) and the Java peer"
if [ -z "$bin_dir" ]; then
  cargo build --quiet --release --example word_count --example word_count_watch --example bench_streams
fi
bash scripts/streams-peer.sh build
bin=${bin_dir:-$repo/target/release/examples}
if [ -z "${KSG_CLUSTER_ENV:-}" ]; then
  run_dir=$repo/.kafka/bench-issue25
  KSG_RUN_DIR=$run_dir KSG_PORT_BASE=${KSG_PORT_BASE:-19892} bash scripts/kafka.sh start --kafka "${KSG_KAFKA_VERSION:-4.4.0}" >&2
  started=$run_dir
  KSG_CLUSTER_ENV=$run_dir/cluster.env
fi
export KSG_CLUSTER_ENV
export KSG_RUN_DIR=$(dirname "$KSG_CLUSTER_ENV")
bootstrap=$(grep '^KSG_BOOTSTRAP_PLAINTEXT=' "$KSG_CLUSTER_ENV" | cut -d= -f2)
kafka_version=$(grep '^KSG_KAFKA_VERSION=' "$KSG_CLUSTER_ENV" | cut -d= -f2)
heap=${KSG_PEER_HEAP:-256m}
classpath=$(bash scripts/streams-peer.sh classpath)
store=KSTREAM-AGGREGATE-STATE-STORE-0000000003
machine="$(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), Kafka $kafka_version at $bootstrap"
echo "# $(date -u +%Y-%m-%dT%H:%MZ) $machine; git $(git rev-parse --short HEAD)" > "$out/issue25-machine.txt"

topic() { # name partitions [--config K=V ...]
  local name=$1 parts=$2; shift 2
  bash scripts/kafka.sh tool org.apache.kafka.tools.TopicCommand --bootstrap-server "$bootstrap" \
    --create --if-not-exists --topic "$name" --partitions "$parts" "$@" >/dev/null
}
end_offsets() { # topic -> sum of the partitions' end offsets
  bash scripts/kafka.sh tool org.apache.kafka.tools.GetOffsetShell --bootstrap-server "$bootstrap" \
    --topic "$1" --time -1 2>/dev/null | awk -F: '{ s += $NF } END { print s + 0 }'
}
# Peak resident set of pid $1 (sampled every 0.2 s until it exits) into file $2, in kB.
sample_rss() {
  local pid=$1 peak=0 r
  while kill -0 "$pid" 2>/dev/null; do
    r=$(awk '/VmRSS/ { print $2 }' "/proc/$pid/status" 2>/dev/null || echo 0)
    [ "${r:-0}" -gt "$peak" ] && peak=$r
    echo "$peak" > "$2"
    sleep 0.2
  done
}
# Waits until file $1 has a line matching $2 (up to $3 seconds); prints that line.
wait_line() {
  local t=0
  until grep -m1 -E "$2" "$1" 2>/dev/null; do
    sleep 0.1; t=$((t + 1))
    [ "$t" -ge $(( $3 * 10 )) ] && { log "timed out waiting for '$2' in $1"; return 1; }
  done
  return 0 # (the loop's status is its body's last test's once it waited at all)
}
ms_now() { date +%s%3N; }
# Starts an instance in the background reading commands from fifo $work/ctl-$name; sets $pid.
# kind: rust (bench_streams run) or java-STORE[@HEAP]; extra args go to the instance.
launch() {
  local name=$1 kind=$2 app=$3 input=$4 output=$5; shift 5
  rm -f "$work/ctl-$name"; mkfifo "$work/ctl-$name"
  if [ "$kind" = rust ]; then
    "$bin/bench_streams" run --bootstrap-server "$bootstrap" --application-id "$app" \
      --input "$input" --output "$output" --commit-ms 1000 "$@" \
      < "$work/ctl-$name" > "$work/$name.events" 2> "$work/$name.log" &
  else
    local v=${kind#java-}; local st=${v%%@*} h=$heap
    [ "$v" != "$st" ] && h=${v#*@}
    # java directly (not through streams-peer.sh): the launch is the JVM's start.
    java -Xmx"$h" -cp "$classpath" dev.ksg.peer.StreamsPeer --group "$app" --bootstrap "$bootstrap" \
      --input "$input" --output "$output" --topology wordcount --store "$st" --commit-ms 1000 \
      --bench-events --log-file "$work/$name-peer.log" "$@" \
      < "$work/ctl-$name" > "$work/$name.events" 2> "$work/$name.log" &
  fi
  pid=$!
  exec 4>"$work/ctl-$name"
}
stop_instance() { # pid
  echo close >&4 || true; exec 4>&-
  local t=0
  while kill -0 "$1" 2>/dev/null && [ $t -lt 600 ]; do sleep 0.1; t=$((t + 1)); done
  kill "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}
event_ms() { # events-file regex -> epoch ms of the first matching bench line
  grep -m1 -E "^bench $2 " "$1" | awk '{ print $NF }'
}

# ---- the input (the same generator as bench-wordcount.sh) ---------------------------------------
gen_input() { # lines file
  awk -v n="$1" 'BEGIN { srand(16); for (i = 0; i < n; i++) { k = 1 + int(rand() * 7); s = "";
    for (j = 0; j < k; j++) { r = int(1 / (rand() * 0.999 + 0.001)); s = s (j ? " " : "") "w" r }
    print s } }' > "$2"
}
gen_input "$lines" "$work/input.txt"
words=$(awk '{ n += NF } END { print n }' "$work/input.txt")

# ---- 1: words/s and peak RSS --------------------------------------------------------------------
if want 1; then
  log "item 1: WordCount like for like ($lines lines, Java: $java_stores)"
  bash scripts/bench-wordcount.sh --lines "$lines" --partitions "$partitions" --threads2 \
    --java-stores "$java_stores" | tee "$out/issue25-wordcount.txt"
fi

source "$repo/scripts/bench-issue25-items.sh"
if want 2; then item_restore | tee "$out/issue25-restore.txt"; fi
if want 3 || want 4; then item_running | tee "$out/issue25-running.txt"; fi
if want paced; then item_changelog_paced | tee "$out/issue25-paced.txt"; fi
if want threads; then item_threads | tee "$out/issue25-threads.txt"; fi
if want 5; then item_profile | tee "$out/issue25-profile.txt"; fi
echo "# load at the end $(cut -d' ' -f1-3 /proc/loadavg) ($(date -u +%H:%MZ))" >> "$out/issue25-machine.txt"
python3 benches/support/issue25_report.py "$out" > "$out/issue25-summary.md"
cat "$out/issue25-summary.md"
