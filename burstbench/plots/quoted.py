"""Figures the README and ``docs/`` quote, rendered from the published runs' summaries.

A published run's ``summary.csv`` is copied to ``docs/data/<run-id>.csv`` with a small
manifest beside it (``<run-id>.json``: command, commit, machine, status), by
``./bench docs publish RUN``. A page quotes a figure between two markers, which a reader of
the rendered Markdown does not see::

    <!--fig RUN POINT WHAT-->18,000 (16,000-19,000)<!--/fig-->

``RUN`` is a run id under ``docs/data/``, or a short name the page gives it once with
``<!--figrun NAME RUN-->``; ``POINT`` is a point id of that run, ``WHAT`` one of

- a summary column (``latency_ms.p99``), the value alone at three significant figures, a
  verdict (``sustained.keeps_up``) as yes or no;
- ``recv`` or ``send``: the rate, median with the min-max over the point's measured bursts
  or 1-s windows, at two significant figures where that spread is wider than 10% of the
  median, else three; ``p99``: a sustained point's p99 in ms, the same way over its windows;
- ``mib``: the receive rate in MiB/s of bodies (rate x size), with its spread as ``recv``;
- ``findmax``: the maximum sustainable rate of the find-max search named by POINT
  (``AXIS/SERIES``, from the run's ``find-max.json``, published beside its summary);
- ``ratio=OTHER`` (``ratio=OTHER:COLUMN``): POINT's receive rate (or COLUMN) over point
  OTHER's, at two decimals;
- for a row of the runtimes study (POINT ``runtimes:KEY``, KEY its summary key joined by
  ``/``: ``bursts/6``, ``pi/1/1000/1000``, ``ask/1``; from the run's ``runtimes.json``
  summary, published beside it): ``akka`` or ``pekko``, the median with min-max over the
  rounds as ``recv``; ``akka-p50`` or ``pekko-p50``, ask's round-trip p50 the same way;
  ``ratio``, Pekko's median over Akka's at two decimals;
- for a fault scenario of ``./bench chaos`` (POINT ``chaos:SCENARIO/CLIENT``, from the run's
  ``chaos.json``, published beside it): ``cell``, the reliability table's ``lost /
  duplicates / recovery s``; or one of ``sent``, ``lost``, ``duplicates``, ``redelivered``,
  ``recovery``;
- for the whole run (POINT ``run``, from its manifest): ``wall``, how long it took;
  ``calibration``, its reference's receive rate with min-max; ``held=PREFIX``, how many of
  the points whose id starts with PREFIX held (``10 of 10``); ``drift=OTHER`` (or
  ``drift=OTHER:calibrated``), the median |ln(B/A)| of the receive rates of the points both
  runs measured, as ``./bench compare RUN OTHER [--calibrated]`` prints it, with how many;
- for a soak (POINT ``soak:all``, from the run's ``soak.json`` published beside it as
  ``<run>-soak.json``, without its timeline; its chart becomes ``docs/soak.png``): one of
  ``sent``, ``received``, ``lost``, ``duplicates``, ``redelivered``; POINT ``soak:fault/N``
  (the Nth fault): ``at`` (s), ``what`` (kind and target), ``recovery`` (s), ``duplicates``;
- for a row of ``./bench perf clients`` (POINT ``perf:CLIENT/SIZE/ROLE``, ROLE ``send`` or
  ``recv``, from the run's ``perf.json``, published beside it as ``<run>-perf-clients.json``):
  ``ratio``, the one-CPU loop / client median with its min-max over the rounds at three
  decimals; ``interval``, its median's confidence interval; ``verdict``, the run's rule
  applied to those rounds (``holds``, ``within noise``, ``misses``, ``not judged``);
  ``kept``, a receive's rounds with a common window (``12 of 12``); ``loop-us`` or
  ``client-us``, CPU µs a message (median); ``tuned``, the tuned entry's two-CPU rate over
  the stock client's, median (min-max) at two decimals; ``cli-apart``/``cli-together``
  ActiveMQ's command-line tool's rate, ``ours-apart``/``ours-together`` the stock JMS pair's
  timed like it, ``vs-cli-apart``/``vs-cli-together`` ours over the CLI's at two decimals;
  and POINT ``perf:all`` WHAT ``verdicts``, how many rows have each verdict (``12 holds, 12
  within noise``).

``./bench docs render`` rewrites every marked figure from its source; ``./bench docs check``
(and ``tests/unit/test_quoted_figures.py``) fails on any figure that differs from it, on a
marker whose run, point or column does not exist, and on a point that did not succeed.
"""

