"""Charts and the HTML report from result files alone; the page really shows them."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from test_results import _outcome

from burstbench import compare
from burstbench.measure import results
from burstbench.measure.points import document
from burstbench.plots import charts


def _run_with_points(tmp_path, name="r", scale=1.0):
    run = results.Run(name, ["bench", "sweep"], root=tmp_path)
    for n in (1, 2, 4):
        doc = document(_outcome(tmp_path), "2026-01-01T00:00:00")
        doc["sweep"] = {"profile": "quick", "axis": "consumers", "series": "stomp-py", "x": n}
        doc["parameters"]["consumers"] = n
        for key in ("recv_msgs_per_s", "recv_min", "recv_max", "send_msgs_per_s", "send_min",
                    "send_max"):
            doc["throughput"][key] = 1000.0 * n * scale + (50 if key.endswith("max") else 0) \
                - (50 if key.endswith("min") else 0)
        run.write_point(f"consumers-{n}", doc)
    run.finish("complete")
    return run


def test_plot_renders_charts_and_a_self_contained_report(tmp_path):
    run = _run_with_points(tmp_path)
    written = charts.render_run(run.dir)
    names = sorted(p.name for p in written)
    assert names == ["report.html", "throughput-by-consumers.png"]
    page = (run.dir / "report.html").read_text()
    assert "data:image/png;base64," in page and "<img" in page
    assert "src=\"http" not in page and "href=\"http" not in page  # nothing fetched
    assert "consumers-4" in page and "Accounting" in page and "Environment" in page


def test_report_opens_with_the_accounting_and_the_blogs_first_chart(tmp_path):
    """A run with a latency axis beside the consumers axis: the page's first section is the
    accounting, its first chart throughput by consumers (the blog's first), not latency."""
    from burstbench.plots import report

    run = _run_with_points(tmp_path)
    for n, rate in ((1, 0), (2, 500)):
        doc = document(_outcome(tmp_path), "2026-01-01T00:00:00")
        doc["sweep"] = {"profile": "quick", "axis": "latency", "series": "stomp-py",
                        "x": "max" if not rate else 0.5}
        doc["parameters"]["rate"] = rate
        doc["latency_ms"] = {"p50": 1.0, "p99": 4.0}
        run.write_point(f"latency-{n}", doc)
    charts.render_run(run.dir)
    assert {"latency-vs-load.png", "throughput-by-consumers.png"} <= {
        c.name for c in results.load_run(run.dir).charts}
    page = (run.dir / "report.html").read_text()
    assert page.index("<h2>Accounting</h2>") < page.index("<img") \
        == page.index('<img alt="throughput-by-consumers"')
    assert page.split("<h2>", 2)[1].startswith("Accounting</h2>")
    ctx = report.context(results.load_run(run.dir))
    assert ctx["charts"][0]["name"] == "throughput-by-consumers"


@pytest.mark.integration
def test_report_screenshot_in_headless_chromium_shows_the_charts(tmp_path):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        pytest.skip("chromium not installed (Debian package chromium)")
    import matplotlib.image as mpimg

    run = _run_with_points(tmp_path)
    charts.render_run(run.dir)
    shot = tmp_path / "shot.png"
    # (check=False: the screenshot below is the verdict, not headless Chromium's exit status)
    r = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}",
         "--window-size=1200,1600", f"--screenshot={shot}",
         (run.dir / "report.html").as_uri()],
        capture_output=True, text=True, timeout=120, check=False)
    assert shot.exists(), r.stderr[-2000:]
    img = mpimg.imread(shot)[..., :3]
    non_white = (img < 0.95).any(axis=2).mean()
    assert non_white > 0.03, f"page looks empty ({non_white:.1%} non-white)"
    # the chart's lines are coloured (stomp-py's green): text alone is grey
    colour = ((img.max(axis=2) - img.min(axis=2)) > 0.3).mean()
    assert colour > 0.0005, f"no chart colours on the page ({colour:.3%})"


def test_compare_flags_a_regression_beyond_the_spread(tmp_path, capsys):
    a = _run_with_points(tmp_path, "a")
    b = _run_with_points(tmp_path, "b", scale=0.5)
    same = _run_with_points(tmp_path, "c")
    assert compare.compare(a.dir, same.dir, threshold=10) == 0
    assert compare.compare(a.dir, b.dir, threshold=10) == 1
    out = capsys.readouterr().out
    assert "REGRESSION" in out and "0.50" in out
    assert "comparable points: 0.693" in out  # how far apart: |ln 0.5|, each point halved
    assert compare.compare(b.dir, a.dir, threshold=10) == 0  # faster is not a regression


