#!/usr/bin/env bash
# The fault suite of idem (./idem chaos): callback storms against two instances of the service,
# each storm with one fault injected while it runs, each ending with exact accounts.
#
# The suite starts servers of its own on other ports, so it never touches the servers it did not
# start (the ones `./idem services up` runs or reuses):
#   PostgreSQL  cluster idem-chaos on 127.0.0.1:$CHAOS_PG_PORT (15432), Debian's pg_createcluster
#   Redis       127.0.0.1:$CHAOS_REDIS_PORT (16379)
#   Kafka       127.0.0.1:$CHAOS_KAFKA_PORT (19092, controller 19093), fresh data every run
#   idem        instances a and b, the packaged jar, on 127.0.0.1:18081 and :18082; with
#               CHAOS_NATIVE=<file>, that native executable instead (./idem native builds
#               target/*-runner), run as in the image (NATIVE_OPTS)
# and removes them all at the end (the PostgreSQL cluster is dropped). The instances reach
# PostgreSQL and Redis through TCP relays of the suite's own (bench's `proxy`, on
# $CHAOS_PG_PROXY_PORT 15433 and $CHAOS_REDIS_PROXY_PORT 16380) that a fault can slow down or
# blackhole; the accounts are read from the servers directly.
#
# For each fault in $CHAOS_FAULTS, the load generator (bench/, `chaos`) creates $CHAOS_ORDERS
# fresh orders, sends $CHAOS_DELIVERIES signed callbacks per order round-robin to a and b, and
# runs `scripts/chaos.sh fault <name>` once $CHAOS_AT of the storm has gone out:
#   none              nothing: the control run
#   redis-flush       FLUSHALL
#   redis-restart     Redis stopped, $CHAOS_DOWN s later started again (empty)
#   postgres-restart  PostgreSQL stopped (fast), $CHAOS_DOWN s later started again
#   kafka-restart     the broker stopped, $CHAOS_DOWN s later started again on its data
#   kill-instance     instance b killed with SIGKILL, then started again
#   postgres-slow     every answer of PostgreSQL $CHAOS_SLOW_MS (200) ms later, for $CHAOS_FAULT_SECONDS (20) s
#   postgres-blackhole  PostgreSQL's packets held for $CHAOS_FAULT_SECONDS s: no answer, no reset
#   redis-blackhole   the same for Redis
#   freeze-instance   instance b stopped with SIGSTOP for $CHAOS_FREEZE_SECONDS (45) s, then continued
#   postgres-down-long  PostgreSQL stopped for $CHAOS_LONG_DOWN (180) s while every delivery also
#                     arrives on payment-callbacks (deliveries retried up to 7 min)
#   clock-skew        instance b restarted with its clock $CHAOS_SKEW (+120 s) off (libfaketime),
#                     serving so for $CHAOS_SKEW_SECONDS (60) s, then restarted on the true time
#   freeze-two-phase  both instances grant through an external coupon issuer (bench's `issuer`,
#                     :$CHAOS_ISSUER_PORT, 300 ms an answer) in two-phase mode, and b is frozen for
#                     $CHAOS_FREEZE_SECONDS s while it holds leases (30 s): the other takes its records
#                     over, and b's stale confirmations, once it goes on, are fenced by the lease
#
# `./idem chaos cluster` runs the storms against replicated engines instead: a Redis Cluster of the
# suite's own (three masters and a replica each, 127.0.0.1:7101-7106,
# quarkus.redis.client-type=cluster) and three KRaft brokers (39092-39094, topics with replication
# factor 3 and min.insync.replicas 2), with the faults in $CHAOS_CLUSTER_FAULTS:
#   none              the control run on these engines
#   redis-master-kill a master killed with SIGKILL: its replica is promoted (writes it had not
#                     replicated are lost), then the node is started again and rejoins as a replica
#   kafka-broker-kill the broker that is the active controller killed with SIGKILL, started again
#                     on its data $CHAOS_DOWN s later
# `./idem chaos ha` runs the storms on Postgres with failover: the three-node Patroni cluster of
# `./idem services postgres-ha` (started when missing, left running), database idem_chaos made afresh
# on it, the instances connected through HAProxy's primary port (5440), Redis and Kafka as above;
# every delivery sent while a fault is on also arrives on payment-callbacks. The faults, in
# $CHAOS_HA_FAULTS:
#   none              the control run on the cluster
#   primary-kill      the leader's WAL senders stopped for $CHAOS_HA_LAG_SECONDS (1) s, as
#                     replicas behind by a moment, then the leader's Patroni and PostgreSQL killed
#                     with SIGKILL (a node lost); it stays down for the rest of the storm and
#                     rejoins afterwards
#   switchover        `patronictl switchover` to the synchronous standby (planned maintenance)
#   primary-freeze    the leader's Patroni and PostgreSQL stopped with SIGSTOP for
#                     $CHAOS_HA_FREEZE_SECONDS (30, three TTLs), then continued: it must come back
#                     as a replica, never as a second primary
#   sync-standby-kill the synchronous standby killed: the leader's commits wait until Patroni names
#                     the other replica synchronous; started again $CHAOS_DOWN s later
#   primary-rejoin    the leader killed as in primary-kill, then started again mid-storm: it
#                     rejoins the new leader as a replica (pg_rewind)
#   primary-kill-async  the same kill with synchronous_mode off: what the leader had acknowledged
#                     and not yet sent is lost; the run counts it and passes when the
#                     reconciliation report shows every loss (synchronous_mode back on afterwards)
# Each line also gives the seconds without a primary (the fault to the first write through
# HAProxy that commits) and what the fault saw (the synchronous standby's replacement, the longest
# commit, pg_rewind).
# It prints one line per fault; results go to target/chaos/<run>/ (one JSON per fault, table.txt).
# Exit status 1 when a run's accounts are not exact.
#
#   ./idem chaos                 the whole suite
#   ./idem chaos cluster         the suite on a Redis Cluster and three Kafka brokers
#   ./idem chaos ha              the suite on a Patroni cluster with synchronous replication
#   ./idem chaos soak            one storm of $CHAOS_SOAK_MINUTES (30) min, deliveries at half the
#                                first-delivery peak of the two instances, measured first
#                                ($CHAOS_SOAK_PEAK_WARMUP, 60 s, of warm-up, then
#                                $CHAOS_SOAK_PEAK_SECONDS, 20 s; $CHAOS_SOAK_RATE
#                                deliveries/s instead when set), archiving every minute (retention
#                                5 min) and reconciliation running: latency and RSS per minute, and
#                                their slopes. No fault: the instances reach PostgreSQL and Redis
#                                without the relays
#   ./idem chaos alerts          the alerts' live check against an idem of its own (scripts/alerts.sh)
#   ./idem chaos down            stop what an interrupted suite left running
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

