"""Records -> metrics: hand-computed expected values."""

import math

import pytest

from burstbench import stats
from burstbench.measure import measure
from burstbench.measure.measure import ConsumerRecord


def rec(p, seq, burst, sent, recv, nbytes=6, ok=True, redo=False, dest="q"):
    return ConsumerRecord(p, seq, burst, sent, recv, nbytes, ok, redo, dest)


def test_percentile_nearest_rank():
    vals = [float(v) for v in range(1, 11)]  # 1..10
    assert measure.percentile(vals, 50) == 5.0
    assert measure.percentile(vals, 90) == 9.0
    assert measure.percentile(vals, 99) == 10.0
    assert measure.percentile(vals, 0) == 1.0
    assert math.isnan(measure.percentile([], 50))


def test_latency_percentiles_come_from_merged_histograms_not_averages():
    # consumer A: 1 ms x 990 records; consumer B: 100 ms x 10 records.
    a = [rec("p", i, 1, 0, 1_000_000) for i in range(990)]
    b = [rec("p", 990 + i, 1, 0, 100_000_000) for i in range(10)]
    lat = measure.latency_ms({"A": a, "B": b}, {1})
    # merged: 990 x 1 ms and 10 x 100 ms -> p50 = p90 = p99 = 1, p99.9 = 100 (HDR: 3 digits)
    assert lat["p50"] == pytest.approx(1.0, rel=1e-3)
    assert lat["p99"] == pytest.approx(1.0, rel=1e-3)
    assert lat["p99_9"] == pytest.approx(100.0, rel=1e-3) or lat["p99_9"] is None
    assert lat["max"] == 100.0 and lat["samples"] == 1000
    # averaging per-consumer p99s would have given (1 + 100) / 2 = 50.5
    assert lat["mean"] == pytest.approx((990 * 1 + 10 * 100) / 1000)


def test_a_percentile_needs_ten_samples_in_its_tail():
    recs = [rec("p", i, 1, 0, (i + 1) * 1_000_000) for i in range(999)]
    lat = measure.latency_ms(recs, {1})
    assert lat["p50"] is not None and lat["p90"] is not None
    assert lat["p99"] is None and lat["samples_needed"]["p99"] == 1000  # 999 < 1,000
    assert lat["p99_9"] is None and lat["samples_needed"]["p99_9"] == 10000
    lat = measure.latency_ms(recs + [rec("p", 999, 1, 0, 1_000_000_000)], {1})
    assert lat["p99"] == pytest.approx(990.0, rel=1e-3)


def test_latency_only_counts_measured_bursts():
    recs = [rec("p", 0, 0, 0, 50_000_000), rec("p", 1, 1, 0, 2_000_000)]
    assert measure.latency_ms(recs, {1})["max"] == 2.0


def test_per_burst_rates():
    # burst 0: 4 sent at t=0,1,2,3 s; received last at 4 s -> recv 4/4 s = 1/s, send 4/3 s
    s = 1_000_000_000
    sent = [("p", i, 0, i * s) for i in range(4)]
    recvd = [rec("p", i, 0, i * s, (i + 1) * s) for i in range(4)]
    (b,) = measure.per_burst(sent, recvd)
    assert b.sent == 4 and b.received == 4
    assert b.send_msgs_per_s == pytest.approx(4 / 3)
    assert b.recv_msgs_per_s == pytest.approx(1.0)
    assert b.seconds == pytest.approx(4.0)


def test_duplicates_do_not_count_as_throughput():
    s = 1_000_000_000
    sent = [("p", 0, 0, 0), ("p", 1, 0, s)]
    recvd = [rec("p", 0, 0, 0, s), rec("p", 1, 0, s, 2 * s), rec("p", 1, 0, s, 2 * s)]
    (b,) = measure.per_burst(sent, recvd)
    assert b.received == 2
    assert b.recv_msgs_per_s == pytest.approx(1.0)


def test_measured_excludes_warmup_only_with_several_bursts():
    bursts = [measure.BurstFigures(i, 1, 1, 1.0, 1.0, 1.0) for i in range(3)]
    assert [b.burst for b in measure.measured(bursts)] == [1, 2]
    assert [b.burst for b in measure.measured(bursts[:1])] == [0]


