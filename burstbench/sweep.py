"""Sweeps: a profile (profiles/<name>.yaml) expands into points; each is measured and written.

``./bench sweep`` and ``pytest -m sweep`` both call ``expand`` and ``measure_point``, so the
two cannot disagree about what a point is.
"""

from __future__ import annotations

import itertools
import sys
import time
from dataclasses import dataclass, fields
from pathlib import Path

from burstbench.errors import PointFailed
from burstbench.infra.procs import Interrupted
from burstbench.measure import results
from burstbench.measure.spec import PointSpec
from burstbench.profiles import DEFAULT_FRACTIONS, ProfileError, load_profile

_SPEC_KEYS = {f.name for f in fields(PointSpec)}


@dataclass
class Point:
    axis: str
    id: str
    series: str
    x: object
    spec: PointSpec
    rate_of: str | None = None  # latency-vs-load: offer a fraction (x) of that point's rate
    # find-max: the p99 bound; the point is the search's flood probe, the search writes the
    # other probes itself (burstbench/measure/findmax.py)
    find_max: float | None = None


def _spec(params: dict, where: str) -> PointSpec:
    unknown = set(params) - _SPEC_KEYS
    if unknown:
        raise ProfileError(f"{where}: unknown parameter(s) {', '.join(sorted(unknown))}")
    return PointSpec(**params)


def _fmt(v) -> str:
    return ",".join(map(str, v)) if isinstance(v, list) else str(v)


def expand(
    profile: dict, axes: list[str] | None = None, overrides: dict | None = None
) -> list[Point]:
    """Every point of the chosen axes, in order. Raises ProfileError on a bad profile/axis."""
    all_axes = profile["axes"]
    chosen = axes or list(all_axes)
    for a in chosen:
        if a not in all_axes:
            raise ProfileError(
                f"profile {profile['name']} has no axis {a!r} (have: {', '.join(all_axes)})"
            )
    defaults = dict(profile.get("defaults") or {})
    points: list[Point] = []
    for axis in chosen:
        ax = all_axes[axis] or {}
        base = {**defaults, **(ax.get("set") or {})}
        if "grid" in ax:
            grid = ax["grid"]
            keys = list(grid)
            for combo in itertools.product(*(grid[k] for k in keys)):
                params = {**base, **dict(zip(keys, combo)), **(overrides or {})}
                label = "-".join(f"{_fmt(v)}" for v in combo)
                pid = results.safe_name(f"{axis}-{label}")
                points.append(Point(axis, pid, label, combo, _spec(params, f"{axis}/{label}")))
            continue
        if ax.get("kind") == "latency-vs-load":
            # the first point finds the maximum rate; the others offer fractions of it, their
            # --rate filled in at run time from the first point's result (see run_sweep)
            params = {**base, **(overrides or {})}
            label = ax.get("label") or " -> ".join(
                _fmt(params.get(k, "")) for k in ("producer", "consumer"))
            points.append(Point(axis, results.safe_name(f"{axis}-max"), label, "max",
                                _spec({**params, "rate": 0, "label": label}, f"{axis}/max")))
            for frac in ax.get("fractions", DEFAULT_FRACTIONS):
                pid = results.safe_name(f"{axis}-load={int(frac * 100)}pct")
                points.append(Point(axis, pid, label, frac,
                                    _spec({**params, "label": label}, f"{axis}/{pid}"),
                                    rate_of=results.safe_name(f"{axis}-max")))
            continue
        if ax.get("kind") == "find-max":
            for s in ax.get("series") or [{}]:
                s = dict(s)
                params = {**base, **s, **(overrides or {})}
                label = s.pop("label", None) or " -> ".join(
                    _fmt(params.get(k, "")) for k in ("producer", "consumer"))
                params.pop("label", None)
                pid = results.safe_name(f"{axis}-{label}-rate=max")
                points.append(Point(axis, pid, label, "max",
                                    _spec({**params, "label": label}, f"{axis}/{label}"),
                                    find_max=float(ax.get("p99_bound_ms", 50))))
            continue
        x = ax.get("x")
        xs = x if isinstance(x, list) else [x]  # several parameters can follow one value
        for k in xs:
            if k not in _SPEC_KEYS:
                raise ProfileError(f"axis {axis}: x must be point parameters, got {k!r}")
        series = ax.get("series") or [{}]
        for s in series:
            s = dict(s)
            label = (
                s.pop("label", None)
                or " -> ".join(_fmt(base.get(k, "")) for k in ("producer", "consumer"))
                or "default"
            )
            for value in ax.get("values", []):
                params = {**base, **s, **{k: value for k in xs}, **(overrides or {})}
                if ax.get("offered"):  # a total load shared by however many producers
                    params["rate"] = float(ax["offered"]) / max(
                        1, params.get("producers") or len(params.get("producer") or [1]))
                pid = results.safe_name(f"{axis}-{label}-{xs[0]}={value}")
                points.append(
                    Point(
                        axis, pid, label, value, _spec({**params, "label": label}, f"{axis}/{pid}")
                    )
                )
    ids = [p.id for p in points]
    dupes = {i for i in ids if ids.count(i) > 1}
    if dupes:
        raise ProfileError(f"profile {profile['name']}: duplicate points {sorted(dupes)}")
    return points


