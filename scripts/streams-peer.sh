#!/usr/bin/env bash
# A real Java Kafka Streams 4.4.0 application for live tests (testing/streams-peer/).
#
#   scripts/streams-peer.sh build                 compile it (Maven); a no-op when up to date
#   scripts/streams-peer.sh run ARGS...           run it; stdin/stdout carry the control protocol
#   scripts/streams-peer.sh print-topology ARGS...  print the heartbeat topology JSON, no Kafka
#   scripts/streams-peer.sh classpath             print the java classpath (build first)
#   scripts/streams-peer.sh topology-order        copartition oracle: topology specs on stdin,
#                                                 Kafka Streams' heartbeat topology JSON on stdout
#                                                 (TopologyOrder.java; KSG_JAVA picks the java binary)
#
# ARGS: --group ID --bootstrap HOST:PORT [--input T] [--output T] [--app-server H:P] [--tag K=V]
#       [--threads N] [--state-dir D] [--commit-ms MS] [--poison V] [--config K=V] [--log-file F]
#       (see testing/streams-peer/README.md)
#
# Environment: JAVA_OPTS (extra JVM flags, e.g. -Dpeer.log.network.level=DEBUG),
#              KSG_PEER_HEAP (default 256m).
# The first build resolves kafka-streams from Maven Central into ~/.m2; later builds run Maven
# offline, and a build whose jar is newer than every source does not start Maven at all.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=$repo/testing/streams-peer
jar=$dir/target/streams-peer.jar
heap=${KSG_PEER_HEAP:-256m}

log() { printf '[streams-peer.sh] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

up_to_date() {
  [ -f "$jar" ] && [ -f "$dir/target/lib/.complete" ] || return 1
  # Any source or the pom newer than the jar means a rebuild.
  [ -z "$(find "$dir/pom.xml" "$dir/src" -newer "$jar" -print -quit)" ]
}

build() {
  if up_to_date; then
    return
  fi
  command -v mvn >/dev/null || die "mvn not found: install Maven (apt-get install maven)"
  command -v java >/dev/null || die "java not found: install a JDK 17+"
  local t0; t0=$(date +%s%3N)
  mkdir -p "$dir/target"; rm -f "$dir/target/lib/.complete"
  # Offline first: after one online build everything is in ~/.m2, and offline skips the
  # update checks. Fall back to online when something is missing.
  if ! mvn -B -q -Dstyle.color=never -o -f "$dir/pom.xml" package >"$dir/target/mvn-offline.log" 2>&1; then
    log "offline build failed (first build?): building online"
    mvn -B -q -Dstyle.color=never -f "$dir/pom.xml" package >&2 || die "maven build failed"
  fi
  rm -f "$dir/target/mvn-offline.log"
  [ -f "$jar" ] || die "build produced no $jar"
  touch "$dir/target/lib/.complete"
  log "built $jar in $(( $(date +%s%3N) - t0 )) ms"
}

classpath() { printf '%s:%s/target/lib/*' "$jar" "$dir"; }

# shellcheck disable=SC2086 # JAVA_OPTS is a list of flags
run_java() { exec java -Xmx"$heap" ${JAVA_OPTS:-} -cp "$(classpath)" dev.ksg.peer.StreamsPeer "$@"; }

cmd=${1:-}
[ $# -gt 0 ] && shift
case "$cmd" in
  build) build ;;
  run) build; run_java "$@" ;;
  print-topology) build; run_java --print-topology "$@" ;;
  classpath) build; classpath; echo ;;
  # shellcheck disable=SC2086 # JAVA_OPTS is a list of flags
  topology-order) build; exec "${KSG_JAVA:-java}" -Xmx"$heap" ${JAVA_OPTS:-} -cp "$(classpath)" dev.ksg.peer.TopologyOrder ;;
  *) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
