#!/usr/bin/env bash
# Proves the multi-node and kill/restart support of scripts/kafka.sh against real brokers.
#
#   scripts/cluster-selftest.sh [--only cluster|single]
#
# 1. cluster: starts 3 KRaft nodes, creates a replication-factor-3 topic, commits an offset for a
#    consumer group, finds the group coordinator, SIGKILLs that node, waits for another node to
#    take over (the committed offset must still be there), restarts the node on its data, waits
#    until it is back in sync, stops everything.
# 2. single: starts one node, writes a record, SIGKILLs it (kill-node 1), restarts it
#    (restart-node 1) and reads the topic and the record back.
# Prints timings and resident memory; exits non-zero on the first failed check.
#
# Environment: KSG_PORT_BASE (default 19392 — not 19092, which the main test runs use),
# KSG_KAFKA_VERSION as for kafka.sh. Run dirs: .kafka/selftest-cluster, .kafka/selftest-single.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export KSG_PORT_BASE=${KSG_PORT_BASE:-19392}
only=${2:-}
[ "${1:-}" = "--only" ] || only=""
kafka() { bash "$repo/scripts/kafka.sh" "$@"; }
now_ms() { date +%s%3N; }
say() { printf '[selftest] %s\n' "$*"; }
fail() { printf '[selftest] FAIL: %s\n' "$*" >&2; exit 1; }

running_dir=""
cleanup() {
  if [ -n "$running_dir" ]; then KSG_RUN_DIR=$running_dir kafka stop || true; fi
}
trap cleanup EXIT INT TERM

# Kafka tools, quiet: everything they log goes to stderr.
topics() { kafka tool org.apache.kafka.tools.TopicCommand --bootstrap-server "$bootstrap" "$@"; }
groups() { kafka tool org.apache.kafka.tools.consumer.group.ConsumerGroupCommand --bootstrap-server "$bootstrap" "$@"; }
produce() { # topic, value
  printf '%s\n' "$2" | kafka tool org.apache.kafka.tools.ConsoleProducer --bootstrap-server "$bootstrap" \
    --topic "$1" --producer-property acks=all >/dev/null
}
consume() { # topic, group: prints the values of up to 1 record, commits its offset
  kafka tool org.apache.kafka.tools.consumer.ConsoleConsumer --bootstrap-server "$bootstrap" \
    --topic "$1" --group "$2" --from-beginning --max-messages 1 --timeout-ms 20000 2>/dev/null
}
# Leader of partition $2 of topic $1 ("none" while there is none), and its ISR.
leader_of() { topics --describe --topic "$1" | awk -v p="$2" '$3 == "Partition:" && $4 == p { print $6 }'; }
isr_of() { topics --describe --topic "$1" | awk -v p="$2" '$3 == "Partition:" && $4 == p { print $10 }'; }
rss_kib() { ps -o rss= -p "$1" 2>/dev/null | tr -d ' ' || true; }
report_rss() { # label, run dir
  local total=0 n pid r line=""
  for n in $(seq 1 "$(grep -c '^KSG_NODE[0-9]*_PID=' "$2/cluster.env")"); do
    pid=$(grep "^KSG_NODE${n}_PID=" "$2/cluster.env" | cut -d= -f2)
    r=$(rss_kib "$pid"); r=${r:-0}
    total=$((total + r)); line="$line node$n=$((r / 1024))MiB"
  done
  say "RSS $1:$line total=$((total / 1024))MiB"
}