def test_a_failed_or_skipped_point_is_a_cross_never_a_figure(tmp_path, monkeypatch):
    """The consumers chart of a run whose 4-consumer point lost messages and whose 8-consumer
    point was skipped: the line has the two good points only; each bad one is a cross on the
    axis with its reason; the report shows no rate for them."""
    run = _run_with_points(tmp_path)
    bad = results.load_point(run.point_path("consumers-4"))
    bad["status"] = "failed"
    bad["accounting"]["lost"] = 23800
    bad["errors"] = ["23800 of 80000 messages lost"]
    run.write_point("consumers-4", bad)
    run.write_point("consumers-8", {"status": "skipped", "errors": ["--hosts netns needs root"],
                                    "parameters": {**bad["parameters"], "consumers": 8},
                                    "sweep": {**bad["sweep"], "x": 8}})
    drawn = {}
    real_finish = charts.finish_chart

    def keep(fig, ax, manifest, points, path, note=""):
        drawn["lines"] = [(tuple(line.get_xdata()), tuple(line.get_ydata()),
                           line.get_marker()) for line in ax.get_lines()]
        drawn["texts"] = [t.get_text() for t in ax.texts]
        return real_finish(fig, ax, manifest, points, path, note)

    monkeypatch.setattr(charts, "finish_chart", keep)
    charts.render_run(run.dir)
    data = [(xs, ys) for xs, ys, marker in drawn["lines"] if marker in ("o", "x")]
    assert data and all(4 not in xs and 8 not in xs for xs, _ in data), data
    crosses = [(xs, ys) for xs, ys, marker in drawn["lines"] if marker == "X"]
    assert sorted(xs[0] for xs, _ in crosses) == [4, 8] and all(ys == (0,) for _, ys in crosses)
    assert "stomp-py failed: 23,800 lost" in drawn["texts"]
    assert any(t.startswith("stomp-py skipped: --hosts netns needs root") for t in drawn["texts"])
    page = (run.dir / "report.html").read_text()
    row = page.split("consumers-4</td>", 1)[1].split("</tr>", 1)[0]
    assert "4,000" not in row and "4000" not in row, row


def test_browser_profile_draws_rate_and_latency_in_one_chart_per_x(tmp_path):
    """The browser profile's flood and paced axes are drawn together (browser-by-tabs.png);
    a failed browser point is marked, never a figure."""
    run = results.Run("b", ["bench", "sweep"], root=tmp_path)
    for axis, paced in (("browser-tabs", False), ("browser-tabs-paced", True)):
        for series in ("stompjs:browser", "stompjs"):
            for n in (1, 4, 16):
                doc = document(_outcome(tmp_path), "2026-01-01T00:00:00")
                doc["sweep"] = {"profile": "browser", "axis": axis, "series": series, "x": n}
                doc["parameters"]["consumers"] = n
                if paced:
                    doc["parameters"]["rate"] = 500.0
                    doc["latency_ms"] = {"p50": 2.0 * n, "p99": 9.0 * n}
                if series == "stompjs:browser" and n == 16 and not paced:
                    doc["status"], doc["errors"] = "failed", ["c7-browser exited with 1"]
                run.write_point(f"{axis}-{series.replace(':', '_')}-{n}", doc)
    run.finish("complete")
    names = sorted(p.name for p in charts.render_run(run.dir))
    assert names == ["browser-by-tabs.png", "report.html"]
    assert (run.dir / "charts" / "browser-by-tabs.png").stat().st_size > 10000


# -- one loader, chart kinds from the profile, the report from templates ---------------------

def test_load_run_reads_manifest_points_and_studies_once(tmp_path):
    run = _run_with_points(tmp_path)
    (run.dir / "pi.json").write_text('{"study": "pi"}')
    loaded = results.load_run(run.dir)
    assert loaded.id == "r" and loaded.manifest["status"] == "complete"
    assert [p["point"] for p in loaded.points] == ["consumers-1", "consumers-2", "consumers-4"]
    assert loaded.studies == {"pi": {"study": "pi"}}
    assert list(loaded.by_axis()) == ["consumers"] and loaded.profile == "quick"


def _profile_run(tmp_path, monkeypatch, profile_text: str, axis: str):
    from burstbench import paths

    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "mine.yaml").write_text(profile_text)
    monkeypatch.setattr(paths, "PROFILES", tmp_path / "profiles")
    run = _run_with_points(tmp_path)
    for p in results.load_run(run.dir).points:
        run.write_point(p["point"], {**p, "sweep": {**p["sweep"], "profile": "mine",
                                                     "axis": axis}})
    return run


