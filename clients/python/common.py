"""What the stomp.py producer and consumer share: the contract's arguments, message format,
JSON lines and records (clients/contract.md is the definition)."""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import resource
import signal
import socket
import ssl
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import stomp

# stomp.py logs connection failures itself; the contract wants one error line of ours
logging.getLogger("stomp.py").setLevel(logging.CRITICAL)

CLIENT = "stomp-py"
_ID = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_DEST = re.compile(r"^[A-Za-z0-9_.:-]{1,200}$")  # the Pi worker's queues: options.yaml's rule
now_ns = time.time_ns


class ArgumentParser(argparse.ArgumentParser):
    """argparse that reports bad arguments as one ``error:`` line and exit 2."""

    def error(self, message):
        sys.stderr.write(f"error: {message}\n")
        sys.exit(2)


def fail(code: int, message: str) -> None:
    sys.stderr.write(f"error: {message}\n")
    sys.stderr.flush()
    sys.exit(code)


def positive(minimum):
    """An argparse type: an integer >= minimum."""

    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}: {value}")
        return value

    return parse


def version_line() -> str:
    return json.dumps(
        {
            "client": CLIENT,
            "library": f"stomp.py {stomp.__version__}",
            "runtime": f"Python {sys.version.split()[0]}",
        }
    )


class VersionAction(argparse.Action):
    def __init__(self, option_strings, dest, **kw):
        super().__init__(option_strings, dest, nargs=0, **kw)

    def __call__(self, parser, namespace, values, option_string=None):
        print(version_line())
        sys.exit(0)


def parser(role: str) -> ArgumentParser:
    """The contract's options for ``role`` (clients/options.yaml); the harness checks their
    values against that table, this parser their types and what the contract tests ask."""
    producer = role == "producer"
    p = ArgumentParser(prog=f"{role}.py",
                       description=f"burstbench {role} (stomp.py); see clients/contract.md")
    add = p.add_argument
    add("--url", required=True, help="stomp://HOST:PORT or stomp+ssl://HOST:PORT")
    add("--destinations", required=True, type=lambda s: s.split(","),
        help="comma-separated queue names")
    add("--count", type=positive(1 if producer else 0), default=1000,
        help="messages per burst" if producer else "stop after N x bursts messages, 0 = never")
    add("--size", type=positive(1), default=6, help="body size in bytes")
    add("--bursts", type=positive(1), default=1, help="number of bursts")
    if producer:
        add("--persistent", action="store_true", help="persistent delivery")
        add("--rate", type=float, default=0.0, help="msg/s per producer, 0 = max")
        add("--duration", type=float, default=0.0, help="seconds per burst, 0 = off")
        add("--nonce", default="0", help="run nonce stamped on every message (bb_nonce)")
    else:
        add("--ack", default="auto", choices=["auto", "client", "client-individual", "dups-ok"],
            help="acknowledgement mode")
        add("--prefetch", type=positive(1), default=1000, help="activemq.prefetchSize")
        add("--window-bytes", type=positive(-1), default=None,
            help="send consumer-window-size N (Artemis: bytes, -1 = no limit) instead of "
            "activemq.prefetchSize")
    add("--tx-batch", type=positive(0), default=0, help="transactions of N messages, 0 = none")
    add("--id", default="p1" if producer else "c1", help="process id")
    add("--records", help="write the raw records (TSV) there at stop")
    add("--gate", action="store_true", help="take go/stop commands from stdin")
    add("--user", help="broker user")
    add("--password", help="broker password (or the environment's BB_PASSWORD)")
    add("--ca", help="PEM CA file to verify the broker's TLS certificate")
    add("--cert", help="PEM client certificate for mutual TLS (with --key)")
    add("--key", help="the client certificate's PEM private key, unencrypted")
    add("--connect-timeout", type=float, default=10.0, help="seconds to connect")
    add("--failover", help="more stomp://HOST:PORT addresses: stomp.py's host list")
    add("--connections", type=positive(1), default=1,
        help="open N connections, each a slot of its own (ids ID.1..ID.N; --records PATH "
        "with {id})")
    add("--version", action=VersionAction, help="print versions as JSON")
    return p


