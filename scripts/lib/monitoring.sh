# shellcheck shell=bash
# Shared by the project's scripts: Prometheus and Alertmanager from Debian's packages, run as the
# project's own processes with the rules and the routing of deploy/prometheus/. The caller defines
# log, die, ROOT, HOST and where they run:
#   MONITORING_DIR (configuration, data, logs, pid files), PROMETHEUS_PORT, ALERTMANAGER_PORT,
#   MONITOR_TARGETS (idem instances, comma-separated host:port), MONITOR_INTERVAL (scrape and
#   evaluation) and ALERT_WEBHOOK (where notifications go; empty: nowhere).

MONITORING_RULES="$ROOT/deploy/prometheus"

# Debian's packages start services of their own where systemd runs, on the ports and with the
# configuration of a machine-wide Prometheus; those installed here are stopped and disabled, since
# the project runs its own. Without recommends: no node exporter.
monitoring_install() {
  command -v prometheus >/dev/null 2>&1 && command -v prometheus-alertmanager >/dev/null 2>&1 && return 0
  apt_install --no-install-recommends prometheus prometheus-alertmanager
  if [[ -d /run/systemd/system ]]; then
    as_root systemctl disable --now prometheus prometheus-alertmanager >&2 9>&- || true
  fi
}

# promtool's tests of the rules and amtool's check of the routing (./idem test)
monitoring_check() {
  monitoring_install
  (cd "$MONITORING_RULES" && promtool test rules alerts.test.yml) &&
    amtool check-config "$MONITORING_RULES/alertmanager.yml" >/dev/null
}

# pid of prometheus or alertmanager started in MONITORING_DIR, if it still runs
monitoring_pid() {
  local pid
  [[ -f $MONITORING_DIR/$1.pid ]] || return 1
  read -r pid <"$MONITORING_DIR/$1.pid" || return 1
  [[ $pid =~ ^[0-9]+$ && -r /proc/$pid/cmdline ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "--config.file=$MONITORING_DIR/$1.yml" || return 1
  printf '%s\n' "$pid"
}

monitoring_ready() { curl -fsS -o /dev/null --max-time 2 "http://$HOST:$1/-/ready" 2>/dev/null; }

monitoring_config() {
  local targets
  targets="${MONITOR_TARGETS// /}"
  targets="\"${targets//,/\", \"}\""
  cat >"$MONITORING_DIR/prometheus.yml" <<EOF
# Written by scripts/lib/monitoring.sh at every start.
global:
  scrape_interval: $MONITOR_INTERVAL
  evaluation_interval: $MONITOR_INTERVAL
rule_files: ["$MONITORING_RULES/alerts.yml"]
alerting:
  alertmanagers:
    - static_configs: [{targets: ["$HOST:$ALERTMANAGER_PORT"]}]
scrape_configs:
  - job_name: idem
    metrics_path: /q/metrics
    static_configs: [{targets: [$targets]}]
EOF
  cp "$MONITORING_RULES/alertmanager.yml" "$MONITORING_DIR/alertmanager.yml"
  if [[ -n $ALERT_WEBHOOK ]]; then
    printf "    webhook_configs:\n      - url: '%s'\n" "${ALERT_WEBHOOK//\'/\'\'}" >>"$MONITORING_DIR/alertmanager.yml"
  fi
  promtool check config "$MONITORING_DIR/prometheus.yml" >/dev/null &&
    amtool check-config "$MONITORING_DIR/alertmanager.yml" >/dev/null ||
    die "monitoring: the configuration written in ${MONITORING_DIR#"$ROOT/"} does not hold"
}

# monitoring_start NAME PORT COMMAND...: started when missing, told to read its configuration again
# when running (SIGHUP), answering /-/ready either way
monitoring_start() {
  local name=$1 port=$2 pid
  shift 2
  if pid="$(monitoring_pid "$name")"; then
    kill -HUP "$pid"
    log "monitoring: $name on $HOST:$port (pid $pid) reads its configuration again"
  else
    port_open "$port" && die "monitoring: $HOST:$port is taken by a server this script did not start"
    spawn_detached "$MONITORING_DIR/$name.pid" "$MONITORING_DIR/$name.log" "$@"
    log "monitoring: $name starting on $HOST:$port (log ${MONITORING_DIR#"$ROOT/"}/$name.log)"
  fi
  wait_for 30 monitoring_ready "$port" || die "monitoring: $name not ready within 30 s; see $MONITORING_DIR/$name.log"
}

monitoring_up() {
  need_commands curl
  monitoring_install
  mkdir -p "$MONITORING_DIR"
  monitoring_config
  monitoring_start alertmanager "$ALERTMANAGER_PORT" prometheus-alertmanager \
    --config.file="$MONITORING_DIR/alertmanager.yml" --storage.path="$MONITORING_DIR/alertmanager-data" \
    --web.listen-address="$HOST:$ALERTMANAGER_PORT" --cluster.listen-address=
  monitoring_start prometheus "$PROMETHEUS_PORT" prometheus \
    --config.file="$MONITORING_DIR/prometheus.yml" --storage.tsdb.path="$MONITORING_DIR/prometheus-data" \
    --web.listen-address="$HOST:$PROMETHEUS_PORT"
  log "monitoring: Prometheus http://$HOST:$PROMETHEUS_PORT scrapes $MONITOR_TARGETS every $MONITOR_INTERVAL;" \
    "Alertmanager http://$HOST:$ALERTMANAGER_PORT${ALERT_WEBHOOK:+ notifies $ALERT_WEBHOOK}"
}

monitoring_down() {
  local name pid
  for name in prometheus alertmanager; do
    if pid="$(monitoring_pid "$name")"; then
      log "monitoring: stopping $name (pid $pid)"
      stop_pid "$pid" 30 "monitoring: $name"
    fi
    rm -f "$MONITORING_DIR/$name.pid"
  done
}
