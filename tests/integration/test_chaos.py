"""``./bench chaos``: faults during a persistent client-ack burst lose nothing, and the fault
really happened. Short bursts, so the file runs in a few minutes on two cores."""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import subprocess
import sys

import pytest
from conftest import ROOT, client_or_skip, need_broker_built

from burstbench import clients, faults
from burstbench.cli import build_parser
from burstbench.faults import command, reckon
from burstbench.faults.base import Scenario
from burstbench.faults.failover_pair import FAILOVER_HOW
from burstbench.faults.registry import SCENARIOS
from burstbench.faults.spec import ChaosSpec, Skip
from burstbench.measure.measure import ConsumerRecord

SMALL = {"count": 300, "bursts": 6}


def rec(producer: str, seq: int, redelivered: bool = False, size: int = 6) -> ConsumerRecord:
    return ConsumerRecord(producer, seq, 0, 0, 1, size, True, redelivered, "q")


# -- the accounting rule, by hand ------------------------------------------------------------
def test_reckon_counts_only_confirmed_bursts_as_sent():
    p1 = reckon.ProducerLife("p1", count=2, started=3, confirmed=[0, 1])  # burst 2 in flight
    p1r1 = reckon.ProducerLife("p1r1", count=2, started=1, confirmed=[0])
    got = {
        "c1": [rec("p1", 0), rec("p1", 1), rec("p1", 4), rec("p1r1", 0)],
        "c1r1": [rec("p1", 1, redelivered=True), rec("p1", 2), rec("p1r1", 1), rec("x", 0)],
    }
    t = reckon.reckon([p1, p1r1], got, size=6)
    assert (t.sent, t.received, t.lost) == (6, 5, 1)
    assert t.lost_sample == ["p1#3"]
    assert (t.unconfirmed, t.unconfirmed_received) == (2, 1)  # p1#4, p1#5 in flight; #4 came
    assert (t.duplicates, t.redelivered, t.foreign) == (1, 1, 1)
    assert t.by_consumer == {"c1": 4, "c1r1": 3}


def test_reckon_body_errors_and_records_beyond_confirmed_are_not_foreign():
    p = reckon.ProducerLife("p1", count=2, started=1, confirmed=[0],
                           recorded=[("p1", 0, 0, 1), ("p1", 1, 0, 1), ("p1", 2, 1, 1)])
    t = reckon.reckon([p], {"c1": [rec("p1", 0), rec("p1", 1, size=5), rec("p1", 2)]}, size=6)
    assert (t.sent, t.received, t.lost, t.foreign, t.body_errors) == (2, 2, 0, 0, 1)
    assert t.unconfirmed == 1


def test_all_runs_every_scenario_for_every_language_each_with_its_own_failover():
    pairs = command.matrix(None)
    assert {s for s, _ in pairs} == set(SCENARIOS)
    assert len(pairs) == len(SCENARIOS) * 4
    for name in clients.LANGUAGE_CLIENTS:  # no scenario is N/A for a library any more
        try:
            fp = SCENARIOS["failover-pair"]
            fp.check(fp.make_spec(name))
        except Skip as e:
            assert e.status == "skipped", e  # (a toolchain missing here), never n/a
    assert set(FAILOVER_HOW) == {clients.get(n).language for n in clients.LANGUAGE_CLIENTS}


def test_every_scenario_class_is_registered_once_under_its_name():
    from burstbench.faults.soak import Soak

    found = {obj for mod in pkgutil.iter_modules(faults.__path__)
             for obj in vars(importlib.import_module(f"burstbench.faults.{mod.name}")).values()
             if isinstance(obj, type) and issubclass(obj, Scenario) and obj is not Scenario}
    # the soak is built on Scenario beside them, its own command (./bench chaos soak)
    assert found == set(SCENARIOS.values()) | {Soak}
    assert all(name == cls.name and cls.description for name, cls in SCENARIOS.items())
    for name in [*SCENARIOS, "all", "soak"]:  # the command's choices are the registry's
        assert build_parser().parse_args(["chaos", name]).scenario == name


