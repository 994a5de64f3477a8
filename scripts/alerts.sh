#!/usr/bin/env bash
# The alerts' live check (./idem chaos alerts): Prometheus, scraping a running idem, fires
# IdemPaymentAnomaly and IdemDeadLetters, and Alertmanager makes one notification of many anomalies.
#
# It runs beside whatever else uses the servers of `./idem services up` (started when missing):
#   idem          the packaged jar (built first unless ALERTS_BUILD=0) on 127.0.0.1:$ALERTS_PORT
#                 (18085), prod profile, database idem_alerts made afresh, Redis database 8, topics
#                 and consumer groups named after the run
#   monitoring    Prometheus :19190 and Alertmanager :19193 (scripts/lib/monitoring.sh) with the
#                 shipped rules and routing, state in .idem/alerts/
#   a webhook     on :19194, which keeps each notification Alertmanager sends
# Then $ALERTS_ANOMALIES signed callbacks whose amount is not the order's, half before the alert
# and half after, and one malformed record on the run's payment-callbacks topic. PASS or FAIL per
# step; exit 1 on a FAIL. Everything it started, its database and its topics go at the end.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

LOG_NAME="idem alerts"
# shellcheck source=scripts/lib/base.sh
source "$ROOT/scripts/lib/base.sh"
# shellcheck source=scripts/lib/http.sh
source "$ROOT/scripts/lib/http.sh"
HOST=127.0.0.1
STATE="$ROOT/.idem/alerts"
PORT="${ALERTS_PORT:-18085}"
ANOMALIES="${ALERTS_ANOMALIES:-20}"
SECRET="alerts-callback-secret"
RUN="idem-alerts-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')"
URL="http://$HOST:$PORT"

PG_PORT=5432
# shellcheck source=scripts/lib/postgres.sh
source "$ROOT/scripts/lib/postgres.sh"
KAFKA_PORT=9092
KAFKA_DIR="$ROOT/.idem/kafka"
KAFKA_PARTITIONS=4
KAFKA_TOPICS=("$RUN-callbacks" "$RUN-callbacks-dlq" "$RUN-grants" "$RUN-grants-dlq")
# shellcheck source=scripts/lib/kafka.sh
source "$ROOT/scripts/lib/kafka.sh"
MONITORING_DIR="$STATE/monitoring"
PROMETHEUS_PORT=19190
ALERTMANAGER_PORT=19193
WEBHOOK_PORT=19194
MONITOR_TARGETS="$HOST:$PORT"
MONITOR_INTERVAL=5s
ALERT_WEBHOOK="http://$HOST:$WEBHOOK_PORT/"
# shellcheck source=scripts/lib/monitoring.sh
source "$ROOT/scripts/lib/monitoring.sh"

FAILED=0
T0=$SECONDS
pass() { printf 'PASS %3ds  %s\n' "$((SECONDS - T0))" "$*"; }
# expect WHAT COMMAND...: PASS WHAT when COMMAND succeeds, else FAIL WHAT
expect() {
  local what=$1
  shift
  if "$@"; then
    pass "$what"
  else
    printf 'FAIL %3ds  %s\n' "$((SECONDS - T0))" "$what"
    FAILED=1
  fi
}

stop() {
  local pid
  [[ -f $STATE/$1.pid ]] && read -r pid <"$STATE/$1.pid" && kill -0 "$pid" 2>/dev/null && stop_pid "$pid" 30 "$1"
  rm -f "$STATE/$1.pid"
}

cleanup() {
  stop idem
  monitoring_down
  stop webhook
  pg_admin -c "drop database if exists idem_alerts with (force)" >/dev/null 2>&1 || true
  kafka_tool org.apache.kafka.tools.TopicCommand --bootstrap-server "$HOST:$KAFKA_PORT" --delete \
    --topic "$RUN-.*" >/dev/null 2>&1 || true
  kafka_tool org.apache.kafka.tools.consumer.group.ConsumerGroupCommand --bootstrap-server "$HOST:$KAFKA_PORT" \
    --delete --group "$RUN-callbacks" --group "$RUN-grants" >/dev/null 2>&1 || true
}

