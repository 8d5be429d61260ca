"""Minimal stomp.py send loop (reference for clients/python): URL QUEUE COUNT SIZE"""

import json, sys, threading, time  # noqa: E401
from urllib.parse import urlsplit

import stomp

url, queue, count, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
u = urlsplit(url)
conn = stomp.Connection11([(u.hostname, u.port)], auto_decode=False)
got = threading.Event()
conn.set_listener(
    "r", type("R", (stomp.ConnectionListener,), {"on_receipt": lambda s, f: got.set()})()
)
conn.connect(wait=True)
filler = b"x" * max(0, size - 6)
first = time.time_ns()
for i in range(count):  # the same message the bench sends: 4 headers, counter + filler
    t = time.time_ns()
    h = {"bb_producer": "loop", "bb_seq": str(i), "bb_burst": "0", "bb_sent_ns": str(t)}
    if i == count - 1:
        h["receipt"] = "last"
    conn.send("/queue/" + queue, (b"%06d" % (i % 1000000) + filler)[:size], headers=h)
last = t
got.wait(120)
conn.disconnect()
print(json.dumps({"count": count, "first_ns": first, "last_ns": last}))
