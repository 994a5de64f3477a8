# shellcheck shell=bash
# The dev profile's WeChat Pay: keys made on this machine, in .idem/gateways/, never committed.
# `./idem run` (dev profile) configures the service with the public key and the APIv3 key;
# `./idem demo` signs and encrypts its notifications with the private key and the same APIv3 key.
# The caller sets ROOT and defines log and die; needs openssl.

DEMO_GATEWAYS="$ROOT/.idem/gateways"
DEMO_WECHATPAY_SERIAL=IDEM-DEMO-PLATFORM-KEY
DEMO_WECHATPAY_PRIVATE="$DEMO_GATEWAYS/wechatpay-platform-private.pem"
DEMO_WECHATPAY_APIV3="$DEMO_GATEWAYS/wechatpay-apiv3.key"

# demo_gateway_keys: makes what is missing of the key pair and the 32-character APIv3 key.
demo_gateway_keys() {
  mkdir -p "$DEMO_GATEWAYS"
  chmod 700 "$DEMO_GATEWAYS"
  if [[ ! -s $DEMO_WECHATPAY_PRIVATE ]]; then
    log "making the dev profile's WeChat Pay keys in ${DEMO_GATEWAYS#"$ROOT/"}/"
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$DEMO_WECHATPAY_PRIVATE.tmp" 2>/dev/null ||
      die "openssl could not make an RSA key"
    mv "$DEMO_WECHATPAY_PRIVATE.tmp" "$DEMO_WECHATPAY_PRIVATE"
  fi
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
    openssl pkey -in "$DEMO_WECHATPAY_PRIVATE" -pubout 2>/dev/null | grep -v -- '-----' | tr -d '\n')"
}