from __future__ import annotations

import csv
import json
import math
import re
import shutil
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from pathlib import Path

from burstbench import paths, stats

DATA = paths.ROOT / "docs" / "data"
PAGES = ("README.md", "docs/*.md")
MARK = re.compile(r"<!--fig ([^>]*?)-->(.*?)<!--/fig-->", re.DOTALL)
ALIAS = re.compile(r"<!--figrun (\S+) (\S+)-->")
SPREAD = {"recv": ("throughput.recv_msgs_per_s", "throughput.recv_min", "throughput.recv_max"),
          "send": ("throughput.send_msgs_per_s", "throughput.send_min", "throughput.send_max"),
          "p99": tuple(f"sustained.steady.p99_ms.{k}" for k in ("median", "min", "max"))}
WIDE = 0.10  # a spread wider than this share of the median: two significant figures


class QuoteError(ValueError):
    pass


@cache
def rows_of(run: str, data: Path = DATA) -> dict[str, dict]:
    f = data / f"{run}.csv"
    if not f.exists():
        raise QuoteError(f"no published run {run} ({f} is missing: ./bench docs publish {run})")
    with f.open(newline="") as fh:
        return {r["point"]: r for r in csv.DictReader(fh)}


@cache
def published(f: Path) -> dict:
    """A published run's JSON beside its summary (find-max, runtimes, chaos, perf table), read
    once for all the markers that quote it."""
    return json.loads(f.read_text())


def _document(run: str, data: Path, suffix: str = "", what: str = "manifest") -> dict:
    """The run's published manifest (``<run>.json``) or the document beside it
    (``<run>-SUFFIX.json``), or a clear error when it was not published."""
    f = data / (f"{run}-{suffix}.json" if suffix else f"{run}.json")
    if not f.exists():
        raise QuoteError(f"run {run} has no published {what} ({f} is missing: ./bench docs "
                         f"publish {run})")
    return published(f)


def _seconds(v: float | None) -> str:
    """A recovery time as the reliability tables print it, ``-`` when there was none."""
    return "-" if v is None else f"{v:.2f}"


def _raw(run: str, point: str, column: str, data: Path) -> str:
    rows = rows_of(run, data)
    if point not in rows:
        raise QuoteError(f"run {run} has no point {point}")
    row = rows[point]
    if row.get("status") != "ok":
        raise QuoteError(f"run {run}'s point {point} is {row.get('status')!r}, not ok: a "
                         "failed point gives no figure")
    if column not in row:
        raise QuoteError(f"run {run}'s summary has no column {column}")
    return row[column]


def _value(run: str, point: str, column: str, data: Path) -> float:
    raw = _raw(run, point, column, data)
    try:
        v = float(raw)
    except ValueError:
        raise QuoteError(f"run {run}, point {point}: {column} is {raw!r}, not a "
                         "number") from None
    if math.isnan(v):
        raise QuoteError(f"run {run}, point {point}: {column} is not a number")
    return v


def sig(v: float, digits: int) -> str:
    """``v`` at ``digits`` significant figures, in a reader's form (``18,000``, ``3.6``)."""
    if v == 0:
        return "0"
    places = digits - 1 - math.floor(math.log10(abs(v)))
    r = round(v, places)
    return f"{r:,.{max(places, 0)}f}"


def with_spread(median: float, lo: float, hi: float) -> str:
    """``18,000 (16,000-19,000)``: two significant figures where the spread is wide."""
    digits = 2 if median and (hi - lo) / median > WIDE else 3
    return f"{sig(median, digits)} ({sig(lo, digits)}-{sig(hi, digits)})"


