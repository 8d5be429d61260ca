"""A full point against a broker the harness did not start (--broker-url)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT, client_or_skip, need_broker_built

from burstbench.infra import brokers

pytestmark = pytest.mark.integration


def test_point_against_an_external_broker_leaves_it_running(tmp_path):
    need_broker_built()
    client_or_skip("stomp-py")
    # started by hand, outside any harness run
    ext = subprocess.Popen([sys.executable, "-m", "burstbench.infra.brokers"], cwd=ROOT,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        urls = json.loads(ext.stdout.readline())
        env = {**os.environ, "BURSTBENCH_RESULTS": str(tmp_path)}
        arg = ",".join([urls["openwire"], urls["stomp"], urls["ws"]])
        r = subprocess.run([sys.executable, "-m", "burstbench.cli", "run", "--broker-url", arg,
                            "--consumers", "2", "--count", "3000", "--bursts", "2"],
                           cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
                           check=False)
        assert r.returncode == 0, r.stderr[-3000:]
        doc = json.loads((tmp_path / "latest" / "points" / "point.json").read_text())
        assert doc["accounting"]["lost"] == 0 and doc["accounting"]["received"] == 6000
        assert doc["versions"]["broker"]["version"] == "6.1.7"  # from the STOMP server header
        stats = doc["resources"]["external_brokers"]["a"]["statistics"]
        assert stats.get("brokerName") == "bench"  # the statistics plugin answered
        assert [p for p in doc["resources"]["processes"] if p["role"] == "broker"] == []
        # the broker's own counters, read through its statistics plugin, agree
        w = doc["broker_witness"]
        assert w["available"] and w["agrees"], w.get("problems")
        assert w["total"]["enqueued"] == 6000 and w["total"]["size"] == 0
        # the harness neither rendered a config for it nor stopped it
        assert ext.poll() is None
        assert brokers.port_accepts("127.0.0.1", int(urls["stomp"].rsplit(":", 1)[1]))
    finally:
        ext.terminate()
        ext.wait(timeout=60)
        ext.stdout.close()


def test_bad_broker_url_is_one_line():
    r = subprocess.run([sys.executable, "-m", "burstbench.cli", "run", "--broker-url",
                        "gopher://x:1"], cwd=ROOT, capture_output=True, text=True, timeout=60,
                       check=False)
    assert r.returncode == 2 and "unknown scheme" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
