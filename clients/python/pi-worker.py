"""burstbench Pi worker (stomp.py): Leibniz chunks from a work queue, partial sums to a results
queue. The format is the "Pi workers" section of clients/contract.md."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from urllib.parse import urlsplit

import common
import options

ROLE = "pi-worker"


def chunk_sum(start: int, n: int) -> float:
    """Sum of (-1)^k / (2k+1) for k in [start, start+n), term by term in that order."""
    s = 0.0
    for k in range(start, start + n):
        term = 1.0 / (2.0 * k + 1.0)
        if k & 1:
            s -= term
        else:
            s += term
    return s


def parse(argv=None):
    p = options.ArgumentParser(
        prog="pi-worker.py", description="burstbench Pi worker (stomp.py); see clients/contract.md"
    )
    # the contract's checks for the options a consumer has too (clients/options.tsv)
    rows = {row["option"]: row for row in options.table("consumer")}
    queues = options.checked(rows["destinations"])

    def queue(text):
        names = queues(text)
        if len(names) != 1:
            raise argparse.ArgumentTypeError(f"one queue name, not {text!r}")
        return names[0]

    p.add_argument("--url", required=True, type=options.checked(rows["url"]),
                   help="stomp://HOST:PORT or stomp+ssl://HOST:PORT")
    p.add_argument("--work", required=True, type=queue,
                   help="queue the work messages come from")
    p.add_argument("--results", required=True, type=queue,
                   help="queue the partial sums go to")
    p.add_argument("--id", default="w1", type=options.checked(rows["id"]))
    p.add_argument("--prefetch", type=options.checked(rows["prefetch"]), default=1000)
    p.add_argument("--user")
    p.add_argument("--password")
    p.add_argument("--connect-timeout", type=options.checked(rows["connect-timeout"]),
                   default=10.0)
    p.add_argument("--version", action=options.VersionAction, help="print versions as JSON")
    args = p.parse_args(argv)
    u = urlsplit(args.url)
    if u.scheme not in ("stomp", "stomp+ssl") or not u.hostname or not u.port:
        p.error(f"--url must be stomp://HOST:PORT or stomp+ssl://HOST:PORT: {args.url!r}")
    args.host, args.port, args.ssl = u.hostname, u.port, u.scheme == "stomp+ssl"
    return args


class Worker(common.Listener):
    """Computes each work message in the receiving thread and sends its result from there."""

    def __init__(self, args):
        super().__init__()
        self.args = args
        self.conn = None
        self.chunks = 0
        self.foreign = 0
        self.stopped = threading.Event()
        self.gone = threading.Event()
        self.failure = ""

    def on_message(self, frame):
        h = frame.headers
        cmd = h.get("pi_cmd")
        if cmd == "stop":
            self.stopped.set()
            return
        try:
            if cmd != "work":
                raise ValueError
            chunk, start, n = h["pi_chunk"], int(h["pi_start"]), int(h["pi_elements"])
            if int(chunk) < 0 or start < 0 or n < 1:
                raise ValueError
        except (KeyError, ValueError):
            self.foreign += 1
            return
        s = chunk_sum(start, n)
        try:
            self.conn.send(
                f"/queue/{self.args.results}",
                f"{s:.17g}",
                headers={"pi_chunk": chunk, "pi_worker": self.args.id},
            )
        except Exception as e:  # noqa: BLE001 - any send failure ends the worker the same way
            self.failure = f"send to {self.args.results} failed: {e}"
            self.stopped.set()
            return
        self.chunks += 1

    def on_error(self, frame):
        super().on_error(frame)
        self.failure = f"broker error: {self.error}"
        self.stopped.set()

    def on_disconnected(self):
        self.gone.set()
        if not self.stopped.is_set():
            self.failure = f"lost connection to {self.args.url}"
            self.stopped.set()


def main() -> int:
    args = parse()
    signal.signal(signal.SIGTERM, common.on_sigterm)
    worker = Worker(args)
    conn, _ = common.connect(args, worker)
    worker.conn = conn
    conn.subscribe(
        f"/queue/{args.work}",
        id="work",
        ack="auto",
        headers={"activemq.prefetchSize": str(args.prefetch)},
    )
    common.emit("ready", id=args.id, role=ROLE)
    try:
        while not worker.stopped.wait(0.5):
            pass
    except common.Stop:
        pass
    if worker.failure:
        common.fail(1, worker.failure)
    worker.stopped.set()
    try:
        # the socket closes on the DISCONNECT receipt: every result sent before it is in
        conn.disconnect(receipt=f"{args.id}-bye")
        worker.gone.wait(10.0)
    except Exception:  # noqa: BLE001, S110 - the broker is gone: nothing left to confirm
        pass
    common.emit("done", id=args.id, chunks=worker.chunks, foreign=worker.foreign)
    return 0


if __name__ == "__main__":
    sys.exit(main())