def render_one(spec: str, data: Path = DATA, runs: dict[str, str] | None = None) -> str:
    parts = spec.split()
    if len(parts) != 3:
        raise QuoteError(f"a figure marker takes RUN POINT WHAT: {spec!r}")
    run, point, what = parts
    run = (runs or {}).get(run, run)
    if point.startswith("runtimes:"):
        return _runtimes(run, point.removeprefix("runtimes:"), what, data)
    if point.startswith("chaos:"):
        return _chaos(run, point.removeprefix("chaos:"), what, data)
    if point.startswith("perf:"):
        return _perf(run, point.removeprefix("perf:"), what, data)
    if point == "run":
        return _run(run, what, data)
    if point.startswith("soak:"):
        return _soak(run, point.removeprefix("soak:"), what, data)
    if what == "findmax":
        verdict = _document(run, data, "find-max", "find-max.json").get(point)
        if not verdict or not verdict.get("max_sustainable_msgs_per_s"):
            raise QuoteError(f"run {run} has no maximum sustainable rate for {point}")
        return sig(float(verdict["max_sustainable_msgs_per_s"]), 3)
    if what == "mib":
        size = _value(run, point, "size", data) / 2**20
        med, lo, hi = (_value(run, point, c, data) * size for c in SPREAD["recv"])
        return with_spread(med, lo, hi)
    if what in SPREAD:
        med, lo, hi = (_value(run, point, c, data) for c in SPREAD[what])
        return with_spread(med, lo, hi)
    if what.startswith("ratio="):
        other, _, column = what.removeprefix("ratio=").partition(":")
        column = column or SPREAD["recv"][0]
        return f"{_value(run, point, column, data) / _value(run, other, column, data):.2f}"
    raw = _raw(run, point, what, data)
    if raw in ("True", "False"):  # a verdict (sustained.keeps_up)
        return "yes" if raw == "True" else "no"
    return sig(_value(run, point, what, data), 3)


def _runtimes(run: str, key: str, what: str, data: Path) -> str:
    rows = {"/".join(map(str, r["key"])): r
            for r in _document(run, data, "runtimes", "runtimes study")["summary"]}
    row = rows.get(key)
    if row is None:
        raise QuoteError(f"run {run}'s runtimes study has no row {key} (has: "
                         f"{', '.join(rows)})")
    if row["status"] != "ok":
        raise QuoteError(f"run {run}'s runtimes row {key} failed: a failed row gives no figure")
    if what == "ratio":
        return f"{row['pekko_over_akka']:.2f}"
    runtime, _, p50 = what.partition("-")
    table = {"": row.get("values"), "p50": row.get("p50_us")}.get(p50) or {}
    s = table.get(runtime)
    if not s:
        raise QuoteError(f"runtimes row {key}: no figure {what!r} (akka, pekko, akka-p50, "
                         "pekko-p50, ratio)")
    return with_spread(s["median"], s["min"], s["max"])


def _run(run: str, what: str, data: Path) -> str:
    """A figure of the whole run: ``wall``, ``calibration``, ``held=PREFIX``, or
    ``drift=OTHER`` (with ``:calibrated``), how far OTHER lies from it as ``./bench compare``
    prints it."""
    man = _document(run, data)
    if what == "wall":
        took = (datetime.fromisoformat(man["finished"])
                - datetime.fromisoformat(man["started"])).total_seconds()
        m, sec = divmod(round(took), 60)
        return f"{m} min {sec} s" if m < 60 else f"{m // 60} h {m % 60} min"
    ref = _reference(run, data)
    if what == "calibration":
        if not ref:
            raise QuoteError(f"run {run} has no calibration reference")
        return with_spread(ref["recv_msgs_per_s"], ref["min"], ref["max"])
    if what.startswith("held="):  # how many of the points named PREFIX... held
        prefix = what.removeprefix("held=")
        rows = [r for k, r in rows_of(run, data).items() if k.startswith(prefix)]
        if not rows:
            raise QuoteError(f"run {run} has no point {prefix}...")
        return f"{sum(r['status'] == 'ok' for r in rows)} of {len(rows)}"
    if what.startswith("drift="):
        other, _, how = what.removeprefix("drift=").partition(":")
        a, b = rows_of(run, data), rows_of(other, data)
        col = SPREAD["recv"][0]
        pairs = [(float(a[k][col]), float(b[k][col])) for k in a if k in b
                 and a[k]["status"] == b[k]["status"] == "ok" and a[k][col] and b[k][col]]
        if how == "calibrated":
            ref_b = _reference(other, data)
            if not ref or not ref_b:
                raise QuoteError(f"runs {run} and {other}: both need a calibration reference")
            pairs = [(x / ref["recv_msgs_per_s"], y / ref_b["recv_msgs_per_s"])
                     for x, y in pairs]
        elif how:
            raise QuoteError(f"drift={other}:{how}: only ':calibrated' follows the run")
        drift = stats.median_abs_log_ratio(pairs)
        if drift is None:
            raise QuoteError(f"runs {run} and {other} have no point in common")
        return f"{drift:.3f} over {len(pairs)} points"
    raise QuoteError(f"run {run}: no figure {what!r} (wall, calibration, held=PREFIX, "
                     "drift=OTHER, drift=OTHER:calibrated)")


