"""Every chart kind, drawn from fixture runs in the result files' own format, read the way a
reader reads it: no two texts overlap, no legend sits on the data area or on a data point,
ticks are words and numbers with thousands separators, a y axis is scaled to the data it
shows (a whisker that would stretch it leaves the frame with its value printed), bandwidth
is in MiB/s, and a client language has one colour in every chart.

The fixture runs are every point of every sweep profile (profiles/*.yaml, expanded by the
sweep's own ``expand``), each a result file written by ``results.Run`` from a real point
document with made-up rates; the two studies' files and a soak's file beside them. The checks
read matplotlib's own objects (Text.get_window_extent with the figure's renderer, the
legend's bounding box against the data transformed to display coordinates) while each figure
is saved.
"""

from __future__ import annotations

import colorsys
import itertools
import math
import re
from pathlib import Path

import matplotlib
import pytest
from matplotlib import colors as mcolors
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.lines import Line2D
from matplotlib.text import Text
from test_results import _outcome

from burstbench import profiles, sweep
from burstbench.infra import brokers
from burstbench.measure import results
from burstbench.measure.points import document
from burstbench.plots import charts, style
from burstbench.plots import soak as soak_chart

matplotlib.use("Agg")
# on one worker (./bench test runs --dist loadgroup): the charts are drawn once, not once per
# worker (a minute and a half)
pytestmark = pytest.mark.xdist_group("charts")

CLIENT_NAMES = ("net-stomp", "stomp-py", "stompjs", "stompjs:tcp", "stompjs-tcp",
                "stompjs:browser", "openwire-jms", "akka-bridge")
WHISKER = 250_000.0  # one send whisker far above every median (the consumers chart)


# -- the fixture runs --------------------------------------------------------------------------

def _rates(doc: dict, recv: float, send: float, spread: float = 0.1) -> None:
    t = doc.setdefault("throughput", {})
    for key, med in (("recv", recv), ("send", send)):
        t[f"{key}_msgs_per_s"] = med
        t[f"{key}_min"] = med * (1 - spread)
        t[f"{key}_max"] = med * (1 + spread)
    t["recv_kib_per_s"] = recv * doc["parameters"].get("size", 6) / 1024


def _doc(tmp_path, point: sweep.Point, profile: str) -> dict:
    doc = document(_outcome(tmp_path), "t")
    doc["parameters"] = point.spec.params()
    kind, version = brokers.parse_broker(point.spec.broker)
    doc.setdefault("versions", {})["broker"] = {"name": brokers.PRODUCTS[kind],
                                                "version": version}
    doc["sweep"] = {"profile": profile, "axis": point.axis, "series": point.series,
                    "x": point.x}
    return doc


def _write_profile_run(tmp_path: Path, profile: str) -> Path:
    """A finished run of every point of the profile, rates made up but shaped like ours: the
    blog's reference lines close together, a send whisker far above the rest, a 1,024-queue
    crash line, latency percentiles over offered load, a find-max search."""
    prof = profiles.load_profile(profile)
    run = results.Run(f"{profile}-fixture", ["bench", "sweep", "--profile", profile],
                      root=tmp_path / "results")
    run.manifest["profile"] = profile
    points = sweep.expand(prof)
    series_index: dict[tuple[str, str], int] = {}
    for i, point in enumerate(points):
        si = series_index.setdefault((point.axis, point.series),
                                     len([k for k in series_index if k[0] == point.axis]))
        doc = _doc(tmp_path, point, profile)
        xi = i % 7
        recv = 14_000 + 3_100 * si - 900 * xi
        if point.rate_of:  # latency-vs-load: a fraction of the flood's rate, paced
            doc["parameters"]["rate"] = round(12_600 * float(point.x), 1)
            recv = doc["parameters"]["rate"]
            base = 0.4 if point.x < 0.5 else 50.0
            doc["latency_ms"] = {"p50": base, "p99": base * 20, "p99_9": base * 25,
                                 "max": base * 30}
        elif point.axis.endswith("-paced"):
            doc["parameters"]["rate"] = 500.0
            doc["latency_ms"] = {"p50": 1.0 + si, "p99": 5.0 + 2 * si + xi}
        if (profile, point.axis, si) == ("full", "consumers", 1):
            recv *= 4  # a fast pair: the blog's two consumer figures ~8 px apart, labels meet
        _rates(doc, recv, recv * 1.2)
        if point.axis == "consumers" and si == len(prof["axes"]["consumers"].get(
                "series") or [1]) - 1 and point.x == 1:
            doc["throughput"]["send_msgs_per_s"] = 70_000.0
            doc["throughput"]["send_max"] = WHISKER
        if point.axis == "queues":
            doc["resources"]["processes"][0]["max_open_files"] = 80 + int(point.x) // 64
        if point.find_max is not None:
            _write_find_max(run, point, doc, tmp_path, profile, si)
            continue
        if (profile, point.axis, point.series, point.x) == ("quick", "topology", "netns",
                                                             "forward"):
            doc = {"status": "skipped", "errors": ["--hosts netns needs root"],
                   "parameters": doc["parameters"], "sweep": doc["sweep"]}
        run.write_point(point.id, doc)
    run.finish("complete")
    return run.dir