# Each request body Alertmanager posts, on a line of its own in $STATE/notifications.
webhook_start() {
  : >"$STATE/notifications"
  spawn_detached "$STATE/webhook.pid" "$STATE/webhook.log" python3 -c '
import http.server, sys
class Keep(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        with open(sys.argv[2], "ab") as out:
            out.write(body.replace(b"\n", b" ") + b"\n")
        self.send_response(200)
        self.end_headers()
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Keep).serve_forever()
' "$WEBHOOK_PORT" "$STATE/notifications"
  wait_for 10 port_open "$WEBHOOK_PORT" || die "webhook: not listening on $HOST:$WEBHOOK_PORT"
}

idem_ready() { curl -fsS -o /dev/null --max-time 2 "$URL/q/health/ready" 2>/dev/null; }

idem_start() {
  port_open "$PORT" && die "$HOST:$PORT is taken; choose another with ALERTS_PORT"
  spawn_detached "$STATE/idem.pid" "$STATE/idem.log" env -u QUARKUS_PROFILE \
    QUARKUS_HTTP_PORT="$PORT" \
    QUARKUS_DATASOURCE_REACTIVE_URL="postgresql://$HOST:$PG_PORT/idem_alerts" \
    QUARKUS_REDIS_HOSTS="redis://$HOST:6379/8" \
    KAFKA_BOOTSTRAP_SERVERS="$HOST:$KAFKA_PORT" \
    IDEM_CALLBACK_SECRET="$SECRET" IDEM_ADMIN_TOKEN="$RUN" \
    MP_MESSAGING_INCOMING_PAYMENT_CALLBACKS_TOPIC="$RUN-callbacks" \
    MP_MESSAGING_INCOMING_PAYMENT_CALLBACKS_GROUP_ID="$RUN-callbacks" \
    MP_MESSAGING_INCOMING_PAYMENT_CALLBACKS_AUTO_OFFSET_RESET=earliest \
    MP_MESSAGING_INCOMING_COUPON_GRANTS_TOPIC="$RUN-grants" \
    MP_MESSAGING_INCOMING_COUPON_GRANTS_GROUP_ID="$RUN-grants" \
    MP_MESSAGING_OUTGOING_OUTBOX_TOPIC="$RUN-grants" \
    "$JAVA" -Xmx512m -jar target/quarkus-app/quarkus-run.jar
  wait_for 120 idem_ready ||
    die "idem: not ready on $URL within 120 s; see ${STATE#"$ROOT/"}/idem.log"
}

# anomalies FROM TO: signed callbacks for $ORDER paying 1 cent of its 1999, each a trade of its own
anomalies() {
  local i ts body status
  for ((i = $1; i < $2; i++)); do
    body="{\"tradeNo\":\"T-$RUN-$i\",\"orderId\":\"$ORDER\",\"amountCents\":1,\"status\":\"SUCCESS\",\"paidAt\":\"$(date -u +%Y-%m-%dT%H:%M:%SZ)\"}"
    ts="$(date +%s)"
    status="$(http "$STATE/callback" -X POST -H 'Content-Type: application/json' -H "X-Pay-Timestamp: $ts" \
      -H "X-Pay-Signature: $(hmac_hex "$SECRET" "$ts.$body")" --data-binary "$body" "$URL/api/payments/callback")"
    [[ $status == 200 && "$(json_field "$STATE/callback" .anomaly)" == AMOUNT_MISMATCH ]] ||
      die "callback $i answered $status: $(cat "$STATE/callback.body")"
  done
}

# prometheus PATH JQ-FILTER: what Prometheus' API answers, through the filter
prometheus() { curl -fsS --max-time 5 "http://$HOST:$PROMETHEUS_PORT$1" 2>/dev/null | jq -r "$2"; }

