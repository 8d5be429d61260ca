"""``Supervisor.wait_until``, the harness's one wait: events until a condition holds, a
deadline, and a watched child's exit ending the wait. Real child processes (``sh``)."""

from __future__ import annotations

import time

import pytest

from burstbench.infra.procs import ChildExited, Supervisor


def test_events_until_the_condition_holds(tmp_path):
    with Supervisor(tmp_path) as sup:
        c = sup.start("c", ["sh", "-c", 'echo \'{"event": "ready"}\'; sleep 30'])
        seen = []
        assert sup.wait_until(lambda: "ready" in seen, 20,
                              lambda child, ev: seen.append(ev.get("event")), watch=[c])
        assert c.alive()


def test_the_deadline_returns_false(tmp_path):
    with Supervisor(tmp_path) as sup:
        sup.start("quiet", ["sleep", "30"])
        t0 = time.monotonic()
        assert not sup.wait_until(lambda: False, 0.6, poll=0.1)
        # it waited (not returned at once) and came back by itself (long before the quiet
        # child's 30 s): a busy machine may add seconds, never 25
        assert 0.5 < time.monotonic() - t0 < 25


def test_a_watched_child_that_fails_ends_the_wait_with_its_last_words(tmp_path):
    with Supervisor(tmp_path) as sup:
        c = sup.start("bad", ["sh", "-c", "echo 'error: no broker' >&2; exit 3"])
        with pytest.raises(ChildExited) as e:
            sup.wait_until(lambda: False, 20, watch=[c])
        assert e.value.child is c and e.value.code == 3
        assert "bad exited with 3: error: no broker" in str(e.value)


def test_an_unwatched_exit_and_a_clean_exit_are_just_events(tmp_path):
    with Supervisor(tmp_path) as sup:
        other = sup.start("other", ["sh", "-c", "exit 4"])
        ok = sup.start("ok", ["sh", "-c", "exit 0"])
        exits = {}

        def take(child, ev):
            if ev.get("event") == "exit":
                exits[child.name] = ev["code"]

        assert sup.wait_until(lambda: len(exits) == 2, 20, take, watch=[ok])
        assert exits == {"other": 4, "ok": 0} and not other.alive()