def _write_find_max(run, point, flood_doc, tmp_path, profile, si: int) -> None:
    """The flood probe and the sustained probes at fractions of it, as findmax.py writes
    them: upwards until one does not hold, then two bisections. The series' floods lie close
    together (as the latency profile's STOMP pairs did), so their maximum sustainable rates'
    labels meet; the fourth series fails at half its flood (four probes: too few for a
    curve)."""
    flood = 20_000.0 + 400 * si
    _rates(flood_doc, flood, flood * 1.2)
    sw = {"axis": point.axis, "series": point.series, "kind": "find-max",
          "p99_bound_ms": point.find_max}
    flood_doc["sweep"] = {**sw, "x": "max"}
    run.write_point(results.safe_name(f"{point.id}"), flood_doc)
    probes = ((0.25, 2.0, True), (0.5, 6.0, True), (0.75, 30.0, True), (0.9, 42.0, True),
              (1.0, 400.0, False), (0.95, 48.0, True), (0.975, 90.0, False))
    if si == 3:
        probes = ((0.25, 2.0, True), (0.5, 80.0, False), (0.375, 20.0, True),
                  (0.4375, 60.0, False))
    for frac, p99, keeps in probes:
        doc = _doc(tmp_path, point, profile)
        offered = round(flood * frac)
        doc["parameters"]["rate"] = float(offered)
        doc["sweep"] = {**sw, "x": offered}
        doc["sustained"] = {"keeps_up": keeps}
        doc["latency_ms"] = {"p50": p99 / 8, "p99": p99, "p99_9": p99 * 1.5}
        _rates(doc, offered * (1.0 if keeps else 0.8), offered)
        run.write_point(results.safe_name(f"{point.axis}-{point.series}-rate={offered}"), doc)


def _write_studies(run_dir: Path) -> None:
    import json

    head = {"schema_version": results.SCHEMA_VERSION, "run_id": run_dir.name,
            "started": "2026-11-23T02:44:10+0000", "git_commit": "0123456789ab",
            "machine": {"cpu": "AMD EPYC", "cores": 2}, "status": "ok",
            "versions": {"broker": {"name": "ActiveMQ Classic", "version": "6.1.7"}}}
    pi_points = []
    for backend, w, m in itertools.product(("activemq", "akka"), (1, 10), (100, 1000, 10000,
                                                                           100000)):
        secs = (m / 10_000) * (1.0 if backend == "activemq" else 0.05) + 0.1
        pi_points.append({"backend": backend, "workers": w, "messages": m, "elements": 10,
                          "status": "ok", "errors": [], "seconds": secs})
    (run_dir / "pi.json").write_text(json.dumps({
        **head, "study": "pi", "timing": "first send -> last result", "notes": [],
        "parameters": {"workers": [1, 10], "messages": [100, 1000, 10000, 100000],
                       "elements": [10], "languages": ["openwire-jms"], "prefetch": 1000,
                       "backends": ["activemq", "akka"]},
        "points": pi_points}))
    rr_points = []
    for mode, ops in (("temp-queue", 66.0), ("reused-queue", 390.0), ("actor-ask", 3400.0)):
        for payload in (1, 1000, 100000):
            rr_points.append({
                "mode": mode, "payload": payload, "requests": 100, "status": "ok",
                "errors": [], "ops_per_s": ops,
                "latency_ms": {"p50": 1000 / ops, "p99": 2500 / ops, "p99_9": 3000 / ops,
                               "max": 3000 / ops}})
    (run_dir / "reqreply.json").write_text(json.dumps({
        **head, "study": "reqreply",
        "parameters": {"modes": ["temp-queue", "reused-queue", "actor-ask"],
                       "payloads": [1, 1000, 100000], "requests": 100},
        "summary": {"small_payload": 1, "reused_over_temp": 5.9}, "points": rr_points}))


