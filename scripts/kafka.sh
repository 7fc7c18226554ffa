#!/usr/bin/env bash
# A real Apache Kafka (KRaft, combined broker+controller nodes) for tests and the demo:
# one node by default, or a small cluster on loopback with KSG_NODES=3.
#
#   scripts/kafka.sh fetch  [--kafka VERSION]   resolve the broker jars into the cache (Maven)
#   scripts/kafka.sh start  [--kafka VERSION]   fetch, format a fresh store, start, wait until ready
#   scripts/kafka.sh stop                       stop every node this script started (pid files)
#   scripts/kafka.sh status                     say what runs and where
#   scripts/kafka.sh nodes                      one line per node: id, pid, alive/dead, ports
#   scripts/kafka.sh kill-node N                SIGKILL node N (1-based); its data stays on disk
#   scripts/kafka.sh restart-node N             start node N again on the same data and ports,
#                                               wait until it listens and is back in the cluster
#   scripts/kafka.sh tool CLASS [ARGS...]       run a Kafka tool class against the fetched jars
#
# Environment (all optional):
#   KSG_KAFKA_VERSION  broker version, default 4.4.0 (4.3.x and 4.2.x also supported)
#   KSG_NODES          number of nodes for `start`, default 1 (1-9); later commands read the
#                      count from the run dir
#   KSG_PORT_BASE      first port, default 19092: PLAINTEXT +0, SSL +1 (mutual TLS required),
#                      SASL_PLAINTEXT +2, SASL_SSL +3, CONTROLLER +4; node n uses base+10*(n-1)
#   KSG_RUN_DIR        state of this broker (data, logs, TLS material, cluster.env),
#                      default <repo>/.kafka/run-<port base>; node n of a multi-node run lives
#                      in <run dir>/node-n
#   KSG_CACHE_DIR      jar cache, default ${XDG_CACHE_HOME:-~/.cache}/kafka-streams-group
#   KSG_BROKER_CONFIG  extra server.properties lines ("k=v" separated by newlines or ';'),
#                      applied to every node
#   KSG_HEAP           heap per node, default 512m (one node) or 384m (several)
#
# The broker binds 127.0.0.1 only. Everything it needs is made here: TLS material with openssl
# and keytool, SCRAM users at format time, the group settings that make tests fast.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
version=${KSG_KAFKA_VERSION:-4.4.0}
port_base=${KSG_PORT_BASE:-19092}
nodes=${KSG_NODES:-1}

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

# A started run remembers its shape, so that stop/kill-node/restart-node/nodes/status act on
# what actually runs (node count, ports, version, heap) whatever the caller's environment says.
state_file=$run_dir/nodes.state
heap_env=${KSG_HEAP:-}
load_state() {
  if [ -f "$state_file" ]; then
    # shellcheck disable=SC1090
    . "$state_file"
    nodes=$state_nodes; port_base=$state_port_base; version=$state_version; heap_env=$state_heap
  fi
}
case "$cmd" in
  stop|status|nodes|kill-node|restart-node) load_state ;;
esac

case "$nodes" in
  [1-9]) ;;
  *) printf '[kafka.sh] ERROR: KSG_NODES must be 1..9 (got %s)\n' "$nodes" >&2; exit 2 ;;
esac
libs=$cache_dir/kafka-$version/libs
if [ "$nodes" -eq 1 ]; then heap=${heap_env:-512m}; else heap=${heap_env:-384m}; fi

# Node n listens on base+10*(n-1) .. +4; node 1 keeps the single-node ports.
node_base() { echo $((port_base + 10 * ($1 - 1))); }
set_ports() {
  local b; b=$(node_base "$1")
  p_plain=$b
  p_ssl=$((b + 1))
  p_sasl_plain=$((b + 2))
  p_sasl_ssl=$((b + 3))
  p_controller=$((b + 4))
}
set_ports 1
# A single node keeps today's layout (everything directly in the run dir); node n of a cluster
# has its own directory with config, data, logs and pid file.
node_dir() { if [ "$nodes" -eq 1 ]; then echo "$run_dir"; else echo "$run_dir/node-$1"; fi; }

