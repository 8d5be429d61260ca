#!/usr/bin/env python3
"""burstbench consumer over STOMP with stomp.py (clients/contract.md)."""

from __future__ import annotations

import signal
import sys
import threading
from array import array

import stomp
from common import (
    Listener,
    Stop,
    Ticker,
    connect,
    emit,
    fail,
    now_ns,
    on_sigterm,
    stop_asked,
    tcp_nodelay,
)
from failover import Reconnector
from options import parse
from records import KEEP_BODY, body_facts, body_store, heads, heads_of, records_of, write_received
from slots import consume


class Collector(Listener):
    """Keeps the raw facts of each message; parsing waits until the consumer stops."""

    def __init__(self, ack: str, prefetch: int, expect: int, store: bytearray | None = None,
                 finished: threading.Event | None = None):
        super().__init__()
        self.conn = None
        # per message: its arrival time (8 bytes in an array), the header values it needs
        # joined in one string, and its body: a small one itself, a larger one's length (its
        # bytes in the store, one after the other) or its facts. One string keeps about 150
        # bytes a message where a tuple of the values kept about 600: fresh memory, page faults
        # at 3-6 µs each on the bench's VM (28955a4:docs/perf.md, "One CPU"). Not the headers
        # dict: a kept dict is walked by every full collection of the cyclic GC.
        self.times = array("q")
        self.heads: list[str] = []
        self.bodies: list = []
        self.store = store if store is not None else bytearray()
        self.view = memoryview(self.store)
        self.stored = 0  # bytes of the store used
        self.n = 0
        self.expect = expect
        # set at ``expect`` messages or when the connection drops (slots share one)
        self.finished = finished if finished is not None else threading.Event()
        self.ack_every = {"client": max(1, -(-prefetch // 2)), "client-individual": 1}.get(ack, 0)
        self.unacked = 0
        self.last = None

    def on_message(self, frame):
        self.times.append(now_ns())
        h = frame.headers
        body = frame.body
        try:
            values = heads(h)
        except KeyError:  # not a bench message, or not one of ours: see heads_of
            values = heads_of(h)
        # a tab inside a value makes too many fields: the record is foreign (parsed at stop);
        # ActiveMQ sends redelivered only when it is true
        self.heads.append("\t".join(values) + ("\t" + h["redelivered"] if "redelivered" in h
                                                else "\t"))
        n = len(body)
        if n <= KEEP_BODY:
            self.bodies.append(body)
        else:
            at = self.stored
            if at + n <= len(self.store):
                self.view[at:at + n] = body
                self.stored = at + n
                self.bodies.append(n)
            else:
                self.bodies.append(body_facts(body))
        self.n += 1
        if self.ack_every:
            self.last = h
            self.unacked += 1
            if self.unacked >= self.ack_every:
                self.conn.ack(h["message-id"], h["subscription"])
                self.unacked = 0
        if self.n == self.expect:
            self.finished.set()

    def ack_rest(self):
        if self.unacked and self.last is not None:
            self.conn.ack(self.last["message-id"], self.last["subscription"])
            self.unacked = 0

    def on_connected(self, frame):
        # --failover: what the dropped connection delivered and we had not acknowledged is
        # the broker's to redeliver; an ack of it on this connection would be an error
        self.unacked, self.last = 0, None
        super().on_connected(frame)

    def on_error(self, frame):
        super().on_error(frame)
        if self.reconnector is not None and "ACK" in self.error.upper():
            sys.stderr.write(f"ignoring the broker's error after a reconnect: {self.error}\n")
            self.error = ""

    def on_disconnected(self):
        if self.reconnector is None:
            self.finished.set()
        else:
            super().on_disconnected()


def flow_control(args) -> dict[str, str]:
    """The SUBSCRIBE header that bounds what the broker pushes ahead: ActiveMQ Classic's
    activemq.prefetchSize (messages), or with --window-bytes Artemis's consumer-window-size."""
    if args.window_bytes is not None:
        return {"consumer-window-size": str(args.window_bytes)}
    return {"activemq.prefetchSize": str(args.prefetch)}


def subscribe_all(args, conn) -> str:
    """SUBSCRIBE to every destination, the last with a receipt; returns that receipt."""
    ack = {"auto": "auto", "client": "client", "client-individual": "client-individual"}[args.ack]
    last = len(args.destinations) - 1
    for i, d in enumerate(args.destinations):
        conn.subscribe(
            "/queue/" + d,
            id=str(i),
            ack=ack,
            headers=flow_control(args),
            receipt=f"sub-{i}" if i == last else None,
        )
    return f"sub-{last}"


def main(argv=None) -> int:
    args = parse("consumer", argv)
    signal.signal(signal.SIGTERM, on_sigterm)
    if args.connections > 1:
        return consume(args, Collector, subscribe_all)
    expect = 0 if args.gate else args.count * args.bursts
    collector = Collector(args.ack, args.prefetch, expect,
                          body_store(args.count * args.bursts, args.size))
    conn, _ = connect(args, collector)
    collector.conn = conn

    def subscribe():
        return subscribe_all(args, conn)

    subscribed = subscribe()
    failover = None
    if args.failover is not None:  # stomp.py connects again; we subscribe again
        failover = Reconnector(conn, args, collector, then=subscribe)
        failover.start()
    if not collector.wait(subscribed, args.connect_timeout, conn.is_connected):
        fail(3, f"{args.url} did not confirm the subscriptions")
    emit("ready", id=args.id, role="consumer", **tcp_nodelay(conn))
    ticker = Ticker(args.id, "received", lambda: collector.n)
    ticker.start()
    try:
        if args.gate:
            asked = stop_asked()
            while not asked.wait(0.5):
                if failover is None and collector.finished.is_set():
                    break
        elif expect:
            while not collector.finished.wait(0.5):
                pass
        else:
            threading.Event().wait()
    except Stop:
        pass
    finally:
        ticker.stopped.set()
        if failover is not None:
            failover.stopping = True
    lost_connection = not conn.is_connected()
    if not lost_connection:
        collector.ack_rest()
        try:
            conn.disconnect(receipt=f"{args.id}-bye")
        except stomp.exception.StompException:
            pass
    lines, foreign, redelivered = records_of(collector)
    if args.records:
        write_received(args.records, lines)
    if failover is not None and failover.gave_up:
        fail(1, failover.gave_up)
    emit("done", id=args.id, received=len(lines), foreign=foreign, redelivered=redelivered)
    if lost_connection and failover is None and (args.gate or (expect and collector.n < expect)):
        sys.stderr.write(f"error: lost the connection to {args.url}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