CHAOS_SINGLE_FAULTS="none redis-flush redis-restart postgres-restart kafka-restart kill-instance postgres-slow postgres-blackhole redis-blackhole freeze-instance freeze-two-phase postgres-down-long clock-skew"
CHAOS_CLUSTER_FAULTS="${CHAOS_CLUSTER_FAULTS:-none redis-master-kill kafka-broker-kill}"
CHAOS_HA_FAULTS="${CHAOS_HA_FAULTS:-none primary-kill switchover primary-freeze sync-standby-kill primary-rejoin primary-kill-async}"
CHAOS_HA_FREEZE_SECONDS="${CHAOS_HA_FREEZE_SECONDS:-30}"
CHAOS_HA_LAG_SECONDS="${CHAOS_HA_LAG_SECONDS:-1}"
# single (one Redis, one broker), cluster or ha; exported, so that a fault's own process knows it
export CHAOS_ENGINES="${CHAOS_ENGINES:-single}"
CHAOS_ORDERS="${CHAOS_ORDERS:-10000}"
CHAOS_DELIVERIES="${CHAOS_DELIVERIES:-6}"
CHAOS_RATE="${CHAOS_RATE:-400}"
CHAOS_AT="${CHAOS_AT:-0.3}"
CHAOS_DOWN="${CHAOS_DOWN:-5}"
CHAOS_GRACE="${CHAOS_GRACE:-10}"
CHAOS_BUILD="${CHAOS_BUILD:-1}"
CHAOS_NATIVE="${CHAOS_NATIVE:-}"
CHAOS_SLOW_MS="${CHAOS_SLOW_MS:-200}"
CHAOS_FAULT_SECONDS="${CHAOS_FAULT_SECONDS:-20}"
CHAOS_FREEZE_SECONDS="${CHAOS_FREEZE_SECONDS:-45}"
CHAOS_LONG_DOWN="${CHAOS_LONG_DOWN:-180}"
CHAOS_SKEW="${CHAOS_SKEW:-+120s}"
CHAOS_SKEW_SECONDS="${CHAOS_SKEW_SECONDS:-60}"
CHAOS_SOAK_MINUTES="${CHAOS_SOAK_MINUTES:-30}"
CHAOS_SOAK_RATE="${CHAOS_SOAK_RATE:-}"
CHAOS_SOAK_PEAK_SECONDS="${CHAOS_SOAK_PEAK_SECONDS:-20}"
CHAOS_SOAK_PEAK_WARMUP="${CHAOS_SOAK_PEAK_WARMUP:-60}"
CHAOS_SOAK=0

PG_PORT="${CHAOS_PG_PORT:-15432}"
PG_CLUSTER=idem-chaos
REDIS_PORT="${CHAOS_REDIS_PORT:-16379}"
PG_PROXY_PORT="${CHAOS_PG_PROXY_PORT:-15433}"
ISSUER_PORT="${CHAOS_ISSUER_PORT:-18090}"
REDIS_PROXY_PORT="${CHAOS_REDIS_PROXY_PORT:-16380}"
REDIS_DIR="$STATE/redis"
KAFKA_PORT="${CHAOS_KAFKA_PORT:-19092}"
KAFKA_CONTROLLER_PORT="${CHAOS_KAFKA_CONTROLLER_PORT:-19093}"
KAFKA_PARTITIONS=4
KAFKA_TOPICS=(coupon-grants payment-callbacks coupon-grants-dlq payment-callbacks-dlq)
KAFKA_START_TIMEOUT=90
KAFKA_DIR="$STATE/kafka"
declare -A INSTANCE_PORTS=([a]=18081 [b]=18082)
APP="$STATE/app"
NATIVE_APP="$STATE/native-runner"

# shellcheck source=scripts/lib/postgres.sh
source "$ROOT/scripts/lib/postgres.sh"
# shellcheck source=scripts/lib/redis.sh
source "$ROOT/scripts/lib/redis.sh"
# shellcheck source=scripts/lib/kafka.sh
source "$ROOT/scripts/lib/kafka.sh"
CLUSTER_STATE="$STATE"
# shellcheck source=scripts/lib/redis-cluster.sh
source "$ROOT/scripts/lib/redis-cluster.sh"
# shellcheck source=scripts/lib/kafka-cluster.sh
source "$ROOT/scripts/lib/kafka-cluster.sh"
# the services' Postgres cluster (fixed ports, the machine's): the suite works in a database of its own
CLUSTER_STATE="${IDEM_CLUSTER_STATE:-$HOME/.cache/idem}"
# shellcheck source=scripts/lib/postgres-ha.sh
source "$ROOT/scripts/lib/postgres-ha.sh"
CLUSTER_STATE="$STATE"
HA_DB=idem_chaos
# the suite's own clusters, apart from the tests' (7001-7006, whose cluster buses take 17001-17006,
# and 29092-29094)
REDIS_CLUSTER_PORTS=(7101 7102 7103 7104 7105 7106)
KAFKA_CLUSTER_PORTS=(39092 39093 39094)
KAFKA_CLUSTER_CONTROLLER_PORTS=(39192 39193 39194)

