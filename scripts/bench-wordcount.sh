#!/usr/bin/env bash
# WordCount throughput and memory: the Rust instance (examples/word_count/, release build)
# vs the Java WordCount (testing/streams-peer --topology wordcount, Kafka Streams 4.4.0), each
# alone in its own application, on the same pre-loaded input and the same broker.
#
#   scripts/bench-wordcount.sh [--lines N] [--partitions P] [--reps R] [--baseline REV | --baseline-bin PATH]
#                              [--baseline-first] [--no-java] [--java-stores LIST] [--threads2]
#                              [--commit-ms MS] [--eos]
#
# --baseline-bin PATH runs an already built word_count binary as the baseline instead.
# --threads2 also runs this checkout's instance with num.stream.threads=2 (impl "rust2") in each
# rep, right after the 1-thread run.
# --eos also runs this checkout's instance with processing.guarantee=exactly_once_v2 (impl
# "rust-eos") in each rep, right after the at-least-once run, and, unless --no-java, the Java
# peer with --processing-guarantee exactly_once_v2 (impl "java-eos") right after the Java run;
# every watcher then reads read_committed, and the summary gives per rep rust-eos/rust,
# rust-eos/java-eos and java-eos/java (issue 24). --commit-ms MS sets every instance's commit
# interval (default 1000; Java's exactly-once default is 100).
# --baseline REV also runs the word_count example as built from commit REV (in a temporary git
# worktree, its own target dir), in the same run, so a change's before/after is one comparison;
# --baseline-first runs it before this checkout's in each rep (the second run meets a warmer
# broker, so compare both orders).
# --java-stores LIST runs one Java instance per item of the space-separated LIST instead of the
# one RocksDB instance (issue 25): STORE[@HEAP], STORE = rocksdb (WordCountDemo's count()) or
# memory (Stores.inMemoryKeyValueStore, caching disabled), HEAP the -Xmx (default: the peer's
# 256m); each is reported as java-STORE[@HEAP]. E.g. --java-stores "memory rocksdb memory@32m".
#
# The input lines are keyed by their line number, so the producer's default partitioner
# (murmur2 of the key, Java's) spreads them evenly over the partitions, as an application's
# keyed producer would (null keys went in sticky batches, unevenly: 10,138 / 1,238 / 3,099 /
# 5,525 of 20,000 lines in one probe).
#
# Words/s = output records (one count update per word, the record cache off on both sides:
# the Java peer sets statestore.cache.max.bytes=0, and the Rust instance is run with
# --cache-max-bytes 0 when its binary has the flag, so both write every update) per
# second between the first and the last output record, as seen by examples/word_count_watch.rs
# (so JVM start, joining and topic creation are not counted). RSS = peak resident set of the
# instance's process, sampled every 0.2 s, with its peak open fds, threads and established TCP
# connections (from /proc and `ss`). All commit every --commit-ms (1000 ms). Uses KSG_CLUSTER_ENV if
# set, else starts a broker (KSG_PORT_BASE, default 19792) and stops it at the end. Not part of
# scripts/test.sh. Prints one line per run and a summary.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
lines=200000
partitions=4
reps=1
baseline=""
java=1
baseline_first=0
java_stores=""
threads2=0
baseline_bin_given=""
commit_ms=1000
eos=0
while [ $# -gt 0 ]; do
  case "$1" in
    --lines) lines=$2; shift 2 ;;
    --partitions) partitions=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --baseline) baseline=$2; shift 2 ;;
    --no-java) java=0; shift ;;
    --baseline-first) baseline_first=1; shift ;;
    --java-stores) java_stores=$2; shift 2 ;;
    --threads2) threads2=1; shift ;;
    --baseline-bin) baseline_bin_given=$2; shift 2 ;;
    --commit-ms) commit_ms=$2; shift 2 ;;
    --eos) eos=1; shift ;;
    *) sed -n '2,41p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
  esac
