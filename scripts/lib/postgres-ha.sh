# shellcheck shell=bash
# A highly available PostgreSQL of the project's own on loopback (./idem services postgres-ha), for
# the tests and drills that run idem against a primary that fails over: three nodes pg1-pg3
# (PostgreSQL on PG_HA_PORTS, Patroni's REST API on PG_HA_REST_PORTS) under Patroni over a one-node
# etcd, synchronous_mode on (only the synchronous standby is promoted: no acknowledged commit is
# lost), behind HAProxy: PG_HA_PRIMARY_PORT (5440) always the primary (GET /primary answers 200 on
# the leader alone; a demoted primary's connections are cut as its check fails), PG_HA_REPLICA_PORT
# (5439) the replicas, statistics on PG_HA_STATS_PORT (8440)/stats.
# Patroni talks to etcd's v2 API, not v3: Debian 12's Patroni (3.0.2) renews the leader key over v3
# with a plain write when its cached view says it leads, so a leader frozen past its TTL took the
# key back from the standby promoted meanwhile (chaos ha, primary-freeze: 30 s of commits lost).
# Over v2 the renewal is a compare-and-set on the leader's name: the woken node fails it and demotes.
# Everything lives in $PG_HA_DIR (etcd's data, haproxy.cfg, patronictl.yml, logs and pid files); the
# nodes, owned by postgres, in $PG_HA_DIR/nodes/pg<n>/, or behind a link to
# /var/lib/postgresql/idem-ha when postgres cannot reach $PG_HA_DIR. A node that is down is started
# again on its data. Not root: sudo without a password runs Patroni as postgres and signals it.
# A member is named pg2, 2 or 5442. The caller defines log, die, HOST, CLUSTER_STATE and what
# pg_ensure_app_db needs (scripts/services.sh).

PG_HA_SCOPE=idem-ha
PG_HA_MEMBERS=(pg1 pg2 pg3)
PG_HA_PORTS=(5441 5442 5443)
PG_HA_REST_PORTS=(8008 8009 8010)
PG_HA_ETCD_PORT=2379
PG_HA_ETCD_PEER_PORT=2380
PG_HA_PRIMARY_PORT=5440
PG_HA_REPLICA_PORT=5439
PG_HA_STATS_PORT=8440
PG_HA_DIR="$CLUSTER_STATE/postgres-ha"
PG_HA_TEST_DB=idem_ha_test
PG_HA_START_TIMEOUT=120
PG_HA_SUDO=()
[[ $EUID -eq 0 ]] || PG_HA_SUDO=(sudo -n)
# COMMAND... as the postgres OS user; setpriv and env exec in place, so that a pid file written before
# names COMMAND itself (pg_ha_start spells this out for spawn_detached)
pg_ha_as_postgres() {
  "${PG_HA_SUDO[@]}" setpriv --reuid=postgres --regid=postgres --init-groups \
    env HOME="$(getent passwd postgres | cut -d: -f6)" USER=postgres LOGNAME=postgres "$@"
}