# ------------------------------------------------------------------------------ PostgreSQL

pg_ctl_chaos() {
  as_root pg_ctlcluster --skip-systemctl-redirect "$(pg_version)" "$PG_CLUSTER" "$@" </dev/null 9>&-
}

pg_accepting() { pg_isready -q -h "$HOST" -p "$PG_PORT" -t 2; }

pg_chaos_exists() {
  command -v pg_lsclusters >/dev/null 2>&1 &&
    pg_lsclusters -h 2>/dev/null | awk -v name="$PG_CLUSTER" '$2 == name { found = 1 } END { exit !found }'
}

pg_chaos_drop() {
  pg_chaos_exists || return 0
  log "postgres: dropping cluster $PG_CLUSTER"
  as_root pg_dropcluster --stop "$(pg_version)" "$PG_CLUSTER" </dev/null 9>&- || log "postgres: could not drop $PG_CLUSTER"
}

# A cluster of our own, trust on loopback (it serves this suite only), the application's role
# and database in it.
pg_chaos_up() {
  if ! pg_version >/dev/null || ! command -v pg_createcluster >/dev/null 2>&1; then
    apt_install postgresql
  fi
  command -v psql >/dev/null 2>&1 || apt_install postgresql-client
  pg_chaos_drop
  port_open "$PG_PORT" && die "postgres: $HOST:$PG_PORT is taken by a server this suite did not start"
  log "postgres: cluster $PG_CLUSTER on $HOST:$PG_PORT"
  as_root pg_createcluster --port "$PG_PORT" "$(pg_version)" "$PG_CLUSTER" \
    -o max_connections=200 -- --auth-local=trust --auth-host=trust \
    </dev/null >/dev/null 9>&-
  pg_ctl_chaos start
  wait_for 60 pg_accepting || die "postgres: cluster $PG_CLUSTER does not accept connections"
  psql -X -q -h "$HOST" -p "$PG_PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 \
    -c "CREATE ROLE idem LOGIN PASSWORD 'idem'" -c "CREATE DATABASE idem OWNER idem" >/dev/null
}

# ------------------------------------------------------------------------------ Postgres with failover

# The cluster whole again: every member started, one leader, a synchronous standby, synchronous mode on.
ha_heal() {
  local m
  [[ "$(pg_ha_ctl show-config 2>/dev/null | awk '$1 == "synchronous_mode:" { print $2 }')" == true ]] ||
    pg_ha_ctl edit-config --set synchronous_mode=true --force >/dev/null
  for m in "${PG_HA_MEMBERS[@]}"; do
    pg_ha_patroni_pid "$m" >/dev/null || pg_ha_start "$m"
  done
  wait_for 120 pg_ha_healthy || die "postgres-ha: not whole again within 120 s ($(ha_roles))"
}

# ha_replica MEMBER: it streams from the leader, synchronous or not
ha_replica() { [[ "$(pg_ha_role "$1")" == replica || "$(pg_ha_role "$1")" == sync_standby ]]; }

ha_roles() {
  local m roles=()
  for m in "${PG_HA_MEMBERS[@]}"; do roles+=("$m=$(pg_ha_role "$m")"); done
  printf '%s
' "${roles[*]}"
}

ha_up() {
  # started or reused; whole again below, whatever an earlier drill left (a member catching up,
  # synchronous_mode off)
  bash "$ROOT/scripts/services.sh" postgres-ha >&2 || true
  ha_heal
  pg_ha_psql -d postgres -v ON_ERROR_STOP=1 -c "DROP DATABASE IF EXISTS $HA_DB WITH (FORCE)"     -c "CREATE DATABASE $HA_DB OWNER idem" >/dev/null
  # the probes' writes, beside the service's database (whose schema is Flyway's)
  pg_ha_psql -d postgres -v ON_ERROR_STOP=1 -c "CREATE TABLE IF NOT EXISTS chaos_probe (at timestamptz)" >/dev/null
  log "postgres-ha: database $HA_DB on $(ha_roles)"
}

# ha_crash MEMBER: the member's Patroni and every PostgreSQL process of it killed at once, as a
# machine lost; its Patroni is not restarted
ha_crash() { ha_signal KILL "$1"; }

# ha_wal_senders MEMBER: the WAL senders of that member (the leader's stream to each replica)
ha_wal_senders() {
  local postmaster
  postmaster="$(pg_ha_member_pid "$1")" || return 0
  pgrep -P "$postmaster" -f walsender || true
}