def _reference(run: str, data: Path) -> dict | None:
    """The run's calibration reference (median, min, max receive msg/s), or None."""
    return (_document(run, data).get("calibration") or {}).get("reference") or None


CHAOS_COUNTS = ("sent", "lost", "duplicates", "redelivered")


def _soak(run: str, key: str, what: str, data: Path) -> str:
    """``soak:all`` with a tally count, or ``soak:fault/N`` (N from 1) with ``at``, ``what``,
    ``recovery`` or ``duplicates``."""
    doc = _document(run, data, "soak", "soak")
    if doc["status"] != "ok" or not doc.get("tally"):
        raise QuoteError(f"run {run}'s soak is {doc['status']!r}: no figure")
    if key == "all" and what in (*CHAOS_COUNTS, "received"):
        return f"{doc['tally'][what]:,}"
    faults = doc["faults"]
    n = key.removeprefix("fault/")
    if not n.isdigit() or not 1 <= int(n) <= len(faults):
        raise QuoteError(f"run {run}'s soak has no {key!r} (all, fault/1 to fault/{len(faults)})")
    fault = faults[int(n) - 1]
    if what == "at":
        return f"{fault['at_s']:.0f}"
    if what == "what":
        return f"{fault['kind']} {fault['target']}".strip()
    if what == "recovery":
        return _seconds(fault["recovery_s"])
    if what == "duplicates":
        return f"{fault['duplicates']:,}"
    raise QuoteError(f"soak {key}: no figure {what!r} (at, what, recovery, duplicates)")


def _chaos(run: str, key: str, what: str, data: Path) -> str:
    found = {f"{r['scenario']}/{r['client']}": r
             for r in _document(run, data, "chaos", "chaos results")["results"]}
    r = found.get(key)
    if r is None:
        raise QuoteError(f"run {run} has no chaos result {key} (has: {', '.join(found)})")
    if r["status"] != "ok" or not r.get("tally"):
        raise QuoteError(f"run {run}'s chaos result {key} is {r['status']!r}: no figure")
    t = r["tally"]
    rec = _seconds(r.get("recovery_s"))
    if what == "cell":
        return f"{t['lost']:,} / {t['duplicates']:,} / {rec}"
    if what == "recovery":
        return rec
    if what in CHAOS_COUNTS:
        return f"{t[what]:,}"
    raise QuoteError(f"chaos result {key}: no figure {what!r} (cell, recovery, "
                     f"{', '.join(CHAOS_COUNTS)})")


def _perf(run: str, key: str, what: str, data: Path) -> str:
    doc = _document(run, data, "perf-clients", "perf table")
    rows = {f"{r['client']}/{r['size']}/{role}": r[role] for r in doc["table"]
            for role in ("send", "recv")}
    if key == "all" and what == "verdicts":  # the run's tally, judged rows only
        found = [stats.verdict(d["one_cpu"]["ratio"], doc["target"]) for d in rows.values()
                 if "ratio" in (d.get("one_cpu") or {})]
        return ", ".join(f"{found.count(v)} {v}" for v in ("holds", "within noise", "misses",
                                                            "not judged") if found.count(v))
    d = rows.get(key)
    if d is None:
        raise QuoteError(f"run {run}'s perf table has no row {key} (has: {', '.join(rows)})")
    one, tuned, vs_cli = d.get("one_cpu") or {}, d.get("tuned"), d.get("vs_cli") or {}
    mode = what.rpartition("-")[2]
    if what in ("ratio", "interval", "verdict", "loop-us", "client-us") and "ratio" not in one:
        raise QuoteError(f"run {run}'s perf row {key} has no one-CPU ratio: no figure {what!r}")
    if what == "ratio":
        r = one["ratio"]
        return f"{r['median']:.3f} ({r['min']:.3f}-{r['max']:.3f})"
    if what == "interval":
        return f"{one['ratio']['ci']['lo']:.3f}-{one['ratio']['ci']['hi']:.3f}"
    if what == "verdict":
        return stats.verdict(one["ratio"], doc["target"])
    if what in ("loop-us", "client-us"):
        return sig(one["cpu_us_per_msg"][what.removesuffix("-us")]["median"], 3)
    if what == "kept" and "common" in one:
        return f"{one['common']['rounds']} of {one['common']['of']}"
    if what == "tuned" and tuned:
        r = tuned["ratio_spread"]
        return f"{r['median']:.2f} ({r['min']:.2f}-{r['max']:.2f})"
    if mode in vs_cli and what in (f"cli-{mode}", f"ours-{mode}", f"vs-cli-{mode}"):
        c = vs_cli[mode]
        if what.startswith("vs-"):
            return f"{c['ratio_to_cli']:.2f}"
        s = c["activemq_cli" if what.startswith("cli") else "client_like_cli"]
        return with_spread(s["median"], s["min"], s["max"])
    raise QuoteError(f"perf row {key}: no figure {what!r} (ratio, interval, verdict, kept, "
                     "loop-us, client-us, tuned, cli-apart, ours-apart, vs-cli-apart, and "
                     "the same -together)")