def _write_soak(path: Path) -> Path:
    import json

    t0 = 1_795_408_811_000_000_000
    stats = []
    for i in range(120):
        for broker, heap0 in (("a", 200), ("b", 150)):
            stats.append({"broker": broker, "t_ns": t0 + i * 5_000_000_000, "event": "stats",
                          "heap_used": (heap0 + (i * 37) % 200) * 2**20,
                          "open_files": 92 + (i % 3),
                          "usage": {"store_bytes": (i * (3 if broker == "b" else 1) % 60)
                                    * 2**20 * 4}})
    faults = [{"at_s": s, "kind": k, "t_ns": t0 + int(s * 1e9), "recovery_s": 10.0}
              for s, k in ((75, "broker-kill"), (178, "link-cut"), (291, "broker-kill"),
                           (349, "broker-kill"), (469, "broker-kill"))]
    path.write_text(json.dumps({
        "schema_version": 1,
        "command": ["/home/ci/burstbench/bench", "chaos", "soak", "--results", "/tmp/x/results"],
        "spec": {"duration_s": 600.0, "seed": 42, "faults": 5,
                 "languages": ["net-stomp", "stomp-py", "stompjs", "openwire-jms"]},
        "result": {"scenario": "soak", "status": "ok",
                   "tally": {"sent": 242_500, "received": 242_500, "lost": 0,
                             "duplicates": 1_982},
                   "fault": {"stats": stats, "faults": faults}}}))
    return path


# -- reading a figure as a reader would --------------------------------------------------------

def _marker_kind(line):
    """A drawn marker's kind as a reader tells it apart: its shape and whether it is hollow
    (an errorbar's caps are part of its whisker, no kind of their own)."""
    m = line.get_marker()
    if m in (None, "", " ", "None", "none", "_", "|") or not line.get_visible():
        return None
    face = line.get_markerfacecolor()
    hollow = isinstance(face, str) and face.lower() in ("none", "white", "#ffffff") or (
        not isinstance(face, str) and len(face) == 4 and face[3] == 0)
    return (str(m), bool(hollow))


def _drawn_texts(fig: Figure) -> list[Text]:
    """The texts that are really drawn (an annotation outside its axes is not, nor a tick
    label outside the view): recorded while the figure draws."""
    seen: list[Text] = []
    real = Text.draw

    def record(self, renderer):
        if self.get_visible() and self.get_text().strip():
            seen.append(self)
        return real(self, renderer)

    Text.draw = record
    try:
        fig.canvas.draw()
    finally:
        Text.draw = real
    return seen


def _overlap(a, b, tol: float = 1.0) -> bool:
    return (min(a.x1, b.x1) - max(a.x0, b.x0) > tol) and (min(a.y1, b.y1) - max(a.y0, b.y0) > tol)


def _legend_handle_color(handle):
    for get in ("get_color", "get_facecolor"):
        if hasattr(handle, get):
            c = getattr(handle, get)()
            if hasattr(c, "__len__") and len(c) and not isinstance(c, str) \
                    and hasattr(c[0], "__len__"):
                c = c[0]
            return mcolors.to_hex(c)
    if hasattr(handle, "lines"):  # an errorbar container
        return mcolors.to_hex(handle.lines[0].get_color())
    if hasattr(handle, "patches") and handle.patches:  # a bar container
        return mcolors.to_hex(handle.patches[0].get_facecolor())
    return None


