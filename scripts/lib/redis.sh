# shellcheck shell=bash
# Shared by the project's scripts: a Redis server of their own. The caller defines log, die,
# HOST, REDIS_PORT and REDIS_DIR (where the server's pid file, log and mark live).

redis_ping() {
  local reply=""
  if command -v redis-cli >/dev/null 2>&1; then
    reply="$(timeout 5 redis-cli -h "$HOST" -p "$REDIS_PORT" ping 2>/dev/null </dev/null)" || return 1
    [[ $reply == PONG ]]
  else
    (
      exec 3<>"/dev/tcp/$HOST/$REDIS_PORT" || exit 1
      printf 'PING\r\n' >&3
      IFS= read -r -t 3 reply <&3 || exit 1
      [[ $reply == "+PONG"* ]]
    ) 2>/dev/null
  fi
}

# pid of the redis-server this script started, if it still runs
redis_our_pid() {
  local pid
  [[ -f $REDIS_DIR/started-by-idem && -f $REDIS_DIR/redis.pid ]] || return 1
  read -r pid <"$REDIS_DIR/redis.pid" || return 1
  [[ $pid =~ ^[0-9]+$ && -r /proc/$pid/comm ]] || return 1
  [[ "$(cat "/proc/$pid/comm")" == redis-server* ]] || return 1
  printf '%s\n' "$pid"
}


# Starts redis-server in the background on HOST:REDIS_PORT, keeping nothing on disk, and marks it
# as ours. Returns once it answers PING.
redis_spawn() {
  mkdir -p "$REDIS_DIR"
  redis-server --daemonize yes --bind "$HOST" --port "$REDIS_PORT" --save '' --appendonly no \
    --dir "$REDIS_DIR" --logfile "$REDIS_DIR/redis.log" --pidfile "$REDIS_DIR/redis.pid" \
    </dev/null 9>&-
  : >"$REDIS_DIR/started-by-idem"
  wait_for 20 redis_ping || die "redis: no PONG on $HOST:$REDIS_PORT within 20 s; see $REDIS_DIR/redis.log"
}
