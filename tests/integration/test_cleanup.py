"""Interrupting the harness leaves no process and no open broker port behind, and keeps the
partial result marked incomplete."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import psutil
import pytest
from conftest import ROOT, client_or_skip, need_broker_built

from burstbench.infra import brokers

pytestmark = pytest.mark.integration


def _cmdline(k: psutil.Process) -> str:
    """A living process's command line, "" for one that has ended or is a zombie (it can end
    between being listed and being read: psutil then raises ZombieProcess)."""
    try:
        return " ".join(k.cmdline())
    except psutil.NoSuchProcess:
        return ""


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.mark.parametrize(
    "sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=["SIGINT", "SIGTERM", "SIGKILL"]
)
def test_interrupted_run_leaves_nothing_behind(sig, tmp_path):
    need_broker_built()
    client_or_skip("stomp-py")
    env = {**os.environ, "BURSTBENCH_RESULTS": str(tmp_path)}
    # rate-limited so the run is surely mid-burst when the signal comes
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "burstbench.cli",
            "run",
            "--consumers",
            "2",
            "--count",
            "100000",
            "--rate",
            "2000",
            "--bursts",
            "2",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        harness = psutil.Process(proc.pid)
        deadline = time.monotonic() + 120
        kids, ports = [], set()
        while time.monotonic() < deadline:
            kids = harness.children(recursive=True)
            roles = " ".join(_cmdline(k) for k in kids)
            if "producer.py" in roles and roles.count("consumer.py") == 2:
                break
            time.sleep(0.2)
        else:
            pytest.fail("the run never got its producer and consumers going")
        time.sleep(1.0)  # into the burst
        kids = harness.children(recursive=True)
        for k in kids:
            try:
                ports |= {
                    c.laddr.port
                    for c in k.net_connections("inet")
                    if c.status == psutil.CONN_LISTEN
                }
            except psutil.NoSuchProcess:
                pass
        assert len(ports) >= 3, "the broker's ports should be listening"
        os.kill(proc.pid, sig)
        rc = proc.wait(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stderr.close()
    deadline = time.monotonic() + 20
    while any(_alive(k.pid) for k in kids) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [k.pid for k in kids if _alive(k.pid)]
    assert not left, f"processes left behind: {left}"
    # a port still open must belong to someone else (another broker on this busy machine
    # may be handed a port ours just freed), never to a process this run started
    ours = {k.pid for k in kids}
    holders = {c.pid for c in psutil.net_connections("inet")
               if c.status == psutil.CONN_LISTEN and c.laddr.port in ports}
    assert not holders & ours
    if not holders:
        assert not [p for p in ports if brokers.port_accepts("127.0.0.1", p)]
    if sig == signal.SIGKILL:
        assert rc == -signal.SIGKILL
        return
    assert rc == 130
    run_dir = (tmp_path / "latest").resolve()
    assert json.loads((run_dir / "run.json").read_text())["status"] == "incomplete"
    point = json.loads((run_dir / "points" / "point.json").read_text())
    assert point["status"] == "incomplete"
    assert not (run_dir / "points" / "point" / "work").exists(), "broker store left behind"
