#!/usr/bin/env python3
"""burstbench producer over STOMP with stomp.py (clients/contract.md)."""

from __future__ import annotations

import signal
import sys
import time
import zlib
from itertools import chain

import stomp
from common import (
    Stop,
    Ticker,
    burst_count,
    bursts_asked,
    connect,
    emit,
    fail,
    now_ns,
    on_sigterm,
    tcp_nodelay,
)
from failover import Reconnector
from options import parse
from records import write_sent
from slots import produce


def main(argv=None) -> int:
    args = parse("producer", argv)
    signal.signal(signal.SIGTERM, on_sigterm)
    if args.connections > 1:
        return produce(args)
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
        write_sent(args.records, pid, count,
                      chain(((s, t, a) for s, (t, a) in enumerate(zip(times, actual))), copies))
    if failover is not None and failover.gave_up:
        fail(1, failover.gave_up)
    emit("done", id=pid, sent=len(times) + len(copies))
    return 0


if __name__ == "__main__":
    sys.exit(main())