# Test credentials. They protect nothing but a loopback broker that lives for one test run.
plain_user=ksg-plain
plain_password=ksg-plain-secret
scram_user=ksg-scram
scram_password=ksg-scram-secret
admin_user=ksg-admin
admin_password=ksg-admin-secret
store_password=ksg-store-secret
reauth_ms=4000

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

# Broker logging for node $1 (into its directory); the tools' console logging once per run dir.
write_node_log4j() {
  local d; d=$(node_dir "$1")
  mkdir -p "$d"
  cat >"$d/log4j2.properties" <<EOF
status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = $d/server.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
logger.kafka.name = kafka
logger.kafka.level = INFO
logger.coordinator.name = org.apache.kafka.coordinator.group
logger.coordinator.level = INFO
EOF
}

write_log4j() {
  write_node_log4j 1
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

# server.properties of node $1.
write_config() {
  local n=$1 d; d=$(node_dir "$1")
  set_ports "$n"
  local voters="" i
  for i in $(seq 1 "$nodes"); do
    voters="${voters:+$voters,}$i@127.0.0.1:$(( $(node_base "$i") + 4 ))"
  done
  # Internal topics replicate to every node up to 3; with 3+ nodes a write needs 2 in-sync
  # copies, so one node can die (coordinator failover) without losing a committed offset.
  local rf=$(( nodes < 3 ? nodes : 3 ))
  local min_isr=$(( rf >= 3 ? 2 : 1 ))
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
node.id=$n
controller.quorum.voters=$voters
listeners=PLAINTEXT://127.0.0.1:$p_plain,SSL://127.0.0.1:$p_ssl,SASL_PLAINTEXT://127.0.0.1:$p_sasl_plain,SASL_SSL://127.0.0.1:$p_sasl_ssl,CONTROLLER://127.0.0.1:$p_controller
advertised.listeners=PLAINTEXT://127.0.0.1:$p_plain,SSL://localhost:$p_ssl,SASL_PLAINTEXT://127.0.0.1:$p_sasl_plain,SASL_SSL://localhost:$p_sasl_ssl
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL
log.dirs=$d/data
num.network.threads=2
num.io.threads=4
num.partitions=1
num.recovery.threads.per.data.dir=1
auto.create.topics.enable=false
offsets.topic.num.partitions=1
offsets.topic.replication.factor=$rf
share.coordinator.state.topic.replication.factor=$rf
share.coordinator.state.topic.min.isr=$min_isr
transaction.state.log.replication.factor=$rf
transaction.state.log.min.isr=$min_isr
group.initial.rebalance.delay.ms=0
EOF
    if [ "$nodes" -gt 1 ]; then
      cat <<EOF
# Cluster of $nodes: topics created without a replication factor (Streams internal topics too)
# get $rf copies; a killed node is fenced after 5 s without heartbeats, then its partitions
# (and the group coordinator it hosted) move to a surviving in-sync replica.
default.replication.factor=$rf
min.insync.replicas=$min_isr
broker.heartbeat.interval.ms=1000
broker.session.timeout.ms=5000
EOF
    fi
    cat <<EOF
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
    # KIP-368: a short session lifetime for PLAIN on SASL_PLAINTEXT only, so the live tests see
    # re-authentication happen (the broker closes connections that do not renew in time).
    echo "listener.name.sasl_plaintext.plain.connections.max.reauth.ms=$reauth_ms"
    echo "$ssl_common"
    # The SSL listener demands a client certificate (mutual TLS); SASL_SSL authenticates by SASL.
    echo "listener.name.ssl.ssl.client.auth=required"
    echo "listener.name.sasl_ssl.ssl.client.auth=none"
    if [ -n "${KSG_BROKER_CONFIG:-}" ]; then
      echo "# KSG_BROKER_CONFIG"
      printf '%s\n' "${KSG_BROKER_CONFIG//;/$'\n'}"
    fi
  } >"$d/server.properties"
}

