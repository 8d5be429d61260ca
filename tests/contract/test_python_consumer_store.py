"""The stock stomp.py consumer's record keeping (clients/python/consumer.py), pure logic: what
it keeps of each body, in its store while there is room, summarised after."""

import sys
import zlib

from burstbench import paths

sys.path.insert(0, str(paths.CLIENTS / "python"))
import consumer
from stomp.utils import Frame

HEADS = {"bb_producer": "p1", "bb_burst": "0", "bb_sent_ns": "5", "bb_nonce": "n",
         "bb_crc32": "c", "destination": "/queue/q"}


def _body(i: int, size: int) -> bytes:
    return b"%06d" % i + b"x" * (size - 6)


def test_a_store_for_two_bodies_keeps_two_and_summarises_the_third():
    store = consumer.body_store(2, 1024)
    assert len(store) == 2048 and all(store[i] == 1 for i in range(0, 2048, 4096))
    c = consumer.Collector("auto", 1000, 0, store)
    for i in range(3):
        c.on_message(Frame("MESSAGE", {**HEADS, "bb_seq": str(i)}, _body(i, 1024)))
    c.on_message(Frame("MESSAGE", {**HEADS, "bb_seq": "3"}, b"000003"))
    assert c.bodies[:2] == [1024, 1024] and c.stored == 2048
    assert c.bodies[2] == (1024, zlib.crc32(_body(2, 1024)), b"000002")
    assert c.bodies[3] == b"000003"  # a small body as stomp.py made it
    assert bytes(c.view[1024:2048]) == _body(1, 1024)
    assert c.heads[0] == "p1\t0\t0\t5\tn\tc\t/queue/q\t"


def test_small_bodies_need_no_store_and_absent_headers_leave_empty_fields():
    assert len(consumer.body_store(1000, 256)) == 0
    c = consumer.Collector("auto", 1000, 0)
    c.on_message(Frame("MESSAGE", {"destination": "/queue/q", "redelivered": "true"}, b"x"))
    assert c.heads == ["\t\t\t\t-\t-\t/queue/q\ttrue"] and c.bodies == [b"x"]
