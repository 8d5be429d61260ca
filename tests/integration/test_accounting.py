"""The accounting trusts no client: lies, leftovers and thieves are caught and named.

Each test runs a real point (a stomp.py pair on a real broker) and feeds the harness something
it must not take at face value: records a consumer invented or altered, messages from outside
the run (another run's nonce, a copy of a real one), an outside consumer that takes messages,
and messages left in a queue. The queue names and the nonce are fixed so that the outside
party knows where to strike; everything else is the harness as users run it.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
import types
import uuid
import zlib
from urllib.parse import urlsplit

import pytest
import stomp
from conftest import client_or_skip, need_broker_built

from burstbench.infra import brokers
from burstbench.measure import measure
from burstbench.measure import runner as runmod
from burstbench.measure.points import document
from burstbench.measure.runner import Runner
from burstbench.measure.spec import PointSpec

pytestmark = pytest.mark.integration

TAG = "feedface"
NONCE = "0123456789abcdef"
QUEUE = f"bb.{TAG}.q0"


@pytest.fixture
def point(monkeypatch, tmp_path):
    """Runs a stomp-py point with known queue names and nonce; ``on_broker(url)`` hooks run
    as soon as the broker is up. Returns (outcome, document)."""
    need_broker_built()
    client_or_skip("stomp-py")
    monkeypatch.setattr(runmod, "uuid", types.SimpleNamespace(
        uuid4=lambda: uuid.UUID(TAG + "0" * 24)))
    monkeypatch.setattr(runmod, "secrets", types.SimpleNamespace(token_hex=lambda n: NONCE))
    hooks = []
    real_start = brokers.start

    def start(*a, **kw):
        b = real_start(*a, **kw)
        for hook in hooks:
            hook(b.stomp_url)
        return b

    monkeypatch.setattr(brokers, "start", start)

    def run(count=400, on_broker=None, **kw):
        if on_broker:
            hooks.append(on_broker)
        spec = PointSpec(producer=["stomp-py"], consumer=["stomp-py"], count=count, bursts=1,
                         **kw)
        runner = Runner(spec, tmp_path / f"point-{len(list(tmp_path.iterdir()))}")
        try:
            out = runner.run()
        except runmod.PointFailed:
            out = runner.outcome
        return out, document(out, "now")

    return run


def _connect(url: str) -> stomp.Connection11:
    u = urlsplit(url)
    conn = stomp.Connection11([(u.hostname, u.port)], auto_decode=False, timeout=10)
    conn.connect(wait=True)
    return conn


def _send(url: str, headers_bodies: list[tuple[dict, bytes]]) -> None:
    conn = _connect(url)
    for i, (h, body) in enumerate(headers_bodies):
        if i == len(headers_bodies) - 1:
            h = {**h, "receipt": "last"}
        conn.send("/queue/" + QUEUE, body, headers={**h, "content-length": str(len(body))})
    time.sleep(0.2)  # (the receipt of the last one lands while we disconnect)
    conn.disconnect(receipt="bye")


def _bench_headers(seq: int, sent_ns: int, nonce: str, body: bytes) -> dict:
    return {"bb_producer": "p1-python", "bb_seq": str(seq), "bb_burst": "0",
            "bb_sent_ns": str(sent_ns), "bb_nonce": nonce, "bb_crc32": f"{zlib.crc32(body):08x}"}


def test_a_consumer_that_lies_in_its_records_is_caught(point, monkeypatch):
    """A consumer that invents a record, one that reports a wrong bb_sent_ns and one whose
    body arrived corrupted: each is named, none counts, the point fails."""
    real = measure.read_consumer_records

    def lying(path):
        recs = real(path)
        r0, r1, r2 = recs[0], recs[1], recs[2]
        recs[1] = dataclasses.replace(r1, sent_ns=r1.sent_ns + 1)            # wrong stamp
        recs[2] = dataclasses.replace(r2, crc_body=f"{zlib.crc32(b'0000x2'):08x}")  # body
        body = b"%06d" % 4242
        recs.append(dataclasses.replace(r0, seq=4242, crc_body=f"{zlib.crc32(body):08x}",
                                        crc_header=f"{zlib.crc32(body):08x}"))  # invented
        return recs

    monkeypatch.setattr(measure, "read_consumer_records", lying)
    _out, doc = point()
    a = doc["accounting"]
    assert doc["status"] == "failed"
    assert a["foreign_kinds"] == {"never sent": 1}
    assert a["corrupt"] == 2 and a["corrupt_kinds"] == {"sent_ns": 1, "crc32": 1}
    assert a["received"] == 398 and a["lost"] == 2
    assert any("2 corrupt record(s): 1 sent_ns, 1 crc32" in e for e in doc["errors"])
    assert doc["throughput"]["measured_bursts"] == 1  # the figure counts clean records only
    assert doc["bursts"][0]["received"] == 398


def test_messages_from_outside_the_run_are_named(point):
    """A message with every bench header but another run's nonce is foreign; a copy of a real
    message sent from outside (its stamp cannot match) is corrupt; and the brokers' counters,
    which saw one more message enqueued than the producers sent, say so too."""
    stale = b"000007"
    copy = b"000000"

    def inject(url):
        _send(url, [(_bench_headers(7, 1, "stale0run", stale), stale),
                    (_bench_headers(0, 2, NONCE, copy), copy)])

    _out, doc = point(on_broker=inject)
    a, w = doc["accounting"], doc["broker_witness"]
    assert doc["status"] == "failed"
    assert a["foreign_kinds"] == {"another run's nonce": 1}
    assert a["corrupt_kinds"] == {"sent_ns": 1}
    assert a["lost"] == 0 and a["received"] == 400
    assert w["available"] and not w["agrees"]
    assert w["total"]["enqueued"] == 402
    assert any("forwarded in" in p for p in w["problems"]), w["problems"]


def test_an_outside_consumer_that_takes_messages_is_named(point):
    """A thief on the run's queue: the loss is counted, the stall says where the messages are
    not, and the brokers' counters say they were dequeued by someone else."""
    stop = threading.Event()
    taken = []

    def thief(url):
        conn = _connect(url)

        class L(stomp.ConnectionListener):
            def on_message(self, frame):
                taken.append(frame.headers.get("bb_seq"))

        conn.set_listener("t", L())
        conn.subscribe("/queue/" + QUEUE, id="t", ack="auto",
                       headers={"activemq.prefetchSize": "1"})

        def later():
            stop.wait(120)
            conn.disconnect()

        threading.Thread(target=later, daemon=True).start()

    try:
        out, doc = point(on_broker=thief, drain_timeout=3)
    finally:
        stop.set()
    a, w = doc["accounting"], doc["broker_witness"]
    assert taken, "the thief took nothing"
    assert doc["status"] == "failed"
    assert a["lost"] == len(taken)
    assert any("taken by someone else" in p for p in w["problems"]), w["problems"]
    assert any("no progress" in e and "stall-broker-counts.json" in e for e in doc["errors"])
    stall = json.loads((out.point_dir / "logs" / "stall-broker-counts.json").read_text())
    assert QUEUE in stall["a"]["queues"]


