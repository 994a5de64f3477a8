#!/usr/bin/env bash
# ./idem chaos [run|cluster|ha|soak|alerts|down]: per fault of $CHAOS_FAULTS (the cases of fault()),
# bench's `chaos` (Chaos.java) storms two instances (:18081, :18082; the jar, or CHAOS_NATIVE's
# executable) with $CHAOS_DELIVERIES signed callbacks for each of $CHAOS_ORDERS fresh orders, runs
# `chaos.sh fault NAME` 30 % in, then checks the accounts: a PASS/FAIL line, target/chaos/<run>/.
# Its own servers, removed at the end: PostgreSQL idem-chaos :15432 and Redis :16379 behind bench's
# FaultProxy (:15433, :16380), Kafka :19092; `cluster`: a Redis Cluster (7101-7106), three brokers
# (39092-39094); `ha`: `./idem services postgres-ha`'s cluster, left running (scripts/lib/chaos-ha.sh).
# `soak`: $CHAOS_SOAK_MINUTES at half the measured first-delivery peak (or $CHAOS_SOAK_RATE/s),
# archiving and reconciliation on, no relays. `down`: what an interrupted suite left. Exit status 1
# when an account is not exact.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
LOG_NAME="idem chaos"
# shellcheck source=scripts/lib/base.sh
source "$ROOT/scripts/lib/base.sh"
HOST=127.0.0.1
STATE="$ROOT/.idem/chaos"
SECRET=chaos-callback-secret
ADMIN_TOKEN=chaos-admin-token
BENCH_JAR="$ROOT/bench/target/idem-bench.jar"
export CHAOS_ENGINES="${CHAOS_ENGINES:-single}" # single, cluster or ha: a fault's own process needs it
CHAOS_ORDERS="${CHAOS_ORDERS:-10000}" CHAOS_DELIVERIES="${CHAOS_DELIVERIES:-6}" CHAOS_RATE="${CHAOS_RATE:-400}"
CHAOS_BUILD="${CHAOS_BUILD:-1}" CHAOS_NATIVE="${CHAOS_NATIVE:-}" CHAOS_SOAK=0
CHAOS_SOAK_MINUTES="${CHAOS_SOAK_MINUTES:-30}" CHAOS_SOAK_RATE="${CHAOS_SOAK_RATE:-}"
DOWN=5 FAULT_SECONDS=20 FREEZE_SECONDS=45 LONG_DOWN=180 SKEW=+120s SKEW_SECONDS=60 HA_FREEZE_SECONDS=30
PG_PORT=15432 PG_PROXY_PORT=15433 PG_CLUSTER=idem-chaos REDIS_PORT=16379 REDIS_PROXY_PORT=16380 ISSUER_PORT=18090
REDIS_DIR="$STATE/redis" KAFKA_DIR="$STATE/kafka" KAFKA_PORT=19092 KAFKA_CONTROLLER_PORT=19093
KAFKA_PARTITIONS=4 KAFKA_START_TIMEOUT=90 KAFKA_TOPICS=(coupon-grants payment-callbacks coupon-grants-dlq payment-callbacks-dlq)
declare -A PORTS=([a]=18081 [b]=18082)
APP="$STATE/app" NATIVE_APP="$STATE/native-runner" HA_DB=idem_chaos
# shellcheck source=scripts/lib/postgres.sh
source "$ROOT/scripts/lib/postgres.sh"
# shellcheck source=scripts/lib/redis.sh
source "$ROOT/scripts/lib/redis.sh"
# shellcheck source=scripts/lib/kafka.sh
source "$ROOT/scripts/lib/kafka.sh"
# the services' Patroni cluster belongs to the machine; the suite's Redis Cluster and brokers to it
CLUSTER_STATE="${IDEM_CLUSTER_STATE:-$HOME/.cache/idem}"
# shellcheck source=scripts/lib/postgres-ha.sh
source "$ROOT/scripts/lib/postgres-ha.sh"
CLUSTER_STATE="$STATE"
# shellcheck source=scripts/lib/redis-cluster.sh
source "$ROOT/scripts/lib/redis-cluster.sh"
# shellcheck source=scripts/lib/kafka-cluster.sh
source "$ROOT/scripts/lib/kafka-cluster.sh"
# shellcheck source=scripts/lib/chaos-ha.sh
source "$ROOT/scripts/lib/chaos-ha.sh"
# apart from the tests' clusters (7001-7006, their buses 17001-17006; 29092-29094)
REDIS_CLUSTER_PORTS=(7101 7102 7103 7104 7105 7106)
KAFKA_CLUSTER_PORTS=(39092 39093 39094) KAFKA_CLUSTER_CONTROLLER_PORTS=(39192 39193 39194)
# ---------------------------------------------------------------- PostgreSQL, the suite's own cluster
pg_ctl_chaos() { as_root pg_ctlcluster --skip-systemctl-redirect "$(pg_version)" "$PG_CLUSTER" "$@" </dev/null 9>&-; }
pg_accepting() { pg_isready -q -h "$HOST" -p "$PG_PORT" -t 2; }
pg_chaos_drop() {
  pg_lsclusters -h 2>/dev/null | awk -v n="$PG_CLUSTER" '$2 == n { f = 1 } END { exit !f }' || return 0
  log "postgres: dropping cluster $PG_CLUSTER"
  as_root pg_dropcluster --stop "$(pg_version)" "$PG_CLUSTER" </dev/null 9>&- || log "postgres: could not drop $PG_CLUSTER"
}
pg_chaos_up() { # trust on loopback: it serves this suite only
  { pg_version >/dev/null && command -v pg_createcluster >/dev/null; } || apt_install postgresql
  command -v psql >/dev/null || apt_install postgresql-client
  port_open "$PG_PORT" && die "postgres: $HOST:$PG_PORT is taken by a server this suite did not start"
  log "postgres: cluster $PG_CLUSTER on $HOST:$PG_PORT"
  as_root pg_createcluster --port "$PG_PORT" "$(pg_version)" "$PG_CLUSTER" -o max_connections=200 -- \
    --auth-local=trust --auth-host=trust </dev/null >/dev/null 9>&-
  pg_ctl_chaos start
  wait_for 60 pg_accepting || die "postgres: cluster $PG_CLUSTER does not accept connections"
  psql -X -q -h "$HOST" -p "$PG_PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 \
    -c "CREATE ROLE idem LOGIN PASSWORD 'idem'" -c "CREATE DATABASE idem OWNER idem" >/dev/null
}
# ---------------------------------------------------------------- bench's relays and issuer, the instances
# bench_start NAME PORT ARGS...: bench's jar detached, until it listens on PORT
bench_start() {
  local name=$1 port=$2
  shift 2
  port_open "$port" && die "$name: $HOST:$port is taken"
  spawn_detached "$STATE/$name.pid" "$STATE/$name.log" "$JAVA" -Xmx256m -Xss256k -jar "$BENCH_JAR" "$@"
  wait_for 20 port_open "$port" || die "$name: not listening on $HOST:$port"
}
proxy_start() { bench_start "proxy-$1" "$2" proxy --listen "$2" --to "$3" --mode "$STATE/proxy-$1.mode"; }
# proxy_mode NAME pass|"delay MS"|blackhole: FaultProxy reads its mode file every 50 ms
proxy_mode() { echo "$2" >"$STATE/proxy-$1.tmp" && mv "$STATE/proxy-$1.tmp" "$STATE/proxy-$1.mode" && sleep 0.2; }
pid_of() { local pid; read -r pid 2>/dev/null <"$STATE/$1.pid" && kill -0 "$pid" 2>/dev/null && echo "$pid"; }
stop_of() { local pid; if pid="$(pid_of "$1")"; then stop_pid "$pid" "${2:-10}" "$1"; fi; rm -f "$STATE/$1.pid"; }
instance_pid() { pid_of "instance-$1"; }
instance_ready() { curl -fsS -o /dev/null --max-time 2 "http://$HOST:${PORTS[$1]}/q/health/ready" 2>/dev/null; }
instance_stop() { stop_of "instance-$1" 30; }
instances_restart() { local n; for n; do instance_stop "$n"; done; for n; do instance_start "$n"; done; }
# instance_start NAME [SKEW]: detached, so that it outlives a `fault` that restarts it; with SKEW
# (+120s) under libfaketime, its wall clock that far off (not the monotonic one, the JVM's timers need it)
instance_start() {
  local name=$1 skew=${2:-} port=${PORTS[$1]} log_file="$STATE/instance-$1.log" i lib props=()
  local pg="$HOST:$PG_PROXY_PORT/idem" redis=$REDIS_PROXY_PORT
  rm -f "$STATE/instance-$name.skew"
  if ((CHAOS_SOAK)); then # archiving as it goes, every TTL shorter than the retention; no relays
    pg="$HOST:$PG_PORT/idem" redis=$REDIS_PORT
    props=(-Didem.dedup.retention=5m -Didem.key.retention=2m -Didem.pipeline.redis-ttl=2m -Didem.archive.interval=1m
      -Didem.pipeline.scopes.payment-callback.redis-ttl=2m -Didem.archive.outbox-retention=5m -Didem.reconciliation.interval=30s)
  fi
  [[ $CHAOS_ENGINES != ha ]] || pg="$HOST:$PG_HA_PRIMARY_PORT/$HA_DB"
  local env=(QUARKUS_HTTP_PORT="$port" QUARKUS_DATASOURCE_REACTIVE_URL="postgresql://$pg" IDEM_CALLBACK_SECRET="$SECRET"
    IDEM_ADMIN_TOKEN="$ADMIN_TOKEN" IDEM_RECONCILIATION_GRACE=15s
    QUARKUS_REDIS_HOSTS="redis://$HOST:$redis" KAFKA_BOOTSTRAP_SERVERS="$HOST:$KAFKA_PORT")
  if [[ $CHAOS_ENGINES == cluster ]]; then # the clusters directly: a relay would hide their topology
    env+=(QUARKUS_REDIS_CLIENT_TYPE=cluster QUARKUS_REDIS_HOSTS="$(redis_cluster_hosts)"
      KAFKA_BOOTSTRAP_SERVERS="$(kafka_cluster_bootstrap)")
  fi
  if [[ -f $STATE/two-phase ]]; then # freeze-two-phase: grants through the suite's issuer
    env+=(IDEM_CAMPAIGN_PAID_COUPON_ISSUER=external IDEM_COUPON_ISSUER_URL="http://$HOST:$ISSUER_PORT/coupons")
  fi
  if [[ -n $skew ]]; then # the library itself preloaded: the faketime command forks
    lib="$(compgen -G '/usr/lib/*/faketime/libfaketime.so.1' | head -n 1 || true)"
    [[ -n $lib ]] || { apt_install libfaketime && lib="$(compgen -G '/usr/lib/*/faketime/libfaketime.so.1' | head -n 1)"; }
    env+=(LD_PRELOAD="$lib" FAKETIME="$skew" FAKETIME_DONT_FAKE_MONOTONIC=1)
    echo "$skew" >"$STATE/instance-$name.skew"
  fi
  local run=("$JAVA" -Xmx512m "${props[@]}" -jar "$APP/quarkus-run.jar")
  [[ -z $CHAOS_NATIVE ]] || run=("$NATIVE_APP" "${NATIVE_OPTS[@]}" "${props[@]}")
  port_open "$port" && die "instance $name: $HOST:$port is taken"
  log "instance $name: starting on $HOST:$port${skew:+ with its clock $skew off} (log ${log_file#"$ROOT/"})"
  spawn_detached "$STATE/instance-$name.pid" "$log_file" env -u QUARKUS_PROFILE "${env[@]}" "${run[@]}"
  for ((i = 0; i < 240; i++)); do
    if instance_ready "$name"; then log "instance $name: ready (pid $(instance_pid "$name"))" && return 0; fi
    ((i < 5)) || instance_pid "$name" >/dev/null || break
    sleep 0.5
  done
  tail -n 20 "$log_file" >&2 || true
  die "instance $name: not ready within 120 s"
}
# ---------------------------------------------------------------- faults
sigkill() { kill -KILL "$1" && wait_for 10 bash -c "! kill -0 $1 2>/dev/null"; }
instance_b() { instance_pid b || die "fault: instance b is not running"; }

