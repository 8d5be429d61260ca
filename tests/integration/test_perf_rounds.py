"""./bench perf's rounds on the real broker, loops and clients: each loop marks message SKIP
and every thousandth message, a round times both sides after it, the one-CPU rounds pin loop
and client together (the window's pure logic: tests/unit/test_perf_window.py). Most run a
whole perf round and are in the full tier (./bench test --full)."""

import pytest

from burstbench import clients
from burstbench.measure import perf
from burstbench.measure.perf import MIN_COMMON

# the clients with a minimal loop of their library (a tuned entry is measured beside its
# stock client)
LOOPED = [c.name for c in clients.REGISTRY if c.loops]


@pytest.mark.full  # a whole perf round: ./bench test --full
@pytest.mark.integration
@pytest.mark.parametrize("spec", LOOPED)
def test_each_loop_marks_message_skip_and_both_sides_are_timed_after_it(spec, tmp_path,
                                                                        monkeypatch):
    """The real broker, loop and client: each loop reports when message SKIP arrived (and was
    sent), so both are timed over the same second half, and the whole drain is kept."""
    import io

    monkeypatch.setattr(perf.results.paths, "RESULTS", tmp_path)
    doc = perf.run([spec], [6], {6: 3000}, 1, out=io.StringIO(), with_cli=False,
                   counts_jvm={6: 3000}, warmup=0.5)
    (row,) = doc["table"]
    assert row["count"] == 3000 and row["skip"] == 1500
    assert row["send_timed_from_mark"] == (spec != "stompjs")
    for role in ("send", "recv"):
        for side in ("loop", "client"):
            assert row[role][side]["median"] > 0
    whole = row["recv"]["whole_drain"]
    assert whole["loop"]["median"] > 0 and whole["client"]["median"] > 0
    assert 0 < row["recv"]["cpu_us_per_msg"]["loop"]["median"] < 10_000
    faults = row["recv"]["faults_per_msg"]
    assert faults["loop"]["median"] >= 0 and faults["client"]["median"] >= 0
    # a stock client's tuned entry, where it has one, is measured in the same rounds by default
    if perf.tuned_of(clients.resolve(spec)) is not None:
        assert row["send"]["tuned"]["rates"]["median"] > 0 and doc["tuned"] is True
    else:
        assert "tuned" not in row["send"] and spec in clients.BRIDGES


@pytest.mark.integration
@pytest.mark.parametrize("spec", LOOPED)
def test_each_loop_reports_when_every_thousandth_message_arrived_or_was_sent(spec, sup,
                                                                             shared_broker):
    """The real broker and each loop: its last line holds when messages 0, 1000, 2000...
    arrived (at_ns), so that the harness counts what it received in any span (the one-CPU
    rounds' common window); a send loop's, when they were handed to send (but stompjs's,
    whose send is timed whole)."""
    r = clients.resolve(spec)
    send_argv, recv_argv = r.client.loops
    url, q = shared_broker.url_for(r.protocol), f"perf.at.{spec}"
    sent = perf.run_to_end(sup, f"send-{spec}", [*send_argv, url, q, "2500", "6", "1250"],
                            120)[-1]
    if perf.send_timed_from_mark(r):
        at = [int(x) for x in sent["at_ns"]]
        first, mark, last = (int(sent[k]) for k in ("first_ns", "mark_ns", "last_ns"))
        assert sent["every"] == 1000 and len(at) == 3 and at == sorted(at)
        assert first <= at[0] <= at[1] <= mark <= at[2] <= last
        assert perf.loop_arrived(sent, last) == 2500 and perf.loop_arrived(sent, at[2]) == 2001
    else:
        assert "at_ns" not in sent
    rcv = perf.run_to_end(sup, f"recv-{spec}", [*recv_argv, url, q, "2500", "1250"], 120)[-1]
    at = [int(x) for x in rcv["at_ns"]]
    first, mark, last = (int(rcv[k]) for k in ("first_ns", "mark_ns", "last_ns"))
    assert rcv["every"] == 1000 and len(at) == 3  # messages 0, 1000 and 2000
    assert at[0] == first and at == sorted(at) and at[1] <= mark <= at[2] <= last
    assert perf.loop_arrived(rcv, first) == 1 and perf.loop_arrived(rcv, last) == 2500
    assert perf.loop_arrived(rcv, at[2]) == 2001


