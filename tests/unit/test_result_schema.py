"""schema/point.schema.json and schema/run.schema.json: the result files' JSON Schema
(draft 2020-12). Files the harness's own code writes match it; broken ones do not. Every run
and point file another test leaves in its tmp_path is checked by conftest's autouse fixture."""

import copy
import json

import pytest
from conftest import check_result_file, schema_errors, schema_validator
from test_results import _outcome, _paced_outcome

from burstbench.measure import results
from burstbench.measure.points import document


def _written(tmp_path):
    run = results.Run("s1", ["bench", "run"], root=tmp_path)
    paced = run.write_point("paced", document(_paced_outcome(tmp_path), "2026-01-01T00:00:00"))
    flood = run.write_point("flood", document(_outcome(tmp_path), "2026-01-01T00:00:00"))
    skipped = run.write_point("skipped", {
        "status": "skipped", "errors": ["--hosts netns needs root"],
        "parameters": _outcome(tmp_path).spec.params(),
        "sweep": {"profile": "quick", "axis": "consumers", "series": "stomp-py", "x": 4}})
    return run, paced, flood, skipped


@pytest.mark.parametrize("kind", ["point", "run"])
def test_the_schemas_are_valid_and_name_the_harness_schema_version(kind):
    schema = schema_validator(kind).schema
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["properties"]["schema_version"] == {"const": results.SCHEMA_VERSION}


def test_what_the_harness_writes_matches(tmp_path):
    run, paced, flood, skipped = _written(tmp_path)
    for doc in (paced, flood, skipped):
        assert schema_errors("point", doc) == []
    assert schema_errors("run", run.manifest) == []  # status running, nothing finished yet
    run.manifest.update(profile="quick", axes=["consumers"], studies=[])
    run.finish("failed", failed_points=0, skipped_points=1, wall_s=1.5)
    for path in (run.manifest_path, *run.dir.glob("points/*.json")):
        check_result_file(path)


def _broken(doc, how):
    doc = copy.deepcopy(doc)
    if how == "no accounting.lost":
        del doc["accounting"]["lost"]
    elif how == "throughput as text":
        doc["throughput"]["recv_msgs_per_s"] = "fast"
    elif how == "unknown status":
        doc["status"] = "great"
    elif how == "unknown key":
        doc["recv_msgs_per_s"] = 1.0
    elif how == "newer schema_version":
        doc["schema_version"] = results.SCHEMA_VERSION + 1
    elif how == "ok with errors":
        doc["errors"] = ["1 of 40 messages lost"]
    elif how == "ok without accounting":
        del doc["accounting"]
    elif how == "negative count":
        doc["accounting"]["sent"] = -1
    return doc


@pytest.mark.parametrize("how", ["no accounting.lost", "throughput as text", "unknown status",
                                 "unknown key", "newer schema_version", "ok with errors",
                                 "ok without accounting", "negative count"])
def test_a_broken_point_file_fails(tmp_path, how):
    _, paced, _, _ = _written(tmp_path)
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(_broken(paced, how)))
    assert schema_errors("point", json.loads(path.read_text()))
    with pytest.raises(AssertionError, match="does not match schema/point.schema.json"):
        check_result_file(path)


def test_a_broken_run_file_fails(tmp_path):
    run, *_ = _written(tmp_path)
    run.finish("complete")
    doc = json.loads(run.manifest_path.read_text())
    for key, value in (("status", "done"), ("command", "bench run"), ("finished", None)):
        bad = copy.deepcopy(doc)
        if value is None:
            del bad[key]
        else:
            bad[key] = value
        assert schema_errors("run", bad), key
    doc.pop("finished")
    (run.dir / "run.json").write_text(json.dumps(doc))
    with pytest.raises(AssertionError, match="does not match schema/run.schema.json"):
        check_result_file(run.dir / "run.json")
    (run.dir / "run.json").write_text(json.dumps({**doc, "finished": "2026-01-01T00:00:00"}))
