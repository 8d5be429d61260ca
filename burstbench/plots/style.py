"""How every chart looks: one colour per client language, numbers as a reader writes them,
legends beside the data, labels that never overlap, y axes scaled to the data, a footer.

Colours come from the client registry (``burstbench.clients``: a client's ``language``), so a
language has one colour in every chart; a ``-tuned`` entry keeps its language's hue, lighter
and dashed; another transport of the same client (``stompjs:tcp``) is darker and dash-dotted.
A series that is not a client (``loopback``/``netns``, ``1 broker``) takes the colour of the
one client all its points ran, told apart by line style or hatch, or a neutral colour.
"""

from __future__ import annotations

import itertools
import math
import re
import sys
from functools import cache

import matplotlib

matplotlib.use("Agg")
from matplotlib import colors as mcolors
from matplotlib.ticker import (
    FixedFormatter,
    FixedLocator,
    FuncFormatter,
    LogFormatter,
    NullFormatter,
    ScalarFormatter,
)
from matplotlib.transforms import Bbox

# one colour per client language (the registry's ``language``), everywhere
LANGUAGE_COLORS = {
    "perl": "#1f77b4",
    "python": "#2ca02c",
    "node": "#d62728",
    "java": "#ff7f0e",
    "browser": "#e377c2",
    "akka": "#9467bd",
    "pekko": "#17becf",
}
# series that are no client and ran no single client: colours no language uses
NEUTRAL = ("#4d4d4d", "#a6761d", "#8c8c8c", "#6b6b00")
VARIANT_LINESTYLES = ("-", "--", ":", "-.")
VARIANT_HATCHES = (None, "//", "..", "xx")
REF_COLOR = "#b03a2e"
REF_STYLE = {"color": REF_COLOR, "linestyle": ":", "linewidth": 1.4, "gid": "reference"}
# a reference label: readable over bars and lines, tied to its line when the placer moves it
REF_LABEL = {"fontsize": 7, "color": REF_COLOR, "textcoords": "offset points",
             "bbox": {"boxstyle": "square,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.85},
             "arrowprops": {"arrowstyle": "-", "color": REF_COLOR, "linewidth": 0.6,
                            "shrinkA": 0, "shrinkB": 0}}
FOOTER_COLOR = "#555555"
# legends go beside the axes; legend_beside() makes room for them
LEGEND_FONT = 7.5


def _mix(color: str, other: str, amount: float) -> str:
    a, b = mcolors.to_rgb(color), mcolors.to_rgb(other)
    return mcolors.to_hex(tuple(x + (y - x) * amount for x, y in zip(a, b)))


def lighter(color: str, amount: float = 0.45) -> str:
    return _mix(color, "#ffffff", amount)


def darker(color: str, amount: float = 0.35) -> str:
    return _mix(color, "#000000", amount)


@cache
def client_of(label: str):
    """The registry's client behind a series label (``stomp-py``, ``stompjs:tcp``,
    ``stompjs-tcp``, ``net-stomp -> stomp-py``: the producer's side), or None."""
    from burstbench import clients

    name = str(label).split(" -> ")[0].strip()
    if name.endswith("-tcp"):  # the full profile's label for stompjs:tcp
        name = name[: -len("-tcp")] + ":tcp"
    try:
        return clients.resolve(name)
    except clients.UnknownClient:
        return None


def client_style(label: str) -> dict | None:
    """Colour, line style, hatch and marker of a client's series, or None if ``label`` names
    no client."""
    r = client_of(label)
    if r is None:
        return None
    base = LANGUAGE_COLORS.get(r.client.language, NEUTRAL[0])
    if r.client.tuned:
        return {"color": lighter(base), "linestyle": "--", "hatch": "//", "marker": "s"}
    if r.transport != r.client.default_transport and r.client.language != "browser":
        return {"color": darker(base), "linestyle": "-.", "hatch": "..", "marker": "D"}
    return {"color": base, "linestyle": "-", "hatch": None, "marker": "o"}


def series_styles(series: dict[str, list[dict]]) -> dict[str, dict]:
    """Label -> style for every series of a chart (``series``: label -> its point docs)."""
    out, others = {}, []
    for label in sorted(series):
        st = client_style(label)
        if st is not None:
            out[label] = st
        else:
            others.append(label)
    ran = set()
    for label in others:
        for p in series[label]:
            params = p.get("parameters") or {}
            ran.update(params.get("producer") or [])
            ran.update(params.get("consumer") or [])
    one = client_style(next(iter(ran))) if len(ran) == 1 else None
    for i, label in enumerate(others):
        if one is not None:  # every series ran the same client: its colour, told apart
            out[label] = {"color": one["color"] if i % 2 == 0 else darker(one["color"], 0.3),
                          "linestyle": VARIANT_LINESTYLES[i % 4],
                          "hatch": VARIANT_HATCHES[i % 4], "marker": "osD^"[i % 4]}
        else:
            out[label] = {"color": NEUTRAL[i % len(NEUTRAL)], "linestyle": "-",
                          "hatch": VARIANT_HATCHES[i % 4], "marker": "osD^"[i % 4]}
    return out


# -- numbers -------------------------------------------------------------------------------

def number(v: float) -> str:
    """A tick's value as a reader writes it: 0.1, 2.5, 40, 1,000, 250,000."""
    if not math.isfinite(v):
        return ""
    if v == 0:
        return "0"
    if abs(v) >= 100 or float(v).is_integer():
        return f"{v:,.0f}"
    if abs(v) >= 1:
        return f"{v:,.1f}".rstrip("0").rstrip(".")
    return f"{v:.2g}"


NUMBER = FuncFormatter(lambda v, _pos: number(v))


def _log_minor(v, _pos, span):
    m = v / 10 ** math.floor(math.log10(v)) if v > 0 else 0
    return number(v) if span < 1.2 and round(m) in (2, 5) else ""


def numbers_everywhere(fig) -> None:
    """Every numeric axis of the figure (colour bars too) in plain numbers with thousands
    separators: 1,024 not 2^10, 10,000 not 10000, 0.1 not 10^-1. Category axes (fixed
    labels) and axes already given a formatter are left alone."""
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            fmt = axis.get_major_formatter()
            if isinstance(fmt, (FixedFormatter, FuncFormatter)):
                continue
            if not isinstance(fmt, (ScalarFormatter, LogFormatter)):
                continue
            axis.set_major_formatter(NUMBER)
            if axis.get_scale() == "log":
                lo, hi = axis.get_view_interval()
                span = math.log10(max(hi, 1e-12) / max(lo, 1e-12)) if lo > 0 else 9
                axis.set_minor_formatter(FuncFormatter(
                    lambda v, pos, span=span: _log_minor(v, pos, span)))
            else:
                axis.set_minor_formatter(NullFormatter())


def size(v: float) -> str:
    """A body size as a reader says it: 6 B, 1 KiB, 64 KiB, 1 MiB."""
    for unit, scale in (("MiB", 2**20), ("KiB", 2**10)):
        if v >= scale and v % scale == 0:
            return f"{v / scale:,.0f} {unit}"
    return f"{v:,.0f} B"


def ticks_at(ax, axis: str, values, unit: str = "") -> None:
    """Ticks at exactly the measured values (a log2 axis of sizes or queues), as numbers
    (``unit="bytes"``: as sizes)."""
    vals = sorted({float(v) for v in values if isinstance(v, (int, float))})
    if not vals:
        return
    a = ax.xaxis if axis == "x" else ax.yaxis
    a.set_ticks(vals, [size(v) if unit == "bytes" else number(v) for v in vals])
    a.set_minor_formatter(NullFormatter())
    if axis == "x":
        ax.minorticks_off()


# -- y axes scaled to the data -------------------------------------------------------------

def scale_to_data(ax, rows: list[tuple[float, float, float, float, str]],
                  bottom: float | None = 0.0) -> None:
    """``rows``: (x, median, low, high, colour) of every whisker drawn in ``ax``. The y axis
    runs to the medians and the whiskers that do not dwarf them; a whisker that would
    stretch it leaves the frame with an arrow and its value printed beside."""
    meds = [m for _x, m, _lo, _hi, _c in rows if math.isfinite(m)]
    if not meds:
        return
    cap = max(meds) * 1.6
    top = max([*meds, *(h for *_, h, _c in rows if math.isfinite(h) and h <= cap)])
    top *= 1.1
    ax.set_ylim(bottom=bottom, top=top)
    for x, _m, _lo, hi, color in rows:
        if math.isfinite(hi) and hi > top:
            ax.plot([x], [top], marker="^", markersize=6, color=color, clip_on=False,
                    linestyle="none", zorder=6, gid=BEYOND_FRAME)
            ax.annotate(f"{hi:,.0f}", (x, top), xytext=(5, -9), textcoords="offset points",
                        fontsize=7, color=color, ha="left", va="center",
                        annotation_clip=False)


# -- legends, labels, footer ---------------------------------------------------------------

def legend_beside(fig, handles, labels, title: str | None = None, **kw):
    """One legend for the whole figure, to the right of every axes: never on the data.
    ``explain_marks`` may rebuild it with the marks every chart shares."""
    fig._burstbench_legend = (list(handles), list(labels), title, kw)
    if not handles:
        return None
    return fig.legend(handles, labels, loc="upper right", bbox_to_anchor=(0.995, 0.93),
                      fontsize=LEGEND_FONT, title=title, title_fontsize=LEGEND_FONT,
                      frameon=False, **kw)


# marks any chart may draw (by their gid), each explained once in the legend
NOT_DRAWN = "not-drawn"
BEYOND_FRAME = "beyond-frame"
MARK_KEYS = {
    NOT_DRAWN: ({"marker": "X", "color": "#c0392b", "markersize": 8},
                "failed or skipped point (why, beside it)"),
    BEYOND_FRAME: ({"marker": "^", "color": "#555555", "markersize": 6},
                   "whisker beyond the frame (its value beside it)"),
}


def explain_marks(fig) -> None:
    """Add a legend entry for each shared mark the figure draws (a failed point's cross, a
    whisker's arrow out of the frame), to its legend or to a new one."""
    from matplotlib.lines import Line2D

    drawn = {line.get_gid() for ax in fig.axes for line in ax.get_lines()}
    extra = [(Line2D([], [], linestyle="none", **look), text)
             for gid, (look, text) in MARK_KEYS.items() if gid in drawn]
    if not extra:
        return
    handles, labels, title, kw = getattr(fig, "_burstbench_legend", ([], [], None, {}))
    for lg in list(fig.legends):
        lg.remove()
    legend_beside(fig, handles + [h for h, _t in extra], labels + [t for _h, t in extra],
                  title, **kw)


# a path of some machine: /home/..., ~/..., ./...: never in a picture
_PATH = re.compile(r"(?<![\w/])(?:~|\.{1,2})?/[^\s|'\"]+")


def no_paths(text: str) -> str:
    """``text`` with every path replaced by its last part (``/home/ci/burstbench/bench`` ->
    ``bench``): a chart says what ran, never where on the machine that drew it."""
    return _PATH.sub(lambda m: m.group(0).rstrip("/").rsplit("/", 1)[-1] or "-", text)


def _wrap(name: str, width: int = 9) -> str:
    """``openwire-jms-tuned`` -> ``openwire-`` / ``jms-tuned``: lines of at most ``width``
    characters where the name has hyphens or spaces."""
    parts = re.findall(r"[^- ]+[- ]?", name)
    lines, cur = [], ""
    for part in parts:
        if cur and len(cur + part.rstrip()) > width:
            lines.append(cur.rstrip())
            cur = ""
        cur += part
    lines.append(cur.rstrip())
    return "\n".join(lines)


def _crowded(ax, renderer) -> bool:
    boxes = sorted((t.get_window_extent(renderer) for t in ax.xaxis.get_ticklabels()
                    if t.get_visible() and t.get_text()), key=lambda b: b.x0)
    return any(b.x0 - a.x1 < 6 for a, b in itertools.pairwise(boxes))


def turn_crowded_ticks(fig) -> bool:
    """Category names that would touch on an x axis are broken at their hyphens, and if they
    still touch, turned upright; True if any was (the layout must then be made again)."""
    named = [ax for ax in fig.axes if isinstance(ax.xaxis.get_major_locator(), FixedLocator)
             and ax.xaxis.get_major_formatter() is not NUMBER]
    if not named:
        return False
    fig.canvas.draw()  # one layout to measure every axes in
    renderer = fig.canvas.get_renderer()
    crowded = [ax for ax in named if _crowded(ax, renderer)]
    done: set = set()
    for ax in crowded:
        if ax in done:  # (an axes sharing x with one turned already)
            continue
        names = [t.get_text() for t in ax.get_xticklabels()]
        ticks = ax.get_xticks()
        group = ax.get_shared_x_axes().get_siblings(ax)
        done.update(group)
        for a in group:
            a.set_xticks(ticks, [_wrap(n) for n in names], rotation=0, ha="center")
        fig.canvas.draw()
        if any(_crowded(a, fig.canvas.get_renderer()) for a in group):
            for a in group:
                a.set_xticks(ticks, names, rotation=90, ha="center")
    return bool(crowded)


def _obstacles(fig, renderer, movable) -> list[Bbox]:
    boxes = []
    for ax in fig.axes:
        texts = [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label]
        texts += list(ax.xaxis.get_ticklabels(which="both"))
        texts += list(ax.yaxis.get_ticklabels(which="both"))
        texts += [t for t in ax.texts if t not in movable]
        for t in texts:
            if t.get_visible() and t.get_text().strip():
                boxes.append(t.get_window_extent(renderer))
        if ax.get_legend() is not None:
            boxes.append(ax.get_legend().get_window_extent(renderer))
        for side in ("top", "bottom"):  # nor across the frame
            spine = ax.spines[side]
            if spine.get_visible():
                b = spine.get_window_extent(renderer)
                boxes.append(Bbox.from_extents(b.x0 - 1, b.y0 - 1, b.x1 + 1, b.y1 + 1))
        for line in ax.get_lines():  # reference lines: a label must not sit on another's
            y = line.get_ydata()
            if len(y) == 2 and y[0] == y[1] and line.get_linestyle() == ":":
                b = line.get_window_extent(renderer)
                boxes.append(Bbox.from_extents(b.x0, b.y0 - 1, b.x1, b.y1 + 1))
    for t in fig.texts:
        if t not in movable and t.get_visible() and t.get_text().strip():
            boxes.append(t.get_window_extent(renderer))
    if getattr(fig, "_suptitle", None) is not None and fig._suptitle.get_text():
        boxes.append(fig._suptitle.get_window_extent(renderer))
    for lg in fig.legends:
        boxes.append(lg.get_window_extent(renderer))
    return boxes


def _hits(box: Bbox, others, tol: float = 0.5) -> bool:
    return any(min(box.x1, o.x1) - max(box.x0, o.x0) > tol
               and min(box.y1, o.y1) - max(box.y0, o.y0) > tol for o in others)


def data_points(ax, data_only: bool = True) -> list[tuple[float, float]]:
    """The data points of ``ax`` in display coordinates: the vertices of its data lines (with
    ``data_only``, no reference line and no line in axes coordinates), whisker ends, bar tops
    and middles, scatter offsets. A label placed in the axes must not sit on any."""
    from matplotlib.collections import LineCollection, PathCollection
    from matplotlib.patches import Rectangle

    pts = []
    for line in ax.get_lines():
        if not line.get_visible() or data_only and (
                line.get_gid() == "reference" or line.get_transform() is not ax.transData):
            continue
        xy = line.get_xydata()
        if len(xy):
            pts += [tuple(p) for p in line.get_transform().transform(xy)]
    for patch in ax.patches:
        if isinstance(patch, Rectangle) and patch.get_visible():
            b = patch.get_window_extent()
            pts += [(b.x0, b.y1), (b.x1, b.y1), ((b.x0 + b.x1) / 2, (b.y0 + b.y1) / 2)]
    for coll in ax.collections:
        if isinstance(coll, LineCollection):
            for seg in coll.get_segments():
                if len(seg):
                    pts += [tuple(p) for p in coll.get_transform().transform(seg)]
        elif isinstance(coll, PathCollection):
            offs = coll.get_offsets()
            if len(offs):
                pts += [tuple(p) for p in coll.get_offset_transform().transform(offs)]
    return [p for p in pts if all(math.isfinite(v) for v in p)]


def _inside(box: Bbox, frame: Bbox, tol: float = 0.5) -> bool:
    return (box.x0 >= frame.x0 - tol and box.x1 <= frame.x1 + tol
            and box.y0 >= frame.y0 - tol and box.y1 <= frame.y1 + tol)


def _on_points(box: Bbox, pts, pad: float = 2.0) -> bool:
    return any(box.x0 - pad <= x <= box.x1 + pad and box.y0 - pad <= y <= box.y1 + pad
               for x, y in pts)


def place_labels(fig) -> None:
    """Move every annotation placed in offset points (reference labels, whisker values,
    marks of points not drawn) by the least distance until it overlaps no other text, tick
    label, title, legend or data point; a label in an axes stays in it (up or down first,
    then to the other side of its anchor). The figure's layout must be final."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    movable = [t for ax in fig.axes for t in ax.texts
               if isinstance(t, matplotlib.text.Annotation) and t.anncoords == "offset points"
               and t.get_visible() and t.get_text().strip()]
    placed = _obstacles(fig, renderer, set(movable))
    points = {id(ax): data_points(ax) for ax in fig.axes}
    fig_box = fig.bbox
    px_per_pt = fig.dpi / 72.0
    step = 3.0  # px
    for t in movable:
        if hasattr(t, "_check_xy") and not t._check_xy(renderer):
            continue  # not drawn (its point is outside the axes)
        box = matplotlib.text.Text.get_window_extent(t, renderer)  # the text, no leader
        frame = t.axes.get_window_extent(renderer) if t.axes else fig_box
        keep_in = t.axes is not None and _inside(box, frame, tol=2.0)
        pts = points.get(id(t.axes), [])
        best = None
        for dx in (0.0, -(box.width + 6), box.width + 6):
            for k in range(120):
                for sign in ((1,) if k == 0 else (1, -1)):
                    dy = sign * k * step
                    cand = Bbox.from_extents(box.x0 + dx, box.y0 + dy, box.x1 + dx,
                                             box.y1 + dy)
                    if cand.y0 < fig_box.y0 or cand.y1 > fig_box.y1:
                        continue
                    if keep_in and not _inside(cand, frame, tol=2.0):
                        continue
                    if not _hits(cand, placed) and not _on_points(cand, pts):
                        best = (dx, dy, cand)
                        break
                if best:
                    break
            if best:
                break
        if best is None:
            placed.append(box)
            continue
        dx, dy, cand = best
        if dx or dy:
            x, y = t.xyann
            t.xyann = (x + dx / px_per_pt, y + dy / px_per_pt)
        placed.append(cand)


@cache
def drawing_commit() -> str:
    """The commit of the code that draws (``-dirty`` when the work tree is)."""
    from burstbench.measure import results

    return results.git_commit()


def warn_if_dirty(out=sys.stderr) -> bool:
    """One line on ``out`` when charts are drawn from a dirty tree; True if it is."""
    c = drawing_commit()
    if c.endswith("-dirty"):
        print(f"bench plot: warning: the work tree has uncommitted changes: the charts' "
              f"footers say 'drawn at {c}'; commit, then draw charts to publish", file=out)
        return True
    return False


def drawn_at(run_commit: str | None) -> str:
    """`` | drawn at COMMIT`` when the drawing code is not the run's, else ''."""
    c = drawing_commit()
    return "" if c == run_commit else f" | drawn at {c}"