# ------------------------------------------------------------------- places and processes
pg_ha_index() { # 0, 1 or 2
  local i
  for i in "${!PG_HA_MEMBERS[@]}"; do
    [[ $1 == "${PG_HA_MEMBERS[i]}" || $1 == "$((i + 1))" || $1 == "${PG_HA_PORTS[i]}" ]] && echo "$i" && return 0
  done
  return 1
}
pg_ha_nodes() { if [[ -e $PG_HA_DIR/nodes ]]; then readlink -f "$PG_HA_DIR/nodes"; else echo "$PG_HA_DIR/nodes"; fi; }
pg_ha_node_dir() { echo "$(pg_ha_nodes)/$1"; }
pg_ha_kill() { kill "$@" 2>/dev/null || "${PG_HA_SUDO[@]}" kill "$@" 2>/dev/null; }
# pg_ha_pid_matching PIDFILE TEXT: its pid while that process has TEXT in its command line (sudo's child)
pg_ha_pid_matching() {
  local pid child
  pid="$(pid_from_file "$1" "$2")" || return 1
  if [[ "$(cat "/proc/$pid/comm")" == sudo ]] && child="$(pgrep -o -P "$pid")"; then pid=$child; fi
  echo "$pid"
}
pg_ha_etcd_pid() { pg_ha_pid_matching "$PG_HA_DIR/etcd.pid" "--data-dir $PG_HA_DIR/etcd"; }
pg_ha_haproxy_pid() { pg_ha_pid_matching "$PG_HA_DIR/haproxy.pid" "haproxy -f $PG_HA_DIR/haproxy.cfg"; }
pg_ha_patroni_pid() {
  local i m
  i="$(pg_ha_index "$1")" || return 1
  m=${PG_HA_MEMBERS[i]}
  pg_ha_pid_matching "$PG_HA_DIR/$m.pid" "patroni $(pg_ha_node_dir "$m")/patroni.yml"
}
# the member's postmaster: the first line of its postmaster.pid, while it runs
pg_ha_member_pid() {
  local i m pid
  i="$(pg_ha_index "$1")" || return 1
  m=${PG_HA_MEMBERS[i]}
  pid="$("${PG_HA_SUDO[@]}" head -n 1 "$(pg_ha_node_dir "$m")/data/postmaster.pid" 2>/dev/null)" || return 1
  [[ $pid =~ ^[0-9]+$ && "$(cat "/proc/$pid/comm" 2>/dev/null)" == postgres* ]] && echo "$pid"
}
# pg_ha_stop PID SECONDS LABEL [SIGNAL]: SIGNAL (TERM), up to SECONDS for it to go, then SIGKILL
pg_ha_stop() {
  local i
  pg_ha_kill "-${4:-TERM}" "$1" || true
  for ((i = 0; i < $2 * 2; i++)); do [[ -e /proc/$1 ]] || return 0; sleep 0.5; done
  log "$3 still running after $2 s; killing it"
  pg_ha_kill -KILL "$1" || true
}

# ------------------------------------------------------------------------- cluster state
# HTTP status of GET PATH on a member's REST API (000: no answer)
pg_ha_rest() {
  local i
  i="$(pg_ha_index "$1")" || return 1
  curl -s -o /dev/null -m 1 -w '%{http_code}' "http://$HOST:${PG_HA_REST_PORTS[i]}$2" 2>/dev/null || true
}
pg_ha_is_leader() { [[ "$(pg_ha_rest "$1" /primary)" == 200 ]]; }
# leader, sync_standby, replica, what else Patroni says (starting, stopped...), or down
pg_ha_role() {
  local i path state
  i="$(pg_ha_index "$1")" || return 1
  for path in primary:leader sync:sync_standby replica:replica; do
    [[ "$(pg_ha_rest "$1" "/${path%:*}")" != 200 ]] || { echo "${path#*:}"; return 0; }
  done
  state="$(curl -s -m 1 "http://$HOST:${PG_HA_REST_PORTS[i]}/patroni" 2>/dev/null)" || state=""
  [[ -n $state ]] || { echo down; return 0; }
  state="$(sed -n 's/.*"state": *"\([^"]*\)".*/\1/p' <<<"$state")"
  echo "${state:-unknown}"
}
# pg_ha_answering PATH: "<member> <port>" of the first member answering 200 to PATH
pg_ha_answering() {
  local i
  for i in "${!PG_HA_MEMBERS[@]}"; do
    [[ "$(pg_ha_rest "${PG_HA_MEMBERS[i]}" "$1")" != 200 ]] || { echo "${PG_HA_MEMBERS[i]} ${PG_HA_PORTS[i]}"; return 0; }
  done
  return 1
}
pg_ha_leader() { pg_ha_answering /primary; }
pg_ha_sync_standby() { pg_ha_answering /sync; }
# psql as postgres through HAProxy's primary port (quiet, unaligned, tuples only)
pg_ha_psql() { PGCONNECT_TIMEOUT=2 psql -X -q -A -t -w -h "$HOST" -p "$PG_HA_PRIMARY_PORT" -U postgres "$@" </dev/null; }
pg_ha_writable() { [[ "$(pg_ha_psql -d postgres -c 'select not pg_is_in_recovery()' 2>/dev/null)" == t ]]; }
pg_ha_ctl() { patronictl -c "$PG_HA_DIR/patronictl.yml" "$@" </dev/null; }
# pg_ha_synchronous true|false: synchronous_mode so, and (30 s) until the leader's commits wait for a standby, or not
pg_ha_synchronous() {
  pg_ha_ctl edit-config --set "synchronous_mode=$1" --force >/dev/null || return 1
  wait_for 30 pg_ha_commits_wait "$1" || { log "postgres-ha: synchronous_standby_names does not follow synchronous_mode=$1"; return 1; }
}
pg_ha_commits_wait() {
  local names
  names="$(pg_ha_psql -d postgres -c 'SHOW synchronous_standby_names')" || return 1
  [[ ($1 == true && -n $names) || ($1 != true && -z $names) ]]
}
# every member runs, one leads and one is its synchronous standby
pg_ha_healthy() {
  local m leaders=0 syncs=0
  for m in "${PG_HA_MEMBERS[@]}"; do
    case "$(pg_ha_role "$m")" in
      leader) ((++leaders)) ;;
      sync_standby) ((++syncs)) ;;
      replica) ;;
      *) return 1 ;;
    esac
  done
  ((leaders == 1 && syncs >= 1))
}
# pg_ha_switchover: the leadership to the synchronous standby (the only one synchronous_mode lets
# Patroni promote), until it leads
pg_ha_switchover() {
  local leader candidate rest
  read -r leader rest < <(pg_ha_leader) || { log "postgres-ha: no leader to switch over from"; return 1; }
  read -r candidate rest < <(pg_ha_sync_standby) || { log "postgres-ha: no synchronous standby to switch over to"; return 1; }
  pg_ha_ctl switchover --leader "$leader" --candidate "$candidate" --force >&2 || return 1
  wait_for 30 pg_ha_is_leader "$candidate" || { log "postgres-ha: $candidate does not lead 30 s after the switchover"; return 1; }
}

