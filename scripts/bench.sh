#!/usr/bin/env bash
# The benchmark of idem in one run (./idem bench), on loopback, beside the limits of the same machine
# measured in the same run. BENCH_PARTS (all by default):
#   limits   pgbench of the callback's SQL on empty copies of the service's tables; redis-benchmark
#   http     Idempotency-Key first executions and replays, first-delivery callbacks, duplicates in step
#            with the bare one-Redis-GET endpoint: ramps of concurrency (service A, outbox relay off)
#   native   the same for the native executable (BENCH_NATIVE, else target/*-runner), beside the jar
#   ha       first deliveries on Postgres with failover, with a synchronous standby and without
#   tracing  first deliveries with tracing off, every delivery and 1 % sampled to Zipkin
#   kafka    coupon grants/s with the pipeline and without; callback → coupon latency on fresh databases
#            (at half the first-delivery peak also with commits made dearer, as in part peers)
#   peers    BENCH_PEERS=name=[callbacks|keys|callbacks+keys@]http://host:port,...: each beside idem, the
#            two taking turns, BENCH_PEER_ROUNDS (3) rounds at each of BENCH_PEER_CONCURRENCY after
#            BENCH_PEER_WARMUP s. BENCH_PEER_START_<name> (bash -c)
#            starts one on a fresh database, given BENCH_PEER_PORT, BENCH_PEER_DB, BENCH_PEER_DB_USER,
#            BENCH_PEER_DB_PASSWORD, BENCH_PEER_REDIS_DB, BENCH_SECRET; else it is measured as it runs
#            once per commit cost of BENCH_COMMITS ("shipped dear"): dear, every commit's WAL flush on the
#            fresh databases waits BENCH_DEAR_COMMIT_US (2000) first, as a slow disk's fsync; then end to end (unless
#            BENCH_E2E=0): the callbacks services and idem again with the outbox published and coupons
#            granted (a start command is given BENCH_PEER_RELAY=true and BENCH_PEER_TOPIC), first
#            deliveries at BENCH_E2E_CONCURRENCY (32) for BENCH_E2E_SECONDS (20), then the paid orders
#            without their coupon, polled until none or BENCH_E2E_DRAIN_SECONDS (60)
# Output: the table with its ratios on stdout, JSON in target/bench/. Settings: BENCH_SECONDS (10, a
# step), BENCH_WARMUP_SECONDS, BENCH_KAFKA_WARMUP (100000 grants a round), BENCH_CONCURRENCY,
# BENCH_STOP_GAIN, BENCH_QUICK=1 (a smoke run), BENCH_APP (a quarkus-app built with -Pbench: no
# build), BENCH_KEEP_DATA=1, BENCH_SERVICE_OPTS, BENCH_TEST_WAIT (900 s of waiting for a test run or
# build before building).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
LOG_NAME="idem bench"
source "$ROOT/scripts/lib/base.sh"
source "$ROOT/scripts/lib/postgres.sh"
HOST=127.0.0.1
CLUSTER_STATE="${IDEM_CLUSTER_STATE:-$HOME/.cache/idem}"
source "$ROOT/scripts/lib/postgres-ha.sh"
# shellcheck source=scripts/lib/bench-peers.sh
source "$ROOT/scripts/lib/bench-peers.sh"
KAFKA_DIR="$ROOT/.idem/kafka"
# shellcheck source=scripts/lib/kafka.sh
source "$ROOT/scripts/lib/kafka.sh"
PG_PORT=5432 DB_NAME=idem DB_USER=idem DB_PASSWORD=idem REDIS_PORT=6379 REDIS_DB=6 PEER_REDIS_DB=7 SECRET=bench-secret

if [[ ${BENCH_QUICK:-0} == 1 ]]; then
  : "${BENCH_SECONDS:=3}" "${BENCH_WARMUP_SECONDS:=2}" "${BENCH_PEER_WARMUP:=6}" "${BENCH_KAFKA_WARMUP:=2000}"
