# shellcheck shell=bash
# Shared by the project's scripts: the local OpenID Connect provider, Keycloak (Maven Central's
# org.keycloak:keycloak-quarkus-dist) on HOST:KEYCLOAK_PORT with the realm of
# deploy/keycloak/realm-idem.json (SPEC section 11). It signs with an RSA key made here, outside the
# repository, which the tests read too to forge tokens of their own. On a fixed port, it belongs to
# the machine like the test clusters: every clone finds the same server and key in CLUSTER_STATE.
# The caller defines log, die, ROOT, HOST and CLUSTER_STATE.

KEYCLOAK_VERSION=26.7.3
KEYCLOAK_PORT=8180
# health and metrics: Keycloak's default, 9000, is too common a port to take on a shared machine
KEYCLOAK_MANAGEMENT_PORT=8181
KEYCLOAK_DIR="$CLUSTER_STATE/keycloak"
KEYCLOAK_HOME="$KEYCLOAK_DIR/keycloak-$KEYCLOAK_VERSION"
KEYCLOAK_KEY="$KEYCLOAK_DIR/realm-key.pem"
KEYCLOAK_CERT="$KEYCLOAK_DIR/realm-cert.pem"
KEYCLOAK_ISSUER="http://$HOST:$KEYCLOAK_PORT/realms/idem"
# a first start builds Keycloak for its options and imports the realm: minutes on 2 busy cores
KEYCLOAK_START_TIMEOUT=240

keycloak_ready() {
  curl -fsS -m 5 "http://$HOST:$KEYCLOAK_MANAGEMENT_PORT/health/ready" >/dev/null 2>&1 &&
    [[ "$(curl -fsS -m 5 "$KEYCLOAK_ISSUER/.well-known/openid-configuration" 2>/dev/null | jq -r .issuer 2>/dev/null)" == "$KEYCLOAK_ISSUER" ]]
}

keycloak_our_pid() {
  # kc.sh while it checks the build, then the java it becomes: both name the distribution's folder
  pid_from_file "$KEYCLOAK_DIR/keycloak.pid" "$KEYCLOAK_HOME/"
}

# major version of the java at $1 (8 for 1.8.0_x)
java_major() {
  local v
  v="$("$1" -version 2>&1 | awk -F'"' '/version/ { print $2; exit }')"
  v="${v#1.}"
  v="${v%%[.+-]*}"
  [[ $v =~ ^[0-9]+$ ]] && printf '%s\n' "$v"
}

