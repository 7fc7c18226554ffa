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

# WordCount: feed three lines on stdin, let them be counted, close.
wc_app=examples-wc-$$-$RANDOM
{ printf '%s\n' "all streams lead to kafka" "hello kafka streams" "join kafka summit"; sleep 8; echo close; } |
  "$bin/word_count" --bootstrap-server "$bootstrap" --application-id "$wc_app" \
    --input "$wc_app-in" --output "$wc_app-out" >"$out/word_count" 2>&1 || true
check word_count "$out/word_count" 'count "kafka" 3'
check word_count-close "$out/word_count" "left cleanly"

# WordCount written with the DSL: the same three lines, the same counts.
wc_app=examples-wcdsl-$$-$RANDOM
{ printf '%s\n' "all streams lead to kafka" "hello kafka streams" "join kafka summit"; sleep 8; echo close; } |
  "$bin/word_count_dsl" --bootstrap-server "$bootstrap" --application-id "$wc_app" \
    --input "$wc_app-in" --output "$wc_app-out" >"$out/word_count_dsl" 2>&1 || true
check word_count_dsl "$out/word_count_dsl" 'count "kafka" 3'
check word_count_dsl-close "$out/word_count_dsl" "left cleanly"

echo "examples: $((8 - failures)) passed, $failures failed"
[ "$failures" -eq 0 ]