node_pid() { local f; f=$(node_dir "$1")/broker.pid; [ -f "$f" ] && cat "$f" || true; }
node_alive() { local p; p=$(node_pid "$1"); [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }
# The single-node name, kept for the messages and checks written before clusters existed.
pid_alive() { node_alive 1; }
any_alive() { local n; for n in $(seq 1 "$nodes"); do node_alive "$n" && return 0; done; return 1; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# "host:port" of listener $1 (plain|ssl|sasl_plain|sasl_ssl) on every node, comma-separated.
bootstrap_list() {
  local kind=$1 n out="" b
  for n in $(seq 1 "$nodes"); do
    b=$(node_base "$n")
    case "$kind" in
      plain) out="${out:+$out,}127.0.0.1:$b" ;;
      ssl) out="${out:+$out,}localhost:$((b + 1))" ;;
      sasl_plain) out="${out:+$out,}127.0.0.1:$((b + 2))" ;;
      sasl_ssl) out="${out:+$out,}localhost:$((b + 3))" ;;
    esac
  done
  echo "$out"
}

write_state() {
  cat >"$state_file" <<EOF
# Written by scripts/kafka.sh start: the shape of this run, read by stop/kill-node/restart-node.
state_nodes=$nodes
state_port_base=$port_base
state_version=$version
state_heap=$heap
EOF
}

write_cluster_env() {
  local f=$run_dir/cluster.env
  cat >"$f.tmp" <<EOF
# Written by scripts/kafka.sh; read by the tests (tests/common) and the examples.
KSG_KAFKA_VERSION=$version
KSG_BOOTSTRAP_PLAINTEXT=$(bootstrap_list plain)
KSG_BOOTSTRAP_SSL=$(bootstrap_list ssl)
KSG_BOOTSTRAP_SASL_PLAINTEXT=$(bootstrap_list sasl_plain)
KSG_BOOTSTRAP_SASL_SSL=$(bootstrap_list sasl_ssl)
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
KSG_BROKER_LOG=$(node_dir 1)/server.log
KSG_BROKER_PID=$(node_pid 1)
KSG_GROUP_HEARTBEAT_INTERVAL_MS=500
KSG_GROUP_SESSION_TIMEOUT_MS=3000
KSG_SASL_PLAINTEXT_PLAIN_REAUTH_MS=$reauth_ms
# Per node (node n listens on KSG_PORT_BASE + 10*(n-1)); a killed node has an empty PID.
KSG_NODES=$nodes
EOF
  local n b
  for n in $(seq 1 "$nodes"); do
    b=$(node_base "$n")
    cat >>"$f.tmp" <<EOF
KSG_NODE${n}_PLAINTEXT=127.0.0.1:$b
KSG_NODE${n}_SSL=localhost:$((b + 1))
KSG_NODE${n}_SASL_PLAINTEXT=127.0.0.1:$((b + 2))
KSG_NODE${n}_SASL_SSL=localhost:$((b + 3))
KSG_NODE${n}_CONTROLLER=127.0.0.1:$((b + 4))
KSG_NODE${n}_PID=$(node_pid "$n")
KSG_NODE${n}_LOG=$(node_dir "$n")/server.log
EOF
  done
  mv "$f.tmp" "$f"
}

# Starts the JVM of node $1 in the background and records its pid.
launch_node() {
  local d; d=$(node_dir "$1")
  nohup java -Xms128m -Xmx"$heap" -XX:+UseSerialGC -Djava.awt.headless=true \
    -Dkafka.logs.dir="$d" -Dlog4j2.configurationFile="$d/log4j2.properties" \
    -cp "$libs/*" kafka.Kafka "$d/server.properties" \
    >"$d/stdout.log" 2>&1 </dev/null &
  echo $! >"$d/broker.pid"
}

