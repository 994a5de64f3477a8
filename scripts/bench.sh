#!/usr/bin/env bash
# The benchmark of idem in one run (./idem bench), on loopback, side by side with the limits of
# the same machine measured in the same run:
#
#   1. local servers up (scripts/services.sh), pgbench and redis-benchmark installed if missing;
#   2. the service jar built once with the benchmark's yardsticks (./mvnw -Pbench -DskipTests
#      package, into target/bench-service: production builds never hold them) and copied aside, the load
#      generator built (bench/, a plain Vert.x web client + HdrHistogram program);
#   3. limits: pgbench running the callback's own SQL on scratch tables (the median of three
#      runs), pgbench running a poll of grants with and without the dedup SQL (the database's
#      part of the Kafka ratio), redis-benchmark SET NX;
#   4. service A (outbox relay off): start-up time, Idempotency-Key first executions and replays,
#      first-delivery signed callbacks, duplicate deliveries and the bare one-Redis-GET endpoint
#      (these two in step, at the same concurrencies), each at rising concurrency until the
#      throughput stops growing; RSS idle and under load;
#   4b. service N, the native executable when there is one (./idem native): the same, beside A:
#      start-up, RSS, native ÷ jar; the bare endpoint too when the executable is of the
#      benchmark's build (BENCH_NATIVE below), so that the stack's own native ÷ jar stands beside;
#   4c. service H on Postgres with failover: the first-delivery ramp through HAProxy, with a
#      synchronous standby and without, beside A's single node;
#   4d. service T, fresh for each of three configurations and warmed up as A: first deliveries at one
#      fixed concurrency and RSS under them, with tracing off (no exporter), with every delivery
#      sampled and with 1 % (spans to the Zipkin of ./idem services tracing); sampled ÷ off;
#   5. service B (relay on): coupon grants/s through Kafka with the pipeline, then callback →
#      coupon latency at a tenth and at half of the first-delivery capacity;
#   6. service C (IDEM_BENCH_COUPONS_PIPELINE=false): the same grants without the pipeline;
#   7. comparison services (BENCH_PEERS below): each, then idem, alone on the machine, on a fresh
#      database of its own, after the same warm-up, at the same fixed concurrencies;
#   8. the table with ratios on stdout (idem ÷ each comparison service too), JSON in
#      target/bench/<run>.json and target/bench/latest.json.
#
# Every service it starts is stopped again, and the rows it wrote are deleted (BENCH_KEEP_DATA=1
# keeps them). Settings (environment):
#   BENCH_SECONDS=10          seconds per measured step (each step of each ramp, pgbench, ...)
#   BENCH_WARMUP_SECONDS=5    warm-up per kind of request before the measured steps
#   BENCH_CONCURRENCY="4 8 16 32 64"   the ramp; it stops when a step gains less than
#   BENCH_STOP_GAIN=0.05      ... this fraction over the best step before it
#   BENCH_PGBENCH_SECONDS     pgbench -T of each of its three runs (default BENCH_SECONDS)
#   BENCH_REDIS_REQUESTS=300000   redis-benchmark -n
#   BENCH_GRANTS              grant messages per Kafka variant (default: about BENCH_SECONDS of the
#                             pipeline's work, and as many for the baseline)
#   BENCH_LATENCY_RATE        callbacks/s of the latency phase (default: half the first-delivery peak)
#   BENCH_BUILD=1             0 reuses target/quarkus-app as it is
#   BENCH_APP                 benchmark this quarkus-app directory instead (no build; one built with
#                             -Pbench, or the bare endpoint and the Kafka baseline are missing)
#   BENCH_TEST_WAIT=900       seconds to wait for a running test run or build before building
#   BENCH_SERVICE_OPTS        JVM options of the service (default: none, as ./idem run)
#   BENCH_KEEP_DATA=0         1 keeps the benchmark's orders, coupons and dedup records
#   BENCH_PROFILE=0           1 samples the service's CPU during the HTTP part with async-profiler
#                             (its jar from Maven Central, once, into .idem/); the table then gives
#                             the CPU per request of every step, target/bench/<run>/profile/ its
#                             stacks (collapsed, for flame graphs). Costs the service a few per cent
#   BENCH_PARTS="limits http native ha tracing kafka peers"   the parts to run: the machine's limits
#                             (pgbench, redis-benchmark), the HTTP ramps, the native executable's
#                             start-up, memory and HTTP ramps beside the jar's (when there is one), the
#                             first-delivery ramp on Postgres with failover (./idem services
#                             postgres-ha) with a synchronous standby and without, the price of
#                             tracing, the Kafka grants and latencies, the comparison services; a
#                             ratio whose two sides did not both run is n/a
#   BENCH_TRACING_CONCURRENCY=32   part tracing's one concurrency, the same for its three configurations
#   BENCH_TRACING_ROUNDS=2    its rounds of the three, every other one in reverse order (off, all,
#                             1 %, then 1 %, all, off: a drifting machine weighs on the three alike)
#   BENCH_ZIPKIN              the Zipkin server part tracing sends spans to, as it runs (default: the
#                             one of ./idem services tracing, http://127.0.0.1:9411, started if missing)
#   BENCH_NATIVE              the native executable of part native (default: target/*-runner);
#                             one of the benchmark's build, with the bare endpoint:
#                             ./mvnw -Pbench -Dnative -DskipTests package, target/bench-service/*-runner
#   BENCH_QUICK=1             a smoke run: unless they are set, BENCH_SECONDS=3, BENCH_WARMUP_SECONDS=2
#                             and the comparison's warm-ups 6 s and 3 s (the figures then mean nothing)
#   BENCH_KAFKA_WARMUP=20000, BENCH_DRAIN_TIMEOUT=180, BENCH_GRANT_TIMEOUT=240, BENCH_COUPON_WAIT=120
#                             grants before each Kafka measurement, and the bounds (seconds) of the
#                             waits for the consumer group, for N grants and for the latency coupons
#
# Comparison services (part "peers"): other implementations of the same HTTP contract, driven by
# the same load generator in the same run, one at a time (a service the bench does not start
# stays up, idle, while the others are measured):
#   BENCH_PEERS               name=[kinds@]url,... for example
#                               blocking=callbacks@http://127.0.0.1:18090,guarded=keys@http://127.0.0.1:18095
#                             kinds: callbacks (first-delivery signed callbacks, then duplicates),
#                             keys (Idempotency-Key first executions, then replays) or callbacks+keys.
#                             Without kinds the bench asks the service: an unsigned callback answered
#                             401 → callbacks; one key sent twice answered 201, then 201 with
#                             Idempotent-Replayed: true and the same order → keys (the probe's order
#                             stays in its database)
#   BENCH_PEER_START_<name>   the command (bash -c) that starts that service. The bench then makes a
#                             fresh database for it and exports BENCH_PEER_PORT (the URL's port, which
#                             must be free), BENCH_PEER_DB, BENCH_PEER_DB_USER, BENCH_PEER_DB_PASSWORD,
#                             BENCH_PEER_REDIS_DB (the bench's own Redis database, flushed before each
#                             service) and BENCH_SECRET (the callbacks' signing secret); it starts the
#                             command in a process group of its own, waits until the URL answers HTTP
#                             (any status, 120 s at most), measures, and stops the group. Without it
#                             the service is measured as it runs, and the output says that its
#                             database is not fresh. For example (in single quotes: the variables are
#                             the bench's, expanded when it runs the command)
#                               BENCH_PEER_START_blocking='HTTP_PORT=$BENCH_PEER_PORT
#                                 DB_URL=jdbc:postgresql://127.0.0.1:5432/$BENCH_PEER_DB DB_USER=$BENCH_PEER_DB_USER
#                                 DB_PASSWORD=$BENCH_PEER_DB_PASSWORD REDIS_DATABASE=$BENCH_PEER_REDIS_DB
#                                 CALLBACK_SECRET=$BENCH_SECRET exec java -jar /path/to/the-service.jar'
#   BENCH_PEER_SECRET_<name>  the callbacks' secret of a service measured as it runs (default: the
#                             bench's own, bench-secret)
#   BENCH_PEER_DB_OWNER=app, BENCH_PEER_DB_PASSWORD=app   the owner of the fresh databases (the role
#                             must exist); the load generator logs in as it to ANALYZE after a warm-up
#   BENCH_PG_ADMIN=postgres   the superuser that creates and drops those databases: the postgres OS
#                             user over the local socket, else this role over TCP where it logs in
#                             without a prompt (trust, PGPASSWORD)
#   BENCH_PEER_CONCURRENCY="8 32 128"   the fixed concurrencies: one step of BENCH_SECONDS at each
#   BENCH_PEER_WARMUP_CALLBACKS=120, BENCH_PEER_WARMUP_KEYS=30   seconds of warm-up of every service
#                             before its callbacks and before its Idempotency-Key steps (not counted)
#   BENCH_LOAD_LOOPS=1, BENCH_LOAD_MAX_LOOPS=4   the load generator's event loops in the comparison:
#                             a step in which one of its threads took over 0.85 core runs again with
#                             twice the loops (up to the max), the faster try is kept, and the output
#                             names every such step
# idem runs after them, as service A runs (outbox relay off), on a fresh database of its own that
# its Flyway migrates, measured on every kind a comparison service was measured on. The fresh
# databases are dropped at the end unless BENCH_KEEP_DATA=1.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

