"""A run's tables: ``summary.csv`` (one row per point: every parameter, every headline) and
``metrics.prom`` (the points' figures in OpenMetrics text, in seconds), from the points'
documents. summary.csv's columns only ever grow at the end (``SUMMARY_COLUMNS``)."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

SUMMARY_COLUMNS = [
    "point",
    "status",
    "label",
    "producer",
    "consumer",
    "producers",
    "consumers",
    "count",
    "size",
    "queues",
    "persistence",
    "topology",
    "persistent",
    "ack",
    "throughput.send_msgs_per_s",
    "throughput.recv_msgs_per_s",
    "throughput.recv_min",
    "throughput.recv_max",
    "throughput.measured_bursts",
    "throughput.measured_windows",
    "latency_ms.samples",
    "latency_ms.p50",
    "latency_ms.p99",
    "latency_ms.max",
    "accounting.sent",
    "accounting.received",
    "accounting.lost",
    "accounting.duplicates",
    "busiest.process",
    "busiest.cpu_share",
    # appended (readers of the columns above are unaffected): the broker that ran, how the
    # point was paced and secured, where its hosts were, its tail, and whether it kept up
    "broker",
    "versions.broker.name",
    "versions.broker.version",
    "rate",
    "duration",
    "warmup",
    "tls",
    "auth",
    "tcp_nodelay",
    "hosts",
    "latency_ms.p99_9",
    "sustained.keeps_up",
    # appended: the rest of the point's parameters (PointSpec.params(); test_result_formats
    # fails on one without a column) and the rest of its headline figures: the send spread,
    # the whole tail, a flood's time in queue, every accounting counter, the brokers'
    # verdict, the machine, and the point's .hlog
    "bursts",
    "prefetch",
    "tx_batch",
    "discovery",
    "placement",
    "link_rate",
    "producer_flow_control",
    "optimized_dispatch",
    "cpus_broker",
    "cpus_clients",
    "broker_urls",
    "broker_admin",
    "admin_user",
    "admin_password_file",
    "user",
    "password_file",
    "ca",
    "cert",
    "key",
    "browser",
    "expect_loss",
    "expect_duplicates",
    "throughput.send_min",
    "throughput.send_max",
    "throughput.recv_kib_per_s",
    "latency_ms.p90",
    "latency_ms.p99_99",
    "latency_ms.min",
    "latency_ms.mean",
    "time_in_queue_ms.samples",
    "time_in_queue_ms.p50",
    "time_in_queue_ms.p90",
    "time_in_queue_ms.p99",
    "time_in_queue_ms.p99_9",
    "time_in_queue_ms.p99_99",
    "time_in_queue_ms.max",
    "time_in_queue_ms.min",
    "time_in_queue_ms.mean",
    "accounting.out_of_order",
    "accounting.foreign",
    "accounting.redelivered",
    "accounting.corrupt",
    "broker_witness.agrees",
    "busiest.machine_busy_cores",
    "busiest.machine_saturated",
    "sustained.recv_share_of_send",
    "sustained.backlog_growth",
    "histogram_log.file",
    # appended: a sustained point's p99 as its charts draw it, the median over its measured
    # 1-s windows with their min and max
    "sustained.steady.p99_ms.median",
    "sustained.steady.p99_ms.min",
    "sustained.steady.p99_ms.max",
    # appended: the Classic broker's connectors (tcp or nio)
    "transport",
    # appended: connections per client process, the connect phase and what a connection
    # cost the brokers the harness started (burstbench/measure/runner.py _connect_figures)
    "connections_per_process",
    "connect.consumers_ready_s",
    "connect.producers_ready_s",
    "connect.broker_rss_kib_per_connection",
    "connect.broker_threads_per_connection",
    "connect_timeout",
    # appended: where a paced point's time goes at p99 (burstbench/measure/sustained.py _hops)
    "sustained.hops_ms.producer_late.p99",
    "sustained.hops_ms.handed_over_to_received.p99",
]


def get(doc: dict, dotted: str):
    cur = doc
    for part in dotted.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


def _cell(v) -> str:
    """One value as summary.csv and metrics.prom's labels write it: a list comma-joined, a
    dict as compact JSON, a float to 6 significant digits, nothing as ''."""
    if isinstance(v, list):
        v = ",".join(map(str, v))
    elif isinstance(v, dict):
        v = json.dumps(v, sort_keys=True, separators=(",", ":")) if v else ""
    elif isinstance(v, float):
        v = f"{v:.6g}"
    return "" if v is None else str(v)


def _column(doc: dict, col: str):
    if col in ("point", "status"):
        return doc.get(col)
    if "." in col:
        return get(doc, col)
    return (doc.get("parameters") or {}).get(col)


def write_csv(path: Path, points: list[dict]) -> None:
    """``summary.csv``: the header ``SUMMARY_COLUMNS``, then a row per point."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(SUMMARY_COLUMNS)
        for doc in points:
            w.writerow([_cell(_column(doc, col)) for col in SUMMARY_COLUMNS])


