"""Result files in, PNG charts out. Imports nothing that starts a broker or a client.

Every chart shows medians over the measured bursts with min-max whiskers, the reference
studies' figures as labelled lines where comparable, the busiest process at the peak, and a
footer naming the environment.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import yaml  # noqa: E402

REFERENCES = yaml.safe_load((Path(__file__).parent / "references.yaml").read_text())
BLOG = REFERENCES["blog"]
REF_STYLE = {"color": "#b03a2e", "linestyle": ":", "linewidth": 1.4}

# One colour per client language in every chart (a tuned entry in the same hue family,
# lighter); anything else takes matplotlib's cycle.
CLIENT_COLORS = {
    "net-stomp": "#1f77b4", "net-stomp-tuned": "#7fb3e0",
    "stomp-py": "#2ca02c", "stomp-py-tuned": "#98df8a",
    "stompjs": "#d62728", "stompjs-tcp": "#8c1c13", "stompjs:tcp": "#8c1c13",
    "stompjs-tuned": "#ff9896", "stompjs:browser": "#e377c2",
    "openwire-jms": "#ff7f0e", "openwire-jms-tuned": "#ffbb78",
    "akka-bridge": "#9467bd",
}


# legends beside the plot, never over its data
LEGEND_OUTSIDE = {"fontsize": 7, "loc": "upper left", "bbox_to_anchor": (1.01, 1.0),
                  "borderaxespad": 0.0}


def _color(label: str):
    return CLIENT_COLORS.get(str(label))


def _thousands(ax, axis: str = "y") -> None:
    from matplotlib.ticker import FuncFormatter

    fmt = FuncFormatter(lambda v, _pos: f"{v:,.0f}")
    (ax.yaxis if axis == "y" else ax.xaxis).set_major_formatter(fmt)


def _ref_label(ax, y: float, text: str, i: int) -> None:
    """A reference line's label at the right edge, above the line for the first and below
    it for the next, so that two close lines never print over each other."""
    ax.annotate(text, (0.99, y), xycoords=("axes fraction", "data"), fontsize=7,
                color=REF_STYLE["color"], va="bottom" if i % 2 == 0 else "top", ha="right")


def _load(run_dir: Path) -> tuple[dict, list[dict]]:
    # results.load_run would do, but plots reads files on its own (no harness import needed)
    import json

    manifest = json.loads((run_dir / "run.json").read_text())
    points = []
    for p in sorted((run_dir / "points").glob("*.json")):
        points.append(json.loads(p.read_text()))
    return manifest, points


def _num(v) -> float:
    return float(v) if isinstance(v, (int, float)) else math.nan


def footer(manifest: dict, points: list[dict]) -> str:
    m = manifest.get("machine", {})
    broker = "?"
    for p in points:
        broker = p.get("versions", {}).get("broker", {}).get("version") or broker
    date = (manifest.get("started") or dt.date.today().isoformat())[:10]
    ref = (manifest.get("calibration") or {}).get("reference") or {}
    cal = (f" | calibration ref {ref['recv_msgs_per_s']:,.0f} msg/s ({ref['min']:,.0f}-"
           f"{ref['max']:,.0f})" if isinstance(ref.get("recv_msgs_per_s"), (int, float))
           else "")
    return (
        f"ActiveMQ Classic {broker} | {m.get('cpu', '?')} | {m.get('cores', '?')} cores | "
        f"{date} | commit {manifest.get('git_commit', '?')} | run {manifest.get('run_id')}{cal}"
    )


def _finish(fig, ax, manifest, points, path: Path, note: str = "") -> Path:
    fig.text(0.01, 0.005, footer(manifest, points), fontsize=6.5, color="#555555",
             ha="left", va="bottom")
    if note:  # under the plot, above the footer: never on top of data or legend
        fig.text(0.01, 0.03, note, fontsize=7, color="#333333", ha="left", va="bottom")
    fig.tight_layout(rect=(0, 0.055 if note else 0.03, 1, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _ok(p: dict) -> bool:
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


def _mark_not_drawn(ax, marks: list[tuple[float, str]]) -> None:
    """A failed or skipped point: a cross on the x axis with its reason, never a value."""
    for x, text in marks:
        ax.plot([x], [0], marker="X", color="#c0392b", markersize=9, clip_on=False, zorder=5,
                linestyle="none")
        ax.annotate(text, (x, 0), xytext=(3, 6), textcoords="offset points", rotation=90,
                    fontsize=6.5, color="#c0392b", va="bottom", ha="left")


def _not_drawn(points: list[dict], x_key: str) -> list[tuple[object, str, str]]:
    """(x, series, reason) of every point that is not drawn."""
    out = []
    for p in points:
        if _ok(p):
            continue
        s = p.get("sweep", {})
        x = s.get("x", p.get("parameters", {}).get(x_key))
        out.append((x, s.get("series") or "default", why_not(p)))
    return out


def _busiest_note(points: list[dict]) -> str:
    """Which process was busiest at the peak receive rate."""
    ok = [p for p in points if _ok(p)]
    if not ok:
        return ""
    peak = max(ok, key=lambda p: _num(p["throughput"].get("recv_msgs_per_s")) or 0)
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


def _series(points: list[dict], x_key: str) -> dict[str, list[tuple]]:
    out: dict[str, list[tuple]] = defaultdict(list)
    for p in points:
        if not _ok(p):  # failed, incomplete and skipped points are never data
            continue
        s = p.get("sweep", {})
        label = s.get("series") or p["parameters"].get("label") or "default"
        x = s.get("x", p["parameters"].get(x_key))
        out[label].append((x, p))
    return out


def _whisker(ax, xs, med, lo, hi, label, marker="o", linestyle="-", color=None):
    yerr = [[max(0, m - low) for m, low in zip(med, lo)], [max(0, h - m) for m, h in zip(med, hi)]]
    return ax.errorbar(
        xs,
        med,
        yerr=yerr,
        label=label,
        marker=marker,
        linestyle=linestyle,
        capsize=3,
        markersize=4,
        color=color,
    )


def _rates(pts, key):
    med = [_num(p["throughput"][f"{key}_msgs_per_s"]) for _, p in pts]
    lo = [_num(p["throughput"][f"{key}_min"]) for _, p in pts]
    hi = [_num(p["throughput"][f"{key}_max"]) for _, p in pts]
    return med, lo, hi


def chart_by_numeric(
    manifest,
    points,
    axis: str,
    x_key: str,
    path: Path,
    *,
    logx=False,
    xlabel: str,
    refs: list[tuple[float, str]] = (),
    twin_kib=False,
    twin_fds=False,
    vline: tuple[float, str] | None = None,
) -> Path:
    fig, ax = plt.subplots(figsize=(11, 5))
    twin = ax.twinx() if (twin_kib or twin_fds) else None
    for label, pts in sorted(_series(points, x_key).items()):
        pts.sort(key=lambda xp: xp[0])
        xs = [x for x, _ in pts]
        med, lo, hi = _rates(pts, "recv")
        line = _whisker(ax, xs, med, lo, hi, f"{label} receive", color=_color(label))
        smed, slo, shi = _rates(pts, "send")
        _whisker(
            ax,
            xs,
            smed,
            slo,
            shi,
            f"{label} send",
            marker="x",
            linestyle="--",
            color=line.lines[0].get_color(),
        )
        if twin_kib:
            twin.plot(
                xs,
                [m * x / 2**20 for m, x in zip(med, xs)],
                linestyle="-.",
                alpha=0.6,
                color=line.lines[0].get_color(),
                label=f"{label} MiB/s",
            )
        if twin_fds:
            fds = [_broker_fds(p) for _, p in pts]
            twin.plot(
                xs,
                fds,
                linestyle="-.",
                marker="s",
                markersize=3,
                alpha=0.6,
                color=line.lines[0].get_color(),
                label=f"{label} broker open files",
            )
    for i, (y, text) in enumerate(sorted(refs, reverse=True)):
        ax.axhline(y, **REF_STYLE)
        _ref_label(ax, y, text, i)
    if vline:
        ax.axvline(vline[0], **REF_STYLE)
        ax.annotate(
            vline[1],
            (vline[0], 0.5),
            xycoords=("data", "axes fraction"),
            fontsize=7,
            color=REF_STYLE["color"],
            rotation=90,
            ha="right",
        )
    _mark_not_drawn(ax, [(float(x), f"{series} {why}") for x, series, why in
                         _not_drawn(points, x_key) if isinstance(x, (int, float))])
    if logx:
        ax.set_xscale("log", base=2)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("messages per second (median, min-max)")
    ax.set_ylim(bottom=0)
    _thousands(ax)
    ax.grid(alpha=0.3)
    if twin is not None:
        twin.set_ylabel("MiB per second (receive)" if twin_kib else "broker open files (max)")
        twin.set_ylim(bottom=0)
        _thousands(twin)
        if twin_kib:
            lo_ref, hi_ref = BLOG["bandwidth_ceiling_kib_per_s"]
            twin.axhspan(
                lo_ref / 1024,
                hi_ref / 1024,
                color=REF_STYLE["color"],
                alpha=0.12,
                label="blog 2008: bandwidth ceiling 400-500 KB/s",
            )
        h1, l1 = ax.get_legend_handles_labels()
        h2, l2 = twin.get_legend_handles_labels()
        # (past the twin axis's tick labels)
        ax.legend(h1 + h2, l1 + l2, **{**LEGEND_OUTSIDE, "bbox_to_anchor": (1.12, 1.0)})
    else:
        ax.legend(**LEGEND_OUTSIDE)
    ax.set_title(f"Throughput by {axis}")
    return _finish(fig, ax, manifest, points, path, _busiest_note(points))


def _broker_fds(p: dict) -> float:
    procs = p.get("resources", {}).get("processes", [])
    return max(
        (pr["max_open_files"] for pr in procs if pr.get("role") == "broker"), default=math.nan
    )


def chart_by_category(
    manifest,
    points,
    axis: str,
    x_key: str,
    path: Path,
    *,
    order=None,
    ticks: dict[str, str] | None = None,
    ref_ratios: dict[str, tuple[float, str]] | None = None,
    finish: bool = True,
    logy: bool = False,
) -> Path:
    """Grouped bars: send and receive per category value, one group per series."""
    series = _series(points, x_key)
    missing = _not_drawn(points, x_key)
    cats = order or sorted({str(x) for pts in series.values() for x, _ in pts}
                           | {str(x) for x, _, _ in missing})
    cats = [c for c in cats if any(str(x) == c for pts in series.values() for x, _ in pts)
            or any(str(x) == c for x, _, _ in missing)]
    fig, ax = plt.subplots(figsize=(11.5, 5))
    n = max(1, len(series)) * 2
    width = 0.8 / n
    for si, (label, pts) in enumerate(sorted(series.items())):
        by = {str(x): p for x, p in pts}
        for ki, key in enumerate(("send", "recv")):
            xs, med, lo, hi = [], [], [], []
            for ci, c in enumerate(cats):
                if c not in by:
                    continue
                t = by[c]["throughput"]
                xs.append(ci - 0.4 + width * (si * 2 + ki + 0.5))
                med.append(_num(t[f"{key}_msgs_per_s"]))
                lo.append(_num(t[f"{key}_min"]))
                hi.append(_num(t[f"{key}_max"]))
            yerr = [
                [max(0, m - v) for m, v in zip(med, lo)],
                [max(0, h - m) for m, h in zip(med, hi)],
            ]
            ax.bar(
                xs,
                med,
                width,
                yerr=yerr,
                capsize=2,
                label=f"{label} {'send' if key == 'send' else 'receive'}",
                hatch="//" if key == "send" else None,
                alpha=0.55 if key == "send" else 0.9,
                color=_color(label),
            )
    if ref_ratios:
        base = None
        for pts in series.values():
            for x, p in pts:
                if str(x) == cats[0]:
                    base = max(base or 0, _num(p["throughput"]["recv_msgs_per_s"]))
        if base:
            for cat, (ratio, text) in ref_ratios.items():
                if cat in cats:
                    ci = cats.index(cat)
                    ax.plot([ci - 0.4, ci + 0.4], [base * ratio] * 2, **REF_STYLE)
                    ax.annotate(
                        text,
                        (ci - 0.4, base * ratio),
                        fontsize=7,
                        color=REF_STYLE["color"],
                        va="bottom",
                    )
    labels = sorted(series) or ["default"]
    _mark_not_drawn(ax, [
        (cats.index(str(x)) - 0.4 + width * ((labels.index(sr) if sr in labels else 0) * 2 + 1),
         f"{sr} {why}") for x, sr, why in missing if str(x) in cats])
    names = [(ticks or {}).get(c, c) for c in cats]
    long_names = max((len(n) for n in names), default=0) > 12
    ax.set_xticks(range(len(cats)), names, rotation=20 if long_names else 0,
                  ha="right" if long_names else "center")
    _thousands(ax)
    if logy:  # rates that span decades (persistence): a linear axis hides the slow ones
        ax.set_yscale("log")
    ax.set_xlabel(axis)
    ax.set_ylabel("messages per second (median, min-max)")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(**LEGEND_OUTSIDE)
    ax.set_title(f"Throughput by {axis}: producer (hatched) and consumer rates")
    if not finish:
        return fig, ax
    return _finish(fig, ax, manifest, points, path, _busiest_note(points))


def chart_heatmap(manifest, points, path: Path) -> Path:
    """Producer language x consumer language, median receive msg/s annotated."""
    prods, cons, val, reasons = [], [], {}, {}
    for p in points:
        params = p["parameters"]
        pr, co = ",".join(params["producer"]), ",".join(params["consumer"])
        if pr not in prods:
            prods.append(pr)
        if co not in cons:
            cons.append(co)
        t = p.get("throughput") or {}
        val[(pr, co)] = _num(t.get("recv_msgs_per_s")) if _ok(p) else math.nan
        if not _ok(p):
            reasons[(pr, co)] = why_not(p).split(":")[0]
    grid = [[val.get((pr, co), math.nan) for co in cons] for pr in prods]
    fig, ax = plt.subplots(figsize=(1.6 * len(cons) + 3, 1.0 * len(prods) + 2.5))
    im = ax.imshow(grid, cmap="viridis", aspect="auto")
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            txt = reasons.get((prods[i], cons[j]), "none") if math.isnan(v) else f"{v:,.0f}"
            ax.text(
                j,
                i,
                txt,
                ha="center",
                va="center",
                fontsize=9,
                color="white"
                if (
                    math.isnan(v)
                    or v < (max((x for r in grid for x in r if not math.isnan(x)), default=1) * 0.6)
                )
                else "black",
            )
    ax.set_xticks(range(len(cons)), cons, rotation=20)
    ax.set_yticks(range(len(prods)), prods)
    ax.set_xlabel("consumer")
    ax.set_ylabel("producer")
    fig.colorbar(im, ax=ax, label="receive msg/s (median)")
    ax.set_title("Throughput by language pair (receive msg/s)")
    return _finish(fig, ax, manifest, points, path)


def chart_latency(manifest, points, path: Path) -> Path:
    """Latency percentiles (from the intended send time) versus offered load."""
    rows = []
    for p in points:
        t, lat = p.get("throughput") or {}, p.get("latency_ms") or {}
        if not _ok(p):
            continue
        offered = p["parameters"].get("rate", 0) * p["parameters"].get("producers", 1)
        if offered and lat:
            rows.append((offered, False, lat))
        elif not offered:  # the flood that found the maximum: time in queue, not latency
            rows.append((_num(t.get("recv_msgs_per_s")), True, {}))
    rows.sort(key=lambda r: r[0])
    paced = [r for r in rows if not r[1]]
    fig, ax = plt.subplots(figsize=(8.5, 5))
    for key, label, style in (("p50", "p50", "-"), ("p99", "p99", "--"),
                              ("p99_9", "p99.9", "-."), ("max", "max", ":")):
        ax.plot([r[0] for r in paced], [_num(r[2].get(key)) for r in paced], style, marker="o",
                markersize=4, label=label)
    for x, unlimited, _lat in rows:
        if unlimited:
            ax.axvline(x, color="#888888", linewidth=0.8)
            ax.annotate("maximum (unlimited rate)", (x, 0.02), xycoords=("data", "axes fraction"),
                        rotation=90, fontsize=7, ha="right", color="#555555")
    if any(_num(r[2].get("p50")) > 0 for r in paced):
        ax.set_yscale("log")
    else:
        ax.annotate("no paced point finished ok: no latency to draw", (0.5, 0.5),
                    xycoords="axes fraction", ha="center", color="#c0392b")
    ax.set_xlabel("offered load, msg/s (all producers)")
    ax.set_ylabel("latency ms, from the intended send time (log)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    pair = (points[0].get("sweep") or {}).get("series", "") if points else ""
    ax.set_title(f"Latency versus load ({pair}); percentiles over all merged records")
    return _finish(fig, ax, manifest, points, path, _busiest_note(points))


def chart_find_max(manifest, points, path: Path) -> Path:
    """The maximum sustainable rate per series: received against offered (the diagonal is
    keeping up), and p50/p99/p99.9 latency against offered (the hockey stick). Probes that
    held are filled, the others hollow; a failed probe is a cross with its reason."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 5))
    by_series: dict[str, list[dict]] = defaultdict(list)
    for p in points:
        by_series[(p.get("sweep") or {}).get("series") or "default"].append(p)
    top = 0.0
    bound = None
    marks = []
    for series, pts in by_series.items():
        color = _color(series.split(" -> ")[0])
        rows, flood = [], None
        for p in pts:
            sw = p.get("sweep") or {}
            bound = sw.get("p99_bound_ms", bound)
            if not _ok(p):
                x = sw.get("x")
                marks.append((_num(x) if x != "max" else 0.0, f"{series}: {why_not(p)}"))
                continue
            t, st = p["throughput"], p.get("sustained") or {}
            if sw.get("x") == "max":
                flood = _num(t.get("recv_msgs_per_s"))
                continue
            offered = p["parameters"]["rate"] * p["parameters"].get("producers", 1)
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
        med = [_num(r[1].get("recv_msgs_per_s")) for r in rows]
        lo = [_num(r[1].get("recv_min")) for r in rows]
        hi = [_num(r[1].get("recv_max")) for r in rows]
        _whisker(ax1, xs, med, lo, hi, series, color=color)
        for x, m, r in zip(xs, med, rows):
            ax1.plot([x], [m], marker="o", markersize=7, color=color,
                     markerfacecolor=color if r[3] else "white", linestyle="none")
        if flood:
            ax1.axhline(flood, color=color, linestyle=":", linewidth=1)
        held = [r[0] for r in rows if r[3]]
        if held:
            ax1.axvline(max(held), color=color, linestyle="--", linewidth=0.8)
            ax1.annotate(f"max sustainable {max(held):,.0f}", (max(held), 0.02),
                         xycoords=("data", "axes fraction"), rotation=90, fontsize=7,
                         ha="right", color=color)
        for key, label, style in (("p50", "p50", "-"), ("p99", "p99", "--"),
                                  ("p99_9", "p99.9", ":")):
            ys = [_num(r[2].get(key)) for r in rows]
            ax2.plot(xs, ys, style, marker="o", markersize=3, color=color,
                     label=f"{series} {label}")
    ax1.plot([0, top * 1.05], [0, top * 1.05], color="#999999", linewidth=0.8,
             label="received = offered")
    ax1.set_xlabel("offered msg/s (all producers)")
    ax1.set_ylabel("received msg/s (median, min-max of 1-s windows)")
    _thousands(ax1)
    _thousands(ax1, "x")
    ax1.grid(alpha=0.3)
    ax1.legend(fontsize=7, loc="upper left")
    ax1.set_title("Offered vs received (hollow: did not hold; dotted: flood rate)", fontsize=9)
    _mark_not_drawn(ax1, marks)
    if bound is not None:
        ax2.axhline(bound, **REF_STYLE)
        _ref_label(ax2, bound, f"p99 bound {bound:g} ms", 0)
    if ax2.lines and any(_num(v) > 0 for line in ax2.lines for v in line.get_ydata()):
        ax2.set_yscale("log")
    ax2.set_xlim(ax1.get_xlim())
    ax2.set_xlabel("offered msg/s (all producers)")
    ax2.set_ylabel("latency ms from the intended send time (log)")
    _thousands(ax2, "x")
    ax2.grid(alpha=0.3, which="both")
    ax2.legend(**LEGEND_OUTSIDE)
    ax2.set_title("Latency vs offered load, sustained probes", fontsize=9)
    return _finish(fig, ax2, manifest, points, path, _busiest_note(points))