done
log() { printf '[bench-wordcount] %s\n' "$*" >&2; }
work=$(mktemp -d)
started=""
cleanup() {
  jobs -p | xargs -r kill 2>/dev/null || true
  if [ -n "$baseline" ] && [ -d "$work/baseline" ]; then git worktree remove --force "$work/baseline" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
  if [ -n "$started" ]; then KSG_RUN_DIR=$started bash scripts/kafka.sh stop >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

log "building (release) and the Java peer"
cargo build --quiet --release --example word_count --example word_count_watch
if [ "$java" = 1 ]; then bash scripts/streams-peer.sh build; fi
baseline_bin=""
if [ -n "$baseline" ]; then
  log "building the word_count example of $baseline (release) in a temporary worktree"
  git worktree add --detach -q "$work/baseline" "$baseline"
  (cd "$work/baseline" && CARGO_TARGET_DIR=$repo/target/bench-baseline cargo build --quiet --release --example word_count)
  baseline_bin=$repo/target/bench-baseline/release/examples/word_count
fi
if [ -n "$baseline_bin_given" ]; then
  baseline=given baseline_bin=$baseline_bin_given
fi
if [ -z "${KSG_CLUSTER_ENV:-}" ]; then
  run_dir=$repo/.kafka/bench-wordcount
  KSG_RUN_DIR=$run_dir KSG_PORT_BASE=${KSG_PORT_BASE:-19792} bash scripts/kafka.sh start --kafka "${KSG_KAFKA_VERSION:-4.4.0}" >&2
  started=$run_dir
  KSG_CLUSTER_ENV=$run_dir/cluster.env
fi
export KSG_RUN_DIR=$(dirname "$KSG_CLUSTER_ENV")
bootstrap=$(grep '^KSG_BOOTSTRAP_PLAINTEXT=' "$KSG_CLUSTER_ENV" | cut -d= -f2)
kafka_version=$(grep '^KSG_KAFKA_VERSION=' "$KSG_CLUSTER_ENV" | cut -d= -f2)

# Deterministic input: lower-case ASCII words, Zipf-like, single spaces (so words = fields).
awk -v n="$lines" 'BEGIN { srand(16); for (i = 0; i < n; i++) { k = 1 + int(rand() * 7); s = "";
  for (j = 0; j < k; j++) { r = int(1 / (rand() * 0.999 + 0.001)); s = s (j ? " " : "") "w" r }
  print s } }' > "$work/input.txt"
words=$(awk '{ n += NF } END { print n }' "$work/input.txt")
input=bench-wc-in-$$
topic() { bash scripts/kafka.sh tool org.apache.kafka.tools.TopicCommand --bootstrap-server "$bootstrap" \
  --create --if-not-exists --topic "$1" --partitions "$partitions" >/dev/null; }
topic "$input"
log "loading $lines lines ($words words) into $input ($partitions partitions, keyed by line number)"
awk '{ print NR "\t" $0 }' "$work/input.txt" > "$work/keyed.txt"
bash scripts/kafka.sh tool org.apache.kafka.tools.ConsoleProducer --bootstrap-server "$bootstrap" \
  --topic "$input" --producer-property linger.ms=50 --reader-property parse.key=true \
  --reader-property key.separator=$'\t' < "$work/keyed.txt" >/dev/null 2>&1
spread=$(bash scripts/kafka.sh tool org.apache.kafka.tools.GetOffsetShell --bootstrap-server "$bootstrap" \
  --topic "$input" 2>/dev/null | awk -F: '{ printf "%s%s", (NR > 1 ? " / " : ""), $3 }')
log "lines per partition: $spread"

# Peaks of pid $1 until it exits, written to $2 as "rss_kb fds threads tcp": resident set,
# open file descriptors, threads, established TCP connections. The Java peer runs under a
# wrapper script, so its JVM is found as the newest java child of the pid.
sample_peaks() {
  local pid=$1 rss=0 fds=0 thr=0 tcp=0 r f t c target
  while kill -0 "$pid" 2>/dev/null; do
    target=$(pgrep -n -P "$pid" java 2>/dev/null || echo "$pid")
    r=$(awk '/VmRSS/ { print $2 }' "/proc/$target/status" 2>/dev/null || echo 0)
    t=$(awk '/Threads/ { print $2 }' "/proc/$target/status" 2>/dev/null || echo 0)
    f=$(ls "/proc/$target/fd" 2>/dev/null | wc -l)
    c=$(ss -Htnp state established 2>/dev/null | grep -c "pid=$target," || true)
    [ "${r:-0}" -gt "$rss" ] && rss=$r
    [ "${f:-0}" -gt "$fds" ] && fds=$f
    [ "${t:-0}" -gt "$thr" ] && thr=$t
    [ "${c:-0}" -gt "$tcp" ] && tcp=$c
    echo "$rss $fds $thr $tcp" > "$2"
    sleep 0.2
  done
}