@pytest.mark.full  # a whole perf round: ./bench test --full
@pytest.mark.integration
def test_no_tuned_measures_stock_against_loop_only(tmp_path, monkeypatch):
    import io

    monkeypatch.setattr(perf.results.paths, "RESULTS", tmp_path)
    started = []
    real = perf.client_once
    monkeypatch.setattr(perf, "client_once",
                        lambda sup, broker, r, *a, **k: started.append(r.label)
                        or real(sup, broker, r, *a, **k))
    doc = perf.run(["stompjs"], [6], {6: 2000}, 1, out=io.StringIO(), with_cli=False,
                   with_tuned=False)
    (row,) = doc["table"]
    assert doc["tuned"] is False and "tuned" not in row["send"] and "tuned" not in row["recv"]
    assert started == ["stompjs", "stompjs"]  # the warm-up round and one measured


@pytest.fixture
def pinned(tmp_path, monkeypatch):
    """For a perf run on two CPUs or more (else the test is skipped): the CPUs, and the CPUs
    and command line of every process a CpuSampler watched, the CPUs read as its sampling
    starts. The command line is the one the Supervisor started: /proc's is empty once a short
    producer has exited, which it may have done by then (a CI run saw it); one already reaped
    counts the CPUs its ``taskset`` prefix gave it."""
    import os

    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("needs two CPUs")
    monkeypatch.setattr(perf.results.paths, "RESULTS", tmp_path)
    seen = []
    argv_of: dict[int, list[str]] = {}
    real = perf.CpuSampler
    real_start = perf.Supervisor.start

    def start(self, name, argv, **k):
        child = real_start(self, name, argv, **k)
        argv_of[child.pid] = [str(a) for a in argv]
        return child

    class Watching(real):
        def __init__(self, pid, *a, **k):
            super().__init__(pid, *a, **k)
            argv = argv_of[pid]
            try:
                on = os.sched_getaffinity(pid)
            except ProcessLookupError:    # ended and reaped already: the CPUs taskset gave it
                on = ({int(c) for c in argv[2].split(",")} if argv[0] == "taskset"
                      else set(cpus))
            seen.append((on, b"".join(a.encode() + b"\0" for a in argv)))

    monkeypatch.setattr(perf.Supervisor, "start", start)
    monkeypatch.setattr(perf.programs, "CpuSampler", Watching)  # where the rounds make them
    return cpus, seen


@pytest.mark.full  # a whole perf round: ./bench test --full
@pytest.mark.integration
def test_one_cpu_rounds_run_loop_and_client_together_on_one_cpu(pinned):
    """The real broker, loop and client: in a one-CPU round the loop's and the client's
    processes are pinned to the first CPU while they run (the broker to the last), and the row
    gets both sides' CPU per message, send and receive; the other rounds run unpinned."""
    import io

    cpus, watched = pinned
    doc = perf.run(["net-stomp"], [1024], {1024: 3000}, 1, out=io.StringIO(), with_cli=False,
                   with_tuned=False, one_cpu_rounds=1)
    seen = [cpu for cpu, _ in watched]
    assert doc["one_cpu"] == {"rounds": 1, "clients_cpu": cpus[0], "broker_cpu": cpus[-1]}
    (row,) = doc["table"]
    for role in ("send", "recv"):
        o = row[role]["one_cpu"]
        if role == "recv":
            # each side's own timed messages always; the common window when there was one
            assert o["common"]["of"] == 1
            # the broker held both queues until both consumers had subscribed
            assert o["common"]["held_ms"]["min"] >= 0
            for side in ("loop", "client"):
                assert 0 < o["own_windows"]["cpu_us_per_msg"][side]["median"] < 10_000
            if not o["common"]["rounds"]:
                continue
            assert MIN_COMMON <= o["common"]["share"]["min"] <= 1
            # where the consumers' CPU went: the kernel's part (less than the whole), and the
            # reads a message (a 1 KiB frame is over 1 KiB: Net::Stomp reads 8 KiB at most)
            for side in ("loop", "client"):
                cpu = o["cpu_us_per_msg"][side]["median"]
                assert 0 <= o["sys_us_per_msg"][side]["median"] < cpu
                assert 1 / 8 < o["reads_per_msg"][side]["median"] <= 1
        if role == "send" and "common_window" in o:  # when both producers sent, beside
            cw = o["common_window"]
            assert cw["of"] == 1 and MIN_COMMON <= cw["share"]["min"] <= 1
            assert 0 < cw["cpu_us_per_msg"]["client"]["median"] < 10_000
        assert 0 < o["cpu_us_per_msg"]["loop"]["median"] < 10_000
        assert 0 < o["cpu_us_per_msg"]["client"]["median"] < 10_000
        assert o["ratio"]["median"] > 0 and o["rates"]["client"]["median"] > 0
        # Perl has no JIT compiler threads: none of its CPU is a compiler's
        assert o["jit_share"]["loop"]["max"] == 0 and o["jit_share"]["client"]["max"] == 0
    assert "one_cpu_count" in row and row["one_cpu_count"] == row["count"]  # not a JVM
    # two ABAB rounds (warm-up + 1) sample a consumer each, unpinned: 4; two one-CPU rounds
    # sample 4 processes each, pinned: 8
    assert seen.count(set(cpus)) == 4 and seen.count({cpus[0]}) == 8, seen


