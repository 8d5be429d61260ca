"""One message no one consumes keeps every KahaDB journal file written after it.

The soak's broker b stopped reclaiming its store after a restart in which the JMS consumer
poison-acknowledged 47 redelivered duplicates into ActiveMQ.DLQ
(docs/findings-faults.md#soak-store-growth). This is the store's half of that, on a real broker with
1 MB journal files and a cleanup every 500 ms: one persistent message in ActiveMQ.DLQ, then
steady traffic through another queue, every message consumed at once. KahaDB keeps the file
holding the DLQ message, and each later file because it holds acknowledgements of messages
in the file before it ("not removing data file: N as contained ack(s) refer to referenced
file"); once the DLQ message is consumed the files go. The launcher's stats line is what
tells: ``system_queues`` (the DLQ) and ``journal_files``.
"""

from __future__ import annotations

import time

import pytest
import stomp
from conftest import need_broker_built

from burstbench.infra import brokers

pytestmark = pytest.mark.integration

BODY = b"x" * 1024
DLQ = "/queue/ActiveMQ.DLQ"


def stats(sup, broker) -> dict:
    st = broker.ask(sup, "stats", "stats", 20)
    if st is None:
        raise AssertionError("no stats line from the broker")
    return st


class Counter(stomp.ConnectionListener):
    def __init__(self):
        self.n = 0

    def on_message(self, frame):
        self.n += 1


def send(conn, dest: str, n: int) -> None:
    for i in range(n):
        receipt = f"r{dest}{i}" if i == n - 1 else None
        conn.send(dest, BODY, headers={"persistent": "true"}, receipt=receipt)


def wait(pred, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def test_a_message_left_in_the_dlq_keeps_every_later_journal_file_until_it_is_consumed(
        sup, tmp_path, monkeypatch):
    need_broker_built()
    monkeypatch.setenv("BURSTBENCH_KAHADB_LOG", "TRACE")  # its reasons, in the broker's log
    spec = brokers.BrokerSpec(name="pin", persistence="kahadb", data_dir=tmp_path / "b",
                              kahadb_attrs={"journalMaxFileLength": "1mb",
                                            "cleanupInterval": "500",
                                            # ack compaction, which can break such a chain,
                                            # runs after 10 cleanups without a removal: 5 min
                                            # at the default 30 s, a compaction per four or
                                            # more of the soak's files; here out of the way
                                            "compactAcksAfterNoGC": "1000"})
    b = brokers.start(sup, spec, tmp_path)
    conn = stomp.Connection11([(spec.host, spec.stomp_port)], heartbeats=(0, 0))
    got = Counter()
    conn.set_listener("n", got)
    conn.connect(wait=True)
    send(conn, DLQ, 1)  # (a poison acknowledgement's copy goes to this queue)
    conn.subscribe("/queue/bb.pin", id="1", ack="auto")
    sent = 0
    for _ in range(6):  # ~6 MB through the queue, consumed as it comes
        send(conn, "/queue/bb.pin", 1000)
        sent += 1000
        wait(lambda s=sent: got.n == s, 60, "the consumer to keep up")
    time.sleep(2)  # a few cleanups
    pinned = stats(sup, b)
    assert pinned["system_queues"]["ActiveMQ.DLQ"]["size"] == 1
    files = [f[0] for f in pinned["journal_files"]]
    assert files[0] == 1 and len(files) >= 5, files  # db-1 (the DLQ message) and all after it
    log = b.child.log_path.read_text()
    assert "as contained ack(s) refer to referenced file" in log

    conn.subscribe(DLQ, id="2", ack="auto")  # the one message consumed: the chain goes
    wait(lambda: got.n == sent + 1, 30, "the DLQ message")
    deadline = time.monotonic() + 20
    while len(files) > 2 and time.monotonic() < deadline:
        time.sleep(0.5)
        after = stats(sup, b)
        files = [f[0] for f in after["journal_files"]]
    assert len(files) <= 2, files
    print(f"pinned: journal files {[f[0] for f in pinned['journal_files']]}, store "
          f"{pinned['usage']['store_bytes']:,} B; DLQ consumed: files {files}, store "
          f"{after['usage']['store_bytes']:,} B")
    assert after["system_queues"]["ActiveMQ.DLQ"]["size"] == 0
    conn.disconnect()
