"""The maximum sustainable rate: sustained probes at rising offered rates.

A probe is an ordinary sustained point (burstbench/measure/sustained.py) with its own result file.
The first floods (``--rate max``) and gives the rate the pair drains at, R. Then offered rates of
25, 50, 75, 90, 100 and 110% of R follow, upwards until the first probe that does not hold
(halving below 25% while none holds, down to R/16), and two bisections between the last that
held and the first that did not. A probe **holds**
when it finished ok, kept up (receive >= 98% of send over its measured windows and a backlog
that grew by at most one second of the offered rate) and its p99 latency is at most the
bound. The maximum sustainable rate is the highest offered rate that held. A probe at a low
rate measures long enough for its p99 to have the samples it needs.

Every probe stays a point of the run (``<axis>-<series>-rate=N``), so the hockey stick
(offered vs received, p50/p99/p99.9 vs offered) is drawn from result files alone
(burstbench.plots.latency.chart_find_max); ``find-max.json`` in the run keeps each axis's and
series' verdict, keyed ``AXIS/SERIES`` (a profile may search the same series twice, e.g. with and
without ``--tcp-nodelay``).
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys

from burstbench.errors import PointFailed
from burstbench.measure import results
from burstbench.measure.measure import samples_needed
from burstbench.measure.spec import PointSpec

FRACTIONS = (0.25, 0.5, 0.75, 0.9, 1.0, 1.1)
BISECTIONS = 2
DEFAULT_DURATION = 10.0  # seconds measured per probe when the spec has none
# Every probe starts fresh processes, the broker's JVM among them. A fresh JVM runs its first
# seconds interpreted and compiling (docs/sustained.md#p99-tail: the Java pair at 7,443 msg/s
# built a backlog of 7,500 messages and 1 s latencies in its first 5 s, with no GC or safepoint
# pause near its stalls), so the warm-up outlasts that.
DEFAULT_WARMUP = 10.0


def holds(doc: dict, bound_ms: float) -> tuple[bool, str]:
    """Whether a probe's result holds the offered rate, and why not."""
    if doc.get("status") != "ok":
        errors = doc.get("errors") or ["no result"]
        return False, f"{doc.get('status', 'failed')}: {errors[0][:80]}"
    s = doc.get("sustained") or {}
    if not s.get("keeps_up"):
        return False, (
            f"falls behind (receive/send {s.get('recv_share_of_send', math.nan):.3f}, "
            f"backlog growth {s.get('backlog_growth')})"
        )
    p99 = (doc.get("latency_ms") or {}).get("p99")
    if p99 is None:
        return False, "too few samples for a p99"
    if p99 > bound_ms:
        return False, f"p99 {p99:.1f} ms > {bound_ms:g} ms"
    return True, f"p99 {p99:.2f} ms"


