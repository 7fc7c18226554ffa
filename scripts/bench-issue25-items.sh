#!/usr/bin/env bash
# Items 2, 3-4 and 5 of scripts/bench-issue25.sh (sourced by it: uses its variables and
# helpers). Each prints one line per instance, "impl=… key=value …", for issue25_report.py.

# ---- 2: restore ----------------------------------------------------------------------------------
# One changelog, restored by each in turn: the Rust member, the Rust ChangelogReader alone, and
# each Java store kind. The members share one application id, so they read the same changelog;
# each leaves the group before the next one joins.
item_restore() {
  local app=bench25-restore-$$ changelog in=bench25-restore-$$-in rss
  changelog=$app-$store-changelog
  topic "$in" "$partitions"; topic "$app-out" "$partitions"
  topic "$changelog" "$partitions" --config cleanup.policy=compact
  log "item 2: filling $changelog with $restore_records records ($restore_keys keys)"
  "$bin/bench_streams" fill-changelog --bootstrap-server "$bootstrap" --topic "$changelog" \
    --partitions "$partitions" --records "$restore_records" --keys "$restore_keys" >&2
  local end; end=$(end_offsets "$changelog")
  echo "# changelog $changelog: $end records, $restore_keys keys, $partitions partitions"

  log "item 2: rust-member"
  launch rust-restore rust "$app" "$in" "$app-out"
  local p=$pid; echo 0 > "$work/rss"; sample_rss "$p" "$work/rss" & local s=$!
  wait_line "$work/rust-restore.events" '^bench state Running' 900 >/dev/null || true
  read -r rss < "$work/rss"; stop_instance "$p"; kill "$s" 2>/dev/null || true
  python3 - "$work/rust-restore.log" "$(grep '^bench stats' "$work/rust-restore.events")" "$rss" <<'EOF'
import re, sys
t = float
starts, ends, n = [], [], 0
for line in open(sys.argv[1]):
    m = re.match(r"\[(\d+) +\w+ +\S+\] store \S+: (restoring|restored (\d+) records)", line)
    if m:
        (starts if m.group(2) == "restoring" else ends).append(t(m.group(1)))
        n += int(m.group(3) or 0)
ms = (max(ends) - min(starts)) if starts and ends else 0
print(f"impl=rust-member records={n} ms={ms:.0f} rate={n / max(ms, 1) * 1000:.0f} "
      f"partitions={len(ends)} peak_rss_mb={int(sys.argv[3]) // 1024} ({sys.argv[2]})")
EOF

  log "item 2: rust-reader (processing::ChangelogReader alone)"
  "$bin/bench_streams" restore --bootstrap-server "$bootstrap" --topic "$changelog" \
    --partitions "$partitions" > "$work/reader.out" 2> "$work/reader.log" &
  p=$!; echo 0 > "$work/rss"; sample_rss "$p" "$work/rss" & s=$!
  wait "$p" || log "rust-reader failed"; kill "$s" 2>/dev/null || true; read -r rss < "$work/rss"
  echo "impl=rust-reader $(grep -o 'records=.*' "$work/reader.out" | sed 's/^restore //') peak_rss_mb=$((rss / 1024))"

  local kind
  for kind in $java_stores; do
    [ "$kind" = "${kind%@*}" ] || continue # one heap per store kind is enough here
    log "item 2: java-$kind"
    launch "j-restore-$kind" "java-$kind" "$app" "$in" "$app-out"
    p=$pid; echo 0 > "$work/rss"; sample_rss "$p" "$work/rss" & s=$!
    local ev=$work/j-restore-$kind.events t=0
    while [ "$(grep -c '^bench restore-end' "$ev" 2>/dev/null || true)" -lt "$partitions" ] && [ $t -lt 9000 ]; do
      sleep 0.1; t=$((t + 1))
    done
    read -r rss < "$work/rss"; stop_instance "$p"; kill "$s" 2>/dev/null || true
    awk -v impl="java-$kind" -v rss="$rss" '
      $2 == "restore-start" { if (!first || $NF < first) first = $NF }
      $2 == "restore-end" { n += $4; if ($NF > last) last = $NF; parts++ }
      END { ms = last - first; printf "impl=%s records=%d ms=%d rate=%.0f partitions=%d peak_rss_mb=%d\n",
        impl, n, ms, (ms > 0 ? n / ms * 1000 : 0), parts, rss / 1024 }' "$ev"
  done
}

