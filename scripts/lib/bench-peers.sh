#!/usr/bin/env bash
# The comparison services of ./idem bench (part peers), sourced by scripts/bench.sh: each started on a
# fresh database of its own beside idem on another, the two measured by the same load generator taking
# turns step by step (bench compare); end to end, each alone, then idem.

# the comparison service's whole process group: the command and whatever it started
stop_peer() { [[ -z $PEER_PID ]] || stop_pid "-$PEER_PID" 30 "comparison service" || true; PEER_PID=""; }

# fresh_db <name> <owner> [dear]: the database bench_<run>_<name>[_dear], dropped at the end. Dear: its
# sessions wait BENCH_DEAR_COMMIT_US before each WAL flush (commit_delay, with commit_siblings 0 whatever
# else runs), as on a slow disk; the commits that arrive meanwhile share the flush
fresh_db() {
  FRESH_DB="bench_${RUN}_${1,,}${3:+_$3}"
  pg_admin -c "CREATE DATABASE $FRESH_DB OWNER $2" >/dev/null || return 1
  FRESH_DBS+=("$FRESH_DB")
  [[ ${3:-} != dear ]] || pg_admin -c "ALTER DATABASE $FRESH_DB SET commit_delay = $BENCH_DEAR_COMMIT_US" \
    -c "ALTER DATABASE $FRESH_DB SET commit_siblings = 0" >/dev/null
}

