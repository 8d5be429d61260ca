"""Result files: one JSON per point, a run manifest, summary.csv, and ``results/latest``.

Layout::

    results/<run-id>/run.json            manifest: command, status, machine, versions, commit
    results/<run-id>/points/<point>.json one measured point (schema below)
    results/<run-id>/points/<point>.hlog its latency (a flood: time in queue) as an
                                         HdrHistogram interval log, 1 s intervals, in µs
    results/<run-id>/summary.csv         one row per point: every parameter, every headline
    results/<run-id>/metrics.prom        the points' figures in OpenMetrics text, in seconds
    results/<run-id>/charts/*.png        written by burstbench/plots/
    results/latest -> <run-id>

The .hlog (``Run.write_histogram_log``) holds exactly the samples of the point's
``latency_ms`` (or ``time_in_queue_ms``), one histogram per second of receive time, and the
JSON names it (``histogram_log``); a point with neither figure has none. summary.csv and
metrics.prom are written together (``write_summary``) whenever a run finishes; summary.csv's
columns only ever grow at the end (``SUMMARY_COLUMNS``).

Stable keys tools may rely on: ``accounting.sent``, ``accounting.received``,
``accounting.lost``, ``accounting.duplicates``, ``throughput.send_msgs_per_s``,
``throughput.recv_msgs_per_s``, ``latency_ms.p50``, ``latency_ms.p99``. ``latency_ms`` is null
for an unpaced flood (its figures are ``time_in_queue_ms``), and a percentile with too few
samples behind it is null ("n/a"). Changing the shape bumps ``SCHEMA_VERSION``;
``load_point`` upgrades older files; ``load_run`` reads a whole run back (``RunFiles``), the
one loader of burstbench/plots/, compare and the summary.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import platform
import re
import subprocess
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from burstbench import paths
from burstbench.measure import tables
from burstbench.measure.tables import SUMMARY_COLUMNS, get  # noqa: F401 (results' readers)
from burstbench.paths import git_commit  # the commit every result records

# 2: a run nonce per point; accounting.corrupt with kinds (foreign_kinds, corrupt_kinds);
#    broker_witness (the brokers' own counters beside the accounting); latency from HDR
#    histograms, null for floods (time_in_queue_ms instead) and per percentile when too few
#    samples lie in its tail
SCHEMA_VERSION = 2
HLOG_INTERVAL_S = 1  # the interval of a point's .hlog, seconds of receive time


def new_run_id(kind: str) -> str:
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return f"{stamp}-{kind}-{os.getpid()}"


@cache
def machine() -> dict:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gib = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem_gib = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gib": mem_gib,
        "kernel": platform.release(),
        "os": platform.platform(),
        "hostname": platform.node(),
    }


@cache
def runtimes() -> dict:
    def first_line(argv):
        try:
            out = subprocess.run(argv, capture_output=True, text=True, timeout=20, check=True)
            text = (out.stdout or out.stderr).strip().splitlines()
            return text[0] if text else "unknown"
        except (OSError, subprocess.SubprocessError):
            return "missing"

    out = {
        "java": first_line(["java", "-version"]),
        "node": first_line(["node", "--version"]),
        "perl": first_line(["perl", "-e", "print $^V"]),
        "python": platform.python_version(),
    }
    from burstbench.clients import java_options_extra
    extra = java_options_extra()
    if extra:  # the JVMs ran with more than the bench's own options (clients.py)
        out["java_options"] = " ".join(extra)
    return out


def json_safe(obj):
    """JSON without NaN: NaN and infinities become null."""
    if isinstance(obj, float):
        return None if math.isnan(obj) or math.isinf(obj) else obj
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    return obj


def safe_name(text: str) -> str:
    text = text.replace(" -> ", "-to-")
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", text).strip("_")[:120] or "point"


class Run:
    """A results directory being written."""

    def __init__(
        self, run_id: str, command: list[str], root: Path | None = None, resume: bool = False
    ):
        self.id = run_id
        self.root = Path(root or paths.RESULTS)
        self.dir = self.root / run_id
        if self.dir.exists() and not resume:
            raise FileExistsError(f"results directory {self.dir} exists")
        (self.dir / "points").mkdir(parents=True, exist_ok=True)
        self.manifest_path = self.dir / "run.json"
        if resume and self.manifest_path.exists():
            self.manifest = json.loads(self.manifest_path.read_text())
            self.manifest.setdefault("resumed", []).append(dt.datetime.now().isoformat())
        else:
            self.manifest = {
                "schema_version": SCHEMA_VERSION,
                "run_id": run_id,
                "command": command,
                "started": dt.datetime.now().astimezone().isoformat(timespec="seconds"),
                "status": "running",
                "machine": machine(),
                "git_commit": git_commit(),
                "runtimes": runtimes(),
            }
        self._save_manifest()
        self.link_latest()

    def _save_manifest(self) -> None:
        tmp = self.manifest_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(json_safe(self.manifest), indent=2))
        tmp.replace(self.manifest_path)

    def link_latest(self) -> None:
        latest = self.root / "latest"
        tmp = self.root / f".latest-{os.getpid()}"
        try:
            if tmp.is_symlink() or tmp.exists():
                tmp.unlink()
            tmp.symlink_to(self.id)
            tmp.replace(latest)
        except OSError:
            pass

    def point_path(self, point_id: str) -> Path:
        return self.dir / "points" / f"{point_id}.json"

    def done_points(self) -> set[str]:
        """Points finished ok, which ``--resume`` leaves alone: a failed, incomplete or
        skipped point is measured again."""
        out = set()
        for p in (self.dir / "points").glob("*.json"):
            try:
                if json.loads(p.read_text()).get("status") == "ok":
                    out.add(p.stem)
            except ValueError:
                pass
        return out

    def write_point(self, point_id: str, doc: dict) -> dict:
        """Write the point's file atomically; returns the document as written."""
        doc = {
            "schema_version": SCHEMA_VERSION,
            "run_id": self.id,
            "point": point_id,
            "machine": machine(),
            "git_commit": git_commit(),
            **doc,
        }
        path = self.point_path(point_id)
        tmp = path.with_suffix(".tmp")
        doc = json_safe(doc)
        tmp.write_text(json.dumps(doc, indent=2))
        tmp.replace(path)
        return doc

    def write_histogram_log(self, point_id: str, doc: dict, records: list) -> dict | None:
        """Write ``points/<point_id>.hlog``, the point's latency (or, for an unpaced flood,
        time in queue) as an HdrHistogram interval log: ``records``, those behind the
        document's figures (``measure.latency_ms``), one histogram per second of receive
        time. Returns the document's ``histogram_log`` entry; None (no file) for a point
        with neither figure."""
        of = next((k for k in ("latency_ms", "time_in_queue_ms") if doc.get(k)), None)
        if of is None:
            return None
        what = ("latency (receive - intended send)" if of == "latency_ms" else
                "time in queue (receive - send; an unpaced flood: not latency)")
        over = ("the measured window" if (doc.get("parameters") or {}).get("duration")
                else "the measured bursts")
        path = self.dir / "points" / f"{point_id}.hlog"
        intervals = write_hlog(path, records, f"burstbench run {self.id} point {point_id}: "
                               f"{what} over {over}, in microseconds (Interval_Max in ms), "
                               f"one interval per {HLOG_INTERVAL_S} s of receive time")
        return {"file": path.name, "of": of, "unit": "us", "interval_s": HLOG_INTERVAL_S,
                "intervals": intervals, "samples": len(records)}

    def finish(self, status: str, **extra) -> None:
        self.manifest.update(status=status, **extra)
        self.manifest["finished"] = dt.datetime.now().astimezone().isoformat(timespec="seconds")
        self._save_manifest()
        write_summary(self.dir)


