"""Measure one point and write its result file: the step every command shares."""

from __future__ import annotations

import datetime as dt

from burstbench import clients
from burstbench.errors import PointFailed
from burstbench.infra import procs
from burstbench.infra.procs import Interrupted
from burstbench.measure import live, results
from burstbench.measure.outcome import Outcome, metrics
from burstbench.measure.runner import Runner
from burstbench.measure.spec import PointSpec


def versions(spec: PointSpec, broker_version: str, broker_product: str = "") -> dict:
    from burstbench.infra import brokers

    prods, cons = spec.slots()
    names = sorted({r.client.name for r in (*prods, *cons)})
    product = broker_product or ("unknown" if spec.broker_urls
                                 else brokers.PRODUCTS[spec.broker_kind])
    return {
        "broker": {"name": product, "version": broker_version},
        "clients": {n: clients.version(n) for n in names},
        "runtimes": results.runtimes(),
    }


def measure_point(
    run: results.Run, point_id: str, spec: PointSpec, progress=None, meta: dict | None = None
) -> dict:
    """Run ``spec``, write ``points/<point_id>.json`` whatever happens, and return it; a
    point with a latency or time-in-queue figure also writes ``points/<point_id>.hlog``
    (``results.Run.write_histogram_log``), which the JSON names (``histogram_log``).

    Raises ``PointFailed`` (after writing) when the point failed or lost messages it should
    not have; ``Interrupted`` passes through after the partial result is written with status
    ``incomplete``.
    """
    started = dt.datetime.now().astimezone().isoformat(timespec="seconds")
    runner = Runner(spec, run.dir / "points" / point_id, progress=progress)
    error: BaseException | None = None
    try:
        outcome = runner.run()
    except (PointFailed, OSError, ValueError, RuntimeError, Interrupted, KeyboardInterrupt) as e:
        error = e
        outcome = runner.outcome
    latency_records: list = []
    doc = document(outcome, started, latency_records)
    if meta:
        doc.update(meta)
    if error is not None:
        doc["status"] = (
            "incomplete" if isinstance(error, (Interrupted, KeyboardInterrupt)) else "failed"
        )
    try:
        if (hlog := run.write_histogram_log(point_id, doc, latency_records)) is not None:
            doc["histogram_log"] = hlog
    except OSError as e:
        doc["errors"].append(f"the histogram log was not written: {e}")
        doc["status"] = "failed" if doc["status"] == "ok" else doc["status"]
    doc = run.write_point(point_id, doc)
    live.point_result(point_id, doc)
    if isinstance(error, (Interrupted, KeyboardInterrupt)):
        raise error
    if doc["status"] != "ok":
        raise PointFailed("; ".join(doc["errors"]) or "point failed")
    return doc


def document(outcome: Outcome, started: str, latency_records: list | None = None) -> dict:
    """The point's result document from its outcome (``latency_records``: see ``metrics``)."""
    spec = outcome.spec
    doc = {
        "started": started,
        "status": outcome.status,
        "errors": list(outcome.errors),
        "parameters": spec.params(),
        "nonce": outcome.nonce,
        "wall_s": round(outcome.wall_s, 2),
    }
    try:
        doc["versions"] = versions(spec, outcome.broker_version, outcome.broker_product)
    except ValueError as e:  # unknown client: the point never started
        doc["versions"] = {"error": str(e)}
    if outcome.producer_records or outcome.consumer_records:
        m = metrics(outcome, latency_records)
        doc.update(m)
        acc = m["accounting"]
        if acc["lost"] and not spec.expect_loss:
            doc["errors"].append(
                f"{acc['lost']} of {acc['sent']} messages lost "
                f"(e.g. {', '.join(acc['lost_sample'][:3])})"
            )
        if acc["duplicates"] and not spec.expect_duplicates:
            doc["errors"].append(
                f"{acc['duplicates']} message(s) delivered twice (this point expects each "
                "message exactly once)")
        if acc["corrupt"]:
            kinds = ", ".join(f"{n:,} {k}" for k, n in acc["corrupt_kinds"].items())
            doc["errors"].append(f"{acc['corrupt']:,} corrupt record(s): {kinds} "
                                 f"(e.g. {', '.join(acc['corrupt_sample'][:3])})")
        w = m["broker_witness"]
        if w.get("available") and w["problems"] and not spec.expect_loss:
            doc["errors"].append("the brokers' counters disagree: " + "; ".join(w["problems"]))
        if doc["errors"] and doc["status"] == "ok":
            doc["status"] = "failed"
    # SSH hosts: where each host was, and its clock (burstbench/infra/clocks.py)
    if outcome.hosts:
        doc["hosts"] = outcome.hosts
        doc["clocks"] = clock_verdict(outcome.clocks, doc)
    doc["resources"] = {
        "processes": outcome.processes,
        "broker_store_bytes": outcome.store_bytes,
        "per_burst_cpu_share": outcome.burst_cpu,
        "limits": procs.limits(),
        "external_brokers": outcome.external or None,
    }
    if outcome.connections is not None:
        doc["connections"] = outcome.connections
    if outcome.flow_control:
        doc["flow_control"] = outcome.flow_control
    if outcome.connect:
        doc["connect"] = outcome.connect
    return doc


def clock_verdict(clocks: dict, doc: dict) -> dict:
    """The clocks' section of a point over SSH hosts, saying whether the cross-host
    uncertainty exceeds the p50 it stands beside (then that p50 says little)."""
    out = dict(clocks)
    unc = clocks.get("cross_host_uncertainty_ns")
    lat = doc.get("latency_ms") or doc.get("time_in_queue_ms") or {}
    p50 = lat.get("p50")
    out["cross_host_uncertainty_ms"] = None if unc is None else unc / 1e6
    out["exceeds_p50"] = bool(unc is not None and p50 is not None and unc / 1e6 > p50)
    return out
