#!/usr/bin/env python3
"""burstbench producer over STOMP with stomp.py (clients/contract.md)."""

from __future__ import annotations

import signal
import sys
import time

import stomp
from common import (
    Stop,
    Ticker,
    body,
    connect,
    emit,
    fail,
    now_ns,
    on_sigterm,
    parse,
    stdin_commands,
)


def main(argv=None) -> int:
    args = parse("producer", argv)
    signal.signal(signal.SIGTERM, on_sigterm)
    conn, receipts = connect(args)
    emit("ready", id=args.id, role="producer")

    pid, count, size = args.id, args.count, args.size
    dests = ["/queue/" + d for d in args.destinations]
    ndest = len(dests)
    filler = b"x" * max(0, size - 6)
    persistent = "true" if args.persistent else "false"
    records: list[tuple[int, int, int]] = []
    state = {"sent": 0}
    ticker = Ticker(pid, "sent", lambda: state["sent"])
    ticker.start()

    def confirm(receipt: str) -> None:
        if not receipts.wait(receipt, 120.0, conn.is_connected):
            fail(1, f"no receipt {receipt} from {args.url} (connection lost or broker stalled)")

    def send_burst(b: int) -> None:
        bstr = str(b)
        first_seq = b * count
        tx = None
        start = now_ns()
        period = 1e9 / args.rate if args.rate > 0 else 0.0
        send = conn.send
        append = records.append
        for i in range(count):
            seq = first_seq + i
            if period:
                stamp = start + int(i * period)
                lag = (stamp - now_ns()) / 1e9
                if lag > 0:
                    time.sleep(lag)
                actual = now_ns()
            else:
                stamp = actual = now_ns()
            headers = {
                "bb_producer": pid,
                "bb_seq": str(seq),
                "bb_burst": bstr,
                "bb_sent_ns": str(stamp),
                "persistent": persistent,
            }
            if args.tx_batch:
                if tx is None:
                    tx = conn.begin()
                headers["transaction"] = tx
            elif i == count - 1:
                headers["receipt"] = f"{pid}-{b}"
            send(dests[seq % ndest], body(seq, size, filler), headers=headers)
            append((seq, b, actual))
            state["sent"] += 1
            if tx is not None and ((i + 1) % args.tx_batch == 0 or i == count - 1):
                receipt = f"{pid}-{b}-tx{i}"
                conn.commit(tx, headers={"receipt": receipt})
                confirm(receipt)
                tx = None
        if not args.tx_batch:
            confirm(f"{pid}-{b}")
        emit(
            "burst",
            id=pid,
            burst=b,
            sent=count,
            first_ns=records[-count][2],
            last_ns=records[-1][2],
        )

    def commands():
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

    try:
        for b in commands():
            send_burst(b)
    except Stop:
        pass
    finally:
        ticker.stopped.set()
    try:
        conn.disconnect(receipt=f"{pid}-bye")
    except stomp.exception.StompException:
        pass
    if args.records:
        with open(args.records, "w") as f:
            f.write("#producer\tseq\tburst\tsent_ns\n")
            f.writelines(f"{pid}\t{s}\t{b}\t{t}\n" for s, b, t in records)
    emit("done", id=pid, sent=state["sent"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
