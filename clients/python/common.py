"""What the stomp.py producer and consumer share: the contract's arguments, message format,
JSON lines and records (clients/contract.md is the definition)."""

from __future__ import annotations

import json
import logging
import math
import signal
import socket
import ssl
import sys
import threading
import time

import stomp

# stomp.py logs connection failures itself; the contract wants one error line of ours
logging.getLogger("stomp.py").setLevel(logging.CRITICAL)

CLIENT = "stomp-py"
now_ns = time.time_ns


def fail(code: int, message: str) -> None:
    sys.stderr.write(f"error: {message}\n")
    sys.stderr.flush()
    sys.exit(code)


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
    emit_lines([(event, fields)])


def emit_lines(lines: list[tuple[str, dict]]) -> None:
    """JSON lines written at once, one flush (thousands of slots' ticks a second)."""
    if not lines:
        return
    text = "".join(json.dumps({"event": event, **fields}) + "\n" for event, fields in lines)
    with _out_lock:
        sys.stdout.write(text)
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


class Stop(Exception):
    """Raised in the main thread by SIGTERM."""


def on_sigterm(*_):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise Stop()


def stdin_commands():
    """Lines from stdin, stripped, until end of file."""
    for line in sys.stdin:
        yield line.strip()


def stop_asked() -> threading.Event:
    """--gate: stdin read in a thread of its own until ``stop`` or end of input (the event),
    so that a dropped connection (without --failover) ends a consumer as it does ungated,
    rather than leaving it waiting for ``stop``."""
    asked = threading.Event()

    def read_stdin():
        for cmd in stdin_commands():
            if cmd == "stop":
                break
        asked.set()

    threading.Thread(target=read_stdin, daemon=True).start()
    return asked


def bursts_asked(args):
    """The bursts to send: without --gate all of them, with it one per ``go`` until ``stop``
    or end of input."""
    if not args.gate:
        yield from range(args.bursts)
        return
    b = 0
    for cmd in stdin_commands():
        if cmd == "go":
            yield b
            b += 1
        elif cmd == "stop":
            return


def burst_count(args) -> int:
    """Messages per burst; with --duration the messages due before its end (open loop), or
    without a rate a flood the end time cuts short."""
    if int(args.duration * 1e9):
        return max(1, math.ceil(args.duration * args.rate)) if args.rate > 0 else 10**15
    return args.count
