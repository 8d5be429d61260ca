"""The result schema: versioned files, stable keys, summary.csv, latest, resume."""

import json
import math

import pytest

from burstbench.measure import results
from burstbench.measure.measure import ConsumerRecord
from burstbench.measure.outcome import Outcome
from burstbench.measure.points import document
from burstbench.measure.spec import PointSpec


def _outcome(tmp_path, lose=False):
    spec = PointSpec(producer=["stomp-py"], consumer=["stomp-py"], count=2, bursts=2)
    o = Outcome(spec=spec, point_dir=tmp_path, broker_version="6.1.7")
    s = 1_000_000_000
    o.producer_records = [("p1", i, i // 2, i * s) for i in range(4)]
    recs = [
        ConsumerRecord("p1", i, i // 2, i * s, i * s + s // 2, 6, True, False, "q")
        for i in range(4)
        if not (lose and i == 3)
    ]
    o.consumer_records = {"c1": recs}
    o.processes = [
        {
            "name": "broker-a",
            "role": "broker",
            "cpu_s": 1.0,
            "max_rss_mb": 100.0,
            "max_open_files": 50,
            "exit_code": 143,
            "pid": 1,
            "log": "x",
        }
    ]
    return o


def _paced_outcome(tmp_path):
    """A paced point (10 msg/s): 2 bursts of 20, each message received 0.5 s after its
    intended send time."""
    spec = PointSpec(producer=["stomp-py"], consumer=["stomp-py"], count=20, bursts=2, rate=10.0)
    o = _outcome(tmp_path)
    o.spec = spec
    s = 1_000_000_000
    o.producer_records = [("p1", i, i // 20, i * s // 10) for i in range(40)]
    o.consumer_records = {"c1": [
        ConsumerRecord("p1", i, i // 20, i * s // 10, i * s // 10 + s // 2, 6, True, False, "q")
        for i in range(40)]}
    return o


def test_a_flood_reports_time_in_queue_not_latency(tmp_path):
    doc = document(_outcome(tmp_path), "t")
    assert doc["latency_ms"] is None
    assert doc["time_in_queue_ms"]["samples"] == 2
    assert doc["time_in_queue_ms"]["p50"] is None  # 2 samples: too few for a percentile
    assert doc["time_in_queue_ms"]["max"] == pytest.approx(500.0)


def test_point_document_has_the_stable_keys(tmp_path):
    run = results.Run("r1", ["bench"], root=tmp_path)
    doc = run.write_point("p", document(_paced_outcome(tmp_path), "2026-01-01T00:00:00"))
    on_disk = json.loads(run.point_path("p").read_text())
    assert on_disk == doc
    assert doc["schema_version"] == results.SCHEMA_VERSION and doc["run_id"] == "r1"
    for key in (
        "accounting.sent",
        "accounting.received",
        "accounting.lost",
        "accounting.duplicates",
        "throughput.send_msgs_per_s",
        "throughput.recv_msgs_per_s",
    ):
        assert results.get(doc, key) is not None, key
    # latency keys exist for a paced point; a percentile with too few samples is null (n/a)
    assert doc["latency_ms"]["p50"] == pytest.approx(500.0, rel=1e-3)
    assert "p99" in doc["latency_ms"] and doc["latency_ms"]["p99"] is None  # 20 samples
    assert doc["latency_ms"]["samples"] == 20 and doc["time_in_queue_ms"] is None
    assert doc["accounting"]["sent"] == 40 and doc["accounting"]["lost"] == 0
    # burst 1 (the only measured one): sent from 2.0 s to 3.9 s, last received at 4.4 s
    assert doc["throughput"]["recv_msgs_per_s"] == pytest.approx(20 / 2.4)
    assert doc["throughput"]["send_msgs_per_s"] == pytest.approx(20 / 1.9)
    assert doc["status"] == "ok" and doc["machine"]["cores"] >= 1
    assert doc["parameters"]["count"] == 20 and "git_commit" in doc


def test_loss_fails_the_point(tmp_path):
    doc = document(_outcome(tmp_path, lose=True), "t")
    assert doc["status"] == "failed"
    assert doc["accounting"]["lost"] == 1
    assert any("1 of 4 messages lost" in e for e in doc["errors"])


@pytest.mark.hand_made_results  # partial point files, written by hand
def test_nan_is_written_as_null(tmp_path):
    run = results.Run("r2", ["bench"], root=tmp_path)
    run.write_point("p", {"status": "failed", "throughput": {"recv_msgs_per_s": math.nan}})
    assert json.loads(run.point_path("p").read_text())["throughput"]["recv_msgs_per_s"] is None


@pytest.mark.hand_made_results  # partial point files, written by hand
def test_summary_latest_and_resume(tmp_path):
    run = results.Run("r3", ["bench"], root=tmp_path)
    run.write_point("a", document(_outcome(tmp_path), "t"))
    run.write_point("b", {"status": "incomplete"})
    run.finish("incomplete")
    rows = (tmp_path / "r3" / "summary.csv").read_text().splitlines()
    assert rows[0].split(",") == results.SUMMARY_COLUMNS and len(rows) == 3
    row = dict(zip(results.SUMMARY_COLUMNS, rows[1].split(","), strict=True))
    assert row["broker"] == "classic" and row["versions.broker.name"] == "ActiveMQ Classic"
    assert (row["rate"], row["tls"], row["hosts"]) == ("0", "False", "loopback")
    assert (tmp_path / "latest").resolve() == (tmp_path / "r3").resolve()
    assert results.resolve_run("latest", tmp_path) == (tmp_path / "r3").resolve()
    again = results.Run("r3", ["bench"], root=tmp_path, resume=True)
    assert again.done_points() == {"a"}  # the incomplete point is measured again
    with pytest.raises(FileExistsError):
        results.Run("r3", ["bench"], root=tmp_path)


def test_newer_schema_is_refused(tmp_path):
    p = tmp_path / "p.json"
    p.write_text(json.dumps({"schema_version": results.SCHEMA_VERSION + 1}))
    with pytest.raises(ValueError, match="newer"):
        results.load_point(p)