@pytest.mark.full  # a whole perf round: ./bench test --full
@pytest.mark.integration
def test_aa_rounds_drain_two_loop_queues_together_on_one_cpu(pinned):
    """The real broker and loops: --self-check's rounds fill two queues with the loop's
    producer and drain them with two of its receive loops at once, all four pinned to the first
    CPU, and the row gets both loops' CPU per message in their common window."""
    import io

    cpus, seen = pinned
    out = io.StringIO()
    doc = perf.run(["net-stomp"], [1024], {1024: 3000}, 1, out=out, with_cli=False,
                   with_tuned=False, one_cpu_rounds=0, self_check_rounds=1)
    assert doc["one_cpu"] is None
    assert doc["self_check"] == {"rounds": 1, "clients_cpu": cpus[0], "broker_cpu": cpus[-1]}
    (row,) = doc["table"]
    sc = row["recv"]["self_check"]
    assert sc["of"] == 1 and "self_check" not in row["send"]
    if sc["rounds"]:
        assert MIN_COMMON <= sc["share"]["min"] <= 1
        for side in ("a", "b"):
            assert 0 < sc["cpu_us_per_msg"][side]["median"] < 10_000
        assert sc["ratio"]["median"] > 0
    assert "1 CPU, A/A loops" in out.getvalue()
    # the A/A rounds (warm-up + 1) sample two loop producers and two receive loops each, all
    # pinned, all the loop's: no client process among them
    on_one = [cmd for cpu, cmd in seen if cpu == {cpus[0]}]
    assert len(on_one) == 8 and all(b"perf/loops/perl-" in cmd for cmd in on_one), on_one


@pytest.mark.full  # a whole perf round: ./bench test --full
@pytest.mark.integration
def test_a_jvms_one_cpu_rounds_run_longer_and_see_its_compiler(tmp_path, monkeypatch):
    """The real broker and JMS: a JVM's one-CPU rounds run --count-jvm-one-cpu messages with
    the same number timed, and the share its JIT compiler threads took of the timed CPU is
    measured (a JVM 3,000 messages old is still compiling) and kept out of CPU per message."""
    import io
    import os

    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs two CPUs")
    monkeypatch.setattr(perf.results.paths, "RESULTS", tmp_path)
    doc = perf.run(["openwire-jms"], [6], {6: 3000}, 1, out=io.StringIO(), with_cli=False,
                   with_tuned=False, counts_jvm={6: 3000}, one_cpu_rounds=1,
                   counts_jvm_one_cpu={6: 6000})
    (row,) = doc["table"]
    assert (row["count"], row["skip"]) == (3000, 1500)
    assert (row["one_cpu_count"], row["one_cpu_skip"]) == (6000, 4500)
    assert doc["counts_jvm_one_cpu"] == {"6": 6000}
    o = row["send"]["one_cpu"]
    assert all(0 <= o["jit_share"][s]["median"] < 1 for s in ("loop", "client"))
    assert 0 < o["cpu_us_per_msg"]["client"]["median"] < 10_000
    o = row["recv"]["one_cpu"]
    assert 0 < o["own_windows"]["cpu_us_per_msg"]["client"]["median"] < 10_000
    if o["common"]["rounds"]:  # the receive's figures come from the window both ran in
        assert all(0 <= o["jit_share"][s]["median"] < 1 for s in ("loop", "client"))
        assert 0 < o["cpu_us_per_msg"]["client"]["median"] < 10_000
    # the compiler is seen: in the receive's common window, or else in the send's
    seen = o if o["common"]["rounds"] else row["send"]["one_cpu"]
    assert max(seen["jit_share"][s]["max"] for s in ("loop", "client")) > 0
