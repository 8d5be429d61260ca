"""The browser chart (profile ``browser``): @stomp/stompjs in Chromium tabs beside the same
library on Node, same broker: receive rate under a flood (left) and latency under a paced load
(right), by tabs and by message size. Failed points are marked, never drawn."""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib.pyplot as plt

from burstbench.plots import style
from burstbench.plots.figure import (
    busiest_note,
    finish_chart,
    mark_not_drawn,
    not_drawn,
    num,
    rates,
    series_of,
    styles_of,
    title,
    whisker,
)

# (flood axis, paced axis, x key, x label, log x, file)
CHARTS = (
    ("browser-tabs", "browser-tabs-paced", "consumers",
     "competing consumers (tabs of one Chromium / Node processes)", False,
     "browser-by-tabs.png"),
    ("browser-size", "browser-size-paced", "size", "body size (log)", True,
     "browser-by-size.png"),
)


def render(manifest: dict, by_axis: dict[str, list[dict]], charts: Path) -> list[Path]:
    """Draw the browser charts of ``by_axis`` (the axes whose profile declares ``chart:
    browser``), each flood axis with its paced twin as ``CHARTS`` pairs them."""
    known = {a for c in CHARTS for a in c[:2]}
    if set(by_axis) - known:
        raise ValueError(f"chart browser: no browser chart for axis "
                         f"{', '.join(sorted(set(by_axis) - known))} (have: "
                         f"{', '.join(sorted(known))})")
    written = []
    for flood_axis, paced_axis, x_key, xlabel, logx, name in CHARTS:
        flood = by_axis.pop(flood_axis, [])
        paced = by_axis.pop(paced_axis, [])
        if flood or paced:
            written.append(chart(manifest, flood, paced, x_key, xlabel, logx, charts / name))
    return written


def chart(manifest, flood, paced, x_key: str, xlabel: str, logx: bool, path: Path) -> Path:
    fig, (left, right) = plt.subplots(1, 2, figsize=(14, 5))
    flood_series, paced_series = series_of(flood, x_key), series_of(paced, x_key)
    styles = styles_of({**paced_series, **flood_series})
    rows = []
    for label, pts in sorted(flood_series.items()):
        pts.sort(key=lambda xp: xp[0])
        med, lo, hi = rates(pts, "recv")
        xs = [x for x, _ in pts]
        st = styles[label]
        whisker(left, xs, med, lo, hi, f"{label} receive", marker=st["marker"],
                 color=st["color"])
        rows += [(x, m, low, h, st["color"]) for x, m, low, h in zip(xs, med, lo, hi)]
    mark_not_drawn(left, [(float(x), f"{s} {why}") for x, s, why in not_drawn(flood, x_key)
                           if isinstance(x, (int, float))])
    style.scale_to_data(left, rows, bottom=0)
    left.set_ylabel("receive msg/s (median of the measured bursts, min-max)")
    left.set_title("Receive rate, a flood")
    too_few = []
    for label, pts in sorted(paced_series.items()):
        pts.sort(key=lambda xp: xp[0])
        xs = [x for x, _ in pts]
        lat = [p.get("latency_ms") or {} for _, p in pts]
        color = styles[label]["color"]
        for key, ls, mk in (("p50", "-", "o"), ("p99", "--", "x")):
            ys = [num(v.get(key)) for v in lat]
            if any(math.isfinite(y) for y in ys):  # a percentile with too few samples is no line
                right.plot(xs, ys, ls, marker=mk, color=color, label=f"{label} {key}")
            else:
                too_few.append(f"{label} {key}")
    mark_not_drawn(right, [(float(x), f"{s} {why}") for x, s, why in not_drawn(paced, x_key)
                            if isinstance(x, (int, float))])
    right.set_ylim(bottom=0)
    rate = next((p["parameters"].get("rate") for p in paced if p.get("parameters")), None)
    right.set_ylabel("latency ms, from the intended send time")
    right.set_title(f"Latency, paced at {rate:,.0f} msg/s" if rate else "Latency, paced")
    xs_all = sorted({x for pts in (flood, paced) for x, _ in
                     (xp for v in series_of(pts, x_key).values() for xp in v)})
    for ax in (left, right):
        if logx:
            ax.set_xscale("log", base=2)
        # the measured values, in the units a reader uses
        style.ticks_at(ax, "x", xs_all, unit="bytes" if x_key == "size" else "")
        ax.set_xlabel(xlabel)
        ax.grid(alpha=0.3, which="both")
    h1, l1 = left.get_legend_handles_labels()
    h2, l2 = right.get_legend_handles_labels()
    style.legend_beside(fig, h1 + h2, l1 + l2)
    fig.suptitle(title("Receive rate and latency: @stomp/stompjs in Chromium tabs vs on Node, "
                       "same broker and producer", [*flood, *paced]))
    note = busiest_note([*flood, *paced])
    if too_few:
        note += ("; " if note else "") + "not drawn, too few samples for the percentile: " \
            + ", ".join(too_few)
    return finish_chart(fig, left, manifest, [*flood, *paced], path, note)
