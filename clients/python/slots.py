"""--connections N > 1 (clients/contract.md, "Many connections"): N stomp.py connections in one
process, each a producer or consumer slot with its own id, records and lines."""

from __future__ import annotations

import resource
import sys
import threading
import time
import zlib
from concurrent.futures import ThreadPoolExecutor

import stomp
from common import (
    Stop,
    burst_count,
    bursts_asked,
    connect,
    emit,
    emit_lines,
    fail,
    now_ns,
    stop_asked,
    tcp_nodelay,
)
from records import STORE_MAX, body_store, records_of, write_received, write_sent

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


# -- producer slots

class Lost(Exception):
    """A slot's connection dropped (or its receipt never came): the process ends with exit 1
    once every slot has written its records."""

    def __init__(self, slot: ProducerSlot, what: str):
        super().__init__(f"slot {slot.id}: {what}")


class ProducerSlot:
    """One of the process's connections: its own id (stamped on its messages), receipts and
    records, as one producer process of today."""

    def __init__(self, args, ident: str):
        self.id = ident
        self.conn, self.receipts = connect(args, slot=ident)
        self.base = {"bb_producer": ident, "bb_nonce": args.nonce}
        if args.persistent:
            self.base["persistent"] = "true"
        self.sent: list[tuple[int, int, int]] = []  # (seq, bb_sent_ns, handed over)
        self.headers = self.base  # this burst's, with bb_burst
        self.first_ns = self.last_ns = 0
        self.in_burst = 0
        self.tx = None  # --tx-batch: the open transaction
        self.pending: list[str] = []  # receipts asked for and not yet waited for

    def begin_burst(self, b: int) -> None:
        self.headers = {**self.base, "bb_burst": str(b)}
        self.in_burst = 0

    def send(self, args, dest: str, body: bytes, crc: str, seq: int, stamp: int, t: int,
             last: bool, b: int) -> None:
        """Message ``seq`` (``stamp`` its bb_sent_ns, ``t`` when handed over); the last of the
        burst asks for a receipt, and with --tx-batch a full batch is committed."""
        h = self.headers.copy()
        h["bb_seq"] = str(seq)
        h["bb_sent_ns"] = str(stamp)
        h["bb_crc32"] = crc
        try:
            if args.tx_batch:
                if self.tx is None:
                    self.tx = self.conn.begin()
                h["transaction"] = self.tx
            elif last:
                h["receipt"] = f"{self.id}-{b}"
                self.pending.append(h["receipt"])
            self.conn.send(dest, body, headers=h)
            self.in_burst += 1
            if self.in_burst == 1:
                self.first_ns = t
            self.last_ns = t
            self.sent.append((seq, stamp, t))
            if self.tx is not None and (self.in_burst % args.tx_batch == 0 or last):
                receipt = f"{self.id}-{b}-tx{self.in_burst - 1}"
                self.conn.commit(self.tx, headers={"receipt": receipt})
                self.pending.append(receipt)
                self.tx = None
        except (stomp.exception.StompException, OSError) as e:
            raise Lost(self, f"lost the connection to {args.url} ({type(e).__name__})") from None

    def disconnect(self) -> None:
        try:
            self.conn.disconnect(receipt=f"{self.id}-bye")
        except (stomp.exception.StompException, OSError):
            pass

    def confirm(self, args) -> None:
        """Wait for the receipts asked for (the broker handles a connection's frames in
        order: the last one confirms every earlier send)."""
        for receipt in self.pending:
            if not self.receipts.wait(receipt, 120.0, self.conn.is_connected):
                raise Lost(self, f"no receipt {receipt} from {args.url} (connection lost or "
                           "broker stalled)")
        self.pending.clear()


def send_slots_burst(args, slots: list[ProducerSlot], b: int, count: int) -> None:
    """Burst ``b`` on every slot, interleaved from this one thread: message s of each slot,
    then s + 1... Under --rate message s of slot k (0-based) is due at start + (s + k/N)/R:
    each slot paced at R, the slots spread over each 1/R (clients/contract.md); its body and
    CRC are the same on every slot."""
    dests = ["/queue/" + d for d in args.destinations]
    filler = b"x" * max(0, args.size - 6)
    period = 1e9 / args.rate if args.rate > 0 else 0.0
    start = now_ns()
    # a timed flood: a slot's first message sent at or after the end is its last
    duration_ns = int(args.duration * 1e9)
    end = start + duration_ns if duration_ns and not period else 0
    for slot in slots:
        slot.begin_burst(b)
    shift = {id(slot): k * period / len(slots) for k, slot in enumerate(slots)}
    active = slots
    i = 0
    while active:
        seq = b * count + i
        counter = b"%06d" % (seq % 1000000)
        body = counter + filler if args.size >= 6 else counter[:args.size]
        crc = f"{zlib.crc32(body):08x}"
        dest = dests[seq % len(dests)]
        going = []
        for slot in active:
            stamp = 0
            if period:  # intended time; late sends keep their intended stamp
                stamp = start + int(i * period + shift[id(slot)])
                wait = stamp - now_ns()
                if wait > 0:
                    time.sleep(wait / 1e9)
            t = now_ns()
            last = i == count - 1 or bool(end and t >= end)
            slot.send(args, dest, body, crc, seq, stamp or t, t, last, b)
            if not last:
                going.append(slot)
        if args.tx_batch:  # the commits' receipts before the next batches, as with one slot
            for slot in active:
                slot.confirm(args)
        active = going
        i += 1
    lines = []
    for slot in slots:
        slot.confirm(args)
        lines.append(("burst", {"id": slot.id, "burst": b, "sent": slot.in_burst,
                                "first_ns": slot.first_ns, "last_ns": slot.last_ns}))
    emit_lines(lines)