def test_spread():
    assert stats.spread([3.0, 1.0, 2.0]) == {"median": 2.0, "min": 1.0, "max": 3.0, "n": 3}
    assert stats.spread([4.0, 1.0])["median"] == 2.5
    assert stats.spread([])["n"] == 0


def test_accounting_loss_duplicates_reorder_foreign_body():
    sent = [("p1", s, 0, 0) for s in range(5)] + [("p2", s, 0, 0) for s in range(2)]
    c1 = [
        rec("p1", 0, 0, 0, 1),
        rec("p1", 2, 0, 0, 2),
        rec("p1", 1, 0, 0, 3),  # 1 reorder
        rec("p2", 0, 0, 0, 4),
    ]
    c2 = [
        rec("p1", 2, 0, 0, 5, redo=True),  # duplicate across consumers (redelivered)
        rec("p2", 1, 0, 0, 6, nbytes=5),  # wrong length
        rec("p9", 0, 0, 0, 7),
    ]  # a bench message this run never sent
    a = measure.account(sent, {"c1": c1, "c2": c2}, foreign_reported=2, size=6)
    assert a.sent == 7
    assert a.received == 4  # p1#0,1,2  p2#0 (p2#1 arrived corrupt: not received)
    assert a.lost == 3 and a.lost_sample == ["p1#3", "p1#4", "p2#1"]
    assert a.duplicates == 1
    assert a.out_of_order == 1
    assert a.foreign == 3  # two reported by consumers + one unknown sender
    assert a.foreign_kinds == {"reported by the clients": 2, "never sent": 1}
    assert a.redelivered == 1
    assert a.corrupt == a.body_errors == 1 and a.corrupt_kinds == {"length": 1}
    assert not a.ok()
    assert a.ok(expect_loss=True) is False  # body errors still fail


def test_reorder_is_per_queue_and_producer():
    sent = [("p", s, 0, 0) for s in range(4)]
    # seq 0,2 on queue a and 1,3 on queue b, interleaved as b1 a0 b3 a2: in order per queue
    c = [
        rec("p", 1, 0, 0, 1, dest="b"),
        rec("p", 0, 0, 0, 2, dest="a"),
        rec("p", 3, 0, 0, 3, dest="b"),
        rec("p", 2, 0, 0, 4, dest="a"),
    ]
    a = measure.account(sent, {"c": c})
    assert a.out_of_order == 0 and a.lost == 0 and a.ok()


def test_read_records(tmp_path):
    p = tmp_path / "c.tsv"
    p.write_text(
        "#producer\tseq\tburst\tsent_ns\trecv_ns\tbytes\tbody_ok\tredelivered\tdest\n"
        "p1\t7\t1\t100\t250\t6\t1\t0\tq.a\n"
    )
    (r,) = measure.read_consumer_records(p)
    assert (r.producer, r.seq, r.burst, r.sent_ns, r.recv_ns) == ("p1", 7, 1, 100, 250)
    assert r.body_ok and not r.redelivered and r.dest == "q.a"
    q = tmp_path / "p.tsv"
    q.write_text("#producer\tseq\tburst\tsent_ns\np1\t0\t0\t5\n")
    assert measure.read_producer_records(q) == [("p1", 0, 0, 5)]


# -- the brokers' counters as a second witness (measure.witness) ----------------------------
def _q(enq, deq, size=0, inflight=0):
    return {"enqueued": enq, "dequeued": deq, "dispatched": deq, "inflight": inflight,
            "expired": 0, "size": size}


def _acc(sent, received, duplicates=0, foreign=0):
    return measure.Accounting(sent=sent, received=received, lost=sent - received,
                              duplicates=duplicates, foreign=foreign)


