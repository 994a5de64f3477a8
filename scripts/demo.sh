#!/usr/bin/env bash
# ./idem demo: replays the incident idem was built around against a running service (./idem run),
# then tells what happened: 1. a double submit with one one-time token; 2. one Idempotency-Key sent
# twice; 3. "payment succeeded" notified six times at once, each signed afresh; 4. Kafka redelivers
# that callback and the coupon grant (Kafka's console producer, .idem/kafka/libs); with WeChat Pay on
# and the keys of .idem/gateways/ (./idem run's dev profile): 5. WeChat Pay notifies a second order
# six times (API v3: SHA256withRSA, AES-256-GCM); 6. a third order's notification is lost, the day's
# bill pays it once, imported again nothing; 7. a fourth's is lost too, idem asks WeChat Pay (this
# script answers as its query does), its late notification is a duplicate; then the coupons, the
# duplicates stopped per layer (/q/metrics) and the reconciliation report.
# IDEM_URL (http://127.0.0.1:8080), IDEM_ADMIN_TOKEN and IDEM_CALLBACK_SECRET (the dev profile's),
# KAFKA_BOOTSTRAP_SERVERS (127.0.0.1:9092), IDEM_DEMO_TIMEOUT (30 s for the coupons).
# Exit status 0 when the story is the expected one, 1 when something differs, 2 without a service.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
URL="${IDEM_URL:-http://127.0.0.1:8080}" URL="${URL%/}"
ADMIN_TOKEN="${IDEM_ADMIN_TOKEN:-dev-admin-token}"
SECRET="${IDEM_CALLBACK_SECRET:-dev-callback-secret}"
BOOTSTRAP="${KAFKA_BOOTSTRAP_SERVERS:-127.0.0.1:9092}"
TIMEOUT="${IDEM_DEMO_TIMEOUT:-30}"
KAFKA_LIBS="$ROOT/.idem/kafka/libs"
JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"
WECHATPAY=("$JAVA" -Xmx128m -XX:TieredStopAtLevel=1 "$ROOT/scripts/demo/WeChatPay.java")
DELIVERIES=6 AMOUNT=1999 TEMPLATE=PAY-5OFF
log() { printf 'idem demo: %s\n' "$*" >&2; }
die() { log "error: $*" && exit 1; }
# shellcheck source=scripts/lib/apt.sh
source "$ROOT/scripts/lib/apt.sh"
# shellcheck source=scripts/lib/http.sh
source "$ROOT/scripts/lib/http.sh"
# shellcheck source=scripts/lib/gateways.sh
source "$ROOT/scripts/lib/gateways.sh"
need_commands curl jq openssl
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

if ! curl -fsS --max-time 3 -o /dev/null "$URL/q/health/ready" 2>/dev/null; then
  printf 'idem demo: the service does not answer at %s/q/health/ready.\nStart it in another terminal with:\n\n    ./idem run\n\nthen run ./idem demo again (IDEM_URL=... points the demo at another address).\n' "$URL" >&2
  exit 2
fi

