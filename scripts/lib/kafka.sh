# shellcheck shell=bash disable=SC2153
# Shared by the project's scripts: KRaft Kafka brokers run from Kafka's own jars, a single node by
# default. The caller defines log, die, ROOT, HOST, JAVA and the broker's place:
#   KAFKA_PORT KAFKA_CONTROLLER_PORT KAFKA_PARTITIONS KAFKA_TOPICS (array) KAFKA_START_TIMEOUT
#   KAFKA_DIR (props, log, pid and data live there)
# and, for a node of a cluster (scripts/lib/kafka-cluster.sh), KAFKA_NODE_ID, KAFKA_VOTERS,
# KAFKA_CLUSTER_ID, KAFKA_REPLICATION and KAFKA_MIN_ISR, after which kafka_paths places its files.
# The jars are shared by every broker of the project, in .idem/kafka/libs.

KAFKA_VERSION=4.1.2
KAFKA_LIBS="$ROOT/.idem/kafka/libs"
KAFKA_POM="$ROOT/scripts/kafka/pom.xml"
DEPENDENCY_PLUGIN=org.apache.maven.plugins:maven-dependency-plugin:3.8.1
KAFKA_NODE_ID="${KAFKA_NODE_ID:-1}"
KAFKA_REPLICATION="${KAFKA_REPLICATION:-1}"
KAFKA_MIN_ISR="${KAFKA_MIN_ISR:-1}"

# Where the broker in KAFKA_DIR keeps its files.
kafka_paths() {
  KAFKA_DATA="$KAFKA_DIR/data"
  KAFKA_PROPS="$KAFKA_DIR/server.properties"
  KAFKA_LOG="$KAFKA_DIR/kafka.log"
  KAFKA_PID="$KAFKA_DIR/kafka.pid"
}
kafka_paths

