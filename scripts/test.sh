#!/usr/bin/env bash
# Runs every test: unit tests, then the live tests against a real Kafka broker of each version.
#
#   scripts/test.sh                      all versions in KSG_KAFKA_VERSIONS (default below)
#   scripts/test.sh --kafka 4.3.1        one broker version only (repeatable)
#   scripts/test.sh --unit-only          no broker
#
# It starts the brokers it needs (scripts/kafka.sh), stops what it started, prints how long
# each phase took, and exits non-zero on any failure. Live tests are #[ignore]d, so a bare
# `cargo test` reports them as ignored; here they run with `-- --ignored` against the broker.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

versions=()
unit_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --kafka) versions+=("$2"); shift 2 ;;
    --kafka=*) versions+=("${1#--kafka=}"); shift ;;
    --unit-only) unit_only=1; shift ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done
if [ ${#versions[@]} -eq 0 ]; then
  read -r -a versions <<<"${KSG_KAFKA_VERSIONS:-4.4.0 4.3.1 4.2.2}"
fi

port_base=${KSG_PORT_BASE:-19092}
results=$(mktemp)
trap 'rm -f "$results"' EXIT
started_run_dir=""
stop_broker() {
  if [ -n "$started_run_dir" ]; then
    KSG_RUN_DIR="$started_run_dir" KSG_PORT_BASE=$port_base bash "$repo/scripts/kafka.sh" stop || true
    started_run_dir=""
  fi
}
trap 'stop_broker; rm -f "$results"' EXIT INT TERM

phase_start=0
phase() { phase_start=$(date +%s%3N); phase_name=$*; echo; echo "=== $*"; }
# Marks the run failed, naming the step in the closing summary (a step can fail with no
# failed test to count: a fuzz crash, an example, a test binary that died or hung).
failed_steps=()
step_failed() { failed=1; failed_steps+=("$phase_name: $1 (test.sh line ${BASH_LINENO[0]})"); }
phase_end() { echo "=== $1 took $(( $(date +%s%3N) - phase_start )) ms"; }

# Runs cargo test, echoing its output and keeping its "test result" lines for the summary.
# A run that outlives KSG_TEST_RUN_LIMIT seconds (default 1800) is killed with its test
# binaries, so one hung test fails the run instead of eating CI's 90 minutes (libtest names
# the tests "running for over 60 seconds" above the kill line).
cargo_test() {
  local status=0 limit=${KSG_TEST_RUN_LIMIT:-1800}
  {
    local rc=0
    timeout --kill-after=15 "$limit" cargo test "$@" || rc=$?
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
      echo "=== cargo test $* exceeded ${limit} s: killed with its test binaries (a test hung)"
      pkill -KILL -f "^$repo/target/debug/deps/" || true
    fi
    exit $rc
  } 2>&1 | tee -a "$results" || status=$?
  return $status
}

command -v cargo >/dev/null || { echo "cargo not found: install Rust with rustup (https://rustup.rs)" >&2; exit 1; }

failed=0
phase "build (all targets)"
cargo build --all-targets --quiet
phase_end "build"

phase "unit tests (live tests are ignored here)"
cargo_test --no-fail-fast || step_failed "cargo test (unit)"
phase_end "unit tests"

if [ $unit_only -eq 0 ]; then
  phase "fuzz smoke: every cargo-fuzz target for a few seconds (fuzz/)"
  bash "$repo/scripts/fuzz-smoke.sh" "${KSG_FUZZ_SECS:-3}" || step_failed "fuzz smoke"
  phase_end "fuzz smoke"

  phase "conformance: the crate's codecs against Kafka's own message classes (testing/oracle)"
  bash "$repo/scripts/oracle.sh" build
  KSG_ORACLE_CMD=$(bash "$repo/scripts/oracle.sh" cmd) cargo_test --test conformance -- --ignored || step_failed "cargo test --test conformance"
  phase_end "conformance"

  phase "build the Java Kafka Streams peer (testing/streams-peer)"
  bash "$repo/scripts/streams-peer.sh" build
  export KSG_STREAMS_PEER="$repo/scripts/streams-peer.sh"
  phase_end "streams peer build"

  phase "copartition-group order against Kafka Streams' own code (issue 13; no broker)"
  # Also under the first JDK 19+ in /usr/lib/jvm: the group order differs between 17 and 19+.
  alt_javas=""
  for j in /usr/lib/jvm/*/bin/java; do
    v=$("$j" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
    if [ -n "$v" ] && [ "${v%%.*}" -ge 19 ] 2>/dev/null; then alt_javas="$alt_javas:$j"; break; fi
  done
  KSG_JAVA_ALT=$alt_javas cargo_test --test java_topology_order -- --ignored --nocapture || step_failed "cargo test --test java_topology_order"
  phase_end "copartition order"

  phase "topology builder and DSL against Kafka Streams' describe() and heartbeat topology (issues 22, 23; no broker)"
  cargo_test --test topology_parity -- --ignored --nocapture || step_failed "cargo test --test topology_parity"
  phase_end "topology parity"

  phase "DSL corpus through DslTestDriver and Java's TopologyTestDriver on the same records (issue 23; no broker)"
  cargo_test --test dsl_driver_diff -- --ignored --nocapture || step_failed "cargo test --test dsl_driver_diff"
  phase_end "DSL driver diff"

  for version in "${versions[@]}"; do
    phase "live tests against Kafka $version"
    run_dir=$repo/.kafka/test-$version
    KSG_RUN_DIR=$run_dir KSG_PORT_BASE=$port_base bash "$repo/scripts/kafka.sh" start --kafka "$version"
    started_run_dir=$run_dir
    # Every #[ignore]d test is a live test, except the broker-independent conformance suite,
    # copartition-order, topology-parity and DSL driver-diff checks (run once above).
    # live_transactions (issue 24) is among them: it downgrades this broker's
    # transaction.version to 1 for one test and restores 2.
    # To keep CI under 45 min, the versions between 4.4.0 and 4.2.2 (4.3.1) leave out the
    # longest scenarios, each of which still runs on both ends: the exactly-once kill -9
    # rounds and the zombie (issue 24 asks for 4.4.0 and 4.2.2; ~5 min), and the second
    # variants of the Java-interop standby and WordCount scenarios (standby promotion after
    # Java stops, standbys kept through a fencing, kill -9 and rolling restarts; ~2-3 min),
    # whose first variants run on every version. The restart through a kept state directory
    # (~2 min) runs on 4.4.0 only: the fencing it relies on is shown on both ends above.
    between=()
    case "$version" in 4.4.0|4.2.2) ;; *)
      between=(--skip java_and_rust_under_exactly_once_survive_kill_9
               --skip a_resumed_zombie_writes_nothing_visible_and_rejoins
               --skip java_active_rust_standby_promoted_when_java_stops
               --skip a_fenced_member_keeps_its_standbys_while_it_rejoins
               --skip sigkill_of_a_rust_instance_never_under_counts
               --skip two_rust_instances_rolling_restart_exact) ;;
    esac
    if [ "$version" != 4.4.0 ]; then
      between+=(--skip a_restart_with_its_state_dir_fences_the_killed_predecessor_at_once)
    fi
    KSG_CLUSTER_ENV=$run_dir/cluster.env cargo_test --no-fail-fast --tests -- --ignored --skip conformance_against_kafka \
      --skip copartition_order_matches_kafka_streams --skip topologies_match_kafka_streams \
      --skip dsl_programs_match_topology_test_driver \
      ${between[@]+"${between[@]}"} || step_failed "cargo test (every test binary)"
    if [ "$version" = 4.4.0 ]; then
      bash "$repo/scripts/run-examples.sh" "$run_dir/cluster.env" || step_failed "examples"
    fi
    stop_broker
    phase_end "Kafka $version live tests"
  done

  # ---- broker loss and connection churn (issue 7 items 12, 14, 15) -------------------------
  # These tests kill brokers or cut every connection, so each gets a dedicated broker on its
  # own ports (never the shared one above), and they run for the default version only.
  # KSG_SOAK_SECS sets the soak length (default 300 s; 0 skips the soak).
  if printf '%s\n' "${versions[@]}" | grep -qx 4.4.0; then
    phase "broker loss and connection churn (Kafka 4.4.0, dedicated brokers)"
    loss_dir=$repo/.kafka/loss-1
    KSG_RUN_DIR=$loss_dir KSG_PORT_BASE=19992 bash "$repo/scripts/kafka.sh" start --kafka 4.4.0
    started_run_dir=$loss_dir
    KSG_BROKER_LOSS_ENV=$loss_dir/cluster.env cargo_test --test live_broker_loss -- --ignored \
      --nocapture single_broker_sigkill || step_failed "cargo test --test live_broker_loss"
    stop_broker
    # Producer idempotence across a broker SIGKILL/restart (issue 15): a dedicated single
    # broker per version (port base 20292); the issue asks for 4.4.0 and 4.2.2, and each run
    # costs a broker restart (~30 s), so 4.3.1 is left to the shared live phase.
    for version in "${versions[@]}"; do
      case "$version" in 4.4.0|4.2.2) ;; *) continue ;; esac
      ploss_dir=$repo/.kafka/producer-loss-$version
      KSG_RUN_DIR=$ploss_dir KSG_PORT_BASE=20292 bash "$repo/scripts/kafka.sh" start --kafka "$version"
      started_run_dir=$ploss_dir
      KSG_PRODUCER_LOSS_ENV=$ploss_dir/cluster.env cargo_test --test live_producer -- --ignored \
        --nocapture broker_sigkill_and_restart || step_failed "cargo test --test live_producer"
      stop_broker
    done
    loss3_dir=$repo/.kafka/loss-3
    KSG_NODES=3 KSG_RUN_DIR=$loss3_dir KSG_PORT_BASE=20092 bash "$repo/scripts/kafka.sh" start --kafka 4.4.0
    started_run_dir=$loss3_dir
    KSG_CLUSTER3_ENV=$loss3_dir/cluster.env cargo_test --test live_broker_loss -- --ignored \
      --nocapture three_nodes_sigkill || step_failed "cargo test --test live_broker_loss"
    # Leader move while fetching and producing (issue 15), on the same 3 nodes.
    KSG_CLUSTER3_ENV=$loss3_dir/cluster.env cargo_test --test live_fetcher -- --ignored \
      --nocapture leader_move || step_failed "cargo test --test live_fetcher"
    # An unclean leader election under the fetcher's position (issue 21, KIP-320), ~30 s.
    KSG_CLUSTER3_ENV=$loss3_dir/cluster.env cargo_test --test live_unclean_election -- \
      --ignored --nocapture || step_failed "cargo test --test live_unclean_election"
    # InitProducerId while a restarted node waits for its producer id block (its
    # AllocateProducerIds pinned to a SIGSTOPped KRaft leader): the producer gets its id from
    # another node (the CI flake of live_unclean_election), ~15-40 s.
    KSG_CLUSTER3_ENV=$loss3_dir/cluster.env cargo_test --test live_init_producer_id -- \
      --ignored --nocapture --exact \
      a_producer_gets_its_id_while_a_restarted_node_waits_for_its_block || step_failed "cargo test --test live_init_producer_id"
    stop_broker
    soak_secs=${KSG_SOAK_SECS:-300}
    if [ "$soak_secs" -gt 0 ]; then
      # The soak starts its own broker (it must advertise the fault proxy's port, known only
      # inside the test); the trap and the stop below cover a test binary that died.
      soak_dir=$repo/.kafka/soak-20192
      started_run_dir=$soak_dir
      KSG_SOAK_SECS=$soak_secs KSG_SOAK_PORT_BASE=20192 KSG_SOAK_RUN_DIR=$soak_dir \
        cargo_test --test soak_churn -- --ignored --nocapture || step_failed "cargo test --test soak_churn"
      stop_broker
    fi
    phase_end "broker loss and connection churn"
  fi
fi

# One closing line over every cargo test run above.
passed=$(awk '/^test result:/ { for (i = 1; i < NF; i++) if ($(i + 1) ~ /^passed/) n += $i } END { print n + 0 }' "$results")
nfailed=$(awk '/^test result:/ { for (i = 1; i < NF; i++) if ($(i + 1) ~ /^failed/) n += $i } END { print n + 0 }' "$results")
echo
echo "tests: ${passed:-0} passed, ${nfailed:-0} failed"
for step in ${failed_steps[@]+"${failed_steps[@]}"}; do echo "failed step: $step"; done
# A test binary that died (a signal, an abort) or failed to build leaves no "test result".
grep -E "process didn't exit successfully|^error(\[E[0-9]+\])?: |exceeded [0-9]+ s: killed" "$results" | sed 's/^/  /' || true
if [ $failed -ne 0 ] || [ "${nfailed:-0}" -ne 0 ]; then
  echo "FAILED" >&2
  exit 1
fi