# metrics.prom's labels: the run, the point and its parameters (PointSpec.params() keys)
PROM_LABELS = ("run", "point", "label", "producer", "consumer", "producers", "consumers",
               "count", "bursts", "size", "queues", "persistence", "persistent", "topology",
               "ack", "prefetch", "tx_batch", "broker", "broker_version", "rate", "duration",
               "warmup", "tls", "auth", "hosts")
PROM_QUANTILES = (("0.5", "p50"), ("0.99", "p99"), ("0.999", "p99_9"))


def _om_escape(value: str) -> str:
    """A label value as OpenMetrics writes it: backslash, double quote and newline escaped."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _om_number(v) -> str:
    return str(v) if isinstance(v, int) and not isinstance(v, bool) else repr(float(v))


def openmetrics(points: list[dict], run_id: str) -> str:
    """The points' figures in the OpenMetrics text format: whether each point passed, its
    send and receive rates (msg/s), its latency, or a flood's time in queue, as a summary
    (p50, p99, p99.9, count, sum) and a max gauge, in seconds, and the accounting's sent,
    received, lost and duplicates as counters; one sample per point and figure, labelled
    with the run, the point and its parameters (``PROM_LABELS``). A figure the point does
    not have (null: a failed point, a flood's latency, a percentile with too few samples)
    has no sample."""
    out: list[str] = []
    labels = {id(d): _om_labels(d, run_id) for d in points}

    def family(name: str, kind: str, text: str, unit: str = "") -> None:
        out.append(f"# TYPE {name} {kind}")
        if unit:
            out.append(f"# UNIT {name} {unit}")
        out.append(f"# HELP {name} {text}")

    def sample(name: str, doc: dict, value, extra: tuple = ()) -> None:
        if value is None or (isinstance(value, float) and not math.isfinite(value)):
            return
        pairs = ",".join(f'{k}="{_om_escape(v)}"' for k, v in (*labels[id(doc)], *extra))
        out.append(f"{name}{{{pairs}}} {_om_number(value)}")

    family("burstbench_point_ok", "gauge",
           "1 when the point passed, 0 when it failed, was skipped or is incomplete")
    for d in points:
        sample("burstbench_point_ok", d, int(d.get("status") == "ok"))
    for side, key in (("send", "send_msgs_per_s"), ("receive", "recv_msgs_per_s")):
        name = f"burstbench_{side}_messages_per_second"
        family(name, "gauge", f"median {side} rate over the measured bursts (or the steady "
                              "state's windows), messages per second, all clients together")
        for d in points:
            sample(name, d, get(d, f"throughput.{key}"))
    for key, name, what in (
        ("latency_ms", "latency", "latency (receive - intended send) of a paced point"),
        ("time_in_queue_ms", "time_in_queue",
         "time in queue (receive - send) of an unpaced flood, not latency"),
    ):
        family(f"burstbench_{name}_seconds", "summary",
               f"{what}: HdrHistogram percentiles over the measured bursts (or window)",
               "seconds")
        for d in points:
            lat = d.get(key) or {}
            for q, k in PROM_QUANTILES:
                sample(f"burstbench_{name}_seconds", d, _seconds(lat.get(k)), (("quantile", q),))
            if lat:
                sample(f"burstbench_{name}_seconds_count", d, lat.get("samples"))
            if lat.get("samples") and lat.get("mean") is not None and lat["mean"] >= 0:
                sample(f"burstbench_{name}_seconds_sum", d, lat["mean"] * lat["samples"] / 1000)
        family(f"burstbench_{name}_max_seconds", "gauge", f"the largest {what}", "seconds")
        for d in points:
            sample(f"burstbench_{name}_max_seconds", d, _seconds(get(d, f"{key}.max")))
    for key, name, what in (("sent", "messages_sent", "messages the producers sent"),
                            ("received", "messages_received", "distinct messages received"),
                            ("lost", "messages_lost", "messages sent and never received"),
                            ("duplicates", "duplicates",
                             "deliveries of a message already received")):
        family(f"burstbench_{name}", "counter", f"{what}, over the whole point")
        for d in points:
            sample(f"burstbench_{name}_total", d, get(d, f"accounting.{key}"))
    out.append("# EOF")
    return "\n".join(out) + "\n"


def _seconds(ms):
    return None if ms is None else ms / 1000


def _om_labels(doc: dict, run_id: str) -> list[tuple[str, str]]:
    params = doc.get("parameters") or {}
    special = {"run": run_id, "point": doc.get("point"),
               "broker_version": get(doc, "versions.broker.version")}
    return [(k, _cell(special[k] if k in special else params.get(k))) for k in PROM_LABELS]


def write_openmetrics(path: Path, points: list[dict], run_id: str) -> Path:
    """Write ``metrics.prom`` (``openmetrics``) at ``path``, whole or not at all."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(openmetrics(points, run_id))
    tmp.replace(path)
    return path