LOG_NAME="idem bench"
# shellcheck source=scripts/lib/base.sh
source "$ROOT/scripts/lib/base.sh"
# shellcheck source=scripts/lib/postgres.sh
source "$ROOT/scripts/lib/postgres.sh"
HOST=127.0.0.1
CLUSTER_STATE="${IDEM_CLUSTER_STATE:-$HOME/.cache/idem}"
# shellcheck source=scripts/lib/postgres-ha.sh
source "$ROOT/scripts/lib/postgres-ha.sh"
PG_PORT=5432
DB_NAME=idem
DB_USER=idem
DB_PASSWORD=idem
REDIS_PORT=6379
REDIS_DB=6
SECRET=bench-secret
ADMIN_TOKEN=bench-admin

if [[ ${BENCH_QUICK:-0} == 1 ]]; then
  : "${BENCH_SECONDS:=3}" "${BENCH_WARMUP_SECONDS:=2}" "${BENCH_PEER_WARMUP_CALLBACKS:=6}" "${BENCH_PEER_WARMUP_KEYS:=3}"
fi
export BENCH_SECONDS="${BENCH_SECONDS:-10}"
export BENCH_WARMUP_SECONDS="${BENCH_WARMUP_SECONDS:-5}"
export BENCH_CONCURRENCY="${BENCH_CONCURRENCY:-4 8 16 32 64}"
export BENCH_STOP_GAIN="${BENCH_STOP_GAIN:-0.05}"
export BENCH_SECRET="$SECRET"
BENCH_CLK_TCK="$(getconf CLK_TCK 2>/dev/null || echo 100)"
export BENCH_CLK_TCK
BENCH_PGBENCH_SECONDS="${BENCH_PGBENCH_SECONDS:-$BENCH_SECONDS}"
BENCH_REDIS_REQUESTS="${BENCH_REDIS_REQUESTS:-300000}"
BENCH_APP="${BENCH_APP:-}"
if [[ -n $BENCH_APP ]]; then BENCH_BUILD=0; fi
BENCH_BUILD="${BENCH_BUILD:-1}"
BENCH_KEEP_DATA="${BENCH_KEEP_DATA:-0}"
BENCH_SERVICE_OPTS="${BENCH_SERVICE_OPTS:-}"
BENCH_PROFILE="${BENCH_PROFILE:-0}"
PROFILER_VERSION=4.1
PROFILER_INTERVAL_MS=1
BENCH_REDIS_POOL="${BENCH_REDIS_POOL:-64}"
BENCH_TEST_WAIT="${BENCH_TEST_WAIT:-900}"
BENCH_PARTS="${BENCH_PARTS:-limits http native ha tracing kafka peers}"
BENCH_TRACING_CONCURRENCY="${BENCH_TRACING_CONCURRENCY:-32}"
BENCH_TRACING_ROUNDS="${BENCH_TRACING_ROUNDS:-2}"
ZIPKIN="${BENCH_ZIPKIN:-http://$HOST:9411}"
BENCH_PEERS="${BENCH_PEERS:-}"
BENCH_PEER_DB_OWNER="${BENCH_PEER_DB_OWNER:-app}"
BENCH_PEER_DB_PASSWORD="${BENCH_PEER_DB_PASSWORD:-app}"
PG_SUPERUSER="${BENCH_PG_ADMIN:-postgres}"
export BENCH_PEER_CONCURRENCY="${BENCH_PEER_CONCURRENCY:-8 32 128}"
export BENCH_PEER_WARMUP_CALLBACKS="${BENCH_PEER_WARMUP_CALLBACKS:-120}"
export BENCH_PEER_WARMUP_KEYS="${BENCH_PEER_WARMUP_KEYS:-30}"
export BENCH_LOAD_LOOPS="${BENCH_LOAD_LOOPS:-1}"
export BENCH_LOAD_MAX_LOOPS="${BENCH_LOAD_MAX_LOOPS:-4}"

RUN="$(date -u +%Y%m%d%H%M%S)"
BENCH_DIR="$ROOT/target/bench"
OUT="$BENCH_DIR/$RUN"
APP="$OUT/app"
BENCH_JAR="$ROOT/bench/target/idem-bench.jar"
STARTED_AT="$(date +%s)"

SERVICE_PID=""
NATIVE_EXE=""
PORT=""
FAILED=()
BUSY=()
declare -A STARTUP=()

psql_idem() {
  PGPASSWORD="$DB_PASSWORD" psql -X -q -A -t -v ON_ERROR_STOP=1 -h "$HOST" -p "$PG_PORT" -U "$DB_USER" -d "$DB_NAME" "$@"
}


tests_running() { pgrep -f surefire >/dev/null 2>&1; }

# True while a Maven build works in this repository.
maven_here() {
  local pid
  for pid in $(pgrep -f plexus-classworlds 2>/dev/null); do
    [[ "$(readlink "/proc/$pid/cwd" 2>/dev/null)" == "$ROOT" ]] && return 0
  done
  return 1
}

# True while a test run uses the machine or a Maven build works in this repository.
build_busy() { tests_running || maven_here; }

# Notes that a test run shares the machine (the figures are then noisy).
note_busy() {
  if tests_running; then
    log "warning: a test run (surefire) shares the machine during $1; figures will be noisy"
    BUSY+=("$1")
  fi
}

free_port() {
  local port i
  for ((i = 0; i < 100; i++)); do
    port=$((20000 + RANDOM % 20000))
    port_open "$port" || { printf '%s\n' "$port"; return 0; }
  done
  die "no free port found"
}

# wait_while <what> <command...>: while the command succeeds, BENCH_TEST_WAIT seconds at most,
# saying so every minute
wait_while() {
  local what=$1 waited=0
  shift
  while "$@" && ((waited < BENCH_TEST_WAIT)); do
    ((waited % 60 == 0)) && log "$what; waiting (${waited}s)"
    sleep 5
    waited=$((waited + 5))
  done
}

