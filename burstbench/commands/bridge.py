"""``./bench bridge``: the bridge's HTTP API on Akka or Pekko, in the foreground."""

from __future__ import annotations

import sys

from burstbench import clients
from burstbench.commands.args import integer

NAME = "bridge"
WRITES_RUNS = False
HELP = ("serve the bridge's HTTP API (POST /bursts, /messages, "
        "/pi; akka-bridge/README.md) on Akka or Pekko until Ctrl-C")


def add_arguments(p) -> None:
    p.add_argument("--runtime", choices=sorted(clients.BRIDGE_MODULES), default="akka",
                   help="akka (Akka 2.6.20, the default) or pekko (Apache Pekko 1.7.0): the "
                   "same sources built for each")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=integer(0), default=8411, help="port (default 8411; 0 = any "
                   "free port, printed in the ready line)")
    p.add_argument("--broker-url", metavar="URL", help="the broker route broker and "
                   "?relay= use when a request names none, e.g. tcp://127.0.0.1:61616")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="any other key of the "
                   "bridge's configuration (akka-bridge/README.md), e.g. --set "
                   "ask-timeout=30s --set limits.max-workers=16; repeatable")


def run(args) -> int:
    """``./bench bridge``: the bridge's HTTP API in the foreground on the runtime asked for;
    the JVM takes this process's place, so Ctrl-C (or SIGTERM) reaches it directly and it
    shuts down as akka-bridge/README.md says."""
    import os

    from burstbench import paths

    if args.port > 65535:
        raise ValueError(f"--port: must be 0..65535: {args.port}")
    module = clients.BRIDGE_MODULES[args.runtime]
    paths.require_built(module.name, module / "target" / "classes" / "burstbench")
    settings = {"host": args.host, "port": args.port}
    if args.broker_url:
        settings["broker_url"] = args.broker_url
    for item in args.set or ():
        key, eq, value = item.partition("=")
        if not eq or not key or any(c.isspace() for c in key):
            raise ValueError(f"--set: expected KEY=VALUE (a key of the bridge's configuration, "
                             f"e.g. limits.max-body-bytes=65536): {item!r}")
        settings[key] = value
    argv = clients.bridge_http(args.runtime, **settings)
    print(f"bench bridge: {module.name} on {args.host}:{args.port or 'any free port'}",
          file=sys.stderr, flush=True)
    os.execvp(argv[0], argv)
    return 1  # not reached
