#!/usr/bin/env python3
"""burstbench consumer over STOMP with stomp.py (clients/contract.md)."""

from __future__ import annotations

import operator
import signal
import sys
import threading
import zlib
from array import array

import stomp
from common import (
    Listener,
    SlotTicker,
    Stop,
    Ticker,
    all_at_once,
    connect,
    emit,
    emit_lines,
    fail,
    now_ns,
    on_sigterm,
    parse,
    prepare_slots,
    slot_ids,
    slot_records,
    stdin_commands,
    tcp_nodelay,
)
from failover import Reconnector

# bytes: a body up to this size is kept as stomp.py made it (keeping it copies nothing). A larger
# one is copied into one store sized and touched before the consumer is ready (for --count x
# --bursts bodies of --size bytes, at most STORE_MAX), and past the store's end summarised on
# arrival (its length, CRC-32 and first bytes). A kept 1 KiB body object is fresh memory, 0.25
# page faults a message at 3-6 µs each on the bench's VM; its CRC-32 and summary cost 0.8 µs,
# the copy about 0.3 (28955a4:docs/perf.md, "Kept bodies are page faults", "One CPU").
KEEP_BODY = 256
STORE_MAX = 64 << 20  # 65,536 bodies of 1 KiB: memory a sweep of many consumers can afford


def body_store(expect: int, size: int, most: int = STORE_MAX) -> bytearray:
    """The larger bodies' store: ``expect`` bodies of ``size`` bytes, at most ``most`` bytes,
    every page touched now (a fresh page costs its fault later, in the timed messages)."""
    if size <= KEEP_BODY:
        return bytearray()
    store = bytearray(min(expect * size, most))
    for i in range(0, len(store), 4096):
        store[i] = 1
    return store


def body_facts(body: bytes) -> tuple[int, int, bytes]:
    """What the records need of a body: its length, CRC-32 and first 6 bytes."""
    return len(body), zlib.crc32(body), bytes(body[:6])


# the header values a record needs, in its order: one C call for all seven (the dict's own
# lookups), where seven h.get calls cost about 0.3 µs a message more in stomp.py's consumer
_HEAD_KEYS = ("bb_producer", "bb_seq", "bb_burst", "bb_sent_ns", "bb_nonce", "bb_crc32",
              "destination")
_HEADS = operator.itemgetter(*_HEAD_KEYS)
_ABSENT = {"bb_nonce": "-", "bb_crc32": "-"}  # else an empty field: a bench header missing


def _heads_of(h: dict) -> tuple[str, ...]:
    """_HEADS of a message that lacks some of them (an absent bench header: foreign)."""
    return tuple(h.get(k, _ABSENT.get(k, "")) for k in _HEAD_KEYS)


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
            values = _HEADS(h)
        except KeyError:  # not a bench message, or not one of ours: see _heads_of
            values = _heads_of(h)
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


def _field(value: str) -> str:
    """A received header value as one TSV field (a tab or newline would split the record)."""
    return value.replace("\t", "?").replace("\n", "?").replace("\r", "?")



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


def records_of(collector: Collector) -> tuple[list[str], int, int]:
    """The records' lines of what ``collector`` kept, and its counts of foreign and
    redelivered messages (after the disconnect: nothing comes now)."""
    foreign = redelivered = 0
    lines = []
    at = 0
    for t, head, body in zip(collector.times, collector.heads, collector.bodies, strict=True):
        if type(body) is int:  # in the store
            n, crc, prefix = body_facts(collector.view[at:at + body])
            at += body
        else:
            n, crc, prefix = body if type(body) is tuple else body_facts(body)
        try:
            producer, seq, burst, sent, nonce, hcrc, dest, red = head.split("\t")
            if not producer:
                raise ValueError
            seq, burst, sent = int(seq), int(burst), int(sent)
        except ValueError:  # a value missing, or a tab inside one
            foreign += 1
            continue
        expected = b"%06d" % (seq % 1000000)
        ok = 1 if prefix == expected[: min(6, n)] else 0
        redo = 1 if red == "true" else 0
        redelivered += redo
        dest = dest.removeprefix("/queue/")
        nonce, hcrc = _field(nonce), _field(hcrc)
        lines.append(f"{producer}\t{seq}\t{burst}\t{sent}\t{t}\t{n}\t{ok}\t{redo}\t{dest}\t"
                     f"{nonce}\t{hcrc}\t{crc:08x}\n")
    return lines, foreign, redelivered