def chart_mqperf(manifest, points, path: Path) -> Path:
    """Persistent client-ack throughput by producer-consumer pairs, beside mqperf's table."""
    fig_, ax = chart_by_category(manifest, points, "producer-consumer pairs", "producers",
                                 path, finish=False)
    table = REFERENCES["mqperf"]["table"]
    cats = [t.get_text() for t in ax.get_xticklabels()]
    top = ax.get_ylim()[1]
    for nodes, threads, send, recv in table:
        if str(threads) in cats:
            top = max(top, recv * 1.15)
            ci = cats.index(str(threads))
            ax.plot([ci - 0.4, ci + 0.4], [recv, recv], **REF_STYLE)
            ax.annotate(f"mqperf {nodes} node{'s' if nodes > 1 else ''}: {recv:,}",
                        (ci + 0.4, recv), fontsize=6.5, color=REF_STYLE["color"], ha="right",
                        va="bottom")
    ax.set_ylim(top=top)
    ax.set_title("mqperf setup: persistent, client ack, by producer-consumer pairs")
    return _finish(fig_, ax, manifest, points, path, _busiest_note(points))


def _axis_values(points: list[dict]) -> list:
    """The axis's x values in the order the points were written (the profile's order)."""
    seen = []
    for p in points:
        x = p.get("sweep", {}).get("x")
        if x not in seen:
            seen.append(x)
    return seen


