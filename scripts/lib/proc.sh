# shellcheck shell=bash
# Shared by the project's scripts: waiting for ports and stopping processes they started. The
# caller defines log and HOST.

# True when something accepts TCP connections on HOST:port.
port_open() {
  (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null
}

# Seconds-bounded wait: wait_for <seconds> <command...>
wait_for() {
  local seconds=$1 i
  shift
  for ((i = 0; i < seconds * 2; i++)); do
    if "$@"; then return 0; fi
    sleep 0.5
  done
  "$@"
}

# stop_pid PID SECONDS LABEL: SIGTERM, wait up to SECONDS for it to go, then SIGKILL.
stop_pid() {
  local pid=$1 seconds=$2 label=$3 i
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < seconds * 2; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.5
  done
  if kill -0 "$pid" 2>/dev/null; then
    log "$label still running after $seconds s; killing it"
    kill -KILL "$pid" 2>/dev/null || true
  fi
}
