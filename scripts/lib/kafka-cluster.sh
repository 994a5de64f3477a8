# shellcheck shell=bash
# A three-broker KRaft Kafka cluster of the project's own on loopback, for the tests that run idem
# against replicated topics: every node broker and controller, brokers on KAFKA_CLUSTER_PORTS,
# controllers on KAFKA_CLUSTER_CONTROLLER_PORTS, its topics with replication factor 3 and
# min.insync.replicas 2. Node n lives in $KAFKA_CLUSTER_DIR/<n>/ (props, log, pid, data), the jars
# it runs in $KAFKA_CLUSTER_DIR/libs (a copy: the cluster outlives the checkout that started it); a
# node that is down is started again on its data by `kafka_cluster_up`. The caller defines what
# scripts/lib/kafka.sh needs but the broker's place, which this sets per node, and CLUSTER_STATE.

KAFKA_CLUSTER_PORTS=(29092 29093 29094)
KAFKA_CLUSTER_CONTROLLER_PORTS=(29192 29193 29194)
KAFKA_CLUSTER_DIR="$CLUSTER_STATE/kafka-cluster"

kafka_cluster_voters() {
  local n voters=()
  for n in 1 2 3; do voters+=("$n@$HOST:${KAFKA_CLUSTER_CONTROLLER_PORTS[n - 1]}"); done
  (IFS=,; printf '%s\n' "${voters[*]}")
}

kafka_cluster_bootstrap() {
  local port hosts=()
  for port in "${KAFKA_CLUSTER_PORTS[@]}"; do hosts+=("$HOST:$port"); done
  (IFS=,; printf '%s\n' "${hosts[*]}")
}

# Sets kafka.sh's variables for node n (1, 2 or 3).
kafka_cluster_node() {
  KAFKA_NODE_ID=$1
  KAFKA_PORT=${KAFKA_CLUSTER_PORTS[$1 - 1]}
  KAFKA_CONTROLLER_PORT=${KAFKA_CLUSTER_CONTROLLER_PORTS[$1 - 1]}
  KAFKA_DIR="$KAFKA_CLUSTER_DIR/$1"
  KAFKA_VOTERS="$(kafka_cluster_voters)"
  KAFKA_REPLICATION=3
  KAFKA_MIN_ISR=2
  KAFKA_HEAP=384m
  KAFKA_LIBS="$KAFKA_CLUSTER_DIR/libs"
  kafka_paths
}

# The project's Kafka jars copied beside the cluster, again when they change.
kafka_cluster_libs() {
  local ours="$ROOT/.idem/kafka/libs"
  [[ -f $ours/.pom.sha256 ]] || kafka_libs
  if ! cmp -s "$ours/.pom.sha256" "$KAFKA_CLUSTER_DIR/libs/.pom.sha256"; then
    rm -rf "$KAFKA_CLUSTER_DIR/libs.tmp"
    cp -a "$ours" "$KAFKA_CLUSTER_DIR/libs.tmp"
    rm -rf "$KAFKA_CLUSTER_DIR/libs"
    mv "$KAFKA_CLUSTER_DIR/libs.tmp" "$KAFKA_CLUSTER_DIR/libs"
  fi
}

kafka_cluster_up() {
  local n pids=() started=()
  mkdir -p "$KAFKA_CLUSTER_DIR"
  kafka_cluster_libs
  [[ -s $KAFKA_CLUSTER_DIR/cluster-id ]] || kafka_cluster_id >"$KAFKA_CLUSTER_DIR/cluster-id"
  KAFKA_CLUSTER_ID="$(cat "$KAFKA_CLUSTER_DIR/cluster-id")"
  for n in 1 2 3; do
    kafka_cluster_node "$n"
    if pid="$(kafka_our_pid)"; then
      pids[n]=$pid
    else
      port_open "$KAFKA_PORT" && die "kafka cluster: something else listens on $HOST:$KAFKA_PORT"
      kafka_spawn
      pids[n]=$KAFKA_SPAWNED
      started+=("$n")
    fi
  done
  for n in 1 2 3; do
    kafka_cluster_node "$n"
    kafka_wait_started "${pids[n]}"
  done
  ((${#started[@]} == 0)) || log "kafka cluster: started node(s) ${started[*]} ($(kafka_cluster_bootstrap))"
  kafka_cluster_node 1
  KAFKA_BOOTSTRAP="$(kafka_cluster_bootstrap)" kafka_topics
}

kafka_cluster_down() {
  local n pid
  for n in 1 2 3; do
    kafka_cluster_node "$n"
    if pid="$(kafka_our_pid)"; then stop_pid "$pid" 60 "kafka cluster: node $n"; fi
  done
}
