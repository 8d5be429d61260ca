"""``./bench chaos soak``: the seeded schedule replays, and a short soak (60 s, 3 faults, all
four languages at once) loses no confirmed message and recovers from every fault."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT, client_or_skip, need_broker_built

from burstbench import clients
from burstbench.faults import soak

LANGS = list(clients.LANGUAGE_CLIENTS)


def test_the_same_seed_gives_the_same_schedule_and_another_seed_another():
    a = soak.schedule(3, 600, 5, soak.FAULTS, LANGS, ["a", "b"])
    assert a == soak.schedule(3, 600, 5, soak.FAULTS, LANGS, ["a", "b"])
    assert a != soak.schedule(4, 600, 5, soak.FAULTS, LANGS, ["a", "b"])
    assert len(a) == 5 and all(60 <= f.at_s <= 510 for f in a)
    assert [f.at_s for f in a] == sorted(f.at_s for f in a)
    for f in a:
        assert f.kind in soak.FAULTS
        assert (f.hold_s >= 3) == (f.kind == "link-cut")


@pytest.mark.parametrize("text, seconds", [("600", 600), ("90s", 90), ("10m", 600),
                                           ("1.5h", 5400)])
def test_durations(text, seconds):
    assert soak.parse_duration(text) == seconds


@pytest.mark.parametrize("args, needle", [
    (["--duration", "ten"], "--duration"),
    (["--duration", "5s"], "at least 20 s"),
    (["--duration", "60s", "--faults", "9"], "--faults"),
    (["--duration", "60s", "--fraction", "2"], "--fraction"),
    (["--duration", "60s", "--kinds", "broker-kill,nap"], "unknown fault"),
    (["--duration", "60s", "--kinds", ","], "--kinds"),
    (["--duration", "60s", "--languages", "cobol"], "cobol"),
])
def test_bad_soak_input_is_one_line_and_exit_2(args, needle, tmp_path):
    r = subprocess.run([sys.executable, "-m", "burstbench.cli", "chaos", "soak", *args], cwd=ROOT,
                       env={**os.environ, "BURSTBENCH_RESULTS": str(tmp_path)},
                       capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode == 2, r.stderr
    assert needle in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not list(tmp_path.iterdir())


def test_the_replay_line_names_every_option_the_schedule_depends_on():
    spec = soak.SoakSpec(duration_s=240, seed=7, faults=2, kinds=("broker-kill",),
                         languages=("openwire-jms", "net-stomp"), journal_mb=4)
    line = soak.replay_args(spec)
    for part in ("--duration 240s", "--seed 7", "--faults 2", "--kinds broker-kill",
                 "--languages openwire-jms,net-stomp", "--journal-mb 4"):
        assert part in line, line
    default = soak.replay_args(soak.SoakSpec(duration_s=60, seed=3))
    assert "--kinds" not in default and "--languages" not in default
    # and the schedule it names is the one that ran
    assert soak.schedule(7, 240, 2, spec.kinds, list(spec.languages), ["a", "b"]) == \
        soak.schedule(7, 240, 2, ("broker-kill",), ["openwire-jms", "net-stomp"], ["a", "b"])


def _stats(broker, subs, dlq=0, files=((1, 100),)):
    return {"event": "stats", "broker": broker, "t_ns": 1, "queues": {},
            "system_queues": {"ActiveMQ.DLQ": {"size": dlq}} if dlq else {},
            "subscriptions": [{"queue": "q", "consumer": c, "remote": r, "network": net,
                               "holding": h} for c, r, net, h in subs],
            "journal_files": [list(f) for f in files], "usage": {"store_bytes": 5}}


def test_the_store_notes_name_a_dead_letter_queue_and_a_connection_with_two_consumers():
    stats = [_stats("a", [("n1", "tcp://10.0.0.1:5", True, 0), ("n2", "tcp://10.0.0.1:5", True,
                                                                    3)]),
             _stats("b", [("c1", "tcp://10.0.0.2:7", False, 100),
                          ("c2", "tcp://10.0.0.2:7", False, 4),
                          ("c3", "tcp://10.0.0.2:8", False, 9)], dlq=47,
                    files=((2, 33), (3, 33), (4, 10)))]
    view = soak.store_view(stats)
    assert view["b"]["journal_files"] == [[2, 33], [3, 33], [4, 10]]
    doubled = soak.doubled_consumers(stats)
    # a network bridge's demand subscriptions share a connection by design: not flagged
    assert list(doubled) == ["b"]
    assert doubled["b"]["remote"] == "tcp://10.0.0.2:7" and doubled["b"]["holding"] == [100, 4]
    notes = " | ".join(soak.store_notes(view, stats))
    assert "ActiveMQ.DLQ on b holds 47" in notes and "db-2 .. db-4" in notes
    assert "subscribed twice" in notes and "ActiveMQ.DLQ on a" not in notes
    assert soak.store_notes(soak.store_view([_stats("a", [])]), []) == [
        "a's journal at the end: 1 file(s), db-1 .. db-1"]


@pytest.mark.integration
@pytest.mark.full  # a minute of soak: ./bench test --full
def test_a_60_s_soak_with_3_faults_loses_nothing_and_recovers_from_each(tmp_path):
    need_broker_built()
    for c in LANGS:
        client_or_skip(c)
    # seed 3 with namespaces: link-cut b, producer-kill (Perl), broker-kill b
    spec = soak.SoakSpec(duration_s=60, seed=3, faults=3, count=200)
    s = soak.Soak(spec, tmp_path / "s")
    r = s.run()
    assert not [c.name for c in s.sup.children if c.alive()], "a process was left running"
    assert r.status == "ok", (r.errors, r.notes)
    t = r.tally
    assert t.lost == 0 and t.body_errors == 0 and t.foreign == 0
    assert t.sent > 0 and t.received == t.sent
    faults = r.fault["faults"]
    assert [f["kind"] for f in faults] == [f.kind for f in soak.schedule(
        3, 60, 3, soak.FAULTS if s.net is not None else
        tuple(k for k in soak.FAULTS if k != "link-cut"), LANGS, list(s.bspecs))]
    for f in faults:
        assert f["t_ns"] and f["recovery_s"] is not None and 0 <= f["recovery_s"] < 30, f
    # all four languages produced and consumed
    ids = {life.ident for life in s.lives}
    assert {"p1", "p2", "p3", "p4", "c1", "c2", "c3", "c4"} <= ids
    by_lang = {s.lang_of[i] for i in r.tally.by_consumer}
    assert by_lang >= set(LANGS)
    # each broker's own counters once the consumers had gone
    assert set(r.fault["brokers_after"]) == set(s.bspecs)
    # the broker's own figures over time, for the chart
    stats = r.fault["stats"]
    assert len(stats) >= 10 and all("heap_used" in x and "open_files" in x for x in stats)
    assert {x["broker"] for x in stats} == set(s.bspecs)  # (the name each broker gives)
    # what each store keeps: its journal files, its DLQ, the consumers it served
    assert all(x["journal_files"] and "system_queues" in x for x in stats if "usage" in x)
    assert any(sub["queue"] == s.queue and not sub["network"]
               for x in stats for sub in x.get("subscriptions", []))
    assert set(r.fault["store_after"]) == set(s.bspecs)
    from burstbench.plots import soak as chart

    doc = {"spec": {"seed": 3, "duration_s": 60}, "result": r.as_dict()}
    (tmp_path / "soak.json").write_text(json.dumps(doc))
    assert chart.draw(tmp_path / "soak.json", tmp_path / "soak.png").stat().st_size > 10_000
