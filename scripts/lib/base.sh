# shellcheck shell=bash
# What every script of the project starts with. The caller sets ROOT and LOG_NAME first.

# Maven and its wrapper keep their files under $HOME/.m2.
if [[ -z ${HOME:-} ]]; then
  HOME="$(getent passwd "$(id -u)" | cut -d: -f6)"
  export HOME
fi

# shellcheck disable=SC2034 # used by the scripts that source this
JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"
# How the native executable runs, in the image and in the benchmark: a young generation of 16 MB.
# Sized from the machine's memory by default, it let start-up alone fill 130 MB of RSS (about 90 MB
# with it; docs/PERFORMANCE.md). A runtime option, since Native Image's -R: build-time defaults are
# beyond the native-image this project is verified with.
# shellcheck disable=SC2034
NATIVE_OPTS=(-Xmn16m)

# native_executable [FILE]: FILE, else target/*-runner, printed when it is a native executable
# (an ELF file); nothing otherwise.
native_executable() {
  local file="${1:-$(compgen -G "$ROOT/target/*-runner" | head -n 1 || true)}"
  [[ -n $file && "$(head -c 4 "$file" 2>/dev/null | tail -c 3)" == ELF ]] && printf '%s\n' "$file"
}

# install_extension: the idempotency extension (idem-quarkus) into the local Maven repository, where
# the service's own build (the root pom.xml alone) finds it; `./idem test` builds everything at once
# through reactor/pom.xml instead.
install_extension() {
  "$ROOT/mvnw" -B -q -f "$ROOT/idem-quarkus/pom.xml" install -DskipTests
}

log() { printf '%s: %s\n' "$LOG_NAME" "$*" >&2; }
die() {
  log "error: $*"
  exit 1
}

# shellcheck source=scripts/lib/apt.sh
source "$ROOT/scripts/lib/apt.sh"
# shellcheck source=scripts/lib/proc.sh
source "$ROOT/scripts/lib/proc.sh"
