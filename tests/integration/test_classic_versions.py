"""``--broker classic:VERSION``: ActiveMQ Classic 5.18.6 and 6.3.1 (beside the default 6.1.7)
started by the bench, the four stock languages on one queue, the accounting exact and the
launcher's counters agreeing; the result file names the version that ran."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT, client_or_skip

from burstbench.infra import brokers

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("version,node", [("5.18.6", "stompjs"), ("6.3.1", "stompjs:tcp")])
def test_four_languages_on_one_queue(version, node, tmp_path):
    if not brokers.launcher_dirs("classic", version)[0].exists():
        pytest.skip(f"the Classic {version} launcher is not built (./bench setup)")
    for c in ("net-stomp", "stomp-py", node, "openwire-jms"):
        client_or_skip(c)
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("BURSTBENCH_")},
           "BURSTBENCH_RESULTS": str(tmp_path)}
    r = subprocess.run(
        [sys.executable, "-m", "burstbench.cli", "run", "--broker", f"classic:{version}",
         "--producer", f"net-stomp,openwire-jms,{node}", "--consumer",
         f"{node},openwire-jms,stomp-py,net-stomp", "--consumers", "4", "--count", "2000",
         "--bursts", "1"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
        check=False)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    doc = json.loads((tmp_path / "latest" / "points" / "point.json").read_text())
    assert doc["versions"]["broker"] == {"name": "ActiveMQ Classic", "version": version}
    assert doc["parameters"]["broker"] == f"classic:{version}"
    a, w = doc["accounting"], doc["broker_witness"]
    assert a["sent"] == a["received"] == 6000 and a["lost"] == a["duplicates"] == 0
    assert w["agrees"] and w["total"]["enqueued"] == w["total"]["dequeued"] == 6000
    records = tmp_path / "latest" / "points" / "point" / "records"
    assert all(len(f.read_text().splitlines()) > 1 for f in records.glob("c*.tsv"))
