#!/usr/bin/env bash
# The Kafka conformance oracle (testing/oracle): Apache Kafka's own message classes behind a
# line protocol on stdin/stdout. See testing/oracle/src/main/java/dev/ksg/oracle/Oracle.java.
#
#   scripts/oracle.sh build    resolve kafka-clients (Maven, offline when cached) and compile
#   scripts/oracle.sh [run]    build if needed, then exec the oracle (reads commands on stdin)
#   scripts/oracle.sh cmd      print a shell command that starts the built oracle (for
#                              KSG_ORACLE_CMD; it skips the up-to-date checks and so starts faster)
#
# Build output lives in testing/oracle/target/ (classpath.txt, classes/). The first build needs
# Maven Central; later ones are a javac run at most.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=$repo/testing/oracle
target=$dir/target
cp_file=$target/classpath.txt
classes=$target/classes
src=$dir/src/main/java/dev/ksg/oracle/Oracle.java
stamp=$classes/dev/ksg/oracle/Oracle.class

log() { printf '[oracle.sh] %s\n' "$*" >&2; }

build() {
  mkdir -p "$target"
  # Serialise concurrent builds (several test binaries may start at once).
  exec 9>"$target/.build.lock"
  command -v flock >/dev/null && flock 9
  if [ ! -s "$cp_file" ] || [ "$dir/pom.xml" -nt "$cp_file" ]; then
    log "resolving classpath (kafka-clients) with Maven"
    local tmp=$cp_file.tmp
    if ! mvn -q -o -f "$dir/pom.xml" dependency:build-classpath -Dmdep.outputFile="$tmp" >&2 2>/dev/null; then
      mvn -q -f "$dir/pom.xml" dependency:build-classpath -Dmdep.outputFile="$tmp" >&2
    fi
    mv "$tmp" "$cp_file"
  fi
  if [ ! -f "$stamp" ] || [ "$src" -nt "$stamp" ] || [ "$cp_file" -nt "$stamp" ]; then
    log "compiling the oracle"
    rm -rf "$classes"
    mkdir -p "$classes"
    javac --release 17 -nowarn -d "$classes" -cp "$(cat "$cp_file")" "$src" >&2
  fi
  exec 9>&-
}

java_cmd() {
  # Serial GC and a small heap: one single-threaded process among many on a 2-core machine.
  printf 'java -XX:+UseSerialGC -Xss4m -Xmx512m -cp %q:%q dev.ksg.oracle.Oracle' \
    "$classes" "$(cat "$cp_file")"
}

case "${1:-run}" in
  build) build ;;
  cmd) build; java_cmd; echo ;;
  run) build; eval "exec $(java_cmd)" ;;
  *) echo "usage: $0 [build|run|cmd]" >&2; exit 2 ;;
esac