def write_records(path: str, lines: list[str]) -> None:
    with open(path, "w") as f:
        f.write("#producer\tseq\tburst\tsent_ns\trecv_ns\tbytes\tbody_ok\tredelivered\tdest"
                "\tnonce\tcrc32_header\tcrc32_body\n")
        f.writelines(lines)


def main(argv=None) -> int:
    args = parse("consumer", argv)
    signal.signal(signal.SIGTERM, on_sigterm)
    if args.connections > 1:
        return main_slots(args)
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
        write_records(args.records, lines)
    if failover is not None and failover.gave_up:
        fail(1, failover.gave_up)
    emit("done", id=args.id, received=len(lines), foreign=foreign, redelivered=redelivered)
    if lost_connection and failover is None and (args.gate or (expect and collector.n < expect)):
        sys.stderr.write(f"error: lost the connection to {args.url}\n")
        return 1
    return 0


# ---------------------------------------------------------------- --connections N > 1


def open_slot(args, ident: str, collector: Collector) -> None:
    """One slot: its own connection, subscribed to every destination; then its ready line."""
    conn, _ = connect(args, collector, slot=ident)
    collector.conn = conn
    receipt = subscribe_all(args, conn)
    if not collector.wait(receipt, args.connect_timeout, conn.is_connected):
        fail(3, f"{args.url} (slot {ident}) did not confirm the subscriptions")
    emit("ready", id=ident, role="consumer", **tcp_nodelay(conn))


def wait_for_end(args, slots: list[tuple[str, Collector]], dropped: threading.Event) -> None:
    """Until ``stop``/end of input (--gate), the slots' count x bursts together (without),
    or a slot's connection dropped. The slots' totals are read, not shared: a common counter
    would cost every message a lock."""
    expect = args.count * args.bursts
    if args.gate:
        asked = stop_asked()
        while not asked.wait(0.5) and not dropped.is_set():
            pass
        return
    while not dropped.wait(0.1):
        if expect and sum(c.n for _, c in slots) >= expect:
            return


def close_slots(args, slots: list[tuple[str, Collector]]) -> list[str]:
    """Acknowledge what each slot holds and disconnect it; returns the slots whose
    connection had dropped."""
    lost = [ident for ident, c in slots if not c.conn.is_connected()]

    def close(ident: str, c: Collector) -> None:
        try:
            c.ack_rest()
            c.conn.disconnect(receipt=f"{ident}-bye")
        except (stomp.exception.StompException, OSError):
            pass

    all_at_once([lambda ident=ident, c=c: close(ident, c)
                 for ident, c in slots if ident not in lost])
    return lost


def main_slots(args) -> int:
    """--connections N > 1: N slots connected and subscribed one after another, each a
    consumer with its own records and lines; they stop together."""
    n = args.connections
    prepare_slots(args)
    expect = 0 if args.gate else args.count * args.bursts
    # competing consumers: each slot's body store holds its share of count x bursts, all of
    # them at most STORE_MAX; what a slot gets beyond its store is summarised on arrival
    share = -(-args.count * args.bursts // n)
    dropped = threading.Event()  # every slot's `finished`: set when its connection drops
    slots: list[tuple[str, Collector]] = []
    ticker = None
    try:
        for ident in slot_ids(args):
            c = Collector(args.ack, args.prefetch, 0,
                          body_store(share, args.size, STORE_MAX // n), finished=dropped)
            open_slot(args, ident, c)
            slots.append((ident, c))
        ticker = SlotTicker("received", [(ident, lambda c=c: c.n) for ident, c in slots])
        ticker.start()
        wait_for_end(args, slots, dropped)
    except Stop:
        pass
    finally:
        if ticker is not None:
            ticker.stopped.set()
    lost = close_slots(args, slots)
    done = []
    for ident, c in slots:
        lines, foreign, redelivered = records_of(c)
        if args.records:
            write_records(slot_records(args, ident), lines)
        done.append(("done", {"id": ident, "received": len(lines), "foreign": foreign,
                              "redelivered": redelivered}))
    emit_lines(done)
    if lost and (args.gate or not expect or sum(c.n for _, c in slots) < expect):
        more = f" ({len(lost)} slots lost theirs)" if len(lost) > 1 else ""
        sys.stderr.write(f"error: slot {lost[0]}: lost the connection to {args.url}{more}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
