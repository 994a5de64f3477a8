#!/usr/bin/env bash
# ./idem services: the local servers of idem on 127.0.0.1 (`./idem help` says what each command does).
# A server that already answers on its port is reused untouched (PostgreSQL still gets the
# application's role and databases). What this script makes lives in .idem/, with the marks that
# tell `down` what it started; the tests' clusters, on fixed ports, in ~/.cache/idem/.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STATE="$ROOT/.idem"
# the tests' clusters belong to the machine: every clone finds, reuses and restarts the same ones
CLUSTER_STATE="${IDEM_CLUSTER_STATE:-$HOME/.cache/idem}"

HOST=127.0.0.1

PG_PORT=5432
DB_NAME=idem
DB_USER=idem
DB_PASSWORD=idem
# the example services' databases (giftcards: the service `./idem new` makes), owned by $DB_USER
EXAMPLE_DB_NAMES=(loyalty giftcards)
# the test suites' own, made afresh by `test-dbs` before every `./idem test`, and their Redis
# databases, emptied with them: no DONE mark outlives its record (reconciliation: a lost commit);
# idem_store_test: the store contract test's PgDedupStore
TEST_DB_NAMES=(idem_test idem_start_test loyalty_test giftcards_test idem_extension_test idem_extension_start_test
  idem_store_test)
TEST_REDIS_DBS=(3 4 5 6)

REDIS_PORT=6379
REDIS_DIR="$STATE/redis"

KAFKA_PORT=9092
# not 9093, Alertmanager's (services monitoring); data formatted when the controller had it starts as
# it is: a static quorum keeps voters' ids in its data, not their addresses
KAFKA_CONTROLLER_PORT=9095
KAFKA_PARTITIONS=4
# the services', then the tests' (the example's, a new service's, the extension's integration tests')
KAFKA_TOPICS=(coupon-grants payment-callbacks points-awards gift-card-issues points-awards-test gift-card-issues-test
  idem-it-voucher-grants idem-it-ledger-postings idem-it-failing-postings)
KAFKA_TOPICS+=("${KAFKA_TOPICS[@]/%/-dlq}")
KAFKA_START_TIMEOUT=90
KAFKA_DIR="$STATE/kafka"

MONITORING_DIR="$STATE/monitoring"
PROMETHEUS_PORT=9090
ALERTMANAGER_PORT=9093
MONITOR_TARGETS="${IDEM_MONITOR_TARGETS:-127.0.0.1:8080}"
MONITOR_INTERVAL=5s
ALERT_WEBHOOK="${IDEM_ALERT_WEBHOOK:-}"

# fd 9 holds the lock on $STATE/lock; every long-lived process started from here closes it (9>&-)

LOG_NAME="idem services"
# shellcheck source=scripts/lib/base.sh
source "$ROOT/scripts/lib/base.sh"
# shellcheck source=scripts/lib/postgres.sh
source "$ROOT/scripts/lib/postgres.sh"
# shellcheck source=scripts/lib/redis.sh
source "$ROOT/scripts/lib/redis.sh"
# shellcheck source=scripts/lib/kafka.sh
source "$ROOT/scripts/lib/kafka.sh"
# shellcheck source=scripts/lib/redis-cluster.sh
source "$ROOT/scripts/lib/redis-cluster.sh"
# shellcheck source=scripts/lib/kafka-cluster.sh
source "$ROOT/scripts/lib/kafka-cluster.sh"
# shellcheck source=scripts/lib/postgres-ha.sh
source "$ROOT/scripts/lib/postgres-ha.sh"
# shellcheck source=scripts/lib/zipkin.sh
source "$ROOT/scripts/lib/zipkin.sh"
# shellcheck source=scripts/lib/monitoring.sh
source "$ROOT/scripts/lib/monitoring.sh"
# shellcheck source=scripts/lib/keycloak.sh
source "$ROOT/scripts/lib/keycloak.sh"

