"""Results in the formats tools read: a point's HdrHistogram interval log (.hlog), the run's
OpenMetrics metrics.prom, and summary.csv's columns (every parameter, every headline)."""

import pytest
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader
from test_results import _outcome

from burstbench.measure import results
from burstbench.measure.measure import HDR_MAX_US, ConsumerRecord, percentile_key
from burstbench.measure.points import document
from burstbench.measure.run import Outcome, PointSpec

S = 1_000_000_000
T0 = 1_767_225_600 * S  # 2026-01-01 00:00:00 UTC: records carry epoch nanoseconds


def _paced(tmp_path, label="") -> Outcome:
    """A paced point, 2 bursts of 1,500 at 500 msg/s (3 s each), latencies from 0.2 ms to
    about 37 ms, so that p99 (1,000 samples needed) has a figure."""
    spec = PointSpec(producer=["stomp-py"], consumer=["stomp-py"], count=1500, bursts=2,
                     rate=500.0, label=label)
    o = Outcome(spec=spec, point_dir=tmp_path, broker_version="6.1.7")
    sent = [T0 + i * S // 500 for i in range(3000)]
    o.producer_records = [("p1", i, i // 1500, t) for i, t in enumerate(sent)]
    o.consumer_records = {"c1": [
        ConsumerRecord("p1", i, i // 1500, t, t + 200_000 + (i * 7919 % 997) * 37_000, 6,
                       True, False, "q") for i, t in enumerate(sent)]}
    return o


def _measured(run: results.Run, point_id: str, outcome: Outcome) -> dict:
    """What ``points.measure_point`` writes for an outcome: the .hlog, then the JSON."""
    records: list = []
    doc = document(outcome, "2026-01-01T00:00:00", records)
    if (hlog := run.write_histogram_log(point_id, doc, records)) is not None:
        doc["histogram_log"] = hlog
    return run.write_point(point_id, doc)


def _read_hlog(path):
    """Every interval of an .hlog as hdrh's reader gives it."""
    reader = HistogramLogReader(str(path), HdrHistogram(1, HDR_MAX_US, 3))
    out = []
    try:
        while (h := reader.get_next_interval_histogram()) is not None:
            out.append(h)
    finally:
        reader.close()
    return out


def test_the_hlog_reads_back_as_the_json_figures(tmp_path):
    run = results.Run("h1", ["bench"], root=tmp_path)
    doc = _measured(run, "paced", _paced(tmp_path))
    lat = doc["latency_ms"]
    assert lat["samples"] == 1500 and lat["p99"] is not None  # burst 1 only: 0 is warm-up
    entry = doc["histogram_log"]
    assert entry == {"file": "paced.hlog", "of": "latency_ms", "unit": "us", "interval_s": 1,
                     "intervals": 4, "samples": 1500}
    path = run.dir / "points" / entry["file"]
    text = path.read_text()
    assert text.startswith("#burstbench run h1 point paced: latency")
    assert "#[StartTime: " in text and "#[BaseTime: " in text
    intervals = _read_hlog(path)
    assert len(intervals) == entry["intervals"]
    # one interval per second of receive time, from the first measured record's receive
    first = min(r.recv_ns for r in _paced(tmp_path).consumer_records["c1"] if r.burst == 1)
    starts = [h.get_start_time_stamp() for h in intervals]
    assert starts == pytest.approx([first / 1e6 + 1000 * k for k in range(4)], abs=0.01)
    assert all(h.get_end_time_stamp() - h.get_start_time_stamp() == pytest.approx(1000)
               for h in intervals)
    merged = HdrHistogram(1, HDR_MAX_US, 3)
    for h in intervals:
        merged.add(h)
    assert merged.get_total_count() == lat["samples"]
    for p in (50.0, 90.0, 99.0):  # the same values recorded the same way: the same figures
        assert merged.get_value_at_percentile(p) / 1000 == pytest.approx(
            lat[percentile_key(p)], rel=1e-3)
    assert merged.get_max_value() / 1000 == pytest.approx(lat["max"], rel=1e-3)


def test_a_flood_logs_its_time_in_queue_and_a_point_without_figures_no_file(tmp_path):
    run = results.Run("h2", ["bench"], root=tmp_path)
    doc = _measured(run, "flood", _outcome(tmp_path))
    assert doc["latency_ms"] is None
    assert doc["histogram_log"]["of"] == "time_in_queue_ms"
    intervals = _read_hlog(run.dir / "points" / "flood.hlog")
    assert sum(h.get_total_count() for h in intervals) == doc["time_in_queue_ms"]["samples"]
    failed = _outcome(tmp_path)
    failed.producer_records, failed.consumer_records = [], {}
    failed.status, failed.errors = "failed", ["the broker never started"]
    doc = _measured(run, "never-ran", failed)
    assert "histogram_log" not in doc and not (run.dir / "points" / "never-ran.hlog").exists()
