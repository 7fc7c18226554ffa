#!/usr/bin/env bash
# A real, single-node Apache Kafka (KRaft, combined broker+controller) for tests and the demo.
#
#   scripts/kafka.sh fetch  [--kafka VERSION]   resolve the broker jars into the cache (Maven)
#   scripts/kafka.sh start  [--kafka VERSION]   fetch, format a fresh store, start, wait until ready
#   scripts/kafka.sh stop                       stop the broker this script started (pid file)
#   scripts/kafka.sh status                     say what runs and where
#   scripts/kafka.sh tool CLASS [ARGS...]       run a Kafka tool class against the fetched jars
#
# Environment (all optional):
#   KSG_KAFKA_VERSION  broker version, default 4.4.0 (4.3.x and 4.2.x also supported)
#   KSG_PORT_BASE      first port, default 19092: PLAINTEXT +0, SSL +1 (mutual TLS required),
#                      SASL_PLAINTEXT +2, SASL_SSL +3, CONTROLLER +4
#   KSG_RUN_DIR        state of this broker (data, logs, TLS material, cluster.env),
#                      default <repo>/.kafka/run-<port base>
#   KSG_CACHE_DIR      jar cache, default ${XDG_CACHE_HOME:-~/.cache}/kafka-streams-group
#   KSG_BROKER_CONFIG  extra server.properties lines ("k=v" separated by newlines or ';')
#   KSG_HEAP           broker heap, default 512m
#
# The broker binds 127.0.0.1 only. Everything it needs is made here: TLS material with openssl
# and keytool, SCRAM users at format time, the group settings that make tests fast.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
version=${KSG_KAFKA_VERSION:-4.4.0}
port_base=${KSG_PORT_BASE:-19092}

cmd=${1:-}
[ $# -gt 0 ] && shift
while [ $# -gt 0 ]; do
  case "$1" in
    --kafka) version=$2; shift 2 ;;
    --kafka=*) version=${1#--kafka=}; shift ;;
    *) break ;;
  esac
done

run_dir=${KSG_RUN_DIR:-$repo/.kafka/run-$port_base}
cache_dir=${KSG_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kafka-streams-group}
libs=$cache_dir/kafka-$version/libs
heap=${KSG_HEAP:-512m}

p_plain=$port_base
p_ssl=$((port_base + 1))
p_sasl_plain=$((port_base + 2))
p_sasl_ssl=$((port_base + 3))
p_controller=$((port_base + 4))

# Test credentials. They protect nothing but a loopback broker that lives for one test run.
plain_user=ksg-plain
plain_password=ksg-plain-secret
scram_user=ksg-scram
scram_password=ksg-scram-secret
admin_user=ksg-admin
admin_password=ksg-admin-secret
store_password=ksg-store-secret

