"""stompjs in headless Chromium (``stompjs:browser``): every Chromium process a run starts is
gone after it, whichever way it ends, and its throwaway profile with it where the driver lives
to remove it. (The contract itself is tests/contract/test_contract.py's, with every other
client.)"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid

import psutil
import pytest
from conftest import ROOT, client_or_skip, need_broker_built

pytestmark = pytest.mark.integration


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _profiles(procs) -> set[str]:
    """The --user-data-dir of every Chromium among ``procs``."""
    found = set()
    for p in procs:
        try:
            for a in p.cmdline():
                if a.startswith("--user-data-dir="):
                    found.add(a.split("=", 1)[1])
        except psutil.NoSuchProcess:
            pass
    return found


def _holding(profiles: set[str]) -> list[int]:
    """Live processes whose command line names one of ``profiles`` (Chromium's crash handlers
    leave its process group, so they are looked for by that, not as our descendants)."""
    pids = []
    for p in psutil.process_iter(["cmdline"]):
        cmd = " ".join(p.info["cmdline"] or [])
        if any(d in cmd for d in profiles) and _alive(p.pid):
            pids.append(p.pid)
    return pids


def _wait_gone(profiles: set[str], seconds: float = 20) -> list[int]:
    deadline = time.monotonic() + seconds
    left = _holding(profiles)
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = _holding(profiles)
    return left


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["SIGINT", "SIGKILL"])
def test_interrupted_browser_run_leaves_no_chromium(sig, tmp_path):
    """The harness is interrupted mid-burst with a browser producer and two browser
    consumers (each its own Chromium): no Chromium process is left, and none of the drivers."""
    need_broker_built()
    client_or_skip("stompjs:browser")
    # the drivers make their browsers' throwaway profiles in TMPDIR
    env = {**os.environ, "BURSTBENCH_RESULTS": str(tmp_path), "TMPDIR": str(tmp_path)}
    err = open(tmp_path / "stderr", "w")  # noqa: SIM115 (the harness writes it while we watch)
    proc = subprocess.Popen(
        [sys.executable, "-m", "burstbench.cli", "run", "--producer", "stompjs:browser",
         "--consumer", "stompjs:browser", "--consumers", "2", "--count", "100000",
         "--rate", "1000", "--bursts", "2"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=err,
        start_new_session=True,
    )
    try:
        harness = psutil.Process(proc.pid)
        deadline = time.monotonic() + 150
        kids = []
        while time.monotonic() < deadline:
            kids = harness.children(recursive=True)
            profiles = _profiles(kids)
            renderers = [k for k in kids if _alive(k.pid)
                         and "--type=renderer" in " ".join(k.cmdline())]
            if len(profiles) == 3 and len(renderers) >= 3:
                break
            time.sleep(0.3)
        else:
            pytest.fail("the run never got its three browsers going: "
                        + (tmp_path / "stderr").read_text()[-2000:])
        time.sleep(2.0)  # into the burst
        kids = harness.children(recursive=True)
        profiles = _profiles(kids)
        os.kill(proc.pid, sig)
        rc = proc.wait(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
        err.close()
    assert len(profiles) == 3
    left = _wait_gone(profiles)
    assert not left, f"Chromium processes left behind: {left}"
    deadline = time.monotonic() + 20
    while any(_alive(k.pid) for k in kids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [k.pid for k in kids if _alive(k.pid)]
    stale = [os.path.dirname(d) for d in profiles if os.path.exists(os.path.dirname(d))]
    if sig == signal.SIGKILL:
        assert rc == -signal.SIGKILL
        # the drivers died with no chance to clean up; the next driver sweeps their profiles
        assert len(stale) == 3
        _next_driver_sweeps(stale, tmp_path)
        return
    assert rc == 130
    # a driver stopped by a signal removes its browser's throwaway profile
    assert not stale


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _next_driver_sweeps(stale: list[str], tmp: str) -> None:
    r = client_or_skip("stompjs:browser")
    out = subprocess.run(r.client.argv("consumer") + ["--url", f"ws://127.0.0.1:{_free_port()}/",
                                                      "--destinations", "q",
                                                      "--connect-timeout", "1"],
                         capture_output=True, text=True, timeout=60, check=False,
                         env={**os.environ, "TMPDIR": str(tmp)})
    assert out.returncode == 3, out.stderr
    assert not [d for d in stale if os.path.exists(d)], "stale profiles not swept"
    assert not [n for n in os.listdir(tmp) if n.startswith("bb-chromium-")]


@pytest.mark.parametrize("how", ["driver-sigkill", "group-sigkill", "exit-3"])
def test_the_driver_takes_its_chromium_with_it(how, shared_broker, tmp_path):
    """A driver killed alone (SIGKILL, no chance to clean up: Chromium dies of its parent-death
    signal), killed with its process group as the harness does, or failing by itself (exit 3:
    nobody listens) leaves no Chromium process."""
    r = client_or_skip("stompjs:browser")
    url = shared_broker.url_for("ws")
    if how == "exit-3":
        url = f"ws://127.0.0.1:{_free_port()}/"  # nobody listens there
    proc = subprocess.Popen(
        r.client.argv("consumer") + ["--url", url, "--destinations",
                                     f"browser.{uuid.uuid4().hex[:8]}", "--gate",
                                     "--connect-timeout", "4"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True, env={**os.environ, "TMPDIR": str(tmp_path)},
    )
    try:
        driver = psutil.Process(proc.pid)
        profiles: set[str] = set()
        deadline = time.monotonic() + 60
        while not profiles and time.monotonic() < deadline:
            profiles = _profiles(driver.children(recursive=True))
            time.sleep(0.1)
        assert profiles, "the driver never started Chromium"
        if how == "exit-3":
            proc.wait(timeout=60)
            assert proc.returncode == 3, proc.stderr.read()
        else:
            first = proc.stdout.readline()
            assert first.startswith('{"event":"ready"'), first + proc.communicate(timeout=30)[1]
            if how == "driver-sigkill":
                os.kill(proc.pid, signal.SIGKILL)
            else:
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    left = _wait_gone(profiles)
    assert not left, f"Chromium processes left behind: {left}"
    stale = [os.path.dirname(d) for d in profiles if os.path.exists(os.path.dirname(d))]
    if how == "exit-3":
        assert not stale
    else:
        _next_driver_sweeps(stale, tmp_path)


@pytest.mark.parametrize("mode", ["tabs", pytest.param("browsers", marks=pytest.mark.browser_full)])
def test_browser_consumers_compete_as_tabs_or_browsers(mode, tmp_path):
    """Three browser consumers share one queue as three tabs of one Chromium (the harness's
    ``browser`` process) or as three Chromiums: every message once, each a share, the result
    says which, and what Chromium reports per tab and per process."""
    from burstbench.measure.outcome import metrics
    from burstbench.measure.runner import Runner
    from burstbench.measure.spec import PointSpec

    need_broker_built()
    client_or_skip("stompjs:browser")
    spec = PointSpec(producer=["stompjs"], consumer=["stompjs:browser"], consumers=3,
                     count=3000, bursts=2, browser=mode)
    out = Runner(spec, tmp_path / "point").run()
    assert out.status == "ok", out.errors
    m = metrics(out)
    a = m["accounting"]
    assert (a["sent"], a["received"], a["lost"], a["duplicates"]) == (6000, 6000, 0, 0), a
    assert all(out.consumer_records.values()), "each tab should receive a share"
    procs = {p["name"]: p for p in out.processes}
    shared = [p for p in procs.values() if p["role"] == "browser"]
    tabs = [p for p in procs.values() if p["role"] == "consumer"]
    assert len(tabs) == 3
    if mode == "tabs":
        assert len(shared) == 1 and shared[0]["exit_code"] == 0
        assert {p["browser"] for p in tabs} == {"shared"}
        kinds = [c["type"] for c in shared[0]["chromium"]]
        assert "browser" in kinds
        # while the last tab was open, its renderer was among the shared browser's processes
        seen = [c for p in tabs for c in p["chromium"]]
        assert any(c.get("type") == "renderer" for c in seen), seen
    else:
        assert not shared
        assert {p["browser"] for p in tabs} == {"own"}
        for p in tabs:
            assert {"browser", "renderer"} <= {c["type"] for c in p["chromium"]}
    for p in tabs:
        assert p["tab"]["task_s"] > 0 and p["tab"]["script_s"] > 0
