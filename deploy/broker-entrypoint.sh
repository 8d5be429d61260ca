#!/bin/bash
# Entrypoint of the broker image: [LAUNCHER OPTIONS...] ACTIVEMQ_XML
#
# Copies ACTIVEMQ_XML to $BURSTBENCH_RUN_DIR with every ${BURSTBENCH_*} placeholder replaced
# by that environment variable's value, XML-escaped (an unset one is an error, never an empty
# password), then execs the launcher burstbench.broker.Main on the copy, so the JVM is PID 1
# and gets SIGTERM from `docker stop`.
#
# Environment: BURSTBENCH_BROKER_HEAP (default 1g), BURSTBENCH_BROKER_CP (the launcher's
# classpath), BURSTBENCH_RUN_DIR (default /tmp/burstbench), BURSTBENCH_BROKER_JAVA_OPTS; any
# BURSTBENCH_X_FILE=PATH sets BURSTBENCH_X from that file.
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: $0 [--watch-stdin] [--check] ACTIVEMQ_XML" >&2
  exit 2
fi
xml=${!#}
opts=("${@:1:$#-1}")
run_dir=${BURSTBENCH_RUN_DIR:-/tmp/burstbench}
heap=${BURSTBENCH_BROKER_HEAP:-1g}
cp=${BURSTBENCH_BROKER_CP:-/opt/burstbench/broker/classes:/opt/burstbench/broker/lib/*}

# BURSTBENCH_X_FILE=PATH sets BURSTBENCH_X to the file's content (as PostgreSQL's image does
# with its *_FILE variables): credentials come from a volume, never from the environment
while IFS= read -r var; do
  name=${var%_FILE}
  if [ -n "${!name:-}" ]; then
    echo "broker-entrypoint: both $name and $var are set" >&2
    exit 2
  fi
  if [ ! -r "${!var}" ]; then
    echo "broker-entrypoint: $var: cannot read ${!var}" >&2
    exit 2
  fi
  export "$name=$(cat "${!var}")"
done < <(compgen -e | grep -E '^BURSTBENCH_[A-Z0-9_]+_FILE$' || true)

mkdir -p "$run_dir"
resolved="$run_dir/activemq.xml"
# perl-base is part of every Debian and Ubuntu image; sed cannot escape arbitrary values safely
perl -e '
  my %esc = ("&" => "&amp;", "<" => "&lt;", ">" => "&gt;", "\"" => "&quot;", "\x27" => "&apos;");
  while (my $line = <STDIN>) {
    $line =~ s{\$\{(BURSTBENCH_[A-Z0-9_]+)\}}{
      defined $ENV{$1} or die "broker-entrypoint: $1 is not set\n";
      (my $v = $ENV{$1}) =~ s/([&<>"\x27])/$esc{$1}/g;
      $v
    }ge;
    print $line;
  }' < "$xml" > "$resolved"

# the same JVM flags as burstbench.infra.brokers.java_argv
# shellcheck disable=SC2086  # JAVA_OPTS is a list of words on purpose
exec java "-Xms$heap" "-Xmx$heap" -XX:+UseParallelGC -Djava.net.preferIPv4Stack=true \
  ${BURSTBENCH_BROKER_JAVA_OPTS:-} -cp "$cp" burstbench.broker.Main "${opts[@]}" "$resolved"