class Progress:
    """One line per finished point on stderr: bar, count, ETA, and the last figure."""

    def __init__(self, total: int, skipped: int = 0, out=sys.stderr):
        self.total, self.done, self.out = total, skipped, out
        self.started = time.monotonic()
        self.measured = 0

    def line(self, point: Point, figure: str) -> str:
        self.done += 1
        self.measured += 1
        elapsed = time.monotonic() - self.started
        left = self.total - self.done
        eta = elapsed / self.measured * left if self.measured else 0
        width = 24
        filled = int(width * self.done / self.total) if self.total else width
        bar = "#" * filled + "." * (width - filled)
        return (
            f"[{bar}] {self.done}/{self.total} points, elapsed {_dur(elapsed)}, "
            f"ETA {_dur(eta)} | {point.id}: {figure}"
        )

    def tick(self, point: Point, figure: str) -> None:
        print(self.line(point, figure), file=self.out, flush=True)


def _dur(s: float) -> str:
    s = int(s)
    return f"{s // 3600}h{s // 60 % 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


def figure_of(doc: dict) -> str:
    t = doc.get("throughput") or {}
    a = doc.get("accounting") or {}
    rate = t.get("recv_msgs_per_s")
    ok = doc.get("status") == "ok" and isinstance(rate, (int, float))
    txt = f"{rate:,.0f} msg/s recv" if ok else "no figure"
    if a:
        txt += f", lost {a.get('lost', 0)}"
    return f"{doc.get('status', '?')}: {txt}"