rand_hex() { od -An -N"$1" -tx1 /dev/urandom | tr -d ' \n'; }
wechat_tx() { echo "4200000000$(date +%Y%m%d)$(od -An -N4 -tu4 /dev/urandom | tr -d ' ' | cut -c1-8)"; }
scrape_metrics() { curl -fsS --max-time 5 "$URL/q/metrics" >"$1" 2>/dev/null || : >"$1"; }
# duplicates SCOPE LAYER: idem_pipeline_duplicates_total{layer,scope} of metrics.after less metrics.before's
duplicates() {
  awk -v layer="layer=\"$2\"" -v scope="scope=\"$1\"" '/^idem_pipeline_duplicates_total\{/ && index($0, layer) && index($0, scope) {
    sub(/ # .*/, ""); s[FILENAME] += $NF } END { printf "%d\n", s[ARGV[1]] - s[ARGV[2]] }' "$WORK/metrics.after" "$WORK/metrics.before"
}
# order NAME ID: GET the order into $WORK/NAME; prints its status
order() { http "$WORK/$1" -H "X-User-Id: $USER_ID" "$URL/api/orders/$2" >/dev/null && json_field "$WORK/$1" .status; }
# new_order NAME [HEADER...]: POST /api/orders (WeChat Pay's with a fresh Idempotency-Key when no header); prints the status
new_order() {
  local name=$1 body="{\"amountCents\":$AMOUNT,\"currency\":\"CNY\"}"
  shift
  if (($# == 0)); then set -- -H "Idempotency-Key: demo-$name-$(rand_hex 8)" && body="${body%\}},\"gateway\":\"wechatpay\"}"; fi
  http "$WORK/$name" -X POST -H "X-User-Id: $USER_ID" -H 'Content-Type: application/json' "$@" --data "$body" "$URL/api/orders"
}

START="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
USER_ID="demo-$(rand_hex 4)" TRADE_NO="T-demo-$(rand_hex 6)"
FAILED=() # what differs from the expected story
LAYERS=(redis db state) SCOPES=(payment-callback coupon-grant)
scrape_metrics "$WORK/metrics.before"

# ---------------------------------------------------------------- 1. double submit with one token
status="$(http "$WORK/token" -X POST -H "X-User-Id: $USER_ID" -H 'Content-Type: application/json' "$URL/api/tokens")"
[[ $status == 201 ]] || die "POST /api/tokens answered $status: $(cat "$WORK/token.body" "$WORK/token.err" 2>/dev/null)"
TOKEN="$(json_field "$WORK/token" .token)"
for i in 1 2; do new_order "submit$i" -H "Idempotency-Token: $TOKEN" >"$WORK/submit$i.status" & done
wait
ORDER_ID="" created=0 refused=0 other_submit=()
for i in 1 2; do
  s="$(cat "$WORK/submit$i.status")" code="$(json_field "$WORK/submit$i" .code)"
  if [[ $s == 201 ]]; then ((++created)) && ORDER_ID="$(json_field "$WORK/submit$i" .orderId)"
  elif [[ $s == 409 && $code == TOKEN_INVALID ]]; then ((++refused))
  else other_submit+=("$s $code"); fi
done
[[ $created == 1 && $refused == 1 ]] || FAILED+=("double submit: not one 201 and one 409 TOKEN_INVALID")
[[ -n $ORDER_ID ]] || die "the double submit created no order (answers: $(cat "$WORK"/submit?.status | tr '\n' ' '))"

# ---------------------------------------------------------------- 2. Idempotency-Key sent twice
KEY="demo-key-$(rand_hex 6)"
key_status1="$(new_order key1 -H "Idempotency-Key: $KEY")" key_status2="$(new_order key2 -H "Idempotency-Key: $KEY")"
KEY_ORDER1="$(json_field "$WORK/key1" .orderId)" KEY_ORDER2="$(json_field "$WORK/key2" .orderId)"
replayed="$(tr -d '\r' <"$WORK/key2.headers" | awk -F': *' 'tolower($1) == "idempotent-replayed" { print $2 }')"
[[ $key_status1 == 201 && $key_status2 == 201 && $replayed == true && -n $KEY_ORDER1 && $KEY_ORDER1 == "$KEY_ORDER2" ]] ||
  FAILED+=("Idempotency-Key: the second answer did not replay the first")

# ---------------------------------------------------------------- 3. the gateway's storm
STATUS_BEFORE="$(order order.before "$ORDER_ID")"
CALLBACK="{\"tradeNo\":\"$TRADE_NO\",\"orderId\":\"$ORDER_ID\",\"amountCents\":$AMOUNT,\"status\":\"SUCCESS\",\"paidAt\":\"$(date -u +%Y-%m-%dT%H:%M:%SZ)\"}"
deliver() { # one delivery, signed afresh
  local ts
  ts="$(date +%s)"
  http "$WORK/cb$1" -X POST -H 'Content-Type: application/json' -H "X-Pay-Timestamp: $ts" \
    -H "X-Pay-Signature: $(hmac_hex "$SECRET" "$ts.$CALLBACK")" --data-binary "$CALLBACK" "$URL/api/payments/callback" >"$WORK/cb$1.status"
}
for ((n = 1; n <= DELIVERIES; n++)); do deliver "$n" & done
wait
ok=0 dup=0 other_cb=()
for ((n = 1; n <= DELIVERIES; n++)); do
  if [[ "$(cat "$WORK/cb$n.status")" == 200 && "$(json_field "$WORK/cb$n" .code)" == SUCCESS ]]; then
    ((++ok))
    [[ "$(json_field "$WORK/cb$n" .duplicate)" != true ]] || ((++dup))
    anomaly="$(json_field "$WORK/cb$n" .anomaly)"
    [[ -z $anomaly ]] || other_cb+=("anomaly $anomaly")
  else
    other_cb+=("$(cat "$WORK/cb$n.status") $(json_field "$WORK/cb$n" .code)")
  fi
done
[[ $ok == "$DELIVERIES" ]] || FAILED+=("not every callback answered 200 SUCCESS")

# ---------------------------------------------------------------- 4. Kafka redelivers
produce() { # produce TOPIC KEY VALUE
  printf '%s|%s\n' "$2" "$3" | timeout 60 "$JAVA" -Xmx128m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -cp "$KAFKA_LIBS/*" \
    org.apache.kafka.tools.ConsoleProducer --bootstrap-server "$BOOTSTRAP" --topic "$1" \
    --property parse.key=true --property 'key.separator=|' >>"$WORK/kafka.log" 2>&1
}
BIZ_KEY="paid:$ORDER_ID" kafka_callback=0 kafka_grant=0 kafka_note=""
if compgen -G "$KAFKA_LIBS/kafka-tools-*.jar" >/dev/null; then
  produce payment-callbacks "$TRADE_NO" "$CALLBACK" &
  cb_pid=$!
  produce coupon-grants "$BIZ_KEY" \
    "{\"bizKey\":\"$BIZ_KEY\",\"userId\":\"$USER_ID\",\"templateId\":\"$TEMPLATE\",\"orderId\":\"$ORDER_ID\"}" &
  if wait "$!"; then kafka_grant=1; fi
  if wait "$cb_pid"; then kafka_callback=1; fi
  ((kafka_callback + kafka_grant == 2)) ||
    kafka_note="(the console producer failed: $(grep -m1 -iE 'error|exception' "$WORK/kafka.log" || echo 'see its output'))"
else
  kafka_note="(skipped: no Kafka tools in .idem/kafka/libs; ./idem services up fetches them)"
fi
[[ -z $kafka_note ]] || FAILED+=("Kafka redeliveries not produced")

# ---------------------------------------------------------------- 5. WeChat Pay's storm on the second order
WECHAT_TX="$(wechat_tx)" wechat=0 wechat_ok=0 wechat_other=() wechat_note=""
probe="$(http "$WORK/wechat.probe" -X POST -H 'Content-Type: application/json' --data '{}' "$URL/api/payments/wechatpay/notify")"
if [[ $probe == 404 ]]; then wechat_note="(skipped: WeChat Pay is off in this service; ./idem run's dev profile switches it on)"
elif [[ ! -s $DEMO_WECHATPAY_PRIVATE || ! -s $DEMO_WECHATPAY_APIV3 ]]; then
  wechat_note="(skipped: no WeChat Pay keys in ${DEMO_GATEWAYS#"$ROOT/"}/; ./idem run makes them)"
elif [[ -z $KEY_ORDER1 ]]; then wechat_note="(skipped: step 2 created no order)"
else
  wechat=1
  if "${WECHATPAY[@]}" notify "$URL/api/payments/wechatpay/notify" "$DEMO_WECHATPAY_SERIAL" "$DEMO_WECHATPAY_PRIVATE" \
    "$DEMO_WECHATPAY_APIV3" "$KEY_ORDER1" "$WECHAT_TX" "$AMOUNT" "$DELIVERIES" >"$WORK/wechat.out" 2>"$WORK/wechat.err"; then
    while read -r status rest; do
      if [[ $status == 200 && -z $rest ]]; then ((++wechat_ok)); else wechat_other+=("$status $rest"); fi
    done <"$WORK/wechat.out"
  else
    wechat_other+=("the notifier failed: $(head -c 300 "$WORK/wechat.err")")
  fi
  [[ $wechat_ok == "$DELIVERIES" ]] || FAILED+=("not every WeChat Pay notification answered 200 with no body")
fi

# ---------------------------------------------------------------- 6. a lost notification, found in the bill
# The day's trade bill, as downloaded (its CSV and SHA1), lists a third order with step 5's payment:
# the lost one is applied once, step 5's is a duplicate; imported again, the bill applies nothing.
bill=0 bill_note="(skipped with step 5: $wechat_note)" BILL_ORDER="" BILL_TX="$(wechat_tx)" BILL_STATUS=""
if ((wechat)); then
  new_order order3 >/dev/null
  BILL_ORDER="$(json_field "$WORK/order3" .orderId)"
  bill_day="$(TZ=Asia/Shanghai date +%F)" bill_at="$(TZ=Asia/Shanghai date '+%F %T')"
  yuan="$((AMOUNT / 100)).$(printf '%02d' $((AMOUNT % 100)))"
  bill_line() { # a paid line, every value after a backtick: bill_line TRANSACTION_ID OUT_TRADE_NO
    printf '`%s,`wxd678efh567hg6787,`1230000109,`0,`,`%s,`%s,`oUpF8uMuAJO_M2pxb1Q9zNjWeS6o,`JSAPI,`SUCCESS,`CMC,`CNY,`%s,`0.00,`0,`0,`0.00,`0.00,`,`,`demo,`,`0.12000,`0.60%%,`%s,`0.00,`\r\n' \
      "$bill_at" "$1" "$2" "$yuan" "$yuan"
  }
  {
    printf '交易时间,公众账号ID,商户号,特约商户号,设备号,微信订单号,商户订单号,用户标识,交易类型,交易状态,付款银行,货币种类,'
    printf '应结订单金额,代金券金额,微信退款单号,商户退款单号,退款金额,充值券退款金额,退款类型,退款状态,商品名称,商户数据包,手续费,费率,订单金额,申请退款金额,费率备注\r\n'
    bill_line "$WECHAT_TX" "$KEY_ORDER1"
    bill_line "$BILL_TX" "$BILL_ORDER"
    printf '总交易单数,应结订单总金额,退款总金额,充值券退款总金额,手续费总金额,订单总金额,申请退款总金额\r\n'
    printf '`2,`%s,`0.00,`0.00,`0.24000,`%s,`0.00\r\n' "$yuan" "$yuan"
  } >"$WORK/bill.csv"
  import_bill() {
    http "$WORK/$1" -X POST -H "X-Admin-Token: $ADMIN_TOKEN" -H 'Content-Type: text/csv' \
      -H "X-Bill-Hash: SHA1=$(sha1sum "$WORK/bill.csv" | cut -d' ' -f1)" --data-binary "@$WORK/bill.csv" \
      "$URL/admin/reconciliation/gateways/wechatpay/bills?date=$bill_day"
  }
  summary='"\(.applied) applied, \(.duplicates) duplicate\(if .duplicates == 1 then "" else "s" end); paid there not here \(.findings.paidThereNotHere.count), paid here not there \(.findings.paidHereNotThere.count), amounts differing \(.findings.amountMismatch.count)"'
  if [[ -z $BILL_ORDER ]]; then bill_note="(skipped: the third order was not created)"
  elif [[ "$(import_bill bill1)" == 200 && "$(import_bill bill2)" == 200 ]]; then
    bill=1
    [[ "$(jq -r .applied "$WORK/bill1.body")" == 1 ]] || FAILED+=("the bill did not apply exactly the lost payment")
    [[ "$(jq -r .applied "$WORK/bill2.body")" == 0 ]] || FAILED+=("the bill imported again applied something")
    BILL_STATUS="$(order order3.after "$BILL_ORDER")"
    [[ $BILL_STATUS == PAID && "$(json_field "$WORK/order3.after" .tradeNo)" == "$BILL_TX" ]] ||
      FAILED+=("the third order not PAID with the bill's transaction_id")
  else
    bill_note="(the import answered $(jq -r '"\(.status) \(.code): \(.detail)"' "$WORK/bill1.body" 2>/dev/null || cat "$WORK/bill1.err"))"
    FAILED+=("the bill was not imported")
  fi
fi

# ---------------------------------------------------------------- 7. a lost notification, found by asking
# idem asks WeChat Pay about orders still waiting (./idem run: two seconds after they were made, at
# 127.0.0.1:$DEMO_WECHATPAY_API_PORT), where this scene answers as WeChat Pay's query does, signed.
query=0 query_note="(skipped with step 5: $wechat_note)" QUERY_ORDER="" QUERY_TX="$(wechat_tx)" QUERY_STATUS="" late_answer=""
if ((wechat)) && [[ ! -s $DEMO_WECHATPAY_MERCHANT.pub ]]; then
  query_note="(skipped: no merchant key in ${DEMO_GATEWAYS#"$ROOT/"}/; ./idem run makes it)"
elif ((wechat)); then
  new_order order4 >/dev/null
  QUERY_ORDER="$(json_field "$WORK/order4" .orderId)"
  "${WECHATPAY[@]}" serve "$DEMO_WECHATPAY_API_PORT" "$DEMO_WECHATPAY_SERIAL" "$DEMO_WECHATPAY_PRIVATE" \
    "$DEMO_WECHATPAY_MERCHANT.pub" "$DEMO_WECHATPAY_MCHID" "$DEMO_WECHATPAY_MERCHANT_SERIAL" "$QUERY_ORDER" "$QUERY_TX" \
    "$AMOUNT" >"$WORK/api.out" 2>"$WORK/api.err" &
  api_pid=$!
  for ((i = 0; i < 60; i++)); do
    QUERY_STATUS="$(order order4.after "$QUERY_ORDER")"
    [[ $QUERY_STATUS != PAID ]] || break
    sleep 0.5
  done
  kill "$api_pid" 2>/dev/null || true
  wait "$api_pid" 2>/dev/null || true
  if [[ $QUERY_STATUS == PAID && "$(json_field "$WORK/order4.after" .tradeNo)" == "$QUERY_TX" ]]; then
    query=1
    late_answer="$("${WECHATPAY[@]}" notify "$URL/api/payments/wechatpay/notify" "$DEMO_WECHATPAY_SERIAL" \
      "$DEMO_WECHATPAY_PRIVATE" "$DEMO_WECHATPAY_APIV3" "$QUERY_ORDER" "$QUERY_TX" "$AMOUNT" 1 2>&1 | head -1)"
    [[ $late_answer == "200 " ]] || FAILED+=("the late notification was answered $late_answer")
  else
    query_note="(the order stayed ${QUERY_STATUS:-?} for 30 s: is the service ./idem run's, of this version? $(head -c 200 "$WORK/api.err"))"
    FAILED+=("the query did not find the lost payment")
  fi
fi

# ---------------------------------------------------------------- 8. the coupons, and every duplicate counted
want_coupons=$((1 + wechat + bill + query))
want_cb_dups=$((DELIVERIES - 1 + kafka_callback + wechat * (DELIVERIES - 1) + query))
delta() { # delta SCOPE: its duplicates in metrics.after, every layer, since the start
  local total=0 layer
  for layer in "${LAYERS[@]}"; do total=$((total + $(duplicates "$1" "$layer"))); done
  echo "$total"
}
coupons() {
  [[ "$(http "$WORK/coupons" -H "X-User-Id: $USER_ID" "$URL/api/users/$USER_ID/coupons")" != 200 ]] ||
    coupons="$(jq 'length' "$WORK/coupons.body" 2>/dev/null || echo 0)"
  scrape_metrics "$WORK/metrics.after"
}
waited=$SECONDS settled=0 coupons=0
while coupons; do
  if ((coupons >= want_coupons && $(delta payment-callback) >= want_cb_dups && $(delta coupon-grant) >= kafka_grant)); then
    settled=1 && break
  fi
  ((SECONDS < waited + TIMEOUT)) || break
  sleep 0.5
done
sleep 1 # one more look, so that late duplicates or a second coupon would show
coupons
waited=$((SECONDS - waited))
[[ $coupons == "$want_coupons" ]] || FAILED+=("$coupons coupons instead of exactly $want_coupons")
STATUS_AFTER="$(order order.after "$ORDER_ID")"
ORDER_TRADE_NO="$(json_field "$WORK/order.after" .tradeNo)"
[[ $STATUS_AFTER == PAID && $ORDER_TRADE_NO == "$TRADE_NO" ]] || FAILED+=("order not PAID with the gateway's tradeNo")
KEY_ORDER_STATUS="" KEY_ORDER_TRADE_NO=""
if [[ -n $KEY_ORDER1 ]]; then
  KEY_ORDER_STATUS="$(order keyorder "$KEY_ORDER1")"
  KEY_ORDER_TRADE_NO="$(json_field "$WORK/keyorder" .tradeNo)"
fi
if ((wechat)) && [[ $KEY_ORDER_STATUS != PAID || $KEY_ORDER_TRADE_NO != "$WECHAT_TX" ]]; then
  FAILED+=("the second order not PAID with WeChat Pay's transaction_id")
fi
rec_status="$(http "$WORK/rec" -H "X-Admin-Token: $ADMIN_TOKEN" "$URL/admin/reconciliation?since=$START")"
case $rec_status in
  200)
    reconciliation="healthy: true (every check zero)"
    if [[ "$(jq -r .healthy "$WORK/rec.body")" != true ]]; then
      reconciliation="healthy: false ($(jq -r '[.checks | to_entries[] | select(.value.count > 0) | "\(.key) \(.value.count)"] | join(", ")' "$WORK/rec.body"))"
      FAILED+=("reconciliation not healthy")
    fi ;;
  404) reconciliation="not available (this build has no /admin/reconciliation)" ;;
  401) reconciliation="not available (admin token refused; set IDEM_ADMIN_TOKEN)" ;;
  *) reconciliation="not available (answered $rec_status)" ;;
