"""Networks of brokers and queues at scale, on real brokers."""

from __future__ import annotations

import subprocess

import pytest
from conftest import client_or_skip, need_broker_built

from burstbench.infra import topology
from burstbench.measure.outcome import metrics
from burstbench.measure.runner import Runner
from burstbench.measure.spec import PointSpec

pytestmark = pytest.mark.integration


def _run(tmp_path, **kw):
    need_broker_built()
    client_or_skip("stomp-py")
    out = Runner(PointSpec(**kw), tmp_path / "point").run()
    return out, metrics(out)


def _exact(m, n):
    a = m["accounting"]
    assert (a["sent"], a["received"], a["lost"], a["duplicates"], a["body_errors"]) == \
        (n, n, 0, 0, 0), a


# one broker, one bridge and a mesh in the default tier; the longer shapes (a split, three
# brokers in a chain and in a mesh) in the full one: ./bench test --full -k every_topology
DEFAULT_TOPOLOGIES = ("single", "forward", "mesh2")


@pytest.mark.parametrize("topo", [t if t in DEFAULT_TOPOLOGIES else
                                  pytest.param(t, marks=pytest.mark.full)
                                  for t in topology.TOPOLOGIES])
def test_every_topology_delivers_persistent_messages_exactly_once(topo, tmp_path):
    out, m = _run(tmp_path, topology=topo, consumers=3, count=5000, bursts=1, persistent=True,
                  persistence="kahadb-nosync")
    _exact(m, 5000)
    lay = topology.layout(topo)
    brokers = sorted(p["name"] for p in out.processes if p["role"] == "broker")
    assert brokers == [f"broker-{b}" for b in lay.brokers]
    hosts = {p["name"]: p["host"] for p in out.processes if p["role"] != "broker"}
    assert {h for n, h in hosts.items() if n.startswith("c")} == set(lay.consumer_hosts)
    assert {h for n, h in hosts.items() if n.startswith("p")} <= set(lay.producer_hosts)


def test_topology_checks_are_one_line_errors():
    with pytest.raises(ValueError, match="needs --hosts netns"):
        topology.check("forward", "multicast", "loopback")
    with pytest.raises(ValueError, match="chain3 needs --discovery static"):
        topology.check("chain3", "multicast", "netns")
    with pytest.raises(ValueError, match="unknown topology"):
        topology.check("ring", "static", "loopback")


@pytest.mark.root
@pytest.mark.parametrize("discovery", ["static", "multicast"])
def test_forward_across_network_namespaces(discovery, tmp_path):
    from burstbench.infra import netns
    why = netns.available()
    if why:
        pytest.skip(why)
    out, m = _run(tmp_path, topology="forward", hosts="netns", discovery=discovery,
                  consumers=2, count=5000, bursts=1, link_rate="200mbit")
    _exact(m, 5000)
    assert len(out.namespaces) == 3  # two hosts and the bridge
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True,
                            check=True).stdout
    assert not [n for n in out.namespaces if n in listed.split()], "namespaces left behind"


def test_a_thousand_and_twenty_four_queues_on_kahadb(tmp_path):
    out, m = _run(tmp_path, queues=1024, consumers=2, count=4096, bursts=1, persistent=True,
                  persistence="kahadb")
    _exact(m, 4096)
    dests = {r.dest for recs in out.consumer_records.values() for r in recs}
    assert len(dests) == 1024
    broker = next(p for p in out.processes if p["role"] == "broker")
    assert broker["exit_code"] in (0, 143) and broker["max_open_files"] > 0