# start_service <name> [--native] [VAR=value...]: starts the copied service jar (or, with
# --native, the copied native executable), waits for readiness and records the start-up time
# (process start → /q/health/ready answering 200, polled every 10 ms). Fails (and leaves nothing
# running) when the service does not get ready within 120 s.
start_service() {
  local name=$1 log_file t0 t1 i quarkus ready=0 launch
  shift
  # shellcheck disable=SC2206
  launch=("$JAVA" $BENCH_SERVICE_OPTS -jar "$APP/quarkus-run.jar")
  if [[ ${1:-} == --native ]]; then
    launch=("$NATIVE_EXE" "${NATIVE_OPTS[@]}")
    shift
  fi
  PORT="$(free_port)"
  log_file="$OUT/service-$name.log"
  log "service $name: starting on $HOST:$PORT${*:+ with $*} (log ${log_file#"$ROOT/"})"
  t0="$(date +%s%N)"
  # shellcheck disable=SC2086
  env -u QUARKUS_PROFILE \
    QUARKUS_HTTP_PORT="$PORT" \
    IDEM_CALLBACK_SECRET="$SECRET" \
    IDEM_ADMIN_TOKEN="$ADMIN_TOKEN" \
    QUARKUS_REDIS_HOSTS="redis://$HOST:$REDIS_PORT/$REDIS_DB" \
    QUARKUS_REDIS_MAX_POOL_SIZE="$BENCH_REDIS_POOL" \
    QUARKUS_REDIS_MAX_POOL_WAITING=8192 \
    "$@" \
    "${launch[@]}" </dev/null >"$log_file" 2>&1 8>&- &
  SERVICE_PID=$!
  for ((i = 0; i < 12000; i++)); do
    if ! kill -0 "$SERVICE_PID" 2>/dev/null; then
      break
    fi
    if curl -fsS -o /dev/null --max-time 2 "http://$HOST:$PORT/q/health/ready" 2>/dev/null; then
      ready=1
      break
    fi
    sleep 0.01
  done
  t1="$(date +%s%N)"
  if ((!ready)); then
    grep -m 5 -E 'ERROR|Caused by|Detected' "$log_file" >&2 || tail -n 20 "$log_file" >&2 || true
    log "service $name did not get ready; see ${log_file#"$ROOT/"}"
    stop_service
    FAILED+=("service $name start")
    return 1
  fi
  quarkus="$(grep -o 'started in [0-9.]*s' "$log_file" | head -n 1 | tr -dc '0-9.')"
  STARTUP[$name]="{\"readyMs\": $(((t1 - t0) / 1000000)), \"quarkusSeconds\": ${quarkus:-null}, \"pid\": $SERVICE_PID}"
  log "service $name: ready after $(((t1 - t0) / 1000000)) ms (pid $SERVICE_PID)"
}

# idle_rss <name>: the running service's VmRSS after 10 s without requests, into STARTUP[name]
idle_rss() {
  local rss
  sleep 10
  rss="$(awk '/^VmRSS:/ {print $2}' "/proc/$SERVICE_PID/status" 2>/dev/null || true)"
  [[ -n $rss ]] || return 0
  STARTUP[$1]="$(jq -c --argjson kb "$rss" '.rssIdleKb = $kb' <<<"${STARTUP[$1]}")"
  log "service $1: RSS $((rss / 1024)) MB idle"
}

# stop_child <pid, or -pgid for its process group> <label>: SIGTERM, SIGKILL after 30 s, reaped
stop_child() {
  stop_pid "$1" 30 "$2"
  wait "${1#-}" 2>/dev/null || true
}

stop_service() {
  local pid=$SERVICE_PID
  [[ -n $pid ]] || return 0
  SERVICE_PID=""
  stop_child "$pid" service
}

# bench_java [VAR=value...] <command> [--option value]...: the load generator, with those settings
bench_java() {
  local settings=()
  while [[ ${1:-} =~ ^[A-Z_]+= ]]; do settings+=("$1"); shift; done
  env "${settings[@]}" "$JAVA" -Xms256m -Xmx1g -XX:+UseSerialGC -jar "$BENCH_JAR" "$@"
}

# phase <name> <command...>: runs one part; a failed part is reported and the run goes on.
phase() {
  local name=$1
  shift
  note_busy "$name"
  if ! "$@"; then
    log "phase '$name' failed"
    FAILED+=("$name")
    return 1
  fi
}

# part <name>: whether BENCH_PARTS asks for it
part() {
  [[ " $BENCH_PARTS " == *" $1 "* ]]
}

# pgbench copies the service's tables: a database the service never met has none yet, so the
# service starts once and its Flyway creates them.
migrate_once() {
  [[ -z "$(psql_idem -c "SELECT to_regclass('public.dedup_record')")" ]] || return 0
  log "the database has no idem tables yet: starting the service once to migrate it"
  start_service migrate || return 1
  stop_service
  unset 'STARTUP[migrate]'
}

# Every run deletes its rows at the end, and tests leave theirs: where the server runs without
# autovacuum the dead rows pile up in the service's tables, while pgbench's scratch copies start
# empty. A plain VACUUM first (it takes no lock that stops a running service) keeps the two sides
# comparable.
vacuum_tables() {
  local t0=$SECONDS autovacuum
  autovacuum="$(psql_idem -c "SHOW autovacuum" 2>/dev/null || echo unknown)"
  if psql_idem -c "VACUUM (ANALYZE) dedup_record, orders, outbox_event, coupons, payment_anomaly" >/dev/null; then
    log "vacuumed the service's tables in $((SECONDS - t0)) s (autovacuum: $autovacuum)"
  else
    log "warning: VACUUM of the service's tables failed; figures may carry earlier runs' dead rows"
  fi
}

PGBENCH_SCHEMA=""
# scratch_tables <table>...: empty copies of the service's tables in the schema $PGBENCH_SCHEMA
# (same columns, constraints and indexes), which drop_scratch drops
scratch_tables() {
  local tables
  tables="$(printf "'%s'," "$@")"
  psql_idem >/dev/null <<SQL
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS $PGBENCH_SCHEMA CASCADE;
CREATE SCHEMA $PGBENCH_SCHEMA;
-- LIKE copies no storage parameters: the copies get the originals' (fillfactor), so that pgbench
-- measures the same tables the service writes
DO \$\$
DECLARE t text; o text;
BEGIN
  FOREACH t IN ARRAY ARRAY[${tables%,}] LOOP
    EXECUTE format('CREATE TABLE $PGBENCH_SCHEMA.%I (LIKE public.%I INCLUDING ALL)', t, t);
    SELECT array_to_string(reloptions, ', ') INTO o FROM pg_class WHERE oid = ('public.' || t)::regclass;
    IF o IS NOT NULL THEN
      EXECUTE format('ALTER TABLE $PGBENCH_SCHEMA.%I SET (%s)', t, o);
    END IF;
  END LOOP;
END
\$\$;
SQL
}

drop_scratch() {
  if [[ -n $PGBENCH_SCHEMA ]]; then
    psql_idem -c "DROP SCHEMA IF EXISTS $PGBENCH_SCHEMA CASCADE" >/dev/null 2>&1 || true
    PGBENCH_SCHEMA=""
  fi
}

# ------------------------------------------------------------------------------ bench data

# The service's answers stay untouched by the benchmark except the rows it wrote itself.
DATA_WRITTEN=0
cleanup_data() {
  ((DATA_WRITTEN)) || return 0
  DATA_WRITTEN=0
  if [[ $BENCH_KEEP_DATA == 1 ]]; then
    log "keeping the benchmark's rows (user ids bench-$RUN*)"
    return 0
  fi
  log "deleting the benchmark's rows (user ids bench-$RUN*) and Redis database $REDIS_DB"
  psql_idem <<SQL || log "warning: could not delete every benchmark row"
BEGIN;
CREATE TEMP TABLE bench_orders ON COMMIT DROP AS
  SELECT id FROM orders WHERE user_id LIKE 'bench-$RUN%';
DELETE FROM coupons WHERE user_id LIKE 'bench-$RUN%';
DELETE FROM outbox_event WHERE topic = 'coupon-grants' AND event_key IN (SELECT 'paid:' || id FROM bench_orders);
-- two statements, not one with "key LIKE … OR key IN (…)": past work_mem, Postgres checks such an
-- IN by scanning the whole list again for every row (150,000 orders took minutes)
DELETE FROM dedup_record WHERE scope = 'coupon-grant' AND key LIKE 'bench-$RUN%';
DELETE FROM dedup_record d USING bench_orders b WHERE d.scope = 'coupon-grant' AND d.key = 'paid:' || b.id;
DELETE FROM dedup_record WHERE scope IN ('payment-callback', 'order-submit') AND key LIKE 'bench-$RUN%';
DELETE FROM payment_anomaly WHERE trade_no LIKE 'bench-$RUN%';
DELETE FROM orders WHERE id IN (SELECT id FROM bench_orders);
COMMIT;
SQL
  flush_bench_redis
}

