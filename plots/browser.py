"""The browser chart (profile ``browser``): @stomp/stompjs in Chromium tabs beside the same
library on Node, same broker: receive rate under a flood (left) and latency under a paced load
(right), by tabs and by message size. Failed points are marked, never drawn."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt

from plots.charts import (
    LEGEND_OUTSIDE,
    _busiest_note,
    _color,
    _finish,
    _mark_not_drawn,
    _not_drawn,
    _num,
    _rates,
    _series,
    _thousands,
    _whisker,
)

# (flood axis, paced axis, x key, x label, log x, file)
CHARTS = (
    ("browser-tabs", "browser-tabs-paced", "consumers", "competing consumers (tabs of one "
     "Chromium / Node processes)", False, "browser-by-tabs.png"),
    ("browser-size", "browser-size-paced", "size", "body bytes (log)", True,
     "browser-by-size.png"),
)


def render(manifest: dict, by_axis: dict[str, list[dict]], charts: Path) -> list[Path]:
    """Draw the browser charts the run has points for; takes their axes out of ``by_axis``."""
    written = []
    for flood_axis, paced_axis, x_key, xlabel, logx, name in CHARTS:
        flood = by_axis.pop(flood_axis, [])
        paced = by_axis.pop(paced_axis, [])
        if flood or paced:
            written.append(chart(manifest, flood, paced, x_key, xlabel, logx, charts / name))
    return written


def chart(manifest, flood, paced, x_key: str, xlabel: str, logx: bool, path: Path) -> Path:
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5))
    for label, pts in sorted(_series(flood, x_key).items()):
        pts.sort(key=lambda xp: xp[0])
        med, lo, hi = _rates(pts, "recv")
        _whisker(left, [x for x, _ in pts], med, lo, hi, f"{label} receive", color=_color(label))
    _mark_not_drawn(left, [(float(x), f"{s} {why}") for x, s, why in _not_drawn(flood, x_key)
                           if isinstance(x, (int, float))])
    left.set_ylabel("receive msg/s (median of the measured bursts, min-max)")
    left.set_title("Receive rate, a flood")
    _thousands(left)
    for label, pts in sorted(_series(paced, x_key).items()):
        pts.sort(key=lambda xp: xp[0])
        xs = [x for x, _ in pts]
        lat = [p.get("latency_ms") or {} for _, p in pts]
        color = _color(label)
        right.plot(xs, [_num(v.get("p50")) for v in lat], "-", marker="o", color=color,
                   label=f"{label} p50")
        right.plot(xs, [_num(v.get("p99")) for v in lat], "--", marker="x", color=color,
                   label=f"{label} p99")
    _mark_not_drawn(right, [(float(x), f"{s} {why}") for x, s, why in _not_drawn(paced, x_key)
                            if isinstance(x, (int, float))])
    rate = next((p["parameters"].get("rate") for p in paced if p.get("parameters")), None)
    right.set_ylabel("latency ms, from the intended send time")
    right.set_title(f"Latency, paced at {rate:g} msg/s" if rate else "Latency, paced")
    xs_all = sorted({x for pts in (flood, paced) for x, _ in
                     (xp for v in _series(pts, x_key).values() for xp in v)})
    for ax in (left, right):
        if logx:
            ax.set_xscale("log", base=2)
        if xs_all:  # the measured values, in the units a reader uses
            ax.set_xticks(xs_all, [f"{x:,}" for x in xs_all])
            ax.minorticks_off()
        ax.set_xlabel(xlabel)
        ax.grid(alpha=0.3, which="both")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(**LEGEND_OUTSIDE)
    fig.suptitle("@stomp/stompjs in Chromium tabs vs on Node, same broker and producer")
    return _finish(fig, left, manifest, [*flood, *paced], path, _busiest_note([*flood, *paced]))