# Runs a Kafka command-line class with the broker's jars, logging warnings only.
kafka_tool() {
  "$JAVA" -Xmx256m -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$KAFKA_LIBS/*" "$@" </dev/null
}

# pid of the broker this script started, if it still runs
kafka_our_pid() {
  pid_from_file "$KAFKA_PID" "kafka.Kafka $KAFKA_PROPS"
}

# Copies the broker's jars from Maven Central (via scripts/kafka/pom.xml) once,
# and again only when that pom changes.
kafka_libs() {
  local stamp want
  stamp="$KAFKA_LIBS/.pom.sha256"
  want="$(sha256sum "$KAFKA_POM" | cut -d' ' -f1)"
  if [[ -f $stamp && "$(cat "$stamp")" == "$want" ]]; then return 0; fi
  log "kafka: fetching Kafka $KAFKA_VERSION jars into ${KAFKA_LIBS#"$ROOT/"}"
  rm -rf "$KAFKA_LIBS.tmp"
  "$ROOT/mvnw" -B -q -f "$KAFKA_POM" "$DEPENDENCY_PLUGIN:copy-dependencies" \
    -DoutputDirectory="$KAFKA_LIBS.tmp" </dev/null 9>&-
  printf '%s\n' "$want" >"$KAFKA_LIBS.tmp/.pom.sha256"
  rm -rf "$KAFKA_LIBS"
  mv "$KAFKA_LIBS.tmp" "$KAFKA_LIBS"
}

# 16 random bytes, base64url without padding, as Kafka's Uuid.toString();
# StorageTool's argument parser rejects a value that starts with '-'.
kafka_cluster_id() {
  local id
  while :; do
    id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')"
    [[ $id != -* && ${#id} -eq 22 ]] && break
  done
  printf '%s\n' "$id"
}

kafka_write_props() {
  cat >"$KAFKA_PROPS" <<EOF
# Written by scripts/services.sh; rewritten at every start.
process.roles=broker,controller
node.id=$KAFKA_NODE_ID
controller.quorum.voters=${KAFKA_VOTERS:-$KAFKA_NODE_ID@$HOST:$KAFKA_CONTROLLER_PORT}
listeners=PLAINTEXT://$HOST:$KAFKA_PORT,CONTROLLER://$HOST:$KAFKA_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://$HOST:$KAFKA_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$KAFKA_DATA
offsets.topic.replication.factor=$KAFKA_REPLICATION
transaction.state.log.replication.factor=$KAFKA_REPLICATION
transaction.state.log.min.isr=$KAFKA_MIN_ISR
share.coordinator.state.topic.replication.factor=$KAFKA_REPLICATION
share.coordinator.state.topic.min.isr=$KAFKA_MIN_ISR
default.replication.factor=$KAFKA_REPLICATION
min.insync.replicas=$KAFKA_MIN_ISR
group.initial.rebalance.delay.ms=0
num.partitions=$KAFKA_PARTITIONS
auto.create.topics.enable=true
EOF
}

kafka_wait_started() {
  local pid=$1 i
  for ((i = 0; i < KAFKA_START_TIMEOUT * 2; i++)); do
    if grep -q 'Kafka Server started' "$KAFKA_LOG" 2>/dev/null; then return 0; fi
    if ! kill -0 "$pid" 2>/dev/null; then
      tail -n 40 "$KAFKA_LOG" >&2 || true
      die "kafka: broker exited during startup; see ${KAFKA_LOG#"$ROOT/"}"
    fi
    sleep 0.5
  done
  tail -n 40 "$KAFKA_LOG" >&2 || true
  die "kafka: broker not started within $KAFKA_START_TIMEOUT s; see ${KAFKA_LOG#"$ROOT/"}"
}

kafka_start() {
  kafka_spawn
  kafka_wait_started "$KAFKA_SPAWNED"
  log "kafka: broker started (pid $KAFKA_SPAWNED)"
}

# Starts the broker and sets KAFKA_SPAWNED to its pid, without waiting for it to serve: the
# nodes of a cluster serve only once a majority of them runs.
kafka_spawn() {
  command -v "$JAVA" >/dev/null 2>&1 || die "kafka: java not found (set JAVA_HOME or put java on PATH)"
  port_open "$KAFKA_CONTROLLER_PORT" && die "kafka: controller port $HOST:$KAFKA_CONTROLLER_PORT is already taken"
  mkdir -p "$KAFKA_DIR"
  kafka_libs
  kafka_write_props
  if [[ ! -f $KAFKA_DATA/meta.properties ]]; then
    local id
    id="${KAFKA_CLUSTER_ID:-$(kafka_cluster_id)}"
    log "kafka: formatting ${KAFKA_DATA#"$ROOT/"} (cluster id $id)"
    rm -rf "$KAFKA_DATA"
    kafka_tool kafka.tools.StorageTool format --cluster-id "$id" --config "$KAFKA_PROPS" >/dev/null
  fi
  [[ -f $KAFKA_LOG ]] && mv -f "$KAFKA_LOG" "$KAFKA_LOG.prev"
  rm -f "$KAFKA_PID"
  log "kafka: starting broker $KAFKA_VERSION on $HOST:$KAFKA_PORT (log ${KAFKA_LOG#"$ROOT/"})"
  (cd "$KAFKA_DIR" && spawn_detached "$KAFKA_PID" "$KAFKA_LOG" "$JAVA" "-Xmx${KAFKA_HEAP:-512m}" \
    -Dorg.slf4j.simpleLogger.showDateTime=true "-Dorg.slf4j.simpleLogger.dateTimeFormat=yyyy-MM-dd'T'HH:mm:ss.SSS" \
    -cp "$KAFKA_LIBS/*" kafka.Kafka "$KAFKA_PROPS")
  local pid="" i
  for ((i = 0; i < 20; i++)); do
    [[ -s $KAFKA_PID ]] && read -r pid <"$KAFKA_PID" && [[ -n $pid ]] && break
    sleep 0.25
  done
  [[ -n $pid ]] || die "kafka: broker did not start; see ${KAFKA_LOG#"$ROOT/"}"
  KAFKA_SPAWNED=$pid
}

kafka_topics() {
  local existing topic
  existing="$(kafka_tool org.apache.kafka.tools.TopicCommand --bootstrap-server "${KAFKA_BOOTSTRAP:-$HOST:$KAFKA_PORT}" --list)" ||
    die "kafka: cannot list topics on ${KAFKA_BOOTSTRAP:-$HOST:$KAFKA_PORT}"
  for topic in "${KAFKA_TOPICS[@]}"; do
    if ! grep -qxF -- "$topic" <<<"$existing"; then
      log "kafka: creating topic $topic ($KAFKA_PARTITIONS partitions)"
      kafka_tool org.apache.kafka.tools.TopicCommand --bootstrap-server "${KAFKA_BOOTSTRAP:-$HOST:$KAFKA_PORT}" \
        --create --if-not-exists --topic "$topic" \
        --partitions "$KAFKA_PARTITIONS" --replication-factor "$KAFKA_REPLICATION" >/dev/null
    fi
  done
}