fi
export BENCH_SECONDS="${BENCH_SECONDS:-10}" BENCH_WARMUP_SECONDS="${BENCH_WARMUP_SECONDS:-5}"
export BENCH_CONCURRENCY="${BENCH_CONCURRENCY:-4 8 16 32 64}" BENCH_STOP_GAIN="${BENCH_STOP_GAIN:-0.05}"
export BENCH_SECRET=$SECRET BENCH_CLK_TCK="$(getconf CLK_TCK)" BENCH_KAFKA_WARMUP="${BENCH_KAFKA_WARMUP:-100000}"
export BENCH_PEER_CONCURRENCY="${BENCH_PEER_CONCURRENCY:-8 32 128}" BENCH_PEER_WARMUP="${BENCH_PEER_WARMUP:-120}"
export BENCH_PEER_ROUNDS="${BENCH_PEER_ROUNDS:-3}"
export BENCH_KAFKA="${BENCH_KAFKA:-$HOST:9092}"
BENCH_COMMITS="${BENCH_COMMITS:-shipped dear}" BENCH_DEAR_COMMIT_US="${BENCH_DEAR_COMMIT_US:-2000}"
BENCH_APP="${BENCH_APP:-}" BENCH_PARTS="${BENCH_PARTS:-limits http native ha tracing kafka peers}"
ZIPKIN="${BENCH_ZIPKIN:-http://$HOST:9411}"
PEER_DB_OWNER="${BENCH_PEER_DB_OWNER:-app}" PEER_DB_PASSWORD="${BENCH_PEER_DB_PASSWORD:-app}" PG_SUPERUSER=postgres

RUN="$(date -u +%Y%m%d%H%M%S)" BENCH_DIR="$ROOT/target/bench" STARTED_AT=$SECONDS
OUT="$BENCH_DIR/$RUN" && APP="$OUT/app"
SERVICE_PID="" PEER_PID="" NATIVE_EXE="" PORT="" DATA_WRITTEN=0
FAILED=() BUSY="" FRESH_DBS=()
declare -A STARTUP=()

psql_idem() { PGPASSWORD=$DB_PASSWORD psql -X -q -A -t -v ON_ERROR_STOP=1 -h $HOST -p $PG_PORT -U $DB_USER -d $DB_NAME "$@"; }
part() { [[ " $BENCH_PARTS " == *" $1 "* ]]; }
flush_redis() {
  local db
  for db in $REDIS_DB $PEER_REDIS_DB; do redis-cli -h $HOST -p $REDIS_PORT -n $db flushdb >/dev/null 2>&1 || true; done
}
tests_running() { pgrep -f surefire >/dev/null 2>&1; }
# a test run anywhere on the machine (other worktrees' too), or a Maven build in this repository
build_busy() {
  tests_running && return 0
  local pid
  for pid in $(pgrep -f plexus-classworlds); do [[ "$(readlink "/proc/$pid/cwd")" != "$ROOT" ]] || return 0; done 2>/dev/null
  return 1
}

# phase <name> <command...>: a failed part is reported and the run goes on
phase() {
  ! tests_running || { log "warning: a test run (surefire) shares the machine during $1" && BUSY+="${BUSY:+, }$1"; }
  "${@:2}" || { log "phase '$1' failed" && FAILED+=("$1") && return 1; }
}

bench_java() { "$JAVA" -Xms256m -Xmx1g -XX:+UseSerialGC -jar "$ROOT/bench/target/idem-bench.jar" "$@"; }

