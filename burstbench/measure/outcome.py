"""What a point produced (``Outcome``: raw records, per-process usage, the burst timeline)
and the figures made from it (``metrics``: throughput, latency, accounting, the busiest
process, the brokers' witness)."""

from __future__ import annotations

import math
import os
import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path

from burstbench import stats
from burstbench.measure import measure
from burstbench.measure.spec import PointSpec


@dataclass
class Outcome:
    """What a point produced: raw records, per-process usage and the burst timeline."""

    spec: PointSpec
    point_dir: Path
    broker_version: str = ""
    broker_product: str = ""
    status: str = "ok"
    errors: list[str] = field(default_factory=list)
    producer_records: list = field(default_factory=list)
    consumer_records: dict = field(default_factory=dict)
    foreign_reported: int = 0
    processes: list[dict] = field(default_factory=list)
    burst_cpu: list[dict] = field(default_factory=list)
    store_bytes: int = 0
    wall_s: float = 0.0
    namespaces: list[str] = field(default_factory=list)
    external: dict = field(default_factory=dict)
    confirmed: dict = field(default_factory=dict)  # burst -> when every producer had its receipt
    # the brokers' own counters for the run's queues, after each burst, on a stall and at the
    # end: [{"at": "burst 0" | "stall" | "end", "brokers": {name: {"queues", "bridges"}}}]
    broker_counts: list[dict] = field(default_factory=list)
    nonce: str | None = None  # this point's run nonce: every message it sends carries it
    # sustained mode: when each message was handed to its library (the records' actual_ns),
    # and the brokers' summed counters read once a second
    send_actual: list = field(default_factory=list)
    samples: list[dict] = field(default_factory=list)
    # SSH hosts (--hosts netns-ssh or FILE): the inventory, and each host's clock offset and
    # its uncertainty over the point (burstbench/infra/clocks.py)
    hosts: dict = field(default_factory=dict)
    clocks: dict = field(default_factory=dict)
    # what the clients' connections used (schemes, TLS, a login, which trust): the URLs they
    # were given, not the flags (burstbench/infra/outside.py connections)
    connections: dict | None = None
    client_urls: set = field(default_factory=set)
    # what each consumer may hold, as it was told (PointSpec.flow_control)
    flow_control: dict = field(default_factory=dict)
    # how long the clients took to connect, and what the brokers the harness started held
    # before and once they were all connected (burstbench/measure/runner.py _start_clients)
    connect: dict = field(default_factory=dict)


def metrics(outcome: Outcome, latency_records: list | None = None) -> dict:
    """Turn an outcome's records into the result file's metrics and accounting.
    ``latency_records``, when given, receives the records behind the latency (or time in
    queue) figures."""
    spec = outcome.spec
    sent = outcome.producer_records
    # foreign and corrupt records are never throughput or latency: only the ones kept count
    kept: list = []
    acc = measure.account(sent, outcome.consumer_records, outcome.foreign_reported, spec.size,
                          nonce=outcome.nonce, kept=kept)
    all_received = kept
    clean_ids = {id(r) for r in all_received}
    by_consumer = {name: [r for r in recs if id(r) in clean_ids]
                   for name, recs in outcome.consumer_records.items()}
    bursts = measure.per_burst(sent, all_received, outcome.confirmed)
    counted = measure.measured(bursts)
    counted_ids = {b.burst for b in counted}
    send = stats.spread([b.send_msgs_per_s for b in counted])
    recv = stats.spread([b.recv_msgs_per_s for b in counted])
    busiest = _busiest(outcome, counted_ids)
    extra = {}
    if spec.duration:
        from burstbench.measure import sustained
        extra = sustained.figures(spec, sent, outcome.send_actual, by_consumer, outcome.samples,
                                  latency_records)
        lat = extra.pop("latency")
        st = extra["sustained"]["steady"]
        send = {**send, **{k: st["send_msgs_per_s"][k] for k in ("median", "min", "max")}}
        recv = {**recv, **{k: st["recv_msgs_per_s"][k] for k in ("median", "min", "max")},
                "n": st["recv_msgs_per_s"]["windows"]}
    else:
        lat = measure.latency_ms(by_consumer, counted_ids, latency_records)
    return {
        "throughput": {
            "send_msgs_per_s": send["median"],
            "send_min": send["min"],
            "send_max": send["max"],
            "recv_msgs_per_s": recv["median"],
            "recv_min": recv["min"],
            "recv_max": recv["max"],
            "recv_kib_per_s": recv["median"] * spec.size / 1024 if recv["n"] else math.nan,
            "measured_bursts": 0 if spec.duration else recv["n"],
            **({"measured_windows": recv["n"]} if spec.duration else {}),
            "warmup_excluded": len(bursts) > 1 or bool(spec.duration and spec.warmup),
        },
        **extra,
        "bursts": [asdict(b) for b in bursts],
        # latency means latency only under a paced load; a flood's figure is time in queue
        **({"latency_ms": lat, "time_in_queue_ms": None} if spec.rate
           else {"latency_ms": None, "time_in_queue_ms": lat}),
        "accounting": acc.as_dict(),
        "busiest": busiest,
        "broker_witness": _witness_of(outcome, acc),
    }


def _witness_of(outcome: Outcome, acc: measure.Accounting) -> dict:
    """The brokers' counters at the end beside the accounting, and every reading taken."""
    sources = {n: e.get("witness", "none") for n, e in outcome.external.items()}
    blind = sorted(n for n, s in sources.items() if s == "none")
    if blind:
        return {"available": False, "sources": sources,
                "why": f"no second witness: broker {', '.join(blind)} offers neither Jolokia "
                       "(--broker-admin) nor the statistics plugin; the clients' exact "
                       "accounting alone decides", "readings": []}
    end = next((c["brokers"] for c in reversed(outcome.broker_counts) if c["at"] == "end"), None)
    if end is None:
        return {"available": False, "sources": sources or None,
                "why": "the point ended before the brokers were read",
                "readings": outcome.broker_counts}
    sources = {n: sources.get(n, "launcher") for n in end}
    return {"available": True, "sources": sources, **measure.witness(end, acc),
            "readings": outcome.broker_counts}


def _busiest(outcome: Outcome, counted: set[int]) -> dict:
    """The process with the highest CPU share (1.0 = one core) over the measured bursts, and
    the whole machine beside it: the processes the point started, the harness itself, and
    what the machine as a whole was busy with. When the machine is busy on (nearly) every
    core the figure is bounded by the machine, whatever one process shows."""
    shares: dict[str, list[float]] = {}
    bursts = [b for b in outcome.burst_cpu if b["burst"] in counted]
    for b in bursts:
        for name, s in b["cpu_share"].items():
            shares.setdefault(name, []).append(s)
    if not shares:
        return {}
    name, vals = max(shares.items(), key=lambda kv: sum(kv[1]) / len(kv[1]))
    share = sum(vals) / len(vals)
    ours = statistics.fmean(sum(b["cpu_share"].values()) + b.get("harness_share", 0)
                            for b in bursts)
    machine = [b["machine_busy_cores"] for b in bursts
               if not math.isnan(b.get("machine_busy_cores", math.nan))]
    busy = statistics.fmean(machine) if machine else math.nan
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"process": name, "cpu_share": round(share, 2), "cpu_bound": share >= 0.9,
            "point_processes_and_harness_cores": round(ours, 2),
            "harness_cores": round(statistics.fmean(b.get("harness_share", 0) for b in bursts),
                                   2),
            "machine_busy_cores": round(busy, 2), "cores": cores,
            "machine_saturated": bool(busy >= 0.9 * cores)}