# Waits until node $1 accepts connections on its client listeners (deadline: epoch seconds $2).
wait_listening() {
  local n=$1 deadline=$2 d p; d=$(node_dir "$1")
  set_ports "$n"
  for p in $p_plain $p_ssl $p_sasl_plain $p_sasl_ssl; do
    until port_open "$p"; do
      node_alive "$n" || { tail -n 60 "$d/server.log" "$d/stdout.log" >&2 || true; die "broker exited during start-up"; }
      [ "$(date +%s)" -lt "$deadline" ] || { tail -n 60 "$d/server.log" >&2 || true; die "broker not listening on $p after 120 s"; }
      sleep 0.2
    done
  done
}

# Waits until the brokers named in $2 (space-separated ids) are in the cluster metadata that
# bootstrap $1 serves, i.e. registered and unfenced, so they can lead and replicate partitions.
wait_registered() {
  local bootstrap=$1 want=$2 out id missing tries=0
  while :; do
    missing=""
    if out=$(java_cp -Xmx128m org.apache.kafka.tools.BrokerApiVersionsCommand \
        --bootstrap-server "$bootstrap" 2>&1); then
      for id in $want; do
        printf '%s\n' "$out" | grep -Eq "\(id: $id rack" || missing="$missing $id"
      done
      [ -z "$missing" ] && return 0
    else
      missing=" (tool failed)"
    fi
    tries=$((tries + 1))
    [ $tries -lt 60 ] || { printf '%s\n' "$out" | tail -n 20 >&2; die "brokers not registered via $bootstrap:$missing"; }
    sleep 0.5
  done
}

format_node() {
  local d; d=$(node_dir "$1")
  java_cp -Xmx256m kafka.tools.StorageTool format -t "$2" -c "$d/server.properties" \
    --add-scram "SCRAM-SHA-256=[name=$scram_user,password=$scram_password]" \
    --add-scram "SCRAM-SHA-512=[name=$scram_user,password=$scram_password]" \
    >"$d/format.log" 2>&1 || { cat "$d/format.log" >&2; log "ERROR: kafka-storage format failed (node $1)"; return 1; }
}

