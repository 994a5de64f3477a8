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

# spawn_detached PIDFILE LOG COMMAND...: COMMAND in a session of its own that outlives the caller,
# its output appended to LOG. The inner shell writes its own pid to PIDFILE, then becomes COMMAND:
# the pid file names it even if setsid has to fork.
spawn_detached() {
  local pid_file=$1 log_file=$2
  shift 2
  # shellcheck disable=SC2016
  (setsid nohup bash -c 'echo $$ >"$0"; exec "$@"' "$pid_file" "$@" </dev/null >>"$log_file" 2>&1 9>&- &)
}

# The pid in file $1 while its process's command line still holds $2 (so a reused pid is not taken
# for ours); fails otherwise.
pid_from_file() {
  local pid
  [[ -f $1 ]] || return 1
  read -r pid <"$1" || return 1
  [[ $pid =~ ^[0-9]+$ && -r /proc/$pid/cmdline ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$2" || return 1
  printf '%s\n' "$pid"
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
