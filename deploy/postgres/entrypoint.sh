#!/bin/sh
# PostgreSQL in the compose deployment: the credentials made in their volume if missing
# (burstbench-credentials, deploy/postgres/credentials.sh); on the first start of an empty
# $PGDATA, a cluster
# whose superuser is the credentials' user (password from its file, scram-sha-256 over TCP)
# and the credentials' database; then the server in the foreground, listening on every
# interface of the container.
set -eu
: "${PGDATA:?}" "${POSTGRES_DB_FILE:?}" "${POSTGRES_USER_FILE:?}" "${POSTGRES_PASSWORD_FILE:?}"
burstbench-credentials "$(dirname "$POSTGRES_PASSWORD_FILE")"
db=$(cat "$POSTGRES_DB_FILE")
user=$(cat "$POSTGRES_USER_FILE")
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    initdb -D "$PGDATA" -U "$user" --pwfile="$POSTGRES_PASSWORD_FILE" -E UTF8 \
        --auth-local=trust --auth-host=scram-sha-256 >/dev/null
    printf "listen_addresses = '*'\n" >> "$PGDATA/postgresql.conf"
    printf 'host all all all scram-sha-256\n' >> "$PGDATA/pg_hba.conf"
    if [ "$db" != postgres ]; then
        # single-user mode: no server listens while the database is made
        printf 'CREATE DATABASE "%s" OWNER "%s";\n' "$db" "$user" \
            | postgres --single -D "$PGDATA" -j postgres >/dev/null
    fi
    echo "burstbench-postgres: cluster created, database $db, user $user"
fi
exec postgres -D "$PGDATA"
