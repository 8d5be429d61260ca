"""./bench perf's timed window (pure logic): loop and client are timed over the same message
indices, from message SKIP to the last, and the warm-up before it is not timed."""

import math
from pathlib import Path

import pytest

from burstbench import clients
from burstbench.measure import perf
from burstbench.measure.perf import MIN_COMMON


def test_skip_is_the_warm_up_share_and_leaves_two_messages_timed():
    assert perf.skip_of(100_000, 0.5) == 50_000
    assert perf.skip_of(100_000, 0.0) == 0
    assert perf.skip_of(3, 0.99) == 1


def test_receive_is_timed_from_message_skips_arrival_to_the_last():
    # 11 arrivals 1 ms apart, the first 5 the warm-up: 5 intervals of 1 ms after message 5
    assert perf.recv_rate(11, 5, mark=5_000_000, last=10_000_000) == pytest.approx(1000.0)
    # no warm-up: the whole drain, first to last arrival
    assert perf.recv_rate(11, 0, mark=0, last=10_000_000) == pytest.approx(1000.0)


def test_send_is_timed_from_message_skips_hand_over_unless_it_only_queues():
    # 10 messages, 5 warm-up; from the mark at 5 ms to the confirmation at 10 ms: 5 in 5 ms
    assert perf.send_rate(10, 5, first=0, mark=5_000_000, confirmed=10_000_000,
                          from_mark=True) == pytest.approx(1000.0)
    # a send that only queues (stompjs) is timed whole: 10 in 10 ms
    assert perf.send_rate(10, 5, first=0, mark=5_000_000, confirmed=10_000_000,
                          from_mark=False) == pytest.approx(1000.0)
    assert perf.send_rate(10, 5, first=0, mark=9_000_000, confirmed=10_000_000,
                          from_mark=False) == pytest.approx(1000.0)


def test_only_stompjs_sends_are_timed_whole():
    timed = {name: perf.send_timed_from_mark(clients.resolve(name))
             for name in clients.LANGUAGE_CLIENTS}
    assert timed == {"net-stomp": True, "stomp-py": True, "stompjs": False,
                     "openwire-jms": True}


def _records(tmp: Path, sent_ns: list[int], recv_ns: list[int]) -> tuple[Path, Path]:
    prec, crec = tmp / "p.tsv", tmp / "c.tsv"
    prec.write_text("#producer\tseq\tburst\tsent_ns\n" + "".join(
        f"p1\t{i}\t0\t{t}\n" for i, t in enumerate(sent_ns)))
    head = "#producer\tseq\tburst\tsent_ns\trecv_ns\tbytes\tbody_ok\tredelivered\n"
    crec.write_text(head + "".join(
        f"p1\t{i}\t0\t{sent_ns[i]}\t{t}\t6\t1\t0\n" for i, t in enumerate(recv_ns)))
    return prec, crec


def test_the_clients_window_starts_at_the_skip_th_record_in_time_order(tmp_path):
    # a slow warm-up (10 ms a message), then 1 ms a message; records out of order on disk
    sent = [i * 10_000_000 for i in range(5)] + [50_000_000 + i * 1_000_000 for i in range(5)]
    recv = [t + 100_000_000 for t in sent]
    prec, crec = _records(tmp_path, sent[::-1], recv[::-1])
    confirmed = [{"event": "burst", "_rx_ns": sent[-1] + 1_000_000}]
    r = clients.resolve("stomp-py")
    times = perf._client_send_times(prec, confirmed)
    got = perf._client_rates(r, 10, times, crec, None, skip=5)
    send, recv_rate, send_like_cli, cpu, whole, faults, jit = got
    assert send == pytest.approx(1000.0)        # 5 messages from 50 ms to 55 ms
    assert recv_rate == pytest.approx(1000.0)   # 4 intervals of 1 ms after message 5
    assert whole == pytest.approx(10 / 0.054)    # first to last arrival, warm-up included
    assert send_like_cli == pytest.approx(10 / 0.054)  # all of them, to the last send call
    assert math.isnan(cpu) and math.isnan(faults) and math.isnan(jit)  # no sampler
    # timed from the first message instead, the warm-up is in the figure
    assert perf._client_rates(r, 10, times, crec, None, skip=0)[1] == pytest.approx(
        9 / 0.054)


