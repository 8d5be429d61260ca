"""The real broker and the stomp.py clients, end to end."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

import psutil
import pytest
from conftest import ROOT, client_or_skip, events, need_broker_built, outside, run_client

from burstbench.infra import brokers
from burstbench.measure import results
from burstbench.measure.outcome import metrics
from burstbench.measure.runner import Runner
from burstbench.measure.spec import PointSpec

pytestmark = pytest.mark.integration


def test_broker_binds_loopback_only_and_stops_on_sigterm(sup, broker):
    listening = {
        c.laddr
        for c in psutil.Process(broker.child.pid).net_connections("inet")
        if c.status == psutil.CONN_LISTEN
    }
    assert {a.port for a in listening} == set(broker.ports)  # no JMX, nothing else
    assert {a.ip for a in listening} == {"127.0.0.1"}
    sup.stop(broker.child)
    assert broker.child.returncode in (0, 143)
    assert not any(brokers.port_accepts("127.0.0.1", p) for p in broker.ports)


def test_rendered_xml_is_accepted_by_the_launcher_check(tmp_path):
    need_broker_built()
    spec = brokers.BrokerSpec(
        name="chk",
        persistence="kahadb",
        data_dir=tmp_path,
        openwire_port=1,
        stomp_port=2,
        ws_port=3,
    )
    xml = tmp_path / "activemq.xml"
    xml.write_text(brokers.render(spec))
    r = subprocess.run(
        brokers.java_argv(xml, "256m", ["--check"]), capture_output=True, text=True, timeout=120,
        check=False
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout.strip().splitlines()[-1]) == {"event": "checked", "broker": "chk"}


def test_one_message_round_trip(shared_broker, queue_name, tmp_path):
    py = client_or_skip("stomp-py")
    common = ["--url", shared_broker.stomp_url, "--destinations", queue_name, "--count", "1"]
    prod = run_client(py, "producer", common + ["--size", "100", "--id", "rt"])
    assert prod.returncode == 0, prod.stderr
    cons = run_client(py, "consumer", common + ["--records", str(tmp_path / "c.tsv")])
    assert cons.returncode == 0, cons.stderr
    done = events(cons.stdout)[-1]
    assert done == {"event": "done", "id": "c1", "received": 1, "foreign": 0, "redelivered": 0}
    line = (tmp_path / "c.tsv").read_text().splitlines()[1].split("\t")
    assert line[0:3] == ["rt", "0", "0"] and line[5:9] == ["100", "1", "0", queue_name]


def test_burst_to_three_competing_consumers_is_disjoint_and_complete(shared_broker, tmp_path):
    client_or_skip("stomp-py")
    spec = PointSpec(consumers=3, count=10000, bursts=1, broker_urls=outside(shared_broker))
    out = Runner(spec, tmp_path / "point").run()
    sent = {(p, s) for p, s, _b, _t in out.producer_records}
    assert len(sent) == 10000
    sets = [{(r.producer, r.seq) for r in recs} for recs in out.consumer_records.values()]
    assert len(sets) == 3 and all(sets), "every consumer should get a share"
    assert sum(len(s) for s in sets) == 10000  # no message twice ...
    assert set.union(*sets) == sent  # ... and none missing
    m = metrics(out)
    assert m["accounting"]["lost"] == 0 and m["accounting"]["duplicates"] == 0
    assert m["throughput"]["recv_msgs_per_s"] > 0


def test_persistent_burst_on_kahadb_survives_a_broker_restart(sup, tmp_path, queue_name):
    need_broker_built()
    py = client_or_skip("stomp-py")
    store = tmp_path / "store"
    spec = brokers.BrokerSpec(name="durable", persistence="kahadb", data_dir=store)
    b = brokers.start(sup, spec, tmp_path)
    prod = run_client(
        py,
        "producer",
        ["--url", b.stomp_url, "--destinations", queue_name, "--count", "1000", "--persistent"],
    )
    assert prod.returncode == 0, prod.stderr
    sup.stop(b.child)
    assert b.child.returncode in (0, 143)
    spec2 = brokers.BrokerSpec(name="durable", persistence="kahadb", data_dir=store)
    b2 = brokers.start(sup, spec2, tmp_path)  # new ports, same store
    cons = run_client(
        py,
        "consumer",
        [
            "--url",
            b2.stomp_url,
            "--destinations",
            queue_name,
            "--count",
            "1000",
            "--records",
            str(tmp_path / "c.tsv"),
        ],
    )
    assert cons.returncode == 0, cons.stderr
    seqs = sorted(
        int(line.split("\t")[1]) for line in (tmp_path / "c.tsv").read_text().splitlines()[1:]
    )
    assert seqs == list(range(1000))


def test_bench_run_writes_a_result_with_the_stable_keys(tmp_path):
    need_broker_built()
    client_or_skip("stomp-py")
    env = {**os.environ, "BURSTBENCH_RESULTS": str(tmp_path)}
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "burstbench.cli",
            "run",
            "--consumers",
            "2",
            "--count",
            "3000",
            "--bursts",
            "3",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300, check=False,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert "recv msg/s: median" in r.stdout and "lost 0" in r.stdout
    latest = tmp_path / "latest"
    doc = json.loads((latest / "points" / "point.json").read_text())
    assert doc["schema_version"] == results.SCHEMA_VERSION and doc["status"] == "ok"
    assert doc["accounting"]["sent"] == 9000 and doc["accounting"]["received"] == 9000
    assert doc["accounting"]["lost"] == 0 and doc["accounting"]["duplicates"] == 0
    for key in ("send_msgs_per_s", "recv_msgs_per_s"):
        assert doc["throughput"][key] > 0
    assert doc["throughput"]["measured_bursts"] == 2  # warm-up excluded
    # an unpaced flood: its figures are time in queue, never called latency
    assert doc["latency_ms"] is None
    tiq = doc["time_in_queue_ms"]
    assert tiq["samples"] == 6000 and 0 <= tiq["p50"] <= tiq["p99"] <= tiq["max"]
    assert doc["broker_witness"]["agrees"] and doc["nonce"]
    assert doc["machine"]["cores"] >= 1 and doc["git_commit"]
    assert doc["versions"]["broker"]["version"] == "6.1.7"
    assert doc["versions"]["clients"]["stomp-py"]["library"].startswith("stomp.py")
    roles = {p["role"] for p in doc["resources"]["processes"]}
    assert roles == {"broker", "producer", "consumer"}
    assert all(p["cpu_s"] > 0 and p["max_rss_mb"] > 0 for p in doc["resources"]["processes"])
    assert (latest / "summary.csv").read_text().count("\n") == 2
    # the tools' formats: the point's interval log (hdrh reads it back, every sample of the
    # time in queue) and the run's OpenMetrics
    from hdrh.histogram import HdrHistogram
    from hdrh.log import HistogramLogReader

    assert doc["histogram_log"]["of"] == "time_in_queue_ms"
    reader = HistogramLogReader(str(latest / "points" / doc["histogram_log"]["file"]),
                                HdrHistogram(1, 3_600_000_000, 3))
    counts = []
    while (h := reader.get_next_interval_histogram()) is not None:
        counts.append(h.get_total_count())
    reader.close()
    assert len(counts) == doc["histogram_log"]["intervals"] >= 1
    assert sum(counts) == tiq["samples"]
    assert (latest / "metrics.prom").read_text().endswith("\n# EOF\n")


def test_a_port_already_taken_is_reported_not_retried(sup, tmp_path):
    need_broker_built()
    import socket
    import time

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        spec = brokers.BrokerSpec(name="busy", openwire_port=port,
                                  stomp_port=brokers.free_port(), ws_port=brokers.free_port())
        t0 = time.monotonic()
        with pytest.raises(brokers.BrokerError, match="in use"):
            brokers.start(sup, spec, tmp_path)
        assert time.monotonic() - t0 < 60


def test_a_stall_leaves_the_java_threads_next_to_the_logs(sup, broker):
    """What a drain stall calls: every live Java process we started dumps its threads."""
    from burstbench.infra.procs import dump_java_threads

    dump_java_threads(sup)
    dump = broker.child.log_path.with_suffix(".threads.txt")
    text = dump.read_text()
    assert "Full thread dump" in text and "ActiveMQ" in text, text[:300]


def test_optimized_dispatch_keeps_every_message_with_every_language(tmp_path, monkeypatch):
    """Queues that dispatch in the waking thread (--optimized-dispatch) and the Java consumer's
    dispatchAsync=false (the broker writes to it from that thread): 4 consumers in 4 languages
    competing on 16 queues, two bursts, exact accounting."""
    need_broker_built()
    for name in ("openwire-jms", "stomp-py", "net-stomp", "stompjs"):
        client_or_skip(name)
    spec = PointSpec(producer=["openwire-jms"], consumer=["openwire-jms", "stomp-py", "net-stomp",
                                                          "stompjs"],
                     consumers=4, queues=16, count=20000, bursts=2, optimized_dispatch=True)
    rendered = []
    real_render = brokers.render
    monkeypatch.setattr(brokers, "render",
                        lambda b: rendered.append(real_render(b)) or rendered[-1])
    out = Runner(spec, tmp_path / "point").run()
    assert len(rendered) == 1 and 'optimizedDispatch="true"' in rendered[0]
    m = metrics(out)
    acc = m["accounting"]
    assert (acc["sent"], acc["received"], acc["lost"], acc["duplicates"]) == (40000, 40000, 0, 0)
    assert all(recs for recs in out.consumer_records.values()), "every consumer gets a share"


def test_the_broker_renders_activemqs_dispatch_default_unless_asked(tmp_path):
    spec = brokers.BrokerSpec(data_dir=tmp_path, openwire_port=1, stomp_port=2, ws_port=3)
    assert 'optimizedDispatch="false"' in brokers.render(spec)
    spec.optimized_dispatch = True
    assert 'optimizedDispatch="true"' in brokers.render(spec)


def test_the_broker_renders_tcp_nodelay_only_when_asked(tmp_path):
    """ActiveMQ as shipped writes no transport.tcpNoDelay; --tcp-nodelay sets it on the
    OpenWire and STOMP connectors (the WebSocket connector has no such option)."""
    spec = brokers.BrokerSpec(data_dir=tmp_path, openwire_port=1, stomp_port=2, ws_port=3)
    assert "tcpNoDelay" not in brokers.render(spec)
    spec.tcp_nodelay = True
    text = brokers.render(spec)
    assert text.count("transport.tcpNoDelay=true") == 2


@pytest.mark.parametrize("tls", [False, True])
def test_the_broker_renders_nio_connectors_when_asked(tmp_path, tls):
    """--transport nio: OpenWire and STOMP on ActiveMQ's selector-based transports, TLS too;
    the WebSocket connector (Jetty's) stays as it is."""
    spec = brokers.BrokerSpec(data_dir=tmp_path, openwire_port=1, stomp_port=2, ws_port=3,
                              tls=object() if tls else None)
    text = brokers.render(spec) if not tls else None
    if not tls:
        assert "nio://" not in text
    spec.transport = "nio"
    uris = {c: brokers.CONNECTOR_SCHEMES[("nio", tls)][i] for i, c in enumerate(("ow", "st"))}
    assert uris == ({"ow": "nio+ssl", "st": "stomp+nio+ssl"} if tls
                    else {"ow": "nio", "st": "stomp+nio"})
    if not tls:  # (a TLS render needs real key material: the point below runs over nio)
        text = brokers.render(spec)
        assert 'uri="nio://127.0.0.1:1?' in text and 'uri="stomp+nio://127.0.0.1:2?' in text
        assert 'uri="ws://127.0.0.1:3?' in text


@pytest.mark.parametrize("tls", [False, True], ids=["plain", "tls"])
def test_a_point_on_nio_connectors_is_exact_for_every_stock_client(tmp_path, tls):
    """--transport nio: the four stock libraries, each as producer and consumer, through a
    real broker whose STOMP and OpenWire connectors are ActiveMQ's NIO ones (its own log
    says where it listens; with --tls, nio+ssl), every message accounted for; the result
    records the transport."""
    need_broker_built()
    names = ["net-stomp", "stomp-py", "stompjs:tcp", "openwire-jms"]
    for name in names:
        client_or_skip(name.split(":")[0])
    spec = PointSpec(producer=names, consumer=names, producers=4, consumers=4, count=500,
                     bursts=2, transport="nio", tls=tls)
    out = Runner(spec, tmp_path / "point").run()
    assert out.status == "ok", out.errors
    assert out.spec.params()["transport"] == "nio"
    acc = metrics(out)["accounting"]
    assert (acc["sent"], acc["received"], acc["lost"], acc["duplicates"]) == (4000, 4000, 0, 0)
    logs = "".join(f.read_text(errors="replace") for f in (tmp_path / "point").rglob("*.log"))
    ssl = r"\+ssl" if tls else ""
    assert re.search(rf"Listening for connections at: nio{ssl}://[\w.]+:\d+\?", logs)
    assert re.search(rf"Listening for connections at: stomp\+nio{ssl}://[\w.]+:\d+\?", logs)


def test_every_client_reports_its_sockets_tcp_nodelay(tmp_path):
    """Each client says in its ready line whether its socket has TCP_NODELAY and how it knows
    (read back with getsockopt, or the library's own setting); the point keeps it per process
    beside the broker's transport.tcpNoDelay."""
    need_broker_built()
    names = ["net-stomp", "stomp-py", "stompjs", "openwire-jms", "akka-bridge"]
    for name in names:
        client_or_skip(name)
    spec = PointSpec(producer=names, consumer=names, producers=5, consumers=5, count=500,
                     bursts=1, tcp_nodelay=True)
    out = Runner(spec, tmp_path / "point").run()
    assert out.status == "ok", out.errors
    assert out.spec.params()["tcp_nodelay"] is True
    procs = [p for p in out.processes if p["role"] in ("producer", "consumer")]
    assert len(procs) == 10
    for p in procs:
        assert isinstance(p["tcp_nodelay"], bool), p
        assert p["tcp_nodelay_how"] in ("getsockopt", "library"), p
    assert metrics(out)["accounting"]["lost"] == 0


def _queue_stats(sup, broker) -> dict:
    """The broker's counters by queue (its ``stats`` line)."""
    st = broker.ask(sup, "stats", "stats")
    assert st is not None, "no stats line"
    return st["queues"]


def test_hold_keeps_each_queue_until_every_one_has_a_consumer(sup, broker, queue_name):
    # what the one-CPU perf rounds rely on: two consumers that subscribe at different times
    # start draining together
    from burstbench.measure import perf
    py = client_or_skip("stomp-py")
    qa, qb = f"{queue_name}.a", f"{queue_name}.b"
    for q in (qa, qb):
        prod = run_client(py, "producer", ["--url", broker.stomp_url, "--destinations", q,
                                           "--count", "20"])
        assert prod.returncode == 0, prod.stderr
    hold = perf.Hold(sup, broker, [qa, qb])
    assert [(e["event"], e["queues"]) for e in hold.events] == [("held", [qa, qb])]

    def consumer(q):
        return subprocess.Popen(py.client.argv("consumer") + [
            "--url", broker.stomp_url, "--destinations", q, "--count", "20", "--id", "c" + q[-1]],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    first = consumer(qa)
    try:
        deadline = time.monotonic() + 60
        while _queue_stats(sup, broker)[qa]["consumers"] < 1:
            assert time.monotonic() < deadline, "the first consumer never subscribed"
            time.sleep(0.1)
        time.sleep(1.0)  # subscribed for a second: the queue still holds all it had
        st = _queue_stats(sup, broker)
        assert (st[qa]["dispatched"], st[qa]["size"]) == (0, 20), st[qa]
        assert [e["event"] for e in hold.events] == ["held"]
        second = consumer(qb)
        outs = [p.communicate(timeout=60) for p in (first, second)]
    finally:
        for p in (first, locals().get("second")):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
    for (out, err), p in zip(outs, (first, second)):
        assert p.returncode == 0, err
        assert events(out)[-1]["received"] == 20
    sup.wait_until(lambda: len(hold.events) > 1, 30, hold.take)
    rel = hold.released()
    assert rel["queues"] == [qa, qb] and rel["held_ms"] >= 1000


def test_hold_names_a_queue_the_broker_does_not_have(sup, broker, queue_name):
    from burstbench.measure import perf
    with pytest.raises(perf.PerfError, match=f"cannot hold {queue_name}: no queue {queue_name}"):
        perf.Hold(sup, broker, [queue_name])