esac
# the trace of the delivery that applied the payment, in the trace UI the service names
trace_line=""
if [[ "$(http "$WORK/trail" -H "X-Admin-Token: $ADMIN_TOKEN" "$URL/admin/dedup/payment-callback/$TRADE_NO:SUCCESS")" == 200 ]]; then
  trace_line="$(jq -r '.traceUrl // (.record.traceId // empty | "trace \(.)") // empty' "$WORK/trail.body")"
fi

# ---------------------------------------------------------------- the story
key_line="$key_status1, then $key_status2 with Idempotent-Replayed: true: the same order $KEY_ORDER2"
[[ $replayed == true ]] || key_line="$key_status1, then $key_status2 without Idempotent-Replayed (orders $KEY_ORDER1 / $KEY_ORDER2)"
((wechat)) || [[ -z $KEY_ORDER_STATUS ]] || key_line+=" (stays $KEY_ORDER_STATUS)"
coupon_line="$coupons"
((coupons == 0)) || coupon_line+=" ($(jq -r '[.[] | "\(.templateId) from \(.sourceKey)"] | join(", ")' "$WORK/coupons.body"))"
coupon_line+=", $( ((settled)) || echo 'not ')all settled ${waited}s after the Kafka redeliveries"
cat <<STORY

idem demo: the incident, replayed against $URL
  user $USER_ID, order $ORDER_ID, tradeNo $TRADE_NO