# ---- 3 and 4: time to RUNNING; changelog records per input record ---------------------------------
# Each instance a fresh application on the same pre-loaded input, launched with the clock
# running: RUNNING and the first count update are read off its events, completion off the
# output (bench_streams watch-final: the last counts add up to every word), then it closes and
# its changelog's end offsets are the records it wrote. All three with the record cache on at
# Kafka Streams' default size (statestore.cache.max.bytes 10 MiB): Rust (bench_streams run:
# ProcessingConfig's default), Java with the in-memory store, caching enabled (--store
# memory-cached; the peer sets the cache to 0 unless told, so it is passed), and Java's default
# RocksDB store (count(), caching enabled) with the same cache size.
item_running() {
  local in=bench25-in-$$ kind
  topic "$in" "$partitions"
  log "items 3-4: loading $lines lines ($words words) into $in"
  bash scripts/kafka.sh tool org.apache.kafka.tools.ConsoleProducer --bootstrap-server "$bootstrap" \
    --topic "$in" --producer-property linger.ms=50 < "$work/input.txt" >/dev/null
  echo "# $lines lines, $words words, $partitions partitions; commit 1000 ms"
  for kind in rust java-memory-cache java-rocksdb-cache; do
    local app=bench25-run-$kind-$$ name=run-$kind
    topic "$app-out" "$partitions"
    "$bin/bench_streams" watch-final --bootstrap-server "$bootstrap" --topic "$app-out" \
      --partitions "$partitions" --words "$words" --timeout 900 > "$work/$name.watch" &
    local watch=$!
    sleep 1 # the watcher connected (it reads from the beginning anyway)
    local t0; t0=$(ms_now)
    if [ "$kind" = rust ]; then
      launch "$name" rust "$app" "$in" "$app-out"
    elif [ "$kind" = java-memory-cache ]; then
      launch "$name" java-memory-cached "$app" "$in" "$app-out" --config statestore.cache.max.bytes=10485760
    else
      launch "$name" java-rocksdb "$app" "$in" "$app-out" --config statestore.cache.max.bytes=10485760
    fi
    local p=$pid; echo 0 > "$work/rss"; sample_rss "$p" "$work/rss" & local s=$!
    wait "$watch" || log "$kind: watcher failed: $(cat "$work/$name.watch")"
    local rss; read -r rss < "$work/rss"
    stop_instance "$p"; kill "$s" 2>/dev/null || true
    local ev=$work/$name.events running first cl started
    # Rebalancing: the instance is built and started (Java: KafkaStreams#start, so the JVM
    # start and the setup before it lie before this; Rust: ProcessingRuntime::start joined).
    started=$(event_ms "$ev" 'state (Rebalancing|REBALANCING)')
    running=$(event_ms "$ev" 'state (Running|RUNNING)')
    first=$(event_ms "$ev" 'first-record')
    cl=$(end_offsets "$app-$store-changelog")
    echo "impl=$kind started_ms=$(( ${started:-$t0} - t0 )) running_ms=$(( ${running:-$t0} - t0 )) first_record_ms=$(( ${first:-$t0} - t0 ))" \
      "changelog_records=$cl lines=$lines words=$words peak_rss_mb=$((rss / 1024))" \
      "($(cat "$work/$name.watch"); $(grep '^bench stats' "$ev" || true))"
  done
}

