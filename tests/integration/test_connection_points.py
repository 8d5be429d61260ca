"""Points whose client processes hold many connections (``--connections-per-process``): each
connection a slot, accounted, recorded and judged like a process of its own."""

from __future__ import annotations

import pytest
from conftest import client_or_skip, need_broker_built

from burstbench.measure.points import document
from burstbench.measure.runner import Runner
from burstbench.measure.spec import PointSpec

pytestmark = pytest.mark.integration


def _run(tmp_path, **kw) -> dict:
    need_broker_built()
    spec = PointSpec(**kw)
    for name in {*spec.producer, *spec.consumer}:
        client_or_skip(name)
    out = Runner(spec, tmp_path / "point").run()
    return document(out, "now")


def test_slots_of_four_languages_are_judged_like_processes(tmp_path):
    """Two Python and Perl producer processes of 2 slots each, two JMS and stompjs consumer
    processes of 3 slots each: every slot's records are read (ids ``c1-java.1`` ...), the
    accounting is exact, and each process says how many connections it held."""
    doc = _run(tmp_path, producer=["stomp-py", "net-stomp"], consumer=["openwire-jms", "stompjs"],
               producers=4, consumers=6, connections_per_process=2, count=300, bursts=2,
               prefetch=20)
    assert doc["status"] == "ok", doc["errors"]
    acc = doc["accounting"]
    assert (acc["sent"], acc["received"], acc["lost"], acc["duplicates"]) == (2400, 2400, 0, 0)
    procs = {p["name"]: p for p in doc["resources"]["processes"]
             if p["role"] in ("producer", "consumer")}
    assert sorted(procs) == ["c1-java", "c2-node", "c3-java", "c4-node",
                             "p1-python", "p2-perl"], sorted(procs)
    held = {n: p.get("connections", 1) for n, p in procs.items()}
    assert held == {"c1-java": 2, "c2-node": 2, "c3-java": 1, "c4-node": 1,
                    "p1-python": 2, "p2-perl": 2}, held
    records = sorted(f.stem for f in (tmp_path / "point" / "records").glob("*.tsv"))
    assert records == ["c1-java.1", "c1-java.2", "c2-node.1", "c2-node.2", "c3-java", "c4-node",
                       "p1-python.1", "p1-python.2", "p2-perl.1", "p2-perl.2"], records


def test_a_thousand_connections_in_four_processes(tmp_path):
    """500 paced producer slots and 500 consumer slots of stompjs over STOMP/TCP, 250 to a
    process, on Classic's nio connectors: 1,000 connections to the broker, every message
    accounted, and what they cost the broker recorded."""
    doc = _run(tmp_path, producer=["stompjs:tcp"], consumer=["stompjs:tcp"], producers=500,
               consumers=500, connections_per_process=250, count=4, bursts=2, rate=4.0,
               transport="nio", prefetch=10)
    assert doc["status"] == "ok", doc["errors"]
    acc = doc["accounting"]
    assert (acc["sent"], acc["received"], acc["lost"], acc["duplicates"]) == (4000, 4000, 0, 0)
    clients = [p for p in doc["resources"]["processes"] if p["role"] in ("producer", "consumer")]
    assert len(clients) == 4 and all(p["connections"] == 250 for p in clients), clients
    assert doc["parameters"]["connections_per_process"] == 250
    con = doc["connect"]
    assert (con["slots"], con["processes"]) == (1000, 4), con
    assert con["broker_threads_per_connection"] < 0.5, "nio: a selector, not a thread each"
    assert con["brokers"]["a"]["connected"]["rss_mb"] > 0, con


def test_a_websocket_point_refuses_a_transport_it_would_not_use():
    """--transport changes the STOMP and OpenWire connectors: a point whose clients all speak
    WebSocket (stompjs's default) would be labelled nio while running on Jetty's connector."""
    with pytest.raises(ValueError, match="WebSocket"):
        PointSpec(producer=["stompjs"], consumer=["stompjs"], transport="nio").validate()


@pytest.mark.full
def test_ten_thousand_consumers_on_classic_nio(tmp_path):
    """The issue's target (full tier: ``./bench test --full -k ten_thousand
    tests/integration/test_connection_points.py``): 10,000 concurrent stompjs consumers over
    STOMP/TCP on Classic's nio connectors, 500 to a process, and 1,000 producers offering
    1,000 msg/s together; each connection may take 60 s to open. Exact accounting. (As many
    producers as consumers would need 20,000 descriptors in the broker: where a process may
    open 20,000, that point is refused before it starts, naming the limit.)"""
    doc = _run(tmp_path, producer=["stompjs:tcp"], consumer=["stompjs:tcp"], producers=1000,
               consumers=10000, connections_per_process=500, count=2, bursts=2, rate=1.0,
               transport="nio", prefetch=10, connect_timeout=60)
    assert doc["status"] == "ok", doc["errors"]
    acc = doc["accounting"]
    assert (acc["sent"], acc["received"], acc["lost"], acc["duplicates"]) == (4000, 4000, 0, 0)
    assert doc["connect"]["slots"] == 11000
