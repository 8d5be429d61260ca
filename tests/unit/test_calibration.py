"""The calibration reference (burstbench/measure/calibration.py) and ./bench compare --calibrated:
two runs of one machine at different speeds compare once each is divided by its own reference."""

from __future__ import annotations

from test_report import _run_with_points

from burstbench import compare
from burstbench.measure import calibration


def _calibrate(run, median, spread=0.05):
    run.manifest["calibration"] = {"reference": {
        "recv_msgs_per_s": median, "min": median * (1 - spread), "max": median * (1 + spread),
        "bursts": 3}, "cpu": {"loops_per_s": median / 1000}}
    run._save_manifest()


def test_a_slower_machine_is_no_regression_once_calibrated(tmp_path, capsys):
    fast = _run_with_points(tmp_path, "fast")
    slow = _run_with_points(tmp_path, "slow", scale=0.5)  # every figure half
    _calibrate(fast, 40_000)
    _calibrate(slow, 20_000)
    assert compare.compare(fast.dir, slow.dir, threshold=10) == 1  # absolute: a regression
    capsys.readouterr()
    assert compare.compare(fast.dir, slow.dir, threshold=10, calibrated=True) == 0
    out = capsys.readouterr().out
    assert "they differ beyond their spread" in out and "B/A 0.50" in out
    assert "1.00  " in out and "REGRESSION" not in out


def test_calibrated_compare_needs_both_references(tmp_path, capsys):
    a = _run_with_points(tmp_path, "a")
    b = _run_with_points(tmp_path, "b")
    _calibrate(a, 40_000)
    assert compare.compare(a.dir, b.dir, threshold=10, calibrated=True) == 2
    assert "run b has no calibration reference" in capsys.readouterr().err


def test_references_within_each_others_spread_do_not_differ():
    a = {"recv_msgs_per_s": 100.0, "min": 90.0, "max": 110.0}
    assert not calibration.differ(a, {"recv_msgs_per_s": 105.0, "min": 101.0, "max": 120.0})
    assert calibration.differ(a, {"recv_msgs_per_s": 130.0, "min": 120.0, "max": 140.0})
    assert calibration.scale(50.0, a) == 0.5 and calibration.scale(None, a) is None


def test_the_cpu_loop_reports_a_rate_with_its_spread():
    c = calibration.cpu_loop(repetitions=3)
    assert c["n"] == 3 and 0 < c["min"] <= c["loops_per_s"] <= c["max"]
