#!/usr/bin/env python3
"""burstbench producer over STOMP with stomp.py (clients/contract.md)."""

from __future__ import annotations

import math
import signal
import sys
import time
import zlib
from itertools import chain

import stomp
from common import (
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


def write_records(path: str, pid: str, count: int, sent) -> None:
    """The producer's records: (seq, bb_sent_ns, handed over) of each message sent."""
    with open(path, "w") as f:
        f.write("#producer\tseq\tburst\tsent_ns\tactual_ns\n")
        f.writelines(f"{pid}\t{s}\t{s // count}\t{t}\t{a}\n" for s, t, a in sent)


def main(argv=None) -> int:
    args = parse("producer", argv)
    signal.signal(signal.SIGTERM, on_sigterm)
    if args.connections > 1:
        return main_slots(args)
    conn, receipts = connect(args)
    failover = None
    if args.failover is not None:
        failover = Reconnector(conn, args, receipts)
        failover.start()
    emit("ready", id=args.id, role="producer", **tcp_nodelay(conn))

    pid, count, size = args.id, burst_count(args), args.size
    duration_ns = int(args.duration * 1e9)
    dests = ["/queue/" + d for d in args.destinations]
    ndest = len(dests)
    filler = b"x" * max(0, size - 6)
    base = {"bb_producer": pid, "bb_nonce": args.nonce}
    if args.persistent:
        base["persistent"] = "true"
    times: list[int] = []  # bb_sent_ns of each message, seq order across bursts
    actual: list[int] = []  # when each was handed to stomp.py
    # --failover: (seq, bb_sent_ns, handed over) of copies sent before
    copies: list[tuple[int, int, int]] = []
    ticker = Ticker(pid, "sent", times.__len__)
    ticker.start()

    def confirm(receipt: str, gen: int) -> bool:
        """The broker's receipt on the connection the burst started on; with --failover
        False when that connection dropped (without, exit 1)."""
        if receipts.wait(receipt, 120.0,
                         lambda: conn.is_connected() and receipts.connections == gen):
            return receipts.connections == gen
        if failover is None:
            fail(1, f"no receipt {receipt} from {args.url} (connection lost or broker stalled)")
        return False

    def send_burst(b: int) -> None:
        """With --failover a burst the dropped connection left unconfirmed goes again, whole,
        once stomp.py has connected again."""
        while True:
            gen = receipts.connections
            try:
                if attempt_burst(b, gen):
                    return
            except (stomp.exception.NotConnectedException, OSError):
                if failover is None:
                    raise
            if not receipts.wait_connected(gen, 2 * args.connect_timeout + 5):
                fail(1, f"no reconnection to {args.url} (connection lost)")
            sys.stderr.write(f"burst {b} unconfirmed when the connection dropped: sending it "
                             "again\n")
            copies.extend((s, t, a) for s, (t, a) in
                          enumerate(zip(times[b * count:], actual[b * count:]), b * count))
            del times[b * count:], actual[b * count:]

    def attempt_burst(b: int, gen: int) -> bool:
        first_seq = b * count
        tx = None
        start = now_ns()
        period = 1e9 / args.rate if args.rate > 0 else 0.0
        send, append, copy = conn.send, times.append, {**base, "bb_burst": str(b)}.copy
        append_actual = actual.append
        end = start + duration_ns if duration_ns and not period else 0  # a timed flood ends here
        for i in range(count):
            seq = first_seq + i
            t = now_ns()
            stamp = t
            if period:  # intended time: start + i / rate; late sends keep their intended stamp
                stamp = start + int(i * period)
                if stamp > t:
                    time.sleep((stamp - t) / 1e9)
                    t = now_ns()
            h = copy()
            h["bb_seq"] = str(seq)
            h["bb_sent_ns"] = str(stamp)
            last = i == count - 1 or (end and t >= end)
            if args.tx_batch:
                if tx is None:
                    tx = conn.begin()
                h["transaction"] = tx
            elif last:
                h["receipt"] = f"{pid}-{b}"
            counter = b"%06d" % (seq % 1000000)
            body = counter + filler if size >= 6 else counter[:size]
            h["bb_crc32"] = f"{zlib.crc32(body):08x}"
            send(dests[seq % ndest], body, headers=h)
            append(stamp)  # the records carry bb_sent_ns as stamped
            append_actual(t)
            if i == 0:
                first_t = t
            if tx is not None and ((i + 1) % args.tx_batch == 0 or last):
                receipt = f"{pid}-{b}-tx{i}"
                conn.commit(tx, headers={"receipt": receipt})
                confirm(receipt, gen)
                tx = None
            if last:
                break
        if not args.tx_batch and not confirm(f"{pid}-{b}", gen):
            return False
        emit("burst", id=pid, burst=b, sent=i + 1, first_ns=first_t, last_ns=t)
        return True

    try:
        for b in bursts_asked(args):
            send_burst(b)
    except Stop:
        pass
    finally:
        ticker.stopped.set()
        if failover is not None:
            failover.stopping = True
    try:
        conn.disconnect(receipt=f"{pid}-bye")
    except stomp.exception.StompException:
        pass
    if args.records:
        write_records(args.records, pid, count,
                      chain(((s, t, a) for s, (t, a) in enumerate(zip(times, actual))), copies))
    if failover is not None and failover.gave_up:
        fail(1, failover.gave_up)
    emit("done", id=pid, sent=len(times) + len(copies))
    return 0


# ---------------------------------------------------------------- --connections N > 1


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


def main_slots(args) -> int:
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
            write_records(slot_records(args, slot.id), slot.id, count, slot.sent)
    if lost:  # (as one producer: no done after a failure)
        fail(1, lost)
    emit_lines([("done", {"id": slot.id, "sent": len(slot.sent)}) for slot in slots])
    return 0


if __name__ == "__main__":
    sys.exit(main())
