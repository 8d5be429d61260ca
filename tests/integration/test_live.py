"""``./bench run --live``: a page on 127.0.0.1 that follows the run with stompjs in the browser.
The test opens it in headless Chromium while a real point runs and reads what the page shows:
its figures move during the bursts, and at the end they are the result file's."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time

import pytest
from conftest import ROOT, client_or_skip, need_broker_built

from burstbench.measure import live
from burstbench.paths import CLIENTS

pytestmark = pytest.mark.integration

LOOK = CLIENTS / "node" / "browser" / "look.mjs"


def _lines(stream, q: queue.Queue) -> None:
    for line in stream:
        q.put(line)
    q.put(None)


def test_live_page_follows_a_run_and_ends_on_its_result(tmp_path):
    need_broker_built()
    client_or_skip("stompjs:browser")  # the page runs stompjs in Chromium
    client_or_skip("stomp-py")
    env = {**os.environ, "BURSTBENCH_RESULTS": str(tmp_path)}
    # paced, so the bursts last a few seconds each
    run = subprocess.Popen(
        [sys.executable, "-m", "burstbench.cli", "run", "--live", "--count", "5000", "--rate",
         "2000", "--bursts", "3"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )
    look = None
    try:
        url = None
        for line in run.stderr:
            if line.startswith("live view: "):
                url = line.split(": ", 1)[1].strip()
                break
        assert url and url.startswith("http://127.0.0.1:"), "no live view address"
        drain = threading.Thread(target=run.stderr.read, daemon=True)
        drain.start()
        look = subprocess.Popen(["node", str(LOOK), url, "--every", "0.5"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        samples: queue.Queue = queue.Queue()
        threading.Thread(target=_lines, args=(look.stdout, samples), daemon=True).start()
        shot_mid = tmp_path / "mid.png"
        seen, shot_sent = [], False
        deadline = time.monotonic() + 240
        while run.poll() is None and time.monotonic() < deadline:
            try:
                line = samples.get(timeout=0.5)
            except queue.Empty:
                continue
            assert line is not None, "the page's browser went away"
            doc = json.loads(line)
            last = (doc.get("state") or {}).get("last")
            if last and last.get("status") == "running":
                seen.append(last)
                if last["received"] > 0 and not shot_sent:
                    look.stdin.write(f"shot {shot_mid}\n")
                    look.stdin.flush()
                    shot_sent = True
        assert run.wait(timeout=60) == 0
        drain.join(timeout=10)
        shot_end = tmp_path / "end.png"
        look.stdin.write(f"sample\nshot {shot_end}\nstop\n")
        look.stdin.flush()
        look.wait(timeout=60)
        rest = []
        while (line := samples.get(timeout=30)) is not None:
            rest.append(line)
    finally:
        for p in (run, look):
            if p is None:
                continue
            if p.poll() is None:
                p.kill()
                p.wait()
            for f in (p.stdin, p.stdout, p.stderr):
                if f is not None:
                    try:
                        f.close()
                    except OSError:
                        pass
    # the figures moved while the bursts ran: received grew through several values, and the
    # page showed a receive rate above zero
    received = [s["received"] for s in seen]
    assert received == sorted(received), received
    assert len(set(received)) >= 3, received
    assert any(s["recv_rate"] > 0 for s in seen)
    assert max(s["burst"] for s in seen) == 3
    # at the end: what the page holds is the result file's accounting
    final = [json.loads(x) for x in rest if x.startswith('{"t_ms"')][-1]["state"]
    run_dir = (tmp_path / "latest").resolve()
    doc = json.loads((run_dir / "points" / "point.json").read_text())
    acc = doc["accounting"]
    assert doc["status"] == "ok" and acc["sent"] == acc["received"] == 15000
    last = final["byPoint"]["point"]
    assert last["status"] == "clients done"
    assert (last["sent"], last["received"], last["foreign"]) == (acc["sent"], acc["received"], 0)
    assert final["shown"]["received"] == f"{acc['received']:,}"
    assert final["shown"]["sent"] == f"{acc['sent']:,}"
    row = final["state"]["points"][0]
    assert (row["status"], row["sent"], row["received"], row["lost"]) == (
        "ok", acc["sent"], acc["received"], acc["lost"])
    assert row["recv_msgs_per_s"] == pytest.approx(doc["throughput"]["recv_msgs_per_s"])
    for shot in (shot_mid, shot_end):
        data = shot.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000, shot
    # the live topic is no measured destination: the brokers' counters saw the run's queues only
    assert live.TOPIC.startswith("/topic/")
    w = doc["broker_witness"]
    assert w["available"] and not w["problems"]