@dataclass
class Difference:
    page: str
    spec: str
    written: str
    source: str

    def __str__(self) -> str:
        return f"{self.page}: {self.spec}: written {self.written!r}, its source gives " \
               f"{self.source!r}"


def render(text: str, page: str = "", data: Path = DATA) -> tuple[str, list[Difference]]:
    """``text`` with every marked figure from its source, and the figures that differed."""
    diffs: list[Difference] = []
    runs = dict(ALIAS.findall(text))

    def sub(m: re.Match) -> str:
        try:
            fresh = render_one(m.group(1), data, runs)
        except QuoteError as e:
            raise QuoteError(f"{page}: {e}") from None
        if fresh != m.group(2):
            diffs.append(Difference(page, m.group(1), m.group(2), fresh))
        return f"<!--fig {m.group(1)}-->{fresh}<!--/fig-->"

    return MARK.sub(sub, text), diffs


def pages(root: Path = paths.ROOT) -> list[Path]:
    return [p for pat in PAGES for p in sorted(root.glob(pat))]


def check(root: Path = paths.ROOT, write: bool = False) -> tuple[int, list[Difference]]:
    """Every marked figure of the README and docs/: (how many, those that differ). With
    ``write`` the pages are rewritten from their sources."""
    n, diffs = 0, []
    for p in pages(root):
        text = p.read_text()
        n += len(MARK.findall(text))
        new, d = render(text, str(p.relative_to(root)))
        diffs += d
        if write and new != text:
            p.write_text(new)
    return n, diffs


