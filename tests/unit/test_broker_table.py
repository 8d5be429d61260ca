"""The README's Classic-vs-Artemis table, from a run's broker axes (plots.charts.broker_table)."""

from __future__ import annotations

from burstbench.plots.charts import broker_table


def _point(kind: str, pair: str, *, recv=None, p99=None, windows=None, status="ok") -> dict:
    name, version = {"classic": ("ActiveMQ Classic", "6.1.7"),
                     "artemis": ("ActiveMQ Artemis", "2.44.0")}[kind]
    doc = {"status": status, "errors": [] if status == "ok" else ["broker a exited: boom"],
           "parameters": {"broker": kind, "rate": 1000.0 if p99 is not None else 0.0},
           "versions": {"broker": {"name": name, "version": version}},
           "sweep": {"series": pair, "x": kind}}
    doc["throughput"] = {"recv_msgs_per_s": 1000.0}
    if recv is not None:
        doc["throughput"] = {"recv_msgs_per_s": recv, "recv_min": recv - 100,
                             "recv_max": recv + 50}
    if p99 is not None:  # the whole period's p99, and each measured 1-s window's
        doc["latency_ms"] = {"p99": p99}
        doc["sustained"] = {"windows": {"1s": [
            {"measured": False, "latency_ms": {"p99": 999.0}},
            *({"measured": True, "latency_ms": {"p99": w}} for w in (windows or [p99]))]}}
    return doc


def test_a_row_per_pair_with_each_brokers_rate_and_paced_p99():
    flood = [_point("classic", "stomp-py", recv=8000.0),
             _point("artemis", "stomp-py", recv=6500.0),
             _point("classic", "net-stomp", recv=5000.0),
             _point("artemis", "net-stomp", status="failed")]
    # a window without the samples for a p99 (None) is left out; the warm-up's never counts
    paced = [_point("classic", "stomp-py", p99=9.9, windows=[3.0, 2.1, None, 2.5]),
             _point("artemis", "stomp-py", p99=4.25)]
    text = broker_table({"broker": flood, "broker-paced": paced},
                        {"broker": "by-broker", "broker-paced": "latency-by-broker"})
    lines = text.splitlines()
    assert lines[0] == ("| pair | receive msg/s, ActiveMQ Classic 6.1.7 | receive msg/s, "
                        "ActiveMQ Artemis 2.44.0 | p99 ms at 1,000 msg/s, ActiveMQ Classic "
                        "6.1.7 | p99 ms at 1,000 msg/s, ActiveMQ Artemis 2.44.0 |")
    assert lines[2].startswith("| net-stomp | 5,000 (4,900-5,050) | failed")
    assert lines[2].endswith("| - | - |")
    assert lines[3] == ("| stomp-py | 8,000 (7,900-8,050) | 6,500 (6,400-6,550) | "
                        "2.5 (2.1-3.0) | 4.2 (4.2-4.2) |")


def test_no_broker_axis_no_table():
    assert broker_table({"size": [_point("classic", "x", recv=1.0)]}, {"size": "by-size"}) == ""