fault() {
  local name=$1 pid port node
  log "fault: $name"
  case $name in
    none | soak) ;;
    redis-flush) redis-cli -h "$HOST" -p "$REDIS_PORT" flushall >/dev/null ;;
    redis-restart) # stopped, started again (empty) $DOWN s later
      pid="$(redis_our_pid)" || die "fault: no Redis of ours to stop"
      stop_pid "$pid" 20 redis; sleep "$DOWN"; redis_spawn ;;
    postgres-restart | postgres-down-long) # stopped (fast) for $DOWN s; -long: $LONG_DOWN s, Kafka copies on
      pg_ctl_chaos stop -m fast
      [[ $name == postgres-restart ]] || log "fault: readiness of instance a with PostgreSQL down: $(curl -s \
        -o /dev/null -w '%{http_code}' --max-time 5 "http://$HOST:${PORTS[a]}/q/health/ready" || true)"
      sleep "$([[ $name == postgres-restart ]] && echo "$DOWN" || echo "$LONG_DOWN")"
      pg_ctl_chaos start
      wait_for 60 pg_accepting || die "fault: PostgreSQL did not come back" ;;
    kafka-restart) # the broker stopped, started again on its data $DOWN s later
      pid="$(kafka_our_pid)" || die "fault: no broker of ours to stop"
      stop_pid "$pid" 60 "kafka broker"; sleep "$DOWN"; kafka_start ;;
    kill-instance) pid="$(instance_b)"; sigkill "$pid"; rm -f "$STATE/instance-b.pid"; instance_start b ;;
    postgres-slow | postgres-blackhole | redis-blackhole) # answers 200 ms later, or held: no answer, no reset
      local relay=${name%-*} mode=${name#*-}
      relay=${relay/postgres/pg} mode=${mode/slow/delay 200}
      proxy_mode "$relay" "$mode"; sleep "$FAULT_SECONDS"; proxy_mode "$relay" pass ;;
    freeze-instance | freeze-two-phase) # b stopped for $FREEZE_SECONDS s; two-phase: while it holds leases
      pid="$(instance_b)"; kill -STOP "$pid"; sleep "$FREEZE_SECONDS"; kill -CONT "$pid" ;;
    clock-skew) # b restarted with its clock $SKEW off for $SKEW_SECONDS s, then on the true time
      instance_b >/dev/null; instance_stop b; instance_start b "$SKEW"; sleep "$SKEW_SECONDS"; instances_restart b ;;
    redis-master-kill) # a replica promoted; the node started again rejoins as a replica
      port="$(redis_cluster_masters "${REDIS_CLUSTER_PORTS[0]}" | head -n 1)"
      [[ -n $port ]] && pid="$(redis_cluster_node_pid "$port")" || die "fault: no Redis master of ours to kill"
      sigkill "$pid"
      node=${REDIS_CLUSTER_PORTS[0]}
      [[ $node != "$port" ]] || node=${REDIS_CLUSTER_PORTS[1]}
      wait_for 60 redis_cluster_serving "$node" || die "fault: no replica promoted within 60 s"
      redis_cluster_node_start "$port"
      wait_for 60 redis_cluster_ok || die "fault: node :$port did not rejoin within 60 s" ;;
    kafka-broker-kill) # the active controller, started again on its data $DOWN s later
      node="$(kafka_tool org.apache.kafka.tools.MetadataQuorumCommand --bootstrap-server "$(kafka_cluster_bootstrap)" \
        describe --status 2>/dev/null | awk '$1 == "LeaderId:" { print $2 }')"
      [[ $node =~ ^[123]$ ]] || node=1
      kafka_cluster_node "$node"
      pid="$(kafka_our_pid)" || die "fault: broker $node is not running"
      sigkill "$pid"; sleep "$DOWN"; kafka_start ;;
    *) ha_fault "$name" ;; # scripts/lib/chaos-ha.sh
  esac
  [[ $CHAOS_ENGINES != ha ]] || log "fault: $name over; $(ha_roles)"
}
# ---------------------------------------------------------------- the suite
down() {
  local n
  for n in a b; do instance_stop "$n"; done
  for n in proxy-pg proxy-redis issuer; do stop_of "$n"; done
  rm -f "$STATE/two-phase"
  stop_of kafka/kafka 60
  if n="$(redis_our_pid)"; then stop_pid "$n" 20 redis; fi
  rm -f "$REDIS_DIR/started-by-idem"
  redis_cluster_down
  (kafka_cluster_down) # a subshell: it points kafka.sh's variables at each node in turn
  pg_chaos_drop
}