def publish(run_dir: Path, data: Path = DATA, partial: bool = False) -> list[Path]:
    """Copy a finished run's summary and a manifest of where it ran into ``docs/data``. A run
    some of whose points failed or were skipped is published only with ``partial`` (its
    manifest keeps the status, and a marker on such a point stays an error): a page may show
    what failed beside what held, never a figure of a failed point."""
    manifest = json.loads((run_dir / "run.json").read_text())
    run_id = manifest.get("run_id") or run_dir.name
    status = manifest.get("status")
    if status != "complete" and not (
            partial and status == "failed" and _ran_to_end(run_dir, manifest)):
        raise QuoteError(f"run {run_id} is {status!r}: only a complete run is published"
                         + ("" if partial or status != "failed" else
                            " (--partial publishes one whose failed points are shown as such)")
                         + (": it did not run to its end" if partial else ""))
    commit = str(manifest.get("git_commit", ""))
    if not commit or commit.endswith("-dirty"):
        raise QuoteError(f"run {run_id} ran at commit {commit or '?'}: published figures come "
                         "from a clean commit")
    data.mkdir(parents=True, exist_ok=True)
    out = []
    # a perf run's summary.csv holds no point (its figures are its table, below)
    if (run_dir / "summary.csv").exists() and not (run_dir / "perf.json").exists():
        out.append(data / f"{run_id}.csv")
        shutil.copyfile(run_dir / "summary.csv", out[-1])
    keep = {k: manifest[k] for k in ("run_id", "command", "status", "started", "finished",
                                     "git_commit", "machine", "runtimes", "calibration")
            if k in manifest}
    if isinstance(keep.get("command"), list):  # what ran, not where on the machine it lay
        keep["command"] = [Path(a).name if a.startswith("/") else a for a in keep["command"]]
    json_out = data / f"{run_id}.json"
    json_out.write_text(json.dumps(keep, indent=2) + "\n")
    out.append(json_out)
    if (run_dir / "find-max.json").exists():  # the searches' verdicts: small, and no points'
        out.append(data / f"{run_id}-find-max.json")
        shutil.copyfile(run_dir / "find-max.json", out[-1])
    if (run_dir / "runtimes.json").exists():  # the study's rows, not its samples
        study = json.loads((run_dir / "runtimes.json").read_text())
        if study.get("status") != "ok":
            raise QuoteError(f"run {run_id}'s runtimes study is {study.get('status')!r}")
        out.append(data / f"{run_id}-runtimes.json")
        out[-1].write_text(json.dumps({k: study[k] for k in (
            "parameters", "versions", "order", "summary") if k in study}, indent=2) + "\n")
    if (run_dir / "chaos.json").exists():  # each scenario's verdict and counts, no paths
        chaos = json.loads((run_dir / "chaos.json").read_text())
        keep = ("scenario", "client", "status", "reason", "recovery_s", "fault_words")
        results = [{**{k: r.get(k) for k in keep},
                    "tally": {k: r["tally"][k] for k in (*CHAOS_COUNTS, "received")}
                    if r.get("tally") else None} for r in chaos["results"]]
        out.append(data / f"{run_id}-chaos.json")
        out[-1].write_text(json.dumps({"rule": chaos.get("rule"), "results": results},
                                      indent=2) + "\n")
    if (run_dir / "soak.json").exists():  # its tally, faults and notes; not the timeline
        soak = json.loads((run_dir / "soak.json").read_text())
        r = soak["result"]
        faults = [{k: f.get(k) for k in ("at_s", "kind", "target", "hold_s", "recovery_s",
                                         "duplicates", "detail")}
                  for f in (r.get("fault") or {}).get("faults", [])]
        out.append(data / f"{run_id}-soak.json")
        out[-1].write_text(json.dumps({
            "spec": soak.get("spec"), "rule": soak.get("rule"), "status": r.get("status"),
            "reason": r.get("reason"), "faults": faults,
            # the counts, not the sample of lost ids
            "tally": {k: v for k, v in (r.get("tally") or {}).items() if not isinstance(v, list)}
            or None,
            "store_after": (r.get("fault") or {}).get("store_after"),
            "notes": r.get("notes")}, indent=2) + "\n")
        if (run_dir / "soak.png").exists():  # the page shows this run's chart
            out.append(data.parent / "soak.png")
            shutil.copyfile(run_dir / "soak.png", out[-1])
    if (run_dir / "perf.json").exists():  # the table's figures, not each round's record
        out.append(data / f"{run_id}-perf-clients.json")
        out[-1].write_text(json.dumps(perf_table(json.loads((run_dir / "perf.json")
                                                            .read_text())), indent=2) + "\n")
    rows_of.cache_clear()
    published.cache_clear()
    return out


ROLE_KEEP = ("loop", "client", "ratio_spread", "tuned", "vs_cli")
ONE_CPU_KEEP = ("cpu_us_per_msg", "ratio", "common", "rates")


def perf_table(doc: dict) -> dict:
    """What a page quotes from a perf run: its rule and settings, and each row's medians,
    spreads and ratios (without each round's record)."""
    table = []
    for row in doc["table"]:
        kept = {k: row[k] for k in ("client", "size", "count", "skip", "one_cpu_count",
                                     "one_cpu_skip") if k in row}
        for role in ("send", "recv"):
            d = row[role]
            kept[role] = {k: d[k] for k in ROLE_KEEP if k in d}
            if "tuned" in d:
                kept[role]["tuned"] = {k: v for k, v in d["tuned"].items() if k != "rounds"}
            if "one_cpu" in d:
                kept[role]["one_cpu"] = {k: d["one_cpu"][k] for k in ONE_CPU_KEEP
                                         if k in d["one_cpu"]}
        table.append(kept)
    return {**{k: doc[k] for k in ("kind", "rule", "rounds", "warmup", "tuned", "counts",
                                   "counts_jvm", "counts_jvm_one_cpu", "broker_version",
                                   "broker_memory", "one_cpu") if k in doc},
            # a run before perf.json named its target judged against 0.95 (its rule says so)
            "target": doc.get("target", 0.95), "table": table}


def _ran_to_end(run_dir: Path, manifest: dict) -> bool:
    """The run measured every point it planned, some failed or were skipped and some held (a
    run interrupted, or failed before its points, is not published even partially)."""
    try:
        with open(run_dir / "summary.csv", newline="") as f:
            held = any(r.get("status") == "ok" and r.get("point") != "calibration"
                       for r in csv.DictReader(f))
    except OSError:
        return False
    return bool(manifest.get("finished")) and held and (
        manifest.get("failed_points", 0) + manifest.get("skipped_points", 0)) > 0