def test_witness_agrees_on_one_broker_and_across_a_bridge():
    one = {"a": {"queues": {"bb.x.q0": _q(100, 100)}, "bridges": []}}
    w = measure.witness(one, _acc(100, 100))
    assert w["agrees"] and w["forwarded_in"] == 0 and not w["problems"]
    # forward: A enqueues 100 and the bridge dequeues them; B enqueues 100, consumers dequeue
    two = {"a": {"queues": {"bb.x.q0": _q(100, 100)},
                 "bridges": [{"connector": "a-to-b", "enqueued": 100, "dequeued": 100}]},
           "b": {"queues": {"bb.x.q0": _q(100, 100)}, "bridges": []}}
    w = measure.witness(two, _acc(100, 100))
    assert w["agrees"] and w["forwarded_in"] == w["forwarded_out"] == 100
    assert w["brokers"]["a"]["bridges_forwarded"] == 100


def test_witness_names_messages_left_in_a_queue():
    left = {"b": {"queues": {"bb.x.q3": _q(100, 60, size=40)}, "bridges": []}}
    w = measure.witness(left, _acc(100, 60))
    assert not w["agrees"]
    assert any("b still holds 40 message(s) in bb.x.q3" in p for p in w["problems"])


def test_witness_names_a_thief_and_an_outside_sender():
    stolen = {"a": {"queues": {"bb.x.q0": _q(100, 100)}, "bridges": []}}
    w = measure.witness(stolen, _acc(100, 97))  # 3 taken by a consumer outside the bench
    assert not w["agrees"] and "taken by someone else" in w["problems"][0]
    extra = {"a": {"queues": {"bb.x.q0": _q(101, 101)}, "bridges": []}}
    w = measure.witness(extra, _acc(100, 100, duplicates=1))  # a copy sent from outside
    assert not w["agrees"] and "no producer of the run sent" in w["problems"][0]
    short = {"a": {"queues": {"bb.x.q0": _q(90, 90)}, "bridges": []}}
    w = measure.witness(short, _acc(100, 90))
    assert "enqueued 90 messages but the producers' records say 100" in w["problems"][0]


def test_witness_says_where_an_outside_broker_dropped_or_copied_messages():
    # a broker of the user's own whose policy drops a queue's messages when it is full
    dropped = {"a": {"queues": {"bb.x.q0": _q(100, 100), "bb.x.q1": _q(60, 60)},
                     "bridges": []}}
    w = measure.witness(dropped, _acc(200, 160))
    assert "40 never reached a queue of the run (a bb.x.q0 enqueued 100, a bb.x.q1 enqueued " \
           "60)" in w["problems"][0]
    # its own expiry, and its dead-letter address (Artemis's "killed")
    aged = {"a": {"queues": {"bb.x.q0": {**_q(100, 90), "expired": 7, "killed": 3}},
                  "bridges": []}}
    w = measure.witness(aged, _acc(100, 90))
    assert any("a expired 7 message(s) in bb.x.q0" in p for p in w["problems"])
    assert any("sent 3 message(s) of bb.x.q0 to its dead-letter address" in p
               for p in w["problems"])
    # a composite destination copying each message to a second queue of the run
    copied = {"a": {"queues": {"bb.x.q0": _q(100, 100), "bb.x.q0.copy": _q(100, 100)},
                    "bridges": []}}
    w = measure.witness(copied, _acc(100, 100))
    assert not w["agrees"] and "100 more enqueued than sent: copies (a bb.x.q0 enqueued 100, " \
        "a bb.x.q0.copy enqueued 100)" in w["problems"][0]


def test_witness_names_an_artemis_address_that_dropped_or_copied():
    # STOMP's /queue/ kept as an address of its own, multicast: messages sent before anyone
    # subscribed go nowhere, later ones are copied to each subscription's queue
    counts = {"a": {"queues": {"/queue/bb.x.q0 -> s1": _q(90, 90), "/queue/bb.x.q0 -> s2":
                               _q(90, 90)},
                    "addresses": {"/queue/bb.x.q0": {"routing": "multicast", "routed": 90,
                                                     "unrouted": 10, "queues": 2}},
                    "bridges": []}}
    w = measure.witness(counts, _acc(100, 100, duplicates=80))
    assert not w["agrees"]
    assert any("a dropped 10 message(s) sent to address /queue/bb.x.q0 (multicast): no queue "
               "was bound to it" in p for p in w["problems"])
    assert any("routed 90 message(s) sent to address /queue/bb.x.q0 (multicast) into a queue "
               "per subscription (2 left now): copies" in p for p in w["problems"])


