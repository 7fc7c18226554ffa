#!/usr/bin/env bash
# The demo: a local Kafka broker plus a Rust instance of Kafka's WordCount application.
#
#   scripts/demo.sh [--kafka VERSION] [--duration SECONDS] [--member] [-- EXAMPLE ARGS...]
#
# Starts a broker with scripts/kafka.sh (unless KSG_CLUSTER_ENV names a running one), runs
# examples/word_count/ against it (application demo-wordcount: it creates the topics, joins
# the Streams group, gets its tasks, counts words), writes a few lines of text to the input
# topic, prints every count update, and after --duration seconds (default 15) commits and
# leaves; then it stops the broker it started. Lines typed on stdin are counted too
# (`close` ends early). --member runs the earlier demo instead: examples/streams_member.rs,
# a member that prints task assignments and processes nothing (Ctrl-C leaves). Run a second
# copy in another terminal (with KSG_CLUSTER_ENV set to the printed cluster file) to watch the
# tasks split between two members.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
version=${KSG_KAFKA_VERSION:-4.4.0}
duration=""
mode=wordcount
while [ $# -gt 0 ]; do
  case "$1" in
    --kafka) version=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --member) mode=member; shift ;;
    --) shift; break ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) break ;;
  esac
done

command -v cargo >/dev/null || { echo "cargo not found: install Rust with rustup (https://rustup.rs)" >&2; exit 1; }
if [ "$mode" = member ]; then
  cargo build --quiet --example streams_member
else
  cargo build --quiet --example word_count
fi

started=""
if [ -z "${KSG_CLUSTER_ENV:-}" ]; then
  run_dir=$repo/.kafka/demo
  export KSG_RUN_DIR=$run_dir
  trap 'KSG_RUN_DIR=$run_dir bash "$repo/scripts/kafka.sh" stop' EXIT
  if ! KSG_RUN_DIR=$run_dir bash scripts/kafka.sh status >/dev/null 2>&1; then
    bash scripts/kafka.sh start --kafka "$version" >/dev/null
    started=1
  fi
  KSG_CLUSTER_ENV=$run_dir/cluster.env
  [ -n "$started" ] || trap - EXIT
fi
bootstrap=$(grep '^KSG_BOOTSTRAP_PLAINTEXT=' "$KSG_CLUSTER_ENV" | cut -d= -f2)
echo "broker: Kafka $(grep '^KSG_KAFKA_VERSION=' "$KSG_CLUSTER_ENV" | cut -d= -f2) at $bootstrap (cluster file $KSG_CLUSTER_ENV)"
if [ "$mode" = member ]; then
  RUST_LOG=${RUST_LOG:-info} "$repo/target/debug/examples/streams_member" \
    --bootstrap-server "$bootstrap" --duration "${duration:-30}" "$@"
  exit
fi
feed() {
  printf '%s\n' "all streams lead to kafka" "hello kafka streams" "join kafka summit" \
    "Kafka Streams groups: Java and Rust side by side"
  # Lines typed in a terminal are counted too, until `close` or the duration ends.
  if [ -t 0 ]; then timeout "${duration:-15}" cat || true; else sleep "${duration:-15}"; fi
  echo close
}
feed | "$repo/target/debug/examples/word_count" --bootstrap-server "$bootstrap" \
  --application-id demo-wordcount --input demo-wordcount-input --output demo-wordcount-output \
  --partitions 2 "$@"
