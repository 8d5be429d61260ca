"""Results in the formats tools read: a point's HdrHistogram interval log (.hlog), the run's
OpenMetrics metrics.prom, and summary.csv's columns (every parameter, every headline)."""

import csv
import re
from dataclasses import fields

import pytest
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader
from test_results import _outcome

from burstbench.measure import results
from burstbench.measure.measure import (
    HDR_MAX_US,
    PERCENTILES,
    Accounting,
    ConsumerRecord,
    percentile_key,
)
from burstbench.measure.outcome import Outcome
from burstbench.measure.points import document
from burstbench.measure.spec import PointSpec

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


# -- metrics.prom ----------------------------------------------------------------------------
_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)')
_SUFFIXES = {"gauge": ("",), "counter": ("_total",), "summary": ("", "_count", "_sum")}


def _unescape(value: str) -> str:
    return re.sub(r'\\(.)', lambda m: {"\\": "\\", '"': '"', "n": "\n"}[m.group(1)], value)


def parse_openmetrics(text: str) -> dict:
    """A strict reader of the OpenMetrics text this project writes: ``{family: {"type",
    "unit", "help", "samples": {(sample name, frozenset of labels): value}}}``. Fails on a
    line out of place: a sample before its family's TYPE, a family twice, a sample name its
    type does not allow, a UNIT the name does not end with, a repeated sample, a label value
    escaped wrongly, anything after ``# EOF``."""
    assert text.endswith("\n# EOF\n") and text.count("# EOF") == 1
    families: dict = {}
    current = None
    for line in text.removesuffix("# EOF\n").splitlines():
        if line.startswith("#"):
            m = re.fullmatch(rf"# (TYPE|UNIT|HELP) ({_NAME}) (.+)", line)
            assert m, line
            kw, name, rest = m.groups()
            if kw == "TYPE":
                assert name not in families, f"family {name} twice"
                assert rest in _SUFFIXES, line
                families[name] = {"type": rest, "samples": {}}
                current = name
                continue
            assert name == current and kw.lower() not in families[name], line
            families[name][kw.lower()] = rest
            if kw == "UNIT":
                assert name.endswith("_" + rest), line
            continue
        m = re.fullmatch(rf"({_NAME})\{{(.*)\}} (\S+)", line)
        assert m and current, line
        sample, label_text, value = m.groups()
        fam = families[current]
        assert sample in {current + s for s in _SUFFIXES[fam["type"]]}, line
        labels, pos = {}, 0
        while pos < len(label_text):
            lm = _LABEL.match(label_text, pos)
            assert lm and lm.group(1) not in labels, line
            labels[lm.group(1)] = _unescape(lm.group(2))
            pos = lm.end()
            assert lm.group(3) or pos == len(label_text), line
        key = (sample, frozenset(labels.items()))
        assert key not in fam["samples"], f"repeated sample: {line}"
        fam["samples"][key] = float(value)
        if fam["type"] == "counter" or sample.endswith(("_count", "_sum")):
            assert float(value) >= 0, line
    return families


def _of(families: dict, sample: str, point: str, **extra) -> float | None:
    """The value of ``sample`` for ``point`` (None: no such sample)."""
    found = [v for f in families.values() for (name, labels), v in f["samples"].items()
             if name == sample and dict(labels)["point"] == point
             and all(dict(labels).get(k) == want for k, want in extra.items())]
    assert len(found) <= 1
    return found[0] if found else None


