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

import csv
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

# 2: a run nonce per point; accounting.corrupt with kinds (foreign_kinds, corrupt_kinds);
#    broker_witness (the brokers' own counters beside the accounting); latency from HDR
#    histograms, null for floods (time_in_queue_ms instead) and per percentile when too few
#    samples lie in its tail
SCHEMA_VERSION = 2
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
    # cost the brokers the harness started (burstbench/measure/run.py _connect_figures)
    "connections_per_process",
    "connect.consumers_ready_s",
    "connect.producers_ready_s",
    "connect.broker_rss_kib_per_connection",
    "connect.broker_threads_per_connection",
    "connect_timeout",
]

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
def git_commit() -> str:
    """The checkout's commit (``-dirty`` with uncommitted changes); without git or a .git (an
    image, a copy made by the hosts' playbook) the commit its maker wrote in
    .burstbench-commit; else ``unknown``."""
    try:
        out = subprocess.run(
            ["git", "-C", str(paths.ROOT), "rev-parse", "--short=12", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10, check=True,
        )
        commit = out.stdout.strip() or "unknown"
        dirty = subprocess.run(
            ["git", "-C", str(paths.ROOT), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10, check=True,
        ).stdout.strip()
        return commit + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        try:
            written = (paths.ROOT / ".burstbench-commit").read_text().split()
        except OSError:
            written = []
        return written[0] if written else "unknown"


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


def write_summary(run_dir: Path) -> Path:
    """Write the run's ``summary.csv`` (``SUMMARY_COLUMNS``, one row per point) and, from
    the same points, its ``metrics.prom`` (``write_openmetrics``)."""
    run = load_run(run_dir)
    points = run.points
    path = Path(run_dir) / "summary.csv"
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(SUMMARY_COLUMNS)
        for doc in points:
            w.writerow([_cell(_column(doc, col)) for col in SUMMARY_COLUMNS])
    write_openmetrics(run_dir, points, run.id)
    return path


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


def write_openmetrics(run_dir: Path, points: list[dict], run_id: str) -> Path:
    """Write the run's ``metrics.prom`` (``openmetrics``)."""
    path = Path(run_dir) / "metrics.prom"
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(openmetrics(points, run_id))
    tmp.replace(path)
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
