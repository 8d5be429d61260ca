"""``pytest -m sweep``: the profile's points as tests (same code as ``./bench sweep``).

Choose the profile with BURSTBENCH_PROFILE (default quick) and axes with ``-k AXIS``.
Each point is one test that fails if its accounting fails; the charts of the session's run
are drawn at the end.
"""

from __future__ import annotations

import os
import sys

import pytest
from conftest import check_result_file

from burstbench import profiles, sweep
from burstbench.errors import PointFailed
from burstbench.measure import results
from burstbench.measure.points import measure_point

PROFILE = os.environ.get("BURSTBENCH_PROFILE", "quick")
POINTS = sweep.expand(profiles.load_profile(PROFILE))


@pytest.fixture(scope="session")
def sweep_run():
    run = results.Run(results.new_run_id(f"pytest-sweep-{PROFILE}"), sys.argv)
    run.manifest.update(profile=PROFILE)
    yield run
    run.finish("complete")
    check_result_file(run.manifest_path)
    from burstbench.plots import charts

    for path in charts.render_run(run.dir):
        print(f"chart: {path}")


@pytest.mark.sweep
@pytest.mark.parametrize("point", POINTS, ids=[p.id for p in POINTS])
def test_sweep_point(point, sweep_run):
    try:
        point.spec.validate()
    except ValueError as e:  # a missing toolchain, or netns without root
        pytest.skip(str(e))
    try:
        doc = measure_point(
            sweep_run,
            point.id,
            point.spec,
            meta={
                "sweep": {
                    "profile": PROFILE,
                    "axis": point.axis,
                    "series": point.series,
                    "x": point.x,
                }
            },
        )
    except PointFailed as e:
        check_result_file(sweep_run.point_path(point.id))
        pytest.fail(f"{point.id}: {e}")
    check_result_file(sweep_run.point_path(point.id))
    a = doc["accounting"]
    assert a["lost"] == 0 and a["received"] == a["sent"] > 0
    assert doc["throughput"]["recv_msgs_per_s"] > 0


# -- the studies (burstbench/studies/pi/, burstbench/studies/reqreply.py), run as in `./bench sweep
# pi reqreply` ---


def _study_missing(study: str) -> str | None:
    """Why the study cannot run here (a missing toolchain or build), or None."""
    from burstbench import clients
    from burstbench.studies import pi

    if not (pi.BRIDGE / "target" / "classes" / "burstbench").exists():
        return "akka-bridge not built: run ./bench setup"
    if study == "pi":
        for name in pi.PiConfig.from_profile(PROFILE).languages:
            why = clients.get(name).missing()
            if why:
                return why
    return None


@pytest.mark.sweep
@pytest.mark.parametrize("study", sweep.STUDIES)
def test_sweep_study(study, sweep_run):
    why = _study_missing(study)
    if why:
        pytest.skip(why)
    failed = sweep.run_studies(sweep_run, PROFILE, [study])
    assert failed == 0, f"study {study} failed: see {sweep_run.dir / (study + '.json')}"