def test_metrics_prom_is_openmetrics_with_the_points_figures(tmp_path):
    label = 'say "hi"\\ to\nme'  # every character a label value escapes
    run = results.Run("m1", ["bench"], root=tmp_path)
    paced = _measured(run, "paced", _paced(tmp_path, label=label))
    flood = _measured(run, "flood", _outcome(tmp_path))
    run.write_point("skipped", {"status": "skipped", "errors": ["--hosts netns needs root"],
                                "parameters": PointSpec().params(),
                                "sweep": {"profile": "quick", "axis": "consumers",
                                          "series": "stomp-py", "x": 4}})
    run.finish("failed")
    fams = parse_openmetrics((run.dir / "metrics.prom").read_text())
    for name in ("burstbench_latency_seconds", "burstbench_time_in_queue_seconds",
                 "burstbench_latency_max_seconds"):
        assert fams[name]["unit"] == "seconds"
    assert all(f.get("help") for f in fams.values())
    labels = dict(next(k for k in fams["burstbench_point_ok"]["samples"]
                       if dict(k[1])["point"] == "paced")[1])
    assert labels["label"] == label and labels["run"] == "m1"
    assert (labels["producer"], labels["consumers"], labels["size"], labels["rate"],
            labels["broker"], labels["tls"]) == ("stomp-py", "1", "6", "500", "classic", "False")
    for point, doc in (("paced", paced), ("flood", flood)):
        assert _of(fams, "burstbench_point_ok", point) == 1
        assert _of(fams, "burstbench_send_messages_per_second", point) == pytest.approx(
            doc["throughput"]["send_msgs_per_s"])
        assert _of(fams, "burstbench_receive_messages_per_second", point) == pytest.approx(
            doc["throughput"]["recv_msgs_per_s"])
        for key, sample in (("sent", "messages_sent"), ("received", "messages_received"),
                            ("lost", "messages_lost"), ("duplicates", "duplicates")):
            assert _of(fams, f"burstbench_{sample}_total", point) == doc["accounting"][key]
    lat = paced["latency_ms"]
    for q, key in (("0.5", "p50"), ("0.99", "p99")):
        assert _of(fams, "burstbench_latency_seconds", "paced", quantile=q) == pytest.approx(
            lat[key] / 1000)
    # p99.9 needs 10,000 samples: n/a in the JSON, no sample here
    assert lat["p99_9"] is None
    assert _of(fams, "burstbench_latency_seconds", "paced", quantile="0.999") is None
    assert _of(fams, "burstbench_latency_seconds_count", "paced") == lat["samples"]
    assert _of(fams, "burstbench_latency_seconds_sum", "paced") == pytest.approx(
        lat["mean"] * lat["samples"] / 1000)
    assert _of(fams, "burstbench_latency_max_seconds", "paced") == pytest.approx(
        lat["max"] / 1000)
    # a flood has time in queue, never latency
    assert _of(fams, "burstbench_latency_seconds_count", "flood") is None
    assert _of(fams, "burstbench_time_in_queue_seconds_count", "flood") == 2
    assert _of(fams, "burstbench_time_in_queue_max_seconds", "flood") == pytest.approx(0.5)
    # a skipped point: it did not pass, and it has no figures
    assert _of(fams, "burstbench_point_ok", "skipped") == 0
    assert _of(fams, "burstbench_messages_sent_total", "skipped") is None


def test_every_command_that_writes_summary_csv_writes_metrics_prom(tmp_path):
    run = results.Run("m2", ["bench"], root=tmp_path)
    _measured(run, "flood", _outcome(tmp_path))
    results.write_summary(run.dir)
    assert (run.dir / "metrics.prom").read_text().endswith("# EOF\n")


# -- summary.csv ------------------------------------------------------------------------------
# PointSpec fields that are not parameters of what was measured: how long the harness waits
# before it gives up on a point (PointSpec.params() leaves them out of the result too)
NOT_PARAMETERS = {"drain_timeout", "ready_timeout"}


def test_every_parameter_of_a_point_has_a_summary_column():
    missing = [f.name for f in fields(PointSpec)
               if f.name not in NOT_PARAMETERS and f.name not in results.SUMMARY_COLUMNS]
    assert missing == []
    assert set(PointSpec().params()) <= set(results.SUMMARY_COLUMNS)


def test_every_headline_figure_has_a_summary_column(tmp_path):
    doc = document(_paced(tmp_path), "t")
    want = [f"throughput.{k}" for k, v in doc["throughput"].items()
            if isinstance(v, int | float) and not isinstance(v, bool)]
    for section in ("latency_ms", "time_in_queue_ms"):
        want += [f"{section}.{percentile_key(p)}" for p in PERCENTILES]
        want += [f"{section}.{k}" for k in ("samples", "max", "min", "mean")]
    # body_errors is corrupt under its old name, kept for readers of older results
    want += [f"accounting.{f.name}" for f in fields(Accounting)
             if f.type == "int" and f.name != "body_errors"]
    assert [c for c in want if c not in results.SUMMARY_COLUMNS] == []


def test_summary_rows_fill_the_appended_columns(tmp_path):
    run = results.Run("s1", ["bench"], root=tmp_path)
    _measured(run, "flood", _outcome(tmp_path))
    o = _paced(tmp_path)
    o.spec.placement = {"broker": {"a": "h1"}}
    o.spec.broker_urls = ["tcp://h1:61616", "tcp://h2:61616"]
    _measured(run, "paced", o)
    run.finish("complete")
    with open(run.dir / "summary.csv", newline="") as f:
        rows = {r["point"]: r for r in csv.DictReader(f)}
    assert list(rows["flood"]) == results.SUMMARY_COLUMNS  # the header, in its order
    assert rows["flood"]["time_in_queue_ms.samples"] == "2"
    assert rows["flood"]["time_in_queue_ms.max"] == "500"
    assert rows["flood"]["latency_ms.samples"] == "" and rows["flood"]["bursts"] == "2"
    assert rows["paced"]["placement"] == '{"broker":{"a":"h1"}}'
    assert rows["paced"]["broker_urls"] == "tcp://h1:61616,tcp://h2:61616"
    assert rows["paced"]["histogram_log.file"] == "paced.hlog"
    assert rows["paced"]["accounting.corrupt"] == "0"
