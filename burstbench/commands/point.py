"""The options of a point, shared by ``./bench run`` and ``./bench sweep``, and the point's
spec made from them."""

from __future__ import annotations

import argparse
import sys

from burstbench import clients
from burstbench.commands.args import integer, number, rate, seconds
from burstbench.infra import brokers, topology
from burstbench.measure.spec import PointSpec


def add_point_options(p: argparse.ArgumentParser) -> None:
    known = clients.help_text()
    p.add_argument(
        "--producer",
        default="stomp-py",
        help=f"producer client(s), comma-separated, taken in turn. Known: {known}",
    )
    p.add_argument("--consumer", default="stomp-py", help="consumer client(s), comma-separated")
    p.add_argument(
        "--producers",
        type=integer(0),
        default=0,
        help="producer processes (default: one per --producer entry)",
    )
    p.add_argument("--consumers", type=integer(1), default=1, help="competing consumers")
    p.add_argument("--connections-per-process", type=integer(1), default=1, metavar="N",
                   help="producer and consumer slots per client process, each a connection of "
                        "its own (stock clients; default 1: a process per slot)")
    p.add_argument("--connect-timeout", type=number(0), default=0.0, metavar="S",
                   help="the clients' --connect-timeout, seconds per connection (default: "
                        "theirs, 10); thousands connecting at once may need more")
    p.add_argument("--count", type=integer(1), default=10000,
                   help="messages per producer per burst")
    p.add_argument("--size", type=integer(1), default=6, help="body bytes")
    p.add_argument(
        "--bursts",
        type=integer(1),
        default=4,
        help="bursts; the first is warm-up and excluded when > 1",
    )
    p.add_argument("--queues", type=integer(1), default=1, help="queues the messages spread over")
    p.add_argument("--persistent", action="store_true", help="persistent delivery")
    p.add_argument("--broker", default="classic", choices=brokers.BROKERS,
                   help="the broker the bench starts: ActiveMQ Classic 6.1.7 (default), another "
                   "Classic version (classic:5.18.6, classic:6.3.1: OpenWire and STOMP only) or "
                   "ActiveMQ Artemis 2.44.0 (docs/brokers.md)")
    p.add_argument(
        "--persistence", default="none",
        help="broker store: none; Classic: kahadb, kahadb-nosync; Artemis: journal, "
        "journal-nosync; either: jdbc-postgres, jdbc-mariadb (Classic also jdbc-derby)"
    )
    p.add_argument(
        "--ack", default="auto", choices=["auto", "client", "client-individual", "dups-ok"]
    )
    p.add_argument("--prefetch", type=integer(1), default=1000)
    p.add_argument("--rate", type=rate, default=0.0,
                   help="msg/s per producer; 0 or max = as fast as possible")
    p.add_argument("--duration", type=seconds, default=0.0, metavar="SECONDS",
                   help="sustained mode: producers send open-loop for this long after the "
                   "warm-up (e.g. 60s), figures per 1 s and 10 s window; --count and --bursts "
                   "are then unused")
    p.add_argument("--warmup", type=seconds, default=0.0, metavar="SECONDS",
                   help="sustained mode: seconds sent before the measured duration (e.g. 15s)")
    p.add_argument("--tx-batch", type=integer(0), default=0, help="transacted batches of N")
    p.add_argument("--topology", default="single",
                   help="networks of brokers: " + ", ".join(topology.TOPOLOGIES)
                   + " (Classic's network connectors; on Artemis a cluster, chain3 refused)")
    p.add_argument("--discovery", default="static", help="static or multicast (netns only)")
    p.add_argument("--hosts", default="loopback",
                   help="loopback (ports on 127.0.0.1), netns (a network namespace each), "
                        "netns-ssh (namespaces each running sshd: brokers, producers and "
                        "consumers on hosts of their own, reached over SSH) or an inventory "
                        "FILE.yaml of SSH hosts (see burstbench/infra/inventory.py)")
    p.add_argument("--link-rate", default="", help="tbf rate limit on broker links, e.g. "
                   "10mbit (netns only)")
    p.add_argument("--tls", action="store_true", help="TLS-only connectors with a throwaway CA; "
                   "clients verify the broker's certificate (with --broker-url: only TLS URLs, "
                   "which make a point TLS without it)")
    p.add_argument("--auth", action="store_true",
                   help="brokers require a user (generated password); clients log in (with "
                   "--broker-url: needs --user, which makes a point one with a login without it)")
    p.add_argument("--broker-url", action="append", default=[], metavar="URLS",
                   help="use a broker the harness did not start: comma-separated URLs, e.g. "
                   "tcp://h:61616,stomp://h:61613,ws://h:61614/ (repeat per broker); over TLS "
                   "ssl://, stomp+ssl://, wss://")
    add_login_options(p)
    add_admin_options(p)
    p.add_argument(
        "--no-flow-control", action="store_true", help="turn the broker's producer flow control off"
    )
    p.add_argument(
        "--optimized-dispatch", action=argparse.BooleanOptionalAction, default=False,
        help="queues dispatch in the thread that wakes them (a send, an ack) rather than in a "
        "pooled task (ActiveMQ's optimizedDispatch)")
    p.add_argument("--browser", default="browsers", choices=["browsers", "tabs"],
                   help="stompjs:browser consumers: each in a Chromium of its own (browsers) or "
                   "as tabs of one Chromium (tabs); recorded in the result")
    p.add_argument("--cpus-broker", default="", metavar="LIST",
                   help="run the brokers on these CPUs only (taskset -c LIST, e.g. 0)")
    p.add_argument("--cpus-clients", default="", metavar="LIST",
                   help="run the producers and consumers on these CPUs only (e.g. 1): the load "
                   "generator kept off the broker's cores")
    p.add_argument(
        "--tcp-nodelay", action=argparse.BooleanOptionalAction, default=False,
        help="TCP_NODELAY on the broker's STOMP and OpenWire connectors (transport.tcpNoDelay; "
        "off as ActiveMQ ships it; an OpenWire connection then takes the negotiated "
        "wireFormat.tcpNoDelayEnabled, true by default). The clients keep their libraries' own "
        "setting")
    p.add_argument("--transport", choices=["tcp", "nio"], default="tcp",
                   help="the Classic broker's STOMP and OpenWire connectors: tcp (a thread per "
                   "connection, as ActiveMQ ships them) or nio (a selector serving many "
                   "connections: nio://, stomp+nio://); recorded in the result")