1. Double submit, one token, two concurrent POST /api/orders
     answers:      $created created (201), $refused refused (409 TOKEN_INVALID)${other_submit[*]:+, other: ${other_submit[*]}}
2. API client retry, one Idempotency-Key sent twice
     answers:      $key_line
3. The gateway says "payment succeeded" for $ORDER_ID
     deliveries:   $DELIVERIES REST (concurrent, each signed afresh) + $kafka_callback Kafka (payment-callbacks)${kafka_note:+ $kafka_note}
     REST answers: $ok x 200 SUCCESS, $dup of them "duplicate": true${other_cb[*]:+; other: ${other_cb[*]}}
     order:        ${STATUS_BEFORE:-?} -> ${STATUS_AFTER:-?}, tradeNo ${ORDER_TRADE_NO:-none}
4. The coupon grant re-delivered by Kafka: $kafka_grant (coupon-grants, key $BIZ_KEY)
STORY
if ((wechat)); then
  echo "5. WeChat Pay says \"payment succeeded\" for the second order $KEY_ORDER1, transaction_id $WECHAT_TX"
  echo "     deliveries:   $DELIVERIES WeChat Pay API v3 (concurrent, each signed afresh, the transaction encrypted)"
  echo "     answers:      $wechat_ok x 200 with no body (WeChat Pay's \"received\")${wechat_other[*]:+; other: ${wechat_other[*]}}"
  echo "     order:        WAIT_PAY -> ${KEY_ORDER_STATUS:-?}, tradeNo ${KEY_ORDER_TRADE_NO:-none}"