def write_hlog(path: Path, records: list, comment: str) -> int:
    """Write ``records`` (``measure.ConsumerRecord``) as an HdrHistogram interval log (format
    1.2, what hdrh's HistogramLogReader and HdrHistogram's Java tools read): the comment, a
    StartTime and BaseTime at the first interval, then one line per interval of
    ``HLOG_INTERVAL_S`` seconds of receive time in which something was received, its start
    relative to BaseTime, values in µs as ``measure.latency_ms`` records them. Returns the
    number of intervals."""
    from hdrh.log import HistogramLogWriter

    from burstbench.measure import measure

    step_ns = HLOG_INTERVAL_S * 1_000_000_000
    intervals = measure.interval_histograms(records, step_ns)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        w = HistogramLogWriter(f)
        w.output_comment(" ".join(comment.split()))
        w.output_log_format_version()
        if intervals:
            start_ms = intervals[0][0] / 1e6
            # (hdrh's own output_start_time is broken in 0.10.8: it calls datetime.iso_format)
            when = dt.datetime.fromtimestamp(start_ms / 1000, dt.UTC).isoformat()
            w.output_comment(f"[StartTime: {start_ms / 1000:.6f} (seconds since epoch), {when}]")
            w.output_base_time(start_ms)
            w.base_time = start_ms
        w.output_legend()
        for start_ns, h in intervals:
            h.set_start_time_stamp(start_ns / 1e6)
            h.set_end_time_stamp((start_ns + step_ns) / 1e6)
            w.output_interval_histogram(h, max_value_unit_ratio=1000.0)
    tmp.replace(path)
    return len(intervals)


