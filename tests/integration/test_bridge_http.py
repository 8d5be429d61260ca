"""The HTTP bridge, as a real process on a loopback port, on Akka and on Apache Pekko (the
same sources, pekko-bridge/pom.xml): 1,000 generated bad requests get 4xx answers and the
bridge still serves afterwards; bursts go through a real broker."""

from __future__ import annotations

import http.client
import json
import random
import subprocess
from pathlib import Path

import pytest
from conftest import client_or_skip

from burstbench import clients

pytestmark = pytest.mark.integration


@pytest.fixture(params=clients.BRIDGES)
def bridge(request, tmp_path):
    """``./bench bridge --runtime akka|pekko`` on a free port, as a user starts it."""
    client_or_skip(request.param)
    runtime = clients.get(request.param).language
    argv = [str(clients.ROOT / "bench"), "bridge", "--runtime", runtime, "--port", "0",
            "--set", "limits.max-body-bytes=65536"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        ready = json.loads(proc.stdout.readline())
        assert ready["event"] == "ready"
        # the JVM took the command's place, on the runtime asked for
        cmdline = Path(f"/proc/{proc.pid}/cmdline").read_text().split("\0")
        assert cmdline[0] == "java" and str(clients.BRIDGE_MODULES[runtime] / "target") in \
            cmdline[cmdline.index("-cp") + 1]
        host, port = ready["url"].removeprefix("http://").split(":")
        yield host, int(port.rstrip("/"))
    finally:
        proc.terminate()
        # SIGTERM runs the bridge's coordinated shutdown: it exits 0
        assert proc.wait(timeout=60) == 0
        proc.stdout.close()


def _bad_requests(n: int, rng: random.Random):
    """Malformed JSON, unknown fields, wrong types, values past the limits, oversized bodies,
    unknown paths and methods."""
    shapes = [
        lambda: ("POST", "/bursts", b"{not json"),
        lambda: ("POST", "/bursts", json.dumps({"count": 10, "size": 6, "workers": 1,
                                                "bursts": 1, "route": "actors",
                                                "bogus": rng.random()}).encode()),
        lambda: ("POST", "/bursts", json.dumps({"count": "ten", "size": 6, "workers": 1,
                                                "bursts": 1, "route": "actors"}).encode()),
        lambda: ("POST", "/bursts", json.dumps({"count": 10 ** 12, "size": 6, "workers": 1,
                                                "bursts": 1, "route": "actors"}).encode()),
        lambda: ("POST", "/bursts", json.dumps({"count": 10, "size": -1, "workers": 1,
                                                "bursts": 1, "route": "actors"}).encode()),
        lambda: ("POST", "/bursts", json.dumps({"count": 10, "size": 6, "workers": 1,
                                                "bursts": 1, "route": "pigeon"}).encode()),
        lambda: ("POST", "/bursts", b"x" * rng.randint(70_000, 200_000)),
        lambda: ("POST", "/messages", b"{\"body\": 1}\n{broken\n"),
        lambda: ("POST", "/pi", json.dumps({"workers": 0, "messages": 1,
                                            "elements": 1}).encode()),
        lambda: ("GET", f"/no-such-{rng.randint(0, 9999)}", b""),
        lambda: ("DELETE", "/bursts", b""),
        lambda: ("POST", "/bursts", bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 300)))),
    ]
    for _ in range(n):
        yield rng.choice(shapes)()


def test_a_thousand_bad_requests_get_4xx_and_the_bridge_keeps_serving(bridge):
    host, port = bridge
    rng = random.Random(1234)
    codes = {}
    conn = http.client.HTTPConnection(host, port, timeout=30)
    for method, path, body in _bad_requests(1000, rng):
        try:
            conn.request(method, path, body=body,
                         headers={"Content-Type": "application/json"} if body else {})
            resp = conn.getresponse()
            resp.read()
            status = resp.status
            if resp.getheader("Connection", "").lower() == "close":
                conn.close()
                conn = http.client.HTTPConnection(host, port, timeout=30)
        except (ConnectionError, http.client.HTTPException):
            # the server may close a connection after refusing an oversized body
            conn.close()
            conn = http.client.HTTPConnection(host, port, timeout=30)
            status = "closed"
        codes[status] = codes.get(status, 0) + 1
        assert status == "closed" or 400 <= status < 500, (method, path, body[:80], status)
    assert sum(v for k, v in codes.items() if k != "closed") >= 950, codes
    conn.close()
    ok = http.client.HTTPConnection(host, port, timeout=30)
    ok.request("GET", "/health")
    assert ok.getresponse().status == 200
    ok.close()
    good = http.client.HTTPConnection(host, port, timeout=60)
    good.request("POST", "/bursts", body=json.dumps({"count": 1000, "size": 6, "workers": 2,
                                                     "bursts": 1, "route": "actors"}),
                 headers={"Content-Type": "application/json"})
    resp = good.getresponse()
    doc = json.loads(resp.read())
    assert resp.status == 200 and doc["accounting"]["lost"] == 0, doc
    good.close()