@pytest.mark.parametrize("scenario, want", [
    ("broker-kill", ("stomp-py", 1, 2, 6, 100)),
    ("failover-pair", ("openwire-jms", 1, 2, 6, 100)),
    ("consumer-kill", ("stomp-py", 1, 3, 6, 100)),
    ("slow-consumer", ("stomp-py", 1, 3, 1024, 10)),
    ("store-full", ("stomp-py", 1, 2, 8192, 100)),
    ("mesh-partition", ("stomp-py", 3, 3, 6, 100)),
])
def test_each_scenario_fills_in_its_own_defaults(scenario, want):
    s = SCENARIOS[scenario].make_spec()
    assert (s.client, s.producers, s.consumers, s.size, s.prefetch) == want
    s = SCENARIOS[scenario].make_spec("python", size=7, producers=2, consumers=4, prefetch=5)
    fixed = SCENARIOS[scenario].fixed
    assert (s.client, s.size, s.prefetch) == ("python", 7, 5)
    assert (s.producers, s.consumers) == (fixed.get("producers", 2), fixed.get("consumers", 4))
    assert ChaosSpec(scenario).size == 6  # the plain spec: the generic defaults


@pytest.mark.parametrize("args, needle", [
    (["nope"], "invalid choice"),
    (["failover-pair", "--client", "python", "--count", "0"], "must be >= 1"),
    (["broker-kill", "--client", "cobol"], "unknown client"),
    (["broker-kill", "--bursts", "2"], "must be >= 4"),
])
def test_bad_input_is_one_line_and_exit_2(args, needle, tmp_path):
    r = subprocess.run([sys.executable, "-m", "burstbench.cli", "chaos", *args], cwd=ROOT,
                       env={**os.environ, "BURSTBENCH_RESULTS": str(tmp_path)},
                       capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode == 2, r.stderr
    assert needle in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not list(tmp_path.iterdir())  # refused before anything ran


# -- the scenarios, on real brokers ----------------------------------------------------------
def run(tmp_path, scenario: str, client: str, **kw) -> tuple[Scenario, reckon.Result]:
    need_broker_built()
    client_or_skip(client)
    cls = SCENARIOS[scenario]
    ch = cls(cls.make_spec(client, **{**SMALL, **kw}), tmp_path / "c")
    r = ch.run()
    assert not [c.name for c in ch.sup.children if c.alive()], "a process was left running"
    assert r.status == "ok", (r.errors, r.notes)
    t = r.tally
    assert t.lost == 0 and t.body_errors == 0 and t.foreign == 0
    assert t.sent == ch.spec.total() and t.received == t.sent
    return ch, r


@pytest.mark.integration
@pytest.mark.parametrize("client", ["openwire-jms", "stomp-py"])
def test_broker_kill_restarts_on_the_same_store_and_loses_nothing(client, tmp_path):
    ch, r = run(tmp_path, "broker-kill", client)
    f = r.fault
    assert f["killed_pid"] != f["restarted_pid"]
    killed = [c for c in ch.sup.children if c.pid == f["killed_pid"]]
    assert killed[0].returncode == -9  # SIGKILL, not a clean stop
    assert 0 < f["down_s"] <= r.recovery_s
    if client == "stomp-py":  # the harness replaced the STOMP clients after the restart
        idents = {life.ident for life in ch.lives}
        assert {"p1r1", "c1r1", "c2r1"} <= idents
        assert any("do not reconnect" in n for n in r.notes)


@pytest.mark.integration
def test_consumer_kill_via_the_command_redelivers_and_writes_the_table(tmp_path):
    need_broker_built()
    client_or_skip("stomp-py")
    out = subprocess.run(
        [sys.executable, "-m", "burstbench.cli", "chaos", "consumer-kill", "--client", "python",
         "--count", "300", "--bursts", "6"],
        cwd=ROOT, env={**os.environ, "BURSTBENCH_RESULTS": str(tmp_path)},
        capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "| consumer-kill | stomp-py | ok |" in out.stdout
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir() and not p.is_symlink()]
    doc = json.loads((run_dir / "chaos.json").read_text())
    (row,) = doc["results"]
    t = row["tally"]
    assert (row["status"], t["lost"], t["sent"], t["received"]) == ("ok", 0, 1800, 1800)
    assert t["redelivered"] > 0  # what the victim held went to the others
    assert row["fault"]["victim_received_before_kill"] > 0
    assert "c1" not in t["by_consumer"]  # the victim wrote nothing: SIGKILL
    assert row["recovery_s"] is not None
    assert "| consumer-kill |" in (run_dir / "chaos.md").read_text()
    # the run's report draws the same table from chaos.json alone (no scenario code loaded)
    assert row["fault_words"] and "killed holding" in row["fault_words"][0]
    assert {"perl", "python", "node"} <= set(doc["failover_how"])
    import html

    from burstbench.plots import report
    page = report.render(run_dir).read_text()
    assert "Reliability under faults" in page
    assert html.escape(row["fault_words"][0], quote=False) in page  # escaped, as every value


@pytest.mark.integration
@pytest.mark.parametrize("client", list(clients.LANGUAGE_CLIENTS))
def test_failover_pair_every_library_fails_over_by_itself_and_loses_nothing(client, tmp_path):
    ch, r = run(tmp_path, "failover-pair", client)
    f = r.fault
    assert f["master_pid"] != f["slave_pid"]
    assert f["slave_waited_for_lock"]  # it really was a slave until the master died
    killed = [c for c in ch.sup.children if c.pid == f["master_pid"]]
    assert killed[0].returncode == -9
    # the same processes went on: every client reconnected (no replacement ids, no exits)
    assert {life.ident for life in ch.lives} == {"p1", "c1", "c2"}
    assert all(life.exit_code == 0 for life in ch.lives)
    assert set(f["reconnected_s"]) == {"p1", "c1", "c2"}, f["reconnected_s"]
    assert all(0 < s < 60 for s in f["reconnected_s"].values())
    assert r.recovery_s is not None and r.recovery_s > 0
    assert f["beyond_documented_options"] == (clients.get(client).language != "java")


@pytest.mark.integration
def test_slow_consumer_gets_less_and_nothing_deadlocks(tmp_path):
    _ch, r = run(tmp_path, "slow-consumer", "stomp-py", stall_timeout=45)
    f = r.fault
    assert f["duty_cycles"] > 10
    assert set(f["shares"]) == {"c1", "c2", "c3"}
    assert abs(sum(f["shares"].values()) - 1) < 0.01
    assert f["shares"]["c1"] < f["fair_share"]  # its prefetch filled; the others took the rest


@pytest.mark.integration
@pytest.mark.root
def test_link_cut_pauses_forwarding_and_loses_nothing(tmp_path):
    from burstbench.infra import netns

    why = netns.available()
    if why:
        pytest.skip(why)
    ch, r = run(tmp_path, "link-cut", "stomp-py", cut_s=5)
    f = r.fault
    assert f["cut_s"] >= 5
    assert f["longest_gap_s"] >= 2.5  # deliveries really stopped while the link was down
    assert r.recovery_s is not None
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True,
                            check=True).stdout
    assert not [n for n in ch.net.names if n in listed.split()], "namespaces left behind"