def test_the_medians_interval_is_order_statistics_of_the_rounds():
    five = perf.median_ci([0.9, 1.2, 0.8, 1.0, 1.1])
    assert (five["lo"], five["hi"]) == (0.8, 1.2)  # n = 5: min and max, 94%
    assert five["confidence"] == pytest.approx(1 - 2 / 32)
    nine = perf.median_ci([float(x) for x in range(9, 0, -1)])
    assert (nine["lo"], nine["hi"]) == (2.0, 8.0)  # n = 9: 2nd smallest and largest, 96%
    assert nine["confidence"] == pytest.approx(1 - 2 * 10 / 512)
    assert perf.median_ci([float(x) for x in range(15)])["lo"] == 3.0  # n = 15: 4th, 96.5%


def test_the_target_is_met_only_when_the_whole_interval_clears_it():
    assert perf.verdict({"lo": 0.95, "hi": 1.2, "confidence": 0.96}) == "met"
    assert perf.verdict({"lo": 0.90, "hi": 1.2, "confidence": 0.96}) == "unsettled"
    assert perf.verdict({"lo": 0.80, "hi": 0.94, "confidence": 0.96}) == "missed"


def test_too_few_rounds_settle_nothing_whatever_the_bounds():
    one = perf.median_ci([0.80])  # one round: the interval is the value itself, at 0%
    assert one["confidence"] == 0.0 and perf.verdict(one) == "unsettled"
    four = perf.median_ci([0.80, 0.81, 0.82, 0.83])  # 88%: still too few
    assert perf.verdict(four) == "unsettled"
    five = perf.median_ci([0.80, 0.81, 0.82, 0.83, 0.84])  # 94%
    assert perf.verdict(five) == "missed"


def test_a_row_prints_its_interval_and_verdict():
    from burstbench.measure.perf import format_row

    sp = {"median": 0.97, "min": 0.9, "max": 1.1, "ci": perf.median_ci([0.9, 0.96, 0.97, 1.0, 1.1])}
    row = {"client": "net-stomp", "size": 6,
           "send": {"loop": {"median": 10, "min": 9, "max": 11},
                    "client": {"median": 10, "min": 9, "max": 11}, "ratio": 0.97,
                    "ratio_spread": sp},
           "recv": {"loop": {"median": 10, "min": 9, "max": 11},
                    "client": {"median": 10, "min": 9, "max": 11}, "ratio": 0.97}}
    send, recv = format_row(row).splitlines()
    assert send.endswith("94% CI 0.90-1.10: target unsettled")
    assert "CI" not in recv


def test_the_common_span_is_where_every_consumer_ran_warm():
    """From the latest warm start to the earliest last message, each consumer's messages in
    it; nothing when the span is empty or too thin a share of someone's timed messages."""
    def even(first, rate):  # messages by time t, arriving at `rate` a ns from `first`
        return lambda t: max(0.0, (t - first) * rate)

    span = perf._common_span([(100, 1100), (300, 900)], [even(0, 1.0), even(0, 0.5)],
                             count=1200, skip=200)
    assert span == (300, 900, [600.0, 300.0])
    assert perf._common_span([(100, 200), (300, 900)], [even(0, 1), even(0, 1)], 1200, 200) is None
    # 100 of 1,000 timed messages is under MIN_COMMON
    assert perf._common_span([(0, 1000), (900, 2000)], [even(0, 1), even(0, 1)], 1200, 200) is None


def test_the_aa_check_holds_one_or_leans():
    """Two copies of one code: their interval should hold 1.00; one that does not says the
    comparison itself leans; fewer than 5 rounds settle nothing."""
    assert perf.lean(perf.median_ci([0.97, 0.99, 1.0, 1.02, 1.04])) == "none"
    assert perf.lean(perf.median_ci([0.90, 0.92, 0.93, 0.95, 0.97])) == "leans"
    assert perf.lean(perf.median_ci([0.99, 1.0, 1.01])) == "unsettled"
    sc = perf._self_check_summary([(4.0, 4.0, 0.8), (math.nan, math.nan, math.nan),
                                   (4.2, 4.0, 0.9)])
    assert sc["rounds"] == 2 and sc["of"] == 3
    assert sc["ratio"]["min"] == 1.0 and sc["ratio"]["max"] == pytest.approx(1.05)
    assert sc["cpu_us_per_msg"]["a"]["max"] == 4.2 and sc["share"]["min"] == 0.8
    assert perf._self_check_summary([(math.nan,) * 3]) == {"rounds": 0, "of": 1}


