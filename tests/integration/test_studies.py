"""The Pi and request/reply studies (burstbench/studies/pi/, burstbench/studies/reqreply.py) against
real brokers, real workers in every available language, and the akka-bridge programs."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import pytest
from conftest import ROOT, need_broker_built

from burstbench import clients
from burstbench.measure import results
from burstbench.studies import pi, reqreply


def _bridge_or_skip() -> None:
    if not (pi.BRIDGE / "target" / "classes" / "burstbench").exists():
        pytest.skip("akka-bridge not built (./bench setup)")


def _run(tmp_path, kind: str) -> results.Run:
    return results.Run(results.new_run_id(kind), ["pytest"], root=tmp_path / "results")


# -- pure parts ----------------------------------------------------------------------------

def test_exact_sums_match_fsum_of_the_terms():
    exact = pi.ExactSums()
    for n in (1, 7, 1000, 3 * pi.ExactSums.BLOCK + 5, 10):  # growing, then shrinking
        direct = 4.0 * math.fsum((-1.0) ** k / (2 * k + 1) for k in range(n))
        assert exact(n) == pytest.approx(direct, abs=1e-13)
    assert exact(1) == 4.0


def test_plan_takes_languages_in_turn_and_packs_java_threads():
    procs = pi.plan(10, ["net-stomp", "openwire-jms"], java_threads=2)
    perl = [p for p in procs if p.client == "net-stomp"]
    java = [p for p in procs if p.client == "openwire-jms"]
    assert len(perl) == 5 and all(p.threads == 1 for p in perl)
    assert [p.threads for p in java] == [2, 2, 1]
    assert len({p.id for p in procs}) == len(procs)
    assert [p.threads for p in pi.plan(100, ["openwire-jms"], 10)] == [10] * 10


def test_worker_programs_exist_for_every_language():
    for name in pi.LANGUAGES:
        argv = pi.worker_argv(clients.get(name))
        if name == "openwire-jms":
            assert argv[-1] == "burstbench.clients.PiWorker"
        else:
            assert os.path.exists(argv[-1]), argv


def test_reqreply_percentiles_are_nearest_rank():
    lat = reqreply.latency_ms(list(range(1_000_000, 101_000_000, 1_000_000)))  # 1..100 ms
    assert (lat["p50"], lat["p99"], lat["p99_9"], lat["max"]) == (50.0, 99.0, 100.0, 100.0)


# -- command line --------------------------------------------------------------------------

BAD_ARGS = [
    ["pi", "--workers", "0"],
    ["pi", "--messages", "ten"],
    ["pi", "--workers-lang", "cobol"],
    ["pi", "--workers-lang", "akka"],
    ["pi", "--java-threads", "0"],
    ["pi", "--backends", "zeromq"],
    ["pi", "--profile", "nosuch"],
    ["reqreply", "--modes", "carrier-pigeon"],
    ["reqreply", "--payloads", "2000000"],
    ["reqreply", "--payloads", "1,x"],
    ["reqreply", "--requests", "0"],
    ["reqreply", "--spring-cf", "bogus"],
    ["reqreply", "--runtime", "erlang"],
    ["pi", "--bogus"],
]


@pytest.mark.parametrize("argv", BAD_ARGS, ids=[" ".join(a) for a in BAD_ARGS])
def test_bad_arguments_exit_2_with_one_line(argv, tmp_path):
    env = {**os.environ, "BURSTBENCH_RESULTS": str(tmp_path)}
    out = subprocess.run([sys.executable, "-m", "burstbench.cli", *argv], capture_output=True,
                         text=True, cwd=ROOT, env=env, timeout=60, check=False)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "error" in lines[0], out.stderr
    assert out.stdout == ""
    assert not any(tmp_path.iterdir()), "no results directory for bad arguments"


# -- real runs -----------------------------------------------------------------------------

@pytest.mark.integration
def test_pi_over_the_broker_mixed_languages_equals_the_exact_sum(tmp_path):
    need_broker_built()
    langs = [n for n in pi.LANGUAGES if clients.get(n).missing() is None]
    if not langs:
        pytest.skip("; ".join(clients.get(n).missing() for n in pi.LANGUAGES))
    cfg = pi.PiConfig(workers=[2 * len(langs)], messages=[40, 400], elements=[10, 1000],
                      languages=langs, java_threads=2, prefetch=5, backends=["activemq"])
    doc = pi.run_study(_run(tmp_path, "pi"), cfg, progress=lambda m: None)
    assert doc["status"] == "ok", [p["errors"] for p in doc["points"]]
    assert len(doc["points"]) == 4
    for p in doc["points"]:
        assert p["error"] <= pi.TOLERANCE
        assert p["received"] == p["messages"] and p["duplicates"] == 0
        assert p["worker_chunks"] == p["messages"]
        assert p["seconds"] > 0
    # every language's workers took part (prefetch 5: 400 messages reach every consumer)
    big = [p for p in doc["points"] if p["messages"] == 400]
    for p in big:
        seen = {w.split("-")[1].rstrip("0123456789") for w in p["chunks_by_worker"]}
        assert seen == {clients.get(n).language for n in langs}, p["chunks_by_worker"]
    run_dir = tmp_path / "results" / doc["run_id"]
    for f in ("pi.json", "pi.md", "pi.html", "charts/pi.png"):
        assert (run_dir / f).exists(), f
    assert results.load_point(run_dir / "pi.json")["schema_version"] == results.SCHEMA_VERSION


@pytest.mark.integration
@pytest.mark.parametrize("backend, elements", [
    ("akka", [10, 1000]),
    # the same actors built on Pekko (the runtimes study runs both): the full tier
    pytest.param("pekko", [10], marks=pytest.mark.full)])
def test_pi_over_actors_equals_the_exact_sum(tmp_path, backend, elements):
    """The same PiActors on Akka 2.6 and on Apache Pekko: every sum exact."""
    _bridge_or_skip()
    cfg = pi.PiConfig(workers=[1, 3], messages=[7, 100], elements=elements,
                      backends=[backend])
    doc = pi.run_study(_run(tmp_path, "pi"), cfg, progress=lambda m: None)
    assert doc["status"] == "ok", [p["errors"] for p in doc["points"]]
    assert len(doc["points"]) == 4 * len(elements)
    assert {p["backend"] for p in doc["points"]} == {backend}
    assert backend in doc["versions"]
    for p in doc["points"]:
        assert p["error"] <= pi.TOLERANCE
        assert p["pi"] == pytest.approx(pi.ExactSums()(p["messages"] * p["elements"]),
                                        abs=1e-12)


@pytest.mark.integration
@pytest.mark.parametrize("runtime", ["akka", "pekko"])
def test_one_request_reply_point_per_mode(tmp_path, runtime):
    need_broker_built()
    _bridge_or_skip()
    cfg = reqreply.ReqReplyConfig(payloads=[100], requests=40, warmup=10, runtime=runtime)
    run = _run(tmp_path, "reqreply")
    doc = reqreply.run_study(run, cfg, progress=lambda m: None)
    assert doc["status"] == "ok", [p["errors"] for p in doc["points"]]
    assert [p["mode"] for p in doc["points"]] == list(reqreply.MODES)
    for p in doc["points"]:
        assert p["ops_per_s"] > 0
        assert p["latency_ms"]["n"] == 40
        lines = (run.dir / p["records"]).read_text().split()
        assert len(lines) == 40 and all(int(x) > 0 for x in lines)
        lat = p["latency_ms"]
        assert 0 < lat["p50"] <= lat["p99"] <= lat["p99_9"] <= lat["max"]
    assert doc["summary"]["small_payload"] == 100
    assert doc["versions"]["bridge"].startswith(f"{runtime}-bridge ReqReply")
    for f in ("reqreply.json", "reqreply.md", "charts/reqreply.png"):
        assert (run.dir / f).exists(), f


@pytest.mark.integration
def test_runtimes_study_measures_both_runtimes_in_alternating_rounds(tmp_path):
    """./bench runtimes on the real bridge, Akka and Pekko: two rounds, the second in the
    other order; every burst whole, every Pi sum exact, every ask answered; one figure per
    runtime and thing, with the rounds' spread; the table and chart written; every process
    the study started stopped."""
    from burstbench.studies import runtimes

    for module in clients.BRIDGE_MODULES.values():
        if not (module / "target" / "classes" / "burstbench").exists():
            pytest.skip(f"{module.name} not built (./bench setup)")
    cfg = runtimes.RuntimesConfig(rounds=2, sizes=[6, 1024], count=3000, workers=2,
                                  warmup=3000, pi_workers=[2], pi_messages=[50],
                                  pi_elements=[10], ask_payloads=[10], ask_requests=200,
                                  ask_warmup=100)
    run = _run(tmp_path, "runtimes")
    doc = runtimes.run_study(run, cfg, progress=lambda m: None)
    assert doc["status"] == "ok", [p["errors"] for p in doc["points"] if p["errors"]]
    firsts = [next(p["runtime"] for p in doc["points"] if p["round"] == r) for r in (0, 1)]
    assert firsts == ["akka", "pekko"]
    assert len(doc["points"]) == 2 * 2 * (2 + 1 + 1)
    for p in doc["points"]:
        assert p["value"] > 0
        if p["kind"] == "bursts":
            assert p["accounting"] == {"sent": 3000, "received": 3000, "lost": 0,
                                       "duplicates": 0}
        if p["kind"] == "pi":
            assert p["error"] <= pi.TOLERANCE
    rows = doc["summary"]
    assert [r["key"] for r in rows] == [["bursts", 6], ["bursts", 1024], ["pi", 2, 50, 10],
                                        ["ask", 10]]
    for r in rows:
        assert r["status"] == "ok" and {rt: s["n"] for rt, s in r["values"].items()} == \
            {"akka": 2, "pekko": 2}
        assert r["pekko_over_akka"] > 0
    assert set(doc["versions"]) >= {"akka", "pekko"}
    assert "| Pi W=2 M=50 E=10 |" in (run.dir / "runtimes.md").read_text()
    assert (run.dir / "charts" / "runtimes.png").stat().st_size > 10_000
    # the two HTTP servers (stopped by SIGTERM, they shut down cleanly) and every point's JVM
    # exited, 0
    assert {rt: s["exit_code"] for rt, s in doc["servers"].items()} == {"akka": 0, "pekko": 0}
    for p in doc["points"]:
        res = p["resources"] if isinstance(p.get("resources"), list) else [p.get("resources")]
        assert all(r["exit_code"] == 0 for r in res if r), p