# start_service <name> [--native] [VAR=value...]: the copied app (or native executable) on a free
# port, up to /q/health/ready answering 200; its start-up time in STARTUP[name]
start_service() {
  local name=$1 t0 i launch log_file="$OUT/service-$1.log" quarkus
  shift
  read -ra launch <<<"$JAVA ${BENCH_SERVICE_OPTS:-} -jar $APP/quarkus-run.jar"
  if [[ ${1:-} == --native ]]; then launch=("$NATIVE_EXE" "${NATIVE_OPTS[@]}") && shift; fi
  for ((i = 0; i < 100; i++)); do PORT=$((20000 + RANDOM % 20000)) && ! port_open $PORT && break; done
  log "service $name: starting on $HOST:$PORT${*:+ with $*}"
  t0="$(date +%s%N)"
  env -u QUARKUS_PROFILE QUARKUS_HTTP_PORT="$PORT" IDEM_CALLBACK_SECRET=$SECRET IDEM_ADMIN_TOKEN=bench-admin \
    QUARKUS_REDIS_HOSTS="redis://$HOST:$REDIS_PORT/$REDIS_DB" QUARKUS_REDIS_MAX_POOL_SIZE=64 \
    QUARKUS_REDIS_MAX_POOL_WAITING=8192 "$@" "${launch[@]}" </dev/null >"$log_file" 2>&1 8>&- &
  SERVICE_PID=$! i=0
  until curl -fsS -o /dev/null --max-time 2 "http://$HOST:$PORT/q/health/ready" 2>/dev/null; do
    kill -0 "$SERVICE_PID" 2>/dev/null && ((++i < 12000)) && sleep 0.01 && continue
    grep -m 5 -E 'ERROR|Caused by' "$log_file" >&2 || tail -n 20 "$log_file" >&2 || true
    stop_service
    log "service $name did not get ready; see ${log_file#"$ROOT/"}" && FAILED+=("service $name start") && return 1
  done
  quarkus="$(grep -o 'started in [0-9.]*s' "$log_file" | head -n 1 | tr -dc '0-9.')"
  STARTUP[$name]="{\"readyMs\": $((($(date +%s%N) - t0) / 1000000)), \"quarkusSeconds\": ${quarkus:-null}}"
  log "service $name: ready, pid $SERVICE_PID: ${STARTUP[$name]}"
}

stop_service() {
  [[ -z $SERVICE_PID ]] || { stop_pid "$SERVICE_PID" 30 service && wait "$SERVICE_PID" 2>/dev/null || true; }
  SERVICE_PID=""
}
# http_run <name> <out> [option value...]: the HTTP figures of the running service (HttpPhases)
http_run() { phase "$1" bench_java http --url "http://$HOST:$PORT" --pid "$SERVICE_PID" --run "$RUN" --out "$2" "${@:3}" || true; }

# The relay was off: the paid orders' grant events stay unpublished; they are set aside, not to
# flood the Kafka part (and deleted at the end)
set_grants_aside() {
  psql_idem -c "UPDATE outbox_event SET published_at = now() WHERE published_at IS NULL AND topic = 'coupon-grants'
    AND event_key IN (SELECT 'paid:' || id FROM orders WHERE user_id LIKE 'bench-$RUN%')" >/dev/null || true
}

# every row the run wrote, at the end: the service's answers stay untouched by the benchmark
cleanup_data() {
  ((DATA_WRITTEN)) && [[ ${BENCH_KEEP_DATA:-0} != 1 ]] || return 0
  DATA_WRITTEN=0
  log "deleting the benchmark's rows (user ids bench-$RUN*) and Redis databases $REDIS_DB and $PEER_REDIS_DB"
  psql_idem <<SQL || log "warning: could not delete every benchmark row"
BEGIN;
CREATE TEMP TABLE bench_orders ON COMMIT DROP AS SELECT id FROM orders WHERE user_id LIKE 'bench-$RUN%';
DELETE FROM coupons WHERE user_id LIKE 'bench-$RUN%';
DELETE FROM outbox_event WHERE topic = 'coupon-grants' AND event_key IN (SELECT 'paid:' || id FROM bench_orders);
-- two statements, not one with an OR: past work_mem Postgres scans the IN list again for every row
DELETE FROM dedup_record WHERE scope IN ('coupon-grant', 'payment-callback', 'order-submit') AND key LIKE 'bench-$RUN%';
DELETE FROM dedup_record d USING bench_orders b WHERE d.scope = 'coupon-grant' AND d.key = 'paid:' || b.id;
DELETE FROM payment_anomaly WHERE trade_no LIKE 'bench-$RUN%';
DELETE FROM orders WHERE id IN (SELECT id FROM bench_orders);
COMMIT;
SQL
  flush_redis
}

drop_scratch() { psql_idem -c "DROP SCHEMA IF EXISTS idem_bench_pgbench CASCADE" >/dev/null 2>&1 || true; }