# ---------------------------------------------------------------- PostgreSQL
# 0 accepting, 1 rejecting (starting up), 2 no answer
pg_state() {
  local rc=0
  command -v pg_isready >/dev/null || { port_open "$PG_PORT" && return 0 || return 2; }
  pg_isready -q -h "$HOST" -p "$PG_PORT" -t 3 || rc=$?
  return $((rc <= 1 ? rc : 2))
}

# "<version> <name>" of the Debian cluster configured for port 5432, if any.
pg_cluster() {
  command -v pg_lsclusters >/dev/null 2>&1 || return 1
  pg_lsclusters -h 2>/dev/null | awk -v port="$PG_PORT" '$3 == port { print $1, $2; exit }'
}

pg_start_local() {
  if ! command -v pg_ctlcluster >/dev/null 2>&1 || ! compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null; then
    apt_install postgresql
    # the package's own scripts may have started the cluster
    if wait_for 5 pg_state; then
      log "postgres: started by the postgresql package"
      return 0
    fi
  fi
  local cluster ver name
  cluster="$(pg_cluster || true)"
  if [[ -z $cluster ]]; then
    ver="$(pg_version)" || die "postgres: no PostgreSQL server binaries found"
    log "postgres: creating cluster $ver/main on port $PG_PORT"
    as_root pg_createcluster --port "$PG_PORT" "$ver" main </dev/null 9>&-
    cluster="$ver main"
  fi
  read -r ver name <<<"$cluster"
  log "postgres: starting cluster $ver/$name"
  as_root pg_ctlcluster --skip-systemctl-redirect "$ver" "$name" start </dev/null 9>&-
  mkdir -p "$STATE/postgres"
  printf '%s %s\n' "$ver" "$name" >"$STATE/postgres/started-by-idem"
  wait_for 60 pg_state || die "postgres: cluster $ver/$name did not accept connections within 60 s"
}

# Does the application's login work over TCP, into its own database?
pg_app_ok() {
  local owner
  owner="$(PGPASSWORD="$DB_PASSWORD" PGCONNECT_TIMEOUT=5 psql -X -q -A -t -w \
    -h "$HOST" -p "$PG_PORT" -U "$DB_USER" -d "$DB_NAME" \
    -c 'select pg_get_userbyid(datdba) from pg_database where datname = current_database()' \
    2>/dev/null </dev/null)" || return 1
  [[ $owner == "$DB_USER" ]]
}

pg_ensure_app_db() {
  command -v psql >/dev/null 2>&1 || apt_install postgresql-client
  if pg_app_ok; then return 0; fi
  pg_admin -c 'select 1' >/dev/null || die "postgres: cannot connect as a superuser to create role '$DB_USER' and database '$DB_NAME'"
  if [[ "$(pg_admin -c "select 1 from pg_roles where rolname = '$DB_USER'")" == 1 ]]; then
    log "postgres: setting login password of role $DB_USER"
    pg_admin -c "alter role $DB_USER with login password '$DB_PASSWORD'"
  else
    log "postgres: creating role $DB_USER"
    pg_admin -c "create role $DB_USER with login password '$DB_PASSWORD'"
  fi
  local owner
  owner="$(pg_admin -c "select pg_get_userbyid(datdba) from pg_database where datname = '$DB_NAME'")"
  if [[ -z $owner ]]; then
    log "postgres: creating database $DB_NAME owned by $DB_USER"
    pg_admin -c "create database $DB_NAME owner $DB_USER"
  elif [[ $owner != "$DB_USER" ]]; then
    log "postgres: making $DB_USER the owner of database $DB_NAME (was $owner)"
    pg_admin -c "alter database $DB_NAME owner to $DB_USER"
  fi
  pg_app_ok || die "postgres: role $DB_USER still cannot log in to database $DB_NAME over TCP $HOST:$PG_PORT (check pg_hba.conf)"
}