def parse(role: str, argv=None) -> argparse.Namespace:
    p = parser(role)
    args = p.parse_args(argv)
    if args.user is not None and args.password is None:  # off the process list
        args.password = os.environ.get("BB_PASSWORD")
    if (args.cert is None) != (args.key is None):
        p.error("--cert and --key must be given together")
    for name in ("ca", "cert", "key"):
        f = getattr(args, name)
        if f is not None and not os.access(f, os.R_OK):
            p.error(f"--{name}: cannot read {f}")
    if not _ID.match(args.id):
        p.error(f"--id must match [A-Za-z0-9_.-]{{1,64}}: {args.id!r}")
    if role == "consumer" and args.ack == "dups-ok":
        p.error("--ack dups-ok is not supported by STOMP (use auto, client or client-individual)")
    u = urlsplit(args.url)
    if u.scheme not in ("stomp", "stomp+ssl") or not u.hostname or not u.port:
        p.error(f"--url must be stomp://HOST:PORT or stomp+ssl://HOST:PORT: {args.url!r}")
    args.host, args.port, args.ssl = u.hostname, u.port, u.scheme == "stomp+ssl"
    args.hosts = [(args.host, args.port)]
    if args.failover is not None:
        for url in args.failover.split(","):
            f = urlsplit(url)
            if f.scheme != u.scheme or not f.hostname or not f.port:
                p.error(f"--failover addresses must be {u.scheme}://HOST:PORT: {url!r}")
            args.hosts.append((f.hostname, f.port))
        if args.tx_batch:
            p.error("--failover with --tx-batch is not supported by this client")
    if args.connections > 1:
        if args.records is not None and "{id}" not in args.records:
            p.error("--connections > 1 needs a --records path with {id} (one file per slot): "
                    f"{args.records!r}")
        if args.failover is not None:
            p.error("--failover with --connections > 1 is not supported by this client")
    return args


def connect(args, listener: Listener | None = None, slot: str | None = None):
    """Connect within --connect-timeout or exit 3 naming the address (and the ``slot``, one
    of several connections, when given).

    One listener only: stomp.py calls every listener for every frame, so a second one
    would cost the hot path. stomp.py's documented options only: the connect timeout is
    its ``timeout`` (which stomp.py leaves on the socket), heart-beats off, no reconnects.
    Returns the connection and the listener."""
    listener = listener or Listener()
    # a program with a parser of its own (the Pi worker) has one address and no --failover
    failover = getattr(args, "failover", None)
    hosts = getattr(args, "hosts", None) or [(args.host, args.port)]
    # --failover: stomp.py's host list, tried in order, a pause of 0.1 s growing to 1 s
    # between rounds, about --connect-timeout s in all (each failed host counts one attempt)
    again = {"reconnect_attempts_max": 1} if failover is None else {
        "reconnect_sleep_initial": 0.1, "reconnect_sleep_increase": 0.5,
        "reconnect_sleep_max": 1.0, "reconnect_sleep_jitter": 0.0,
        "reconnect_attempts_max": max(1, int(args.connect_timeout) * len(hosts))}
    conn = stomp.Connection11(
        hosts,
        timeout=args.connect_timeout,
        auto_decode=False,
        heartbeats=(0, 0),
        **again,
    )
    if args.ssl:
        conn.set_ssl(for_hosts=hosts, ca_certs=args.ca, cert_file=args.cert,
                     key_file=args.key)
    conn.set_listener("bench", listener)
    deadline = time.monotonic() + args.connect_timeout
    where = args.url if slot is None else f"{args.url} (slot {slot})"
    try:
        conn.connect(args.user, args.password, wait=True)
    except Exception as e:  # noqa: BLE001 - stomp.py raises several kinds, all mean the same
        fail(3, f"cannot connect to {where}: {listener.error or type(e).__name__}")
    if time.monotonic() > deadline or not conn.is_connected():
        fail(3, f"cannot connect to {where}: {listener.error or 'timed out'}")
    return conn, listener


def tcp_nodelay(conn) -> dict:
    """The ready line's socket facts: TCP_NODELAY as read back from stomp.py's socket, and
    over TLS the version it negotiated (ssl.SSLSocket.version(): "TLSv1.3")."""
    sock = getattr(conn.transport, "socket", None)
    if sock is None:
        return {"tcp_nodelay": None, "tcp_nodelay_how": "unknown"}
    on = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
    facts = {"tcp_nodelay": bool(on), "tcp_nodelay_how": "getsockopt"}
    if isinstance(sock, ssl.SSLSocket) and sock.version():
        facts["tls"] = sock.version()
    return facts


