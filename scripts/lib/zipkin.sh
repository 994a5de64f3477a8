# shellcheck shell=bash
# Shared by the project's scripts: a Zipkin server (Maven Central's io.zipkin:zipkin-server exec jar,
# spans in memory) on HOST:ZIPKIN_PORT, where `./idem run` and the tests send their traces. The
# caller defines log, die, ROOT, HOST, JAVA and STATE.

ZIPKIN_VERSION=3.5.1
ZIPKIN_PORT=9411
ZIPKIN_DIR="$STATE/zipkin"
ZIPKIN_JAR="$ZIPKIN_DIR/zipkin-server-$ZIPKIN_VERSION-exec.jar"

zipkin_healthy() {
  curl -fsS -m 10 "http://$HOST:$ZIPKIN_PORT/health" >/dev/null 2>&1
}

zipkin_our_pid() {
  pid_from_file "$ZIPKIN_DIR/zipkin.pid" "$ZIPKIN_JAR"
}

zipkin_up() {
  if port_open "$ZIPKIN_PORT"; then
    # a busy Zipkin (a bench's spans) can take a while to answer its health check
    wait_for 30 zipkin_healthy || die "zipkin: something that is not a healthy Zipkin listens on $HOST:$ZIPKIN_PORT"
    log "zipkin: reusing the server on $HOST:$ZIPKIN_PORT"
    return 0
  fi
  mkdir -p "$ZIPKIN_DIR"
  if [[ ! -f $ZIPKIN_JAR ]]; then
    log "zipkin: fetching io.zipkin:zipkin-server:$ZIPKIN_VERSION (exec jar) from Maven Central"
    "$ROOT/mvnw" -B -q org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
      -Dartifact="io.zipkin:zipkin-server:$ZIPKIN_VERSION:jar:exec" -DoutputDirectory="$ZIPKIN_DIR" </dev/null 9>&- ||
      die "zipkin: could not fetch its jar"
  fi
  log "zipkin: starting on $HOST:$ZIPKIN_PORT (spans kept in memory; log ${ZIPKIN_DIR#"$ROOT/"}/zipkin.log)"
  # the newest 100,000 spans in 768 MB: a benchmark sampling every delivery sends thousands a second,
  # and Zipkin's default of 500,000 outgrows any small heap
  spawn_detached "$ZIPKIN_DIR/zipkin.pid" "$ZIPKIN_DIR/zipkin.log" "$JAVA" -Xms64m -Xmx768m -jar "$ZIPKIN_JAR" \
    "--armeria.ports[0].port=$ZIPKIN_PORT" "--armeria.ports[0].ip=$HOST" "--armeria.ports[0].protocols=http" \
    --zipkin.storage.mem.max-spans=100000
  wait_for 90 zipkin_healthy || die "zipkin: not healthy on $HOST:$ZIPKIN_PORT within 90 s; see $ZIPKIN_DIR/zipkin.log"
  log "zipkin: up; traces at http://$HOST:$ZIPKIN_PORT/zipkin/, spans to http://$HOST:$ZIPKIN_PORT/api/v2/spans"
}

zipkin_down() {
  local pid
  if pid="$(zipkin_our_pid)"; then
    log "zipkin: stopping (pid $pid)"
    stop_pid "$pid" 30 "zipkin"
  fi
  rm -f "$ZIPKIN_DIR/zipkin.pid"
}