def produce(args) -> int:
    """--connections N > 1: N slots connected one after another, each printing ``ready``;
    every burst goes out on all of them."""
    prepare_slots(args)
    count = burst_count(args)
    slots: list[ProducerSlot] = []
    ticker = None
    lost = None
    try:
        for ident in slot_ids(args):
            slot = ProducerSlot(args, ident)
            slots.append(slot)
            emit("ready", id=ident, role="producer", **tcp_nodelay(slot.conn))
        ticker = SlotTicker("sent", [(s.id, s.sent.__len__) for s in slots])
        ticker.start()
        for b in bursts_asked(args):
            send_slots_burst(args, slots, b, count)
    except Stop:
        pass
    except Lost as e:
        lost = str(e)
    finally:
        if ticker is not None:
            ticker.stopped.set()
    dropped = [slot for slot in slots if not slot.conn.is_connected()]
    if dropped and not lost:
        lost = f"slot {dropped[0].id}: lost the connection to {args.url}"
    all_at_once([slot.disconnect for slot in slots if slot not in dropped])
    for slot in slots:
        if args.records:
            write_sent(slot_records(args, slot.id), slot.id, count, slot.sent)
    if lost:  # (as one producer: no done after a failure)
        fail(1, lost)
    emit_lines([("done", {"id": slot.id, "sent": len(slot.sent)}) for slot in slots])
    return 0


# -- consumer slots

def open_slot(args, ident: str, collector, subscribe_all) -> None:
    """One slot: its own connection, subscribed to every destination; then its ready line."""
    conn, _ = connect(args, collector, slot=ident)
    collector.conn = conn
    receipt = subscribe_all(args, conn)
    if not collector.wait(receipt, args.connect_timeout, conn.is_connected):
        fail(3, f"{args.url} (slot {ident}) did not confirm the subscriptions")
    emit("ready", id=ident, role="consumer", **tcp_nodelay(conn))


def wait_for_end(args, slots: list[tuple[str, object]], dropped: threading.Event) -> None:
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


def close_slots(args, slots: list[tuple[str, object]]) -> list[str]:
    """Acknowledge what each slot holds and disconnect it; returns the slots whose
    connection had dropped."""
    lost = [ident for ident, c in slots if not c.conn.is_connected()]

    def close(ident: str, c) -> None:
        try:
            c.ack_rest()
            c.conn.disconnect(receipt=f"{ident}-bye")
        except (stomp.exception.StompException, OSError):
            pass

    all_at_once([lambda ident=ident, c=c: close(ident, c)
                 for ident, c in slots if ident not in lost])
    return lost


def consume(args, Collector, subscribe_all) -> int:
    """--connections N > 1: N slots connected and subscribed one after another, each a
    consumer with its own records and lines; they stop together. ``Collector`` and
    ``subscribe_all`` are the consumer's (consumer.py)."""
    n = args.connections
    prepare_slots(args)
    expect = 0 if args.gate else args.count * args.bursts
    # competing consumers: each slot's body store holds its share of count x bursts, all of
    # them at most STORE_MAX; what a slot gets beyond its store is summarised on arrival
    share = -(-args.count * args.bursts // n)
    dropped = threading.Event()  # every slot's `finished`: set when its connection drops
    slots: list[tuple[str, object]] = []
    ticker = None
    try:
        for ident in slot_ids(args):
            c = Collector(args.ack, args.prefetch, 0,
                          body_store(share, args.size, STORE_MAX // n), finished=dropped)
            open_slot(args, ident, c, subscribe_all)
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
            write_received(slot_records(args, ident), lines)
        done.append(("done", {"id": ident, "received": len(lines), "foreign": foreign,
                              "redelivered": redelivered}))
    emit_lines(done)
    if lost and (args.gate or not expect or sum(c.n for _, c in slots) < expect):
        more = f" ({len(lost)} slots lost theirs)" if len(lost) > 1 else ""
        sys.stderr.write(f"error: slot {lost[0]}: lost the connection to {args.url}{more}\n")
        return 1
    return 0