class Reading:
    """What one figure shows, read from matplotlib's objects while it is saved."""

    def __init__(self, name: str, fig: Figure):
        self.name = name
        renderer = fig.canvas.get_renderer()
        texts = _drawn_texts(fig)
        renderer = fig.canvas.get_renderer()
        # the text itself (an annotation's leader line is no text)
        self.texts = [(t, t.get_text(), Text.get_window_extent(t, renderer)) for t in texts]
        self.tick_texts = []
        for ax in fig.axes:
            for axis in (ax.xaxis, ax.yaxis):
                for t in axis.get_ticklabels(which="both"):
                    if t in texts:
                        self.tick_texts.append(t.get_text())
        self.legends = [lg for lg in [ax.get_legend() for ax in fig.axes] + list(fig.legends)
                        if lg is not None and lg.get_visible()]
        self.legend_boxes = [(lg, lg.get_window_extent(renderer)) for lg in self.legends]
        self.axes = [(ax, ax.get_window_extent(renderer), style.data_points(ax, data_only=False))
                     for ax in fig.axes]
        self.images = [(im, im.get_window_extent(renderer)) for ax in fig.axes
                       for im in ax.get_images() if isinstance(im, AxesImage)]
        self.ylabels = [ax.get_ylabel() for ax in fig.axes]
        self.ylims = {id(ax): (ax.get_ylabel(), ax.get_title(), ax.get_ylim(),
                               ax.get_yscale()) for ax in fig.axes}
        self.title = " ".join(filter(None, [fig.get_suptitle()] + [ax.get_title() for ax in
                                                                     fig.axes]))
        self.marker_kinds = {_marker_kind(line) for ax in fig.axes for line in ax.get_lines()
                             if line.get_visible() and len(line.get_xydata())} - {None}
        self.legend_kinds = {_marker_kind(h) for lg in self.legends
                             for h in lg.findobj(Line2D)} - {None}
        self.in_axes = []  # (text, its box, the axes' frame, the axes' data points)
        for t, s, box in self.texts:
            ax = t.axes
            if ax is None or t in self.tick_text_objs(ax) or t in (
                    ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label):
                continue
            frame = ax.get_window_extent(renderer)
            if _overlap(box, frame):
                self.in_axes.append((s, box, style.data_points(ax)))
        self.at_frame = []
        for ax in fig.axes:
            frame = ax.get_window_extent(renderer)
            for line in ax.get_lines():
                if not line.get_visible() or line.get_gid() in ("reference", "beyond-frame") \
                        or line.get_transform() is not ax.transData:
                    continue
                xy = line.get_xydata()
                if not len(xy):
                    continue
                ys = [y for x, y in line.get_transform().transform(xy)
                      if math.isfinite(y) and frame.x0 <= x <= frame.x1]
                if any(abs(y - frame.y1) < 2.0 for y in ys):
                    self.at_frame.append(f"{ax.get_title() or ax.get_ylabel()!r}: "
                                         f"{line.get_label()!r}")
        self.colors = {}
        for lg in self.legends:
            for handle, text in zip(lg.legend_handles, lg.get_texts()):
                c = _legend_handle_color(handle)
                if c:
                    self.colors.setdefault(text.get_text(), set()).add(c)

    @staticmethod
    def tick_text_objs(ax) -> set:
        return {*ax.xaxis.get_ticklabels(which="both"), *ax.yaxis.get_ticklabels(which="both")}

    def overlapping_texts(self) -> list[str]:
        bad = []
        for (ta, sa, ba), (tb, sb, bb) in itertools.combinations(self.texts, 2):
            if _overlap(ba, bb):
                bad.append(f"{sa!r} over {sb!r}")
        return bad

    def covered(self) -> list[str]:
        """Legends on an axes' data area, on a data point or on a text outside them."""
        bad = []
        for lg, box in self.legend_boxes:
            own = set(lg.get_texts()) | {lg.get_title()}
            for ax, frame, pts in self.axes:
                if _overlap(box, frame, tol=0.5):
                    bad.append(f"legend over the data area of {ax.get_title()!r}")
                inside = [p for p in pts if box.x0 <= p[0] <= box.x1 and box.y0 <= p[1] <= box.y1]
                if inside:
                    bad.append(f"legend over {len(inside)} data point(s) of {ax.get_title()!r}")
            for _im, ibox in self.images:
                if _overlap(box, ibox):
                    bad.append("legend over the heat map")
            for t, s, tbox in self.texts:
                if t not in own and _overlap(box, tbox):
                    bad.append(f"legend over the text {s!r}")
        return bad

    def unreadable_ticks(self) -> list[str]:
        bad = []
        for s in self.tick_texts:
            if s in ("True", "False", "None", "nan"):
                bad.append(f"tick {s!r} (a word is wanted)")
            elif "$" in s or "^" in s:
                bad.append(f"tick {s!r} (a plain number is wanted)")
            elif re.search(r"(?<![\d.,])\d{4,}", s.replace("\u2212", "-")):
                bad.append(f"tick {s!r} (thousands separators)")
        return bad


