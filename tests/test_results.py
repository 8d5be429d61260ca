"""The result schema: versioned files, stable keys, summary.csv, latest, resume."""

import json
import math

import pytest

from harness import results
from harness.measure import ConsumerRecord
from harness.points import document
from harness.run import Outcome, PointSpec


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


def test_point_document_has_the_stable_keys(tmp_path):
    run = results.Run("r1", ["bench"], root=tmp_path)
    doc = run.write_point("p", document(_outcome(tmp_path), "2026-01-01T00:00:00"))
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
        "latency_ms.p50",
        "latency_ms.p99",
    ):
        assert results.get(doc, key) is not None, key
    assert doc["accounting"]["sent"] == 4 and doc["accounting"]["lost"] == 0
    # burst 1 (the only measured one): sent at 2 s and 3 s, last received at 3.5 s
    assert doc["throughput"]["recv_msgs_per_s"] == pytest.approx(2 / 1.5)
    assert doc["throughput"]["send_msgs_per_s"] == pytest.approx(2.0)
    assert doc["latency_ms"]["p50"] == pytest.approx(500.0)
    assert doc["status"] == "ok" and doc["machine"]["cores"] >= 1
    assert doc["parameters"]["count"] == 2 and "git_commit" in doc


def test_loss_fails_the_point(tmp_path):
    doc = document(_outcome(tmp_path, lose=True), "t")
    assert doc["status"] == "failed"
    assert doc["accounting"]["lost"] == 1
    assert any("1 of 4 messages lost" in e for e in doc["errors"])


def test_nan_is_written_as_null(tmp_path):
    run = results.Run("r2", ["bench"], root=tmp_path)
    run.write_point("p", {"status": "failed", "throughput": {"recv_msgs_per_s": math.nan}})
    assert json.loads(run.point_path("p").read_text())["throughput"]["recv_msgs_per_s"] is None


def test_summary_latest_and_resume(tmp_path):
    run = results.Run("r3", ["bench"], root=tmp_path)
    run.write_point("a", document(_outcome(tmp_path), "t"))
    run.write_point("b", {"status": "incomplete"})
    run.finish("incomplete")
    rows = (tmp_path / "r3" / "summary.csv").read_text().splitlines()
    assert rows[0].split(",") == results.SUMMARY_COLUMNS and len(rows) == 3
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