# What the service runs for one first delivery, alone in its transaction (OrderRepository.PAY,
# OutboxRepository.APPEND, DedupStore.RECORD, DONE), on empty copies of its tables (columns,
# constraints, indexes, storage parameters), each transaction paying a WAIT_PAY order of its own
# (:n counts the client's transactions; pgbench reads ":name" even in a string, hence ':' ||).
# One run moved by ±12 % between runs of a day: the median of three.
pgbench_limit() {
  local s=idem_bench_pgbench per_run=$((BENCH_SECONDS * 1500 + 1000)) runs=() i campaign="" tps
  log "pgbench: the callback's SQL, -c 8 -j 2 -M prepared -T $BENCH_SECONDS, three runs"
  psql_idem >/dev/null <<SQL || return 1
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS $s CASCADE;
CREATE SCHEMA $s;
DO \$\$ DECLARE t text; o text; BEGIN
  FOREACH t IN ARRAY ARRAY['dedup_record', 'orders', 'outbox_event'] LOOP
    EXECUTE format('CREATE TABLE $s.%I (LIKE public.%I INCLUDING ALL)', t, t);
    SELECT array_to_string(reloptions, ', ') INTO o FROM pg_class WHERE oid = ('public.' || t)::regclass;
    IF o IS NOT NULL THEN EXECUTE format('ALTER TABLE $s.%I SET (%s)', t, o); END IF;
  END LOOP;
END \$\$;
INSERT INTO $s.orders (id, user_id, amount_cents, currency, status, created_at)
  SELECT 'o-' || c || '-' || n, 'u-' || c, 1999, 'CNY', 'WAIT_PAY', now()
  FROM generate_series(0, 7) c, generate_series(1, $((3 * per_run))) n;
ANALYZE $s.orders;
SQL
  [[ -z "$(psql_idem -c "SELECT 1 FROM information_schema.columns WHERE table_name = 'orders'
    AND column_name = 'campaign'")" ]] || campaign=", campaign = 'PAY-5OFF'"
  local order="'o-' || :client_id || '-' || :n" trade="'t-' || :client_id || '-' || :n"
  cat >"$OUT/pgbench-callback.sql" <<SQL
\\set n :n + 1
BEGIN;
UPDATE $s.orders SET status = 'PAID', trade_no = $trade, paid_at = now()$campaign
  WHERE id = $order AND status IN ('WAIT_PAY') AND amount_cents = 1999
    AND NOT EXISTS (SELECT 1 FROM $s.orders other WHERE other.trade_no = $trade) RETURNING user_id;
INSERT INTO $s.outbox_event (topic, event_key, payload, created_at) VALUES ('coupon-grants', 'paid' || ':' || $order,
  json_build_object('bizKey', 'paid' || ':' || $order, 'userId', 'u-' || :client_id, 'templateId', 'PAY-5OFF',
                    'orderId', $order)::jsonb, now()) ON CONFLICT (topic, event_key) DO NOTHING;
INSERT INTO $s.dedup_record (scope, key, fingerprint, status, result, created_at, updated_at, expires_at)
  VALUES ('payment-callback', $trade || ':' || 'SUCCESS', '9f2c1be04b3a5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f',
          'DONE', '{"code":"SUCCESS"}'::text::jsonb, now(), now(), now() + interval '7 days')
  ON CONFLICT DO NOTHING RETURNING scope, key;
END;
SQL
  for i in 0 1 2; do
    PGPASSWORD=$DB_PASSWORD pgbench -n -h $HOST -p $PG_PORT -U $DB_USER -c 8 -j 2 -M prepared -T "$BENCH_SECONDS" \
      -D n=$((i * per_run)) -f "$OUT/pgbench-callback.sql" $DB_NAME >"$OUT/pgbench-$i.out" || { cat "$OUT/pgbench-$i.out" >&2 && return 1; }
    runs+=("$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$OUT/pgbench-$i.out")")
  done
  tps="$(printf '%s\n' "${runs[@]}" | sort -g | sed -n 2p)"
  log "pgbench: $tps TPS, the median of ${runs[*]}"
  jq -n --argjson tps "$tps" --argjson seconds "$BENCH_SECONDS" '{tps: $tps, tpsRuns: $ARGS.positional | map(tonumber),
    clients: 8, seconds: $seconds}' --args "${runs[@]}" >"$OUT/pgbench.json"
  drop_scratch
}

