"""Minimal stomp.py receive loop (reference for clients/python): URL QUEUE COUNT [SKIP]
(mark_ns: when message SKIP, counted from 0, arrived: the end of the warm-up; at_ns: when
messages 0, EVERY, 2 EVERY... arrived, so that the harness can count what arrived in a span)"""

import json
import sys
import threading
import time
from urllib.parse import urlsplit

import stomp

url, queue, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
skip = int(sys.argv[4]) if len(sys.argv) > 4 else 0
u = urlsplit(url)
# the stock client's options: connect timeout, no reconnects, heart-beats off
conn = stomp.Connection11(
    [(u.hostname, u.port)], reconnect_attempts_max=1, timeout=10.0, auto_decode=False,
    heartbeats=(0, 0),
)
times, done, foreign = [], threading.Event(), []


class L(stomp.ConnectionListener):
    def on_message(self, frame):
        times.append(time.time_ns())
        # a consumer reads what it received, as the client does: the key headers and the body
        h, body = frame.headers, frame.body
        if "bb_seq" not in h or "bb_producer" not in h or not body:
            foreign.append(1)
        if len(times) == count:
            done.set()


conn.set_listener("l", L())
conn.connect(wait=True)
conn.subscribe("/queue/" + queue, id="1", ack="auto", headers={"activemq.prefetchSize": "1000"})
done.wait(600)
conn.disconnect()
mark = times[min(skip, len(times) - 1)]
EVERY = 1000
print(json.dumps({"count": len(times), "first_ns": times[0], "mark_ns": mark,
                  "last_ns": times[-1], "every": EVERY, "at_ns": times[::EVERY]}))
