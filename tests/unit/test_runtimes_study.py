"""The Akka-vs-Pekko study's pure parts (burstbench/studies/runtimes.py): the alternating
order, the summary over rounds, the table's rows and the configuration's checks. The study
against the real bridge: tests/integration/test_studies.py."""

import pytest

from burstbench.measure import results
from burstbench.plots import studies
from burstbench.studies import runtimes


def _sample(kind, runtime, rnd, value, status="ok", **key):
    return {"kind": kind, "runtime": runtime, "round": rnd, "status": status,
            **({"value": value} if value is not None else {}), **key}


def test_rounds_alternate_which_runtime_goes_first():
    assert [runtimes.order(r) for r in range(4)] == [("akka", "pekko"), ("pekko", "akka")] * 2


def test_summary_is_the_median_and_range_over_rounds_and_the_ratio_of_medians():
    pts = [_sample("bursts", rt, r, v, size=6)
           for rt, vals in (("akka", [100, 300, 200]), ("pekko", [330, 150, 300]))
           for r, v in enumerate(vals)]
    pts += [_sample("ask", rt, r, 1000.0 * (r + 1), payload=1, p50_us=10.0 * (r + 1))
            for rt in ("akka", "pekko") for r in range(3)]
    (bursts, ask) = runtimes.summarise(pts)
    assert bursts["key"] == ["bursts", 6] and bursts["status"] == "ok"
    assert bursts["values"]["akka"] == {"median": 200, "min": 100, "max": 300, "n": 3}
    assert bursts["values"]["pekko"]["median"] == 300
    assert bursts["pekko_over_akka"] == pytest.approx(1.5)
    assert ask["p50_us"]["pekko"]["median"] == 20.0 and ask["pekko_over_akka"] == 1.0


def test_a_row_with_a_failed_sample_has_no_figure():
    pts = [_sample("pi", "akka", 0, 1.0, workers=1, messages=10, elements=10),
           _sample("pi", "pekko", 0, None, "failed", workers=1, messages=10, elements=10)]
    (row,) = runtimes.summarise(pts)
    assert row["status"] == "failed" and "values" not in row
    (cells,) = studies.runtimes_rows({"summary": [row]})
    assert cells[2:] == ["failed", "failed", "-"]


def test_table_rows_put_the_broker_pairs_first_with_their_burst_spread(tmp_path, monkeypatch):
    points = [{"status": "ok", "parameters": {"size": 6},
               "sweep": {"profile": "runtimes", "axis": "runtime", "series": rt, "x": 6},
               "throughput": {"recv_msgs_per_s": med, "recv_min": med - 1000,
                              "recv_max": med + 1000, "measured_bursts": 5},
               "accounting": {"lost": 0}}
              for rt, med in (("akka", 20000.0), ("pekko", 25000.0))]
    points.append({**points[0], "sweep": {**points[0]["sweep"], "axis": "size"}})  # not ours
    monkeypatch.setattr(results, "load_run",
                        lambda d: results.RunFiles(d, {}, points))
    pairs = runtimes.broker_pairs(type("R", (), {"dir": tmp_path})())
    assert sorted(p["series"] for p in pairs) == ["akka", "pekko"]
    doc = {"broker_pairs": pairs, "summary": runtimes.summarise(
        [_sample("bursts", rt, 0, 5e5, size=6) for rt in ("akka", "pekko")])}
    rows = studies.runtimes_rows(doc)
    assert rows[0][0].startswith("bursts through actors and the broker")
    assert rows[0][2:] == ["20,000 (19,000-21,000)", "25,000 (24,000-26,000)", "1.25"]
    assert rows[1][0] == "bursts through actors, 6 B" and rows[1][4] == "1.00"


@pytest.mark.parametrize("change, needle", [
    ({"rounds": 0}, "rounds must be"), ({"ask_payloads": [-1]}, "ask_payloads"),
    ({"sizes": [6, 1 << 20], "count": 1000}, "count x size"),
    ({"pi_workers": "4"}, "pi_workers"), ({"warmup": -1}, "warmup")])
def test_bad_study_parameters_are_one_clear_error(change, needle):
    cfg = runtimes.RuntimesConfig(**change)
    with pytest.raises(runtimes.StudyError, match=needle):
        cfg.validate()


def test_the_runtimes_profile_names_only_known_keys():
    cfg = runtimes.RuntimesConfig.from_profile("runtimes")
    cfg.validate()
    assert cfg.rounds >= 3 and sorted(cfg.sizes) == [6, 1024]
