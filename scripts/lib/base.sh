# shellcheck shell=bash
# What every script of the project starts with. The caller sets ROOT and LOG_NAME first.

# Maven and its wrapper keep their files under $HOME/.m2.
if [[ -z ${HOME:-} ]]; then
  HOME="$(getent passwd "$(id -u)" | cut -d: -f6)"
  export HOME
fi

# shellcheck disable=SC2034 # used by the scripts that source this
JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"

log() { printf '%s: %s\n' "$LOG_NAME" "$*" >&2; }
die() {
  log "error: $*"
  exit 1
}

# shellcheck source=scripts/lib/apt.sh
source "$ROOT/scripts/lib/apt.sh"
# shellcheck source=scripts/lib/proc.sh
source "$ROOT/scripts/lib/proc.sh"
