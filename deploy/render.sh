#!/bin/sh
# Renders deploy/broker-a.xml and deploy/broker-b.xml, the activemq.xml files of the compose
# brokers, with the harness's own template. Usage: deploy/render.sh [OUTDIR]
# tests/system/test_compose.py renders into a temporary directory and compares with the committed files.
#
# Both bind 0.0.0.0 on the usual ActiveMQ ports inside their containers; broker a (KahaDB)
# forwards to broker b (JDBC on PostgreSQL). The database settings stay ${BURSTBENCH_PG_*}
# placeholders: the broker image's entrypoint fills them in from the environment at start,
# so no credential is ever in a committed file. The data directory is relative to the
# broker's working directory (/opt/burstbench in the image), which is a volume.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
out=${1:-$here}
py=${PYTHON:-$root/.venv/bin/python}
cd "$root"

render() {
  file=$1
  shift
  "$py" -m burstbench.infra.brokers render --host 0.0.0.0 \
    --openwire-port 61616 --stomp-port 61613 --ws-port 61614 --data-dir data "$@" \
    > "$out/$file.tmp"
  mv "$out/$file.tmp" "$out/$file"
}

render broker-a.xml --name a --persistence kahadb --network-to tcp://broker-b:61616
render broker-b.xml --name b --persistence jdbc-postgres \
  --jdbc-url 'jdbc:postgresql://${BURSTBENCH_PG_HOST}:${BURSTBENCH_PG_PORT}/${BURSTBENCH_PG_DB}' \
  --jdbc-user '${BURSTBENCH_PG_USER}' --jdbc-password '${BURSTBENCH_PG_PASSWORD}'