@pytest.mark.integration
def test_store_full_holds_producers_back_and_the_burst_completes_after_draining(tmp_path):
    ch, r = run(tmp_path, "store-full", "stomp-py")
    f = r.fault
    assert f["store_full_log_lines"] > 0  # the broker itself said its store was full
    # the producer was held back at the limit: it had not finished when the store filled
    assert f["bursts_confirmed_when_full"]["p1"] < ch.spec.bursts
    assert f["producers_alive_when_full"] == ["p1"] and not f["producer_errors"]
    assert f["longest_wait_for_a_confirmation_s"]["p1"] >= 3  # blocked, then went on
    assert f["surfaced_as"].startswith("blocked")
    assert ch.spec.total() * ch.spec.size > 2 * f["store_limit_mb"] << 20  # it could not fit


@pytest.mark.integration
@pytest.mark.root
def test_mesh_partition_delivers_everything_and_strands_nothing(tmp_path):
    from burstbench.infra import netns

    why = netns.available()
    if why:
        pytest.skip(why)
    ch, r = run(tmp_path, "mesh-partition", "stomp-py", cut_s=5, count=500, bursts=8)
    f = r.fault
    assert f["cut_s"] >= 5
    assert f["crossed_total"] > 0  # the mesh carried messages between c and a, b
    assert f["crossed_during_cut"] == 0  # and the cut really separated c
    left = f["brokers_after"]
    assert set(left) == {"a", "b", "c"}
    assert all(q["size"] == 0 and q["enqueued"] > 0 for q in left.values()), left
    assert f["stranded"] == {}
    assert set(r.tally.by_consumer) == {"c1", "c2", "c3"}  # consumers on all three brokers
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True,
                            check=True).stdout
    assert not [n for n in ch.net.names if n in listed.split()], "namespaces left behind"