def test_the_profile_not_the_axis_name_decides_the_chart(tmp_path, monkeypatch):
    """An axis named `consumers` declared `by-category` gets bars; an axis of any other name
    declared `by-consumers` gets the consumers line with the blog's figures."""
    calls = []
    monkeypatch.setattr(charts, "chart_by_category",
                        lambda *a, **kw: calls.append(("bars", a[3], a[4].name)) or a[4])
    monkeypatch.setattr(charts, "chart_by_numeric",
                        lambda *a, **kw: calls.append(("line", a[3], a[4].name,
                                                       len(kw.get("refs", ())))) or a[4])
    monkeypatch.setattr(charts.report, "render", lambda run: run.dir / "report.html")
    run = _profile_run(tmp_path, monkeypatch,
                       "axes:\n  fanout: {x: consumers, values: [1], chart: by-consumers}\n",
                       "fanout")
    charts.render_run(run.dir)
    assert calls == [("line", "consumers", "throughput-by-fanout.png", 2)]
    calls.clear()
    (tmp_path / "profiles" / "mine.yaml").write_text(
        "axes:\n  consumers: {x: consumers, values: [1], chart: by-category}\n")
    for p in results.load_run(run.dir).points:
        run.write_point(p["point"], {**p, "sweep": {**p["sweep"], "axis": "consumers"}})
    charts.render_run(run.dir)
    assert calls == [("bars", "consumers", "throughput-by-consumers.png")]


def test_every_chart_kind_has_its_drawing_and_an_unknown_one_is_a_one_line_error(
        tmp_path, monkeypatch):
    from burstbench import profiles

    assert set(profiles.CHART_KINDS) == set(charts.DRAWERS) | {"browser"}
    for name in profiles.profile_names():  # the shipped profiles declare known kinds
        profiles.load_profile(name)
    run = _profile_run(tmp_path, monkeypatch,
                       "axes:\n  consumers: {x: consumers, values: [1], chart: pie}\n",
                       "consumers")
    with pytest.raises(profiles.ProfileError) as e:
        charts.render_run(run.dir)
    msg = str(e.value)
    assert "\n" not in msg and "unknown chart kind 'pie'" in msg and "by-category" in msg
    assert isinstance(e.value, ValueError)  # bench's one line: "bench plot: error: ..."


def test_report_shows_the_studies_from_their_json_and_escapes_every_value(tmp_path):
    """The Pi section comes from pi.json (no pi.md needed: nothing re-parsed); a point's error
    text is escaped, never markup; pi.md is the Markdown of the same blocks."""
    from burstbench.plots import report, studies

    run = _run_with_points(tmp_path)
    bad = results.load_point(run.point_path("consumers-4"))
    run.write_point("consumers-4", {**bad, "status": "failed",
                                    "errors": ["<script>alert(1)</script> & more"]})
    doc = {"run_id": "r", "status": "ok", "timing": "first send -> last result", "notes": [],
           "parameters": {"workers": [1], "messages": [100], "elements": [10],
                          "languages": ["openwire-jms"], "prefetch": 1000,
                          "backends": ["activemq"]},
           "points": [{"backend": "activemq", "workers": 1, "messages": 100, "elements": 10,
                       "status": "failed", "errors": ["worker w1 exited 3"], "seconds": None}]}
    (run.dir / "pi.json").write_text(json.dumps(doc))
    page = report.render(run.dir).read_text()
    assert not (run.dir / "pi.md").exists()
    pi = page.split("<h2>Pi study</h2>", 1)[1].split("<h2>", 1)[0]
    assert "<h3>Leibniz Pi: seconds, ours (paper)  [ok]</h3>" in pi
    assert "<th>messages</th><th>ActiveMQ W=1</th>" in pi and "<td>FAILED" in pi
    assert "<li>activemq W=1 M=100 E=10: worker w1 exited 3</li>" in pi
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; more" in page
    md, _html = studies.pi_tables(doc)
    assert md.startswith("# Leibniz Pi: seconds, ours (paper)  [ok]\n\nRun r; ")
    assert "\n| messages | ActiveMQ W=1 |\n|---|---|\n| 100 | FAILED" in md
    assert md.endswith("\nFailed points:\n- activemq W=1 M=100 E=10: worker w1 exited 3\n")
