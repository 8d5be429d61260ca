"""What every chart shares: which points may become figures and why the others are not
drawn, series and their styles, whiskers, the busiest process at the peak, the footer, and
finishing a figure (numbers in a reader's form, labels off each other, saved and closed).

``burstbench/plots/charts.py`` draws the sweep axes' charts with these; the browser, soak and
studies charts use them too, so none of them needs another chart module.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from burstbench.plots import style


def num(v) -> float:
    return float(v) if isinstance(v, (int, float)) else math.nan


def brokers_named(points: list[dict]) -> str:
    """The brokers the points ran on, as their result files name them: ``ActiveMQ Classic
    6.1.7``, or ``ActiveMQ Classic 6.1.7 + ActiveMQ Artemis 2.44.0`` for a chart of both."""
    seen: list[str] = []
    for p in points:
        b = p.get("versions", {}).get("broker", {})
        if b.get("version"):
            name = f"{b.get('name') or 'ActiveMQ Classic'} {b['version']}"
            if name not in seen:
                seen.append(name)
    return " + ".join(seen) or "ActiveMQ ?"


def _names(v) -> str:
    return ",".join(map(str, v)) if isinstance(v, (list, tuple)) else str(v)


def clients_named(points: list[dict]) -> str:
    """The clients the points ran, as a title says them: ``stomp-py -> stomp-py`` (one pair),
    ``net-stomp, stomp-py, each to itself`` (each client with itself), ``a -> b, c -> d``."""
    pairs: list[tuple[str, str]] = []
    for p in points:
        par = p.get("parameters") or {}
        if par.get("producer") or par.get("consumer"):
            pair = (_names(par.get("producer") or "?"), _names(par.get("consumer") or "?"))
            if pair not in pairs:
                pairs.append(pair)
    if not pairs:
        return "clients not recorded"
    if len(pairs) == 1:
        return f"{pairs[0][0]} -> {pairs[0][1]}"
    if all(a == b for a, b in pairs):
        return ", ".join(a for a, _b in pairs) + ", each to itself"
    if len(pairs) <= 4:
        return ", ".join(f"{a} -> {b}" for a, b in pairs)
    names = sorted({n for pair in pairs for n in pair})
    return f"{len(pairs)} producer -> consumer pairs of " + ", ".join(names)


def title(what: str, points: list[dict]) -> str:
    """A chart's title: what was measured, then with which clients."""
    return f"{what}\nclients: {clients_named(points)}"


def footer(manifest: dict, points: list[dict]) -> str:
    m = manifest.get("machine", {})
    date = (manifest.get("started") or dt.date.today().isoformat())[:10]
    ref = (manifest.get("calibration") or {}).get("reference") or {}
    cal = (f" | calibration ref {ref['recv_msgs_per_s']:,.0f} msg/s ({ref['min']:,.0f}-"
           f"{ref['max']:,.0f})" if isinstance(ref.get("recv_msgs_per_s"), (int, float))
           else "")
    commit = manifest.get("git_commit", "?")
    return (
        f"{brokers_named(points)} | {m.get('cpu', '?')} | {m.get('cores', '?')} cores | "
        f"{date} | commit {commit} | run {manifest.get('run_id')}{cal}"
        f"{style.drawn_at(commit)}"
    )


def finish_figure(fig, path: Path, footer_text: str, note: str = "") -> Path:
    """Footer (and note) under the axes, numbers everywhere in a reader's form, the legend
    beside the axes, labels moved off each other; then saved and closed."""
    fig.text(0.01, 0.005, style.no_paths(footer_text), fontsize=6.5, color=style.FOOTER_COLOR,
             ha="left", va="bottom")
    if note:  # under the plot, above the footer: never on top of data or legend
        fig.text(0.01, 0.03, style.no_paths(note), fontsize=7, color="#333333", ha="left",
                 va="bottom")
    style.explain_marks(fig)
    style.numbers_everywhere(fig)
    right = top = 1.0
    if fig.legends or fig.get_suptitle():
        fig.canvas.draw()  # (one draw measures both)
    if fig.legends:
        width = max(lg.get_window_extent().width for lg in fig.legends)
        right = 1.0 - (width + 12) / fig.bbox.width
    if fig.get_suptitle():  # room for every line of it
        top = 1.0 - (fig._suptitle.get_window_extent().height + 12) / fig.bbox.height
    for lg in fig.legends:  # beside the axes, under every line of the title
        lg.set_bbox_to_anchor((0.995, top), transform=fig.transFigure)
    rect = (0, 0.06 if note else 0.035, right, top)
    fig.tight_layout(rect=rect)
    if style.turn_crowded_ticks(fig):
        fig.tight_layout(rect=rect)
    style.place_labels(fig)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def finish_chart(fig, ax, manifest, points, path: Path, note: str = "") -> Path:
    return finish_figure(fig, path, footer(manifest, points), note)


def drawable(p: dict) -> bool:
    """A point that may become a figure: finished ok, with throughput."""
    return p.get("status") == "ok" and bool(p.get("throughput"))