def add_login_options(p) -> None:
    """A --broker-url broker's own login and trust (burstbench/infra/outside.py)."""
    p.add_argument("--user", default="", metavar="NAME",
                   help="the --broker-url broker's user, for every client (its password from "
                   "--password-file or BURSTBENCH_PASSWORD; the clients get it in their "
                   "environment)")
    p.add_argument("--password-file", default="", metavar="FILE",
                   help="a file holding the --user's password (never printed nor recorded)")
    p.add_argument("--ca", default="", metavar="FILE",
                   help="the PEM CA bundle the --broker-url broker's TLS certificates are "
                   "checked against (default: the system's trust store)")
    p.add_argument("--cert", default="", metavar="FILE",
                   help="the clients' PEM certificate, for a --broker-url broker that asks for "
                   "one (mutual TLS; with --key)")
    p.add_argument("--key", default="", metavar="FILE",
                   help="the --cert's PEM private key, unencrypted (PKCS#8)")


def add_admin_options(p) -> None:
    """The second witness of a broker given with --broker-url: its Jolokia (both consoles)."""
    p.add_argument("--broker-admin", action="append", default=[], metavar="URL",
                   help="the --broker-url broker's Jolokia, whose counters witness the run "
                   "(repeat per broker, in order): Classic http://HOST:8161/api/jolokia, "
                   "Artemis http://HOST:8161/console/jolokia. Without it: Classic's statistics "
                   "plugin if the broker runs it, else no second witness")
    p.add_argument("--admin-user", default="", metavar="NAME",
                   help="the console user for --broker-admin (the password from "
                   "--admin-password-file or BURSTBENCH_ADMIN_PASSWORD)")
    p.add_argument("--admin-password-file", default="", metavar="FILE",
                   help="a file holding the --admin-user's password (never printed nor "
                   "recorded)")


def add_live_options(p) -> None:
    p.add_argument("--live", action="store_true",
                   help="serve a page on 127.0.0.1 that follows the run (stompjs in the browser, "
                   "over the broker's WebSocket, from a topic of the harness's own)")
    p.add_argument("--live-port", type=integer(0), default=0, metavar="PORT",
                   help="the live page's port (default: a free one)")


def live_started(args):
    """Start the live view when asked (its address on stderr); a context for the command."""
    import contextlib

    from burstbench.measure import live

    if not getattr(args, "live", False):
        return contextlib.nullcontext()
    view = live.start(args.live_port)
    print(f"live view: {view.url}", file=sys.stderr, flush=True)
    return contextlib.closing(live)


def spec_from(args) -> PointSpec:
    spec = PointSpec(
        producer=[s for s in args.producer.split(",") if s],
        consumer=[s for s in args.consumer.split(",") if s],
        producers=args.producers,
        consumers=args.consumers,
        connections_per_process=args.connections_per_process,
        connect_timeout=args.connect_timeout,
        count=args.count,
        size=args.size,
        bursts=args.bursts,
        queues=args.queues,
        persistent=args.persistent,
        broker=args.broker,
        persistence=args.persistence,
        ack=args.ack,
        prefetch=args.prefetch,
        rate=args.rate,
        duration=args.duration,
        warmup=args.warmup,
        tx_batch=args.tx_batch,
        topology=args.topology,
        discovery=args.discovery,
        hosts=args.hosts,
        link_rate=args.link_rate,
        broker_urls=args.broker_url,
        broker_admin=args.broker_admin,
        admin_user=args.admin_user,
        admin_password_file=args.admin_password_file,
        user=args.user,
        password_file=args.password_file,
        ca=args.ca,
        cert=args.cert,
        key=args.key,
        tls=args.tls,
        auth=args.auth,
        producer_flow_control=not args.no_flow_control,
        optimized_dispatch=args.optimized_dispatch,
        tcp_nodelay=args.tcp_nodelay,
        transport=args.transport,
        cpus_broker=args.cpus_broker,
        cpus_clients=args.cpus_clients,
        browser=args.browser,
    )
    spec.validate()
    return spec
