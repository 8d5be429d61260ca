"""burstbench/infra/stack.py: a point's infrastructure comes up whole, hands out its endpoints, and
goes down on every path, a bring-up that fails half way included."""

from __future__ import annotations

import pytest
from conftest import need_broker_built

from burstbench.errors import PointFailed
from burstbench.infra import brokers
from burstbench.infra.procs import Supervisor
from burstbench.infra.stack import Stack
from burstbench.measure.spec import PointSpec

pytestmark = pytest.mark.integration


def test_a_bring_up_that_fails_half_way_stops_the_broker_it_had_started(tmp_path, monkeypatch):
    """Topology forward (a -> b): a starts for real, b refuses; leaving never reaches the
    body, a is stopped by its PID and the stores are gone."""
    need_broker_built()
    real, started = brokers.start, []

    def start(sup, bs, work, **kw):
        if started:
            raise PointFailed(f"broker {bs.name} refused (this test)")
        started.append(real(sup, bs, work, **kw))
        return started[-1]

    monkeypatch.setattr(brokers, "start", start)
    spec = PointSpec(topology="forward")
    with Supervisor(tmp_path / "logs") as sup:
        stack = Stack(spec, tmp_path, sup)
        with pytest.raises(PointFailed, match="broker b refused"), stack:
            pytest.fail("the body ran on a stack that did not come up")
        assert len(started) == 1 and started[0].child.returncode is not None
        assert not started[0].child.alive()
        assert not (tmp_path / "work").exists()
        assert stack.brokers == {"a": started[0]}


def test_the_stack_hands_out_each_clients_broker_and_stops_it_on_leaving(tmp_path):
    need_broker_built()
    spec = PointSpec(topology="single", auth=True)
    with Supervisor(tmp_path / "logs") as sup:
        with Stack(spec, tmp_path, sup) as stack:
            name, broker = stack.broker_for("consumer", 3)
            assert name == "a" and broker is stack.brokers["a"]
            assert broker.child.alive()
            assert brokers.port_accepts("127.0.0.1", broker.spec.stomp_port)
            user, password = stack.credentials
            # the password goes in the clients' environment, off their command lines
            assert stack.security_args() == ["--user", user]
            assert stack.client_env(None)["BB_PASSWORD"] == password
            argv, host = stack.place("consumer", 3, name, ["true"], cwd=tmp_path)
            assert (argv, host) == (["true"], "a")  # loopback: run here, as it is
            assert stack.broker_version and stack.namespaces == []
        assert not broker.child.alive() and broker.child.returncode is not None
        assert not (tmp_path / "work").exists()
