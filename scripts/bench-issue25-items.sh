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
}