cluster_test() {
  local dir=$repo/.kafka/selftest-cluster t0 t1
  say "=== 3-node cluster on port base $KSG_PORT_BASE ($dir)"
  t0=$(now_ms)
  running_dir=$dir
  KSG_RUN_DIR=$dir KSG_NODES=3 kafka start >/dev/null
  t1=$(now_ms)
  say "3 nodes ready in $((t1 - t0)) ms (wall, including TLS material and formatting)"
  local env=$dir/cluster.env
  grep -q '^KSG_NODES=3$' "$env" || fail "cluster.env lacks KSG_NODES=3"
  bootstrap=$(grep '^KSG_BOOTSTRAP_PLAINTEXT=' "$env" | cut -d= -f2)
  [ "$(tr ',' '\n' <<<"$bootstrap" | wc -l)" -eq 3 ] || fail "bootstrap is not 3 nodes: $bootstrap"
  local n
  for n in 1 2 3; do
    grep -q "^KSG_NODE${n}_PLAINTEXT=127.0.0.1:$((KSG_PORT_BASE + 10 * (n - 1)))$" "$env" || fail "KSG_NODE${n}_PLAINTEXT wrong"
  done
  say "cluster.env: KSG_BOOTSTRAP_PLAINTEXT=$bootstrap"
  report_rss "after start" "$dir"
  KSG_RUN_DIR=$dir kafka nodes

  topics --create --topic selftest-rf3 --partitions 3 --replication-factor 3 >/dev/null
  topics --describe --topic selftest-rf3 | grep -q 'ReplicationFactor: 3' || fail "topic is not RF 3"
  say "created selftest-rf3 with replication factor 3"
  produce selftest-rf3 hello-cluster
  local got; got=$(consume selftest-rf3 selftest-group)
  [ "$got" = hello-cluster ] || fail "consumed '$got', not hello-cluster"
  say "produced and consumed one record; offset committed for group selftest-group"

  # offsets.topic.num.partitions=1: every group's coordinator leads __consumer_offsets-0.
  local coord; coord=$(leader_of __consumer_offsets 0)
  say "__consumer_offsets: $(topics --describe --topic __consumer_offsets | awk '$3 == "Partition:" { print "leader", $6, "replicas", $8, "isr", $10 }')"
  local state; state=$(groups --describe --group selftest-group --state)
  printf '%s\n' "$state"
  grep -Eq "\\($coord\\)" <<<"$state" || fail "ConsumerGroupCommand names another coordinator than node $coord"
  say "coordinator of selftest-group: node $coord"

  local t_kill; t_kill=$(now_ms)
  KSG_RUN_DIR=$dir kafka kill-node "$coord"
  port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
  port_open $((KSG_PORT_BASE + 10 * (coord - 1))) && fail "node $coord still listens after kill-node"
  grep -q "^KSG_NODE${coord}_PID=$" "$env" || fail "cluster.env still has a pid for the killed node"
  # Tools must not bootstrap from the dead node only; the list still names the live ones.
  local new="" i
  for i in $(seq 1 60); do
    new=$(leader_of __consumer_offsets 0)
    if [ -n "$new" ] && [ "$new" != none ] && [ "$new" != "$coord" ]; then break; fi
    sleep 0.5
  done
  [ -n "$new" ] && [ "$new" != none ] && [ "$new" != "$coord" ] || fail "no new leader for __consumer_offsets-0 (still '$new')"
  say "node $new took over __consumer_offsets-0 $(( $(now_ms) - t_kill )) ms after SIGKILL of node $coord"
  state=$(groups --describe --group selftest-group --state)
  grep -Eq "\\($new\\)" <<<"$state" || { printf '%s\n' "$state"; fail "coordinator did not move to node $new"; }
  local offsets; offsets=$(groups --describe --group selftest-group --offsets 2>/dev/null)
  printf '%s\n' "$offsets"
  awk '$2 == "selftest-rf3" { s += $4 } END { exit !(s == 1) }' <<<"$offsets" \
    || fail "committed offset of selftest-group lost after failover"
  say "new coordinator node $new serves selftest-group; committed offset survived ($(( $(now_ms) - t_kill )) ms after kill)"
  produce selftest-rf3 while-degraded
  say "produce with acks=all works with 2 of 3 nodes (min.insync.replicas=2)"
  report_rss "with node $coord dead" "$dir"

  local t_restart; t_restart=$(now_ms)
  KSG_RUN_DIR=$dir kafka restart-node "$coord"
  say "node $coord restarted and registered in $(( $(now_ms) - t_restart )) ms"
  local isr=""
  for i in $(seq 1 60); do
    isr=$(isr_of __consumer_offsets 0)
    [ "$(tr ',' '\n' <<<"$isr" | wc -l)" -eq 3 ] && break
    sleep 0.5
  done
  [ "$(tr ',' '\n' <<<"$isr" | wc -l)" -eq 3 ] || fail "node $coord did not rejoin the ISR (isr '$isr')"
  say "node $coord back in sync: __consumer_offsets-0 isr $isr, $(( $(now_ms) - t_restart )) ms after restart"
  grep -q "^KSG_NODE${coord}_PID=[0-9]" "$env" || fail "cluster.env lacks the restarted node's pid"
  KSG_RUN_DIR=$dir kafka nodes
  report_rss "after restart" "$dir"

  local t_stop; t_stop=$(now_ms)
  KSG_RUN_DIR=$dir kafka stop
  running_dir=""
  for n in 1 2 3; do
    port_open $((KSG_PORT_BASE + 10 * (n - 1))) && fail "node $n still listens after stop"
  done
  [ -f "$env" ] && fail "cluster.env left behind by stop"
  say "stopped all 3 nodes in $(( $(now_ms) - t_stop )) ms"
}

single_test() {
  local dir=$repo/.kafka/selftest-single t0
  say "=== single node, kill-node 1 / restart-node 1 ($dir)"
  t0=$(now_ms)
  running_dir=$dir
  KSG_RUN_DIR=$dir kafka start >/dev/null
  say "1 node ready in $(( $(now_ms) - t0 )) ms"
  local env=$dir/cluster.env
  bootstrap=$(grep '^KSG_BOOTSTRAP_PLAINTEXT=' "$env" | cut -d= -f2)
  [ "$bootstrap" = "127.0.0.1:$KSG_PORT_BASE" ] || fail "single-node bootstrap changed: $bootstrap"
  report_rss "single node" "$dir"
  local old_pid; old_pid=$(grep '^KSG_BROKER_PID=' "$env" | cut -d= -f2)
  topics --create --topic selftest-survivor --partitions 1 --replication-factor 1 >/dev/null
  produce selftest-survivor persisted-record
  KSG_RUN_DIR=$dir kafka kill-node 1
  kill -0 "$old_pid" 2>/dev/null && fail "broker $old_pid survived kill-node 1"
  KSG_RUN_DIR=$dir kafka status >/dev/null && fail "status says running after kill-node 1"
  local t_restart; t_restart=$(now_ms)
  KSG_RUN_DIR=$dir kafka restart-node 1
  say "restart-node 1 took $(( $(now_ms) - t_restart )) ms"
  local new_pid; new_pid=$(grep '^KSG_BROKER_PID=' "$env" | cut -d= -f2)
  [ -n "$new_pid" ] && [ "$new_pid" != "$old_pid" ] || fail "KSG_BROKER_PID not updated ($old_pid -> $new_pid)"
  topics --list | grep -qx selftest-survivor || fail "topic selftest-survivor gone after restart"
  local got; got=$(consume selftest-survivor selftest-single-group)
  [ "$got" = persisted-record ] || fail "record lost after SIGKILL + restart (read '$got')"
  say "topic and record survived SIGKILL + restart (pid $old_pid -> $new_pid)"
  KSG_RUN_DIR=$dir kafka stop
  running_dir=""
}

case "$only" in
  "") cluster_test; single_test ;;
  cluster) cluster_test ;;
  single) single_test ;;
  *) fail "--only takes cluster or single" ;;
esac
say "PASS"