@pytest.fixture(scope="session")  # (once per worker that runs the module: see pytestmark)
def readings(tmp_path_factory) -> dict[str, Reading]:
    """Every chart of every profile's fixture run, the studies and a soak: name -> reading.
    A chart drawn for several profiles is read once per profile (``blog/…``)."""
    tmp = tmp_path_factory.mktemp("charts")
    out: dict[str, Reading] = {}
    current = {"profile": ""}
    real = Figure.savefig

    def keep(self, fname, *args, **kwargs):
        name = f"{current['profile']}/{Path(fname).name}"
        out[name] = Reading(name, self)
        return real(self, fname, *args, **kwargs)

    Figure.savefig = keep
    try:
        for profile in profiles.profile_names():
            current["profile"] = profile
            run_dir = _write_profile_run(tmp, profile)
            if profile == "quick":
                _write_studies(run_dir)
            charts.render_run(run_dir)
        current["profile"] = "soak"
        soak_chart.draw(_write_soak(tmp / "soak.json"), tmp / "soak.png")
    finally:
        Figure.savefig = real
    return out


EVERY_KIND = ("throughput-by-consumers.png", "throughput-by-size.png",
              "throughput-by-queues.png", "throughput-by-persistence.png",
              "throughput-by-topology.png", "throughput-by-tls.png",
              "throughput-by-tcp-nodelay.png", "throughput-stock-vs-tuned.png",
              "throughput-by-broker.png", "latency-by-broker-paced.png",
              "throughput-by-sustained.png", "throughput-mqperf.png",
              "throughput-by-language-pair.png", "latency-vs-load.png", "find-max.png",
              "p99-nagle-vs-nodelay.png",
              "browser-by-tabs.png", "browser-by-size.png", "pi.png", "reqreply.png",
              "connections.png", "soak.png")


def test_every_chart_kind_is_drawn(readings):
    drawn = {name.split("/", 1)[1] for name in readings}
    assert set(EVERY_KIND) <= drawn, sorted(set(EVERY_KIND) - drawn)


def test_no_two_texts_overlap(readings):
    bad = {n: r.overlapping_texts() for n, r in readings.items()}
    bad = {n: b for n, b in bad.items() if b}
    assert not bad, "\n".join(f"{n}: {'; '.join(b[:4])}" for n, b in sorted(bad.items()))


def test_no_legend_covers_the_data(readings):
    bad = {n: r.covered() for n, r in readings.items()}
    bad = {n: b for n, b in bad.items() if b}
    assert not bad, "\n".join(f"{n}: {'; '.join(b[:4])}" for n, b in sorted(bad.items()))


def test_ticks_are_words_and_numbers_with_thousands_separators(readings):
    bad = {n: r.unreadable_ticks() for n, r in readings.items()}
    bad = {n: sorted(set(b)) for n, b in bad.items() if b}
    assert not bad, "\n".join(f"{n}: {'; '.join(b[:5])}" for n, b in sorted(bad.items()))


