# shellcheck shell=bash
# Shared by the project's scripts: stopping a process they started. The caller defines log.

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