# ha_signal SIGNAL MEMBER: the member's Patroni and every PostgreSQL process of it, at once
ha_signal() {
  local patroni postmaster pids=()
  patroni="$(pg_ha_patroni_pid "$2")" && pids+=("$patroni")
  if postmaster="$(pg_ha_member_pid "$2")"; then
    pids+=("$postmaster")
    mapfile -t -O "${#pids[@]}" pids < <(pgrep -P "$postmaster")
  fi
  ((${#pids[@]})) || die "fault: member $2 is not running"
  pg_ha_kill "-$1" "${pids[@]}"
}

# ha_until_writable FROM_NANOS: waits for a commit through HAProxy; notes the seconds since FROM,
# and what instance a's readiness said meanwhile and how long after the commit it is ready again
ha_until_writable() {
  local from=$1 down=0
  until pg_ha_psql -d "$HA_DB" -c "SELECT txid_current()" >/dev/null 2>&1; do
    instance_ready a || down=1
    sleep 0.1
  done
  note noPrimarySeconds "$(seconds_since "$from")"
  from=$(date +%s%N)
  wait_for 60 instance_ready a || die "fault: instance a not ready 60 s after the new primary"
  note readinessWentDown "$( ((down)) && echo yes || echo no)"
  note readyAgainSeconds "$(seconds_since "$from")"
}

# seconds_since NANOS: one decimal
seconds_since() { awk -v a="$1" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }'; }

# note NAME VALUE: one line of the fault's note, shown on its line of the table
note() { printf '%s %s
' "$1" "$2" >>"${CHAOS_FAULT_NOTE:-/dev/null}"; }

# ha_rewound MEMBER: whether its Patroni ran pg_rewind since the fault began
ha_rewound() {
  local i
  i="$(pg_ha_index "$1")"
  if grep -q "pg_rewind" <(tail -c +"$(cat "$STATE/ha-log-offset-$1" 2>/dev/null || echo 1)" "$PG_HA_DIR/${PG_HA_MEMBERS[i]}.log" 2>/dev/null); then
    echo yes
  else
    echo no
  fi
}

# ------------------------------------------------------------------------------ the relays

proxy_pid_file() { printf '%s/proxy-%s.pid\n' "$STATE" "$1"; }
proxy_mode_file() { printf '%s/proxy-%s.mode\n' "$STATE" "$1"; }

# proxy_start NAME LISTEN TARGET: bench's relay, detached, in mode pass.
proxy_start() {
  local name=$1 listen=$2 target=$3
  port_open "$listen" && die "proxy $name: $HOST:$listen is taken"
  spawn_detached "$(proxy_pid_file "$name")" "$STATE/proxy-$name.log" "$JAVA" -Xmx256m -Xss256k \
    -jar "$ROOT/bench/target/idem-bench.jar" proxy --listen "$listen" --to "$target" --mode "$(proxy_mode_file "$name")"
  wait_for 20 port_open "$listen" || die "proxy $name: not listening on $HOST:$listen"
}

proxy_stop() {
  local pid
  [[ -f $(proxy_pid_file "$1") ]] || return 0
  read -r pid <"$(proxy_pid_file "$1")" || true
  [[ -n ${pid:-} ]] && kill -0 "$pid" 2>/dev/null && stop_pid "$pid" 10 "proxy $1"
  rm -f "$(proxy_pid_file "$1")"
}

issuer_start() {
  port_open "$ISSUER_PORT" && die "issuer: $HOST:$ISSUER_PORT is taken"
  spawn_detached "$(proxy_pid_file issuer)" "$STATE/issuer.log" \
    "$JAVA" -Xmx256m -jar "$ROOT/bench/target/idem-bench.jar" issuer --port "$ISSUER_PORT" --delay-ms 300
  wait_for 20 port_open "$ISSUER_PORT" || die "issuer: not listening on $HOST:$ISSUER_PORT"
}

# proxy_mode NAME MODE...: pass, delay <ms> or blackhole (bench's FaultProxy)
proxy_mode() {
  local name=$1
  shift
  printf '%s\n' "$*" >"$(proxy_mode_file "$name").tmp"
  mv "$(proxy_mode_file "$name").tmp" "$(proxy_mode_file "$name")"
  sleep 0.2 # the relay reads its mode every 50 ms
}

# ------------------------------------------------------------------------------ the service

instance_pid_file() { printf '%s/instance-%s.pid\n' "$STATE" "$1"; }

instance_pid() {
  local pid
  [[ -f $(instance_pid_file "$1") ]] || return 1
  read -r pid <"$(instance_pid_file "$1")" || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  printf '%s\n' "$pid"
}

instance_ready() {
  curl -fsS -o /dev/null --max-time 2 "http://$HOST:${INSTANCE_PORTS[$1]}/q/health/ready" 2>/dev/null
}

# instance_start NAME [SKEW]: the packaged jar, detached (it outlives a `fault` command that
# restarts it); with SKEW (e.g. +120s), under libfaketime with its wall clock that far off (the
# monotonic clock stays true, which the JVM's timers need). $STATE/instance-NAME.skew says so.
instance_start() {
  local name=$1 skew=${2:-} port=${INSTANCE_PORTS[$1]} log_file="$STATE/instance-$1.log" i
  local clock=() issuer=()
  rm -f "$STATE/instance-$name.skew"
  # two-phase grants through the suite's issuer while $STATE/two-phase exists (freeze-two-phase)
  if [[ -f $STATE/two-phase ]]; then
    issuer=(IDEM_CAMPAIGN_PAID_COUPON_ISSUER=external IDEM_COUPON_ISSUER_URL="http://$HOST:$ISSUER_PORT/coupons")
  fi
  # the soak archives as it goes: records and published events past 5 minutes, every minute
  # (every TTL shorter than the retention, as the service requires)
  local props=()
  if ((CHAOS_SOAK)); then
    props+=(-Didem.dedup.retention=5m -Didem.key.retention=2m -Didem.pipeline.redis-ttl=2m
      -Didem.pipeline.scopes.payment-callback.redis-ttl=2m -Didem.archive.interval=1m
      -Didem.archive.outbox-retention=5m -Didem.reconciliation.interval=30s)
  fi
  local run=("$JAVA" -Xmx512m "${props[@]}" -jar "$APP/quarkus-run.jar")
  [[ -z $CHAOS_NATIVE ]] || run=("$NATIVE_APP" "${NATIVE_OPTS[@]}" "${props[@]}")
  if [[ -n $skew ]]; then
    # the library itself, preloaded: the faketime command forks, and the pid file must name the service
    local lib
    lib="$(compgen -G '/usr/lib/*/faketime/libfaketime.so.1' | head -n 1 || true)"
    if [[ -z $lib ]]; then
      apt_install libfaketime
      lib="$(compgen -G '/usr/lib/*/faketime/libfaketime.so.1' | head -n 1)"
    fi
    clock=(env LD_PRELOAD="$lib" FAKETIME="$skew" FAKETIME_DONT_FAKE_MONOTONIC=1)
    printf '%s\n' "$skew" >"$STATE/instance-$name.skew"
  fi
  # the engines: through the relays, or the clusters directly (a relay would hide their topology);
  # the soak injects no fault, so it goes without relays, as a deployment would
  local pg_url="postgresql://$HOST:$PG_PROXY_PORT/idem" redis_port=$REDIS_PROXY_PORT
  if ((CHAOS_SOAK)); then
    pg_url="postgresql://$HOST:$PG_PORT/idem"
    redis_port=$REDIS_PORT
  fi
  [[ $CHAOS_ENGINES == ha ]] && pg_url="postgresql://$HOST:$PG_HA_PRIMARY_PORT/$HA_DB"
  local engines=(QUARKUS_REDIS_HOSTS="redis://$HOST:$redis_port" KAFKA_BOOTSTRAP_SERVERS="$HOST:$KAFKA_PORT")
  if [[ $CHAOS_ENGINES == cluster ]]; then
    engines=(QUARKUS_REDIS_CLIENT_TYPE=cluster QUARKUS_REDIS_HOSTS="$(redis_cluster_hosts)"
      KAFKA_BOOTSTRAP_SERVERS="$(kafka_cluster_bootstrap)")
  fi
  port_open "$port" && die "instance $name: $HOST:$port is taken"
  log "instance $name: starting on $HOST:$port${skew:+ with its clock $skew off} (log ${log_file#"$ROOT/"})"
  spawn_detached "$(instance_pid_file "$name")" "$log_file" env -u QUARKUS_PROFILE \
    QUARKUS_HTTP_PORT="$port" \
    QUARKUS_DATASOURCE_REACTIVE_URL="$pg_url" \
    "${engines[@]}" \
    IDEM_CALLBACK_SECRET="$SECRET" \
    IDEM_ADMIN_TOKEN="$ADMIN_TOKEN" \
    IDEM_RECONCILIATION_GRACE=15s \
    "${issuer[@]}" \
    "${clock[@]}" "${run[@]}"
  for ((i = 0; i < 240; i++)); do
    if instance_ready "$name"; then
      log "instance $name: ready (pid $(instance_pid "$name"))"
      return 0
    fi
    if ((i > 4)) && ! instance_pid "$name" >/dev/null; then break; fi
    sleep 0.5
  done
  tail -n 20 "$log_file" >&2 || true
  die "instance $name: not ready within 120 s"
}

instance_stop() {
  local pid
  pid="$(instance_pid "$1")" || return 0
  stop_pid "$pid" 30 "instance $1"
  rm -f "$(instance_pid_file "$1")"
}

# instances_restart NAME...: all of them stopped, then started again in order
instances_restart() {
  local name
  for name; do instance_stop "$name"; done
  for name; do instance_start "$name"; done
}

# ------------------------------------------------------------------------------ faults

# SIGKILL, and return once the process is gone
sigkill() {
  kill -KILL "$1"
  wait_for 10 bash -c "! kill -0 $1 2>/dev/null"
}

fault() {
  local name=$1 pid
  case $name in
    none | soak) ;;
    redis-flush)
      log "fault: FLUSHALL"
      redis-cli -h "$HOST" -p "$REDIS_PORT" flushall >/dev/null
      ;;
    redis-restart)
      pid="$(redis_our_pid)" || die "fault: no Redis of ours to stop"
      log "fault: stopping Redis (pid $pid) for $CHAOS_DOWN s"
      stop_pid "$pid" 20 "redis"
      sleep "$CHAOS_DOWN"
      redis_spawn
      log "fault: Redis back (empty)"
      ;;
    postgres-restart)
      log "fault: stopping PostgreSQL for $CHAOS_DOWN s"
      pg_ctl_chaos stop -m fast
      sleep "$CHAOS_DOWN"
      pg_ctl_chaos start
      wait_for 60 pg_accepting || die "fault: PostgreSQL did not come back"
      log "fault: PostgreSQL back"
      ;;
    kafka-restart)
      pid="$(kafka_our_pid)" || die "fault: no broker of ours to stop"
      log "fault: stopping the Kafka broker (pid $pid) for $CHAOS_DOWN s"
      stop_pid "$pid" 60 "kafka broker"
      sleep "$CHAOS_DOWN"
      kafka_start
      log "fault: Kafka broker back"
      ;;
    kill-instance)
      pid="$(instance_pid b)" || die "fault: instance b is not running"
      log "fault: SIGKILL to instance b (pid $pid)"
      sigkill "$pid"
      rm -f "$(instance_pid_file b)"
      instance_start b
      ;;
    postgres-slow)
      log "fault: PostgreSQL answering $CHAOS_SLOW_MS ms slower for $CHAOS_FAULT_SECONDS s"
      proxy_mode pg delay "$CHAOS_SLOW_MS"
      sleep "$CHAOS_FAULT_SECONDS"
      proxy_mode pg pass
      ;;
    postgres-blackhole | redis-blackhole)
      local relay=${name%-blackhole}
      [[ $relay == postgres ]] && relay=pg
      log "fault: $name for $CHAOS_FAULT_SECONDS s (packets held: no answer, no reset)"
      proxy_mode "$relay" blackhole
      sleep "$CHAOS_FAULT_SECONDS"
      proxy_mode "$relay" pass
      log "fault: $relay answers again"
      ;;
    freeze-instance | freeze-two-phase)
      pid="$(instance_pid b)" || die "fault: instance b is not running"
      log "fault: SIGSTOP to instance b (pid $pid) for $CHAOS_FREEZE_SECONDS s"
      kill -STOP "$pid"
      sleep "$CHAOS_FREEZE_SECONDS"
      kill -CONT "$pid"
      log "fault: instance b continued"
      ;;
    postgres-down-long)
      log "fault: stopping PostgreSQL for $CHAOS_LONG_DOWN s"
      pg_ctl_chaos stop -m fast
      local ready
      ready="$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://$HOST:${INSTANCE_PORTS[a]}/q/health/ready" || true)"
      log "fault: readiness of instance a with PostgreSQL down: $ready"
      sleep "$CHAOS_LONG_DOWN"
      pg_ctl_chaos start
      wait_for 60 pg_accepting || die "fault: PostgreSQL did not come back"
      log "fault: PostgreSQL back"
      ;;
    clock-skew)
      pid="$(instance_pid b)" || die "fault: instance b is not running"
      log "fault: instance b restarted with its clock $CHAOS_SKEW off"
      stop_pid "$pid" 30 "instance b"
      rm -f "$(instance_pid_file b)"
      instance_start b "$CHAOS_SKEW"
      sleep "$CHAOS_SKEW_SECONDS"
      # the fault ends with the skew: what b answers afterwards is judged like any other answer
      log "fault: instance b restarted on the true time"
      instances_restart b
      ;;
    redis-master-kill)
      local port
      port="$(redis_cluster_masters "${REDIS_CLUSTER_PORTS[0]}" | head -n 1)"
      [[ -n $port ]] && pid="$(redis_cluster_node_pid "$port")" || die "fault: no Redis master of ours to kill"
      log "fault: SIGKILL to the Redis master on :$port (pid $pid)"
      sigkill "$pid"
      local survivor=${REDIS_CLUSTER_PORTS[0]}
      [[ $survivor == "$port" ]] && survivor=${REDIS_CLUSTER_PORTS[1]}
      wait_for 60 redis_cluster_serving "$survivor" || die "fault: no replica promoted within 60 s"
      log "fault: a replica took over the slots of :$port"
      redis_cluster_node_start "$port"
      wait_for 60 redis_cluster_ok || die "fault: node :$port did not rejoin within 60 s"
      log "fault: node :$port back, as a replica"
      ;;
    kafka-broker-kill)
      local node
      node="$(kafka_tool org.apache.kafka.tools.MetadataQuorumCommand --bootstrap-server "$(kafka_cluster_bootstrap)" \
        describe --status 2>/dev/null | awk '$1 == "LeaderId:" { print $2 }')"
      [[ $node =~ ^[123]$ ]] || node=1
      kafka_cluster_node "$node"
      pid="$(kafka_our_pid)" || die "fault: broker $node is not running"
      log "fault: SIGKILL to Kafka broker $node, the active controller (pid $pid), for $CHAOS_DOWN s"
      sigkill "$pid"
      sleep "$CHAOS_DOWN"
      kafka_start
      log "fault: Kafka broker $node back"
      ;;
    primary-kill | primary-rejoin | primary-kill-async)
      local leader from
      if [[ $name == primary-kill-async ]]; then
        pg_ha_synchronous false || die "fault: the leader still waits for a standby 30 s after synchronous_mode off"
        log "fault: synchronous_mode off: commits no longer wait for a standby"
      fi
      read -r leader _ < <(pg_ha_leader) || die "fault: no leader"
      stat -c %s "$PG_HA_DIR/$leader.log" >"$STATE/ha-log-offset-$leader" 2>/dev/null || true
      local senders=()
      if [[ $name == primary-kill || $name == primary-kill-async ]]; then
        # the replicas behind by a moment, as over a real network under load: the leader's WAL
        # senders stopped, so what it writes meanwhile is not on its way to any replica, then the
        # leader killed (synchronous, its commits wait for the standby meanwhile). Stopping the
        # receivers instead would not do: what was sent waits in their sockets and arrives.
        mapfile -t senders < <(ha_wal_senders "$leader")
        pg_ha_kill -STOP "${senders[@]}"
        sleep "$CHAOS_HA_LAG_SECONDS"
        note replicaLagBytesAtKill "$(pg_ha_psql -d postgres -c "SELECT max(pg_current_wal_lsn() - flush_lsn) FROM pg_stat_replication")"
      fi
      log "fault: SIGKILL to the leader $leader (Patroni and PostgreSQL)"
      from=$(date +%s%N)
      ha_crash "$leader"
      ha_until_writable "$from"
      note newLeader "$(pg_ha_leader | cut -d' ' -f1)"
      if [[ $name == primary-rejoin || $name == primary-kill-async ]]; then
        sleep "$CHAOS_DOWN"
        log "fault: $leader started again"
        from=$(date +%s%N)
        pg_ha_start "$leader"
        wait_for 120 ha_replica "$leader" ||
          die "fault: $leader is no replica 120 s after its start"
        note rejoinedSeconds "$(seconds_since "$from")"
        note pgRewind "$(ha_rewound "$leader")"
      fi
      if [[ $name == primary-kill-async ]]; then
        pg_ha_synchronous true || die "fault: no synchronous standby 30 s after synchronous_mode on"
        log "fault: synchronous_mode on again"
      fi
      log "fault: $(ha_roles)"
      ;;
    switchover)
      local from
      from=$(date +%s%N)
      log "fault: patronictl switchover to the synchronous standby"
      pg_ha_switchover || die "fault: switchover failed"
      ha_until_writable "$from"
      log "fault: $(ha_roles)"
      ;;
    primary-freeze)
      local leader from i seen=0
      read -r leader _ < <(pg_ha_leader) || die "fault: no leader"
      log "fault: SIGSTOP to the leader $leader (Patroni and PostgreSQL) for $CHAOS_HA_FREEZE_SECONDS s"
      from=$(date +%s%N)
      ha_signal STOP "$leader"
      ha_until_writable "$from"
      note newLeader "$(pg_ha_leader | cut -d' ' -f1)"
      sleep "$CHAOS_HA_FREEZE_SECONDS"
      ha_signal CONT "$leader"
      log "fault: $leader continued"
      # a write straight to it, as a client that still had its address would send: it must not
      # commit (read-only once demoted; before that, its commit waits for a standby that left it)
      local port
      port="${PG_HA_PORTS[$(pg_ha_index "$leader")]}"
      if timeout 5 psql -X -q -w -h "$HOST" -p "$port" -U postgres -d postgres \
        -c "INSERT INTO chaos_probe VALUES (now())" </dev/null >/dev/null 2>&1; then
        note writeToThawedLeader committed
        die "fault: $leader, continued, committed a write as a second primary"
      fi
      note writeToThawedLeader refused
      # from the moment it runs again until it is a replica: never a second leader
      from=$(date +%s%N)
      for ((i = 0; i < 600; i++)); do
        pg_ha_is_leader "$leader" && ((++seen))
        ha_replica "$leader" && break
        sleep 0.1
      done
      note thawedLeaderChecks "$seen"
      note replicaAgainSeconds "$(seconds_since "$from")"
      ((seen == 0)) || die "fault: $leader answered as a leader $seen times after it was continued"
      log "fault: $(ha_roles)"
      ;;
    sync-standby-kill)
      local standby from longest=0 t0 took
      read -r standby _ < <(pg_ha_sync_standby) || die "fault: no synchronous standby"
      log "fault: SIGKILL to the synchronous standby $standby"
      from=$(date +%s%N)
      ha_crash "$standby"
      # commits through HAProxy meanwhile: the longest one is the stall
      while (( ($(date +%s%N) - from) / 1000000000 < CHAOS_DOWN + 10 )); do
        t0=$(date +%s%N)
        pg_ha_psql -d postgres -c "INSERT INTO chaos_probe VALUES (now())" >/dev/null 2>&1 || true
        took=$(( ($(date +%s%N) - t0) / 1000000 ))
        ((took > longest)) && longest=$took
        sleep 0.1
      done
      note longestCommitMs "$longest"
      note newSyncStandby "$(pg_ha_sync_standby | cut -d' ' -f1)"
      pg_ha_start "$standby"
      log "fault: $standby started again; $(ha_roles)"
      ;;
    *) die "unknown fault $name" ;;
  esac
}

