#!/bin/sh
# The deployment's database credentials, one file each in the directory $1 (the credentials
# volume): made on the first start and kept; a value in POSTGRES_DB, POSTGRES_USER or
# POSTGRES_PASSWORD (from .env) replaces its file's. Readable by every service that mounts
# the volume (broker b reads them as uid 10001).
set -eu
umask 022
cd "$1"
put() {
    if [ -n "$2" ]; then printf '%s' "$2" > "$1.new"; mv "$1.new" "$1"
    elif [ ! -s "$1" ]; then printf '%s' "$3" > "$1.new"; mv "$1.new" "$1"; fi
    chmod 0444 "$1"
}
put postgres_db "${POSTGRES_DB:-}" activemq
put postgres_user "${POSTGRES_USER:-}" bench
put postgres_password "${POSTGRES_PASSWORD:-}" \
    "$(head -c 48 /dev/urandom | base64 | tr -dc A-Za-z0-9 | head -c 32)"
echo "credentials: postgres_db, postgres_user, postgres_password in $1"