@pytest.mark.parametrize("module", clients.BRIDGES)
def test_bursts_through_the_broker_route(tmp_path, sup, module):
    """POST /bursts with route broker: JMS producer -> a real queue -> consumers -> collector."""
    from conftest import need_broker_built

    from burstbench.infra import brokers

    need_broker_built()
    client_or_skip(module)
    b = brokers.start(sup, brokers.BrokerSpec(name="bridge"), tmp_path)
    argv = ["java", *clients.JAVA_OPTS, "-Dburstbench.bridge.port=0", "-cp",
            clients.java_cp(clients.ROOT / module), "burstbench.bridge.http.App"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        url = json.loads(proc.stdout.readline())["url"]
        host, port = url.removeprefix("http://").rstrip("/").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=120)
        conn.request("POST", "/bursts", body=json.dumps({
            "count": 5000, "size": 32, "workers": 4, "bursts": 2, "route": "broker",
            "broker_url": b.openwire_url}), headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        doc = json.loads(resp.read())
        conn.close()
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        proc.stdout.close()
    assert resp.status == 200, doc
    assert doc["accounting"] == {"sent": 10000, "received": 10000, "lost": 0, "duplicates": 0}
    assert all(x["msgs_per_s"] > 0 for x in doc["bursts"])


@pytest.mark.parametrize("runtime", sorted(clients.BRIDGE_MODULES))
def test_the_relay_on_either_runtime_delivers_to_a_contract_consumer(tmp_path, broker,
                                                                      runtime):
    """``./bench bridge --runtime akka|pekko --broker-url URL``, then POST /messages?relay=Q
    with bench messages as NDJSON: the bridge confirms every send, and stomp.py's contract
    consumer, a real client of the real broker, receives each one once with its body whole."""
    from conftest import events, run_client

    client_or_skip(f"{runtime}-bridge")
    py = client_or_skip("stomp-py")
    queue, n = f"relay.{runtime}", 300
    proc = subprocess.Popen([str(clients.ROOT / "bench"), "bridge", "--runtime", runtime,
                             "--port", "0", "--broker-url", broker.openwire_url],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        url = json.loads(proc.stdout.readline())["url"]
        host, port = url.removeprefix("http://").rstrip("/").split(":")
        lines = "".join(json.dumps({"id": f"m{i}", "body": f"{i % 1000000:06d}" + "x" * 26,
                                    "headers": {"bb_producer": "http", "bb_seq": str(i),
                                                "bb_burst": "0", "bb_sent_ns": "1"}}) + "\n"
                        for i in range(n))
        conn = http.client.HTTPConnection(host, int(port), timeout=120)
        conn.request("POST", f"/messages?relay={queue}", body=lines)
        resp = conn.getresponse()
        answer = json.loads(resp.read())
        conn.close()
    finally:
        proc.terminate()
        assert proc.wait(timeout=60) == 0
        proc.stdout.close()
    assert resp.status == 200 and answer["accepted"] == n and answer["relayed"] == n, answer
    assert answer["destination"] == queue
    records = tmp_path / "c.tsv"
    got = run_client(py, "consumer", ["--url", broker.stomp_url, "--destinations", queue,
                                      "--count", str(n), "--id", "c1", "--records",
                                      str(records)])
    assert got.returncode == 0, got.stderr
    assert events(got.stdout)[-1]["received"] == n
    rows = [r.split("\t") for r in records.read_text().splitlines()[1:]]
    assert sorted(int(r[1]) for r in rows) == list(range(n))  # each once
    assert all(r[0] == "http" and r[5] == "32" and r[6] == "1" for r in rows)  # bodies whole
