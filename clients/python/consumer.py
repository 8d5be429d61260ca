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

# bytes: a larger body is summarised on arrival (its length, CRC-32 and first bytes), not kept.
# A kept body is fresh memory: 1 KiB bodies cost 0.25 page faults a message, 3-6 µs each on the
# bench's VM, more than their CRC-32 now (0.5 µs; docs/perf.md, "Kept bodies are page faults").
KEEP_BODY = 256


def body_facts(body: bytes) -> tuple[int, int, bytes]:
    """What the records need of a body: its length, CRC-32 and first 6 bytes."""
    return len(body), zlib.crc32(body), body[:6]


class Collector(Listener):
    """Keeps the raw facts of each message; parsing waits until the consumer stops."""

    def __init__(self, ack: str, prefetch: int, expect: int):
        super().__init__()
        self.conn = None
        # one tuple of strings and ints per message: the header values it needs, not the
        # headers dict (a kept dict is walked by every full collection of the cyclic GC; a
        # tuple of strings is untracked at the first collection it survives)
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
        g = h.get
        body = frame.body
        # a small body itself (stomp.py made it; keeping it copies nothing), its length and
        # CRC-32 taken at stop; a body over KEEP_BODY is summarised here instead
        self.raw.append((t, g("bb_producer"), g("bb_seq"), g("bb_burst"), g("bb_sent_ns"),
                         g("bb_nonce"), g("bb_crc32"), g("destination"), g("redelivered"),
                         body if len(body) <= KEEP_BODY
                         else body_facts(body)))
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
            # stdin in a thread of its own: a dropped connection (without --failover) ends the
            # consumer as it does ungated, rather than leaving it waiting for `stop`
            asked = threading.Event()

            def read_stdin():
                for cmd in stdin_commands():
                    if cmd == "stop":
                        break
                asked.set()

            threading.Thread(target=read_stdin, daemon=True).start()
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
    foreign = redelivered = 0
    lines = []
    # (after the disconnect: nothing comes now)
    for t, producer, seq, burst, sent, nonce, hcrc, dest, red, body in collector.raw:
        n, crc, prefix = body if type(body) is tuple else body_facts(body)
        try:
            if producer is None:
                raise ValueError
            seq, burst, sent = int(seq), int(burst), int(sent)
        except (TypeError, ValueError):
            foreign += 1
            continue
        expected = b"%06d" % (seq % 1000000)
        ok = 1 if prefix == expected[: min(6, n)] else 0
        redo = 1 if red == "true" else 0
        redelivered += redo
        dest = (dest or "").removeprefix("/queue/")
        nonce = "-" if nonce is None else _field(nonce)
        hcrc = "-" if hcrc is None else _field(hcrc)
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
    if lost_connection and failover is None and (args.gate or (expect and collector.n < expect)):
        sys.stderr.write(f"error: lost the connection to {args.url}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