redis_limit() {
  local line
  line="$(redis-benchmark -h $HOST -p $REDIS_PORT --dbnum $REDIS_DB -c 50 -n "${BENCH_REDIS_REQUESTS:-300000}" \
    -r 100000000 --csv SET 'key:__rand_int__' v NX EX 60 | tail -n 1 | tr -d '"')"
  [[ $line =~ ^[^,]*,([0-9.]+),[^,]*,[^,]*,([0-9.]+),[^,]*,([0-9.]+) ]] || { echo "$line" >&2 && return 1; }
  log "redis-benchmark: ${BASH_REMATCH[1]} ops/s"
  printf '{"rps": %s, "p50Ms": %s, "p99Ms": %s, "clients": 50}\n' "${BASH_REMATCH[@]:1:3}" >"$OUT/redis.json"
}

native_part() {
  local source bare=""
  source="$(native_executable "${BENCH_NATIVE:-}")" || { log "no native executable: part native skipped" && return 0; }
  NATIVE_EXE="$OUT/native-runner" && cp "$source" "$NATIVE_EXE"
  start_service N --native IDEM_OUTBOX_RELAY_ENABLED=false || return 0
  # an executable of the benchmark's build (-Pbench -Dnative) has the bare endpoint
  curl -fsS -o /dev/null --max-time 2 "http://$HOST:$PORT/bench/redis-get" 2>/dev/null && bare=+bare
  http_run "native HTTP ramps" "$OUT/native-http.json" --kinds "keys+callbacks$bare" --idle-seconds 10
  stop_service
  set_grants_aside
}

# first deliveries through HAProxy, with a synchronous standby and without, each on a fresh database
ha_part() {
  local mode db
  bash "$ROOT/scripts/services.sh" postgres-ha 8>&- || return 1
  for mode in sync async; do
    db="bench_${RUN}_ha_$mode" && pg_ha_synchronous "$([[ $mode == sync ]] && echo true || echo false)" || return 1
    pg_ha_psql -d postgres -v ON_ERROR_STOP=1 -c "CREATE DATABASE $db OWNER $DB_USER" >/dev/null || return 1
    flush_redis
    if start_service "H-$mode" IDEM_OUTBOX_RELAY_ENABLED=false \
      QUARKUS_DATASOURCE_REACTIVE_URL="postgresql://$HOST:$PG_HA_PRIMARY_PORT/$db"; then
      BENCH_JDBC_URL="jdbc:postgresql://$HOST:$PG_HA_PRIMARY_PORT/$db" \
        http_run "HA ($mode) first deliveries" "$OUT/ha-$mode-http.json" --kinds first
      stop_service
    fi
    pg_ha_psql -d postgres -c "DROP DATABASE $db WITH (FORCE)" >/dev/null || log "could not drop $db"
  done
  pg_ha_synchronous true
}

# a fresh service for each configuration, warmed up as A; Zipkin counts the spans of each run
tracing_part() {
  local config spans
  local -A ratio=([off]="" [all]=1.0 [1pct]=0.01)
  [[ -n ${BENCH_ZIPKIN:-} ]] || bash "$ROOT/scripts/services.sh" tracing 8>&- || return 1
  zipkin_spans() { curl -fsS -m 3 "$ZIPKIN/metrics" | jq '."counter.zipkin_collector.spans.http" // null' || echo null; }
  for config in off all 1pct; do
    flush_redis
    spans="$(zipkin_spans)"
    # shellcheck disable=SC2086 # two words or none
    start_service "T-$config" IDEM_OUTBOX_RELAY_ENABLED=false ${ratio[$config]:+IDEM_TRACING_ZIPKIN_ENDPOINT=$ZIPKIN/api/v2/spans \
      QUARKUS_OTEL_TRACES_SAMPLER_ARG=${ratio[$config]}} || continue
    BENCH_CONCURRENCY="${BENCH_TRACING_CONCURRENCY:-32}" http_run "tracing $config" "$OUT/tracing-$config.json" --kinds first
    stop_service
    [[ ! -f $OUT/tracing-$config.json ]] || jq -c --arg c $config --argjson b "$spans" --argjson a "$(zipkin_spans)" \
      '{config: $c, zipkinSpans: (if $b and $a then $a - $b else null end)} + .' "$OUT/tracing-$config.json" >>"$OUT/tracing.jsonl"
  done
  set_grants_aside
  jq -s --argjson c "${BENCH_TRACING_CONCURRENCY:-32}" '{concurrency: $c, runs: .}' "$OUT/tracing.jsonl" >"$OUT/tracing.json"
}

