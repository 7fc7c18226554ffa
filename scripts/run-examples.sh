#!/usr/bin/env bash
# Runs every example the way its documentation says, against the broker in a cluster.env,
# and checks what each prints. Called by scripts/test.sh (Kafka 4.4.0 phase).
#
#   scripts/run-examples.sh CLUSTER_ENV
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
env_file=${1:?usage: scripts/run-examples.sh CLUSTER_ENV}
value() { grep "^$1=" "$env_file" | cut -d= -f2-; }
bootstrap=$(value KSG_BOOTSTRAP_PLAINTEXT)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cargo build --quiet --examples
bin=$repo/target/debug/examples
failures=0
check() { # name, file, pattern
  if grep -q -- "$3" "$2"; then
    echo "example $1: ok"
  else
    echo "example $1: FAILED (no '$3' in its output)"; sed 's/^/    /' "$2" | tail -20
    failures=$((failures + 1))
  fi
}

"$bin/task_runtime" >"$out/task_runtime" 2>&1 || true
check task_runtime "$out/task_runtime" "start  +0_0 (active)"

group=examples-$$-$RANDOM
"$bin/streams_member" --bootstrap-server "$bootstrap" --group "$group" --input "$group-in" \
  --partitions 2 --duration 8 >"$out/streams_member" 2>&1 &
member=$!
# While the member runs, describe its group.
for _ in $(seq 1 40); do
  grep -q "task    +" "$out/streams_member" 2>/dev/null && break
  sleep 0.25
done
"$bin/describe_streams_group" --bootstrap-server "$bootstrap" --group "$group" --verbose \
  >"$out/describe" 2>&1 || true
wait "$member" || true
check streams_member "$out/streams_member" "left cleanly"
check describe_streams_group "$out/describe" "state:"

"$bin/tls_sasl" --cluster-env "$env_file" --duration 3 >"$out/tls_sasl" 2>&1 || true
check tls_sasl "$out/tls_sasl" "left cleanly"

# WordCount, hand-written and with the DSL: feed three lines on stdin, wait until they are
# counted (up to 90 s: a loaded machine joins and assigns slower than any fixed sleep), then
# close. The "close" line must reach the example after its counts, so stdin is a fifo kept
# open by this script.
run_word_count() { # example name, output file
  local app=examples-$1-$$-$RANDOM fifo=$out/$1.stdin pid
  mkfifo "$fifo"
  "$bin/$1" --bootstrap-server "$bootstrap" --application-id "$app" \
    --input "$app-in" --output "$app-out" <"$fifo" >"$2" 2>&1 &
  pid=$!
  exec 3>"$fifo"
  printf '%s\n' "all streams lead to kafka" "hello kafka streams" "join kafka summit" >&3
  for _ in $(seq 1 360); do
    grep -q 'count "kafka" 3' "$2" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.25
  done
  echo close >&3
  exec 3>&-
  wait "$pid" || true
}
run_word_count word_count "$out/word_count"
check word_count "$out/word_count" 'count "kafka" 3'
check word_count-close "$out/word_count" "left cleanly"
run_word_count word_count_dsl "$out/word_count_dsl"
check word_count_dsl "$out/word_count_dsl" 'count "kafka" 3'
check word_count_dsl-close "$out/word_count_dsl" "left cleanly"

echo "examples: $((8 - failures)) passed, $failures failed"
[ "$failures" -eq 0 ]