postgres_up() {
  local rc=0
  pg_state || rc=$?
  if [[ $rc -eq 1 ]]; then
    log "postgres: server on $HOST:$PG_PORT is starting; waiting"
    wait_for 60 pg_state || die "postgres: server on $HOST:$PG_PORT does not accept connections"
  elif [[ $rc -ne 0 ]]; then
    port_open "$PG_PORT" && die "postgres: something listens on $HOST:$PG_PORT but does not answer as PostgreSQL"
    pg_start_local
  elif [[ -f $STATE/postgres/started-by-idem ]]; then
    log "postgres: up on $HOST:$PG_PORT (started by idem)"
  else
    log "postgres: reusing server on $HOST:$PG_PORT"
  fi
  pg_ensure_app_db
  local db
  for db in "${EXAMPLE_DB_NAMES[@]}" "${TEST_DB_NAMES[@]}"; do DB_NAME=$db pg_ensure_app_db; done
}

# Empty test databases, owned by $DB_USER; whatever is connected to the old ones is cut off.
postgres_fresh_test_dbs() {
  pg_state || die "postgres: not answering on $HOST:$PG_PORT; run 'up' first"
  pg_admin -c 'select 1' >/dev/null || die "postgres: cannot connect as a superuser to make the test databases afresh"
  local db
  for db in "${TEST_DB_NAMES[@]}"; do
    pg_admin -c "drop database if exists $db with (force)"
    pg_admin -c "create database $db owner $DB_USER"
  done
  log "postgres: test databases made afresh: ${TEST_DB_NAMES[*]}"
  for db in "${TEST_REDIS_DBS[@]}"; do
    redis-cli -h "$HOST" -p "$REDIS_PORT" -n "$db" flushdb >/dev/null || die "redis: cannot empty database $db"
  done
  log "redis: test databases emptied: ${TEST_REDIS_DBS[*]}"
}

postgres_down() {
  local mark="$STATE/postgres/started-by-idem" ver name
  if [[ ! -f $mark ]]; then
    log "postgres: not started by idem; left alone"
    return 0
  fi
  read -r ver name <"$mark"
  if pg_state; then
    log "postgres: stopping cluster $ver/$name"
    as_root pg_ctlcluster --skip-systemctl-redirect "$ver" "$name" stop </dev/null 9>&- ||
      log "postgres: pg_ctlcluster stop failed"
  fi
  rm -f "$mark"
}

# status_line NAME PORT HOW COMMAND...: "up" and HOW when COMMAND succeeds, else "down" and status 1
status_line() {
  if "${@:4}"; then printf '%-9s %-16s %-5s %s\n' "$1" "$HOST:$2" up "$3"; else printf '%-9s %-16s %s\n' "$1" "$HOST:$2" down && return 1; fi
}
postgres_status() {
  local how="not started by idem"
  [[ ! -f $STATE/postgres/started-by-idem ]] || how="started by idem"
  status_line postgres "$PG_PORT" "$how; database $DB_NAME, user $DB_USER" pg_state
}

# --------------------------------------------------------------------- Redis
redis_up() {
  if redis_ping; then
    if redis_our_pid >/dev/null; then
      log "redis: up on $HOST:$REDIS_PORT (started by idem)"
    else
      log "redis: reusing server on $HOST:$REDIS_PORT"
    fi
    return 0
  fi
  port_open "$REDIS_PORT" && die "redis: something listens on $HOST:$REDIS_PORT but does not answer PING"
  if ! command -v redis-server >/dev/null 2>&1; then
    apt_install redis-server redis-tools
    if wait_for 5 redis_ping; then
      log "redis: started by the redis-server package"
      return 0
    fi
  fi
  log "redis: starting redis-server on $HOST:$REDIS_PORT"
  redis_spawn
}

redis_down() {
  local pid
  if pid="$(redis_our_pid)"; then
    log "redis: stopping redis-server (pid $pid)"
    stop_pid "$pid" 20 "redis: redis-server"
  elif [[ ! -f $REDIS_DIR/started-by-idem ]]; then
    log "redis: not started by idem; left alone"
  fi
  rm -f "$REDIS_DIR/started-by-idem"
}