# ------------------------------------------------------------------------------- starting
pg_ha_packages() {
  local missing=()
  command -v patroni >/dev/null || missing+=(patroni)
  command -v etcd >/dev/null || missing+=(etcd-server)
  /usr/bin/python3 -c 'import etcd' 2>/dev/null || missing+=(python3-etcd)
  command -v haproxy >/dev/null || missing+=(haproxy)
  command -v curl >/dev/null || missing+=(curl)
  command -v psql >/dev/null || missing+=(postgresql-client)
  pg_version >/dev/null || missing+=(postgresql)
  ((${#missing[@]} == 0)) || apt_install "${missing[@]}"
  command -v patroni >/dev/null && command -v etcd >/dev/null && command -v haproxy >/dev/null ||
    die "postgres-ha: patroni, etcd or haproxy missing after installing ${missing[*]}"
}
pg_ha_etcd_ok() { [[ "$(curl -s -m 1 "http://$HOST:$PG_HA_ETCD_PORT/health" 2>/dev/null)" == *'"health":"true"'* ]]; }
pg_ha_etcd_up() {
  local port url="http://$HOST:$PG_HA_ETCD_PORT" peer="http://$HOST:$PG_HA_ETCD_PEER_PORT"
  if ! pg_ha_etcd_pid >/dev/null; then
    for port in "$PG_HA_ETCD_PORT" "$PG_HA_ETCD_PEER_PORT"; do
      port_open "$port" && die "postgres-ha: something else listens on $HOST:$port (etcd's)"
    done
    log "postgres-ha: starting etcd on $url"
    spawn_detached "$PG_HA_DIR/etcd.pid" "$PG_HA_DIR/etcd.log" etcd --name "$PG_HA_SCOPE" \
      --data-dir "$PG_HA_DIR/etcd" --listen-client-urls "$url" --advertise-client-urls "$url" \
      --listen-peer-urls "$peer" --initial-advertise-peer-urls "$peer" --initial-cluster "$PG_HA_SCOPE=$peer" \
      --initial-cluster-token "$PG_HA_SCOPE" --initial-cluster-state new --enable-v2=true
  fi
  wait_for 30 pg_ha_etcd_ok || die "postgres-ha: etcd not healthy within 30 s; see $PG_HA_DIR/etcd.log"
}
# the nodes' directory, made once: in $PG_HA_DIR when postgres can reach it, else a link to its home
pg_ha_make_nodes() {
  [[ ! -e $PG_HA_DIR/nodes ]] || return 0
  if pg_ha_as_postgres test -x "$PG_HA_DIR" 2>/dev/null; then
    mkdir -p "$PG_HA_DIR/nodes"
  else
    local place
    place="$(getent passwd postgres | cut -d: -f6)/idem-ha"
    log "postgres-ha: postgres cannot reach $PG_HA_DIR; the nodes live in $place"
    as_root mkdir -p "$place"
    ln -s "$place" "$PG_HA_DIR/nodes"
  fi
  as_root chown postgres:postgres "$(pg_ha_nodes)"
  as_root chmod 700 "$(pg_ha_nodes)"
}
# patroni.yml of member index I, at every start (bootstrap.dcs is read only when the cluster is made).
# loop_wait + 2 * retry_timeout <= ttl: a leader cut off from etcd demotes itself before its key
# expires; a 10 s key makes a failover take seconds, not Patroni's default half-minute. Loopback
# only: every connection from 127.0.0.1 is trusted, so the passwords are never asked for.
pg_ha_write_config() {
  local i=$1 dir
  dir="$(pg_ha_node_dir "${PG_HA_MEMBERS[$1]}")"
  as_root install -d -o postgres -g postgres -m 700 "$dir"
  pg_ha_as_postgres tee "$dir/patroni.yml" >/dev/null <<YAML
scope: $PG_HA_SCOPE
name: ${PG_HA_MEMBERS[i]}
log: {level: INFO}
restapi: {listen: '$HOST:${PG_HA_REST_PORTS[i]}', connect_address: '$HOST:${PG_HA_REST_PORTS[i]}'}
etcd: {host: '$HOST:$PG_HA_ETCD_PORT'}
bootstrap:
  dcs:
    ttl: 10
    loop_wait: 2
    retry_timeout: 4
    maximum_lag_on_failover: 1048576
    synchronous_mode: true
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters: {wal_level: replica, hot_standby: 'on', wal_log_hints: 'on', max_connections: 200,
        max_wal_senders: 10, max_replication_slots: 10, wal_keep_size: 256MB}
  initdb: [{encoding: UTF8}, {locale: C.UTF-8}, data-checksums]
postgresql:
  listen: '$HOST:${PG_HA_PORTS[i]}'
  connect_address: '$HOST:${PG_HA_PORTS[i]}'
  data_dir: $dir/data
  bin_dir: /usr/lib/postgresql/$(pg_version)/bin
  pgpass: $dir/pgpass
  parameters: {unix_socket_directories: '$dir'}
  pg_hba: [local all all trust, host all all 127.0.0.1/32 trust, host replication all 127.0.0.1/32 trust]
  authentication:
    superuser: {username: postgres, password: postgres}
    replication: {username: replicator, password: replicator}
    rewind: {username: postgres, password: postgres}
YAML
}
# pg_ha_start MEMBER: its Patroni on its data unless it runs (a killed leader comes back a replica, rewound)
pg_ha_start() {
  local i name
  i="$(pg_ha_index "$1")" || return 1
  name="${PG_HA_MEMBERS[i]}"
  ! pg_ha_patroni_pid "$name" >/dev/null || return 0
  port_open "${PG_HA_REST_PORTS[i]}" && die "postgres-ha: something else listens on $HOST:${PG_HA_REST_PORTS[i]} ($name's REST API)"
  # a postmaster left running by a Patroni that was killed is taken over by the next one
  if port_open "${PG_HA_PORTS[i]}" && ! pg_ha_member_pid "$name" >/dev/null; then
    die "postgres-ha: something else listens on $HOST:${PG_HA_PORTS[i]} ($name's PostgreSQL)"
  fi
  pg_ha_write_config "$i"
  log "postgres-ha: starting Patroni $name (PostgreSQL $HOST:${PG_HA_PORTS[i]}, REST $HOST:${PG_HA_REST_PORTS[i]})"
  (cd / && spawn_detached "$PG_HA_DIR/$name.pid" "$PG_HA_DIR/$name.log" \
    "${PG_HA_SUDO[@]}" setpriv --reuid=postgres --regid=postgres --init-groups \
    env HOME="$(getent passwd postgres | cut -d: -f6)" USER=postgres LOGNAME=postgres \
    patroni "$(pg_ha_node_dir "$name")/patroni.yml")
}
# HAProxy: each server checked every second (500 ms while changing), out after two failures, in
# after two successes (a leader frozen and continued may answer once before it knows it lost the
# key), its connections cut once out. The checks ask with OPTIONS: Patroni answers the status line
# alone, all HAProxy reads before its reset (a GET's body would meet it and fill Patroni's log).
pg_ha_haproxy_up() {
  local i port servers=""
  ! pg_ha_haproxy_pid >/dev/null || return 0
  for port in "$PG_HA_PRIMARY_PORT" "$PG_HA_REPLICA_PORT" "$PG_HA_STATS_PORT"; do
    port_open "$port" && die "postgres-ha: something else listens on $HOST:$port (HAProxy's)"
  done
  for i in "${!PG_HA_MEMBERS[@]}"; do
    servers+="  server ${PG_HA_MEMBERS[i]} $HOST:${PG_HA_PORTS[i]} check port ${PG_HA_REST_PORTS[i]}"$'\n'
  done
  cat >"$PG_HA_DIR/haproxy.cfg" <<CFG
global
  maxconn 1000
defaults
  mode tcp
  timeout connect 2s
  timeout client 30m
  timeout server 30m
  timeout check 1s
  default-server inter 1s fastinter 500ms downinter 1s fall 2 rise 2 on-marked-down shutdown-sessions
listen stats
  mode http
  bind $HOST:$PG_HA_STATS_PORT
  stats enable
  stats uri /stats
  stats refresh 2s
listen primary
  bind $HOST:$PG_HA_PRIMARY_PORT
  option httpchk OPTIONS /primary
  http-check expect status 200
$servers
listen replicas
  bind $HOST:$PG_HA_REPLICA_PORT
  balance roundrobin
  option httpchk OPTIONS /replica
  http-check expect status 200
$servers
CFG
  haproxy -c -q -f "$PG_HA_DIR/haproxy.cfg" </dev/null || die "postgres-ha: $PG_HA_DIR/haproxy.cfg is not valid"
  log "postgres-ha: starting HAProxy (primary $HOST:$PG_HA_PRIMARY_PORT, replicas $HOST:$PG_HA_REPLICA_PORT)"
  spawn_detached "$PG_HA_DIR/haproxy.pid" "$PG_HA_DIR/haproxy.log" haproxy -f "$PG_HA_DIR/haproxy.cfg"
  wait_for 10 port_open "$PG_HA_PRIMARY_PORT" || die "postgres-ha: HAProxy did not start; see $PG_HA_DIR/haproxy.log"
}

pg_ha_up() {
  local m db
  pg_ha_packages
  mkdir -p "$PG_HA_DIR"
  printf 'scope: %s\netcd: {host: "%s:%s"}\n' "$PG_HA_SCOPE" "$HOST" "$PG_HA_ETCD_PORT" >"$PG_HA_DIR/patronictl.yml"
  pg_ha_etcd_up
  pg_ha_make_nodes
  for m in "${PG_HA_MEMBERS[@]}"; do pg_ha_start "$m"; done
  wait_for "$PG_HA_START_TIMEOUT" pg_ha_leader >/dev/null || die "postgres-ha: no leader within $PG_HA_START_TIMEOUT s; see $PG_HA_DIR/pg*.log"
  pg_ha_haproxy_up
  wait_for 20 pg_ha_writable || die "postgres-ha: $HOST:$PG_HA_PRIMARY_PORT does not lead to a writable primary"
  wait_for "$PG_HA_START_TIMEOUT" pg_ha_healthy || log "postgres-ha: not every member runs as a replica yet; see $PG_HA_DIR/pg*.log"
  # pg_admin's way in: the primary port, as postgres over TCP
  # shellcheck disable=SC2034 # pg_admin's (scripts/lib/postgres.sh)
  PG_ADMIN=()
  for db in "$DB_NAME" "$PG_HA_TEST_DB"; do PG_PORT=$PG_HA_PRIMARY_PORT DB_NAME=$db pg_ensure_app_db; done
  # shellcheck disable=SC2034
  PG_ADMIN=()
  pg_ha_status
}

# ----------------------------------------------------------------------- status and down
# one line per member, HAProxy's and etcd's; status 1 when the cluster is not healthy
pg_ha_status() {
  local i m pid how
  for i in "${!PG_HA_MEMBERS[@]}"; do
    m=${PG_HA_MEMBERS[i]} how=""
    if pid="$(pg_ha_patroni_pid "$m")"; then how="patroni pid $pid"; fi
    if pid="$(pg_ha_member_pid "$m")"; then how+="${how:+, }postmaster pid $pid"; fi
    printf '%-11s %-4s %-16s %-12s REST :%s%s\n' postgres-ha "$m" "$HOST:${PG_HA_PORTS[i]}" "$(pg_ha_role "$m")" \
      "${PG_HA_REST_PORTS[i]}" "${how:+; $how}"
  done
  how=down && pid="$(pg_ha_haproxy_pid)" && how="pid $pid, stats http://$HOST:$PG_HA_STATS_PORT/stats"
  printf '%-11s %-4s primary %s, replicas %s; %s\n' postgres-ha haproxy "$HOST:$PG_HA_PRIMARY_PORT" "$HOST:$PG_HA_REPLICA_PORT" "$how"
  how=down && pid="$(pg_ha_etcd_pid)" && how="pid $pid"
  printf '%-11s %-4s %s; %s; state in %s\n' postgres-ha etcd "$HOST:$PG_HA_ETCD_PORT" "$how" "$PG_HA_DIR"
  pg_ha_etcd_pid >/dev/null && pg_ha_haproxy_pid >/dev/null && pg_ha_healthy
}
# a member's Patroni, which stops its PostgreSQL, or a postmaster left without its Patroni (fast shutdown)
pg_ha_stop_member() {
  local pid
  if pid="$(pg_ha_patroni_pid "$1")"; then
    log "postgres-ha: stopping Patroni $1 (pid $pid) and its PostgreSQL"
    pg_ha_stop "$pid" 60 "postgres-ha: Patroni $1"
  fi
  if pid="$(pg_ha_member_pid "$1")"; then
    log "postgres-ha: stopping PostgreSQL $1 (pid $pid) left without its Patroni"
    pg_ha_stop "$pid" 30 "postgres-ha: PostgreSQL $1" INT
  fi
}
# pg_ha_down [--purge]: HAProxy, the replicas together, then the leader (so that it hands over to
# none of them), etcd; the data stays unless --purge
pg_ha_down() {
  local pid m leader="" rest
  if pid="$(pg_ha_haproxy_pid)"; then pg_ha_stop "$pid" 10 "postgres-ha: HAProxy"; fi
  read -r leader rest < <(pg_ha_leader) || true
  for m in "${PG_HA_MEMBERS[@]}"; do [[ $m == "$leader" ]] || pg_ha_stop_member "$m" & done
  wait
  [[ -z $leader ]] || pg_ha_stop_member "$leader"
  if pid="$(pg_ha_etcd_pid)"; then log "postgres-ha: stopping etcd (pid $pid)" && pg_ha_stop "$pid" 20 "postgres-ha: etcd"; fi
  if [[ ${1:-} == --purge && -d $PG_HA_DIR ]]; then
    log "postgres-ha: removing $PG_HA_DIR and the nodes' data"
    as_root rm -rf "$(pg_ha_nodes)"
    rm -rf "$PG_HA_DIR"
  fi
}