# a JDK 21+ home for Keycloak: KEYCLOAK_JAVA_HOME, else the newest under /usr/lib/jvm, else
# Debian's, installed when one is offered
keycloak_java_home() {
  local home best='' major best_major=0 pkg attempt
  if [[ -n ${KEYCLOAK_JAVA_HOME:-} ]]; then
    major="$(java_major "$KEYCLOAK_JAVA_HOME/bin/java")" || major=0
    ((major >= 21)) || die "keycloak: KEYCLOAK_JAVA_HOME=$KEYCLOAK_JAVA_HOME is not a Java 21 or newer"
    printf '%s\n' "$KEYCLOAK_JAVA_HOME"
    return 0
  fi
  for attempt in 1 2; do
    for home in /usr/lib/jvm/*; do
      [[ -x $home/bin/java ]] || continue
      major="$(java_major "$home/bin/java")" || continue
      if ((major >= 21 && major > best_major)); then best="$home" best_major=$major; fi
    done
    [[ -n $best ]] && { printf '%s\n' "$best"; return 0; }
    ((attempt == 1)) || break
    log "keycloak: no Java 21 or newer under /usr/lib/jvm; looking for one among Debian's packages"
    if ((!APT_UPDATED)); then
      as_root apt-get update -q </dev/null >&2 9>&- || true
      APT_UPDATED=1
    fi
    for pkg in openjdk-25-jdk-headless openjdk-21-jdk-headless; do
      if apt-cache policy "$pkg" 2>/dev/null | grep -q 'Candidate: [0-9]'; then
        apt_install --no-install-recommends "$pkg" >/dev/null && break
      fi
    done
  done
  die "keycloak: needs Java 21 or newer and found none (nor a Debian package of one); set KEYCLOAK_JAVA_HOME to a JDK 21+"
}

keycloak_fetch() {
  [[ -x $KEYCLOAK_HOME/bin/kc.sh ]] && return 0
  log "keycloak: fetching org.keycloak:keycloak-quarkus-dist:$KEYCLOAK_VERSION (tar.gz) from Maven Central"
  local tmp="$KEYCLOAK_DIR/unpack"
  rm -rf "$tmp" && mkdir -p "$tmp"
  "$ROOT/mvnw" -B -q org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
    -Dartifact="org.keycloak:keycloak-quarkus-dist:$KEYCLOAK_VERSION:tar.gz" -DoutputDirectory="$tmp" </dev/null 9>&- ||
    die "keycloak: could not fetch its distribution"
  tar -xzf "$tmp/keycloak-quarkus-dist-$KEYCLOAK_VERSION.tar.gz" -C "$tmp" || die "keycloak: could not unpack its distribution"
  [[ -x $tmp/keycloak-$KEYCLOAK_VERSION/bin/kc.sh ]] || die "keycloak: no bin/kc.sh in the distribution"
  mv "$tmp/keycloak-$KEYCLOAK_VERSION" "$KEYCLOAK_HOME"
  rm -rf "$tmp"
}

# The realm's signing key, made once, and the realm to import, rendered with it. Keycloak imports a
# realm only when it has none of that name: when the key or the template changes, its data (the
# dev-file database) goes, so that the realm is imported again.
keycloak_realm() {
  local import="$KEYCLOAK_HOME/data/import/realm-idem.json" key cert
  if [[ ! -f $KEYCLOAK_KEY ]]; then
    need_commands openssl
    log "keycloak: making the realm's signing key (RSA 2048)"
    if ! (umask 077 && openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$KEYCLOAK_KEY.new" 2>/dev/null &&
      openssl req -x509 -new -key "$KEYCLOAK_KEY.new" -subj /CN=idem -days 3650 -out "$KEYCLOAK_CERT" 2>/dev/null); then
      die "keycloak: could not make a key with openssl"
    fi
    mv "$KEYCLOAK_KEY.new" "$KEYCLOAK_KEY"
  fi
  key="$(sed '/-----/d' "$KEYCLOAK_KEY" | tr -d '\n')"
  cert="$(sed '/-----/d' "$KEYCLOAK_CERT" | tr -d '\n')"
  mkdir -p "${import%/*}"
  (umask 077 && sed -e "s|@PRIVATE_KEY@|$key|" -e "s|@CERTIFICATE@|$cert|" "$ROOT/deploy/keycloak/realm-idem.json" >"$import.new")
  if ! cmp -s "$import.new" "$import"; then
    [[ -d $KEYCLOAK_HOME/data/h2 ]] && log "keycloak: the realm or its key changed; its database is made afresh"
    rm -rf "$KEYCLOAK_HOME/data/h2"
  fi
  mv "$import.new" "$import"
  log "keycloak: realm idem signs with ${KEYCLOAK_KEY#"$ROOT/"} (certificate ${KEYCLOAK_CERT#"$ROOT/"})"
}

keycloak_up() {
  if port_open "$KEYCLOAK_PORT"; then
    wait_for 30 keycloak_ready || die "keycloak: something that is not a ready Keycloak with realm idem listens on $HOST:$KEYCLOAK_PORT"
    log "keycloak: reusing the server on $HOST:$KEYCLOAK_PORT (issuer $KEYCLOAK_ISSUER)"
    return 0
  fi
  port_open "$KEYCLOAK_MANAGEMENT_PORT" && die "keycloak: $HOST:$KEYCLOAK_MANAGEMENT_PORT (its management port) is taken"
  need_commands curl jq
  mkdir -p "$KEYCLOAK_DIR"
  local java_home i
  java_home="$(keycloak_java_home)"
  keycloak_fetch
  keycloak_realm
  log "keycloak: starting $KEYCLOAK_VERSION on $HOST:$KEYCLOAK_PORT with $java_home (log ${KEYCLOAK_DIR#"$ROOT/"}/keycloak.log)"
  # The bootstrap admin (admin/admin, master realm) is for this loopback development server only.
  # kc.sh's default heap is a share of the machine's memory: gigabytes here.
  spawn_detached "$KEYCLOAK_DIR/keycloak.pid" "$KEYCLOAK_DIR/keycloak.log" env JAVA_HOME="$java_home" \
    JAVA_OPTS_KC_HEAP="-Xms64m -Xmx512m" KC_BOOTSTRAP_ADMIN_USERNAME=admin KC_BOOTSTRAP_ADMIN_PASSWORD=admin \
    "$KEYCLOAK_HOME/bin/kc.sh" start-dev --import-realm --hostname="http://$HOST:$KEYCLOAK_PORT" \
    --http-host="$HOST" --http-port="$KEYCLOAK_PORT" --http-management-port="$KEYCLOAK_MANAGEMENT_PORT" --health-enabled=true
  for ((i = 1; i <= KEYCLOAK_START_TIMEOUT; i++)); do
    keycloak_ready && break
    if ((i > 5)) && ! keycloak_our_pid >/dev/null; then
      tail -n 20 "$KEYCLOAK_DIR/keycloak.log" >&2
      die "keycloak: exited while starting; see ${KEYCLOAK_DIR#"$ROOT/"}/keycloak.log"
    fi
    ((i % 30)) || log "keycloak: still starting (${i} s)"
    sleep 1
  done
  keycloak_ready || die "keycloak: not ready within $KEYCLOAK_START_TIMEOUT s; see ${KEYCLOAK_DIR#"$ROOT/"}/keycloak.log"
  log "keycloak: up; issuer $KEYCLOAK_ISSUER, admin console http://$HOST:$KEYCLOAK_PORT/admin/ (admin/admin)"
}

# kc.sh runs the server as its child and passes TERM on; should kc.sh be killed instead, the child
# is stopped on its own
keycloak_down() {
  local pid child
  if pid="$(keycloak_our_pid)"; then
    log "keycloak: stopping (pid $pid)"
    child="$(pgrep -P "$pid" java || true)"
    stop_pid "$pid" 30 "keycloak"
    if [[ -n $child ]] && kill -0 "$child" 2>/dev/null; then stop_pid "$child" 10 "keycloak: its java"; fi
  fi
  rm -f "$KEYCLOAK_DIR/keycloak.pid"
}
