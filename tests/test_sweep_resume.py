"""A sweep resumes where it stopped: finished points are not measured again."""

from __future__ import annotations

import json

import pytest
from conftest import client_or_skip, need_broker_built

from harness import paths, sweep

pytestmark = pytest.mark.integration

TINY = """
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
