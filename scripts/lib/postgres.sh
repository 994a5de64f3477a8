# shellcheck shell=bash
# Shared by the project's scripts: Debian's PostgreSQL server and psql as its superuser. The
# caller defines log, HOST and PG_PORT.

# pg_version: the major version of the PostgreSQL server installed (the last of
# /usr/lib/postgresql/*); fails when there is none.
pg_version() {
  local d ver=""
  for d in /usr/lib/postgresql/*/bin/postgres; do
    [[ -x $d ]] && ver="$(basename "$(dirname "$(dirname "$d")")")"
  done
  [[ -n $ver ]] && printf '%s\n' "$ver"
}

PG_ADMIN=()
# pg_admin <psql arguments>: psql into the database postgres on PG_PORT as a superuser, which may
# create roles and databases: the postgres OS user over the local socket (Debian's peer
# authentication; through `sudo -n` when not root), else PG_SUPERUSER (postgres) over TCP where it
# logs in without a prompt (trust, PGPASSWORD). The first way that answers is kept.
pg_admin() {
  if ((${#PG_ADMIN[@]} == 0)); then
    local socket="sudo -n -u postgres psql" way
    [[ $EUID -ne 0 ]] || socket="runuser -u postgres -- psql"
    for way in "$socket" "env PGCONNECT_TIMEOUT=5 psql -w -h $HOST -U ${PG_SUPERUSER:-postgres}"; do
      read -ra PG_ADMIN <<<"$way"
      [[ "$(cd / && "${PG_ADMIN[@]}" -X -A -t -p "$PG_PORT" -d postgres -c 'SELECT 1' 2>/dev/null </dev/null)" == 1 ]] && break
      PG_ADMIN=()
    done
    if ((${#PG_ADMIN[@]} == 0)); then
      log "postgres: cannot connect as a superuser (the postgres OS user, or ${PG_SUPERUSER:-postgres} over TCP)"
      return 1
    fi
  fi
  (cd / && "${PG_ADMIN[@]}" -X -q -A -t -v ON_ERROR_STOP=1 -p "$PG_PORT" -d postgres "$@" </dev/null)
}