# ------------------------------------------------------------------------------ the suite

down() {
  local name pid
  for name in "${!INSTANCE_PORTS[@]}"; do instance_stop "$name"; done
  proxy_stop pg
  proxy_stop redis
  proxy_stop issuer
  rm -f "$STATE/two-phase"
  if pid="$(kafka_our_pid)"; then stop_pid "$pid" 60 "kafka broker"; fi
  rm -f "$KAFKA_PID"
  if pid="$(redis_our_pid)"; then stop_pid "$pid" 20 "redis"; fi
  rm -f "$REDIS_DIR/started-by-idem"
  redis_cluster_down
  (kafka_cluster_down) # in a subshell: it points kafka.sh's variables at each node in turn
  pg_chaos_drop
}

suite() {
  local run out fault rc=0 ports
  run="$(date -u +%Y%m%d%H%M%S)"
  out="$ROOT/target/chaos/$run"
  mkdir -p "$out" "$STATE"
  exec 8>"$STATE/.lock"
  flock -n 8 || die "another fault suite is running (.idem/chaos/.lock)"
  trap 'down 8>&-' EXIT
  trap 'exit 130' INT TERM

  need_commands jq curl
  command -v redis-server >/dev/null 2>&1 || apt_install redis-server redis-tools
  if [[ -n $CHAOS_NATIVE ]]; then
    local exe
    exe="$(native_executable "$CHAOS_NATIVE")" || die "CHAOS_NATIVE=$CHAOS_NATIVE is not a native executable"
    log "instances: the native executable $exe"
    cp "$exe" "$NATIVE_APP"
  else
    if [[ $CHAOS_BUILD == 1 ]]; then
      log "building the service"
      install_extension 8>&-
      ./mvnw -B -q -DskipTests package 8>&-
    fi
    rm -rf "$APP"
    cp -a target/quarkus-app "$APP"
  fi
  ./mvnw -B -q -f bench/pom.xml package 8>&-

  down 8>&-
  if [[ $CHAOS_ENGINES == ha ]]; then
    ha_up 8>&-
  else
    pg_chaos_up 8>&-
    proxy_start pg "$PG_PROXY_PORT" "$PG_PORT" 8>&-
  fi
  issuer_start 8>&-
  if [[ $CHAOS_ENGINES == cluster ]]; then
    rm -rf "$REDIS_CLUSTER_DIR" "$KAFKA_CLUSTER_DIR"
    redis_cluster_up 8>&-
    (kafka_cluster_up) 8>&-
    BENCH_KAFKA="$(kafka_cluster_bootstrap)"
  else
    port_open "$REDIS_PORT" && die "redis: $HOST:$REDIS_PORT is taken by a server this suite did not start"
    log "redis: starting on $HOST:$REDIS_PORT"
    redis_spawn 8>&-
    proxy_start redis "$REDIS_PROXY_PORT" "$REDIS_PORT" 8>&-
    port_open "$KAFKA_PORT" && die "kafka: $HOST:$KAFKA_PORT is taken by a server this suite did not start"
    rm -rf "$KAFKA_DIR"
    kafka_start 8>&-
    kafka_topics 8>&-
    BENCH_KAFKA="$HOST:$KAFKA_PORT"
  fi
  rm -f "$STATE"/instance-*.log # a restarted instance appends to its log; a new suite starts afresh
  instance_start a 8>&-
  instance_start b 8>&-

  ports="${INSTANCE_PORTS[a]},${INSTANCE_PORTS[b]}"
  : >"$out/table.txt"
  for fault in $CHAOS_FAULTS; do
    log "---- $fault"
    if ! instance_pid a >/dev/null || ! instance_pid b >/dev/null; then
      die "an instance is not running before $fault"
    fi
    local extra=() orders=$CHAOS_ORDERS rate=$CHAOS_RATE
    if [[ $fault == soak ]]; then
      # enough deliveries in flight that the pace, not the generator, sets the rate
      extra=(--pid-files "$(instance_pid_file a),$(instance_pid_file b)" --at 1.1 --concurrency 512)
      if [[ -n $CHAOS_SOAK_RATE ]]; then
        rate=$CHAOS_SOAK_RATE
        orders=$((CHAOS_SOAK_RATE * CHAOS_SOAK_MINUTES * 60 / CHAOS_DELIVERIES))
      else
        extra+=(--peak-warmup "$CHAOS_SOAK_PEAK_WARMUP" --peak-seconds "$CHAOS_SOAK_PEAK_SECONDS"
          --minutes "$CHAOS_SOAK_MINUTES")
      fi
    fi
    [[ $fault == postgres-down-long ]] && extra=(--give-up 420 --kafka-during-fault true --settle 240)
    local jdbc="jdbc:postgresql://$HOST:$PG_PORT/idem"
    if [[ $CHAOS_ENGINES == ha ]]; then
      ha_heal 8>&-
      jdbc="jdbc:postgresql://$HOST:$PG_HA_PRIMARY_PORT/$HA_DB"
      extra=(--kafka-during-fault true --fault-note "$out/$fault.note")
      [[ $fault == primary-kill-async ]] && extra+=(--losses-expected true)
      rm -f "$out/$fault.note"
    fi
    if [[ $fault == freeze-two-phase ]]; then
      # both instances grant through the external issuer for this storm
      : >"$STATE/two-phase"
      instances_restart a b 8>&-
      extra=(--settle 180)
    fi
    CHAOS_ADMIN_TOKEN="$ADMIN_TOKEN" BENCH_SECRET="$SECRET" BENCH_KAFKA="$BENCH_KAFKA" \
      CHAOS_FAULT_NOTE="$out/$fault.note" BENCH_JDBC_URL="$jdbc" \
      "$JAVA" -Xmx1g -jar bench/target/idem-bench.jar chaos --fault "$fault" --ports "$ports" --run "$run" \
      --orders "$orders" --deliveries "$CHAOS_DELIVERIES" --rate "$rate" --at "$CHAOS_AT" \
      --grace "$CHAOS_GRACE" --command "bash $ROOT/scripts/chaos.sh fault $fault" "${extra[@]}" \
      --out "$out/$fault.json" 8>&- | tee -a "$out/table.txt" || rc=1
    if [[ $fault == freeze-two-phase ]]; then
      log "two-phase: $(curl -fsS --max-time 5 "http://$HOST:$ISSUER_PORT/stats" || echo 'issuer unreachable'); takeovers: $(
        for name in a b; do
          curl -fsS --max-time 5 "http://$HOST:${INSTANCE_PORTS[$name]}/q/metrics" 2>/dev/null |
            awk -v n="$name" '/^idem_dedup_takeovers_total/ { sub(/ # .*/, ""); s += $NF } END { printf "%s %d ", n, s }'
        done)"
      rm -f "$STATE/two-phase"
      instances_restart a b 8>&-
    fi
    # a fault leaves no instance behind it changed: the skewed clock goes back to the true one
    if [[ -f $STATE/instance-b.skew ]]; then
      instances_restart b 8>&-
    fi
  done
  jq -s . "$out"/*.json >"$out/results.json" 2>/dev/null || true
  printf '\nfault suite %s: %s orders × %s deliveries per fault, two instances, round-robin, %s engines\n' \
    "$run" "$CHAOS_ORDERS" "$CHAOS_DELIVERIES" "$CHAOS_ENGINES"
  cat "$out/table.txt"
  log "results: ${out#"$ROOT/"}/ (one JSON per fault, table.txt); service logs in ${STATE#"$ROOT/"}/"
  return "$rc"
}

case "${1:-run}" in
  run)
    CHAOS_FAULTS="${CHAOS_FAULTS:-$CHAOS_SINGLE_FAULTS}"
    suite
    ;;
  cluster)
    CHAOS_ENGINES=cluster
    CHAOS_FAULTS="${CHAOS_FAULTS:-$CHAOS_CLUSTER_FAULTS}"
    suite
    ;;
  ha)
    CHAOS_ENGINES=ha
    CHAOS_FAULTS="${CHAOS_FAULTS:-$CHAOS_HA_FAULTS}"
    suite
    ;;
  soak)
    CHAOS_SOAK=1
    CHAOS_FAULTS=soak
    suite
    ;;
  alerts) exec bash "$ROOT/scripts/alerts.sh" ;;
  fault) fault "${2:?fault name}" ;;
  down) down ;;
  *)
    echo "usage: scripts/chaos.sh [run|cluster|ha|soak|alerts|down|fault NAME]" >&2
    exit 2
    ;;
esac
