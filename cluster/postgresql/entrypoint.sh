#!/usr/bin/env bash
# Initializes the data directory on first start (superuser from POSTGRES_USER / POSTGRES_PASSWORD),
# then runs PostgreSQL in the foreground so `docker stop` shuts it down cleanly.
set -euo pipefail
: "${POSTGRES_USER:=temporal}"
: "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD must be set: the Temporal server logs in with it}"

if [[ ! -s "$PGDATA/PG_VERSION" ]]; then
  pwfile="$(mktemp)"
  printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
  initdb --username="$POSTGRES_USER" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 >/dev/null
  rm -f "$pwfile"
  # Other containers on the compose network log in with the password; nothing listens outside it.
  echo 'host all all all scram-sha-256' >> "$PGDATA/pg_hba.conf"
fi

exec postgres -c listen_addresses='*' -c max_connections="${POSTGRES_MAX_CONNECTIONS:-200}"