redis_status() {
  local how="not started by idem" pid
  if pid="$(redis_our_pid)"; then how="started by idem, pid $pid"; fi
  status_line redis "$REDIS_PORT" "$how" redis_ping
}

# --------------------------------------------------------------------- Kafka
kafka_up() {
  local pid
  if pid="$(kafka_our_pid)"; then
    kafka_wait_started "$pid"
    log "kafka: up on $HOST:$KAFKA_PORT (started by idem, pid $pid)"
  elif port_open "$KAFKA_PORT"; then
    log "kafka: reusing broker on $HOST:$KAFKA_PORT"
  else
    kafka_start
  fi
  [[ -f $KAFKA_LIBS/.pom.sha256 ]] || kafka_libs
  kafka_topics
}

kafka_down() {
  local pid
  if pid="$(kafka_our_pid)"; then
    log "kafka: stopping broker (pid $pid)"
    stop_pid "$pid" 60 "kafka: broker"
  else
    log "kafka: no broker started by idem is running; nothing to stop"
  fi
  rm -f "$KAFKA_PID"
}

kafka_status() {
  local how="not started by idem" pid
  if pid="$(kafka_our_pid)"; then how="started by idem, pid $pid, log ${KAFKA_LOG#"$ROOT/"}"; fi
  status_line kafka "$KAFKA_PORT" "$how" port_open "$KAFKA_PORT"
}

# ---------------------------------------------------------------------- main
lock() {
  mkdir -p "$STATE"
  exec 9>"$STATE/lock"
  if command -v flock >/dev/null 2>&1; then
    flock -w 600 9 || die "another 'idem services' command holds ${STATE#"$ROOT/"}/lock"
  fi
}

main() {
  local cmd="${1:-}" rc=0
  case $cmd in
    up)
      lock
      postgres_up
      redis_up
      kafka_up
      log "all up: postgres $HOST:$PG_PORT (db $DB_NAME, user $DB_USER), redis $HOST:$REDIS_PORT, kafka $HOST:$KAFKA_PORT"
      ;;
    down)
      lock
      keycloak_down
      zipkin_down
      monitoring_down
      (kafka_cluster_down)
      redis_cluster_down
      pg_ha_down
      kafka_down
      redis_down
      postgres_down
      ;;
    test-dbs)
      lock
      postgres_fresh_test_dbs
      ;;
    redis-cluster | kafka-cluster | tracing | monitoring | keycloak)
      # redis_cluster_up/_down, kafka_cluster_up/_down, zipkin_up/_down, monitoring_up/_down, keycloak_up/_down
      local server=${cmd/tracing/zipkin}
      [[ ${2:-up} == up || ${2:-} == down ]] || { echo "usage: ${0##*/} $cmd [down]" >&2; return 2; }
      lock
      # in a subshell: kafka_cluster_* point kafka.sh's variables at each node in turn
      ("${server//-/_}_${2:-up}")
      ;;
    postgres-ha)
      case ${2:-up} in
        up)
          lock
          pg_ha_up
          ;;
        down)
          [[ -z ${3:-} || $3 == --purge ]] || { echo "usage: ${0##*/} postgres-ha down [--purge]" >&2; return 2; }
          lock
          pg_ha_down "${3:-}"
          ;;
        status) pg_ha_status || return 3 ;;
        *)
          echo "usage: ${0##*/} postgres-ha [up|status|down [--purge]]" >&2
          return 2
          ;;
      esac
      ;;
    status)
      postgres_status || rc=3
      redis_status || rc=3
      kafka_status || rc=3
      return "$rc"
      ;;
    *)
      echo "usage: ${0##*/} up|down|status|test-dbs|redis-cluster [down]|kafka-cluster [down]|tracing [down]|postgres-ha [status|down [--purge]]|monitoring [down]|keycloak [down]" >&2
      return 2
      ;;
  esac
}

main "$@"
