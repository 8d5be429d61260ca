"""ActiveMQ Artemis as a broker the bench starts (``--broker artemis``): the four stock
languages on one queue, each consumer competing for the same messages, the accounting exact
and the launcher's counters agreeing; client acknowledgements with the journal; TLS and a
login. Run as a user runs it: ``python -m burstbench.cli run``."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT, client_or_skip

from burstbench import paths

pytestmark = pytest.mark.integration

STOCK = ("net-stomp", "stomp-py", "stompjs", "openwire-jms")
CONSUMERS = ["--consumer", "stompjs,openwire-jms,stomp-py,net-stomp", "--consumers", "4"]


@pytest.fixture(autouse=True)
def _built():
    if not paths.ARTEMIS_CLASSES.exists():
        pytest.skip("the Artemis launcher is not built (./bench setup)")
    for c in STOCK:
        client_or_skip(c)


def _run(tmp_path, *args) -> dict:
    """``bench run --broker artemis ARGS``, its run written under ``tmp_path`` (--results)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BURSTBENCH_")}
    r = subprocess.run([sys.executable, "-m", "burstbench.cli", "run", "--broker", "artemis",
                        "--results", str(tmp_path), *args], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=600, check=False)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    return json.loads((tmp_path / "latest" / "points" / "point.json").read_text())


def _each_consumer_received(tmp_path) -> dict[str, int]:
    records = tmp_path / "latest" / "points" / "point" / "records"
    return {f.stem: len(f.read_text().splitlines()) - 1 for f in records.glob("c*.tsv")}


def _exact(doc: dict, sent: int) -> None:
    a = doc["accounting"]
    assert doc["status"] == "ok", doc["errors"]
    assert a["sent"] == a["received"] == sent
    assert a["lost"] == a["duplicates"] == a["corrupt"] == a["foreign"] == 0
    w = doc["broker_witness"]
    assert w["sources"] == {"a": "launcher"} and w["agrees"], w["problems"]
    assert w["total"]["enqueued"] == w["total"]["dequeued"] == sent
    assert doc["versions"]["broker"] == {"name": "ActiveMQ Artemis", "version": "2.44.0"}


def test_four_languages_compete_on_one_queue_and_every_message_is_counted(tmp_path):
    doc = _run(tmp_path, "--producer", "net-stomp,stomp-py", "--producers", "2", *CONSUMERS,
               "--count", "3000", "--bursts", "1")
    _exact(doc, 6000)
    # /queue/ is anycast: one queue the four consumers share, not a copy each
    got = _each_consumer_received(tmp_path)
    assert sum(got.values()) == 6000 and len(got) == 4
    assert all(n > 0 for n in got.values()), got
    # Artemis's audit loggers stay off, as it ships them: at INFO they write two lines a
    # message and the broker spent most of its CPU on them
    log = (tmp_path / "latest" / "points" / "point" / "logs" / "broker-a.log").read_text()
    assert "AMQ6015" not in log and "AMQ6017" not in log and len(log) < 100_000
    # auto acknowledgement: Artemis's STOMP flow control off, as it is for auto by default
    assert doc["flow_control"] == {
        "stompjs": "consumer-window-size -1 (no limit)",
        "openwire-jms": "prefetch 1000 messages",
        "stomp-py": "consumer-window-size -1 (no limit)",
        "net-stomp": "consumer-window-size -1 (no limit)"}


def test_client_acks_with_the_journal_hold_a_window_of_prefetch_messages(tmp_path):
    """With ``ack:client`` a STOMP consumer acknowledges every ``prefetch/2`` messages: a
    window of fewer messages than that (Artemis's 10 KiB default, or activemq.prefetchSize read
    as bytes) would stall it; ``prefetch`` frames' worth of bytes does not."""
    doc = _run(tmp_path, "--producer", "stomp-py,openwire-jms", *CONSUMERS, "--ack", "client",
               "--persistence", "journal", "--persistent", "--count", "1500", "--bursts", "1")
    _exact(doc, 3000)
    assert doc["flow_control"]["net-stomp"] == "consumer-window-size 518000 bytes"
    assert doc["resources"]["broker_store_bytes"] > 0  # the journal's files, before removal
    assert all(n > 0 for n in _each_consumer_received(tmp_path).values())


def test_tls_and_a_login_for_every_stock_client(tmp_path):
    doc = _run(tmp_path, "--tls", "--auth", "--producer", ",".join(STOCK), *CONSUMERS,
               "--count", "1000", "--bursts", "1")
    _exact(doc, 4000)
    assert doc["connections"]["tls"] is True and doc["connections"]["login"] is True
    assert set(doc["connections"]["schemes"]) == {"ssl", "stomp+ssl", "wss"}
    # every client said which TLS version its connection negotiated
    assert doc["connections"]["tls_versions"] == ["TLSv1.3"]
    assert doc["connections"]["tls_unreported"] == []


def test_a_cluster_carries_every_message_to_the_node_with_the_consumers(tmp_path):
    """``forward`` on Artemis: two nodes of a cluster (static connectors, ON_DEMAND), the
    producers on a, the consumers on b: every message crosses a's cluster bridge once."""
    doc = _run(tmp_path, "--topology", "forward", "--producer", "stomp-py,openwire-jms",
               *CONSUMERS, "--count", "2000", "--bursts", "1")
    a = doc["accounting"]
    assert doc["status"] == "ok" and a["sent"] == a["received"] == 4000 and a["lost"] == 0
    w = doc["broker_witness"]
    assert w["agrees"], w["problems"]
    assert w["brokers"]["a"]["bridges_forwarded"] == 4000
    assert w["brokers"]["b"]["enqueued"] == w["brokers"]["b"]["dequeued"] == 4000
    assert w["brokers"]["a"]["enqueued"] == 0


@pytest.mark.parametrize("store", ["jdbc-postgres",
                                   pytest.param("jdbc-mariadb", marks=pytest.mark.full)])
def test_artemis_keeps_persistent_messages_in_a_database(store, tmp_path):
    """Artemis's JDBC store (database-store-configuration) on a database started for the
    point: persistent messages from STOMP and JMS producers, every one received once."""
    doc = _run(tmp_path, "--persistence", store, "--persistent", "--producer",
               "stomp-py,openwire-jms", "--consumer", "openwire-jms,net-stomp", "--consumers",
               "2", "--count", "500", "--bursts", "1")
    _exact(doc, 1000)
    assert doc["parameters"]["persistence"] == store