# ------------------------------------------------------------------------------ limits

# pgbench running what the service runs for one first-delivery callback alone in its transaction
# (OrderRepository.PAY, OutboxRepository.APPEND, DedupStore.RECORD: the record written once,
# DONE, as the last statement), on
# scratch copies of the three tables (same columns, constraints and indexes), each transaction
# paying its own fresh WAIT_PAY order.
PGBENCH_TPS=""
PGBENCH_LAT=""
PGBENCH_TX=""
# pgbench_once <script> <clients> <first n - 1> <output file>
pgbench_once() {
  local script=$1 clients=$2 start=$3 out=$4
  PGPASSWORD="$DB_PASSWORD" pgbench -n -h "$HOST" -p "$PG_PORT" -U "$DB_USER" -c "$clients" -j 2 \
    -M prepared -T "$BENCH_PGBENCH_SECONDS" -P 5 -D n="$start" -f "$script" "$DB_NAME" >"$out"
  PGBENCH_TPS="$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$out" | head -n 1)"
  PGBENCH_LAT="$(sed -n 's/^latency average = \([0-9.]*\) ms.*/\1/p' "$out" | head -n 1)"
  PGBENCH_TX="$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$out" | head -n 1)"
  [[ -n $PGBENCH_TPS ]] || {
    cat "$out" >&2
    return 1
  }
}

pgbench_limit() {
  local clients=8 seconds=$BENCH_PGBENCH_SECONDS per_run per_client campaign="" tps lat transactions paid
  local i runs=() median
  per_run=$((seconds * 1500 + 1000))
  # three measured runs, each on orders of its own
  per_client=$((3 * per_run))
  PGBENCH_SCHEMA=idem_bench_pgbench
  log "pgbench: scratch schema $PGBENCH_SCHEMA with $((clients * per_client)) WAIT_PAY orders"
  scratch_tables dedup_record orders outbox_event || return 1
  psql_idem >/dev/null <<SQL || return 1
INSERT INTO $PGBENCH_SCHEMA.orders (id, user_id, amount_cents, currency, status, created_at)
  SELECT 'o-' || c || '-' || n, 'u-' || c, 1999, 'CNY', 'WAIT_PAY', now()
  FROM generate_series(0, $((clients - 1))) c, generate_series(1, $per_client) n;
ANALYZE $PGBENCH_SCHEMA.orders;
SQL
  # The PAID transition also records the campaign the order earned, where the schema has it.
  if [[ -n "$(psql_idem -c "SELECT 1 FROM information_schema.columns
      WHERE table_schema = 'public' AND table_name = 'orders' AND column_name = 'campaign'")" ]]; then
    campaign=", campaign = 'PAY-5OFF'"
  fi
  # :n counts this client's transactions (pgbench variables live as long as the client), so
  # every transaction is a first delivery for an order of its own. pgbench takes ":name" as a
  # variable even inside a string literal, hence the ':' || pieces.
  cat >"$OUT/pgbench-callback.sql" <<SQL
\\set n :n + 1
BEGIN;
UPDATE $PGBENCH_SCHEMA.orders SET status = 'PAID', trade_no = 't-' || :client_id || '-' || :n, paid_at = now()$campaign
  WHERE id = 'o-' || :client_id || '-' || :n AND status IN ('WAIT_PAY') AND amount_cents = 1999
    AND NOT EXISTS (SELECT 1 FROM $PGBENCH_SCHEMA.orders other WHERE other.trade_no = 't-' || :client_id || '-' || :n)
  RETURNING user_id;
INSERT INTO $PGBENCH_SCHEMA.outbox_event (topic, event_key, payload, created_at)
  VALUES ('coupon-grants', 'paid' || ':' || 'o-' || :client_id || '-' || :n,
          json_build_object('bizKey', 'paid' || ':' || 'o-' || :client_id || '-' || :n, 'userId', 'u-' || :client_id,
                            'templateId', 'PAY-5OFF', 'orderId', 'o-' || :client_id || '-' || :n)::jsonb,
          now())
  ON CONFLICT (topic, event_key) DO NOTHING;
INSERT INTO $PGBENCH_SCHEMA.dedup_record (scope, key, fingerprint, status, result, created_at, updated_at, expires_at)
  VALUES ('payment-callback', 't-' || :client_id || '-' || :n || ':' || 'SUCCESS',
          '9f2c1be04b3a5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f',
          'DONE', '{"code":"SUCCESS"}'::text::jsonb, now(), now(), now() + interval '7 days')
  ON CONFLICT DO NOTHING
  RETURNING scope, key;
END;
SQL
  log "pgbench: -c $clients -j 2 -M prepared -T $seconds, the callback's SQL"
  # One 10 s run of pgbench moved by ±12 % between runs of the same day: the limit is the
  # median of three, and the run it came from gives its latency.
  for i in 1 2 3; do
    pgbench_once "$OUT/pgbench-callback.sql" $clients $(((i - 1) * per_run)) "$OUT/pgbench-$i.out" || return 1
    runs+=("$PGBENCH_TPS $PGBENCH_LAT $PGBENCH_TX")
  done
  median="$(printf '%s\n' "${runs[@]}" | sort -g -k1,1 | sed -n 2p)"
  read -r tps lat transactions <<<"$median"
  paid="$(psql_idem -c "SELECT count(*) FROM $PGBENCH_SCHEMA.orders WHERE status = 'PAID'")"
  log "pgbench: $tps TPS, the median of $(printf '%s\n' "${runs[@]}" | cut -d' ' -f1 | paste -sd' ') ($paid orders paid, latency avg ${lat:-?} ms)"

  drop_scratch
  printf '{"tps": %s, "tpsRuns": [%s], "latencyAvgMs": %s, "clients": %s, "threads": 2, "seconds": %s, "transactions": %s, "paidOrders": %s, "synchronousCommit": "%s"}\n' \
    "$tps" "$(printf '%s\n' "${runs[@]}" | cut -d' ' -f1 | paste -sd,)" "${lat:-null}" "$clients" "$seconds" \
    "${transactions:-null}" "$paid" \
    "$(psql_idem -c 'SHOW synchronous_commit')" >"$OUT/pgbench.json"
}