# latency_at <name> <divisor> <why>: callback → coupon at part http's first-delivery peak ÷ divisor, on the
# running service and its fresh database
latency_at() {
  local rate
  rate="$(jq -r ".callbacksFirst.peak.perSecond // 0 | . / $2 | select(. > 0)" "$OUT/http.json" 2>/dev/null || true)"
  [[ -z $rate ]] || BENCH_JDBC_URL="jdbc:postgresql://$HOST:$PG_PORT/$FRESH_DB" phase "callback → coupon $1" \
    bench_java latency --port "$PORT" --pid "$SERVICE_PID" --run "$RUN" --name "$1" --rate "$rate" \
    --why "$3" --out "$OUT/$1.json" || true
}

kafka_part() {
  if start_service B; then
    phase "Kafka grants, pipeline on" bench_java kafka --port "$PORT" --pid "$SERVICE_PID" --run "$RUN" \
      --variant pipeline --grants "${BENCH_GRANTS:-0}" --out "$OUT/kafka-pipeline.json" || true
    stop_service
  fi
  # callback → coupon at a tenth of part http's first-delivery peak (light), then at half of it, and at half
  # again with commits made dearer as in part peers: each on a fresh database, so that the two half-peak
  # figures differ in the commit's cost alone, not in tables the grants above filled
  if start_idem kafka_latency "" B-latency-shipped true; then
    latency_at latency-light 10 "a tenth of the first-delivery peak"
    latency_at latency 2 "half of the first-delivery peak"
    stop_service
  fi
  if start_idem kafka_latency dear B-latency-dear true; then
    latency_at latency-dear 2 "half of the first-delivery peak, every WAL flush waiting $BENCH_DEAR_COMMIT_US µs"
    stop_service
  fi
  # the baseline gets the very workload the pipeline had
  if start_service C IDEM_BENCH_COUPONS_PIPELINE=false IDEM_OUTBOX_RELAY_ENABLED=false; then
    phase "Kafka grants, pipeline off" bench_java kafka --port "$PORT" --pid "$SERVICE_PID" --run "$RUN" --variant bare \
      --grants "${BENCH_GRANTS:-$(jq -r '.measured.messages // 0' "$OUT/kafka-pipeline.json" 2>/dev/null || echo 0)}" \
      --out "$OUT/kafka-bare.json" || true
    stop_service
  fi
}

write_meta() {
  local commit name
  commit="$(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD -- src pom.xml || echo +uncommitted)"
  jq -n --arg run "$RUN" --arg date "$(date -u +%FT%TZ)" --argjson cores "$(nproc)" --arg commit "$commit" \
    --arg memory "$(free -g | awk '/^Mem:/ {print $2 " GB RAM"}')" --arg load "$LOAD_AT_START" \
    --arg app "${BENCH_APP:-target/bench-service/quarkus-app}, built $(date -u -r "$APP/quarkus-run.jar" +%FT%TZ)" \
    --arg cpu "$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n 1)" --arg java "$("$JAVA" -version 2>&1 | head -n 1)" \
    --arg busy "${BUSY:+a test run (surefire) was active during: $BUSY}" --arg failed "${FAILED[*]:-}" \
    --argjson seconds "$BENCH_SECONDS" --argjson gain "$(awk "BEGIN {print $BENCH_STOP_GAIN * 100}")" \
    '{run: $run, date: $date, cores: $cores, memory: $memory, cpu: $cpu, java: $java, commit: $commit, app: $app,
      loadAverageAtStart: $load, busy: $busy, stepSeconds: $seconds, stopGainPercent: $gain, failedPhases: $failed}' \
    >"$OUT/meta.json"
  for name in "${!STARTUP[@]}"; do [[ $name == migrate ]] || printf '{"%s": %s}\n' "$name" "${STARTUP[$name]}"; done | jq -s 'add // {}' >"$OUT/startup.json"
}