def test_witness_reports_messages_in_flight_and_unreadable_counters():
    w = measure.witness({"a": {"queues": {"q": _q(10, 8, inflight=2)}, "bridges": []}},
                        _acc(10, 10))
    assert any("2 message(s) in flight" in p for p in w["problems"])
    w = measure.witness({"a": {"error": "boom"}}, _acc(10, 10))
    assert not w["agrees"] and "unreadable" in w["problems"][0]


def test_records_of_messages_never_sent_do_not_count_as_throughput():
    s = 1_000_000_000
    sent = [("p", i, 0, i * s) for i in range(4)]
    recvd = [rec("p", i, 0, i * s, (i + 1) * s) for i in range(4)]
    invented = [rec("p", 99, 0, 0, 2 * s), rec("ghost", 1, 0, 0, 2 * s)]
    (b,) = measure.per_burst(sent, recvd + invented)
    assert b.received == 4 and b.recv_msgs_per_s == pytest.approx(1.0)


# -- nonce and checksums: the harness's own verdict on every record --------------------------
import zlib  # noqa: E402


def _body(seq, size):
    counter = b"%06d" % (seq % 1000000)
    return counter + b"x" * (size - 6) if size >= 6 else counter[:size]


@pytest.mark.parametrize("size", [1, 5, 6, 7, 100, 4096, 65536])
def test_body_crc_matches_zlib_over_the_whole_body(size):
    crc = measure.BodyCrc(size)
    for seq in (0, 1, 9, 123456, 999999, 1000000, 2345678):
        assert crc(seq) == zlib.crc32(_body(seq, size)), (size, seq)


def _signed(p, seq, sent_ns, size=6, nonce="n1", body=None, header=None):
    body = _body(seq, size) if body is None else body
    crc = f"{zlib.crc32(body):08x}"
    return ConsumerRecord(p, seq, 0, sent_ns, sent_ns + 1000, len(body), True, False, "q",
                          nonce, header or f"{zlib.crc32(_body(seq, size)):08x}", crc)


def test_the_harness_names_forged_stale_and_corrupt_records():
    sent = [("p1", s, 0, 1000 + s) for s in range(6)]
    recs = [
        _signed("p1", 0, 1000),                                  # fine
        _signed("p1", 1, 1001, nonce="n0"),                      # another run's nonce
        _signed("p1", 77, 1077),                                 # a key never sent: invented
        _signed("p1", 2, 9999),                                  # wrong bb_sent_ns
        _signed("p1", 3, 1003, body=b"000003" + b"y"),           # corrupt body (and length)
        _signed("p1", 4, 1004, body=b"00000X"),                  # corrupt body, same length
        _signed("p1", 5, 1005, header="deadbeef"),               # header CRC altered
    ]
    a = measure.account(sent, {"c": recs}, size=6, nonce="n1")
    assert a.received == 1 and a.lost == 5
    assert a.foreign == 2 and a.foreign_kinds == {"another run's nonce": 1, "never sent": 1}
    assert a.corrupt == 4
    assert a.corrupt_kinds == {"sent_ns": 1, "length": 1, "crc32": 1, "crc32_header": 1}
    assert not a.ok()
    kept = measure.clean(sent, recs, nonce="n1", size=6)
    assert [(r.producer, r.seq) for r in kept] == [("p1", 0)]


def test_final_witness_settles_when_counts_agree_whatever_the_reading_time():
    """Two readings with the same counters settle the end of a point even though each carries
    the broker's own time of reading (``t_ns``): comparing that too kept every point waiting
    the full 10 s."""
    from types import SimpleNamespace

    from burstbench.measure.runner import Runner

    calls = []

    def witness(_sup, at, keep=True):
        calls.append(at)
        q = {"enqueued": 5, "dequeued": 5, "inflight": 0, "size": 0}
        return {"a": {"queues": {"bb.x.q0": q}, "bridges": [], "t_ns": len(calls)}}

    fake = SimpleNamespace(_witness=witness, outcome=SimpleNamespace(broker_counts=[]))
    Runner._final_witness(fake, None)
    assert calls == ["end", "end"]
    assert fake.outcome.broker_counts[-1]["at"] == "end"