# start_peer <name> <url> <database> <dear?> [VAR=value...]: the comparison service by its
# BENCH_PEER_START_<name> on a fresh database, until its port answers; PEER_FRESH: the load
# generator's options for that database
start_peer() {
  local name=$1 url=$2 start="BENCH_PEER_START_$1" port=${2##*:} i
  PEER_FRESH=()
  if [[ -n ${!start:-} ]]; then
    port_open "$port" && log "comparison service $name: port $port is taken, so it is not started" && return 0
    fresh_db "$3" "$PEER_DB_OWNER" "$4" || return 1
    log "comparison service $name: starting it on port $port${5:+ (${*:5})}"
    env "${@:5}" BENCH_PEER_PORT="$port" BENCH_PEER_DB="$FRESH_DB" BENCH_PEER_DB_USER="$PEER_DB_OWNER" \
      BENCH_PEER_DB_PASSWORD="$PEER_DB_PASSWORD" BENCH_PEER_REDIS_DB="$PEER_REDIS_DB" \
      setsid bash -c "${!start}" </dev/null >"$OUT/peer-$3${4:+-$4}.log" 2>&1 8>&- &
    PEER_PID=$!
    for ((i = 0; i < 1200; i++)); do
      kill -0 $PEER_PID 2>/dev/null && [[ "$(curl -s -o /dev/null -w '%{http_code}' -m 2 "$url/" || true)" == 000 ]] || break
      sleep 0.1
    done
    PEER_FRESH=(--fresh-db "jdbc:postgresql://$HOST:$PG_PORT/$FRESH_DB" --db-user "$PEER_DB_OWNER" --db-password "$PEER_DB_PASSWORD")
  fi
}

# peer_pid <url>: the pid listening on the comparison service's port, 0 when unknown
peer_pid() { ss -Hltnp "sport = :${1##*:}" 2>/dev/null | grep -o 'pid=[0-9]*' | head -n 1 | cut -d= -f2 || echo 0; }

# measure_peer <name> <url> <kinds> <out> <what>: the load generator against the running comparison service
measure_peer() {
  local start="BENCH_PEER_START_$1" secret="BENCH_PEER_SECRET_$1"
  phase "$5" bench_java http --name "$1" --url "$2" --run "$RUN" --kinds "$3" --fixed true --pid "$(peer_pid "$2")" \
    --started "$([[ -n ${!start:-} ]] && echo bench || echo no)" --secret "${!secret:-$SECRET}" \
    --out "$4" "${PEER_FRESH[@]}" || true
}

# start_idem <database> <dear?> <service> <relay>: idem on the fresh database bench_<run>_<database>,
# its outbox relay on or off; FRESH_DB names that database
start_idem() {
  fresh_db "$1" $DB_USER "$2" && start_service "$3" IDEM_OUTBOX_RELAY_ENABLED="$4" \
    QUARKUS_DATASOURCE_REACTIVE_URL="postgresql://$HOST:$PG_PORT/$FRESH_DB" \
    QUARKUS_DATASOURCE_JDBC_URL="jdbc:postgresql://$HOST:$PG_PORT/$FRESH_DB"
}

# measure_beside <name> <url> <kinds> <dear?> <out ext>: idem on a fresh database beside the running
# comparison service, both on the service's kinds, taking turns step by step
measure_beside() {
  local start="BENCH_PEER_START_$1" secret="BENCH_PEER_SECRET_$1" db
  start_idem "idem_beside_$1" "$4" "beside-$1$5" false || return 0
  db=$FRESH_DB
  phase "comparison: $1 beside idem${4:+, commits $4}" bench_java compare --run "$RUN" --kinds "$3" --fixed true \
    --a-url "http://$HOST:$PORT" --a-pid "$SERVICE_PID" --a-out "$OUT/compare-idem-$1$5.json" \
    --a-fresh-db "jdbc:postgresql://$HOST:$PG_PORT/$db" --a-db-user $DB_USER --a-db-password $DB_PASSWORD \
    --b-name "$1" --b-url "$2" --b-out "$OUT/compare-$1$5.json" --b-secret "${!secret:-$SECRET}" \
    --b-pid "$(peer_pid "$2")" --b-started "$([[ -n ${!start:-} ]] && echo bench || echo no)" "${PEER_FRESH[@]/#--/--b-}" || true
  stop_service
}

# measure_idem <database> <dear?> <service> <relay> <kinds> <out> <what>: idem on a fresh database, its
# outbox relay on or off, measured like the comparison services
measure_idem() {
  start_idem "$1" "$2" "$3" "$4" || return 0
  http_run "$7" "$6" --kinds "$5" --fixed true \
    --fresh-db "jdbc:postgresql://$HOST:$PG_PORT/$FRESH_DB" --db-user $DB_USER --db-password $DB_PASSWORD
  stop_service
}

# peers_part <shipped|dear>: the comparison services one after the other, then idem on the kinds they
# were measured on, every one on a fresh database with commits of that cost; then, unless BENCH_E2E=0,
# end to end: the callbacks services again and idem with their outbox published and coupons granted
peers_part() {
  local commits=$1 spec name kinds url peers=() e2e=() ext="" topic
  [[ $commits == shipped ]] || ext=".$commits"
  for spec in ${BENCH_PEERS//,/ }; do
    [[ $spec =~ ^([A-Za-z][A-Za-z0-9_]*)=((callbacks|keys|callbacks\+keys)@)?(http://[^/:]+:[0-9]+)/?$ ]] ||
      { log "BENCH_PEERS: cannot read '$spec'" && return 1; }
    name=${BASH_REMATCH[1]} kinds=${BASH_REMATCH[3]:-callbacks+keys} url=${BASH_REMATCH[4]}
    peers+=("$name")
    [[ $kinds != *callbacks* ]] || e2e+=("$name=$url")
    flush_redis
    start_peer "$name" "$url" "$name" "${ext#.}" || continue
    measure_beside "$name" "$url" "$kinds" "${ext#.}" "$ext"
    stop_peer
  done
  if [[ ${BENCH_E2E:-1} != 0 && ${#e2e[@]} -gt 0 ]]; then
    # a topic of the run's own, as many partitions as idem's: the peer's consumers start at its beginning
    topic="bench-$RUN-coupon-grants"
    kafka_tool org.apache.kafka.tools.TopicCommand --bootstrap-server "$BENCH_KAFKA" --create --if-not-exists \
      --topic "$topic" --partitions 4 --replication-factor 1 >/dev/null || log "warning: could not create topic $topic"
    for spec in "${e2e[@]}"; do
      flush_redis
      start_peer "${spec%%=*}" "${spec#*=}" "${spec%%=*}_e2e" "${ext#.}" BENCH_PEER_RELAY=true BENCH_PEER_TOPIC="$topic" || continue
      measure_peer "${spec%%=*}" "${spec#*=}" e2e "$OUT/e2e-${spec%%=*}$ext.json" "end to end: ${spec%%=*}, commits $commits"
      stop_peer
    done
    flush_redis
    measure_idem idem_e2e "${ext#.}" "e2e${ext/./-}" true e2e "$OUT/e2e-idem$ext.json" "end to end: idem, commits $commits"
    kafka_tool org.apache.kafka.tools.TopicCommand --bootstrap-server "$BENCH_KAFKA" --delete --topic "$topic" >/dev/null 2>&1 || true
  fi
  jq -n --argjson seconds "$BENCH_SECONDS" --argjson warmup "$BENCH_PEER_WARMUP" --arg commits "$commits" \
    --argjson rounds "$BENCH_PEER_ROUNDS" \
    --argjson delay "$([[ $commits == dear ]] && echo "$BENCH_DEAR_COMMIT_US" || echo null)" '{peers: $ARGS.positional,
    stepSeconds: $seconds, warmupSeconds: $warmup, rounds: $rounds, commits: $commits, commitDelayMicros: $delay}' \
    --args "${peers[@]}" >"$OUT/compare$ext.json"
}
