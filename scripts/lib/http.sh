# shellcheck shell=bash
# Shared by the project's scripts: HTTP calls with curl and what a payment gateway signs with.
# Needs curl, jq and openssl.

# http <out-prefix> <curl args...>: writes <out-prefix>.body and .headers and prints the status
# code (000 when the service could not be reached).
http() {
  local out="$1"
  shift
  curl -sS --max-time 10 -o "$out.body" -D "$out.headers" -w '%{http_code}' "$@" 2>"$out.err" || true
}

# json_field <out-prefix> <jq path>: one member of the body http wrote, empty when absent.
json_field() { jq -r "$2 // empty" "$1.body" 2>/dev/null || true; }

# hmac_hex <secret> <message>: the lowercase hex HMAC-SHA256, as X-Pay-Signature carries it.
hmac_hex() {
  printf '%s' "$2" | openssl dgst -sha256 -hmac "$1" | awk '{print $NF}'
}