def test_a_stretching_whisker_leaves_the_frame_with_its_value(readings):
    """The consumers chart: one send whisker at 250,000 while every median is below 75,000.
    No axis runs to 250,000; the whisker's value is printed."""
    r = readings["blog/throughput-by-consumers.png"]
    tops = [lim[1] for _label, _title, lim, scale in r.ylims.values() if scale == "linear"]
    assert tops and max(tops) < 0.6 * WHISKER, tops
    assert any(f"{WHISKER:,.0f}" in s for _t, s, _b in r.texts), [s for _t, s, _b in r.texts]


def test_bandwidth_is_in_mib_per_second(readings):
    for name in ("blog/throughput-by-size.png", "quick/throughput-by-size.png"):
        labels = readings[name].ylabels
        assert any("MiB/s" in s for s in labels), labels
        assert not any("KiB" in s or "KB" in s for s in labels), labels


def test_send_and_receive_are_told_apart_without_the_legend(readings):
    """Within one axes a series' send and receive differ in line style or marker (or hatch
    for bars); otherwise they are in panels whose titles say which is which."""
    for name, r in readings.items():
        for ax, _frame, _pts in r.axes:
            handles, labels = ax.get_legend_handles_labels()
            styles = {}
            for h, lab in zip(handles, labels):
                for kind in ("send", "receive"):
                    if lab.endswith(" " + kind):
                        styles.setdefault(lab[: -len(kind) - 1], {})[kind] = _style(h)
            for series, st in styles.items():
                if len(st) == 2:
                    assert st["send"] != st["receive"], (name, series, st)


def _style(handle):
    if hasattr(handle, "patches") and handle.patches:
        p = handle.patches[0]
        return ("bar", p.get_hatch(), round(p.get_alpha() or 1, 2))
    line = handle.lines[0] if hasattr(handle, "lines") else handle
    if isinstance(line, Line2D):
        return ("line", line.get_linestyle(), line.get_marker())
    return ("other", type(handle).__name__)


def _hue(hex_color: str) -> float:
    r, g, b = mcolors.to_rgb(hex_color)
    return colorsys.rgb_to_hls(r, g, b)[0]


def test_one_colour_per_client_language_in_every_chart(readings):
    """A client's legend entry has the same colour in every chart; a -tuned entry the hue of
    its stock client; two languages never share a colour."""
    seen: dict[str, set[str]] = {}
    for r in readings.values():
        for label, cols in r.colors.items():
            base = label.split(" ")[0]
            if base.removesuffix("-tuned") in CLIENT_NAMES:
                seen.setdefault(base, set()).update(cols)
    assert seen, "no client in any legend"
    many = {k: v for k, v in seen.items() if len(v) != 1}
    assert not many, many
    colour = {k: next(iter(v)) for k, v in seen.items()}
    for name, c in colour.items():
        if name.endswith("-tuned") and name.removesuffix("-tuned") in colour:
            stock = colour[name.removesuffix("-tuned")]
            d = abs(_hue(c) - _hue(stock))
            assert min(d, 1 - d) < 0.04, (name, c, stock)
    stock = {k: v for k, v in colour.items() if not k.endswith("-tuned")
             and k not in ("stompjs:tcp", "stompjs-tcp")}
    assert len(set(stock.values())) == len(stock), stock


# -- issue 50, point 6: charts read at a glance ------------------------------------------------

def test_every_marker_kind_drawn_has_a_legend_entry(readings):
    """A reader tells a cross, a hollow circle or a triangle apart only if the legend says
    what each is: the reference figures' crosses, probes that did not hold, failed points."""
    bad = {n: sorted(r.marker_kinds - r.legend_kinds) for n, r in readings.items()}
    bad = {n: b for n, b in bad.items() if b}
    assert not bad, "\n".join(f"{n}: {b}" for n, b in sorted(bad.items()))


def test_a_failed_point_and_an_escaping_whisker_are_explained_in_the_legend(readings):
    labels = {n: [t.get_text() for lg in r.legends for t in lg.get_texts()]
              for n, r in readings.items()}
    assert any("failed or skipped" in s for s in labels["quick/throughput-by-topology.png"])
    assert any("beyond the frame" in s for s in labels["blog/throughput-by-consumers.png"])