def test_a_row_prints_its_aa_line():
    from burstbench.measure.perf import format_row

    side = {"median": 10, "min": 9, "max": 11}
    sc = perf._self_check_summary([(4.0, 4.1, 0.9), (4.1, 4.0, 0.9), (4.0, 4.0, 0.8),
                                   (3.9, 4.0, 0.9), (4.0, 3.9, 0.9)])
    row = {"client": "net-stomp", "size": 6,
           "send": {"loop": side, "client": side, "ratio": 1.0},
           "recv": {"loop": side, "client": side, "ratio": 1.0, "self_check": sc}}
    aa = format_row(row).splitlines()[-1]
    assert aa.startswith("  1 CPU, A/A loops") and aa.endswith(
        "94% CI 0.97-1.03: lean none  (5 of 5 rounds)"), aa
    row["recv"]["self_check"] = {"rounds": 0, "of": 2}
    assert format_row(row).splitlines()[-1].endswith("no common window in any of its 2 rounds: "
                                                     "nothing to compare")


# the clients with a minimal loop of their library: every stock one (a tuned entry is measured
# beside its stock client)
LOOPED = [c.name for c in clients.REGISTRY if c.loops]


def test_every_stock_client_has_a_loop():
    assert LOOPED == [c.name for c in clients.REGISTRY if not c.tuned]


def _jvm_options(argv) -> list[str]:
    return list(argv[1:argv.index("-cp")])


@pytest.mark.parametrize("spec", [c.name for c in clients.REGISTRY
                                  if c.loops and c.toolchain == "java"])
def test_a_java_loop_runs_in_the_jvm_options_of_its_client(spec):
    """Heap and collector shape a JVM's CPU a message (the bridge's full collections came from
    its heap's start size, docs/perf.md): a loop and its client run with the same options."""
    c = clients.get(spec)
    send, recv = c.loops
    opts = _jvm_options(c.producer)
    assert opts and "-XX:+AlwaysPreTouch" in opts
    assert _jvm_options(c.consumer) == opts
    assert _jvm_options(send) == opts and _jvm_options(recv) == opts


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
    if perf._tuned_of(clients.resolve(spec)) is not None:
        assert row["send"]["tuned"]["rates"]["median"] > 0 and doc["tuned"] is True
    else:
        assert "tuned" not in row["send"] and spec == "akka-bridge"


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
    sent = perf._run_to_end(sup, f"send-{spec}", [*send_argv, url, q, "2500", "6", "1250"],
                            120)[-1]
    if perf.send_timed_from_mark(r):
        at = [int(x) for x in sent["at_ns"]]
        first, mark, last = (int(sent[k]) for k in ("first_ns", "mark_ns", "last_ns"))
        assert sent["every"] == 1000 and len(at) == 3 and at == sorted(at)
        assert first <= at[0] <= at[1] <= mark <= at[2] <= last
        assert perf.loop_arrived(sent, last) == 2500 and perf.loop_arrived(sent, at[2]) == 2001
    else:
        assert "at_ns" not in sent
    rcv = perf._run_to_end(sup, f"recv-{spec}", [*recv_argv, url, q, "2500", "1250"], 120)[-1]
    at = [int(x) for x in rcv["at_ns"]]
    first, mark, last = (int(rcv[k]) for k in ("first_ns", "mark_ns", "last_ns"))
    assert rcv["every"] == 1000 and len(at) == 3  # messages 0, 1000 and 2000
    assert at[0] == first and at == sorted(at) and at[1] <= mark <= at[2] <= last
    assert perf.loop_arrived(rcv, first) == 1 and perf.loop_arrived(rcv, last) == 2500
    assert perf.loop_arrived(rcv, at[2]) == 2001


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
    monkeypatch.setattr(perf, "CpuSampler", Watching)
    return cpus, seen


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