cleanup() {
  local rc=$? db
  stop_service
  stop_peer
  drop_scratch
  cleanup_data
  for db in "${FRESH_DBS[@]}"; do
    [[ ${BENCH_KEEP_DATA:-0} == 1 ]] || pg_admin -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null || true
  done
  rm -rf "$APP" "$NATIVE_EXE" && rmdir "$OUT" 2>/dev/null || true # nothing measured
  exit "$rc"
}

main() {
  mkdir -p "$BENCH_DIR" && exec 8>"$BENCH_DIR/.lock"
  flock -n 8 || die "another benchmark is running (target/bench/.lock)"
  mkdir -p "$OUT"
  trap cleanup EXIT
  trap 'exit 130' INT TERM
  LOAD_AT_START="$(cut -d' ' -f1-3 /proc/loadavg)"
  log "run $RUN: $(nproc) cores, load average $LOAD_AT_START; parts: $BENCH_PARTS"
  # fd 8 holds the benchmark's lock: servers started from here must not keep it
  bash "$ROOT/scripts/services.sh" up 8>&-
  command -v pgbench >/dev/null || apt_install postgresql-contrib postgresql-client
  command -v redis-benchmark >/dev/null || apt_install redis-tools
  need_commands jq curl
  if [[ -z $BENCH_APP ]]; then
    local waited=0
    while build_busy && ((waited < ${BENCH_TEST_WAIT:-900})); do
      ((waited % 60)) || log "a test run or a build of this repository is active; waiting (${waited}s)"
      sleep 5 && waited=$((waited + 5))
    done
    log "building the service with the benchmark's yardsticks (-Pbench, into target/bench-service)"
    ./mvnw -B -q -f reactor/pom.xml -pl dev.idem:idem -am -Pbench -DskipTests package
  fi
  # a copy, so that a build started meanwhile cannot change the jar under the service
  cp -a "${BENCH_APP:-$ROOT/target/bench-service/quarkus-app}" "$APP"
  [[ -f $APP/quarkus-run.jar ]] || die "no quarkus-run.jar in ${BENCH_APP:-target/bench-service/quarkus-app}"
  log "building the load generator (bench/)"
  ./mvnw -B -q -f bench/pom.xml package

  flush_redis
  if [[ $BENCH_PARTS != peers ]]; then
    DATA_WRITTEN=1
    # pgbench copies the service's tables: a database the service never met has them once it started
    [[ -n "$(psql_idem -c "SELECT to_regclass('public.dedup_record')")" ]] || { start_service migrate && stop_service; }
    # dead rows of earlier runs weigh on the service's tables, not on pgbench's fresh copies
    psql_idem -c "VACUUM (ANALYZE) dedup_record, orders, outbox_event, coupons, payment_anomaly" >/dev/null || true
  fi
  if part limits; then phase pgbench pgbench_limit || true && phase redis-benchmark redis_limit || true; fi
  if part http && start_service A IDEM_OUTBOX_RELAY_ENABLED=false; then
    http_run "HTTP ramps" "$OUT/http.json" --idle-seconds 10
    stop_service
    set_grants_aside
  fi
  if part native; then native_part; fi
  if part ha; then phase postgres-ha ha_part || true; fi
  if part tracing; then phase tracing tracing_part || true; fi
  if part kafka; then kafka_part; fi
  if part peers && [[ -n ${BENCH_PEERS:-} ]]; then
    for commits in $BENCH_COMMITS; do phase "peers, commits $commits" peers_part "$commits" || true; done
  fi
  cleanup_data
  write_meta
  bench_java report --dir "$OUT" --out "$BENCH_DIR/$RUN.json" --latest "$BENCH_DIR/latest.json" --table "$BENCH_DIR/$RUN.md"
  log "results: target/bench/$RUN.json (and latest.json), table $RUN.md; took $((SECONDS - STARTED_AT)) s"
  ((${#FAILED[@]} == 0)) || die "failed phases: ${FAILED[*]}"
}

main "$@"
