"""The connections axis's chart: what thousands of concurrent clients cost the broker.

Four panels over the number of concurrent consumers (as many producers beside them, the
offered load fixed): the receive rate, p50 and p99 latency under that paced load, the broker's
resident memory per connection (from 1,000 connections), and the time the clients took to
connect. A series per library and broker: Classic's ``tcp`` connectors (a thread per
connection), its ``nio`` ones (a selector), Artemis (Netty).
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from burstbench.plots import style
from burstbench.plots.figure import (
    finish_chart,
    legend_of,
    mark_not_drawn,
    not_drawn,
    num,
    rates,
    series_of,
    styles_of,
    title,
    whisker,
    window_latency,
)

MEMORY_FROM = 1000  # connections: a point with fewer has no memory per connection drawn


def _slots(p: dict) -> int:
    return int((p.get("connect") or {}).get("slots") or 0)


def broker_cost(p: dict) -> tuple[float, float]:
    """The started broker's resident KiB and threads per connection once every client was
    connected (NaN when the point did not start its broker)."""
    brokers = ((p.get("connect") or {}).get("brokers") or {}).values()
    kib = [b["rss_kib_per_connection"] for b in brokers if "rss_kib_per_connection" in b]
    thr = [b["threads_per_connection"] for b in brokers if "threads_per_connection" in b]
    return (sum(kib) if kib else math.nan), (sum(thr) if thr else math.nan)


def connect_seconds(p: dict) -> float:
    c = p.get("connect") or {}
    if "consumers_ready_s" not in c:
        return math.nan
    return c["consumers_ready_s"] + c["producers_ready_s"]


def _styles(series: dict[str, list[tuple]]) -> dict[str, dict]:
    """A series in its client's colour (as in every chart), its broker and transport told by
    the line: Classic tcp solid, Classic nio dashed, Artemis dash-dotted."""
    out = styles_of(series)
    for label, pts in series.items():
        params = pts[0][1].get("parameters") or {}
        client = style.client_style((params.get("consumer") or [""])[0])
        if client is None:
            continue
        if str(params.get("broker") or "").startswith("artemis"):
            line, marker = "-.", "^"
        else:
            line, marker = ("--", "s") if params.get("transport") == "nio" else ("-", "o")
        out[label] = {**out[label], "color": client["color"], "linestyle": line, "marker": marker}
    return out


def chart_by_connections(manifest, points, path: Path) -> Path:
    series = series_of(points, "consumers")
    styles = _styles(series)
    fig, axes = plt.subplots(2, 2, figsize=(12.5, 8.5), sharex=True)
    (rate_ax, lat_ax), (mem_ax, conn_ax) = axes
    xs_all: list = []
    rows: dict[str, list] = {"rate": [], "lat": [], "mem": [], "conn": []}
    for label, pts in sorted(series.items()):
        pts.sort(key=lambda xp: xp[0])
        xs = [x for x, _ in pts]
        xs_all += xs
        st = styles[label]
        line = {"marker": st["marker"], "linestyle": st["linestyle"], "color": st["color"]}
        med, lo, hi = rates(pts, "recv")
        whisker(rate_ax, xs, med, lo, hi, label, **line)
        rows["rate"] += [(x, m, a, b, st["color"]) for x, m, a, b in zip(xs, med, lo, hi)]
        for pct, dash in (("p50", ":"), ("p99", st["linestyle"])):
            lat = [window_latency(p, pct) for _, p in pts]
            rows["lat"] += [v[0] for v in lat if math.isfinite(v[0]) and v[0] > 0]
            whisker(lat_ax, xs, [v[0] for v in lat], [v[1] for v in lat], [v[2] for v in lat],
                    None, marker=st["marker"], linestyle=dash, color=st["color"])
        # (below MEMORY_FROM connections the broker's other allocations dominate the growth)
        kib = [broker_cost(p)[0] if _slots(p) >= MEMORY_FROM else math.nan for _, p in pts]
        mem_ax.plot(xs, kib, markersize=4, **line)
        rows["mem"] += [(x, v, v, v, st["color"]) for x, v in zip(xs, kib)]
        secs = [connect_seconds(p) for _, p in pts]
        conn_ax.plot(xs, secs, markersize=4, **line)
        rows["conn"] += [(x, v, v, v, st["color"]) for x, v in zip(xs, secs)]
    marks = [(float(x), f"{s} {why}") for x, s, why in not_drawn(points, "consumers")
             if isinstance(x, (int, float))]
    for ax in axes.flat:
        ax.set_xscale("log")
        style.ticks_at(ax, "x", xs_all)
        ax.grid(alpha=0.3)
        mark_not_drawn(ax, marks)
    for ax in axes[1]:
        ax.set_xlabel("concurrent consumers (as many paced producers), log")
    style.scale_to_data(rate_ax, rows["rate"], bottom=0)
    rate_ax.set_ylabel("receive msg/s (median, min-max)")
    rate_ax.set_title("receive rate at the fixed offered load", fontsize=10)
    if rows["lat"]:  # (a log axis of nothing cannot be drawn)
        lat_ax.set_yscale("log")
    lat_ax.set_ylabel("latency ms (p99 solid, p50 dotted), log")
    lat_ax.set_title("latency under the paced load", fontsize=10)
    style.scale_to_data(mem_ax, rows["mem"], bottom=0)
    mem_ax.set_ylabel("broker resident KiB per connection")
    mem_ax.set_title(f"broker memory per connection (all connected; {MEMORY_FROM:,}+ connections)",
                     fontsize=10)
    style.scale_to_data(conn_ax, rows["conn"], bottom=0)
    conn_ax.set_ylabel("seconds until every client said ready")
    conn_ax.set_title("time to connect all clients", fontsize=10)
    legend_of(fig, rate_ax)
    fig.suptitle(title("Concurrent connections", points))
    return finish_chart(fig, rate_ax, manifest, points, path, _threads_note(points))


def _threads_note(points: list[dict]) -> str:
    """The broker's threads at the largest point of each series: tcp's thread per connection
    against nio's selector, in words."""
    best: dict[str, tuple[float, float]] = {}
    for label, pts in series_of(points, "consumers").items():
        x, p = max(pts, key=lambda xp: num(xp[0]))
        thr = broker_cost(p)[1]
        if math.isfinite(thr):
            best[label] = (x, thr)
    if not best:
        return ""
    return "broker threads per connection at the largest point: " + "; ".join(
        f"{label} {thr:.2f} ({int(x):,} consumers)" for label, (x, thr) in sorted(best.items()))
