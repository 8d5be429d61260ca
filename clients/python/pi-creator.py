"""burstbench Pi creator (stomp.py): the Pi study's work messages onto a work queue. The
format is the "Pi workers" section of clients/contract.md; the harness starts it
(burstbench/studies/pi/activemq.py) with the workers, tells it ``go`` on stdin and times the study
from its first send."""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from urllib.parse import urlsplit

import stomp


def main(argv: list[str]) -> int:
    """``pi-creator.py --url stomp://H:P --work Q --messages M --elements E``.

    Connects, prints ``ready``, waits for ``go`` on stdin, sends the M work messages (the
    last with a receipt, waited for), prints ``sent`` with the first and last send times.
    """
    class Parser(argparse.ArgumentParser):
        def error(self, message):
            sys.stderr.write(f"error: {message}\n")
            sys.exit(2)

    ap = Parser(prog="pi-creator.py")
    ap.add_argument("--url", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--messages", type=int, required=True)
    ap.add_argument("--elements", type=int, required=True)
    a = ap.parse_args(argv)
    u = urlsplit(a.url)
    if u.scheme != "stomp" or not u.hostname or not u.port:
        ap.error(f"--url must be stomp://HOST:PORT: {a.url!r}")
    if a.messages < 1 or a.elements < 1:
        ap.error("--messages and --elements must be >= 1")
    receipt = threading.Event()

    class Listener(stomp.ConnectionListener):
        def on_receipt(self, frame):
            receipt.set()

    conn = stomp.Connection11([(u.hostname, u.port)], reconnect_attempts_max=1, timeout=10,
                              auto_decode=False, heartbeats=(0, 0))
    conn.set_listener("creator", Listener())
    try:
        conn.connect(wait=True)
    except Exception as e:  # noqa: BLE001 - stomp.py raises several kinds for one meaning
        sys.stderr.write(f"error: cannot connect to {a.url}: {type(e).__name__} {e}\n")
        return 3

    def emit(event: str, **kw) -> None:
        sys.stdout.write(json.dumps({"event": event, "id": "creator", **kw}) + "\n")
        sys.stdout.flush()

    emit("ready", role="pi-creator")
    for line in sys.stdin:
        if line.strip() == "go":
            break
    else:
        return 0
    dest, m, e = f"/queue/{a.work}", a.messages, a.elements
    first = time.time_ns()
    for i in range(m):
        h = {"pi_cmd": "work", "pi_chunk": str(i), "pi_start": str(i * e),
             "pi_elements": str(e)}
        if i == m - 1:
            h["receipt"] = "last"
        conn.send(dest, b"", headers=h)
    last = time.time_ns()
    if not receipt.wait(120):
        sys.stderr.write(f"error: no receipt for the last work message from {a.url}\n")
        return 1
    emit("sent", sent=m, first_ns=first, last_ns=last)
    conn.disconnect()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
