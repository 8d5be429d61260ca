"""Shared fixtures: real brokers in throwaway directories, client processes, and a check that
no test leaves a process of ours behind."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness import brokers, clients, paths  # noqa: E402
from harness.procs import Supervisor  # noqa: E402


def need_broker_built():
    if not paths.BROKER_CLASSES.exists():
        pytest.skip("broker not built (./bench setup)")


@pytest.fixture
def sup(tmp_path):
    s = Supervisor(tmp_path / "logs")
    yield s
    s.stop_all()


@pytest.fixture
def broker(sup, tmp_path):
    """A fresh non-persistent broker on free loopback ports."""
    need_broker_built()
    return brokers.start(sup, brokers.BrokerSpec(name="t"), tmp_path)


@pytest.fixture(scope="module")
def shared_broker(tmp_path_factory, request):
    """One non-persistent broker for a whole test module (each test uses its own queues)."""
    need_broker_built()
    name = request.module.__name__.rsplit(".", 1)[-1].removeprefix("test_")
    work = tmp_path_factory.mktemp(f"{name}-broker")
    sup = Supervisor(work / "logs")
    try:
        yield brokers.start(sup, brokers.BrokerSpec(name=name.replace("_", "-")), work)
    finally:
        sup.stop_all()


@pytest.fixture
def queue_name():
    return f"test.{uuid.uuid4().hex[:10]}"


def client_or_skip(name: str) -> clients.Resolved:
    r = clients.resolve(name)
    why = r.client.missing()
    if why:
        pytest.skip(why)
    return r


def run_client(
    r: clients.Resolved, role: str, args: list[str], timeout: float = 120, **kw
) -> subprocess.CompletedProcess:
    return subprocess.run(
        r.client.argv(role) + args, capture_output=True, text=True, timeout=timeout, **kw
    )


def events(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]