def run_sweep(
    profile_name: str,
    axes: list[str],
    resume: str | None = None,
    overrides: dict | None = None,
    root: Path | None = None,
) -> tuple[Path, int]:
    """Run (or resume) a sweep; returns the run directory and the number of failed points."""
    from burstbench.measure.points import measure_point
    from burstbench.plots import charts

    profile = load_profile(profile_name)
    axes, studies = split_studies(axes, profile)  # studies run through run_studies
    points = expand(profile, axes, overrides) if axes is None or axes else []
    run_id = resume or results.new_run_id(f"sweep-{profile_name}")
    run = results.Run(run_id, sys.argv, root=root, resume=bool(resume))
    run.manifest.update(profile=profile_name,
                        axes=list(profile["axes"]) if axes is None else axes, studies=studies)
    finished = run.done_points() if resume else set()
    todo = [p for p in points if p.id not in finished]
    print(
        f"sweep {run.id}: profile {profile_name}, {len(points)} points"
        f"{f', {len(points) - len(todo)} already done' if finished else ''}; "
        f"results in {run.dir}",
        file=sys.stderr,
        flush=True,
    )
    progress = Progress(len(points), skipped=len(points) - len(todo))
    t0 = time.monotonic()
    failed_studies = 0
    status = "complete"
    try:
        external = bool((overrides or {}).get("broker_urls"))
        calibrate = profile.get("calibrate", True)  # a profile may opt out (tests' tiny ones)
        if todo and calibrate and not external and "calibration" not in run.manifest:
            from burstbench.measure import calibration  # a reference every sweep records first

            calibration.measure(run)
        for point in todo:
            if point.find_max is not None:
                failed_studies += _find_max(run, point, progress)
                continue
            try:
                if point.rate_of:
                    _offer_fraction(run, point)
                point.spec.validate()
            except ValueError as e:  # e.g. netns without root: say so, don't fail the sweep
                run.write_point(point.id, {"status": "skipped", "errors": [str(e)],
                                           "parameters": point.spec.params(),
                                           "sweep": {"profile": profile_name,
                                                     "axis": point.axis,
                                                     "series": point.series, "x": point.x}})
                progress.tick(point, f"skipped: {e}")
                continue
            try:
                doc = measure_point(
                    run,
                    point.id,
                    point.spec,
                    meta={
                        "sweep": {
                            "profile": profile_name,
                            "axis": point.axis,
                            "series": point.series,
                            "x": point.x,
                        }
                    },
                )
            except PointFailed:
                doc = results.load_point(run.point_path(point.id))
            progress.tick(point, figure_of(doc))
        failed_studies = run_studies(run, profile_name, studies, resume=bool(resume),
                                     external=bool((overrides or {}).get("broker_urls")))
    except (Interrupted, KeyboardInterrupt):
        status = "incomplete"
        raise
    finally:
        wall = time.monotonic() - t0
        # every point of the sweep counts, measured now or in an earlier invocation
        verdicts = point_verdicts(run, points)
        bad = {k: v for k, v in verdicts.items() if v[0] != "ok"}
        failed = sum(v[0] != "skipped" for v in bad.values()) + failed_studies
        skipped = sum(v[0] == "skipped" for v in bad.values())
        if (failed or skipped) and status == "complete":
            status = "failed"
        # (a resumed run's wall time is this invocation's: the earlier ones are in their logs)
        run.finish(status, failed_points=failed, skipped_points=skipped, wall_s=round(wall, 1))
        print(f"sweep {run.id}: {status}: {len(points) - len(bad)} of {len(points)} points ok, "
              f"{failed} failed, {skipped} skipped ({len(todo)} points and {len(studies)} "
              f"studies measured in {_dur(wall)})", file=sys.stderr, flush=True)
        if bad:
            print("sweep: not ok: " + "; ".join(f"{k} {v[0]}: {v[1]}"
                                               for k, v in sorted(bad.items())),
                  file=sys.stderr, flush=True)
        try:
            for path in charts.render_run(run.dir):
                print(f"chart: {path}", file=sys.stderr)
        except Exception as e:  # noqa: BLE001 - charts must never hide the run's outcome
            print(f"bench sweep: charts failed: {e}", file=sys.stderr)
    return run.dir, failed + skipped


def _find_max(run: results.Run, point: Point, progress: Progress) -> int:
    """A find-max point: the whole search; returns its failed probes beyond the flood (the
    flood probe is the point itself, judged with the others)."""
    from burstbench.measure import findmax

    try:
        point.spec.validate()
    except ValueError as e:
        run.write_point(point.id, {"status": "skipped", "errors": [str(e)],
                                   "parameters": point.spec.params(),
                                   "sweep": {"axis": point.axis, "series": point.series,
                                             "x": point.x, "kind": "find-max"}})
        progress.tick(point, f"skipped: {e}")
        return 0
    verdict = findmax.search(run, point.spec, point.series, point.find_max, axis=point.axis)
    findmax.save(run, [verdict])
    best = verdict["max_sustainable_msgs_per_s"]
    progress.tick(point, f"max sustainable {best:,.0f} msg/s" if best else
                  f"no sustainable rate: {verdict.get('why', '')}")
    return sum(p["status"] != "ok" for p in verdict["probes"] if p["point"] != point.id)


