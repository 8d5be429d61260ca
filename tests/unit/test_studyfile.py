"""burstbench/studies/studyfile.py: the studies' one result file, its interrupted and finished
states."""

from __future__ import annotations

import json
import types

import pytest

from burstbench.studies.studyfile import StudyFile


def _study(tmp_path, said: list | None = None):
    run = types.SimpleNamespace(id="x-1", dir=tmp_path)
    say = (said if said is not None else []).append
    return StudyFile.begin(run, "demo", {"n": [1, 2]}, say, note="a note")


def test_a_point_is_saved_as_it_comes_and_ctrl_c_leaves_the_file_incomplete(tmp_path):
    study = _study(tmp_path)
    with pytest.raises(KeyboardInterrupt), study.measuring():
        study.add({"status": "ok", "v": 1})
        assert json.loads((tmp_path / "demo.json").read_text())["points"] == [
            {"status": "ok", "v": 1}]
        raise KeyboardInterrupt
    doc = json.loads((tmp_path / "demo.json").read_text())
    assert doc["status"] == "incomplete" and "finished" not in doc
    assert list(doc)[:9] == ["schema_version", "study", "run_id", "started", "machine",
                             "git_commit", "status", "parameters", "note"]


@pytest.mark.parametrize(("statuses", "want"), [(["ok", "ok"], "ok"), (["ok", "failed"], "failed")])
def test_finish_writes_status_tables_and_chart_and_says_a_failed_chart(tmp_path, statuses, want):
    said: list[str] = []
    study = _study(tmp_path, said)
    for s in statuses:
        study.add({"status": s})

    def chart(doc, png):
        raise RuntimeError(f"no chart for {png.name}")

    doc = study.finish(lambda d: (f"md {d['status']}", f"<p>{d['status']}</p>"), chart)
    assert doc["status"] == want and doc["finished"]
    assert json.loads((tmp_path / "demo.json").read_text())["status"] == want
    assert (tmp_path / "demo.md").read_text() == f"md {want}"
    assert (tmp_path / "demo.html").read_text() == f"<p>{want}</p>"
    assert said == ["demo: chart failed: no chart for demo.png"]
