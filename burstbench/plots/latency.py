"""The latency charts: latency (or time in queue) against offered load, by category, the
find-max probes, and the TCP_NODELAY remedy."""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.lines import Line2D

from burstbench import profiles
from burstbench.plots import style
from burstbench.plots.figure import (
    busiest_note,
    color_of,
    drawable,
    finish_chart,
    legend_of,
    mark_not_drawn,
    not_drawn,
    num,
    ref_label,
    series_of,
    styles_of,
    title,
    whisker,
    why_not,
    window_latency,
)
from burstbench.plots.style import REF_STYLE


def chart_latency_by_category(manifest, points, axis: str, x_key: str, path: Path, *,
                              order=None, ticks: dict[str, str] | None = None) -> Path:
    """Paced points: p50 and p99 latency (from the intended send time) per category value,
    one bar per series, each the median over the measured 1-s windows with their min-max
    (``window_latency``)."""
    series = series_of(points, x_key)
    missing = not_drawn(points, x_key)
    raw = {str(x): x for pts in series.values() for x, _p in pts}
    raw.update({str(x): x for x, _s, _w in missing if str(x) not in raw})
    cats = [c for c in (order or sorted(raw)) if c in raw]
    styles = styles_of(series)
    fig, axes = plt.subplots(1, 2, figsize=(13.5, 5), sharex=True)
    width = 0.8 / max(1, len(series))
    labels = sorted(series)
    for ax, pct in zip(axes, ("p50", "p99")):
        rows = []
        for si, label in enumerate(labels):
            by = {str(x): p for x, p in series[label]}
            xs, med, lo, hi = [], [], [], []
            for ci, c in enumerate(cats):
                if c not in by:
                    continue
                v, low, high = window_latency(by[c], pct)
                xs.append(ci - 0.4 + width * (si + 0.5))
                med.append(v)
                lo.append(low)
                hi.append(high)
            st = styles[label]
            bars = ax.bar(xs, med, width, label=label, color=st["color"], edgecolor="white",
                          yerr=[[max(0, m - x) for m, x in zip(med, lo)],
                                [max(0, h - m) for m, h in zip(med, hi)]],
                          capsize=2, error_kw={"ecolor": "#333333"})
            for bar in bars:
                if st["hatch"]:
                    bar.set_hatch(st["hatch"])
            rows += [(x, m, a, b, "#333333") for x, m, a, b in zip(xs, med, lo, hi)]
        mark_not_drawn(ax, [
            (cats.index(str(x)) - 0.4 + width * ((labels.index(sr) if sr in labels else 0)
                                                 + 0.5), f"{sr} {why}")
            for x, sr, why in missing if str(x) in cats])
        style.scale_to_data(ax, rows, bottom=0)
        ax.set_xticks(range(len(cats)), [(ticks or {}).get(c, c) for c in cats])
        ax.set_xlabel(axis)
        ax.set_ylabel(f"{pct} latency ms (median of 1-s windows, min-max)")
        ax.set_title(f"{pct} latency at a paced rate", fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    if len(series) > 1:
        legend_of(fig, axes[0])
    rates = sorted({num((p.get("parameters") or {}).get("rate")) for p in points})
    fig.suptitle(title(f"Latency by {axis}, producers paced at "
                       + ", ".join(f"{r:,.0f}" for r in rates if not math.isnan(r))
                       + " msg/s each", points))
    return finish_chart(fig, axes[0], manifest, points, path, busiest_note(points))

def too_few_loads(few: list[tuple[str, int]]) -> str:
    """The note of the series (name, offered loads) with fewer loads than a curve needs."""
    if not few:
        return ""
    return (f"fewer offered loads than the {profiles.MIN_LOADS} a curve needs, drawn as points, "
            f"not joined: " + ", ".join(f"{s} ({n})" for s, n in few))

def chart_latency(manifest, points, path: Path) -> Path:
    """Latency percentiles (from the intended send time) versus offered load, per series; a
    series with fewer than ``profiles.MIN_LOADS`` offered loads is drawn as points, never
    joined (two points and a line on a log axis look like a curve), and says so."""
    by_series: dict[str, list[tuple]] = defaultdict(list)
    for p in points:
        t, lat = p.get("throughput") or {}, p.get("latency_ms") or {}
        if not drawable(p):
            continue
        series = (p.get("sweep") or {}).get("series") or "default"
        offered = p["parameters"].get("rate", 0) * p["parameters"].get("producers", 1)
        if offered and lat:
            by_series[series].append((offered, False, lat))
        elif not offered:  # the flood that found the maximum: time in queue, not latency
            by_series[series].append((num(t.get("recv_msgs_per_s")), True, {}))
    styles = style.series_styles({s: points for s in by_series})
    fig, ax = plt.subplots(figsize=(10, 5))
    notes, any_paced = [], False
    looks = (("p50", "p50", "-", "o"), ("p99", "p99", "--", "s"),
             ("p99_9", "p99.9", "-.", "D"), ("max", "max", ":", "^"))
    for series, rows in sorted(by_series.items()):
        rows.sort(key=lambda r: r[0])
        paced = [r for r in rows if not r[1]]
        color = color_of(series) or styles[series]["color"]
        joined = len(paced) >= profiles.MIN_LOADS
        if paced and not joined:
            notes.append((series, len(paced)))
        for key, _label, ls, mk in looks:
            ys = [num(r[2].get(key)) for r in paced]
            if any(math.isfinite(y) and y > 0 for y in ys):
                any_paced = True
                ax.plot([r[0] for r in paced], ys, linestyle=ls if joined else "none",
                        marker=mk, markersize=4 if joined else 6, color=color)
        for x, unlimited, _lat in rows:
            if unlimited:
                ax.axvline(x, color="#888888", linewidth=0.8)
                ax.annotate(f"maximum (unlimited rate) {x:,.0f}", (x, 0.02),
                            xycoords=("data", "axes fraction"), xytext=(-2, 0),
                            textcoords="offset points", rotation=90, fontsize=7, ha="right",
                            va="bottom", color="#555555")
    if any_paced:
        ax.set_yscale("log")
    else:
        ax.annotate("no paced point finished ok: no latency to draw", (0.5, 0.5),
                    xycoords="axes fraction", ha="center", color="#c0392b")
    ax.set_xlabel("offered load, msg/s (all producers)")
    ax.set_ylabel("latency ms, from the intended send time (log)")
    ax.grid(alpha=0.3, which="both")
    handles = [Line2D([], [], color=color_of(s) or styles[s]["color"], linewidth=2)
               for s in sorted(by_series)]
    labels = sorted(by_series)
    handles += [Line2D([], [], color="#555555", linestyle=ls, marker=mk, markersize=4)
                for _k, _l, ls, mk in looks]
    labels += [label for _k, label, _ls, _mk in looks]
    style.legend_beside(fig, handles, labels)
    ax.set_title(title("Latency (percentiles over all merged records) versus offered load",
                       points))
    note = "; ".join(filter(None, [too_few_loads(notes), busiest_note(points)]))
    return finish_chart(fig, ax, manifest, points, path, note)

def _offered(p: dict) -> float:
    """A probe's offered rate, all producers together."""
    return p["parameters"]["rate"] * p["parameters"].get("producers", 1)

def _latency_axis(ax, bound: float | None) -> None:
    """A latency axis of find-max probes: the p99 bound as a labelled line, log scale when
    there is anything above zero to show."""
    if bound is not None:
        ax.axhline(bound, **REF_STYLE)
        ref_label(ax, bound, f"p99 bound {bound:g} ms", x=0.0, ha="left")
    if ax.lines and any(num(v) > 0 for line in ax.lines for v in line.get_ydata()):
        ax.set_yscale("log")

def chart_find_max(manifest, points, path: Path) -> Path:
    """The maximum sustainable rate per series: received against offered (the diagonal is
    keeping up), and p50/p99/p99.9 latency against offered (the hockey stick). Probes that
    held are filled, the others hollow; a failed probe is a cross with its reason."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(14, 5.2))
    by_series: dict[str, list[dict]] = defaultdict(list)
    for p in points:
        by_series[(p.get("sweep") or {}).get("series") or "default"].append(p)
    styles = style.series_styles(by_series)
    top = 0.0
    bound = None
    marks, notes = [], []
    n_held = 0
    for series, pts in sorted(by_series.items()):
        color = styles[series]["color"]
        rows, flood = [], None
        for p in pts:
            sw = p.get("sweep") or {}
            bound = sw.get("p99_bound_ms", bound)
            if not drawable(p):
                x = sw.get("x")
                marks.append((num(x) if x != "max" else 0.0, f"{series}: {why_not(p)}"))
                continue
            t, st = p["throughput"], p.get("sustained") or {}
            if sw.get("x") == "max":
                flood = num(t.get("recv_msgs_per_s"))
                continue
            offered = _offered(p)
            lat = p.get("latency_ms") or {}
            p99 = lat.get("p99")
            held = bool(st.get("keeps_up")) and p99 is not None and bound is not None \
                and p99 <= bound
            rows.append((offered, t, lat, held))
        rows.sort(key=lambda r: r[0])
        if not rows:
            continue
        xs = [r[0] for r in rows]
        top = max(top, *xs, flood or 0)
        med = [num(r[1].get("recv_msgs_per_s")) for r in rows]
        lo = [num(r[1].get("recv_min")) for r in rows]
        hi = [num(r[1].get("recv_max")) for r in rows]
        joined = len(rows) >= profiles.MIN_LOADS
        if not joined:
            notes.append((series, len(rows)))
        whisker(ax1, xs, med, lo, hi, None, color=color,
                linestyle="-" if joined else "none")
        for x, m, r in zip(xs, med, rows):
            ax1.plot([x], [m], marker="o", markersize=7, color=color,
                     markerfacecolor=color if r[3] else "white", linestyle="none")
        if flood:
            ax1.axhline(flood, color=color, linestyle=":", linewidth=1)
        held = [r[0] for r in rows if r[3]]
        if held:
            # each series' label at its own height: two maxima close together stay apart
            ax1.axvline(max(held), color=color, linestyle="--", linewidth=0.8)
            ax1.annotate(f"max {max(held):,.0f}", (max(held), 0.02 + 0.16 * (n_held % 6)),
                         xycoords=("data", "axes fraction"), xytext=(-2, 0),
                         textcoords="offset points", rotation=90, fontsize=7, ha="right",
                         va="bottom", color=color)
            n_held += 1
        for key, ls in FIND_MAX_PERCENTILES:
            ys = [num(r[2].get(key)) for r in rows]
            ax2.plot(xs, ys, linestyle=ls if joined else "none", marker="o", markersize=3,
                     color=color)
    ax1.plot([0, top * 1.05], [0, top * 1.05], color="#999999", linewidth=0.8)
    ax1.set_xlabel("offered msg/s (all producers)")
    ax1.set_ylabel("received msg/s (median, min-max of 1-s windows)")
    ax1.grid(alpha=0.3)
    ax1.set_title("Offered vs received (dotted: flood rate; dashed: the maximum sustainable "
                  "rate)", fontsize=9)
    mark_not_drawn(ax1, marks)
    _latency_axis(ax2, bound)
    ax2.set_xlim(ax1.get_xlim())
    ax2.set_xlabel("offered msg/s (all producers)")
    ax2.set_ylabel("latency ms from the intended send time (log)")
    ax2.grid(alpha=0.3, which="both")
    ax2.set_title("Latency vs offered load, sustained probes", fontsize=9)
    # one entry per series (its colour), then each marker and line kind once, in grey
    grey = "#555555"
    handles = [Line2D([], [], color=styles[s]["color"], linewidth=2) for s in sorted(by_series)]
    labels = sorted(by_series)
    handles += [Line2D([], [], color="#999999", linewidth=0.8),
                Line2D([], [], color=grey, marker="o", markersize=7, linestyle="none"),
                Line2D([], [], color=grey, marker="o", markersize=7, linestyle="none",
                       markerfacecolor="white")]
    labels += ["received = offered", "probe held", "probe did not hold"]
    handles += [Line2D([], [], color=grey, linestyle=ls, marker="o", markersize=3)
                for _key, ls in FIND_MAX_PERCENTILES]
    labels += [f"latency {key.replace('_', '.')}" for key, _ls in FIND_MAX_PERCENTILES]
    style.legend_beside(fig, handles, labels)
    fig.suptitle(title("Maximum sustainable rate: received and latency vs offered load",
                       points), fontsize=10)
    note = "; ".join(filter(None, [too_few_loads(notes), busiest_note(points)]))
    return finish_chart(fig, ax2, manifest, points, path, note)

FIND_MAX_PERCENTILES = (("p50", "-"), ("p99", "--"), ("p99_9", ":"))

def nodelay_pairs(points: list[dict]) -> dict[str, dict[bool, list[dict]]]:
    """find-max probes of a series measured both with the broker's connectors as shipped and
    with ``--tcp-nodelay``: series -> {tcp_nodelay: probes}. Only series that have both."""
    by: dict[str, dict[bool, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for p in points:
        sw = p.get("sweep") or {}
        if sw.get("kind") != "find-max" or sw.get("x") == "max" or not drawable(p):
            continue
        nd = bool((p.get("parameters") or {}).get("tcp_nodelay"))
        by[sw.get("series") or "default"][nd].append(p)
    return {s: dict(v) for s, v in by.items() if len(v) == 2}

def chart_nodelay_remedy(manifest, points, path: Path) -> Path:
    """p99 against offered load for each series, the broker's connectors as ActiveMQ ships them
    (Nagle on) against ``transport.tcpNoDelay=true``: the suspected remedy for the tail, beside
    the default, one panel per series (the clients keep their libraries' socket settings)."""
    pairs = nodelay_pairs(points)
    n = len(pairs)
    cols = 2 if n > 1 else 1
    rows_n = math.ceil(n / cols)
    fig, axes = plt.subplots(rows_n, cols, figsize=(7 * cols, 3.6 * rows_n), squeeze=False)
    styles = style.series_styles({s: both[False] + both[True] for s, both in pairs.items()})
    bound = None
    for ax, (series, both) in zip(axes.flat, pairs.items()):
        color = styles[series]["color"]
        for nd, ls, mk, word in ((False, "-", "o", "Nagle on (as shipped)"),
                                 (True, "--", "s", "TCP_NODELAY at the broker")):
            rows = []
            for p in both[nd]:
                bound = (p.get("sweep") or {}).get("p99_bound_ms", bound)
                offered = _offered(p)
                rows.append((offered, num((p.get("latency_ms") or {}).get("p99"))))
            rows.sort()
            ax.plot([r[0] for r in rows], [r[1] for r in rows], ls, marker=mk, markersize=4,
                    color=color, label=f"p99, {word}")
        _latency_axis(ax, bound)
        ax.set_title(series, fontsize=9)
        ax.set_xlabel("offered msg/s (all producers)")
        ax.set_ylabel("p99 ms (log)")
        ax.grid(alpha=0.3, which="both")
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    fig.suptitle(title("p99 latency vs offered load: the broker's connectors with Nagle on "
                       "(as shipped) and with TCP_NODELAY", points), fontsize=10)
    words = ("p99, Nagle on (as shipped)", "p99, TCP_NODELAY at the broker")
    # a marker of its own each: at a legend handle's length a dash alone reads as a line
    style.legend_beside(fig, [Line2D([], [], color="#555555", linestyle=ls, marker=mk,
                                     markersize=4) for ls, mk in (("-", "o"), ("--", "s"))],
                        list(words))
    return finish_chart(fig, axes.flat[0], manifest, points, path, busiest_note(points))
