#!/usr/bin/env bash
# ./idem image [all|build|native|smoke]: OCI images of idem built here with buildah, no registry or
# Docker engine, and a smoke check with podman on the host network against the local servers, on
# IDEM_SMOKE_PORT (18080): /q/health/ready UP, an order paid by one signed callback, its retry a
# duplicate (`./idem help`). localhost/idem:jvm stands on localhost/idem-base:<tag>, made here once
# (Debian's minbase from debootstrap, IDEM_DEBIAN_MIRROR, and a JRE jlinked from this JDK) and
# tagged by what it is made of, its file system kept in .idem/image/: later builds run offline in
# seconds. localhost/idem:native: target/*-runner on glibc, zlib and CA certificates, as
# src/main/docker/Dockerfile.native-micro has it. Missing Debian packages are installed with apt-get.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
STATE="$ROOT/.idem/image"

IMAGE_JVM=localhost/idem:jvm
IMAGE_NATIVE=localhost/idem:native
BASE_REPO=localhost/idem-base
NATIVE_BASE_REPO=localhost/idem-native-base
# The JRE's modules: what jdeps finds in target/quarkus-app, plus those reached only by name
# (elliptic-curve TLS, DNS for JNDI, zip file systems). Changing the list makes a new base.
JRE_MODULES=java.base,java.desktop,java.logging,java.management,java.naming,java.net.http,java.rmi,java.security.jgss,java.security.sasl,java.sql,java.transaction.xa,java.xml,jdk.crypto.ec,jdk.management,jdk.naming.dns,jdk.unsupported,jdk.zipfs
APP_UID=185
# the native image's user, as in Quarkus' native Dockerfiles
NATIVE_UID=1001
DEBIAN_MIRROR="${IDEM_DEBIAN_MIRROR:-http://deb.debian.org/debian}"

HOST=127.0.0.1
SMOKE_PORT="${IDEM_SMOKE_PORT:-18080}"
SMOKE_SECRET=smoke-callback-secret
SMOKE_READY_TIMEOUT=120

LOG_NAME="idem image"
# shellcheck source=scripts/lib/base.sh
source "$ROOT/scripts/lib/base.sh"
# shellcheck source=scripts/lib/http.sh
source "$ROOT/scripts/lib/http.sh"
KAFKA_DIR="$ROOT/.idem/kafka"
# shellcheck source=scripts/lib/kafka.sh
source "$ROOT/scripts/lib/kafka.sh"

rand_hex() { od -An -N"$1" -tx1 /dev/urandom | tr -d ' \n'; }

# buildah and podman read this file instead of the system's: runc (crun fails on these machines)
# and explicit limits for the containers.
container_tools() {
  need_commands buildah podman runc debootstrap
  mkdir -p "$STATE"
  cat >"$STATE/containers.conf" <<'CONF'
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=4096:4096"]

[engine]
runtime = "runc"
CONF
  export CONTAINERS_CONF="$STATE/containers.conf"
}

image_exists() { buildah inspect --type image "$1" >/dev/null 2>&1; }
image_id() { podman image inspect --format '{{.Id}}' "$1" 2>/dev/null || true; }
# image_mb <image> [decimals]: its size in MB
image_mb() { podman image inspect --format '{{.Size}}' "$1" | awk -v d="${2:-0}" '{ printf "%.*f", d, $1 / 1000000 }'; }

# remove_leftovers <image> <its previous id> <base repository> <base>: what earlier builds left,
# the previous application image once replaced and the bases of other recipes
remove_leftovers() {
  if [[ -n $2 && $2 != "$(image_id "$1")" ]]; then
    podman rmi "$2" >/dev/null 2>&1 || true
  fi
  podman images --format '{{.Repository}}:{{.Tag}}' | grep "^$3:" | grep -vxF "$4" |
    xargs -r podman rmi >/dev/null 2>&1 || true
}

# --------------------------------------------------------------------------------- the base

# The JDK whose jlink makes the JRE: JAVA_HOME, else the one `java` belongs to, else Debian's 17.
find_jdk() {
  local jdk="${JAVA_HOME:-}"
  if [[ -z $jdk ]] && command -v java >/dev/null 2>&1; then
    jdk="$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")"
  fi
  if [[ ! -x $jdk/bin/jlink || ! -d $jdk/jmods ]]; then
    apt_install openjdk-17-jdk-headless >/dev/null
    jdk="/usr/lib/jvm/java-17-openjdk-$(dpkg --print-architecture)"
  fi
  [[ -x $jdk/bin/jlink && -d $jdk/jmods ]] || die "no JDK with jlink and jmods at $jdk"
  printf '%s\n' "$jdk"
}