run_one() { # impl rep  (impl: rust, baseline, java or java-STORE[@HEAP])
  local impl=$1 rep=$2 app=bench-wc-${1//@/-}-$$-$2 pid
  local out=$app-out
  topic "$out"
  rm -f "$work/ctl"; mkfifo "$work/ctl"
  local rc=(); [ "$eos" = 1 ] && rc=(--read-committed)
  ./target/release/examples/word_count_watch --bootstrap-server "$bootstrap" --topic "$out" \
    --partitions "$partitions" --records "$words" --timeout 900 "${rc[@]}" > "$work/watch" &
  local watch=$!
  if [ "${impl%%-*}" != java ]; then
    local bin=./target/release/examples/word_count extra=()
    [ "$impl" = baseline ] && bin=$baseline_bin
    [ "$impl" = rust2 ] && extra=(--threads 2)
    [ "$impl" = rust-eos ] && extra=(--processing-guarantee exactly_once_v2)
    # Like for like with the Java peer, which runs with its record cache off; an older
    # baseline binary has no cache and no such flag.
    # (--help exits 2, so its text is taken first: under pipefail the pipe would fail.)
    local usage; usage=$("$bin" --help 2>&1 || true)
    if grep -q -- --cache-max-bytes <<<"$usage"; then extra+=(--cache-max-bytes 0); fi
    "$bin" --bootstrap-server "$bootstrap" --application-id "$app" \
      --input "$input" --output "$out" --partitions "$partitions" --commit-ms "$commit_ms" --quiet \
      --no-stdin-input "${extra[@]}" < "$work/ctl" > "$work/$impl.log" 2>&1 &
  elif [ "$impl" = java ] || [ "$impl" = java-eos ]; then
    local guarantee=at_least_once; [ "$impl" = java-eos ] && guarantee=exactly_once_v2
    bash scripts/streams-peer.sh run --group "$app" --bootstrap "$bootstrap" --input "$input" \
      --output "$out" --topology wordcount --commit-ms "$commit_ms" --log-file "$work/$impl-peer.log" \
      --processing-guarantee "$guarantee" < "$work/ctl" > "$work/$impl.log" 2>&1 &
  else
    local variant=${impl#java-}; local store=${variant%%@*} heap=${KSG_PEER_HEAP:-256m}
    [ "$variant" != "$store" ] && heap=${variant#*@}
    KSG_PEER_HEAP=$heap bash scripts/streams-peer.sh run --group "$app" --bootstrap "$bootstrap" \
      --input "$input" --output "$out" --topology wordcount --store "$store" --commit-ms "$commit_ms" \
      --log-file "$work/$impl-peer.log" < "$work/ctl" > "$work/$impl.log" 2>&1 &
  fi
  pid=$!
  exec 3>"$work/ctl"
  echo "0 0 0 0" > "$work/peaks"
  sample_peaks "$pid" "$work/peaks" &
  local sampler=$!
  wait "$watch" || { log "$impl: watcher failed: $(cat "$work/watch")"; }
  local rss fds thr tcp; read -r rss fds thr tcp < "$work/peaks"
  echo close >&3; exec 3>&-
  wait "$pid" || true
  kill "$sampler" 2>/dev/null || true
  local rate; rate=$(sed -n 's/.*rate=\([0-9]*\).*/\1/p' "$work/watch")
  echo "$impl rep=$rep words=$words words_per_s=${rate:-?} peak_rss_mb=$((rss / 1024)) peak_fds=$fds peak_threads=$thr peak_tcp=$tcp ($(cat "$work/watch"))" \
    | tee -a "$work/results"
}

echo "# Kafka $kafka_version at $bootstrap; $lines lines, $words words, $partitions partitions ($spread lines); commit every $commit_ms ms; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for rep in $(seq 1 "$reps"); do
  if [ -n "$baseline" ] && [ "$baseline_first" = 1 ]; then run_one baseline "$rep"; fi
  run_one rust "$rep"
  if [ "$eos" = 1 ]; then run_one rust-eos "$rep"; fi
  if [ "$threads2" = 1 ]; then run_one rust2 "$rep"; fi
  if [ -n "$baseline" ] && [ "$baseline_first" = 0 ]; then run_one baseline "$rep"; fi
  if [ "$java" = 1 ] && [ -z "$java_stores" ]; then run_one java "$rep"; fi
  if [ "$java" = 1 ] && [ "$eos" = 1 ] && [ -z "$java_stores" ]; then run_one java-eos "$rep"; fi
  if [ "$java" = 1 ]; then for v in $java_stores; do run_one "java-$v" "$rep"; done; fi
done
if [ "$eos" = 1 ]; then
  # Per rep: the ratios of words/s within the rep (same input, same broker, minutes apart).
  awk '{ split($2, r, "="); split($4, w, "="); rate[$1, r[2]] = w[2]; reps[r[2]] = 1 }
    function ratio(a, b) { return (a + 0 > 0 && b + 0 > 0) ? sprintf("%.2f", a / b) : "-" }
    END { for (k in reps) printf "# rep %s: rust-eos/rust %s, rust-eos/java-eos %s, java-eos/java %s, rust/java %s\n", k,
      ratio(rate["rust-eos", k], rate["rust", k]), ratio(rate["rust-eos", k], rate["java-eos", k]),
      ratio(rate["java-eos", k], rate["java", k]), ratio(rate["rust", k], rate["java", k]) }' "$work/results" | sort
fi
echo "# load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