start() {
  local t_start; t_start=$(now_ms)
  local n
  for n in $(seq 1 "$nodes"); do
    if node_alive "$n"; then die "a broker started from $run_dir already runs (pid $(node_pid "$n")); scripts/kafka.sh stop first"; fi
  done
  command -v java >/dev/null || die "java not found: install a JDK 17+ (apt-get install openjdk-17-jdk-headless)"
  local p
  for n in $(seq 1 "$nodes"); do
    set_ports "$n"
    for p in $p_plain $p_ssl $p_sasl_plain $p_sasl_ssl $p_controller; do
      port_open "$p" && die "port $p is taken; set KSG_PORT_BASE to a free range"
    done
  done
  fetch
  local t_fetched; t_fetched=$(now_ms)
  rm -rf "$run_dir"; mkdir -p "$run_dir"
  write_log4j
  make_tls
  for n in $(seq 1 "$nodes"); do
    write_node_log4j "$n"
    write_config "$n"
  done
  write_state
  local t_tls; t_tls=$(now_ms)

  local cluster_id
  cluster_id=$(java_cp -Xmx128m kafka.tools.StorageTool random-uuid)
  if [ "$nodes" -eq 1 ]; then
    format_node 1 "$cluster_id" || die "kafka-storage format failed"
  else
    # One JVM per node, in parallel: the formats are independent and each is mostly start-up.
    local pids=() failed=0
    for n in $(seq 1 "$nodes"); do format_node "$n" "$cluster_id" & pids+=($!); done
    for p in "${pids[@]}"; do wait "$p" || failed=1; done
    [ $failed -eq 0 ] || die "kafka-storage format failed"
  fi
  local t_formatted; t_formatted=$(now_ms)

  if [ "$nodes" -eq 1 ]; then
    log "starting Kafka $version (KRaft, node 1) in $run_dir"
  else
    log "starting Kafka $version (KRaft, $nodes combined nodes, heap $heap each) in $run_dir"
  fi
  for n in $(seq 1 "$nodes"); do launch_node "$n"; done

  local deadline=$(( $(date +%s) + 120 ))
  for n in $(seq 1 "$nodes"); do wait_listening "$n" "$deadline"; done
  local t_listening; t_listening=$(now_ms)
  if [ "$nodes" -eq 1 ]; then
    set_ports 1
    log "listeners up: PLAINTEXT 127.0.0.1:$p_plain, SSL localhost:$p_ssl (mutual TLS), SASL_PLAINTEXT 127.0.0.1:$p_sasl_plain, SASL_SSL localhost:$p_sasl_ssl"
  else
    log "listeners up on $nodes nodes: PLAINTEXT $(bootstrap_list plain) (SSL/SASL_PLAINTEXT/SASL_SSL at +1/+2/+3)"
    # Creating a topic with replication factor $nodes needs every broker unfenced.
    wait_registered "$(bootstrap_list plain)" "$(seq -s ' ' 1 "$nodes")"
    log "all $nodes brokers registered and unfenced"
  fi

  # streams.version must be finalized at >= 1, or StreamsGroupHeartbeat answers UNSUPPORTED_VERSION.
  local features level="" tries=0
  while :; do
    features=$(java_cp -Xmx128m org.apache.kafka.tools.FeatureCommand \
      --bootstrap-server "$(bootstrap_list plain)" describe 2>&1) && break
    tries=$((tries + 1))
    [ $tries -lt 20 ] || { echo "$features" >&2; tail -n 60 "$(node_dir 1)/server.log" >&2; die "kafka-features describe kept failing"; }
    sleep 0.5
  done
  level=$(printf '%s\n' "$features" | awk '/Feature: streams.version/ { for (i = 1; i <= NF; i++) if ($i == "FinalizedVersionLevel:") print $(i + 1) }')
  if [ -z "$level" ] || [ "$level" -lt 1 ]; then
    printf '%s\n' "$features" >&2
    tail -n 60 "$(node_dir 1)/server.log" >&2
    die "streams.version is not finalized at >= 1 (got '${level:-none}'); Streams groups are disabled"
  fi
  write_cluster_env
  local t_ready; t_ready=$(now_ms)
  log "streams.version FinalizedVersionLevel: $level"
  log "Kafka $version ready: start-to-ready $((t_ready - t_fetched)) ms (tls $((t_tls - t_fetched)) ms, format $((t_formatted - t_tls)) ms, listening $((t_listening - t_formatted)) ms, features $((t_ready - t_listening)) ms); cluster file $run_dir/cluster.env"
  echo "$run_dir/cluster.env"
}

# Stops the broker of node $1 gracefully (SIGTERM, SIGKILL after 15 s). Background-safe.
stop_node() {
  local n=$1 d pid; d=$(node_dir "$1"); pid=$(node_pid "$1")
  if [ -z "$pid" ]; then return; fi
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    local i
    for i in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then log "broker $pid did not stop in 15 s; killing"; kill -9 "$pid" 2>/dev/null || true; fi
    if [ "$nodes" -eq 1 ]; then log "stopped broker $pid ($run_dir)"; else log "stopped node $n, broker $pid ($d)"; fi
  else
    log "broker $pid ($d) was not running"
  fi
  rm -f "$d/broker.pid"
}

stop() {
  local n found=0
  for n in $(seq 1 "$nodes"); do [ -f "$(node_dir "$n")/broker.pid" ] && found=1; done
  if [ $found -eq 0 ]; then log "no broker pid file in $run_dir; nothing to stop"; rm -f "$run_dir/cluster.env"; return; fi
  if [ "$nodes" -eq 1 ]; then
    stop_node 1
  else
    # All at once: stopping one after another makes the last nodes wait for a controller
    # quorum that is already gone. Whatever has not stopped in 15 s is killed.
    local pids=()
    for n in $(seq 1 "$nodes"); do stop_node "$n" & pids+=($!); done
    for n in "${pids[@]}"; do wait "$n" || true; done
  fi
  rm -f "$run_dir/cluster.env"
}