def point_verdicts(run: results.Run, points: list[Point]) -> dict[str, tuple[str, str]]:
    """Each point of the sweep -> (status, first error) from its result file."""
    out = {}
    for point in points:
        path = run.point_path(point.id)
        try:
            doc = results.load_point(path)
        except (OSError, ValueError):
            out[point.id] = ("missing", "no result file")
            continue
        errors = doc.get("errors") or []
        out[point.id] = (doc.get("status", "?"), errors[0][:160] if errors else "")
    return out


def _offer_fraction(run: results.Run, point: Point) -> None:
    """Set the point's per-producer rate to its fraction of the measured maximum."""
    path = run.point_path(point.rate_of)
    doc = results.load_point(path) if path.exists() else {}
    peak = (doc.get("throughput") or {}).get("recv_msgs_per_s")
    if not peak:
        raise ValueError(f"no maximum rate measured by {point.rate_of}: nothing to offer")
    point.spec.rate = round(peak * float(point.x) / point.spec.producers, 1)
    # enough messages for the burst to last a couple of seconds at the offered rate
    point.spec.count = max(point.spec.count // 4, min(point.spec.count,
                                                       int(point.spec.rate * 3)))


# -- studies: the Pi and request/reply studies (burstbench/studies/pi/,
# burstbench/studies/reqreply.py) --------

STUDIES = ("pi", "reqreply", "runtimes")


def split_studies(names: list[str] | None,
                  profile: dict | None = None) -> tuple[list[str] | None, list[str]]:
    """``./bench sweep`` names -> (axes, studies). No names: every axis (None) and every
    study the profile has a ``studies:`` section for; otherwise the names that are studies
    go to run_studies, the rest are axes."""
    if not names:
        have = STUDIES if profile is None else (profile.get("studies") or {})
        return None, [n for n in STUDIES if n in have]
    return [n for n in names if n not in STUDIES], [n for n in names if n in STUDIES]


def run_studies(run: results.Run, profile_name: str, names: list[str], resume: bool = False,
                external: bool = False) -> int:
    """Run the named studies with the profile's ``studies:`` section, writing into ``run``'s
    directory (pi.json, reqreply.json, their tables and charts). Returns how many failed.

    A study already finished ``ok`` in a resumed run is not run again; with brokers the
    harness did not start (--broker-url) the studies are skipped: they start their own.
    """
    import json

    from burstbench.studies import pi, reqreply, runtimes

    modules = {"pi": (pi, pi.PiConfig), "reqreply": (reqreply, reqreply.ReqReplyConfig),
               "runtimes": (runtimes, runtimes.RuntimesConfig)}
    failed = 0
    for name in names:
        if external:
            print(f"study {name}: skipped (it starts its own broker; --broker-url given)",
                  file=sys.stderr)
            continue
        path = run.dir / f"{name}.json"
        if resume and path.exists():
            try:
                if json.loads(path.read_text()).get("status") == "ok":
                    print(f"study {name}: already done", file=sys.stderr)
                    continue
            except ValueError:
                pass
        module, config = modules[name]
        try:
            doc = module.run_study(run, config.from_profile(profile_name))
        except (ValueError, RuntimeError, OSError) as e:  # a toolchain missing, no broker...
            print(f"study {name}: failed: {e}", file=sys.stderr)
            failed += 1
            continue
        failed += doc["status"] != "ok"
    return failed


def main(args) -> int:
    overrides = {}
    if args.producer:
        overrides["producer"] = args.producer.split(",")
    if args.consumer:
        overrides["consumer"] = args.consumer.split(",")
    if args.broker_url:
        overrides["broker_urls"] = args.broker_url
        overrides.update(broker_admin=args.broker_admin, admin_user=args.admin_user,
                         admin_password_file=args.admin_password_file, user=args.user,
                         password_file=args.password_file, ca=args.ca, cert=args.cert,
                         key=args.key)
        import types

        from burstbench.infra import outside

        # the same names as a point's: a refused login, exit 2
        outside.preflight(types.SimpleNamespace(**overrides))
    run_dir, failed = run_sweep(args.profile, args.axes, args.resume, overrides or None)
    if failed:
        print(
            f"bench sweep: error: {failed} point(s) failed or skipped; see {run_dir}/summary.csv",
            file=sys.stderr,
        )
        return 1
    return 0