# ---- 5: profile of the Rust processing loop -------------------------------------------------------
# perf (cpu-clock samples, DWARF call stacks) of examples/word_count processing the items-3/4
# input as a fresh application; the join and idle waits take no samples (nothing runs).
item_profile() {
  local in=bench25-in-$$ app=bench25-prof-$$ data=$out/issue25-perf.data n=$lines file=$work/input.txt
  local words=$words
  if [ -n "$profile_lines" ] && [ "$profile_lines" != "$lines" ]; then
    in=bench25-prof-in-$$ n=$profile_lines file=$work/profile-input.txt
    gen_input "$n" "$file"
    words=$(awk '{ n += NF } END { print n }' "$file")
  fi
  topic "$in" "$partitions"
  if [ "$(end_offsets "$in")" -lt "$n" ]; then
    bash scripts/kafka.sh tool org.apache.kafka.tools.ConsoleProducer --bootstrap-server "$bootstrap" \
      --topic "$in" --producer-property linger.ms=50 < "$file" >/dev/null
  fi
  topic "$app-out" "$partitions"
  "$bin/word_count_watch" --bootstrap-server "$bootstrap" --topic "$app-out" \
    --partitions "$partitions" --records "$words" --timeout 900 > "$work/prof.watch" &
  local watch=$!
  rm -f "$work/ctl-prof"; mkfifo "$work/ctl-prof"
  perf record -q -F 999 -e cpu-clock --call-graph dwarf,16384 -o "$data" -- \
    "$bin/word_count" --bootstrap-server "$bootstrap" --application-id "$app" --input "$in" \
    --output "$app-out" --partitions "$partitions" --commit-ms 1000 --quiet --no-stdin-input \
    < "$work/ctl-prof" > "$work/prof.log" 2>&1 &
  local p=$!
  exec 4>"$work/ctl-prof"
  wait "$watch" || log "profile: watcher failed"
  echo close >&4; exec 4>&-
  wait "$p" || true
  echo "# perf record -F 999 -e cpu-clock --call-graph dwarf of word_count, $words words ($(cat "$work/prof.watch"))"
  # Whole reports to files first: a reader that stops early would fail the pipeline (pipefail).
  perf report -i "$data" --no-children --sort symbol --stdio -g none --percent-limit 1 \
    > "$work/self.txt" 2>/dev/null || true
  perf report -i "$data" --children --sort symbol --stdio -g none --percent-limit 3 \
    > "$work/incl.txt" 2>/dev/null || true
  local tidy='s/[[:space:]]+-[[:space:]]+-[[:space:]]*$//; s/^[[:space:]]+//'
  grep -E '^ +[0-9]' "$work/self.txt" | sed -E "$tidy" | awk 'NR <= 25 { print "self " $0 }' || true
  grep -E '^ +[0-9]' "$work/incl.txt" | sed -E "$tidy" | awk 'NR <= 45 { print "inclusive " $0 }' || true
  perf script -i "$data" 2>/dev/null > "$work/perf.script" || true
  python3 benches/support/flamegraph.py --folded "$out/issue25-perf.folded" \
    --title "word_count (Rust), WordCount processing of $words words (perf, cpu-clock)" \
    < "$work/perf.script" > "$out/issue25-flamegraph.svg"
  log "flame graph: $out/issue25-flamegraph.svg"
  awk -v words="$words" '{ n += $NF } END { printf "cpu samples=%d cpu_ms=%.0f us_per_word=%.3f words=%d\n",
    n, n / 0.999, n / 0.999 * 1000 / words, words }' "$out/issue25-perf.folded"
}

# ---- paced: changelog records with the same input timing on every side -----------------------------
# Item 5 of the issue, made like for like. Run alone on a pre-loaded input (item_running), each
# instance writes about one changelog record per key per commit that falls inside its
# processing, so the faster one writes fewer: the Rust/Java ratio followed the processing time
# and the commit phase (0.65× and 1.02× against RocksDB in two runs of the same code). Here all
# three (Rust, Java in-memory with caching, Java RocksDB; record cache 10 MiB, commit 1000 ms)
# run at once, each its own application on ONE input topic, and the input is written only once
# all are RUNNING, at a fixed pace (--paced-rate lines/s for --paced-lines lines), which each
# keeps up with: every side sees the same records arrive at the same times, spans the same
# number of commit intervals, and the count compares the caches' deduplication alone.
item_changelog_paced() {
  local in=bench25-paced-in-$$ kind n=$paced_lines file=$work/paced-input.txt
  gen_input "$n" "$file"
  local words; words=$(awk '{ n += NF } END { print n }' "$file")
  topic "$in" "$partitions"
  echo "# paced: $n lines ($words words) at $paced_rate lines/s into one topic read by all three at once; $partitions partitions; commit 1000 ms; cache 10 MiB"
  local -A pids fds watches
  for kind in rust java-memory-cache java-rocksdb-cache; do
    local app=bench25-paced-$kind-$$ name=paced-$kind
    topic "$app-out" "$partitions"
    "$bin/bench_streams" watch-final --bootstrap-server "$bootstrap" --topic "$app-out" \
      --partitions "$partitions" --words "$words" --timeout 900 > "$work/$name.watch" &
    watches[$kind]=$!
    if [ "$kind" = rust ]; then
      launch "$name" rust "$app" "$in" "$app-out"
    elif [ "$kind" = java-memory-cache ]; then
      launch "$name" java-memory-cached "$app" "$in" "$app-out" --config statestore.cache.max.bytes=10485760 \
        --config log.summary.interval.ms=1000
    else
      launch "$name" java-rocksdb "$app" "$in" "$app-out" --config statestore.cache.max.bytes=10485760 \
        --config log.summary.interval.ms=1000
    fi
    pids[$kind]=$pid
    local fd; exec {fd}>&4; exec 4>&-
    fds[$kind]=$fd
  done
  for kind in rust java-memory-cache java-rocksdb-cache; do
    wait_line "$work/paced-$kind.events" 'state (Running|RUNNING)' 300 >/dev/null || log "paced: $kind not RUNNING"
  done
  sleep 2 # every side idle-polling the empty input
  log "paced: feeding $n lines at $paced_rate lines/s"
  python3 - "$file" "$paced_rate" <<'PY' | bash scripts/kafka.sh tool org.apache.kafka.tools.ConsoleProducer \
      --bootstrap-server "$bootstrap" --topic "$in" --producer-property linger.ms=5 >/dev/null
import sys, time
lines = open(sys.argv[1]).read().splitlines(True)
rate = float(sys.argv[2]); step = max(1, int(rate / 100)); t0 = time.monotonic()
for i in range(0, len(lines), step):
    sys.stdout.write("".join(lines[i:i + step])); sys.stdout.flush()
    wait = t0 + (i + step) / rate - time.monotonic()
    if wait > 0: time.sleep(wait)
PY
  for kind in rust java-memory-cache java-rocksdb-cache; do
    local name=paced-$kind app=bench25-paced-$kind-$$
    wait "${watches[$kind]}" || log "paced: $kind: watcher failed: $(cat "$work/$name.watch")"
    local fd=${fds[$kind]}
    echo close >&"$fd" || true; exec {fd}>&-
    local t=0
    while kill -0 "${pids[$kind]}" 2>/dev/null && [ $t -lt 600 ]; do sleep 0.1; t=$((t + 1)); done
    kill "${pids[$kind]}" 2>/dev/null || true
    wait "${pids[$kind]}" 2>/dev/null || true
    # Java's task commits: its StreamThread's summary line every second ("committed N total
    # tasks since the last update"); Rust's commit rounds are in its stats line.
    local tc=""
    if [ -f "$work/$name-peer.log" ]; then
      tc="java_task_commits=$(grep -o 'committed [0-9]* total tasks' "$work/$name-peer.log" | awk '{ n += $2 } END { print n + 0 }')"
    fi
    echo "impl=$kind changelog_records=$(end_offsets "$app-$store-changelog") lines=$n words=$words $tc" \
      "($(cat "$work/$name.watch"); $(grep '^bench stats' "$work/$name.events" || true))"
  done
}