def _by_axis(points: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = defaultdict(list)
    for p in points:
        axis = p.get("sweep", {}).get("axis")
        if axis:
            out[axis].append(p)
    return out


def render_run(run_dir: Path) -> list[Path]:
    """Draw every chart the run's result files support; returns the files written."""
    run_dir = Path(run_dir)
    manifest, points = _load(run_dir)
    charts = run_dir / "charts"
    written = []
    blog = BLOG
    by_axis = _by_axis(points)
    from plots import browser  # the browser profile's axes are drawn in pairs

    written.extend(browser.render(manifest, by_axis, charts))
    for axis, pts in by_axis.items():
        if not any(_ok(p) for p in pts) and axis != "languages":
            continue
        if (pts[0].get("sweep") or {}).get("kind") == "find-max":
            written.append(chart_find_max(manifest, pts, charts / f"{axis}.png"))
        elif axis == "consumers":
            written.append(
                chart_by_numeric(
                    manifest,
                    pts,
                    "consumers",
                    "consumers",
                    charts / "throughput-by-consumers.png",
                    xlabel="competing consumers",
                    refs=[
                        (blog["baseline_msgs_per_s"], "blog 2008: ~3,250 msg/s (2 consumers)"),
                        (blog["many_consumers_msgs_per_s"], "blog 2008: ~1,500 msg/s (> 8)"),
                    ],
                )
            )
        elif axis == "size":
            written.append(
                chart_by_numeric(
                    manifest,
                    pts,
                    "message size",
                    "size",
                    charts / "throughput-by-size.png",
                    xlabel="body bytes (log)",
                    logx=True,
                    twin_kib=True,
                )
            )
        elif axis == "queues":
            written.append(
                chart_by_numeric(
                    manifest,
                    pts,
                    "number of queues",
                    "queues",
                    charts / "throughput-by-queues.png",
                    xlabel="queues (log)",
                    logx=True,
                    twin_fds=True,
                    refs=[(blog["queues_msgs_per_s"], "blog 2008: > 2,667 msg/s up to 512 queues")],
                    vline=(blog["queues_crash_at"], "blog 2008: broker crashed at 1,024"),
                )
            )
        elif axis == "persistence":
            written.append(
                chart_by_category(
                    manifest,
                    pts,
                    "persistence",
                    "persistence",
                    charts / "throughput-by-persistence.png",
                    order=[
                        "none",
                        "kahadb-nosync",
                        "kahadb",
                        "jdbc-derby",
                        "jdbc-postgres",
                        "jdbc-mariadb",
                    ],
                    ref_ratios={
                        "kahadb": (blog["builtin_store_ratio"], "blog: built-in store 1/3"),
                        "jdbc-mariadb": (blog["jdbc_mysql_ratio"], "blog: MySQL 1/10"),
                    },
                )
            )
        elif axis == "topology":
            written.append(chart_by_category(
                manifest, pts, "topology", "topology", charts / "throughput-by-topology.png",
                order=["single", "forward", "split", "chain3", "mesh3"],
                ref_ratios={"forward": (blog["cross_broker_ratio"],
                                        "blog 2008: ~1/2 across brokers")}))
        elif axis == "tls":
            written.append(chart_by_category(manifest, pts, "TLS", "tls",
                                             charts / "throughput-by-tls.png",
                                             order=["False", "True"],
                                             ticks={"False": "plain", "True": "TLS"}))
        elif axis == "tuned":
            written.append(chart_by_category(
                manifest, pts, "client: stock library API vs its -tuned entry", "producer",
                charts / "throughput-stock-vs-tuned.png",
                order=[str(v) for v in _axis_values(pts)]))
        elif axis == "tcp-nodelay":
            written.append(chart_by_category(manifest, pts, "TCP_NODELAY at the broker",
                                             "tcp_nodelay",
                                             charts / "throughput-by-tcp-nodelay.png",
                                             order=["False", "True"],
                                             ticks={"False": "Nagle on (as shipped)",
                                                    "True": "TCP_NODELAY"}))
        elif axis == "latency":
            written.append(chart_latency(manifest, pts, charts / "latency-vs-load.png"))
        elif axis == "mqperf":
            written.append(chart_mqperf(manifest, pts, charts / "throughput-mqperf.png"))
        elif axis == "languages":
            written.append(chart_heatmap(manifest, pts, charts / "throughput-by-language-pair.png"))
        else:
            written.append(
                chart_by_category(manifest, pts, axis, axis, charts / f"throughput-by-{axis}.png")
            )
    from plots import report, studies  # the page embeds what was just drawn

    written.extend(studies.render_studies(run_dir) or [])

    written.append(report.render(run_dir))
    return written
