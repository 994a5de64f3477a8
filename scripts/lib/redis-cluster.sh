# shellcheck shell=bash
# A Redis Cluster of the project's own on loopback, for the tests that run idem against one:
# three masters and a replica of each (Debian's redis-server in cluster mode), nodes on
# REDIS_CLUSTER_PORTS, each with its redis.conf and cluster state in $REDIS_CLUSTER_DIR/<port>/,
# nothing else on disk. A node is (re)started with `redis-server <its dir>/redis.conf`.
# The caller defines log, die, HOST and CLUSTER_STATE (scripts/services.sh).

REDIS_CLUSTER_PORTS=(7001 7002 7003 7004 7005 7006)
REDIS_CLUSTER_DIR="$CLUSTER_STATE/redis-cluster"

redis_cluster_state() {
  timeout 5 redis-cli -h "$HOST" -p "$1" cluster info 2>/dev/null </dev/null |
    tr -d '\r' | awk -F: '$1 == "cluster_state" { print $2 }'
}

# The ports of the masters that own slots and are not failing, as node PORT sees them.
redis_cluster_masters() {
  timeout 5 redis-cli -h "$HOST" -p "$1" cluster nodes 2>/dev/null </dev/null |
    awk '$3 ~ /master/ && $3 !~ /fail/ && NF > 8 { split($2, a, "[:@]"); print a[2] }'
}

# Node PORT says the cluster is ok and sees three masters that own slots.
redis_cluster_serving() {
  [[ "$(redis_cluster_state "$1")" == ok && "$(redis_cluster_masters "$1" | wc -l)" -eq 3 ]]
}

# ok on every node, with three masters that own slots
redis_cluster_ok() {
  local port
  for port in "${REDIS_CLUSTER_PORTS[@]}"; do
    [[ "$(redis_cluster_state "$port")" == ok ]] || return 1
  done
  redis_cluster_serving "${REDIS_CLUSTER_PORTS[0]}"
}

# redis://host:port,... of every node, as quarkus.redis.hosts takes a cluster
redis_cluster_hosts() {
  local port hosts=()
  for port in "${REDIS_CLUSTER_PORTS[@]}"; do hosts+=("redis://$HOST:$port"); done
  (IFS=,; printf '%s\n' "${hosts[*]}")
}

redis_cluster_node_start() {
  local port=$1 dir="$REDIS_CLUSTER_DIR/$1"
  mkdir -p "$dir"
  cat >"$dir/redis.conf" <<CONF
bind $HOST
port $port
daemonize yes
cluster-enabled yes
cluster-config-file $dir/nodes.conf
cluster-node-timeout 2000
save ""
appendonly no
dir $dir
logfile $dir/redis.log
pidfile $dir/redis.pid
CONF
  redis-server "$dir/redis.conf" </dev/null 9>&-
}

redis_cluster_node_pid() {
  local pid file="$REDIS_CLUSTER_DIR/$1/redis.pid"
  [[ -f $file ]] || return 1
  read -r pid <"$file" || return 1
  [[ $pid =~ ^[0-9]+$ && -r /proc/$pid/comm && "$(cat "/proc/$pid/comm")" == redis-server* ]] || return 1
  printf '%s\n' "$pid"
}

redis_cluster_up() {
  command -v redis-server >/dev/null 2>&1 || apt_install redis-server redis-tools
  local port
  if redis_cluster_ok; then
    log "redis cluster: up on $HOST:${REDIS_CLUSTER_PORTS[0]}..${REDIS_CLUSTER_PORTS[-1]}"
    return 0
  fi
  # nodes a test stopped come back on their own state and rejoin
  if [[ -f $REDIS_CLUSTER_DIR/created ]]; then
    for port in "${REDIS_CLUSTER_PORTS[@]}"; do
      redis_cluster_node_pid "$port" >/dev/null || redis_cluster_node_start "$port"
    done
    if wait_for 20 redis_cluster_ok; then
      log "redis cluster: nodes restarted on their state"
      return 0
    fi
    log "redis cluster: not healthy on its state; making it afresh"
  fi
  redis_cluster_down
  rm -rf "$REDIS_CLUSTER_DIR"
  for port in "${REDIS_CLUSTER_PORTS[@]}"; do
    port_open "$port" && die "redis cluster: something else listens on $HOST:$port"
    redis_cluster_node_start "$port"
  done
  for port in "${REDIS_CLUSTER_PORTS[@]}"; do
    REDIS_PORT=$port wait_for 20 redis_ping || die "redis cluster: node $port does not answer; see $REDIS_CLUSTER_DIR/$port/redis.log"
  done
  local nodes=()
  for port in "${REDIS_CLUSTER_PORTS[@]}"; do nodes+=("$HOST:$port"); done
  log "redis cluster: creating 3 masters with a replica each on ${nodes[*]}"
  redis-cli --cluster create "${nodes[@]}" --cluster-replicas 1 --cluster-yes >"$REDIS_CLUSTER_DIR/create.log" 2>&1 </dev/null ||
    die "redis cluster: creation failed; see $REDIS_CLUSTER_DIR/create.log"
  wait_for 30 redis_cluster_ok || die "redis cluster: not ok 30 s after its creation"
  : >"$REDIS_CLUSTER_DIR/created"
}

redis_cluster_down() {
  local port pid
  for port in "${REDIS_CLUSTER_PORTS[@]}"; do
    if pid="$(redis_cluster_node_pid "$port")"; then
      stop_pid "$pid" 10 "redis cluster: node $port"
    fi
  done
}