# ---- threads: num.stream.threads 1 and 2, with the CPU each used ------------------------------------
# The same pre-loaded input (item_running's topic) processed by examples/word_count with 1 and
# then 2 stream threads, each a fresh application (record cache off, as item 1): words/s as
# item 1 counts it, and the process's CPU time (utime + stime from /proc, read just before it
# closes) per word and per second of that window: "cores" near 2 means both threads ran at
# once, near 1 that they took turns (no spare core), whatever the code allows.
item_threads() {
  local in=bench25-in-$$ t
  topic "$in" "$partitions"
  if [ "$(end_offsets "$in")" -lt "$lines" ]; then
    bash scripts/kafka.sh tool org.apache.kafka.tools.ConsoleProducer --bootstrap-server "$bootstrap" \
      --topic "$in" --producer-property linger.ms=50 < "$work/input.txt" >/dev/null
  fi
  local hz; hz=$(getconf CLK_TCK)
  echo "# threads: $lines lines ($words words), $partitions partitions, commit 1000 ms, cache off; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
  for t in 1 2 1 2; do
    local app=bench25-thr$t-$RANDOM-$$ name=thr$t
    topic "$app-out" "$partitions"
    "$bin/word_count_watch" --bootstrap-server "$bootstrap" --topic "$app-out" \
      --partitions "$partitions" --records "$words" --timeout 900 > "$work/$name.watch" &
    local watch=$!
    rm -f "$work/ctl-$name"; mkfifo "$work/ctl-$name"
    "$bin/word_count" --bootstrap-server "$bootstrap" --application-id "$app" --input "$in" \
      --output "$app-out" --partitions "$partitions" --commit-ms 1000 --quiet --no-stdin-input \
      --threads "$t" --cache-max-bytes 0 < "$work/ctl-$name" > "$work/$name.log" 2>&1 &
    local p=$!
    exec 4>"$work/ctl-$name"
    wait "$watch" || log "threads $t: watcher failed"
    local ticks; ticks=$(awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null || echo 0)
    echo close >&4; exec 4>&-
    wait "$p" || true
    python3 - "$t" "$ticks" "$hz" "$words" "$(cat "$work/$name.watch")" <<'PY'
import re, sys
t, ticks, hz, words, watch = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
m = {k: float(v) for k, v in re.findall(r"(\w+)=([\d.]+)", watch)}
cpu = ticks / hz
window = m.get("last", 0) - m.get("first", 0)
print(f"impl=rust-threads{t} words_per_s={m.get('rate', 0):.0f} cpu_s={cpu:.2f} "
      f"us_per_word={cpu * 1e6 / words:.2f} cores={cpu / window if window > 0 else 0:.2f} ({watch})")
PY
  done
}