else echo "5. WeChat Pay: $wechat_note"; fi
if ((bill)); then
  echo "6. The notification of a third order $BILL_ORDER never came; WeChat Pay's bill of $bill_day lists it (transaction_id $BILL_TX)"
  echo "     imported:     $(jq -r "$summary" "$WORK/bill1.body")"
  echo "     again:        $(jq -r "$summary" "$WORK/bill2.body")"
  echo "     order:        WAIT_PAY -> ${BILL_STATUS:-?}"
else echo "6. WeChat Pay's bill: $bill_note"; fi
if ((query)); then
  echo "7. The notification of a fourth order $QUERY_ORDER never came either; idem asked WeChat Pay about it"
  echo "     queries:      $(grep -c "^200 $QUERY_ORDER\$" "$WORK/api.out" || true) answered \"paid\" (transaction_id $QUERY_TX, signed by the platform key)"
  echo "     order:        WAIT_PAY -> $QUERY_STATUS"
  echo "     late:         the notification, delivered after all: ${late_answer% } (a duplicate)"
else echo "7. WeChat Pay's query: $query_note"; fi
printf '     coupons:      %s\n\nDuplicates stopped, by the layer that caught them (/q/metrics, this run)\n' "$coupon_line"
printf '     %-18s %6s %6s %6s %6s\n' scope redis db state total
for scope in "${SCOPES[@]}"; do
  row=() total=0
  for layer in "${LAYERS[@]}"; do
    row+=("$(duplicates "$scope" "$layer")")
    total=$((total + row[-1]))
  done
  printf '     %-18s %6s %6s %6s %6s\n' "$scope" "${row[@]}" "$total"
done
printf '\nReconciliation since %s: %s\n' "$START" "$reconciliation"
echo "The trace of the delivery that did the work (its duplicates name it): ${trace_line:-not traced (start ./idem services tracing, then ./idem run)}"
echo
if ((${#FAILED[@]})); then
  printf -v differs '%s; ' "${FAILED[@]}"
  echo "Result: NOT as expected: ${differs%; }"
  exit 1
fi
echo "Result: $((DELIVERIES + kafka_callback)) deliveries of one payment -> 1 order PAID, 1 coupon; every duplicate got the first delivery's answer."
((!wechat)) || echo "        $DELIVERIES WeChat Pay notifications of another payment -> 1 order PAID, 1 coupon."
((!bill)) || echo "        A payment whose notification was lost -> paid once from the gateway's bill, 1 coupon."
((!query)) || echo "        Another lost one -> paid once from WeChat Pay's answer to idem's query, 1 coupon; its late notification a duplicate."
