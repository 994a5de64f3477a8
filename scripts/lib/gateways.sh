# shellcheck shell=bash
# The dev profile's WeChat Pay: keys made on this machine, in .idem/gateways/, never committed.
# `./idem run` (dev profile) configures the service with the platform's public key, the APIv3 key
# and the merchant's private key, and asks WeChat Pay's query at 127.0.0.1:$DEMO_WECHATPAY_API_PORT
# a few seconds after an order is made (orders expire after two minutes, so nobody answering
# there costs a few WARN lines); `./idem demo` signs and encrypts its notifications with the
# platform's private key and the same APIv3 key, and answers that query for one scene.
# The caller sets ROOT and defines log and die; needs openssl.

DEMO_GATEWAYS="$ROOT/.idem/gateways"
DEMO_WECHATPAY_SERIAL=IDEM-DEMO-PLATFORM-KEY
DEMO_WECHATPAY_PRIVATE="$DEMO_GATEWAYS/wechatpay-platform-private.pem"
DEMO_WECHATPAY_APIV3="$DEMO_GATEWAYS/wechatpay-apiv3.key"
DEMO_WECHATPAY_MERCHANT="$DEMO_GATEWAYS/wechatpay-merchant-private.pem"
DEMO_WECHATPAY_MCHID=1900000001
DEMO_WECHATPAY_MERCHANT_SERIAL=IDEM-DEMO-MERCHANT-KEY
DEMO_WECHATPAY_API_PORT=18071

# new_rsa_key <file>: a 2048-bit RSA key in PKCS#8 PEM, unless the file holds one.
new_rsa_key() {
  [[ -s $1 ]] && return 0
  openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$1.tmp" 2>/dev/null ||
    die "openssl could not make an RSA key"
  mv "$1.tmp" "$1"
}

# pem_base64 [file]: the key's base64 on one line, without its PEM armour (from stdin without a file).
pem_base64() { grep -v -- '-----' "${1:--}" | tr -d '\n'; }

# demo_gateway_keys: makes what is missing of the key pair and the 32-character APIv3 key.
demo_gateway_keys() {
  mkdir -p "$DEMO_GATEWAYS"
  chmod 700 "$DEMO_GATEWAYS"
  [[ -s $DEMO_WECHATPAY_PRIVATE && -s $DEMO_WECHATPAY_MERCHANT ]] ||
    log "making the dev profile's WeChat Pay keys in ${DEMO_GATEWAYS#"$ROOT/"}/"
  new_rsa_key "$DEMO_WECHATPAY_PRIVATE"
  new_rsa_key "$DEMO_WECHATPAY_MERCHANT"
  [[ -s $DEMO_WECHATPAY_MERCHANT.pub ]] || openssl pkey -in "$DEMO_WECHATPAY_MERCHANT" -pubout -out "$DEMO_WECHATPAY_MERCHANT.pub" 2>/dev/null
  if [[ ! -s $DEMO_WECHATPAY_APIV3 ]]; then
    openssl rand -base64 48 | tr -dc 'A-Za-z0-9' | head -c 32 >"$DEMO_WECHATPAY_APIV3.tmp"
    mv "$DEMO_WECHATPAY_APIV3.tmp" "$DEMO_WECHATPAY_APIV3"
  fi
}

# demo_gateway_options: the service's -D options for those keys, one per line.
demo_gateway_options() {
  demo_gateway_keys
  printf '%s\n' "-Didem.gateways.wechatpay.api-v3-key=$(cat "$DEMO_WECHATPAY_APIV3")"
  printf '%s\n' "-Didem.gateways.wechatpay.platform-keys.$DEMO_WECHATPAY_SERIAL=$(
    openssl pkey -in "$DEMO_WECHATPAY_PRIVATE" -pubout 2>/dev/null | pem_base64)"
  printf '%s\n' "-Didem.gateways.wechatpay.mchid=$DEMO_WECHATPAY_MCHID" \
    "-Didem.gateways.wechatpay.merchant-serial=$DEMO_WECHATPAY_MERCHANT_SERIAL" \
    "-Didem.gateways.wechatpay.merchant-private-key=$(pem_base64 "$DEMO_WECHATPAY_MERCHANT")" \
    "-Didem.gateways.wechatpay.api-base=http://127.0.0.1:$DEMO_WECHATPAY_API_PORT" \
    -Didem.gateways.wechatpay.query.first-delay=2s -Didem.gateways.wechatpay.query.max-interval=4s \
    -Didem.orders.expiry=2m
}
