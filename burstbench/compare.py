"""``./bench compare RUN_A RUN_B``: per-point ratios, and regressions beyond the spread.

A difference is *significant* when the two runs' min-max ranges over their measured bursts
do not overlap. A *regression* is a significant drop of B's median receive rate below A's by
more than ``--threshold`` percent (or a rise of p99 latency by more than that); any regression
makes the exit code 1.

``--calibrated`` divides each run's receive figures (median, min, max) by its own calibration
reference (burstbench/measure/calibration.py) before comparing, and says whether the two references
differ beyond their spread.
"""

from __future__ import annotations

import sys

from burstbench import stats
from burstbench.measure import results


def _t(doc, key):
    return (doc.get("throughput") or {}).get(key)


def _calibrated(points: list[dict], ref: dict) -> list[dict]:
    """Copies of the points whose receive figures are fractions of the run's reference."""
    from burstbench.measure.calibration import scale

    out = []
    for p in points:
        t = dict(p.get("throughput") or {})
        for k in ("recv_msgs_per_s", "recv_min", "recv_max"):
            t[k] = scale(t.get(k), ref)
        out.append({**p, "throughput": t})
    return out


def compare(run_a, run_b, threshold: float, out=None, calibrated: bool = False) -> int:
    out = out or sys.stdout
    a_run, b_run = results.load_run(run_a), results.load_run(run_b)
    man_a, a_points = a_run.manifest, a_run.points
    man_b, b_points = b_run.manifest, b_run.points
    unit = "recv/s"
    if calibrated:
        from burstbench.measure import calibration

        refs = []
        for run, man in ((run_a, man_a), (run_b, man_b)):
            ref = calibration.of_run(man)
            if not ref:
                print(
                    f"bench compare: error: run {run.name} has no calibration reference "
                    "(a sweep records one; ./bench run --calibrate)",
                    file=sys.stderr,
                )
                return 2
            refs.append(ref)
        ra, rb = refs
        cpu = [(m.get("calibration") or {}).get("cpu") or {} for m in (man_a, man_b)]
        print(
            f"references: A {ra['recv_msgs_per_s']:,.0f} msg/s ({ra['min']:,.0f}-"
            f"{ra['max']:,.0f}), B {rb['recv_msgs_per_s']:,.0f} ({rb['min']:,.0f}-"
            f"{rb['max']:,.0f}), B/A {rb['recv_msgs_per_s'] / ra['recv_msgs_per_s']:.2f}: "
            + (
                "they differ beyond their spread"
                if calibration.differ(ra, rb)
                else "within each other's spread"
            )
            + (
                f"; CPU loop A {cpu[0]['loops_per_s']:.2f}/s, B {cpu[1]['loops_per_s']:.2f}/s"
                if cpu[0] and cpu[1]
                else ""
            ),
            file=out,
        )
        a_points, b_points = _calibrated(a_points, ra), _calibrated(b_points, rb)
        unit = "x ref"
    a = {p["point"]: p for p in a_points}
    b = {p["point"]: p for p in b_points}
    common = [k for k in a if k in b]
    if not common:
        print(
            f"bench compare: no point in common between {run_a.name} and {run_b.name}",
            file=sys.stderr,
        )
        return 2
    regressions = 0
    apart = []
    print(
        f"{'point':<48}{'A ' + unit:>11}{'B ' + unit:>11}{'B/A':>7}  {'A p99':>8}"
        f"{'B p99':>8}  verdict",
        file=out,
    )
    for k in common:
        pa, pb = a[k], b[k]
        ra, rb = _t(pa, "recv_msgs_per_s"), _t(pb, "recv_msgs_per_s")
        la = (pa.get("latency_ms") or {}).get("p99")
        lb = (pb.get("latency_ms") or {}).get("p99")
        if not ra or not rb or pa.get("status") != "ok" or pb.get("status") != "ok":
            print(
                f"{k:<48}{'-':>11}{'-':>11}{'-':>7}  {'':>8}{'':>8}  not comparable "
                f"({pa.get('status')} / {pb.get('status')})",
                file=out,
            )
            continue
        ratio = rb / ra
        apart.append((ra, rb))
        overlap = stats.overlap(*({"min": _t(p, "recv_min"), "max": _t(p, "recv_max")}
                                  for p in (pa, pb)))
        verdict = "same (ranges overlap)" if overlap else ("faster" if ratio > 1 else "slower")
        if not overlap and ratio < 1 - threshold / 100:
            verdict = f"REGRESSION (> {threshold:g}% slower, beyond the spread)"
            regressions += 1
        elif la and lb and lb > la * (1 + threshold / 100) and not overlap:
            verdict = f"REGRESSION (p99 latency > {threshold:g}% higher)"
            regressions += 1
        fig = "{:>11,.3f}" if calibrated else "{:>11,.0f}"
        print(
            f"{k:<48}{fig.format(ra)}{fig.format(rb)}{ratio:>7.2f}  "
            f"{la if la is not None else float('nan'):>8.2f}"
            f"{lb if lb is not None else float('nan'):>8.2f}  {verdict}",
            file=out,
        )
    only = sorted(set(a) ^ set(b))
    if only:
        print(f"points in only one run: {', '.join(only)}", file=out)
    drift = stats.median_abs_log_ratio(apart)
    if drift is not None:
        print(f"median |ln(B/A)| over the {len(apart)} comparable points: {drift:.3f}"
              + (" (calibrated)" if calibrated else ""), file=out)
    print(f"{len(common)} points compared, {regressions} regression(s)", file=out)
    return 1 if regressions else 0


def main(args) -> int:
    if args.threshold < 0:
        print("bench compare: error: --threshold must be >= 0", file=sys.stderr)
        return 2
    return compare(
        results.resolve_run(args.run_a),
        results.resolve_run(args.run_b),
        args.threshold,
        calibrated=args.calibrated,
    )
