#!/usr/bin/env bash
# The comparison services of ./idem bench (part peers), sourced by scripts/bench.sh: each started on a
# fresh database of its own, measured by the same load generator, then idem the same way.

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

# peers_part <shipped|dear>: the comparison services one after the other, then idem on the kinds they
# were measured on, every one on a fresh database with commits of that cost
peers_part() {
  local commits=$1 spec name kinds url start secret port i peers=() union="" fresh=() ext=""
  [[ $commits == shipped ]] || ext=".$commits"
  for spec in ${BENCH_PEERS//,/ }; do
    [[ $spec =~ ^([A-Za-z][A-Za-z0-9_]*)=((callbacks|keys|callbacks\+keys)@)?(http://[^/:]+:[0-9]+)/?$ ]] ||
      { log "BENCH_PEERS: cannot read '$spec'" && return 1; }
    name=${BASH_REMATCH[1]} kinds=${BASH_REMATCH[3]:-callbacks+keys} url=${BASH_REMATCH[4]}
    start="BENCH_PEER_START_$name" secret="BENCH_PEER_SECRET_$name" port=${url##*:} fresh=()
    peers+=("$name") union+="+$kinds"
    flush_redis
    if [[ -n ${!start:-} ]]; then
      port_open "$port" && log "comparison service $name: port $port is taken, so it is not started" && continue
      fresh_db "$name" "$PEER_DB_OWNER" "${ext#.}" || continue
      log "comparison service $name: starting it on port $port"
      BENCH_PEER_PORT=$port BENCH_PEER_DB=$FRESH_DB BENCH_PEER_DB_USER=$PEER_DB_OWNER BENCH_PEER_DB_PASSWORD=$PEER_DB_PASSWORD \
        BENCH_PEER_REDIS_DB=$REDIS_DB setsid bash -c "${!start}" </dev/null >"$OUT/peer-$name.log" 2>&1 8>&- &
      PEER_PID=$!
      for ((i = 0; i < 1200; i++)); do
        kill -0 $PEER_PID 2>/dev/null && [[ "$(curl -s -o /dev/null -w '%{http_code}' -m 2 "$url/" || true)" == 000 ]] || break
        sleep 0.1
      done
      fresh=(--fresh-db "jdbc:postgresql://$HOST:$PG_PORT/$FRESH_DB" --db-user "$PEER_DB_OWNER" --db-password "$PEER_DB_PASSWORD")
    fi
    phase "comparison: $name, commits $commits" bench_java http --name "$name" --url "$url" --run "$RUN" --kinds "$kinds" --fixed true \
      --pid "$(ss -Hltnp "sport = :$port" 2>/dev/null | grep -o 'pid=[0-9]*' | head -n 1 | cut -d= -f2 || echo 0)" \
      --started "$([[ -n ${!start:-} ]] && echo bench || echo no)" --secret "${!secret:-$SECRET}" \
      --out "$OUT/compare-$name$ext.json" "${fresh[@]}" || true
    stop_peer
  done
  union="$(tr '+' '\n' <<<"$union" | sed '/^$/d' | sort -u | paste -sd+ -)"
  flush_redis
  if fresh_db idem $DB_USER "${ext#.}" && start_service "compare${ext/./-}" IDEM_OUTBOX_RELAY_ENABLED=false \
    QUARKUS_DATASOURCE_REACTIVE_URL="postgresql://$HOST:$PG_PORT/$FRESH_DB" \
    QUARKUS_DATASOURCE_JDBC_URL="jdbc:postgresql://$HOST:$PG_PORT/$FRESH_DB"; then
    http_run "comparison: idem, commits $commits" "$OUT/compare-idem$ext.json" --kinds "$union" --fixed true \
      --fresh-db "jdbc:postgresql://$HOST:$PG_PORT/$FRESH_DB" --db-user $DB_USER --db-password $DB_PASSWORD
    stop_service
  fi
  jq -n --argjson seconds "$BENCH_SECONDS" --argjson warmup "$BENCH_PEER_WARMUP" --arg commits "$commits" \
    --argjson delay "$([[ $commits == dear ]] && echo "$BENCH_DEAR_COMMIT_US" || echo null)" '{peers: $ARGS.positional,
    stepSeconds: $seconds, warmupSeconds: $warmup, commits: $commits, commitDelayMicros: $delay}' \
    --args "${peers[@]}" >"$OUT/compare$ext.json"
}