# grants_script <with|without> <poll>: one poll of grants as the consumer sends it, on keys of the
# variant's own, so that neither variant meets the other's coupons
grants_script() {
  local variant=$1 poll=$2 prefix keys inserts="" j
  local fingerprint=9f2c1be04b3a5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f
  # pgbench takes ":name" as a variable even inside a string literal
  prefix="'bench-$RUN-$variant-' || :client_id || '-' || :n || '-"
  for ((j = 1; j <= poll; j++)); do
    inserts+="INSERT INTO $PGBENCH_SCHEMA.coupons (id, user_id, template_id, source_key, order_id, granted_at)
  VALUES (gen_random_uuid()::text, 'bench-$RUN-$variant-' || :client_id, 'BENCH', $prefix$j', NULL, now())
  ON CONFLICT (source_key) DO NOTHING
  RETURNING id;
"
  done
  printf '\\set n :n + 1\nBEGIN;\n\\startpipeline\n'
  if [[ $variant == without ]]; then
    printf '%s\\endpipeline\nCOMMIT;\n' "$inserts"
    return
  fi
  # pgbench binds at most 255 variables per statement: the batch statements build their key
  # array themselves, where the service sends it as one parameter
  keys="ARRAY(SELECT $prefix' || j FROM generate_series(1, $poll) j)"
  cat <<SQL
$inserts
INSERT INTO $PGBENCH_SCHEMA.dedup_record (scope, key, fingerprint, status, result, created_at, updated_at, expires_at)
  SELECT r.scope, r.key, r.fingerprint, 'DONE', r.result::jsonb, now(), now(), r.expires_at
  FROM unnest(array_fill('coupon-grant'::text, ARRAY[$poll]), $keys,
              array_fill('$fingerprint'::text, ARRAY[$poll]),
              array_fill('{"couponId": "4e1f0c7a-7d55-4d2e-9a0b-2b8f1c7d9e11"}'::text, ARRAY[$poll]),
              array_fill(now() + interval '30 days', ARRAY[$poll]))
       AS r(scope, key, fingerprint, result, expires_at)
  ORDER BY r.key, r.scope
  ON CONFLICT DO NOTHING
  RETURNING scope, key;
\\endpipeline
COMMIT;
SQL
}

# pgbench running what the coupon consumer runs for one poll of grants, with the pipeline and
# without: the database's own part of the Kafka ratio, on scratch copies of dedup_record and
# coupons. Without: the poll's inserts (CouponRepository.GRANT) pipelined in one transaction, as
# the consumer does with the pipeline off. With: the same followed by the poll's records, written
# once, DONE (DedupStore.RECORD_ALL). A poll is max.poll.records (500), the clients are the
# channel's concurrency (4); after a first round that fills the tables, three runs of each,
# alternating, and the median of each.
pgbench_grants_limit() {
  local clients=4 poll=500 per_run=$((BENCH_PGBENCH_SECONDS * 1000)) i variant
  local -A rates=() transactions=()
  PGBENCH_SCHEMA=idem_bench_grants
  log "pgbench: scratch schema $PGBENCH_SCHEMA, a poll of $poll grants per transaction, with and without the dedup SQL"
  scratch_tables dedup_record coupons || return 1
  for variant in without with; do
    grants_script $variant $poll >"$OUT/pgbench-grants-$variant.sql"
  done
  # Run 0 fills the tables and is not counted: then ANALYZE, so that the batch statements are
  # planned for tables of some size, as the service's are (an UPDATE … FROM unnest planned on an
  # empty table scans it whole)
  for i in 0 1 2 3; do
    for variant in without with; do
      pgbench_once "$OUT/pgbench-grants-$variant.sql" $clients $((i * per_run)) \
        "$OUT/pgbench-grants-$variant-$i.out" || return 1
      transactions[$variant]=$((${transactions[$variant]:-0} + PGBENCH_TX))
      ((i > 0)) && rates[$variant]+=" $(awk -v tps="$PGBENCH_TPS" -v poll=$poll 'BEGIN { printf "%.0f", tps * poll }')"
    done
    ((i > 0)) || psql_idem -c "ANALYZE $PGBENCH_SCHEMA.dedup_record, $PGBENCH_SCHEMA.coupons" || return 1
  done
  # every grant of every run was a new one: as many coupons as grants, and a DONE record for each with the SQL
  local coupons done_records
  coupons="$(psql_idem -c "SELECT count(*) FROM $PGBENCH_SCHEMA.coupons")"
  done_records="$(psql_idem -c "SELECT count(*) FROM $PGBENCH_SCHEMA.dedup_record WHERE status = 'DONE'")"
  if ((coupons != (transactions[without] + transactions[with]) * poll || done_records != transactions[with] * poll)); then
    log "pgbench grants: $coupons coupons and $done_records DONE records, expected $(((transactions[without] + transactions[with]) * poll)) and $((transactions[with] * poll))"
    return 1
  fi
  drop_scratch
  local without with
  without="$(tr ' ' '\n' <<<"${rates[without]}" | sed '/^$/d' | sort -g | sed -n 2p)"
  with="$(tr ' ' '\n' <<<"${rates[with]}" | sed '/^$/d' | sort -g | sed -n 2p)"
  log "pgbench grants: $with/s with the dedup SQL, $without/s without (medians of${rates[with]} and${rates[without]})"
  printf '{"poll": %s, "clients": %s, "threads": 2, "seconds": %s, "withPerSecond": %s, "withoutPerSecond": %s, "withRuns": [%s], "withoutRuns": [%s], "coupons": %s}\n' \
    $poll $clients "$BENCH_PGBENCH_SECONDS" "$with" "$without" "$(tr ' ' ',' <<<"${rates[with]# }")" \
    "$(tr ' ' ',' <<<"${rates[without]# }")" "$coupons" >"$OUT/pgbench-grants.json"
}

redis_limit() {
  local clients=50 line rps p50 p99
  log "redis-benchmark: SET key:__rand_int__ v NX EX 60, $clients clients, $BENCH_REDIS_REQUESTS requests"
  line="$(redis-benchmark -h "$HOST" -p "$REDIS_PORT" --dbnum "$REDIS_DB" -c "$clients" -n "$BENCH_REDIS_REQUESTS" \
    -r 100000000 --csv SET 'key:__rand_int__' v NX EX 60 | tail -n 1)"
  rps="$(cut -d, -f2 <<<"$line" | tr -d '"')"
  p50="$(cut -d, -f5 <<<"$line" | tr -d '"')"
  p99="$(cut -d, -f7 <<<"$line" | tr -d '"')"
  [[ $rps =~ ^[0-9.]+$ ]] || {
    printf '%s\n' "$line" >&2
    return 1
  }
  printf '{"rps": %s, "p50Ms": %s, "p99Ms": %s, "clients": %s, "requests": %s}\n' \
    "$rps" "${p50:-null}" "${p99:-null}" "$clients" "$BENCH_REDIS_REQUESTS" >"$OUT/redis.json"
  log "redis-benchmark: $rps ops/s (p50 $p50 ms, p99 $p99 ms)"
}

# ------------------------------------------------------------------------------ phases

# profiler_lib: the path of async-profiler's agent for this machine, fetched once from Maven Central
profiler_lib() {
  local arch dir="$ROOT/.idem/async-profiler-$PROFILER_VERSION"
  case "$(uname -m)" in
    x86_64) arch=linux-x64 ;;
    aarch64) arch=linux-arm64 ;;
    *) log "async-profiler: no agent for $(uname -m)"; return 1 ;;
  esac
  if [[ ! -f $dir/$arch/libasyncProfiler.so ]]; then
    log "async-profiler: fetching tools.profiler:async-profiler:$PROFILER_VERSION"
    ./mvnw -B -q dependency:copy -Dartifact="tools.profiler:async-profiler:$PROFILER_VERSION" \
      -DoutputDirectory="$dir" >&2 || return 1
    (cd "$dir" && "${JAVA_HOME:+$JAVA_HOME/bin/}jar" xf "async-profiler-$PROFILER_VERSION.jar" \
      "$arch/libasyncProfiler.so") || return 1
  fi
  echo "$dir/$arch/libasyncProfiler.so"
}

http_part() {
  local lib="" profiler=()
  if [[ $BENCH_PROFILE == 1 ]]; then
    if lib="$(profiler_lib)"; then
      mkdir -p "$OUT/profile"
      # one file of collapsed stacks per second, so the samples can be cut by step afterwards;
      # DebugNonSafepoints places the samples on the right Java frames
      profiler=("JAVA_TOOL_OPTIONS=-XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints -agentpath:$lib=start,event=cpu,interval=${PROFILER_INTERVAL_MS}ms,loop=1s,collapsed,file=$OUT/profile/%t.collapsed")
    else
      lib=""
      FAILED+=("async-profiler")
    fi
  fi
  start_service A IDEM_OUTBOX_RELAY_ENABLED=false "${profiler[@]}" || return 0
  idle_rss A
  phase "HTTP ramps" bench_java http --port "$PORT" --pid "$SERVICE_PID" --run "$RUN" --out "$OUT/http.json" || true
  stop_service
  if [[ -n $lib ]]; then
    phase "profile" bench_java profile --dir "$OUT" --interval-ms "$PROFILER_INTERVAL_MS" || true
  fi
  set_grants_aside
}

# The relay was off: the paid orders' grant events stay unpublished. They are the benchmark's own
# and would flood the Kafka measurements, so they are set aside (and deleted at the end).
set_grants_aside() {
  psql_idem -c "UPDATE outbox_event SET published_at = now() WHERE published_at IS NULL AND topic = 'coupon-grants'
    AND event_key IN (SELECT 'paid:' || id FROM orders WHERE user_id LIKE 'bench-$RUN%')" >/dev/null ||
    log "warning: could not set the benchmark's outbox events aside"
}

