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
    counts = {x for pts in series.values() for x, _ in pts} | {
        x for x, _s, _w in not_drawn(points, "consumers")}
    if len(counts) == 1:  # one count (the ten-thousand axis): a column per series
        return _chart_one_count(manifest, points, path, next(iter(counts)))
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
    marks = _grouped_marks(points)
    for ax in axes.flat:
        ax.set_xscale("log")
        style.ticks_at(ax, "x", xs_all + [x for x, _ in marks])
        ax.grid(alpha=0.3)
        mark_not_drawn(ax, marks)
    for ax in axes[1]:
        ax.set_xlabel("concurrent consumers (as many paced producers), log")
    _label_panels(axes, rows, bool(rows["lat"]), "p99 solid, p50 dotted",
                  f"all connected; {MEMORY_FROM:,}+ connections")
    legend_of(fig, rate_ax)
    fig.suptitle(title("Concurrent connections", points))
    return finish_chart(fig, rate_ax, manifest, points, path, _threads_note(points))


def _label_panels(axes, rows: dict, log_latency: bool, latency_key: str, memory_when: str):
    """The four panels' scales, labels and titles (both layouts)."""
    (rate_ax, lat_ax), (mem_ax, conn_ax) = axes
    style.scale_to_data(rate_ax, rows["rate"], bottom=0)
    rate_ax.set_ylabel("receive msg/s (median, min-max)")
    rate_ax.set_title("receive rate at the fixed offered load", fontsize=10)
    if log_latency:  # (a log axis of nothing cannot be drawn)
        lat_ax.set_yscale("log")
    lat_ax.set_ylabel(f"latency ms ({latency_key}), log")
    lat_ax.set_title("latency under the paced load", fontsize=10)
    style.scale_to_data(mem_ax, rows["mem"], bottom=0)
    mem_ax.set_ylabel("broker resident KiB per connection")
    mem_ax.set_title(f"broker memory per connection ({memory_when})", fontsize=10)
    style.scale_to_data(conn_ax, rows["conn"], bottom=0)
    conn_ax.set_ylabel("seconds until every client said ready")
    conn_ax.set_title("time to connect all clients", fontsize=10)


def _grouped_marks(points: list[dict]) -> list[tuple[float, str]]:
    """One mark per count and reason: the series refused for the same limit at the same count
    (every library at 10,000 + 10,000 here) named once, not stacked on each other."""
    by: dict[tuple[float, str], list[str]] = {}
    for x, s, why in not_drawn(points, "consumers"):
        if isinstance(x, (int, float)):
            by.setdefault((float(x), why), []).append(s)
    return [(x, f"{names[0]} {why}" if len(names) == 1 else f"{len(names)} series {why}")
            for (x, why), names in sorted(by.items())]


def _connector(p: dict) -> str:
    params = p.get("parameters") or {}
    if str(params.get("broker") or "").startswith("artemis"):
        return "Artemis"
    if params.get("transport") == "nio":
        return "Classic nio"
    ws = all(not c.endswith(":tcp") and c.startswith("stompjs")
             for c in (params.get("consumer") or [""]))
    return "Classic WebSocket" if ws else "Classic tcp"


def _threads_note(points: list[dict]) -> str:
    """The broker's threads per connection at each series' largest point, by connector (tcp's
    thread per connection against nio's selector and Artemis's Netty), in one line."""
    by: dict[str, list[float]] = {}
    for pts in series_of(points, "consumers").values():
        _x, p = max(pts, key=lambda xp: num(xp[0]))
        thr = broker_cost(p)[1]
        if math.isfinite(thr):
            by.setdefault(_connector(p), []).append(thr)
    if not by:
        return ""
    return "broker threads per connection at each series' largest count: " + "; ".join(
        f"{c} {min(v):.2f}" + (f"-{max(v):.2f}" if max(v) - min(v) >= 0.005 else "")
        for c, v in sorted(by.items()))


def _chart_one_count(manifest, points, path: Path, count) -> Path:
    """The same four figures at a single count of consumers, a column per series (a line
    over one x value would be a point on a collapsed axis)."""
    series = series_of(points, "consumers")
    styles = _styles(series)
    missing = {s: why for _x, s, why in not_drawn(points, "consumers")}
    labels = sorted(set(series) | set(missing))
    xs = range(len(labels))
    fig, axes = plt.subplots(2, 2, figsize=(12.5, 8.5), sharex=True)
    (rate_ax, lat_ax), (mem_ax, conn_ax) = axes
    rows: dict[str, list] = {"rate": [], "mem": [], "conn": []}
    lat_any = False
    for i, label in enumerate(labels):
        if label not in series:
            continue
        p = series[label][0][1]
        st = styles[label]
        kw = {"marker": st["marker"], "color": st["color"], "linestyle": "none"}
        med, lo, hi = rates(series[label], "recv")
        whisker(rate_ax, [i], med, lo, hi, label, **kw)
        rows["rate"].append((i, med[0], lo[0], hi[0], st["color"]))
        p99, p50 = window_latency(p, "p99"), window_latency(p, "p50")
        if math.isfinite(p99[0]) and p99[0] > 0:
            lat_any = True
            whisker(lat_ax, [i], [p99[0]], [p99[1]], [p99[2]], None, **kw)
        if math.isfinite(p50[0]) and p50[0] > 0:
            lat_any = True
            lat_ax.plot([i], [p50[0]], marker="_", markersize=14, color=st["color"],
                        linestyle="none")
        kib = broker_cost(p)[0] if _slots(p) >= MEMORY_FROM else math.nan
        mem_ax.plot([i], [kib], markersize=6, **kw)
        rows["mem"].append((i, kib, kib, kib, st["color"]))
        secs = connect_seconds(p)
        conn_ax.plot([i], [secs], markersize=6, **kw)
        rows["conn"].append((i, secs, secs, secs, st["color"]))
    marks = [(float(labels.index(s)), why) for s, why in missing.items()]
    producers = {int(num(p["parameters"].get("producers") or 0)) for p in points}
    with_producers = (f", {producers.pop():,} paced producers" if len(producers) == 1
                      else ", paced producers")
    for ax in axes.flat:
        ax.set_xticks(list(xs), labels, rotation=30, ha="right", fontsize=8)
        ax.set_xlim(-0.6, len(labels) - 0.4)
        ax.grid(alpha=0.3, axis="y")
        mark_not_drawn(ax, marks)
    for ax in axes[1]:
        ax.set_xlabel(f"{int(num(count)):,} concurrent consumers{with_producers}")
    _label_panels(axes, rows, lat_any, "p99 min-max; p50 a dash", "all connected")
    from matplotlib.lines import Line2D
    kinds = {}  # the marker tells the connector, the colour the library (as on the x axis)
    for label in series:
        p = series[label][0][1]
        kinds.setdefault(_connector(p), styles[label]["marker"])
    style.legend_beside(fig, [Line2D([], [], marker=m, color="#555555", linestyle="none")
                        for m in kinds.values()], list(kinds))
    fig.suptitle(title(f"{int(num(count)):,} concurrent consumers", points))
    return finish_chart(fig, rate_ax, manifest, points, path, _threads_note(points))
