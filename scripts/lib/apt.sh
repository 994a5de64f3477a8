# shellcheck shell=bash
# Shared by the project's scripts: root for apt-get, and installing Debian packages by name.
# The caller defines log and die. Long-lived children get `9>&-` so that they never keep a lock
# a caller may hold on file descriptor 9.

as_root() {
  if [[ $EUID -eq 0 ]]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    die "need root (or sudo) to run: $*"
  fi
}

APT_UPDATED=0
# apt-get's progress goes to stderr, beside the scripts' log lines: their stdout carries results
# (the fault suite's table, a path), which a package installed midway must not interleave.
apt_install() {
  command -v apt-get >/dev/null 2>&1 || die "apt-get not found; install $* yourself"
  if [[ $APT_UPDATED -eq 0 ]]; then
    log "apt-get update"
    as_root apt-get update -q </dev/null >&2 9>&-
    APT_UPDATED=1
  fi
  log "installing $*"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" </dev/null >&2 9>&-
}

# need_commands CMD...: installs the Debian packages named like the commands that are missing.
need_commands() {
  local missing=() cmd
  for cmd in "$@"; do
    command -v "$cmd" >/dev/null 2>&1 || missing+=("$cmd")
  done
  ((${#missing[@]})) || return 0
  apt_install "${missing[@]}" >/dev/null || die "could not install ${missing[*]}; install them and try again"
}