log() { printf '[kafka.sh] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
now_ms() { date +%s%3N; }

fetch() {
  if [ -f "$libs/.complete" ]; then
    log "Kafka $version jars: cached in $libs ($(ls "$libs" | wc -l) jars, no download)"
    return
  fi
  command -v mvn >/dev/null || die "mvn not found: install Maven (apt-get install maven)"
  local t0; t0=$(now_ms)
  log "Kafka $version jars: resolving from Maven Central into $libs"
  rm -rf "$libs"; mkdir -p "$libs"
  if ! mvn -B -q -f "$repo/testing/kafka-dist/pom.xml" -Dkafka.version="$version" \
      dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$libs" >&2; then
    rm -rf "$libs"
    die "could not resolve org.apache.kafka:kafka_2.13:$version (is the version published?)"
  fi
  [ -f "$libs/kafka_2.13-$version.jar" ] || die "kafka_2.13-$version.jar missing after resolution"
  touch "$libs/.complete"
  log "Kafka $version jars: resolved in $(( $(now_ms) - t0 )) ms"
}

java_cp() { java -cp "$libs/*" -Dlog4j2.configurationFile="$run_dir/tools-log4j2.properties" "$@"; }

tool() {
  [ -f "$libs/.complete" ] || fetch
  [ -f "$run_dir/tools-log4j2.properties" ] || { mkdir -p "$run_dir"; write_log4j; }
  java_cp -Xmx256m "$@"
}

write_log4j() {
  cat >"$run_dir/log4j2.properties" <<EOF
status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = $run_dir/server.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
logger.kafka.name = kafka
logger.kafka.level = INFO
logger.coordinator.name = org.apache.kafka.coordinator.group
logger.coordinator.level = INFO
EOF
  cat >"$run_dir/tools-log4j2.properties" <<EOF
status = error
appender.err.type = Console
appender.err.name = err
appender.err.target = SYSTEM_ERR
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.err.ref = err
EOF
}

make_tls() {
  local d=$run_dir/tls
  mkdir -p "$d"
  command -v openssl >/dev/null || die "openssl not found (apt-get install openssl)"
  command -v keytool >/dev/null || die "keytool not found (it ships with the JDK)"
  # A CA, a broker certificate for localhost/127.0.0.1, and a client certificate for mutual TLS.
  openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=kafka-streams-group test CA" \
    -keyout "$d/ca.key" -out "$d/ca.pem" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
  local name
  for name in broker client; do
    local san ext
    if [ "$name" = broker ]; then
      san="subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1"; ext=serverAuth
    else
      san="subjectAltName=DNS:ksg-client"; ext=clientAuth
    fi
    openssl req -newkey rsa:2048 -nodes -subj "/CN=ksg-$name" \
      -keyout "$d/$name.key" -out "$d/$name.csr" 2>/dev/null
    printf '%s\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=%s\n' \
      "$san" "$ext" >"$d/$name.ext"
    openssl x509 -req -in "$d/$name.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" -CAcreateserial \
      -days 30 -extfile "$d/$name.ext" -out "$d/$name.pem" 2>/dev/null
    # PKCS#8 key next to the certificate, the form rustls reads.
    openssl pkcs8 -topk8 -nocrypt -in "$d/$name.key" -out "$d/$name-pkcs8.key"
  done
  openssl pkcs12 -export -in "$d/broker.pem" -inkey "$d/broker.key" -certfile "$d/ca.pem" \
    -name broker -passout "pass:$store_password" -out "$d/broker.p12"
  keytool -importcert -noprompt -alias ca -file "$d/ca.pem" -storetype PKCS12 \
    -keystore "$d/truststore.p12" -storepass "$store_password" >/dev/null 2>&1
}

write_config() {
  local ssl_common="ssl.keystore.type=PKCS12
ssl.keystore.location=$run_dir/tls/broker.p12
ssl.keystore.password=$store_password
ssl.key.password=$store_password
ssl.truststore.type=PKCS12
ssl.truststore.location=$run_dir/tls/truststore.p12
ssl.truststore.password=$store_password
ssl.endpoint.identification.algorithm=
ssl.enabled.protocols=TLSv1.2,TLSv1.3"
  local plain_jaas="org.apache.kafka.common.security.plain.PlainLoginModule required username=\"$admin_user\" password=\"$admin_password\" user_$admin_user=\"$admin_password\" user_$plain_user=\"$plain_password\";"
  local scram_jaas="org.apache.kafka.common.security.scram.ScramLoginModule required;"
  local oauth_jaas="org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub=\"$admin_user\";"
  {
    cat <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$p_controller
listeners=PLAINTEXT://127.0.0.1:$p_plain,SSL://127.0.0.1:$p_ssl,SASL_PLAINTEXT://127.0.0.1:$p_sasl_plain,SASL_SSL://127.0.0.1:$p_sasl_ssl,CONTROLLER://127.0.0.1:$p_controller
advertised.listeners=PLAINTEXT://127.0.0.1:$p_plain,SSL://localhost:$p_ssl,SASL_PLAINTEXT://127.0.0.1:$p_sasl_plain,SASL_SSL://localhost:$p_sasl_ssl
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL
log.dirs=$run_dir/data
num.network.threads=2
num.io.threads=4
num.partitions=1
num.recovery.threads.per.data.dir=1
auto.create.topics.enable=false
offsets.topic.num.partitions=1
offsets.topic.replication.factor=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
# Test-speed Streams group settings (shared/docs/kafka-broker-setup.md section 5).
# Keys a version does not know are only logged as unused.
group.streams.initial.rebalance.delay.ms=0
group.streams.assignment.interval.ms=0
group.streams.min.heartbeat.interval.ms=500
group.streams.heartbeat.interval.ms=500
group.streams.min.session.timeout.ms=3000
group.streams.session.timeout.ms=3000
# SASL: PLAIN (users in JAAS), SCRAM-SHA-256/512 (users created at format time), OAUTHBEARER
# (unsecured JWS tokens, test only).
sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER
EOF
    local l
    for l in sasl_plaintext sasl_ssl; do
      echo "listener.name.$l.plain.sasl.jaas.config=$plain_jaas"
      echo "listener.name.$l.scram-sha-256.sasl.jaas.config=$scram_jaas"
      echo "listener.name.$l.scram-sha-512.sasl.jaas.config=$scram_jaas"
      echo "listener.name.$l.oauthbearer.sasl.jaas.config=$oauth_jaas"
    done
    echo "$ssl_common"
    # The SSL listener demands a client certificate (mutual TLS); SASL_SSL authenticates by SASL.
    echo "listener.name.ssl.ssl.client.auth=required"
    echo "listener.name.sasl_ssl.ssl.client.auth=none"
    if [ -n "${KSG_BROKER_CONFIG:-}" ]; then
      echo "# KSG_BROKER_CONFIG"
      printf '%s\n' "${KSG_BROKER_CONFIG//;/$'\n'}"
    fi
  } >"$run_dir/server.properties"
}

write_cluster_env() {
  local f=$run_dir/cluster.env
  cat >"$f.tmp" <<EOF
# Written by scripts/kafka.sh; read by the tests (tests/common) and the examples.
KSG_KAFKA_VERSION=$version
KSG_BOOTSTRAP_PLAINTEXT=127.0.0.1:$p_plain
KSG_BOOTSTRAP_SSL=localhost:$p_ssl
KSG_BOOTSTRAP_SASL_PLAINTEXT=127.0.0.1:$p_sasl_plain
KSG_BOOTSTRAP_SASL_SSL=localhost:$p_sasl_ssl
KSG_PLAIN_USERNAME=$plain_user
KSG_PLAIN_PASSWORD=$plain_password
KSG_SCRAM_USERNAME=$scram_user
KSG_SCRAM_PASSWORD=$scram_password
KSG_CA_PEM=$run_dir/tls/ca.pem
KSG_CA_KEY=$run_dir/tls/ca.key
KSG_CLIENT_CERT_PEM=$run_dir/tls/client.pem
KSG_CLIENT_KEY_PEM=$run_dir/tls/client-pkcs8.key
KSG_KAFKA_LIBS=$libs
KSG_RUN_DIR=$run_dir
KSG_BROKER_LOG=$run_dir/server.log
KSG_BROKER_PID=$(cat "$run_dir/broker.pid")
KSG_GROUP_HEARTBEAT_INTERVAL_MS=500
KSG_GROUP_SESSION_TIMEOUT_MS=3000
EOF
  mv "$f.tmp" "$f"
}

pid_alive() { [ -f "$run_dir/broker.pid" ] && kill -0 "$(cat "$run_dir/broker.pid")" 2>/dev/null; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

start() {
  local t_start; t_start=$(now_ms)
  if pid_alive; then die "a broker started from $run_dir already runs (pid $(cat "$run_dir/broker.pid")); scripts/kafka.sh stop first"; fi
  command -v java >/dev/null || die "java not found: install a JDK 17+ (apt-get install openjdk-17-jdk-headless)"
  local p
  for p in $p_plain $p_ssl $p_sasl_plain $p_sasl_ssl $p_controller; do
    port_open "$p" && die "port $p is taken; set KSG_PORT_BASE to a free range"
  done
  fetch
  local t_fetched; t_fetched=$(now_ms)
  rm -rf "$run_dir"; mkdir -p "$run_dir"
  write_log4j
  make_tls
  write_config
  local t_tls; t_tls=$(now_ms)

  local cluster_id
  cluster_id=$(java_cp -Xmx128m kafka.tools.StorageTool random-uuid)
  java_cp -Xmx256m kafka.tools.StorageTool format -t "$cluster_id" -c "$run_dir/server.properties" \
    --add-scram "SCRAM-SHA-256=[name=$scram_user,password=$scram_password]" \
    --add-scram "SCRAM-SHA-512=[name=$scram_user,password=$scram_password]" \
    >"$run_dir/format.log" 2>&1 || { cat "$run_dir/format.log" >&2; die "kafka-storage format failed"; }
  local t_formatted; t_formatted=$(now_ms)

  log "starting Kafka $version (KRaft, node 1) in $run_dir"
  nohup java -Xms128m -Xmx"$heap" -XX:+UseSerialGC -Djava.awt.headless=true \
    -Dkafka.logs.dir="$run_dir" -Dlog4j2.configurationFile="$run_dir/log4j2.properties" \
    -cp "$libs/*" kafka.Kafka "$run_dir/server.properties" \
    >"$run_dir/stdout.log" 2>&1 </dev/null &
  echo $! >"$run_dir/broker.pid"

  local deadline=$(( $(date +%s) + 120 ))
  for p in $p_plain $p_ssl $p_sasl_plain $p_sasl_ssl; do
    until port_open "$p"; do
      pid_alive || { tail -n 60 "$run_dir/server.log" "$run_dir/stdout.log" >&2 || true; die "broker exited during start-up"; }
      [ "$(date +%s)" -lt "$deadline" ] || { tail -n 60 "$run_dir/server.log" >&2 || true; die "broker not listening on $p after 120 s"; }
      sleep 0.2
    done
  done
  local t_listening; t_listening=$(now_ms)
  log "listeners up: PLAINTEXT 127.0.0.1:$p_plain, SSL localhost:$p_ssl (mutual TLS), SASL_PLAINTEXT 127.0.0.1:$p_sasl_plain, SASL_SSL localhost:$p_sasl_ssl"

  # streams.version must be finalized at >= 1, or StreamsGroupHeartbeat answers UNSUPPORTED_VERSION.
  local features level="" tries=0
  while :; do
    features=$(java_cp -Xmx128m org.apache.kafka.tools.FeatureCommand \
      --bootstrap-server "127.0.0.1:$p_plain" describe 2>&1) && break
    tries=$((tries + 1))
    [ $tries -lt 20 ] || { echo "$features" >&2; tail -n 60 "$run_dir/server.log" >&2; die "kafka-features describe kept failing"; }
    sleep 0.5
  done
  level=$(printf '%s\n' "$features" | awk '/Feature: streams.version/ { for (i = 1; i <= NF; i++) if ($i == "FinalizedVersionLevel:") print $(i + 1) }')
  if [ -z "$level" ] || [ "$level" -lt 1 ]; then
    printf '%s\n' "$features" >&2
    tail -n 60 "$run_dir/server.log" >&2
    die "streams.version is not finalized at >= 1 (got '${level:-none}'); Streams groups are disabled"
  fi
  write_cluster_env
  local t_ready; t_ready=$(now_ms)
  log "streams.version FinalizedVersionLevel: $level"
  log "Kafka $version ready: start-to-ready $((t_ready - t_fetched)) ms (tls $((t_tls - t_fetched)) ms, format $((t_formatted - t_tls)) ms, listening $((t_listening - t_formatted)) ms, features $((t_ready - t_listening)) ms); cluster file $run_dir/cluster.env"
  echo "$run_dir/cluster.env"
}

stop() {
  if ! [ -f "$run_dir/broker.pid" ]; then log "no broker pid file in $run_dir; nothing to stop"; return; fi
  local pid; pid=$(cat "$run_dir/broker.pid")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    local i
    for i in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then log "broker $pid did not stop in 15 s; killing"; kill -9 "$pid" 2>/dev/null || true; fi
    log "stopped broker $pid ($run_dir)"
  else
    log "broker $pid ($run_dir) was not running"
  fi
  rm -f "$run_dir/broker.pid" "$run_dir/cluster.env"
}

status() {
  if pid_alive; then
    echo "running: Kafka (pid $(cat "$run_dir/broker.pid")) from $run_dir"
    [ -f "$run_dir/cluster.env" ] && grep -E '^KSG_(KAFKA_VERSION|BOOTSTRAP_)' "$run_dir/cluster.env"
  else
    echo "not running ($run_dir)"
    return 1
  fi
}

case "$cmd" in
  fetch) fetch ;;
  start) start ;;
  stop) stop ;;
  status) status ;;
  tool) tool "$@" ;;
  *) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
