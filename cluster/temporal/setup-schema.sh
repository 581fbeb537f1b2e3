#!/usr/bin/env bash
# Creates the Temporal and visibility databases and brings both schemas to the version this server
# binary ships (the schemas are embedded in temporal-sql-tool). Safe to rerun: an existing database
# is kept and only pending schema versions are applied, which is also how a server upgrade migrates.
set -euo pipefail
sql() { temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_SEEDS" -p "${DB_PORT:-5432}" -u "$POSTGRES_USER" --pw "$POSTGRES_PWD" "$@"; }

for db in "${DBNAME:-temporal}:temporal" "${VISIBILITY_DBNAME:-temporal_visibility}:visibility"; do
  name="${db%%:*}" schema="${db##*:}"
  sql --db "$name" create-database 2>/dev/null || echo "database $name exists"
  # Version 0.0 makes the versioning table only; it is a no-op once the schema has a version.
  sql --db "$name" setup-schema -v 0.0 2>/dev/null || true
  sql --db "$name" update-schema --schema-name "postgresql/v12/$schema"
done
