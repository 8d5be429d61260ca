"""A calibration point, so that runs on different machines (or one machine on a busy day)
compare: a fixed reference measured at the start of a run and recorded in it.

Two references: the stock Java pair draining 6-byte messages (a real broker point, written as
``points/calibration.json`` and judged like any other), and a short CPU-bound loop in the
harness's own process (CRC-32 over a fixed buffer, then a plain-Python sum: one core's speed,
without the broker). Both go into the run's manifest (``calibration``), with their spread.
``./bench compare --calibrated`` then divides each run's figures by its own reference rate
and says when the two references differ by more than their spread.
"""

from __future__ import annotations

import math
import statistics
import sys
import time
import zlib

from burstbench.errors import PointFailed
from burstbench.measure import results
from burstbench.measure.spec import PointSpec

POINT = "calibration"
REPETITIONS = 5


def reference_spec() -> PointSpec:
    """The fixed reference point: stock JMS pair, one consumer, 6 B, 4 bursts of 20,000."""
    return PointSpec(
        producer=["openwire-jms"],
        consumer=["openwire-jms"],
        consumers=1,
        count=20000,
        size=6,
        bursts=4,
        label="calibration",
    )


def cpu_loop(repetitions: int = REPETITIONS) -> dict:
    """A fixed CPU-bound workload, timed ``repetitions`` times: loops per second with spread."""
    buf = bytes(range(256)) * 4096  # 1 MiB

    def once() -> float:
        t = time.perf_counter()
        c = 0
        for _ in range(40):
            c = zlib.crc32(buf, c)
        s = 0
        for i in range(400_000):
            s += i * i % 7
        return time.perf_counter() - t

    once()  # warm-up
    rates = [1.0 / once() for _ in range(repetitions)]
    return {
        "loops_per_s": statistics.median(rates),
        "min": min(rates),
        "max": max(rates),
        "n": len(rates),
        "what": "40 x CRC-32 of 1 MiB + a 400,000-step Python loop",
    }


def measure(run: results.Run, progress=None) -> dict:
    """Measure both references into ``run`` (point file and manifest); returns the record.
    A failed reference is recorded as failed, never as a figure."""
    from burstbench.measure.points import measure_point

    say = progress or (lambda m: print(m, file=sys.stderr, flush=True))
    say("calibration: the CPU loop, then the reference point (openwire-jms pair, 6 B)")
    cpu = cpu_loop()
    try:
        doc = measure_point(run, POINT, reference_spec(), meta={"calibration": True})
    except PointFailed:
        doc = results.load_point(run.point_path(POINT))
    t = doc.get("throughput") or {}
    ok = doc.get("status") == "ok" and isinstance(t.get("recv_msgs_per_s"), (int, float))
    record = {
        "point": POINT,
        "status": doc.get("status"),
        "reference": {
            "recv_msgs_per_s": t.get("recv_msgs_per_s"),
            "min": t.get("recv_min"),
            "max": t.get("recv_max"),
            "bursts": t.get("measured_bursts"),
        }
        if ok
        else None,
        "cpu": cpu,
    }
    run.manifest["calibration"] = record
    run._save_manifest()
    ref = record["reference"]
    say(
        f"calibration: reference {ref['recv_msgs_per_s']:,.0f} msg/s (min {ref['min']:,.0f}, "
        f"max {ref['max']:,.0f}); CPU loop {cpu['loops_per_s']:.2f}/s"
        if ref
        else f"calibration: the reference point {doc.get('status')}: "
        f"{(doc.get('errors') or ['?'])[0]}"
    )
    return record


def of_run(manifest: dict) -> dict | None:
    """The run's reference (median, min, max receive msg/s), or None."""
    return ((manifest.get("calibration") or {}).get("reference")) or None


def differ(a: dict, b: dict) -> bool:
    """Whether two references differ beyond their spread (neither median inside the other's
    min-max)."""
    return not (
        a["min"] <= b["recv_msgs_per_s"] <= a["max"] or b["min"] <= a["recv_msgs_per_s"] <= b["max"]
    )


def scale(value, ref: dict | None):
    """``value`` as a fraction of the reference's median receive rate."""
    if value is None or not ref or not ref.get("recv_msgs_per_s"):
        return None
    return value / ref["recv_msgs_per_s"] if not math.isnan(value) else math.nan