# The native executable (BENCH_NATIVE, else target/*-runner when ./idem native built one) as
# service N, driven like A: its start-up, its memory idle and under load, and its HTTP ramps (with
# the bare endpoint when the executable has it). Skipped, with a line, when there is no executable.
native_part() {
  local source bare
  if ! source="$(native_executable "${BENCH_NATIVE:-}")"; then
    log "no native executable (./idem native builds target/*-runner; BENCH_NATIVE names another): the native part is skipped"
    return 0
  fi
  NATIVE_EXE="$OUT/native-runner"
  cp "$source" "$NATIVE_EXE"
  log "native executable: $source ($(du -m "$source" | cut -f1) MB, built $(date -u -r "$source" +%Y-%m-%dT%H:%M:%SZ))"
  start_service N --native IDEM_OUTBOX_RELAY_ENABLED=false || return 0
  idle_rss N
  # an executable of the benchmark's build has the bare endpoint: the stack's own native ÷ jar
  bare=false
  if curl -fsS -o /dev/null --max-time 2 "http://$HOST:$PORT/bench/redis-get" 2>/dev/null; then
    bare=true
  else
    log "the native executable has no bare endpoint (a production build); ./mvnw -Pbench -Dnative -DskipTests package builds one that has, target/bench-service/*-runner"
  fi
  phase "native HTTP ramps" bench_java http --port "$PORT" --pid "$SERVICE_PID" --run "$RUN-n" --bare "$bare" \
    --out "$OUT/native-http.json" || true
  stop_service
  set_grants_aside
}

# Postgres with failover (./idem services postgres-ha, started when missing): the first-delivery
# ramp through HAProxy's primary port with a synchronous standby, then with synchronous_mode off,
# each as service H on a fresh database of the cluster; beside part http's single node, what
# synchronous replication costs. synchronous_mode is on again afterwards.
ha_part() {
  local mode db on
  bash "$ROOT/scripts/services.sh" postgres-ha 8>&- || return 1
  for mode in sync async; do
    on=false
    [[ $mode == sync ]] && on=true
    pg_ha_synchronous $on || return 1
    db="bench_${RUN}_ha_$mode"
    pg_ha_psql -d postgres -v ON_ERROR_STOP=1 -c "CREATE DATABASE $db OWNER $DB_USER" >/dev/null || return 1
    flush_bench_redis
    start_service "H-$mode" IDEM_OUTBOX_RELAY_ENABLED=false \
      QUARKUS_DATASOURCE_REACTIVE_URL="postgresql://$HOST:$PG_HA_PRIMARY_PORT/$db" || continue
    phase "HA ($mode) first deliveries" bench_java BENCH_JDBC_URL="jdbc:postgresql://$HOST:$PG_HA_PRIMARY_PORT/$db" \
      http --port "$PORT" --pid "$SERVICE_PID" --run "$RUN-ha-$mode" --only first --out "$OUT/ha-$mode-http.json" || true
    stop_service
    pg_ha_psql -d postgres -c "DROP DATABASE $db WITH (FORCE)" >/dev/null || log "could not drop $db"
  done
  pg_ha_synchronous true
}

# zipkin_spans: how many spans the Zipkin server has received (from any client), or null
zipkin_spans() {
  curl -fsS -m 3 "$ZIPKIN/metrics" 2>/dev/null | jq '."counter.zipkin_collector.spans.http" // null' || echo null
}

# The price of traces: service T started fresh for each configuration (tracing off, as every other
# service here; spans of every delivery to Zipkin; of 1 %), warmed up as A, then first deliveries at
# one fixed concurrency, with RSS. Zipkin counts the spans that arrived during each service's run,
# warm-up and the flush at its stop included.
tracing_part() {
  local round config spans configs=(off all 1pct)
  local -A ratio=([off]="" [all]=1.0 [1pct]=0.01)
  [[ -n ${BENCH_ZIPKIN:-} ]] || bash "$ROOT/scripts/services.sh" tracing 8>&- || return 1
  curl -fsS -m 10 -o /dev/null "$ZIPKIN/health" || { log "no healthy Zipkin at $ZIPKIN" && return 1; }
  for ((round = 1; round <= BENCH_TRACING_ROUNDS; round++)); do
    for config in "${configs[@]}"; do
      flush_bench_redis
      spans="$(zipkin_spans)"
      # shellcheck disable=SC2086 # two words or none, without blanks or globs in them
      start_service "T$round-$config" IDEM_OUTBOX_RELAY_ENABLED=false ${ratio[$config]:+IDEM_TRACING_ZIPKIN_ENDPOINT=$ZIPKIN/api/v2/spans \
        QUARKUS_OTEL_TRACES_SAMPLER_ARG=${ratio[$config]}} || continue
      phase "tracing $config, round $round" bench_java BENCH_CONCURRENCY="$BENCH_TRACING_CONCURRENCY" http \
        --port "$PORT" --pid "$SERVICE_PID" --run "$RUN-t$round-$config" --only first --out "$OUT/tracing.out" || true
      stop_service
      [[ -f $OUT/tracing.out ]] || continue
      jq -c --arg config "$config" --argjson round $round --argjson before "$spans" --argjson after "$(zipkin_spans)" \
        '{config: $config, round: $round, zipkinSpans: (if $before and $after then $after - $before else null end)} + .' \
        "$OUT/tracing.out" >>"$OUT/tracing.jsonl"
      rm -f "$OUT/tracing.out"
    done
    configs=("${configs[2]}" "${configs[1]}" "${configs[0]}")
  done
  set_grants_aside
  jq -s --argjson c "$BENCH_TRACING_CONCURRENCY" '{concurrency: $c, runs: .}' "$OUT/tracing.jsonl" >"$OUT/tracing.json"
}

# first_peak_over <n>: part http's first-delivery peak ÷ n (callbacks/s); nothing without one
first_peak_over() {
  [[ ! -f $OUT/http.json ]] || jq -r "(.callbacksFirst.peak.perSecond // 0) / $1 | select(. > 0)" "$OUT/http.json"
}

kafka_part() {
  local rate grants
  if start_service B; then
    phase "Kafka grants, pipeline on" bench_java kafka --port "$PORT" --pid "$SERVICE_PID" --run "$RUN" \
      --variant pipeline --grants "${BENCH_GRANTS:-0}" --out "$OUT/kafka-pipeline.json" || true
    # first at a light pace (a tenth of the first-delivery capacity: the callbacks, not the
    # grants, bound the whole way), then at half of it. Each warms up first, at its own rate: the
    # first warms this service's callback path (the HTTP part warmed service A's), and each is a
    # new load generator process whose JIT would otherwise share the cores with the measurement.
    rate="$(first_peak_over 10)"
    if [[ -n $rate ]]; then
      phase "callback → coupon latency (light load)" bench_java latency --port "$PORT" \
        --pid "$SERVICE_PID" --run "$RUN" --name latl --rate "$rate" --why "a tenth of the first-delivery peak" \
        --warm-up true --out "$OUT/latency-light.json" || true
    fi
    rate="${BENCH_LATENCY_RATE:-$(first_peak_over 2)}"
    if [[ -n $rate && $rate != 0 ]]; then
      phase "callback → coupon latency" bench_java latency --port "$PORT" --pid "$SERVICE_PID" --run "$RUN" \
        --name lat --rate "$rate" --why "half the first-delivery peak" --warm-up true --out "$OUT/latency.json" || true
    else
      log "no first-delivery figure: the latency phase is skipped"
    fi
    stop_service
  fi
  # the baseline gets the very workload the pipeline had: as many grants, not as many as its own
  # (faster) warm-up would size
  grants="${BENCH_GRANTS:-}"
  if [[ -z $grants && -f $OUT/kafka-pipeline.json ]]; then
    grants="$(jq -r '.measured.messages // 0' "$OUT/kafka-pipeline.json")"
  fi
  if start_service C IDEM_BENCH_COUPONS_PIPELINE=false IDEM_OUTBOX_RELAY_ENABLED=false; then
    phase "Kafka grants, pipeline off" bench_java kafka --port "$PORT" --pid "$SERVICE_PID" --run "$RUN" \
      --variant bare --grants "${grants:-0}" --out "$OUT/kafka-bare.json" || true
    stop_service
  fi
}

