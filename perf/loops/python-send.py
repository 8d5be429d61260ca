"""Minimal stomp.py send loop (reference for clients/python): URL QUEUE COUNT SIZE [SKIP]
(mark_ns: when message SKIP, counted from 0, was handed to send: the end of the warm-up; at_ns:
when messages 0, EVERY, 2 EVERY... were, so that the harness can count what was sent in a span)"""

import json
import sys
import threading
import time
import zlib
from urllib.parse import urlsplit

import stomp

url, queue, count, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
skip = int(sys.argv[5]) if len(sys.argv) > 5 else 0
mark = 0
EVERY, at = 1000, []
u = urlsplit(url)
# the stock client's options: connect timeout, no reconnects, heart-beats off
conn = stomp.Connection11(
    [(u.hostname, u.port)], reconnect_attempts_max=1, timeout=10.0, auto_decode=False,
    heartbeats=(0, 0),
)
got = threading.Event()
conn.set_listener(
    "r", type("R", (stomp.ConnectionListener,), {"on_receipt": lambda s, f: got.set()})()
)
conn.connect(wait=True)
filler = b"x" * max(0, size - 6)
first = time.time_ns()
for i in range(count):  # the same message the bench sends: 6 headers, counter + filler
    t = time.time_ns()
    if i == skip:
        mark = t
    if i % EVERY == 0:
        at.append(t)
    body = (b"%06d" % (i % 1000000) + filler)[:size]
    h = {"bb_producer": "loop", "bb_seq": str(i), "bb_burst": "0", "bb_sent_ns": str(t),
         "bb_nonce": "loop", "bb_crc32": f"{zlib.crc32(body):08x}"}
    if i == count - 1:
        h["receipt"] = "last"
    conn.send("/queue/" + queue, body, headers=h)
got.wait(120)
last = time.time_ns()  # the broker confirmed the last message: every earlier one is in
conn.disconnect()
print(json.dumps({"count": count, "first_ns": first, "mark_ns": mark or first, "last_ns": last,
                  "every": EVERY, "at_ns": at}))
