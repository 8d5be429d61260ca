"""A sweep resumes where it stopped: finished points are not measured again."""

from __future__ import annotations

import json

import pytest
from conftest import client_or_skip, need_broker_built

from burstbench import paths, sweep

pytestmark = pytest.mark.integration

TINY = """
calibrate: false
defaults: {producer: [stomp-py], consumer: [stomp-py], count: 500, bursts: 2}
axes:
  consumers: {x: consumers, values: [1, 2]}
"""


def test_resume_measures_only_what_is_missing(tmp_path, monkeypatch):
    need_broker_built()
    client_or_skip("stomp-py")
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    (profiles / "tiny.yaml").write_text(TINY)
    monkeypatch.setattr(paths, "PROFILES", profiles)
    run_dir, failed = sweep.run_sweep("tiny", [], root=tmp_path / "results")
    assert failed == 0
    points = sorted((run_dir / "points").glob("*.json"))
    assert len(points) == 2
    kept, lost = points
    kept_doc = kept.read_text()
    # as if the run had crashed during the second point
    lost.unlink()
    manifest = json.loads((run_dir / "run.json").read_text())
    manifest["status"] = "incomplete"
    (run_dir / "run.json").write_text(json.dumps(manifest))
    again, failed = sweep.run_sweep("tiny", [], resume=run_dir.name, root=tmp_path / "results")
    assert again == run_dir and failed == 0
    assert kept.read_text() == kept_doc, "a finished point was measured again"
    assert lost.exists() and json.loads(lost.read_text())["status"] == "ok"
    assert json.loads((run_dir / "run.json").read_text())["status"] == "complete"
    assert (run_dir / "charts" / "throughput-by-consumers.png").exists()


def test_resume_measures_failed_points_again_and_counts_skipped_ones(tmp_path, monkeypatch,
                                                                     capsys):
    """A point an earlier invocation failed is measured again; a point that cannot run here
    (an unknown client) is skipped, and the sweep's status, count and last lines say so."""
    need_broker_built()
    client_or_skip("stomp-py")
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    (profiles / "tiny.yaml").write_text(TINY)
    monkeypatch.setattr(paths, "PROFILES", profiles)
    run_dir, bad = sweep.run_sweep("tiny", [], root=tmp_path / "results")
    assert bad == 0
    first, second = sorted((run_dir / "points").glob("*.json"))
    doc = json.loads(second.read_text())
    doc["status"], doc["errors"] = "failed", ["drain: 700 of 1000 messages received"]
    second.write_text(json.dumps(doc))
    kept = first.read_text()
    _again, bad = sweep.run_sweep("tiny", [], resume=run_dir.name, root=tmp_path / "results")
    assert bad == 0 and first.read_text() == kept
    assert json.loads(second.read_text())["status"] == "ok", "the failed point was not re-run"

    (profiles / "tiny.yaml").write_text(TINY.replace("producer: [stomp-py]",
                                                     "producer: [no-such-client]"))
    capsys.readouterr()
    run_dir, bad = sweep.run_sweep("tiny", [], root=tmp_path / "results")
    err = capsys.readouterr().err
    assert bad == 2
    manifest = json.loads((run_dir / "run.json").read_text())
    assert manifest["status"] == "failed" and manifest["skipped_points"] == 2
    assert "0 of 2 points ok, 0 failed, 2 skipped" in err
    assert "not ok: " in err and "skipped: unknown client 'no-such-client'" in err
