"""Charts and the HTML report from result files alone; the page really shows them."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from test_results import _outcome

from harness import compare, results
from harness.points import document
from plots import charts


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
