#!/usr/bin/env bash
# Issue 15: produce and fetch throughput (MB/s) and peak RSS of the crate's Producer and
# Fetcher against Kafka's own kafka-producer-perf-test / kafka-consumer-perf-test
# (ProducerPerformance / ConsumerPerformance from the broker's jars, via scripts/kafka.sh tool)
# on the same broker, the same topic and the same batch settings. One run; prints Markdown
# table rows (also kept in target/bench-report/clients.md).
#
#   KSG_CLUSTER_ENV=.kafka/run/cluster.env scripts/bench-clients.sh [RECORDS] [RECORD_SIZE] [CODECS]
#
# Defaults: 1000000 records of 100 bytes, codecs "none lz4". Per codec: a fresh 3-partition
# topic; Java's producer writes RECORDS records, then ours writes RECORDS more (null keys, one
# fixed payload of random capital letters, acks=all, idempotent, linger.ms=5,
# batch.size=16384, the codec); then Java's consumer reads all 2 x RECORDS, then our fetcher
# (earliest, Java's fetch defaults). MB is 2^20 bytes of keys and values, the tools' unit; Java's
# consumer figure is its fetch.MB.sec (the group join excluded). RSS is the peak resident set
# of the whole process (GNU time's %M; the tools run with -Xmx256m). Benchmarks are never part
# of scripts/test.sh.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
records=${1:-1000000}
size=${2:-100}
codecs=${3:-none lz4}
env_file=${KSG_CLUSTER_ENV:?set KSG_CLUSTER_ENV to the cluster.env of a running broker: scripts/kafka.sh start}
boot=$(awk -F= '/^KSG_BOOTSTRAP_PLAINTEXT=/ {print $2}' "$env_file")
run_dir=$(awk -F= '/^KSG_RUN_DIR=/ {print $2}' "$env_file")
out=$repo/target/bench-report
mkdir -p "$out"
bin=$repo/target/release/examples/bench_clients
log() { printf '[bench-clients.sh] %s\n' "$*" >&2; }

log "building examples/bench_clients (release)"
cargo build --quiet --release --example bench_clients

export KSG_RUN_DIR=$run_dir
kafka_tool=(bash "$repo/scripts/kafka.sh" tool)
tool() { "${kafka_tool[@]}" "$@"; }
# Runs "$@" under GNU time; its stdout goes to $out/last.out, the peak RSS (kB) to $out/last.rss.
timed() { /usr/bin/time -f '%M' -o "$out/last.rss" "$@" > "$out/last.out" 2> "$out/last.err"; }
mb() { awk -v kb="$1" 'BEGIN { printf "%.0f MB", kb / 1024 }'; }

rows=$out/clients.md
: > "$rows"
for codec in $codecs; do
  topic=bench-clients-$codec-$$
  tool org.apache.kafka.tools.TopicCommand --bootstrap-server "$boot" --create --topic "$topic" \
    --partitions 3 --replication-factor 1 > /dev/null
  log "$codec: Java producer, $records x $size B"
  timed "${kafka_tool[@]}" org.apache.kafka.tools.ProducerPerformance --topic "$topic" \
    --num-records "$records" --record-size "$size" --throughput -1 \
    --producer-props bootstrap.servers="$boot" acks=all enable.idempotence=true linger.ms=5 \
    batch.size=16384 compression.type="$codec"
  java_p=$(grep 'records sent' "$out/last.out" | tail -1 | sed -E 's/.*\(([0-9.]+) MB\/sec\).*/\1/')
  java_p_rss=$(cat "$out/last.rss")
  log "$codec: Rust producer"
  timed "$bin" produce "$boot" "$topic" "$records" "$size" "$codec" 16384 5
  rust_p=$(sed -E 's/.*mb_per_s=([0-9.]+).*/\1/' "$out/last.out")
  rust_p_rss=$(cat "$out/last.rss")
  total=$((records * 2))
  log "$codec: Java consumer, $total records"
  timed "${kafka_tool[@]}" org.apache.kafka.tools.ConsumerPerformance --bootstrap-server "$boot" \
    --topic "$topic" --num-records "$total" --timeout 30000
  java_f=$(awk -F', *' 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "fetch.MB.sec") c = i; next }
                        c && NF > 1 { v = $c } END { print v }' "$out/last.out")
  java_f_rss=$(cat "$out/last.rss")
  log "$codec: Rust fetcher"
  timed "$bin" fetch "$boot" "$topic" "$total" 3
  rust_f=$(sed -E 's/.*mb_per_s=([0-9.]+).*/\1/' "$out/last.out")
  rust_f_rss=$(cat "$out/last.rss")
  ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f×", a / b; else print "n/a" }'; }
  {
    echo "| produce, $codec, $records × $size B, 3 partitions, linger.ms=5, batch.size=16384, acks=all, idempotent | $rust_p vs $java_p MB/s | $(ratio "$rust_p" "$java_p") Java's throughput | $(mb "$rust_p_rss") vs $(mb "$java_p_rss") |"
    echo "| fetch, $codec, $total × $size B from the earliest offset, 3 partitions, Java's fetch defaults | $rust_f vs $java_f MB/s | $(ratio "$rust_f" "$java_f") Java's throughput | $(mb "$rust_f_rss") vs $(mb "$java_f_rss") |"
  } | tee -a "$rows"
  tool org.apache.kafka.tools.TopicCommand --bootstrap-server "$boot" --delete --topic "$topic" \
    > /dev/null 2>&1 || true
done
rm -f "$out/last.out" "$out/last.err" "$out/last.rss"
