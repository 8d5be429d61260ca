#!/usr/bin/env python3
"""burstbench consumer over STOMP with stomp.py (clients/contract.md)."""

from __future__ import annotations

import signal
import sys
import threading
import zlib

import stomp
from common import (
    Listener,
    Reconnector,
    Stop,
    Ticker,
    connect,
    emit,
    fail,
    now_ns,
    on_sigterm,
    parse,
    stdin_commands,
    tcp_nodelay,
)


class Collector(Listener):
    """Keeps the raw facts of each message; parsing waits until the consumer stops."""

    def __init__(self, ack: str, prefetch: int, expect: int):
        super().__init__()
        self.conn = None
        # records in chunks: a full chunk becomes a tuple of untracked tuples, which the cyclic
        # GC untracks too, so a collection walks ~n/1024 objects instead of every record
        self.chunks: list = []
        self.raw: list = []
        self.n = 0
        self.expect = expect
        self.finished = threading.Event()
        self.ack_every = {"client": max(1, -(-prefetch // 2)), "client-individual": 1}.get(ack, 0)
        self.unacked = 0
        self.last = None

    def on_message(self, frame):
        t = now_ns()
        h = frame.headers
        body = frame.body
        raw = self.raw
        raw.append((t, h, body[:6], len(body), zlib.crc32(body)))
        if len(raw) == 1024:
            self.chunks.append(tuple(raw))
            raw.clear()
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


def _field(value: str) -> str:
    """A received header value as one TSV field (a tab or newline would split the record)."""
    return value.replace("\t", "?").replace("\n", "?").replace("\r", "?")


def main(argv=None) -> int:
    args = parse("consumer", argv)
    signal.signal(signal.SIGTERM, on_sigterm)
    expect = 0 if args.gate else args.count * args.bursts
    collector = Collector(args.ack, args.prefetch, expect)
    conn, _ = connect(args, collector)
    collector.conn = conn
    ack = {"auto": "auto", "client": "client", "client-individual": "client-individual"}[args.ack]

    def subscribe():
        for i, d in enumerate(args.destinations):
            conn.subscribe(
                "/queue/" + d,
                id=str(i),
                ack=ack,
                headers={"activemq.prefetchSize": str(args.prefetch)},
                receipt=f"sub-{i}" if i == len(args.destinations) - 1 else None,
            )

    subscribe()
    failover = None
    if args.failover is not None:  # stomp.py connects again; we subscribe again
        failover = Reconnector(conn, args, collector, then=subscribe)
        failover.start()
    if not collector.wait(
        f"sub-{len(args.destinations) - 1}", args.connect_timeout, conn.is_connected
    ):
        fail(3, f"{args.url} did not confirm the subscriptions")
    emit("ready", id=args.id, role="consumer", **tcp_nodelay(conn))
    ticker = Ticker(args.id, "received", lambda: collector.n)
    ticker.start()
    try:
        if args.gate:
            for cmd in stdin_commands():
                if cmd == "stop":
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
    collector.chunks.append(tuple(collector.raw))  # (after the disconnect: nothing comes now)
    foreign = redelivered = 0
    lines = []
    for t, h, prefix, n, crc in (r for chunk in collector.chunks for r in chunk):
        try:
            producer = h["bb_producer"]
            seq = int(h["bb_seq"])
            burst = int(h["bb_burst"])
            sent = int(h["bb_sent_ns"])
        except (KeyError, ValueError):
            foreign += 1
            continue
        expected = b"%06d" % (seq % 1000000)
        ok = 1 if prefix == expected[: min(6, n)] else 0
        redo = 1 if h.get("redelivered") == "true" else 0
        redelivered += redo
        dest = h.get("destination", "").removeprefix("/queue/")
        nonce, hcrc = (_field(h.get("bb_nonce", "-")), _field(h.get("bb_crc32", "-")))
        lines.append(f"{producer}\t{seq}\t{burst}\t{sent}\t{t}\t{n}\t{ok}\t{redo}\t{dest}\t"
                     f"{nonce}\t{hcrc}\t{crc:08x}\n")
    if args.records:
        with open(args.records, "w") as f:
            f.write("#producer\tseq\tburst\tsent_ns\trecv_ns\tbytes\tbody_ok\tredelivered\tdest"
                    "\tnonce\tcrc32_header\tcrc32_body\n")
            f.writelines(lines)
    if failover is not None and failover.gave_up:
        fail(1, failover.gave_up)
    emit("done", id=args.id, received=len(lines), foreign=foreign, redelivered=redelivered)
    if lost_connection and expect and collector.n < expect:
        sys.stderr.write(f"error: lost the connection to {args.url}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