def test_messages_left_in_a_queue_fail_the_point_by_name(point, monkeypatch):
    """After the consumers stopped, three messages sit in one of the run's queues (as a
    consumer that quit early would leave them): the clients' accounting is clean, the brokers'
    counters are not, and the point fails saying which broker holds what where."""
    real = Runner._final_witness

    def leave_some(self, sup):
        url = self.stack.brokers["a"].stomp_url
        _send(url, [({"note": "left behind"}, b"x")] * 3)
        return real(self, sup)

    monkeypatch.setattr(Runner, "_final_witness", leave_some)
    _out, doc = point()
    assert doc["accounting"]["lost"] == 0 and doc["accounting"]["received"] == 400
    assert doc["status"] == "failed"
    assert any(f"a still holds 3 message(s) in {QUEUE}" in e for e in doc["errors"]), \
        doc["errors"]


def test_a_duplicate_fails_a_point_that_expects_each_message_once(point, monkeypatch):
    real = measure.read_consumer_records

    def doubled(path):
        r = real(path)
        return r + r[:1]

    monkeypatch.setattr(measure, "read_consumer_records", doubled)
    _out, doc = point()
    assert doc["accounting"]["duplicates"] == 1 and doc["status"] == "failed"
    assert any("1 message(s) delivered twice" in e for e in doc["errors"])
