"""The tuned Java client's held writes (openwire-jms-tuned, clients/java tuned/HeldWritesTcp): an
ack or a full-speed send may wait in the socket buffer for the next write. Nothing held may be
lost at a clean exit, and the command stream must stay what activemq-client would send (same
accounting, same order). The stock openwire-jms flushes every command, as activemq-client does."""

from __future__ import annotations

import subprocess
import uuid

import pytest
from conftest import client_or_skip, run_client

from burstbench.measure import measure

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("mode", [[], ["--flush-each"]], ids=["held", "flush-each"])
def test_a_consumer_leaving_a_backlog_acknowledged_everything_it_took(shared_broker, mode,
                                                                      tmp_path):
    """40,000 queued; the tuned Java consumer takes at least 6,000 from the backlog (so its session
    mostly holds a next message and its acks wait) and exits; a stomp.py consumer then gets
    exactly the rest. An ack held and dropped at exit would bring a taken message back (and
    the second consumer would see it again)."""
    java, py = client_or_skip("openwire-jms-tuned"), client_or_skip("stomp-py")
    broker = shared_broker
    TOTAL = 40000
    q = f"writes.{uuid.uuid4().hex[:8]}"
    p = run_client(java, "producer", ["--url", broker.openwire_url, "--destinations", q,
                                      "--count", str(TOTAL), "--records", str(tmp_path / "p.tsv"),
                                      *mode])
    assert p.returncode == 0, p.stderr
    first = run_client(java, "consumer", ["--url", broker.openwire_url, "--destinations", q,
                                          "--count", "6000", "--records",
                                          str(tmp_path / "c1.tsv"), *mode])
    assert first.returncode == 0, first.stderr
    a = [(r.producer, r.seq) for r in measure.read_consumer_records(tmp_path / "c1.tsv")]
    # it takes more while it stops: the listener runs on until the main thread, woken at 6,000,
    # halts delivery (4,000 more once, on a busy machine: hence a backlog far above 10,000)
    assert 6000 <= len(a) < TOTAL
    second = run_client(py, "consumer", ["--url", broker.stomp_url, "--destinations", q,
                                         "--count", str(TOTAL - len(a)), "--records",
                                         str(tmp_path / "c2.tsv")], timeout=60)
    assert second.returncode == 0, second.stderr
    sent = {(pr, s) for pr, s, _b, _t in measure.read_producer_records(tmp_path / "p.tsv")}
    b = [(r.producer, r.seq) for r in measure.read_consumer_records(tmp_path / "c2.tsv")]
    assert len(sent) == TOTAL and len(a) + len(b) == TOTAL
    assert not set(a) & set(b), "a message the Java consumer took came back"
    assert set(a) | set(b) == sent
    assert [s for _p, s in a] == sorted(s for _p, s in a)  # one producer, one queue: in order


def test_a_paced_producer_and_a_trickle_lose_nothing(shared_broker, tmp_path):
    """--rate sends go out one by one; the consumer, never holding a next message for long,
    flushes each ack: 300 messages at 1,000/s all arrive, in order, and the queue is empty
    afterwards (a stomp.py consumer finds nothing left within 2 s)."""
    java, py = client_or_skip("openwire-jms-tuned"), client_or_skip("stomp-py")
    broker = shared_broker
    q = f"writes.{uuid.uuid4().hex[:8]}"

    cons = subprocess.Popen(java.client.argv("consumer") + [
        "--url", broker.openwire_url, "--destinations", q, "--count", "300", "--records",
        str(tmp_path / "c.tsv")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert '"ready"' in cons.stdout.readline()
        p = run_client(java, "producer", ["--url", broker.openwire_url, "--destinations", q,
                                          "--count", "300", "--rate", "1000"])
        assert p.returncode == 0, p.stderr
        _out, err = cons.communicate(timeout=60)
        assert cons.returncode == 0, err
    finally:
        if cons.poll() is None:
            cons.kill()
            cons.communicate()
    got = measure.read_consumer_records(tmp_path / "c.tsv")
    assert [r.seq for r in got] == list(range(300))
    left = subprocess.Popen(py.client.argv("consumer") + [
        "--url", broker.stomp_url, "--destinations", q, "--count", "1", "--records",
        str(tmp_path / "left.tsv")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            left.communicate(timeout=2)
    finally:
        left.terminate()
        left.communicate(timeout=10)
    assert measure.read_consumer_records(tmp_path / "left.tsv") == []