def test_text_inside_the_axes_is_on_no_data_point(readings):
    """Reference labels, whisker values, reasons and notes in an axes sit beside the data,
    never on a line's vertex, a whisker's end or a bar's top (renderer boxes)."""
    bad = {}
    for n, r in readings.items():
        for s, box, pts in r.in_axes:
            hit = [p for p in pts if box.x0 + 0.5 < p[0] < box.x1 - 0.5
                   and box.y0 + 0.5 < p[1] < box.y1 - 0.5]
            if hit:
                bad.setdefault(n, []).append(f"{s!r} over {len(hit)} data point(s)")
    assert not bad, "\n".join(f"{n}: {'; '.join(b[:4])}" for n, b in sorted(bad.items()))


def test_no_data_line_runs_along_the_top_of_its_frame(readings):
    """A flat series at the top frame (the queues chart's open files) reads as no data."""
    bad = {n: r.at_frame for n, r in readings.items() if r.at_frame}
    assert not bad, "\n".join(f"{n}: {'; '.join(b[:4])}" for n, b in sorted(bad.items()))


PATH_LIKE = re.compile(r"(?<![\w/])(?:~|\.{1,2})?/(?:work|tmp|home|root|usr|var|opt|mnt|"
                       r"Users|[\w.-]+/)")


def test_no_picture_shows_a_path_of_any_machine(readings):
    bad = {n: [s for _t, s, _b in r.texts if PATH_LIKE.search(s)] for n, r in readings.items()}
    bad = {n: b for n, b in bad.items() if b}
    assert not bad, bad


def test_every_title_says_what_was_measured_and_with_which_clients(readings):
    from burstbench import clients

    names = set(clients.names()) | set(CLIENT_NAMES)
    measured = re.compile(r"throughput|latency|rate|msg/s|seconds|heap|requests", re.IGNORECASE)
    bad = {n: r.title for n, r in readings.items()
           if not any(c in r.title for c in names) or not measured.search(r.title)}
    assert not bad, "\n".join(f"{n}: {t!r}" for n, t in sorted(bad.items()))
    assert "stomp-py -> stomp-py" in readings["quick/throughput-by-topology.png"].title


def test_the_find_max_legend_has_one_entry_per_series_and_each_mark_once(readings):
    r = readings["latency/find-max.png"]
    labels = [t.get_text() for lg in r.legends for t in lg.get_texts()]
    assert len(labels) <= 12, labels
    for series in ("net-stomp", "stomp-py", "stompjs", "openwire-jms"):
        assert labels.count(series) == 1, labels
    assert "probe held" in labels and "probe did not hold" in labels


def test_a_latency_curve_has_at_least_five_offered_loads(readings):
    """Every profile that draws latency over offered load offers at least five loads; a
    series with fewer (a find-max search that failed early) is points, never a line."""
    from burstbench import profiles as profs

    for name in profiles.profile_names():
        for axis, ax in profiles.load_profile(name)["axes"].items():
            if (ax or {}).get("kind") == "latency-vs-load":
                assert len(set(ax.get("fractions", profs.DEFAULT_FRACTIONS))) >= 5, (name, axis)
    for name in ("quick/latency-vs-load.png", "full/latency-vs-load.png"):
        r = readings[name]
        joined = [len(line.get_xdata()) for ax, _f, _p in r.axes for line in ax.get_lines()
                  if line.get_linestyle() not in ("None", "none", "") and line.get_marker()
                  not in (None, "", "None") and line.get_transform() is ax.transData]
        assert joined and min(joined) >= 5, (name, joined)
    r = readings["latency/find-max.png"]
    assert any("fewer offered loads" in s and "openwire-jms (4)" in s for _t, s, _b in r.texts)


def test_a_profile_with_fewer_than_five_latency_loads_is_refused(tmp_path, monkeypatch):
    from burstbench import paths

    (tmp_path / "mine.yaml").write_text(
        "axes:\n  latency: {kind: latency-vs-load, fractions: [0.25, 0.9]}\n")
    monkeypatch.setattr(paths, "PROFILES", tmp_path)
    with pytest.raises(profiles.ProfileError, match="at least 5"):
        profiles.load_profile("mine")