# firing NAME: Prometheus has the alert NAME firing
firing() {
  [[ "$(prometheus /api/v1/alerts "any(.data.alerts[]; .labels.alertname == \"$1\" and .state == \"firing\")")" == true ]]
}

# notified NAME: how many notifications of the group of alert NAME the webhook received
notified() { jq -s --arg name "$1" '[.[] | select(.groupLabels.alertname == $name)] | length' "$STATE/notifications"; }
notified_at_all() { (("$(notified "$1")" > 0)); }
one_notification() { wait_for 60 notified_at_all IdemPaymentAnomaly && sleep 5 && (("$(notified IdemPaymentAnomaly)" == 1)); }

one_group() {
  [[ "$(curl -fsS --max-time 5 "http://$HOST:$ALERTMANAGER_PORT/api/v2/alerts/groups" |
    jq '[.[] | select(.labels.alertname == "IdemPaymentAnomaly")] | length')" == 1 ]]
}

nothing_else() {
  [[ -z "$(prometheus /api/v1/alerts '.data.alerts[] | select(.labels.alertname | test("^Idem(PaymentAnomaly|DeadLetters)$") | not)')" &&
    "$(prometheus '/api/v1/query?query=idem_ready' '.data.result[0].value[1]')" == 1 ]]
}

need_commands curl jq openssl python3
mkdir -p "$STATE"
exec 8>"$STATE/.lock"
flock -n 8 || die "another alerts check is running (.idem/alerts/.lock)"
bash "$ROOT/scripts/services.sh" up 8>&-
if [[ ${ALERTS_BUILD:-1} == 1 ]]; then
  log "building the service"
  install_extension 8>&-
  ./mvnw -B -q -DskipTests package 8>&-
fi
trap 'cleanup 8>&-' EXIT
trap 'exit 130' INT TERM
T0=$SECONDS
PGOPTIONS="-c client_min_messages=warning" pg_admin -c "drop database if exists idem_alerts with (force)" \
  -c "create database idem_alerts owner idem" >/dev/null
redis-cli -h "$HOST" -n 8 flushdb >/dev/null
kafka_topics 8>&-
webhook_start 8>&-
idem_start 8>&-
# Alertmanager made afresh: its notification log would hold this run's alerts, labelled as the last
# run's were, as already sent
rm -rf "$MONITORING_DIR"
monitoring_up 8>&-
pass "idem ready on $URL, scraped by Prometheus :$PROMETHEUS_PORT, Alertmanager :$ALERTMANAGER_PORT"

status="$(http "$STATE/order" -X POST -H "X-User-Id: $RUN" -H "Idempotency-Key: $RUN" \
  -H 'Content-Type: application/json' --data '{"amountCents":1999,"currency":"CNY"}' "$URL/api/orders")"
ORDER="$(json_field "$STATE/order" .orderId)"
[[ $status == 201 && -n $ORDER ]] || die "POST /api/orders answered $status: $(cat "$STATE/order.body")"
anomalies 0 $((ANOMALIES / 2))
printf '{"tradeNo":' | "$JAVA" -Xmx256m -cp "$KAFKA_LIBS/*" org.apache.kafka.tools.ConsoleProducer \
  --bootstrap-server "$HOST:$KAFKA_PORT" --topic "$RUN-callbacks" >/dev/null 2>&1
pass "sent $((ANOMALIES / 2)) callbacks answered AMOUNT_MISMATCH and a malformed record to $RUN-callbacks"

for alert in IdemPaymentAnomaly IdemDeadLetters; do expect "Prometheus fires $alert" wait_for 60 firing "$alert"; done
anomalies $((ANOMALIES / 2)) "$ANOMALIES"
pass "sent $((ANOMALIES - ANOMALIES / 2)) more while it fires"
# the group's first notification waits 30 s for the rest of the storm
expect "the webhook received one notification of IdemPaymentAnomaly for $ANOMALIES anomalies" one_notification
expect "Alertmanager holds the anomalies as one group" one_group
expect "the webhook received IdemDeadLetters" wait_for 10 notified_at_all IdemDeadLetters
expect "no other alert; idem_ready is 1" nothing_else
if ((FAILED)); then
  log "Prometheus' alerts: $(prometheus /api/v1/alerts '[.data.alerts[] | .labels.alertname + " " + .state] | join(", ")')"
  log "notifications: $(jq -sc '[.[] | .groupLabels]' "$STATE/notifications")"
fi
exit "$FAILED"