class Listener(stomp.ConnectionListener):
    """Receipts (wakes whoever waits for one) and errors; consumers add ``on_message``."""

    def __init__(self):
        self.cond = threading.Condition()
        self.seen = set()
        self.error = ""
        self.connections = 0  # CONNECTED frames so far (a change: stomp.py connected again)
        self.reconnector = None  # --failover: a Reconnector

    def on_connected(self, frame):
        with self.cond:
            self.connections += 1
            self.cond.notify_all()

    def on_receipt(self, frame):
        with self.cond:
            self.seen.add(frame.headers.get("receipt-id"))
            self.cond.notify_all()

    def on_error(self, frame):
        self.error = frame.headers.get("message", "") or frame.body.decode(errors="replace")

    def on_disconnected(self):
        if self.reconnector is not None:
            self.reconnector.on_disconnected()

    def wait_connected(self, after: int, timeout: float) -> bool:
        """Until a CONNECTED frame beyond the ``after``-th came; False on timeout."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while self.connections <= after:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.cond.wait(min(left, 0.5))
            return True


    def wait(self, receipt: str, timeout: float, connected) -> bool:
        """Wait for the broker's RECEIPT for ``receipt``; False on timeout or disconnect."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while receipt not in self.seen:
                left = deadline - time.monotonic()
                if left <= 0 or not connected():
                    return False
                self.cond.wait(min(left, 0.5))
            self.seen.discard(receipt)
            return True


_out_lock = threading.Lock()


def emit(event: str, **fields) -> None:
    line = json.dumps({"event": event, **fields})
    with _out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


class Ticker(threading.Thread):
    """Prints a ``tick`` line once a second with the total from ``read()``."""

    def __init__(self, ident: str, key: str, read):
        super().__init__(daemon=True, name="ticker")
        self.client_id, self.key, self.read = ident, key, read
        self.stopped = threading.Event()

    def run(self):
        while not self.stopped.wait(1.0):
            emit("tick", id=self.client_id, t_ns=now_ns(), **{self.key: self.read()})


# ---------------------------------------------------------------- --connections N > 1

# Each stomp.py connection has a receiver thread that needs little stack (a frame, its
# listener, a send). 256 KiB rather than the default 8 MiB keeps 10,000 of them within a few
# GiB of address space (only touched pages are resident either way).
SLOT_STACK = 256 << 10


def slot_ids(args) -> list[str]:
    """The slots' ids: ``ID.1`` ... ``ID.N``."""
    return [f"{args.id}.{i}" for i in range(1, args.connections + 1)]


def slot_records(args, slot: str) -> str | None:
    """A slot's records file: --records with ``{id}`` replaced by the slot's id."""
    return None if args.records is None else args.records.replace("{id}", slot)


def prepare_slots(args) -> None:
    """Before opening --connections N: small stacks for their receiver threads, and a file
    descriptor limit with room for N connections (raised up to the hard limit; below it the
    client cannot do it: exit 2, before any connection)."""
    threading.stack_size(SLOT_STACK)
    n = args.connections
    # a TLS connection of stomp.py also holds a socket pair (its send queue) and a selector;
    # then stdin/out/err, the records files, the runtime's own
    need = n * (4 if args.ssl else 1) + 64
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < need:
        if hard != resource.RLIM_INFINITY and hard < need:
            fail(2, f"--connections {n} needs about {need} file descriptors; the hard limit "
                 f"is {hard} (ulimit -n)")
        resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))


def all_at_once(tasks: list) -> None:
    """Run the callables ``tasks`` on a few threads: stomp.py's disconnect() waits for the
    broker's receipt and its receiver thread's end, a round trip that takes seconds for
    thousands of slots one after another."""
    if tasks:
        with ThreadPoolExecutor(max_workers=min(32, len(tasks))) as pool:
            for _ in pool.map(lambda task: task(), tasks):
                pass


def emit_lines(lines: list[tuple[str, dict]]) -> None:
    """Several JSON lines written at once, one flush (thousands of slots' ticks a second)."""
    if not lines:
        return
    text = "".join(json.dumps({"event": event, **fields}) + "\n" for event, fields in lines)
    with _out_lock:
        sys.stdout.write(text)
        sys.stdout.flush()


class SlotTicker(threading.Thread):
    """One thread for every slot's ``tick``: once a second, a line for each slot whose total
    (``read()``) changed since its last line."""

    def __init__(self, key: str, slots: list[tuple[str, object]]):
        super().__init__(daemon=True, name="ticker")
        self.key, self.slots = key, slots  # (slot id, read)
        self.stopped = threading.Event()

    def run(self):
        shown = [0] * len(self.slots)
        while not self.stopped.wait(1.0):
            t, lines = now_ns(), []
            for k, (slot, read) in enumerate(self.slots):
                total = read()
                if total != shown[k]:
                    shown[k] = total
                    lines.append(("tick", {"id": slot, "t_ns": t, self.key: total}))
            emit_lines(lines)


class Stop(Exception):
    """Raised in the main thread by SIGTERM."""


def on_sigterm(*_):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise Stop()


def stdin_commands():
    """Lines from stdin, stripped, until end of file."""
    for line in sys.stdin:
        yield line.strip()