# fd 9 holds the suite's lock: every server the scripts start closes it (scripts/lib/proc.sh)
suite() {
  local run out fault rc=0 kafka jdbc extra orders rate n
  run="$(date -u +%Y%m%d%H%M%S)" out="$ROOT/target/chaos/$run"
  mkdir -p "$out" "$STATE"
  exec 9>"$STATE/.lock"
  flock -n 9 || die "another fault suite is running (.idem/chaos/.lock)"
  trap down EXIT
  trap 'exit 130' INT TERM
  need_commands jq curl
  command -v redis-server >/dev/null || apt_install redis-server redis-tools
  if [[ -n $CHAOS_NATIVE ]]; then
    cp "$(native_executable "$CHAOS_NATIVE")" "$NATIVE_APP" || die "CHAOS_NATIVE=$CHAOS_NATIVE is not a native executable"
  else
    if [[ $CHAOS_BUILD == 1 ]]; then install_extension && ./mvnw -B -q -DskipTests package; fi
    rm -rf "$APP" && cp -a target/quarkus-app "$APP"
  fi
  ./mvnw -B -q -f bench/pom.xml package
  down
  if [[ $CHAOS_ENGINES == ha ]]; then ha_up; else
    pg_chaos_up
    proxy_start pg "$PG_PROXY_PORT" "$PG_PORT"
  fi
  bench_start issuer "$ISSUER_PORT" issuer --port "$ISSUER_PORT" --delay-ms 300
  if [[ $CHAOS_ENGINES == cluster ]]; then
    rm -rf "$REDIS_CLUSTER_DIR" "$KAFKA_CLUSTER_DIR"
    redis_cluster_up
    (kafka_cluster_up)
    kafka="$(kafka_cluster_bootstrap)"
  else
    port_open "$REDIS_PORT" && die "redis: $HOST:$REDIS_PORT is taken by a server this suite did not start"
    redis_spawn
    proxy_start redis "$REDIS_PROXY_PORT" "$REDIS_PORT"
    port_open "$KAFKA_PORT" && die "kafka: $HOST:$KAFKA_PORT is taken by a server this suite did not start"
    rm -rf "$KAFKA_DIR"
    kafka_start
    kafka_topics
    kafka="$HOST:$KAFKA_PORT"
  fi
  rm -f "$STATE"/instance-*.log # a restarted instance appends to its log; a new suite starts afresh
  instance_start a
  instance_start b
  : >"$out/table.txt"
  for fault in $CHAOS_FAULTS; do
    log "---- $fault"
    { instance_pid a && instance_pid b; } >/dev/null || die "an instance is not running before $fault"
    extra=() orders=$CHAOS_ORDERS rate=$CHAOS_RATE jdbc="jdbc:postgresql://$HOST:$PG_PORT/idem"
    case $fault in
      soak) # enough in flight that the pace, not the generator, sets the rate
        extra=(--pid-files "$STATE/instance-a.pid,$STATE/instance-b.pid" --at 1.1 --concurrency 512)
        if [[ -n $CHAOS_SOAK_RATE ]]; then
          rate=$CHAOS_SOAK_RATE orders=$((CHAOS_SOAK_RATE * CHAOS_SOAK_MINUTES * 60 / CHAOS_DELIVERIES))
        else
          extra+=(--peak-warmup 60 --peak-seconds 20 --minutes "$CHAOS_SOAK_MINUTES")
        fi ;;
      postgres-down-long) extra=(--give-up 420 --kafka-during-fault true --settle 240) ;;
      freeze-two-phase) # both instances grant through the external issuer for this storm
        : >"$STATE/two-phase"
        instances_restart a b
        extra=(--settle 180) ;;
    esac
    if [[ $CHAOS_ENGINES == ha ]]; then
      ha_heal
      jdbc="jdbc:postgresql://$HOST:$PG_HA_PRIMARY_PORT/$HA_DB"
      extra=(--kafka-during-fault true --fault-note "$out/$fault.note")
      [[ $fault != primary-kill-async ]] || extra+=(--losses-expected true)
      rm -f "$out/$fault.note"
    fi
    CHAOS_ADMIN_TOKEN="$ADMIN_TOKEN" BENCH_SECRET="$SECRET" BENCH_KAFKA="$kafka" CHAOS_FAULT_NOTE="$out/$fault.note" \
      BENCH_JDBC_URL="$jdbc" "$JAVA" -Xmx1g -jar "$BENCH_JAR" chaos --fault "$fault" --run "$run" \
      --ports "${PORTS[a]},${PORTS[b]}" --orders "$orders" --deliveries "$CHAOS_DELIVERIES" --rate "$rate" \
      --at 0.3 --grace 10 --command "bash $ROOT/scripts/chaos.sh fault $fault" "${extra[@]}" \
      --out "$out/$fault.json" | tee -a "$out/table.txt" || rc=1
    if [[ $fault == freeze-two-phase ]]; then
      log "two-phase: $(curl -fsS --max-time 5 "http://$HOST:$ISSUER_PORT/stats" || echo 'issuer unreachable'); takeovers: $(
        for n in a b; do curl -fsS --max-time 5 "http://$HOST:${PORTS[$n]}/q/metrics" | awk -v n="$n" \
          '/^idem_dedup_takeovers_total/ { sub(/ # .*/, ""); s += $NF } END { printf "%s %d ", n, s }'; done)"
      rm -f "$STATE/two-phase"
      instances_restart a b
    fi
    # no instance left changed by a fault: a skewed clock goes back to the true one
    [[ ! -f $STATE/instance-b.skew ]] || instances_restart b
  done
  jq -s . "$out"/*.json >"$out/results.json" 2>/dev/null || true
  printf '\nfault suite %s: %s orders × %s deliveries per fault, two instances, round-robin, %s engines\n' \
    "$run" "$CHAOS_ORDERS" "$CHAOS_DELIVERIES" "$CHAOS_ENGINES"
  cat "$out/table.txt"
  log "results: ${out#"$ROOT/"}/ (one JSON per fault, table.txt); service logs in ${STATE#"$ROOT/"}/"
  return "$rc"
}

case "${1:-run}" in
  run) CHAOS_FAULTS="${CHAOS_FAULTS:-none redis-flush redis-restart postgres-restart kafka-restart kill-instance postgres-slow
    postgres-blackhole redis-blackhole freeze-instance freeze-two-phase postgres-down-long clock-skew}" ;;
  cluster) CHAOS_ENGINES=cluster CHAOS_FAULTS="${CHAOS_FAULTS:-none redis-master-kill kafka-broker-kill}" ;;
  ha) CHAOS_ENGINES=ha CHAOS_FAULTS="${CHAOS_FAULTS:-none primary-kill switchover primary-freeze sync-standby-kill primary-rejoin primary-kill-async}" ;;
  soak) CHAOS_SOAK=1 CHAOS_FAULTS=soak ;;
  alerts) exec bash "$ROOT/scripts/alerts.sh" ;;
  fault) fault "${2:?fault name}"; exit ;;
  down) down; exit ;;
  *) echo "usage: scripts/chaos.sh [run|cluster|ha|soak|alerts|down|fault NAME]" >&2; exit 2 ;;
esac
suite