def load_point(path: Path) -> dict:
    doc = json.loads(Path(path).read_text())
    version = doc.get("schema_version", 0)
    if version > SCHEMA_VERSION:
        raise ValueError(
            f"{path}: schema_version {version} is newer than this burstbench ({SCHEMA_VERSION})"
        )
    if version < 2:  # no nonce, no checksums, no broker witness: say so, invent nothing
        acc = doc.get("accounting")
        if isinstance(acc, dict):
            acc.setdefault("corrupt", acc.get("body_errors", 0))
        doc.setdefault("nonce", None)
        if doc.get("latency_ms") and not (doc.get("parameters") or {}).get("rate"):
            doc["time_in_queue_ms"] = doc.pop("latency_ms")  # a flood's figure, renamed
            doc["latency_ms"] = None
        doc.setdefault("broker_witness", {"available": False,
                                          "why": f"schema_version {version} file"})
        doc["schema_version"] = SCHEMA_VERSION
    return doc


STUDY_FILES = ("pi", "reqreply", "runtimes", "chaos")  # the documents the report shows


@dataclass
class RunFiles:
    """A finished (or interrupted) run as its files hold it: the manifest (``run.json``),
    every point (``points/*.json``, upgraded by ``load_point``, in file-name order), and the
    studies' documents (``pi.json``, ``reqreply.json``, ``chaos.json``) when present.
    The one way a run directory is read: results, charts, the report and compare use it."""

    dir: Path
    manifest: dict
    points: list[dict]
    studies: dict[str, dict] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return self.manifest.get("run_id") or self.dir.name

    @property
    def charts(self) -> list[Path]:
        """The run's PNG charts, by name."""
        return sorted((self.dir / "charts").glob("*.png"))

    def by_axis(self) -> dict[str, list[dict]]:
        """A sweep's points per axis, in the order the axes first appear."""
        out: dict[str, list[dict]] = {}
        for p in self.points:
            axis = (p.get("sweep") or {}).get("axis")
            if axis:
                out.setdefault(axis, []).append(p)
        return out

    @property
    def profile(self) -> str | None:
        """The sweep profile the run measured (the manifest's, else its points')."""
        return self.manifest.get("profile") or next(
            ((p.get("sweep") or {}).get("profile") for p in self.points
             if (p.get("sweep") or {}).get("profile")), None)


def load_run(run_dir: Path) -> RunFiles:
    """Read a run directory (see ``RunFiles``); a missing ``run.json`` is FileNotFoundError."""
    run_dir = Path(run_dir)
    manifest = json.loads((run_dir / "run.json").read_text())
    points = [load_point(p) for p in sorted((run_dir / "points").glob("*.json"))]
    studies = {name: json.loads(f.read_text()) for name in STUDY_FILES
               if (f := run_dir / f"{name}.json").exists()}
    return RunFiles(run_dir, manifest, points, studies)


def resolve_run(ref: str, root: Path | None = None) -> Path:
    """A run id, ``latest``, or a path -> the run directory (or a clear error)."""
    root = Path(root or paths.RESULTS)
    for cand in (Path(ref), root / ref):
        if (cand / "run.json").exists():
            return cand.resolve()
    raise FileNotFoundError(f"no run {ref!r} (looked for {root / ref}/run.json)")


def write_summary(run_dir: Path) -> Path:
    """Write the run's ``summary.csv`` (``SUMMARY_COLUMNS``, one row per point) and, from
    the same points, its ``metrics.prom`` (burstbench/measure/tables.py)."""
    run = load_run(run_dir)
    path = Path(run_dir) / "summary.csv"
    tables.write_csv(path, run.points)
    tables.write_openmetrics(Path(run_dir) / "metrics.prom", run.points, run.id)
    return path


def study_command(kind: str, run_study, table) -> int:
    """``./bench pi`` / ``./bench reqreply``: run one study in a new Run, finish the Run
    whatever happens (``incomplete`` when interrupted), print its table, exit 1 on a
    failed point. ``run_study(run) -> doc``; ``table(doc) -> (markdown, html)``."""
    import sys

    from burstbench.infra.procs import Interrupted

    run = Run(new_run_id(kind), sys.argv)
    print(f"{kind} {run.id}: results in {run.dir}", file=sys.stderr, flush=True)
    status = "failed"
    try:
        doc = run_study(run)
        status = "complete" if doc["status"] == "ok" else "failed"
    except (Interrupted, KeyboardInterrupt):
        status = "incomplete"
        raise
    finally:
        run.finish(status)
    print(table(doc)[0])
    if doc["status"] != "ok":
        bad = sum(p["status"] != "ok" for p in doc["points"])
        print(f"bench {kind}: error: {bad} point(s) failed; see {run.dir / (kind + '.json')}",
              file=sys.stderr)
        return 1
    return 0