# ------------------------------------------------------------------------------ comparison services

PEER_NAMES=()
PEER_KINDS=()
PEER_URLS=()
# read_peers: BENCH_PEERS into PEER_NAMES, PEER_KINDS (auto when not given) and PEER_URLS, checked
# before anything runs, so that a typo does not surface after the other parts' minutes
read_peers() {
  local spec specs=() name
  IFS=',' read -ra specs <<<"$BENCH_PEERS"
  for spec in "${specs[@]}"; do
    [[ $spec =~ ^([A-Za-z][A-Za-z0-9_]*)=((callbacks|keys|callbacks\+keys|keys\+callbacks)@)?(http://[^/]+)/?$ ]] ||
      die "BENCH_PEERS: cannot read '$spec' (name=[callbacks|keys|callbacks+keys@]http://host:port)"
    name=${BASH_REMATCH[1]}
    [[ $name != idem && " ${PEER_NAMES[*]} " != *" $name "* ]] || die "BENCH_PEERS: the name $name is taken"
    PEER_NAMES+=("$name")
    PEER_KINDS+=("${BASH_REMATCH[3]:-auto}")
    PEER_URLS+=("${BASH_REMATCH[4]}")
  done
}

url_authority() {
  local rest=${1#*://}
  printf '%s\n' "${rest%%/*}"
}

url_port() {
  local authority
  authority="$(url_authority "$1")"
  if [[ $authority == *:* ]]; then printf '%s\n' "${authority##*:}"; else echo 80; fi
}

# listener_pid <url>: the process listening on the URL's port when the URL is on this machine, so
# that its CPU counts as the service's; nothing otherwise
listener_pid() {
  case "$(url_authority "$1")" in
    127.0.0.1:* | localhost:*) ;;
    *) return 0 ;;
  esac
  ss -Hltnp "sport = :$(url_port "$1")" 2>/dev/null | grep -o 'pid=[0-9]*' | head -n 1 | cut -d= -f2 || true
}

flush_bench_redis() {
  redis-cli -h "$HOST" -p "$REDIS_PORT" -n "$REDIS_DB" flushdb >/dev/null 2>&1 || true
}

FRESH_DB=""
FRESH_DBS=()
# fresh_db <name> <owner>: creates the database bench_<run>_<name>, owned by <owner>, as FRESH_DB
fresh_db() {
  local role
  FRESH_DB="bench_${RUN}_${1,,}"
  role="$(pg_admin -c "SELECT 1 FROM pg_roles WHERE rolname = '$2'")" || return 1
  if [[ -z $role ]]; then
    log "the role $2 does not exist: create it (CREATE ROLE $2 LOGIN PASSWORD '…'), or set BENCH_PEER_DB_OWNER"
    return 1
  fi
  pg_admin -c "CREATE DATABASE $FRESH_DB OWNER $2" >/dev/null || return 1
  FRESH_DBS+=("$FRESH_DB")
  log "fresh database $FRESH_DB (owner $2)"
}

drop_fresh_dbs() {
  local db
  ((${#FRESH_DBS[@]})) || return 0
  if [[ $BENCH_KEEP_DATA == 1 ]]; then
    log "keeping the comparison's databases: ${FRESH_DBS[*]}"
  else
    log "dropping the comparison's databases: ${FRESH_DBS[*]}"
    for db in "${FRESH_DBS[@]}"; do
      pg_admin -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null || log "warning: could not drop database $db"
    done
  fi
  FRESH_DBS=()
}

PEER_PID=""
# start_peer <name> <url> <command>: runs the command with the BENCH_PEER_* variables (database
# FRESH_DB) in a process group of its own, until the URL answers HTTP with any status: a
# comparison service may have no health endpoint
start_peer() {
  local name=$1 url=$2 command=$3 port log_file code i t0
  port="$(url_port "$url")"
  if port_open "$port"; then
    log "comparison service $name: something listens on port $port already; stop it, or unset BENCH_PEER_START_$name to measure it as it runs"
    return 1
  fi
  log_file="$OUT/peer-$name.log"
  log "comparison service $name: starting it on port $port (log ${log_file#"$ROOT/"})"
  t0=$SECONDS
  BENCH_PEER_PORT=$port BENCH_PEER_DB=$FRESH_DB BENCH_PEER_DB_USER=$BENCH_PEER_DB_OWNER \
    BENCH_PEER_DB_PASSWORD=$BENCH_PEER_DB_PASSWORD BENCH_PEER_REDIS_DB=$REDIS_DB \
    setsid bash -c "$command" </dev/null >"$log_file" 2>&1 8>&- &
  PEER_PID=$!
  for ((i = 0; i < 1200; i++)); do
    kill -0 "$PEER_PID" 2>/dev/null || break
    code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$url/" 2>/dev/null || true)"
    if [[ -n $code && $code != 000 ]]; then
      log "comparison service $name: answering after $((SECONDS - t0)) s"
      return 0
    fi
    sleep 0.1
  done
  tail -n 20 "$log_file" >&2 || true
  log "comparison service $name did not answer at $url; see ${log_file#"$ROOT/"}"
  stop_peer
  return 1
}

# stop_peer: its whole process group, the command and whatever it started
stop_peer() {
  local pid=$PEER_PID
  [[ -n $pid ]] || return 0
  PEER_PID=""
  stop_child "-$pid" "comparison service"
}

# compare <name> <url> <pid> <kinds> <started: bench|no> [option value]...: the load generator
# measures one service of the comparison into compare-<name>.json
compare() {
  local name=$1 url=$2 pid=$3 kinds=$4 started=$5
  shift 5
  phase "comparison: $name" bench_java compare --name "$name" --url "$url" --pid "${pid:-0}" --kinds "$kinds" \
    --run "$RUN" --started "$started" --out "$OUT/compare-$name.json" "$@"
}

# fresh_db_options: the load generator's way into FRESH_DB, as <user> <password>
fresh_db_options() {
  printf '%s\n' --fresh-db "jdbc:postgresql://$HOST:$PG_PORT/$FRESH_DB" --db-user "$1" --db-password "$2"
}

# not_measured <name> <url> <why>: what the report says of a service of the comparison instead of its figures
not_measured() {
  jq -n --arg name "$1" --arg url "$2" --arg error "$3" '{name: $name, url: $url, error: $error}' >"$OUT/compare-$1.json"
}

# peer_one <name> <kinds> <url>: one comparison service, started on a fresh database where
# BENCH_PEER_START_<name> says how, else measured as it runs
peer_one() {
  local name=$1 kinds=$2 url=$3 start="BENCH_PEER_START_$1" secret="BENCH_PEER_SECRET_$1" fresh=() started=no
  flush_bench_redis
  if [[ -n ${!start:-} ]]; then
    if ! fresh_db "$name" "$BENCH_PEER_DB_OWNER" || ! start_peer "$name" "$url" "${!start}"; then
      not_measured "$name" "$url" "did not start (see the log)"
      FAILED+=("comparison service $name start")
      return 0
    fi
    mapfile -t fresh < <(fresh_db_options "$BENCH_PEER_DB_OWNER" "$BENCH_PEER_DB_PASSWORD")
    started=bench
  else
    log "comparison service $name: no BENCH_PEER_START_$name, so it is measured as it runs at $url: its database is not fresh"
  fi
  compare "$name" "$url" "$(listener_pid "$url")" "$kinds" "$started" --secret "${!secret:-$SECRET}" "${fresh[@]}" || true
  stop_peer
}

# The comparison services one after the other, then idem on every kind of request they were
# measured on; compare.json lists them for the report.
peers_part() {
  local i kinds=() union fresh=()
  if ((${#PEER_NAMES[@]} == 0)); then
    log "no comparison services (BENCH_PEERS is empty): nothing to compare"
    return 0
  fi
  for i in "${!PEER_NAMES[@]}"; do
    peer_one "${PEER_NAMES[$i]}" "${PEER_KINDS[$i]}" "${PEER_URLS[$i]}"
    mapfile -t -O "${#kinds[@]}" kinds < <(jq -r '(.kinds // [])[]' "$OUT/compare-${PEER_NAMES[$i]}.json" 2>/dev/null)
  done
  union="$(printf '%s\n' "${kinds[@]}" | sed '/^$/d' | sort -u | paste -sd+ -)"
  if [[ -z $union ]]; then
    log "no comparison service was measured on anything: idem is not measured either"
    not_measured idem "" "no comparison service was measured on anything"
  else
    flush_bench_redis
    if fresh_db idem "$DB_USER" && start_service compare IDEM_OUTBOX_RELAY_ENABLED=false \
      QUARKUS_DATASOURCE_REACTIVE_URL="postgresql://$HOST:$PG_PORT/$FRESH_DB" \
      QUARKUS_DATASOURCE_JDBC_URL="jdbc:postgresql://$HOST:$PG_PORT/$FRESH_DB"; then
      mapfile -t fresh < <(fresh_db_options "$DB_USER" "$DB_PASSWORD")
      compare idem "http://$HOST:$PORT" "$SERVICE_PID" "$union" bench "${fresh[@]}" || true
      stop_service
    fi
  fi
  jq -n --arg concurrency "$BENCH_PEER_CONCURRENCY" --arg seconds "$BENCH_SECONDS" \
    --arg callbacks "$BENCH_PEER_WARMUP_CALLBACKS" --arg keys "$BENCH_PEER_WARMUP_KEYS" \
    '{peers: $ARGS.positional, concurrency: $concurrency, stepSeconds: ($seconds | tonumber),
      warmupCallbacksSeconds: ($callbacks | tonumber), warmupKeysSeconds: ($keys | tonumber)}' \
    --args "${PEER_NAMES[@]}" >"$OUT/compare.json"
}

write_meta() {
  local commit dirty="" busy="" item
  commit="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  if ! git -C "$ROOT" diff --quiet HEAD -- src pom.xml 2>/dev/null; then dirty="+uncommitted changes"; fi
  for item in "${BUSY[@]}"; do busy+="${busy:+, }$item"; done
  [[ -z $busy ]] || busy="a test run (surefire) was active during: $busy"
  jq -n \
    --arg run "$RUN" \
    --arg date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
    --arg cores "$(nproc)" \
    --arg memory "$(free -g | awk '/^Mem:/ {print $2 " GB RAM"}')" \
    --arg cpu "$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n 1)" \
    --arg kernel "$(uname -r)" \
    --arg java "$("$JAVA" -version 2>&1 | head -n 1)" \
    --arg commit "$commit$dirty" \
    --arg jar "$(date -u -r "$APP/quarkus-run.jar" +%Y-%m-%dT%H:%M:%SZ 2>/dev/null || echo unknown)" \
    --arg load "$LOAD_AT_START" \
    --arg busy "$busy" \
    --arg seconds "$BENCH_SECONDS" \
    --arg warmup "$BENCH_WARMUP_SECONDS" \
    --arg concurrency "$BENCH_CONCURRENCY" \
    --arg gain "$(awk "BEGIN {print $BENCH_STOP_GAIN * 100}")" \
    --arg opts "$BENCH_SERVICE_OPTS" \
    --arg failed "${FAILED[*]:-}" \
    --arg elapsed "$(($(date +%s) - STARTED_AT))" \
    '{run: $run, date: $date, cores: ($cores | tonumber), memory: $memory, cpu: $cpu, kernel: $kernel,
      java: $java, commit: $commit, serviceJarBuilt: $jar, loadAverageAtStart: $load, busy: $busy,
      stepSeconds: ($seconds | tonumber), warmupSeconds: ($warmup | tonumber), concurrency: $concurrency,
      stopGainPercent: ($gain | tonumber), serviceJvmOptions: $opts, failedPhases: $failed,
      elapsedSecondsBeforeReport: ($elapsed | tonumber)}' >"$OUT/meta.json"
  local startup=() name
  for name in A B C N; do
    [[ -z ${STARTUP[$name]:-} ]] || startup+=(--argjson "$name" "${STARTUP[$name]}")
  done
  jq -n '$ARGS.named' "${startup[@]}" >"$OUT/startup.json"
}

cleanup() {
  local rc=$?
  stop_service
  stop_peer
  drop_scratch
  cleanup_data
  drop_fresh_dbs
  rm -rf "$APP" "$NATIVE_EXE"
  rmdir "$OUT" 2>/dev/null || true # nothing measured
  exit "$rc"
}

main() {
  mkdir -p "$BENCH_DIR"
  exec 8>"$BENCH_DIR/.lock"
  if command -v flock >/dev/null 2>&1; then
    flock -n 8 || die "another benchmark is running (target/bench/.lock)"
  fi
  mkdir -p "$OUT"
  trap cleanup EXIT
  trap 'exit 130' INT TERM
  if part peers; then read_peers; fi
  LOAD_AT_START="$(cut -d' ' -f1-3 /proc/loadavg)"
  log "run $RUN: $(nproc) cores, load average $LOAD_AT_START; step ${BENCH_SECONDS}s, ramp $BENCH_CONCURRENCY"

  # fd 8 holds the benchmark's lock: servers started from here must not keep it
  bash "$ROOT/scripts/services.sh" up 8>&-
  command -v pgbench >/dev/null 2>&1 || apt_install postgresql-contrib postgresql-client
  command -v redis-benchmark >/dev/null 2>&1 || apt_install redis-tools
  need_commands jq curl

  if [[ $BENCH_BUILD == 1 ]]; then
    wait_while "a test run or a build is active before building" build_busy
    build_busy && die "a test run or a build still uses the machine after ${BENCH_TEST_WAIT}s; try again later"
    log "building the service with the benchmark's yardsticks (./mvnw -B -q -Pbench -DskipTests package)"
    install_extension
    ./mvnw -B -q -Pbench -DskipTests package
  fi
  local source="${BENCH_APP:-$ROOT/target/bench-service/quarkus-app}"
  # a build of this repository rewrites the app: copy it between builds
  if [[ -z $BENCH_APP ]]; then wait_while "a build is rewriting target/quarkus-app" maven_here; fi
  [[ -f $source/quarkus-run.jar ]] || die "$source/quarkus-run.jar is missing; build first"
  # Run a copy, so that a build started meanwhile cannot change the jar under the service.
  cp -a "$source" "$APP"
  log "building the load generator (bench/)"
  ./mvnw -B -q -f bench/pom.xml package

  flush_bench_redis
  # the comparison alone (BENCH_PARTS=peers) runs on fresh databases only
  if part limits || part http || part native || part tracing || part kafka; then
    phase "schema" migrate_once || true
    vacuum_tables
    DATA_WRITTEN=1
  fi

  if part limits; then
    phase "pgbench" pgbench_limit || true
    phase "pgbench grants" pgbench_grants_limit || true
    phase "redis-benchmark" redis_limit || true
  fi
  if part http; then http_part; fi
  if part native; then native_part; fi
  if part ha; then phase "postgres-ha" ha_part || true; fi
  if part tracing; then phase "tracing" tracing_part || true; fi
  if part kafka; then kafka_part; fi
  if part peers; then peers_part; fi
  cleanup_data
  drop_fresh_dbs
  note_busy "the end of the run"

  write_meta
  bench_java report --dir "$OUT" --out "$BENCH_DIR/$RUN.json" --latest "$BENCH_DIR/latest.json" \
    --table "$BENCH_DIR/$RUN.md"
  cp "$BENCH_DIR/$RUN.md" "$BENCH_DIR/latest.md"
  log "results: target/bench/$RUN.json (and latest.json), table target/bench/$RUN.md; took $(($(date +%s) - STARTED_AT)) s"
  if ((${#FAILED[@]})); then
    log "failed phases: ${FAILED[*]}"
    exit 1
  fi
}

main "$@"
