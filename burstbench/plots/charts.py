"""Result files in, PNG charts out. Imports nothing that starts a broker or a client.

Every chart shows medians over the measured bursts with min-max whiskers, the reference
studies' figures as labelled lines where comparable, the busiest process at the peak, and a
footer naming the environment.
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import yaml

from burstbench import profiles
from burstbench.measure import results
from burstbench.plots import browser, connections, report, soak, studies, style
from burstbench.plots.figure import (
    busiest_note,
    color_of,
    drawable,
    finish_chart,
    legend_of,
    mark_not_drawn,
    not_drawn,
    num,
    rates,
    ref_label,
    series_of,
    styles_of,
    title,
    whisker,
    why_not,
    window_latency,
)
from burstbench.plots.latency import (
    chart_find_max,
    chart_latency,
    chart_latency_by_category,
    chart_nodelay_remedy,
    nodelay_pairs,
)
from burstbench.plots.style import REF_STYLE

REFERENCES = yaml.safe_load((Path(__file__).parent / "references.yaml").read_text())
BLOG = REFERENCES["blog"]

# Category ticks in words, per axis and x value (a boolean never reads False/True)
CATEGORY_WORDS = {
    "tls": {False: "plain", True: "TLS"},
    "tcp_nodelay": {False: "Nagle on (as shipped)", True: "TCP_NODELAY"},
    "persistent": {False: "non-persistent", True: "persistent"},
}


def category_word(x_key: str, value) -> str:
    """How a category reads on an axis: ``plain``/``TLS``, ``flood`` for rate 0, numbers with
    thousands separators, names as they are."""
    words = CATEGORY_WORDS.get(x_key, {})
    if isinstance(value, bool) or value in ("True", "False"):
        b = value if isinstance(value, bool) else value == "True"
        return words.get(b, "on" if b else "off")
    if x_key == "rate" and isinstance(value, (int, float)):
        return "flood (no rate)" if value == 0 else f"{value:,.0f} msg/s"
    if isinstance(value, (int, float)):
        return style.number(float(value))
    return str(value)


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
    """Receive and send side by side (each y axis scaled to its own data), a series per
    client in its language's colour; the size axis adds receive bandwidth in MiB/s, the
    queues axis the broker's open files."""
    extra = "bandwidth" if twin_kib else "fds" if twin_fds else None
    n = 3 if extra else 2
    fig, axes = plt.subplots(1, n, figsize=(4.6 * n + 2.4, 5), sharex=True)
    recv_ax, send_ax = axes[0], axes[1]
    series = series_of(points, x_key)
    styles = styles_of(series)
    rows = {"recv": [], "send": []}
    xs_all = []
    for label, pts in sorted(series.items()):
        pts.sort(key=lambda xp: xp[0])
        xs = [x for x, _ in pts]
        xs_all += xs
        st = styles[label]
        for ax, key in ((recv_ax, "recv"), (send_ax, "send")):
            med, lo, hi = rates(pts, key)
            whisker(ax, xs, med, lo, hi, label, marker=st["marker"],
                     linestyle=st["linestyle"], color=st["color"])
            rows[key] += [(x, m, low, h, st["color"]) for x, m, low, h in zip(xs, med, lo, hi)]
        if extra == "bandwidth":
            med, _lo, _hi = rates(pts, "recv")
            axes[2].plot(xs, [m * x / 2**20 for m, x in zip(med, xs)], marker=st["marker"],
                         markersize=4, linestyle=st["linestyle"], color=st["color"], label=label)
        elif extra == "fds":
            fds = [_broker_fds(p) for _, p in pts]
            axes[2].plot(xs, fds, marker=st["marker"], markersize=4,
                         linestyle=st["linestyle"], color=st["color"], label=label)
            rows["fds"] = rows.get("fds", []) + [(x, v, v, v, st["color"])
                                                 for x, v in zip(xs, fds)]
    for y, text in sorted(refs, reverse=True):
        recv_ax.axhline(y, **REF_STYLE)
        if vline:  # the vertical line's label stands at the right: these start at the left
            ref_label(recv_ax, y, text, x=0.0, ha="left")
        else:
            ref_label(recv_ax, y, text)
    marks = [(float(x), f"{series} {why}") for x, series, why in not_drawn(points, x_key)
             if isinstance(x, (int, float))]
    for ax, key, what in ((recv_ax, "recv", "receive"), (send_ax, "send", "send")):
        mark_not_drawn(ax, marks)
        style.scale_to_data(ax, rows[key], bottom=0)
        if refs and key == "recv":
            ax.set_ylim(top=max(ax.get_ylim()[1], max(y for y, _t in refs) * 1.15))
        ax.set_ylabel(f"{what} msg/s (median, min-max)")
        ax.set_title(f"{what} rate", fontsize=10)
    if extra == "bandwidth":
        bw = axes[2]
        lo_ref, hi_ref = BLOG["bandwidth_ceiling_kib_per_s"]
        bw.axhspan(lo_ref / 1024, hi_ref / 1024, color=REF_STYLE["color"], alpha=0.18)
        ref_label(bw, hi_ref / 1024, f"{BLOG['short']}: bandwidth ceiling 400-500 KB/s")
        bw.set_yscale("log")
        bw.set_ylabel("receive MiB/s (median, log)")
        bw.set_title("receive bandwidth", fontsize=10)
    elif extra == "fds":
        axes[2].set_ylabel("broker open files (max)")
        style.scale_to_data(axes[2], rows.get("fds", []), bottom=0)
        axes[2].set_title("broker open files", fontsize=10)
    for ax in axes:
        if vline:
            ax.axvline(vline[0], **REF_STYLE)
        if logx:
            ax.set_xscale("log", base=2)
        style.ticks_at(ax, "x", xs_all, unit="bytes" if x_key == "size" else "")
        ax.set_xlabel(xlabel)
        ax.grid(alpha=0.3)
    if vline:
        recv_ax.annotate(vline[1], (vline[0], 0.5), xycoords=("data", "axes fraction"),
                         xytext=(-3, 0), textcoords="offset points", fontsize=7,
                         color=REF_STYLE["color"], rotation=90, ha="right", va="center")
    legend_of(fig, recv_ax)
    fig.suptitle(title(f"Throughput (msg/s) by {axis}", points))
    return finish_chart(fig, recv_ax, manifest, points, path, busiest_note(points))


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
):
    """Bars per category value, receive and send in two panels (each y axis scaled to its
    own data), one bar per series in its language's colour; when the categories are clients
    themselves (stock vs tuned), each bar takes its client's colour."""
    series = series_of(points, x_key)
    missing = not_drawn(points, x_key)
    raw = {}
    for pts in series.values():
        for x, _p in pts:
            raw.setdefault(str(x), x)
    for x, _s, _w in missing:
        raw.setdefault(str(x), x)
    cats = order or sorted(raw)
    cats = [c for c in cats if c in raw]
    by_client = len(series) == 1 and cats and all(style.client_style(c) for c in cats)
    styles = styles_of(series)
    fig, (recv_ax, send_ax) = plt.subplots(1, 2, figsize=(13.5, 5), sharex=True)
    n = max(1, len(series))
    width = 0.8 / n
    rows = {"recv": [], "send": []}
    for si, (label, pts) in enumerate(sorted(series.items())):
        by = {str(x): p for x, p in pts}
        st = styles[label]
        for ax, key in ((recv_ax, "recv"), (send_ax, "send")):
            xs, med, lo, hi, cols, hatches = [], [], [], [], [], []
            for ci, c in enumerate(cats):
                if c not in by:
                    continue
                t = by[c]["throughput"]
                xs.append(ci - 0.4 + width * (si + 0.5))
                med.append(num(t[f"{key}_msgs_per_s"]))
                lo.append(num(t[f"{key}_min"]))
                hi.append(num(t[f"{key}_max"]))
                cst = style.client_style(c) if by_client else st
                cols.append(cst["color"])
                hatches.append(cst["hatch"])
            yerr = [[max(0, m - v) for m, v in zip(med, lo)],
                    [max(0, h - m) for m, h in zip(med, hi)]]
            bars = ax.bar(xs, med, width, yerr=yerr, capsize=2, label=label, color=cols,
                          edgecolor="white", error_kw={"ecolor": "#333333"})
            for bar, hatch in zip(bars, hatches):
                if hatch:
                    bar.set_hatch(hatch)
            rows[key] += [(x, m, low, h, "#333333") for x, m, low, h in zip(xs, med, lo, hi)]
    labels = sorted(series) or ["default"]
    for ax in (recv_ax, send_ax):
        mark_not_drawn(ax, [
            (cats.index(str(x)) - 0.4 + width * ((labels.index(sr) if sr in labels else 0)
                                                 + 0.5), f"{sr} {why}")
            for x, sr, why in missing if str(x) in cats])
    shown = []
    if ref_ratios:
        base = None
        for pts in series.values():
            for x, p in pts:
                if cats and str(x) == cats[0]:
                    base = max(base or 0, num(p["throughput"]["recv_msgs_per_s"]))
        if base:
            for cat, (ratio, text) in ref_ratios.items():
                if cat in cats:
                    ci = cats.index(cat)
                    recv_ax.plot([ci - 0.4, ci + 0.4], [base * ratio] * 2, **REF_STYLE)
                    right = ci >= len(cats) / 2  # the label reads into the axes
                    recv_ax.annotate(text, (ci + 0.4 if right else ci - 0.4, base * ratio),
                                     xytext=(0, 2), va="bottom",
                                     ha="right" if right else "left", **style.REF_LABEL)
                    shown.append(base * ratio)
    names = [(ticks or {}).get(c, category_word(x_key, raw[c])) for c in cats]
    for ax, key, what in ((recv_ax, "recv", "receive"), (send_ax, "send", "send")):
        style.scale_to_data(ax, rows[key] + [(0, y, y, y, "") for y in shown
                                             if key == "recv"], bottom=0)
        ax.set_xticks(range(len(cats)), names)
        ax.set_xlabel(axis)
        ax.set_ylabel(f"{what} msg/s (median, min-max)")
        ax.set_title(f"{what} rate", fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    if not by_client and (len(series) > 1 or labels != ["default"]):
        legend_of(fig, recv_ax)
    fig.suptitle(title(f"Throughput (msg/s) by {axis}", points))
    if not finish:
        return fig, recv_ax
    return finish_chart(fig, recv_ax, manifest, points, path, busiest_note(points))


# the brokers in the order of their history: Classic's versions, then Artemis
_BROKER_ORDER = ("classic:5.18.6", "classic", "classic:6.1.7", "classic:6.3.1", "artemis")


def _broker_ticks(points) -> dict[str, str]:
    """``classic`` -> ``ActiveMQ Classic 6.1.7``: each broker kind as its points name it."""
    out = {}
    for p in points:
        b = (p.get("versions") or {}).get("broker") or {}
        kind = (p.get("parameters") or {}).get("broker", "classic")
        if b.get("name") and kind not in out:
            out[kind] = f"{b['name']} {b.get('version', '')}".strip()
    return out


def broker_table(by_axis: dict[str, list[dict]], kinds: dict[str, str]) -> str:
    """A Markdown table of the run's broker axes, a row per client pair: the flood's receive
    rate and the paced p99 on each broker, each the median over the measured 1-s windows with
    their min-max; "" when the run has no broker axis."""
    flood = [p for a, pts in by_axis.items() if kinds.get(a) == "by-broker" for p in pts]
    paced = [p for a, pts in by_axis.items() if kinds.get(a) == "latency-by-broker"
             for p in pts]
    if not flood and not paced:
        return ""
    names = _broker_ticks(flood + paced)
    kinds_seen = [k for k in _BROKER_ORDER if k in names]
    cells: dict[str, dict[str, str]] = defaultdict(dict)

    def at(p) -> tuple[str, str]:
        return (p.get("sweep") or {}).get("series") or "default", p["parameters"]["broker"]

    def rng(v, lo, hi, fmt) -> str:
        if math.isnan(v):
            return "n/a"
        return (fmt(v) + (f" ({fmt(lo)}-{fmt(hi)})" if not (math.isnan(lo) or math.isnan(hi))
                          else ""))

    for p in flood:
        pair, kind = at(p)
        t = p.get("throughput") or {}
        cells[pair][f"recv {kind}"] = (rng(num(t.get("recv_msgs_per_s")), num(t.get("recv_min")),
                                           num(t.get("recv_max")), lambda v: f"{v:,.0f}")
                                       if drawable(p) else why_not(p).split(":")[0])
    rates = set()
    for p in paced:
        pair, kind = at(p)
        rates.add(num(p["parameters"].get("rate")))
        cells[pair][f"p99 {kind}"] = (rng(*window_latency(p, "p99"), lambda v: f"{v:,.1f}")
                                      if drawable(p) else why_not(p).split(":")[0])
    rate = "/".join(f"{r:,.0f}" for r in sorted(rates) if not math.isnan(r)) or "?"
    head = ["pair"] + [f"receive msg/s, {names[k]}" for k in kinds_seen if flood] + [
        f"p99 ms at {rate} msg/s, {names[k]}" for k in kinds_seen if paced]
    keys = [f"recv {k}" for k in kinds_seen if flood] + [f"p99 {k}" for k in kinds_seen
                                                          if paced]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for pair in sorted(cells):
        lines.append("| " + " | ".join([pair] + [cells[pair].get(k, "-") for k in keys]) + " |")
    return "\n".join(lines) + "\n"


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
        val[(pr, co)] = num(t.get("recv_msgs_per_s")) if drawable(p) else math.nan
        if not drawable(p):
            reasons[(pr, co)] = why_not(p).split(":")[0]
    grid = [[val.get((pr, co), math.nan) for co in cons] for pr in prods]
    fig, ax = plt.subplots(figsize=(1.6 * len(cons) + 3, 1.0 * len(prods) + 2.5))
    im = ax.imshow(grid, cmap="viridis", aspect="auto")
    top = max((x for r in grid for x in r if not math.isnan(x)), default=1)
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            txt = reasons.get((prods[i], cons[j]), "none") if math.isnan(v) else f"{v:,.0f}"
            ax.text(j, i, txt, ha="center", va="center", fontsize=9,
                    color="white" if math.isnan(v) or v < top * 0.6 else "black")
    ax.set_xticks(range(len(cons)), cons, rotation=20)
    ax.set_yticks(range(len(prods)), prods)
    for tick, name in [*zip(ax.get_xticklabels(), cons), *zip(ax.get_yticklabels(), prods)]:
        c = color_of(name)
        if c:  # the language's colour, as in every other chart
            tick.set_color(style.darker(c, 0.15))
    ax.set_xlabel("consumer")
    ax.set_ylabel("producer")
    fig.colorbar(im, ax=ax, label="receive msg/s (median)", format=style.NUMBER)
    ax.set_title(f"Throughput by language pair (receive msg/s)\nclients: every producer x "
                 f"consumer of {', '.join(dict.fromkeys(prods + cons))}")
    return finish_chart(fig, ax, manifest, points, path)


def chart_mqperf(manifest, points, path: Path) -> Path:
    """Persistent client-ack throughput by producer-consumer pairs, beside mqperf's table."""
    fig_, ax = chart_by_category(manifest, points, "producer-consumer pairs", "producers",
                                 path, finish=False)
    table = REFERENCES["mqperf"]["table"]
    cats = [t.get_text() for t in ax.get_xticklabels()]
    top = ax.get_ylim()[1]
    for nodes, threads, _send, recv in table:
        if str(threads) in cats:
            top = max(top, recv * 1.15)
            ci = cats.index(str(threads))
            ax.plot([ci - 0.4, ci + 0.4], [recv, recv], **REF_STYLE)
            cite = REFERENCES["mqperf"]["short"]
            ax.annotate(f"{cite} {nodes} node{'s' if nodes > 1 else ''}: {recv:,}",
                        (ci + 0.4, recv), xytext=(0, 2), ha="right", va="bottom",
                        **style.REF_LABEL)
    ax.set_ylim(top=top)
    fig_.suptitle(title("Throughput (msg/s) in mqperf's setup: persistent, client ack, by "
                        "producer-consumer pairs", points))
    return finish_chart(fig_, ax, manifest, points, path, busiest_note(points))


def _axis_values(points: list[dict]) -> list:
    """The axis's x values in the order the points were written (the profile's order)."""
    seen = []
    for p in points:
        x = p.get("sweep", {}).get("x")
        if x not in seen:
            seen.append(x)
    return seen


def _x_key(points: list[dict], axis: str) -> str:
    """The point parameter an axis varies: the one equal to the sweep's x in every point
    (``rate`` for the sustained axis), else the axis's own name."""
    keys = None
    for p in points:
        x, params = (p.get("sweep") or {}).get("x"), p.get("parameters") or {}
        same = {k for k, v in params.items() if v == x and not isinstance(v, (list, dict))}
        keys = same if keys is None else keys & same
    return axis.replace("-", "_") if axis.replace("-", "_") in (keys or ()) else \
        min(keys) if keys else axis


def chart_kinds(run: results.RunFiles) -> dict[str, str]:
    """Axis -> chart kind, as the run's profile declares it (burstbench/profiles.py); an axis the
    profile does not name (or a run without one) gets the default of its points' kind."""
    axes: dict = {}
    if run.profile in profiles.profile_names():  # a bad chart kind is an error, no default
        axes = profiles.load_profile(run.profile)["axes"]
    out = {}
    for axis, pts in run.by_axis().items():
        declared = axes.get(axis) or {"kind": (pts[0].get("sweep") or {}).get("kind")}
        out[axis] = profiles.chart_kind(declared)
    return out


def _numeric(manifest, pts, axis, charts, *, title, x_key, xlabel, **kw) -> Path:
    return chart_by_numeric(manifest, pts, title, x_key, charts / f"throughput-by-{axis}.png",
                            xlabel=xlabel, **kw)


def _category(manifest, pts, axis, charts, *, title=None, x_key=None, **kw) -> Path:
    return chart_by_category(manifest, pts, title or axis, x_key or _x_key(pts, axis),
                             charts / f"throughput-by-{axis}.png", **kw)


def _drawers() -> dict:
    """Chart kind -> draw(manifest, points, axis, charts_dir) -> the PNG written."""
    blog = BLOG
    return {
        "by-category": lambda m, pts, axis, charts: _category(m, pts, axis, charts),
        "line": lambda m, pts, axis, charts: _numeric(
            m, pts, axis, charts, title=axis, x_key=_x_key(pts, axis),
            xlabel=_x_key(pts, axis)),
        "by-consumers": lambda m, pts, axis, charts: _numeric(
            m, pts, axis, charts, title="consumers", x_key="consumers",
            xlabel="competing consumers",
            refs=[(blog["baseline_msgs_per_s"], f"{blog['short']}: ~3,250 msg/s (2 consumers)"),
                  (blog["many_consumers_msgs_per_s"], f"{blog['short']}: ~1,500 msg/s (> 8)")]),
        "by-size": lambda m, pts, axis, charts: _numeric(
            m, pts, axis, charts, title="message size", x_key="size", xlabel="body size (log)",
            logx=True, twin_kib=True),
        "by-queues": lambda m, pts, axis, charts: _numeric(
            m, pts, axis, charts, title="number of queues", x_key="queues",
            xlabel="queues (log)", logx=True, twin_fds=True,
            refs=[(blog["queues_msgs_per_s"], f"{blog['short']}: > 2,667 msg/s up to 512 queues")],
            vline=(blog["queues_crash_at"], f"{blog['short']}: broker crashed at 1,024")),
        "by-persistence": lambda m, pts, axis, charts: _category(
            m, pts, axis, charts, title="persistence", x_key="persistence",
            order=["none", "kahadb-nosync", "kahadb", "journal-nosync", "journal",
                   "jdbc-derby", "jdbc-postgres", "jdbc-mariadb"],
            ref_ratios={"kahadb": (blog["builtin_store_ratio"],
                                   f"{blog['short']}: built-in store 1/3"),
                        "jdbc-mariadb": (blog["jdbc_mysql_ratio"],
                                         f"{blog['short']}: MySQL 1/10")}),
        "by-topology": lambda m, pts, axis, charts: _category(
            m, pts, axis, charts, title="topology", x_key="topology",
            order=["single", "forward", "split", "chain3", "mesh3"],
            ref_ratios={"forward": (blog["cross_broker_ratio"],
                                    f"{blog['short']}: ~1/2 across brokers")}),
        "by-tls": lambda m, pts, axis, charts: _category(
            m, pts, axis, charts, title="TLS", x_key="tls", order=["False", "True"],
            ticks={"False": "plain", "True": "TLS"}),
        "by-broker": lambda m, pts, axis, charts: _category(
            m, pts, axis, charts, title="broker", x_key="broker", order=list(_BROKER_ORDER),
            ticks=_broker_ticks(pts)),
        "latency-by-broker": lambda m, pts, axis, charts: chart_latency_by_category(
            m, pts, "broker", "broker", charts / f"latency-by-{axis}.png",
            order=list(_BROKER_ORDER), ticks=_broker_ticks(pts)),
        "by-tcp-nodelay": lambda m, pts, axis, charts: _category(
            m, pts, axis, charts, title="TCP_NODELAY at the broker", x_key="tcp_nodelay",
            order=["False", "True"],
            ticks={"False": "Nagle on (as shipped)", "True": "TCP_NODELAY"}),
        "stock-vs-tuned": lambda m, pts, axis, charts: chart_by_category(
            m, pts, "client: stock library API vs its -tuned entry", "producer",
            charts / "throughput-stock-vs-tuned.png",
            order=[str(v) for v in _axis_values(pts)]),
        "mqperf": lambda m, pts, axis, charts: chart_mqperf(
            m, pts, charts / "throughput-mqperf.png"),
        "language-pair": lambda m, pts, axis, charts: chart_heatmap(
            m, pts, charts / "throughput-by-language-pair.png"),
        "latency-vs-load": lambda m, pts, axis, charts: chart_latency(
            m, pts, charts / "latency-vs-load.png"),
        "find-max": lambda m, pts, axis, charts: chart_find_max(m, pts, charts / f"{axis}.png"),
        "by-connections": lambda m, pts, axis, charts: connections.chart_by_connections(
            m, pts, charts / f"{axis}.png"),
    }


# every kind of profiles.CHART_KINDS but "browser" (burstbench/plots/browser.py)
DRAWERS = _drawers()


def render_run(run_dir: Path) -> list[Path]:
    """Draw every chart the run's result files support, each axis the kind its profile
    declares, then the studies' charts and the report; returns the files written."""
    run = results.load_run(run_dir)
    manifest, charts = run.manifest, run.dir / "charts"
    kinds = chart_kinds(run)
    by_axis = run.by_axis()
    written = browser.render(manifest, {a: by_axis.pop(a) for a, k in kinds.items()
                                        if k == "browser"}, charts)
    for axis, pts in by_axis.items():
        kind = kinds[axis]
        if not any(drawable(p) for p in pts) and kind != "language-pair":
            continue
        written.append(DRAWERS[kind](manifest, pts, axis, charts))
    table = broker_table(by_axis, kinds)
    if table:
        charts.mkdir(parents=True, exist_ok=True)
        (charts / "by-broker.md").write_text(table)
        written.append(charts / "by-broker.md")
    if nodelay_pairs(run.points):  # the same find-max with and without --tcp-nodelay
        written.append(chart_nodelay_remedy(manifest, run.points,
                                            charts / "p99-nagle-vs-nodelay.png"))
    written.extend(studies.render_studies(run))
    if (run.dir / "soak.json").exists():
        written.append(soak.draw(run.dir / "soak.json", charts / "soak.png"))
    written.append(report.render(run))  # the page embeds what was just drawn
    return written
