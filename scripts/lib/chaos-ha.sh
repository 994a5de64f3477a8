# shellcheck shell=bash
# The fault suite's drill on Postgres with failover (./idem chaos ha, scripts/chaos.sh): the Patroni
# cluster of scripts/lib/postgres-ha.sh whole again before each storm, and the faults injected on it.
# Each fault notes what it saw (the seconds without a primary, the new leader, pg_rewind...) in
# $CHAOS_FAULT_NOTE, shown on its line of the table. The caller defines what chaos.sh does.

ha_roles() { local m r=(); for m in "${PG_HA_MEMBERS[@]}"; do r+=("$m=$(pg_ha_role "$m")"); done; echo "${r[*]}"; }
ha_replica() { [[ "$(pg_ha_role "$1")" == @(replica|sync_standby) ]]; }
# every member started, one leader, a synchronous standby, synchronous_mode on
ha_heal() {
  local m
  [[ "$(pg_ha_ctl show-config 2>/dev/null | awk '$1 == "synchronous_mode:" { print $2 }')" == true ]] ||
    pg_ha_ctl edit-config --set synchronous_mode=true --force >/dev/null
  for m in "${PG_HA_MEMBERS[@]}"; do pg_ha_patroni_pid "$m" >/dev/null || pg_ha_start "$m"; done
  wait_for 120 pg_ha_healthy || die "postgres-ha: not whole again within 120 s ($(ha_roles))"
}
ha_up() {
  bash "$ROOT/scripts/services.sh" postgres-ha >&2 || true
  ha_heal
  pg_ha_psql -d postgres -v ON_ERROR_STOP=1 -c "DROP DATABASE IF EXISTS $HA_DB WITH (FORCE)" \
    -c "CREATE DATABASE $HA_DB OWNER idem" -c "CREATE TABLE IF NOT EXISTS chaos_probe (at timestamptz)" >/dev/null
  log "postgres-ha: database $HA_DB on $(ha_roles)"
}
# ha_signal SIGNAL MEMBER: its Patroni and every PostgreSQL process of it at once (KILL: a machine lost)
ha_signal() {
  local postmaster pids=()
  mapfile -t pids < <(pg_ha_patroni_pid "$2" || true)
  if postmaster="$(pg_ha_member_pid "$2")"; then
    mapfile -t -O "${#pids[@]}" pids < <(echo "$postmaster" && pgrep -P "$postmaster" || true)
  fi
  ((${#pids[@]})) || die "fault: member $2 is not running"
  pg_ha_kill "-$1" "${pids[@]}"
}
seconds_since() { awk -v a="$1" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }'; }
# note NAME VALUE: a line of the fault's note, shown on its line of the table
note() { echo "$1 $2" >>"${CHAOS_FAULT_NOTE:-/dev/null}"; }
# ha_until_writable FROM_NANOS: a commit through HAProxy; the seconds without a primary, what instance
# a's readiness said meanwhile and how long after the commit it is ready again
ha_until_writable() {
  local from=$1 down=no
  until pg_ha_psql -d "$HA_DB" -c "SELECT txid_current()" >/dev/null 2>&1; do
    instance_ready a || down=yes
    sleep 0.1
  done
  note noPrimarySeconds "$(seconds_since "$from")"
  from=$(date +%s%N)
  wait_for 60 instance_ready a || die "fault: instance a not ready 60 s after the new primary"
  note readinessWentDown "$down"
  note readyAgainSeconds "$(seconds_since "$from")"
}

# ha_fault NAME: one fault of the drill
ha_fault() {
  local name=$1 leader from node i offset longest=0 t0 took senders=()
  case $name in
    primary-kill | primary-rejoin | primary-kill-async)
      # -async: with synchronous_mode off, what the leader acknowledged and had not sent is lost;
      # -rejoin and -async: the old leader started again mid-storm, a replica of the new one (pg_rewind)
      if [[ $name == primary-kill-async ]]; then
        pg_ha_synchronous false || die "fault: the leader still waits for a standby 30 s after synchronous_mode off"
      fi
      read -r leader _ < <(pg_ha_leader) || die "fault: no leader"
      offset="$(stat -c %s "$PG_HA_DIR/$leader.log" 2>/dev/null || echo 0)"
      if [[ $name != primary-rejoin ]]; then
        # the replicas a moment behind, as under load: the leader's WAL senders stopped, then the kill
        # (stopped receivers would not do: what was sent waits in their sockets)
        mapfile -t senders < <(pgrep -P "$(pg_ha_member_pid "$leader")" -f walsender || true)
        pg_ha_kill -STOP "${senders[@]}"
        sleep 1
        note replicaLagBytesAtKill "$(pg_ha_psql -d postgres -c "SELECT max(pg_current_wal_lsn() - flush_lsn) FROM pg_stat_replication")"
      fi
      from=$(date +%s%N)
      ha_signal KILL "$leader"
      ha_until_writable "$from"
      note newLeader "$(pg_ha_leader | cut -d' ' -f1)"
      if [[ $name != primary-kill ]]; then
        sleep "$DOWN"
        from=$(date +%s%N)
        pg_ha_start "$leader"
        wait_for 120 ha_replica "$leader" || die "fault: $leader is no replica 120 s after its start"
        note rejoinedSeconds "$(seconds_since "$from")"
        note pgRewind "$(tail -c +"$((offset + 1))" "$PG_HA_DIR/$leader.log" | grep -q pg_rewind && echo yes || echo no)"
      fi
      if [[ $name == primary-kill-async ]]; then
        pg_ha_synchronous true || die "fault: no synchronous standby 30 s after synchronous_mode on"
      fi ;;
    switchover) # to the synchronous standby, as planned maintenance
      from=$(date +%s%N)
      pg_ha_switchover || die "fault: switchover failed"
      ha_until_writable "$from" ;;
    primary-freeze) # stopped for $HA_FREEZE_SECONDS (three TTLs): continued, it must never act as a second primary
      read -r leader _ < <(pg_ha_leader) || die "fault: no leader"
      from=$(date +%s%N)
      ha_signal STOP "$leader"
      ha_until_writable "$from"
      note newLeader "$(pg_ha_leader | cut -d' ' -f1)"
      sleep "$HA_FREEZE_SECONDS"
      ha_signal CONT "$leader"
      # a write straight to it, as from a client that kept its address, must not commit
      timeout 5 psql -X -q -w -h "$HOST" -p "${PG_HA_PORTS[$(pg_ha_index "$leader")]}" -U postgres -d postgres \
        -c "INSERT INTO chaos_probe VALUES (now())" </dev/null >/dev/null 2>&1 &&
        die "fault: $leader, continued, committed a write as a second primary"
      note writeToThawedLeader refused
      from=$(date +%s%N)
      for ((i = 0; i < 600; i++)); do # until it is a replica, never a leader
        ! pg_ha_is_leader "$leader" || die "fault: $leader answered as a leader after it was continued"
        ! ha_replica "$leader" || break
        sleep 0.1
      done
      note replicaAgainSeconds "$(seconds_since "$from")" ;;
    sync-standby-kill) # commits wait until Patroni names the other replica: the longest is the stall
      read -r node _ < <(pg_ha_sync_standby) || die "fault: no synchronous standby"
      from=$(date +%s%N)
      ha_signal KILL "$node"
      while (($(date +%s%N) - from < (DOWN + 10) * 1000000000)); do
        t0=$(date +%s%N)
        pg_ha_psql -d postgres -c "INSERT INTO chaos_probe VALUES (now())" >/dev/null 2>&1 || true
        took=$((($(date +%s%N) - t0) / 1000000))
        ((took <= longest)) || longest=$took
        sleep 0.1
      done
      note longestCommitMs "$longest"
      note newSyncStandby "$(pg_ha_sync_standby | cut -d' ' -f1)"
      pg_ha_start "$node" ;;
    *) die "unknown fault $name" ;;
  esac
}
