"""A point of thousands of connections is refused before it starts when the machine cannot
hold it, naming the limit and how to raise it (burstbench/infra/capacity.py)."""

from __future__ import annotations

import pytest

from burstbench.infra import capacity, procs
from burstbench.measure.spec import PointSpec

LIMITS = {"nofile": 20000, "nproc": 96363, "threads_max": 192726, "pid_max": 32768,
          "local_ports": 28232}


@pytest.fixture(autouse=True)
def _machine(monkeypatch):
    monkeypatch.setattr(procs, "limits", lambda: dict(LIMITS))
    monkeypatch.setattr(capacity, "threads_running", lambda: 300)


def _check(**kw) -> None:
    capacity.check(PointSpec(connections_per_process=500, **kw))


def test_the_broker_s_open_files_bound_the_connections():
    with pytest.raises(ValueError, match=r"20,000 connections need about 20,500 open files in "
                                         r"the broker.*may open 20,000.*limits.conf"):
        _check(producer=["stompjs:tcp"], consumer=["stompjs:tcp"], producers=10000,
               consumers=10000, transport="nio")
    _check(producer=["stompjs:tcp"], consumer=["stompjs:tcp"], producers=1000,
           consumers=10000, transport="nio")


def test_threads_bound_classic_tcp_and_the_jms_clients():
    with pytest.raises(ValueError, match=r"threads.*a thread per connection on Classic's tcp"
                                         r".*kernel.pid_max"):
        _check(producer=["openwire-jms"], consumer=["openwire-jms"], producers=7000,
               consumers=7000)
    with pytest.raises(ValueError, match=r"in the clients"):
        _check(producer=["openwire-jms"], consumer=["openwire-jms"], producers=9000,
               consumers=9000, transport="nio")
    _check(producer=["net-stomp"], consumer=["net-stomp"], producers=7000, consumers=7000,
           transport="nio")


def test_local_ports_bound_one_host():
    LIMITS_FEW = {**LIMITS, "nofile": 1 << 20, "local_ports": 1000}
    procs_limits = procs.limits
    try:
        procs.limits = lambda: dict(LIMITS_FEW)
        with pytest.raises(ValueError, match=r"1,000 local ports.*ip_local_port_range"):
            _check(producer=["net-stomp"], consumer=["net-stomp"], producers=600,
                   consumers=600, transport="nio")
    finally:
        procs.limits = procs_limits


def test_a_few_connections_are_not_checked():
    LIMITS["nofile"] = 10  # would refuse anything that were checked
    try:
        _check(producers=40, consumers=40)
    finally:
        LIMITS["nofile"] = 20000
