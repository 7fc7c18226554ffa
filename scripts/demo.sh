#!/usr/bin/env bash
# The demo: a local Kafka broker plus a Rust member that joins a Streams group.
#
#   scripts/demo.sh [--kafka VERSION] [--duration SECONDS] [-- EXAMPLE ARGS...]
#
# Starts a broker with scripts/kafka.sh (unless KSG_CLUSTER_ENV names a running one), runs
# examples/streams_member.rs against it (it creates the input topic, joins group demo-app,
# prints every assignment transition, leaves on Ctrl-C or after --duration), then stops the
# broker it started. Run a second copy in another terminal (with KSG_CLUSTER_ENV set to the
# printed cluster file) to watch the tasks split between two members.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
version=${KSG_KAFKA_VERSION:-4.4.0}
duration=30
while [ $# -gt 0 ]; do
  case "$1" in
    --kafka) version=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) break ;;
  esac
done

command -v cargo >/dev/null || { echo "cargo not found: install Rust with rustup (https://rustup.rs)" >&2; exit 1; }
cargo build --quiet --example streams_member

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
RUST_LOG=${RUST_LOG:-info} "$repo/target/debug/examples/streams_member" \
  --bootstrap-server "$bootstrap" --duration "$duration" "$@"