def why_not(p: dict) -> str:
    """Why a point is not drawn, in a few words: ``failed: 23,800 lost``, ``skipped: ...``."""
    errors = p.get("errors") or []
    if p.get("status") == "skipped":
        return "skipped: " + (errors[0][:48] if errors else "no reason given")
    lost = (p.get("accounting") or {}).get("lost")
    if lost:
        return f"{p.get('status', 'failed')}: {lost:,} lost"
    return f"{p.get('status', 'failed')}: " + (errors[0][:48] if errors else "no figure")


def mark_not_drawn(ax, marks: list[tuple[float, str]]) -> None:
    """A failed or skipped point: a cross on the x axis with its reason, never a value (on
    the axis itself, whatever the y scale: a log axis has no 0)."""
    on_axis = ax.get_xaxis_transform()  # x in data, y in the axes' fraction
    for x, text in marks:
        ax.plot([x], [0], marker="X", color="#c0392b", markersize=9, clip_on=False, zorder=5,
                linestyle="none", gid=style.NOT_DRAWN, transform=on_axis)
        ann = ax.annotate(text, (x, 0), xycoords=on_axis, xytext=(3, 6),
                          textcoords="offset points", rotation=90, fontsize=6.5,
                          color="#c0392b", va="bottom", ha="left", annotation_clip=False)
        ann.set_in_layout(False)  # (a reason taller than a short panel defeats tight_layout)


def not_drawn(points: list[dict], x_key: str) -> list[tuple[object, str, str]]:
    """(x, series, reason) of every point that is not drawn."""
    out = []
    for p in points:
        if drawable(p):
            continue
        s = p.get("sweep", {})
        x = s.get("x", p.get("parameters", {}).get(x_key))
        out.append((x, s.get("series") or "default", why_not(p)))
    return out


def busiest_note(points: list[dict]) -> str:
    """Which process was busiest at the peak receive rate."""
    ok = [p for p in points if drawable(p)]
    if not ok:
        return ""
    peak = max(ok, key=lambda p: num(p["throughput"].get("recv_msgs_per_s")) or 0)
    b = peak.get("busiest") or {}
    if not b:
        return ""
    bound = "CPU-bound" if b.get("cpu_bound") else "not CPU-bound"
    note = (f"at the peak ({peak.get('point')}): busiest {b['process']} "
            f"{b['cpu_share']:.2f} cores, {bound}")
    if b.get("cores"):
        note += (f"; the machine {b['machine_busy_cores']:.2f} of {b['cores']} cores busy"
                 + (" (saturated: the machine bounds the figure)" if b.get("machine_saturated")
                    else ""))
    return note


def series_of(points: list[dict], x_key: str) -> dict[str, list[tuple]]:
    out: dict[str, list[tuple]] = defaultdict(list)
    for p in points:
        if not drawable(p):  # failed, incomplete and skipped points are never data
            continue
        s = p.get("sweep", {})
        label = s.get("series") or p["parameters"].get("label") or "default"
        x = s.get("x", p["parameters"].get(x_key))
        out[label].append((x, p))
    return out


def styles_of(series: dict[str, list[tuple]]) -> dict[str, dict]:
    return style.series_styles({k: [p for _x, p in v] for k, v in series.items()})


def whisker(ax, xs, med, lo, hi, label, marker="o", linestyle="-", color=None):
    yerr = [[max(0, m - low) for m, low in zip(med, lo)], [max(0, h - m) for m, h in zip(med, hi)]]
    return ax.errorbar(xs, med, yerr=yerr, label=label, marker=marker, linestyle=linestyle,
                       capsize=3, markersize=4, color=color)


def rates(pts, key):
    med = [num(p["throughput"][f"{key}_msgs_per_s"]) for _, p in pts]
    lo = [num(p["throughput"][f"{key}_min"]) for _, p in pts]
    hi = [num(p["throughput"][f"{key}_max"]) for _, p in pts]
    return med, lo, hi


def legend_of(fig, ax, **kw):
    handles, labels = ax.get_legend_handles_labels()
    return style.legend_beside(fig, handles, labels, **kw)


def window_latency(doc: dict, pct: str) -> tuple[float, float, float]:
    """A sustained point's latency percentile ``pct`` as its method gives a figure: the median
    with min and max over its measured 1-s windows that had the samples for one (NaNs when
    none had); the whole period's figure where the point has no windows (bursts)."""
    wins = [w for w in ((doc.get("sustained") or {}).get("windows") or {}).get("1s", [])
            if w.get("measured")]
    vals = sorted(v for w in wins if isinstance(v := (w.get("latency_ms") or {}).get(pct),
                                                   (int, float)))
    if not wins:
        v = num((doc.get("latency_ms") or {}).get(pct))
        return v, v, v
    if not vals:
        return math.nan, math.nan, math.nan
    n = len(vals)
    med = vals[n // 2] if n % 2 else (vals[n // 2 - 1] + vals[n // 2]) / 2
    return med, vals[0], vals[-1]


def color_of(label: str):
    """The colour of a client's series (style.CLIENT_STYLES), or None."""
    st = style.client_style(str(label))
    return st["color"] if st else None

def ref_label(ax, y: float, text: str, x: float = 1.0, ha: str = "right") -> None:
    """A reference line's label just above it (at the right edge by default); the label
    placer moves it off any other text."""
    ax.annotate(text, (x, y), xycoords=("axes fraction", "data"),
                xytext=(-2 if ha == "right" else 2, 2), va="bottom", ha=ha, **style.REF_LABEL)
