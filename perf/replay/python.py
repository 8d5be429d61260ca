"""Replay of 60,000 MESSAGE frames (stomp.py Frame objects, made fresh per message so the
collector sees the garbage a real receive makes) through the stock consumer's listener
(clients/python/consumer.py) and through the receive loop's (perf/loops/python-recv.py): CPU ns
per message of each, ABAB, median of 5. The difference is the harness's record keeping.
Run: .venv/bin/python perf/replay/python.py"""
import gc
import sys
import time

sys.path.insert(0, str(__import__('pathlib').Path(__file__).resolve().parents[2]
                       / 'clients' / 'python'))
import stomp
from consumer import Collector
from stomp.utils import Frame

N = 60000
def frame(i, size):
    h = {"destination": "/queue/q", "message-id": f"ID:host-1234-1:1:1:1:{i}",
         "subscription": "1", "bb_producer": "p0", "bb_seq": str(i), "bb_burst": "0",
         "bb_sent_ns": str(1763800000000000000 + i), "bb_nonce": "abcdef0123456789",
         "bb_crc32": "0badf00d", "priority": "4", "expires": "0", "timestamp": "1763800000000"}
    return Frame("MESSAGE", h, b"%06d" % i + b"x" * (size - 6) if size > 6 else b"%06d" % i)
times, foreign = [], []
class L(stomp.ConnectionListener):
    def on_message(self, frame):
        times.append(time.time_ns())
        h, body = frame.headers, frame.body
        if "bb_seq" not in h or "bb_producer" not in h or not body:
            foreign.append(1)
variant = sys.argv[1] if len(sys.argv) > 1 else None
for size in (6, 1024):
    res = {"loop": [], "client": []}
    for rep in range(5):
        for name in ("loop", "client") if rep % 2 == 0 else ("client", "loop"):
            times.clear()
            c = Collector("auto", 1000, N)
            cb = L().on_message if name == "loop" else c.on_message
            gc.collect()
            t0 = time.process_time_ns()
            for i in range(N):
                cb(frame(i, size))
            dt = time.process_time_ns() - t0
            res[name].append(dt / N)
            del c
    import statistics as st
    print(size, {k: round(st.median(v)) for k, v in res.items()}, "extra ns/msg",
          round(st.median(res['client']) - st.median(res['loop'])))