node_line() {
  local n=$1 b pid state
  b=$(node_base "$n"); pid=$(node_pid "$n")
  if node_alive "$n"; then state=alive; else state=dead; fi
  printf 'node %s pid %s %s PLAINTEXT 127.0.0.1:%s SSL localhost:%s SASL_PLAINTEXT 127.0.0.1:%s SASL_SSL localhost:%s CONTROLLER 127.0.0.1:%s dir %s\n' \
    "$n" "${pid:--}" "$state" "$b" $((b + 1)) $((b + 2)) $((b + 3)) $((b + 4)) "$(node_dir "$n")"
}

list_nodes() {
  [ -d "$run_dir" ] || { echo "no run dir $run_dir"; return 1; }
  local n
  for n in $(seq 1 "$nodes"); do node_line "$n"; done
}

status() {
  if [ "$nodes" -eq 1 ]; then
    if pid_alive; then
      echo "running: Kafka (pid $(node_pid 1)) from $run_dir"
      [ -f "$run_dir/cluster.env" ] && grep -E '^KSG_(KAFKA_VERSION|BOOTSTRAP_)' "$run_dir/cluster.env"
    else
      echo "not running ($run_dir)"
      return 1
    fi
  else
    if any_alive; then
      local n alive=0
      for n in $(seq 1 "$nodes"); do node_alive "$n" && alive=$((alive + 1)); done
      echo "running: Kafka, $alive of $nodes nodes alive, from $run_dir"
      list_nodes
      [ -f "$run_dir/cluster.env" ] && grep -E '^KSG_(KAFKA_VERSION|BOOTSTRAP_)' "$run_dir/cluster.env"
    else
      echo "not running ($run_dir)"
      return 1
    fi
  fi
}

check_node_arg() {
  case "${1:-}" in
    [1-9]) [ "$1" -le "$nodes" ] || die "node $1 does not exist (this run has $nodes node(s))" ;;
    *) die "usage: scripts/kafka.sh $cmd N   (N = 1..$nodes)" ;;
  esac
  [ -f "$(node_dir "$1")/server.properties" ] || die "node $1 was never started from $run_dir"
}

# SIGKILL, as a crash would: no controlled shutdown, no flush; the data directory stays.
kill_node() {
  local n=$1; check_node_arg "$n"
  local pid; pid=$(node_pid "$n")
  if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then
    log "node $n is not running"
  else
    kill -9 "$pid"
    local i
    for i in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && die "node $n (pid $pid) still alive 10 s after SIGKILL"
    log "killed node $n (pid $pid, SIGKILL); data kept in $(node_dir "$n")/data"
  fi
  rm -f "$(node_dir "$n")/broker.pid"
  [ -f "$run_dir/cluster.env" ] && write_cluster_env
  return 0
}

restart_node() {
  local n=$1; check_node_arg "$n"
  node_alive "$n" && die "node $n already runs (pid $(node_pid "$n")); kill-node $n first"
  [ -f "$libs/.complete" ] || die "Kafka $version jars missing from $libs"
  local t0; t0=$(now_ms)
  set_ports "$n"
  local p
  for p in $p_plain $p_ssl $p_sasl_plain $p_sasl_ssl $p_controller; do
    port_open "$p" && die "port $p (node $n) is taken"
  done
  launch_node "$n"
  wait_listening "$n" $(( $(date +%s) + 120 ))
  local t_listening; t_listening=$(now_ms)
  # Listening is not enough to be useful: the broker must also have caught up with the
  # metadata log and be unfenced before it leads partitions or hosts a coordinator.
  wait_registered "127.0.0.1:$(node_base "$n")" "$n"
  [ -f "$run_dir/cluster.env" ] && write_cluster_env
  log "restarted node $n (pid $(node_pid "$n")) on its old data: listening after $((t_listening - t0)) ms, registered after $(( $(now_ms) - t0 )) ms"
}

case "$cmd" in
  fetch) fetch ;;
  start) start ;;
  stop) stop ;;
  status) status ;;
  nodes) list_nodes ;;
  kill-node) kill_node "${1:-}" ;;
  restart-node) restart_node "${1:-}" ;;
  tool) tool "$@" ;;
  *) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
