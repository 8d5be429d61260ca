"""``results/<run-id>/report.html``: one self-contained page (charts embedded) per run,
rendered from the run's result files (``burstbench.measure.results.load_run``) through the Jinja2
templates in ``burstbench/plots/templates/``: ``report.html.j2`` for the page, ``table.html.j2`` the
one HTML table, ``blocks.html.j2`` / ``blocks.md.j2`` a study's headings, paragraphs, tables and
lists (burstbench/plots/studies.py builds them from ``pi.json`` / ``reqreply.json``)."""

from __future__ import annotations

import base64
import math
from pathlib import Path

from burstbench.measure import results
from burstbench.plots import studies
from burstbench.plots.figure import brokers_named
from burstbench.plots.pages import environment
from burstbench.plots.reliability import HEAD, rows

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; font-size: 0.82em; margin: 0.5em 0 1em; }
th, td { border: 1px solid #ddd; padding: 3px 7px; text-align: right; }
th { background: #f3f3f3; } td.l, th.l { text-align: left; }
tr.failed td { background: #fde8e8; } tr.skipped td { color: #888; }
figure { margin: 1em 0; } figure img { max-width: 100%; border: 1px solid #eee; }
.ok { color: #1a7f37; } .bad { color: #b42318; font-weight: bold; }
code { background: #f5f5f5; padding: 0 3px; }
"""


def _num(v, digits=0) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return f"{v:,.{digits}f}"


def chaos_blocks(doc: dict) -> list[dict]:
    """The reliability study from ``chaos.json``: its table, rule and the faults it struck."""
    return [
        {"type": "table", "head": HEAD, "rows": rows(doc.get("results") or [])},
        {"type": "para", "text": f"Rule: {doc.get('rule', '')}."},
        {"type": "list", "title": "Scenarios:",
         "items": [f"{k}: {v}" for k, v in (doc.get("scenarios") or {}).items()]},
    ] + ([{"type": "list", "title": "failover-pair, each library's own failover:",
           "items": [f"{k}: {v}" for k, v in doc["failover_how"].items()]}]
         if doc.get("failover_how") else [])


def _studies(run: results.RunFiles) -> list[dict]:
    out = []
    if "pi" in run.studies:
        out.append({"title": "Pi study", "blocks": studies.pi_blocks(run.studies["pi"])})
    if "reqreply" in run.studies:
        out.append({"title": "Request/reply study",
                    "blocks": studies.reqreply_blocks(run.studies["reqreply"])})
    if "runtimes" in run.studies:
        out.append({"title": "Akka and Pekko",
                    "blocks": studies.runtimes_blocks(run.studies["runtimes"])})
    if "chaos" in run.studies:
        out.append({"title": "Reliability under faults",
                    "blocks": chaos_blocks(run.studies["chaos"])})
    return out


def _point_rows(points: list[dict]) -> list[dict]:
    rows = []
    for p in points:
        t, lat, a = p.get("throughput") or {}, p.get("latency_ms") or {}, p.get("accounting") or {}
        if p.get("status") != "ok":  # a failed point's rates are no figure: counts only
            t, lat = {}, {}
        busy = p.get("busiest") or {}
        left = {"cls": "l"}
        rows.append({"cls": p.get("status", ""), "cells": [
            {**left, "text": p.get("point", "")}, {**left, "text": p.get("status", "")},
            _num(t.get("send_msgs_per_s")),
            (f"{_num(t.get('recv_msgs_per_s'))} ({_num(t.get('recv_min'))}-"
             f"{_num(t.get('recv_max'))})"),
            _num(lat.get("p50"), 2), _num(lat.get("p99"), 2),
            _num(a.get("sent")), _num(a.get("received")), _num(a.get("lost")),
            _num(a.get("duplicates")),
            {**left, "text": f"{busy.get('process', '')} "
                             f"{_num(busy.get('cpu_share'), 2) if busy else ''}"}]})
        for err in p.get("errors") or []:
            rows.append({"cls": "failed",
                         "cells": [{"cls": "l", "colspan": 11, "text": err}]})
    return rows


# the page opens as the blog does: its charts in its order, then the other throughput charts,
# then latency and the studies
BLOG_ORDER = ("throughput-by-consumers", "throughput-by-size", "throughput-by-queues",
              "throughput-by-persistence", "throughput-by-topology")


def chart_order(chart: Path) -> tuple:
    """Where a chart stands on the page: the blog's five first, in the blog's order."""
    if chart.stem in BLOG_ORDER:
        return (0, BLOG_ORDER.index(chart.stem), chart.stem)
    return (1 if chart.stem.startswith("throughput-") else 2, 0, chart.stem)


def context(run: results.RunFiles) -> dict:
    """What report.html.j2 shows, from the run's files."""
    manifest, points = run.manifest, run.points
    m = manifest.get("machine", {})
    versions: dict = {}
    for p in points:
        v = p.get("versions") or {}
        for name, info in (v.get("clients") or {}).items():
            versions[name] = info
    totals = {"sent": 0, "received": 0, "lost": 0, "duplicates": 0, "redelivered": 0}
    statuses: dict[str, int] = {}
    for p in points:
        statuses[p.get("status", "?")] = statuses.get(p.get("status", "?"), 0) + 1
        for k in totals:
            totals[k] += (p.get("accounting") or {}).get(k, 0) or 0
    lost_cls = "ok" if totals["lost"] == 0 else "bad"
    env = [("broker", brokers_named(points)), ("CPU", m.get("cpu")),
           ("cores", m.get("cores")), ("memory GiB", m.get("memory_gib")),
           ("kernel", m.get("kernel")), ("commit", manifest.get("git_commit")),
           ("command", " ".join(manifest.get("command") or []))]
    env += [(f"runtime {k}", v) for k, v in (manifest.get("runtimes") or {}).items()]
    env += [(f"client {k}", f"{v.get('library', '')} on {v.get('runtime', '')}"
             if isinstance(v, dict) else v) for k, v in sorted(versions.items())]
    cols = ("point", "status", "send msg/s", "recv msg/s (min-max)", "p50 ms", "p99 ms",
            "sent", "received", "lost", "dup", "busiest")
    return {
        "style": _STYLE,
        "run": {"id": manifest.get("run_id", ""), "status": str(manifest.get("status")),
                "points": len(points),
                "statuses": ", ".join(f"{v} {k}" for k, v in statuses.items()),
                "profile": str(manifest.get("profile", "-")),
                "started": str(manifest.get("started", ""))},
        "accounting": {"head": list(totals), "rows": [[
            {"cls": lost_cls if k == "lost" else "", "text": _num(v)}
            for k, v in totals.items()]]},
        "charts": [{"name": c.stem, "file": c.name,
                    "data": base64.b64encode(c.read_bytes()).decode()}
                   for c in sorted(run.charts, key=chart_order)],
        "studies": _studies(run),
        "points": {"head": [{"cls": "l", "text": c} for c in cols],
                   "rows": _point_rows(points)} if points else None,
        "environment": [[{"th": True, "cls": "l", "text": str(k)}, {"cls": "l", "text": str(v)}]
                        for k, v in env],
    }


def render(run: results.RunFiles | Path) -> Path:
    """Write the run's ``report.html``; takes a loaded run or its directory."""
    if not isinstance(run, results.RunFiles):
        run = results.load_run(run)
    out = run.dir / "report.html"
    out.write_text(environment().get_template("report.html.j2").render(context(run)))
    return out