# The host's Debian release (its glibc is the one the jlinked JRE was built for), else bookworm.
debian_suite() (
  # shellcheck disable=SC1091
  . /etc/os-release 2>/dev/null || true
  if [[ ${ID:-} == debian && -n ${VERSION_CODENAME:-} ]]; then echo "$VERSION_CODENAME"; else echo bookworm; fi
)

# Debian's minbase for SUITE as a tarball, made once: debootstrap, then without apt's lists and
# caches, documentation and translations.
debian_rootfs() {
  local suite=$1 tarball="$STATE/debian-$1-minbase.tar.gz" dir
  if [[ -s $tarball ]]; then
    printf '%s\n' "$tarball"
    return 0
  fi
  dir="$STATE/rootfs.tmp"
  rm -rf "$dir"
  log "debootstrap --variant=minbase $suite from $DEBIAN_MIRROR (once; a few minutes)"
  debootstrap --variant=minbase "$suite" "$dir" "$DEBIAN_MIRROR" >"$STATE/debootstrap.log" 2>&1 ||
    die "debootstrap failed; see ${STATE#"$ROOT/"}/debootstrap.log"
  rm -rf "$dir"/var/lib/apt/lists/* "$dir"/var/cache/apt/* "$dir"/usr/share/doc/* \
    "$dir"/usr/share/man/* "$dir"/usr/share/info/* "$dir"/usr/share/locale/*
  tar -C "$dir" --numeric-owner -czf "$tarball.tmp" .
  rm -rf "$dir"
  mv "$tarball.tmp" "$tarball"
  printf '%s\n' "$tarball"
}

# The base image: minbase, the JRE in /opt/java, user 185 (group root, as OpenShift runs images).
# Prints its name; builds it only when no image of that name exists.
base_image() {
  local jdk suite tag base rootfs ctr mnt
  jdk="$(find_jdk)"
  suite="$(debian_suite)"
  # named after what it is made of, this recipe included: any change makes a new base
  tag="$({ printf '%s\n' "$suite" "$JRE_MODULES" "$APP_UID"; cat "$jdk/release"; declare -f debian_rootfs base_image; } |
    sha256sum | cut -c1-12)"
  base="$BASE_REPO:$tag"
  if image_exists "$base"; then
    log "base $base (Debian $suite, JRE from $jdk): cached"
    printf '%s\n' "$base"
    return 0
  fi
  rootfs="$(debian_rootfs "$suite")"
  log "base $base: Debian $suite minbase + JRE jlinked from $jdk"
  rm -rf "$STATE/jre"
  "$jdk/bin/jlink" --add-modules "$JRE_MODULES" --strip-debug --no-man-pages --no-header-files \
    --output "$STATE/jre"
  ctr="$(buildah from scratch)"
  mnt="$(buildah mount "$ctr")"
  tar -C "$mnt" --numeric-owner -xzf "$rootfs"
  mkdir -p "$mnt/opt"
  cp -a "$STATE/jre" "$mnt/opt/java"
  chroot "$mnt" useradd --system --uid "$APP_UID" --gid 0 --home-dir /deployments --create-home \
    --shell /usr/sbin/nologin idem
  buildah umount "$ctr" >/dev/null
  buildah config --env JAVA_HOME=/opt/java \
    --env PATH=/opt/java/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --env LANG=C.UTF-8 --label "org.opencontainers.image.description=Debian $suite minbase, JRE $(sed -n 's/^JAVA_VERSION="\(.*\)"/\1/p' "$jdk/release")" \
    "$ctr"
  buildah commit --quiet --rm "$ctr" "$base" >/dev/null
  rm -rf "$STATE/jre"
  printf '%s\n' "$base"
}

# --------------------------------------------------------------------------------- the images

# The JVM image: Quarkus' fast-jar layout in /deployments, one layer per rate of change, as in
# src/main/docker/Dockerfile.jvm, on the local base instead of a registry's.
build_jvm() {
  local base=$1 containerfile="$STATE/Containerfile.jvm"
  cat >"$containerfile" <<EOF
FROM $base
COPY --chown=$APP_UID:0 target/quarkus-app/lib/ /deployments/lib/
COPY --chown=$APP_UID:0 target/quarkus-app/*.jar /deployments/
COPY --chown=$APP_UID:0 target/quarkus-app/app/ /deployments/app/
COPY --chown=$APP_UID:0 target/quarkus-app/quarkus/ /deployments/quarkus/
WORKDIR /deployments
EXPOSE 8080
USER $APP_UID
ENTRYPOINT ["java", "-XX:MaxRAMPercentage=75", "-Dquarkus.http.host=0.0.0.0", "-Djava.util.logging.manager=org.jboss.logmanager.LogManager", "-jar", "/deployments/quarkus-run.jar"]
EOF
  buildah bud --quiet --pull=never --layers -f "$containerfile" -t "$IMAGE_JVM" \
    --label org.opencontainers.image.title=idem \
    --label "org.opencontainers.image.revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)" \
    "$ROOT" >/dev/null
}

# The native image's base, localhost/idem-native-base:<tag>: only what the executable links, as
# Quarkus' micro image has it. glibc and zlib are Debian's libc6 and zlib1g from the same minbase
# (their libraries, not their documentation, locales or iconv modules), the CA certificates are the
# bundle of Debian's ca-certificates as the host generated it, and /work belongs to user 1001.
native_base_image() {
  local suite tag base rootfs dir ctr mnt
  suite="$(debian_suite)"
  [[ -s /etc/ssl/certs/ca-certificates.crt ]] || apt_install ca-certificates >/dev/null
  tag="$({ printf '%s\n' "$suite" "$NATIVE_UID"; sha256sum /etc/ssl/certs/ca-certificates.crt; declare -f debian_rootfs native_base_image; } |
    sha256sum | cut -c1-12)"
  base="$NATIVE_BASE_REPO:$tag"
  if image_exists "$base"; then
    log "native base $base (Debian $suite libc6, zlib1g, CA certificates): cached"
    printf '%s\n' "$base"
    return 0
  fi
  rootfs="$(debian_rootfs "$suite")"
  log "native base $base: libc6 and zlib1g of Debian $suite, CA certificates, user $NATIVE_UID"
  dir="$STATE/native-rootfs.tmp"
  rm -rf "$dir"
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd -P)"
  tar -C "$dir" --numeric-owner -xzf "$rootfs"
  ctr="$(buildah from scratch)"
  mnt="$(buildah mount "$ctr")"
  # the packages' files and links where they really are (/lib is a link to usr/lib: merged /usr),
  # their directories with them; then what the system needs
  chroot "$dir" dpkg-query -L libc6 zlib1g | grep -Ev '^/usr/share/|/gconv/|^/\.$' |
    while read -r path; do
      if [[ -L $dir$path || ! -d $dir$path ]]; then
        printf '%s/%s\n' "$(cd "$dir$(dirname "$path")" && pwd -P)" "$(basename "$path")"
      fi
    done | sed "s|^$dir/||" | sort -u | tar -C "$dir" --numeric-owner -cf - -T - | tar -C "$mnt" --numeric-owner -xf -
  ln -sfn usr/lib "$mnt/lib"
  ln -sfn usr/lib64 "$mnt/lib64"
  mkdir -p "$mnt/etc/ssl/certs" "$mnt/tmp" "$mnt/work"
  chmod 1777 "$mnt/tmp"
  cp /etc/ssl/certs/ca-certificates.crt "$mnt/etc/ssl/certs/"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nidem:x:%s:0:idem:/work:/sbin/nologin\n' "$NATIVE_UID" >"$mnt/etc/passwd"
  printf 'root:x:0:\n' >"$mnt/etc/group"
  printf 'hosts: files dns\n' >"$mnt/etc/nsswitch.conf"
  chown "$NATIVE_UID:0" "$mnt/work"
  chmod g+rwX "$mnt/work"
  buildah umount "$ctr" >/dev/null
  rm -rf "$dir"
  buildah config --env LANG=C.UTF-8 \
    --label "org.opencontainers.image.description=libc6 and zlib1g of Debian $suite, CA certificates" "$ctr"
  buildah commit --quiet --rm "$ctr" "$base" >/dev/null
  printf '%s\n' "$base"
}

# The native image: src/main/docker/Dockerfile.native-micro on the local base instead of a
# registry's. The executable must be one: a build may leave only the jar in target/.
build_native() {
  local runner base containerfile="$STATE/Containerfile.native" t0=$SECONDS previous
  runner="$(native_executable)" ||
    die "native: no native executable in target/; ./idem native builds it (a GraalVM home for JDK 25 in GRAALVM_HOME)"
  runner="${runner#"$ROOT/"}"
  base="$(native_base_image)"
  previous="$(image_id "$IMAGE_NATIVE")"
  cat >"$containerfile" <<EOF
FROM $base
WORKDIR /work/
COPY --chown=$NATIVE_UID:0 --chmod=0755 $runner /work/application
EXPOSE 8080
USER $NATIVE_UID
ENTRYPOINT ["./application", $(printf '"%s", ' "${NATIVE_OPTS[@]}")"-Dquarkus.http.host=0.0.0.0"]
EOF
  buildah bud --quiet --pull=never --layers -f "$containerfile" -t "$IMAGE_NATIVE" \
    --label org.opencontainers.image.title=idem \
    --label "org.opencontainers.image.revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)" \
    "$ROOT" >/dev/null
  remove_leftovers "$IMAGE_NATIVE" "$previous" "$NATIVE_BASE_REPO" "$base"
  log "built $IMAGE_NATIVE ($(image_mb "$IMAGE_NATIVE") MB, of which the executable" \
    "$(stat -c %s "$runner" | awk '{ printf "%d", $1 / 1000000 }') MB, the base $(image_mb "$base" 1) MB) in $((SECONDS - t0)) s"
}

build() {
  local t0=$SECONDS base previous
  container_tools
  base="$(base_image)"
  log "packaging the application (./mvnw -B -q -DskipTests package)"
  install_extension
  ./mvnw -B -q -DskipTests package
  previous="$(image_id "$IMAGE_JVM")"
  build_jvm "$base"
  # bases of other recipes or JDKs go too
  remove_leftovers "$IMAGE_JVM" "$previous" "$BASE_REPO" "$base"
  log "built $IMAGE_JVM ($(image_mb "$IMAGE_JVM") MB) in $((SECONDS - t0)) s"
}

# --------------------------------------------------------------------------------- the smoke check

CONTAINER=""
GROUPS_OF_RUN=()
WORK=""
# Stops the container (SIGTERM, then SIGKILL after 60 s: leaving the consumer groups takes the
# service some 25 s here), removes it, then its consumer groups with the offsets they committed.
remove_container() {
  [[ -n $CONTAINER ]] || return 0
  podman rm --force --time 60 "$CONTAINER" >/dev/null 2>&1 || true
  if podman container exists "$CONTAINER"; then
    log "warning: container $CONTAINER is still there (podman rm -f $CONTAINER)"
  elif ((${#GROUPS_OF_RUN[@]})) && compgen -G "$KAFKA_LIBS/kafka-tools-*.jar" >/dev/null; then
    kafka_tool org.apache.kafka.tools.consumer.group.ConsumerGroupCommand --bootstrap-server "$HOST:9092" \
      --delete "${GROUPS_OF_RUN[@]/#/--group=}" >/dev/null 2>&1 || true
  fi
  CONTAINER=""
}

smoke() {
  local image="${IDEM_IMAGE:-$IMAGE_JVM}" run url t0 ready=0 order status key body ts attempt
  container_tools
  need_commands curl jq openssl
  image_exists "$image" || die "no image $image; ./idem image build makes it"
  bash "$ROOT/scripts/services.sh" up
  if port_open "$SMOKE_PORT"; then
    die "port $SMOKE_PORT is taken; choose another with IDEM_SMOKE_PORT"
  fi
  WORK="$(mktemp -d)"
  trap 'remove_container; rm -rf "$WORK"' EXIT
  run="idem-smoke-$(rand_hex 4)"
  GROUPS_OF_RUN=("$run-coupon-grants" "$run-payment-callbacks")
  url="http://$HOST:$SMOKE_PORT"
  # Consumer groups of its own, from the end of the topics: it takes no partitions from other
  # instances and does not replay the topics' history. Redis database 7 is the smoke check's.
  t0=$SECONDS
  CONTAINER="$(podman run --detach --pull=never --name "$run" --network host \
    -e QUARKUS_HTTP_PORT="$SMOKE_PORT" \
    -e QUARKUS_DATASOURCE_REACTIVE_URL="postgresql://$HOST:5432/idem" \
    -e QUARKUS_DATASOURCE_USERNAME=idem -e QUARKUS_DATASOURCE_PASSWORD=idem \
    -e QUARKUS_REDIS_HOSTS="redis://$HOST:6379/7" \
    -e KAFKA_BOOTSTRAP_SERVERS="$HOST:9092" \
    -e IDEM_CALLBACK_SECRET="$SMOKE_SECRET" -e IDEM_ADMIN_TOKEN="smoke-admin-$(rand_hex 8)" \
    -e MP_MESSAGING_INCOMING_COUPON_GRANTS_GROUP_ID="${GROUPS_OF_RUN[0]}" \
    -e MP_MESSAGING_INCOMING_COUPON_GRANTS_AUTO_OFFSET_RESET=latest \
    -e MP_MESSAGING_INCOMING_PAYMENT_CALLBACKS_GROUP_ID="${GROUPS_OF_RUN[1]}" \
    -e MP_MESSAGING_INCOMING_PAYMENT_CALLBACKS_AUTO_OFFSET_RESET=latest \
    "$image")"
  log "smoke: container $run from $image on $url"
  while ((SECONDS - t0 < SMOKE_READY_TIMEOUT)); do
    [[ "$(podman inspect --format '{{.State.Running}}' "$CONTAINER" 2>/dev/null)" == true ]] || break
    if [[ "$(http "$WORK/ready" "$url/q/health/ready")" == 200 && "$(json_field "$WORK/ready" .status)" == UP ]]; then
      ready=1
      break
    fi
    sleep 0.5
  done
  if ((!ready)); then
    podman logs --tail 40 "$CONTAINER" >&2 || true
    die "smoke: $image did not answer /q/health/ready UP within $SMOKE_READY_TIMEOUT s"
  fi
  log "smoke: /q/health/ready UP after $((SECONDS - t0)) s"

  key="$run-order"
  status="$(http "$WORK/order" -X POST -H "X-User-Id: $run" -H "Idempotency-Key: $key" \
    -H 'Content-Type: application/json' --data '{"amountCents":1999,"currency":"CNY"}' "$url/api/orders")"
  order="$(json_field "$WORK/order" .orderId)"
  [[ $status == 201 && -n $order ]] || die "smoke: POST /api/orders answered $status: $(cat "$WORK/order.body")"

  body="{\"tradeNo\":\"T-$run\",\"orderId\":\"$order\",\"amountCents\":1999,\"status\":\"SUCCESS\",\"paidAt\":\"$(date -u +%Y-%m-%dT%H:%M:%SZ)\"}"
  for attempt in first retry; do
    ts="$(date +%s)"
    status="$(http "$WORK/$attempt" -X POST -H 'Content-Type: application/json' -H "X-Pay-Timestamp: $ts" \
      -H "X-Pay-Signature: $(hmac_hex "$SMOKE_SECRET" "$ts.$body")" --data-binary "$body" "$url/api/payments/callback")"
    [[ $status == 200 && "$(json_field "$WORK/$attempt" .code)" == SUCCESS ]] ||
      die "smoke: the $attempt callback answered $status: $(cat "$WORK/$attempt.body")"
  done
  [[ "$(json_field "$WORK/first" .duplicate)" == "" && "$(json_field "$WORK/retry" .duplicate)" == true ]] ||
    die "smoke: the retry was not answered as a duplicate: $(cat "$WORK/retry.body")"
  http "$WORK/paid" -H "X-User-Id: $run" "$url/api/orders/$order" >/dev/null
  [[ "$(json_field "$WORK/paid" .status)" == PAID ]] || die "smoke: the order is not PAID: $(cat "$WORK/paid.body")"
  log "smoke: order $order created (201), callback answered $(cat "$WORK/first.body"), its retry $(cat "$WORK/retry.body"), order PAID"

  t0=$SECONDS
  remove_container
  log "smoke: passed; container $run stopped (in $((SECONDS - t0)) s) and removed"
}

# Rootful buildah and podman: the base is assembled with chroot, the images go to root's store.
[[ $EUID -eq 0 ]] || die "./idem image runs as root (sudo ./idem image)"

case "${1:-all}" in
  all)
    build
    smoke
    ;;
  build) build ;;
  smoke) smoke ;;
  native)
    container_tools
    build_native
    IDEM_IMAGE=$IMAGE_NATIVE smoke
    ;;
  *)
    echo "usage: ./idem image [build|smoke|native]" >&2
    exit 2
    ;;
esac