def search(
    run: results.Run,
    base: PointSpec,
    series: str,
    bound_ms: float,
    axis: str = "find-max",
    measure=None,
    say=None,
) -> dict:
    """Probe ``base`` (its clients, sizes, duration) at rising rates; returns the series'
    verdict and writes every probe as a point of ``run``. ``measure(run, id, spec, meta)``
    returns a probe's result document (tests pass their own; by default measure_point)."""
    if measure is None:
        measure = _measure
    say = say or (lambda msg: print(msg, file=sys.stderr, flush=True))
    spec0 = dataclasses.replace(
        base,
        duration=base.duration or DEFAULT_DURATION,
        warmup=base.warmup if base.duration else DEFAULT_WARMUP,
    )
    producers = spec0.producers
    probes: list[dict] = []

    def probe(total: float) -> dict:
        rate = round(total / producers, 1) if total else 0.0
        # long enough at a low rate for the p99 to have its samples
        # (burstbench.measure.measure.samples_needed)
        need = math.ceil(samples_needed(99.0) * 1.1 / total) if total else 0
        spec = dataclasses.replace(
            spec0, rate=rate, label=series, duration=max(spec0.duration, need)
        )
        pid = results.safe_name(f"{axis}-{series}-rate={round(total) if total else 'max'}")
        meta = {
            "sweep": {
                "axis": axis,
                "series": series,
                "x": round(rate * producers) or "max",
                "kind": "find-max",
                "p99_bound_ms": bound_ms,
            }
        }
        doc = measure(run, pid, spec, meta)
        ok, why = holds(doc, bound_ms) if total else (doc.get("status") == "ok", "flood")
        t = doc.get("throughput") or {}
        p = {
            "point": pid,
            "offered": round(rate * producers, 1),
            "holds": ok,
            "why": why,
            "status": doc.get("status"),
            "recv_msgs_per_s": t.get("recv_msgs_per_s"),
            "p99_ms": (doc.get("latency_ms") or {}).get("p99"),
        }
        probes.append(p)
        say(
            f"  [{series}] offered {'max' if not total else f'{total:,.0f}'} msg/s: "
            f"received {_rate(p['recv_msgs_per_s'])} msg/s, "
            f"{'holds' if ok else 'does not hold'} ({why})"
        )
        return p

    flood = probe(0.0)
    peak = flood["recv_msgs_per_s"]
    verdict = {
        "axis": axis,
        "series": series,
        "p99_bound_ms": bound_ms,
        "probes": probes,
        "duration_s": spec0.duration,
        "warmup_s": spec0.warmup,
        "flood_recv_msgs_per_s": peak,
        "max_sustainable_msgs_per_s": None,
    }
    if flood["status"] != "ok" or not peak or math.isnan(peak):
        verdict["why"] = "the flood probe gave no rate: " + flood["why"]
        return verdict
    good = bad = None
    for f in FRACTIONS:
        p = probe(round(peak * f))
        if p["holds"]:
            good = p["offered"]
        else:
            bad = p["offered"]
            break
    lower = peak * FRACTIONS[0]
    while good is None and lower > peak / 16:  # not even a quarter held: halve downwards
        lower /= 2
        p = probe(round(lower))
        if p["holds"]:
            good = p["offered"]
        else:
            bad = p["offered"]
    for _ in range(BISECTIONS if good and bad else 0):
        mid = round((good + bad) / 2)
        if abs(bad - good) < max(1.0, 0.02 * good):
            break
        p = probe(mid)
        if p["holds"]:
            good = mid
        else:
            bad = mid
    verdict["max_sustainable_msgs_per_s"] = good
    verdict["first_that_did_not_hold"] = bad
    if good is None:
        verdict["why"] = "not even 1/16 of the flood rate held"
    return verdict


def _measure(run, pid, spec, meta) -> dict:
    from burstbench.measure.points import measure_point

    try:
        return measure_point(run, pid, spec, meta=meta)
    except PointFailed:
        return results.load_point(run.point_path(pid))


def _rate(v) -> str:
    return "-" if not isinstance(v, (int, float)) or math.isnan(v) else f"{v:,.0f}"


def save(run: results.Run, verdicts: list[dict]) -> None:
    """find-max.json: every axis's and series' verdict, ``AXIS/SERIES`` -> verdict (appended to
    what an earlier call wrote)."""
    path = run.dir / "find-max.json"
    have = json.loads(path.read_text()) if path.exists() else {}
    have.update({f"{v['axis']}/{v['series']}": v for v in verdicts})
    path.write_text(json.dumps(results.json_safe(have), indent=2))


def table(verdict: dict) -> str:
    lines = [
        (
            f"maximum sustainable rate, {verdict['series']} ({verdict['warmup_s']:g} s warm-up "
            f"+ {verdict['duration_s']:g} s per probe, p99 bound {verdict['p99_bound_ms']:g} ms):"
        ),
        "     offered    received   p99 ms   verdict",
    ]
    for p in sorted(verdict["probes"], key=lambda p: p["offered"] or math.inf):
        p99 = p["p99_ms"]
        lines.append(
            f"  {'max' if not p['offered'] else _rate(p['offered']):>10} "
            f"{_rate(p['recv_msgs_per_s']):>11} "
            f"{('-' if p99 is None else f'{p99:.2f}'):>8}   "
            f"{'holds' if p['holds'] else 'no'}: {p['why']}"
        )
    best = verdict["max_sustainable_msgs_per_s"]
    lines.append(
        f"  maximum sustainable: {_rate(best)} msg/s"
        if best
        else f"  maximum sustainable: none found ({verdict.get('why', '')})"
    )
    return "\n".join(lines)
