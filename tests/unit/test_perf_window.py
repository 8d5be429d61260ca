"""./bench perf's timed window (pure logic): loop and client are timed over the same message
indices, from message SKIP to the last, and the warm-up before it is not timed."""

import math
from pathlib import Path

import pytest

from burstbench import clients
from burstbench.measure import perf


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
    times = perf.client_send_times(prec, confirmed)
    got = perf.client_rates(r, 10, times, crec, None, skip=5)
    send, recv_rate, send_like_cli, cpu, whole, faults, jit = got
    assert send == pytest.approx(1000.0)        # 5 messages from 50 ms to 55 ms
    assert recv_rate == pytest.approx(1000.0)   # 4 intervals of 1 ms after message 5
    assert whole == pytest.approx(10 / 0.054)    # first to last arrival, warm-up included
    assert send_like_cli == pytest.approx(10 / 0.054)  # all of them, to the last send call
    assert math.isnan(cpu) and math.isnan(faults) and math.isnan(jit)  # no sampler
    # timed from the first message instead, the warm-up is in the figure
    assert perf.client_rates(r, 10, times, crec, None, skip=0)[1] == pytest.approx(
        9 / 0.054)


def test_the_medians_interval_is_order_statistics_of_the_rounds():
    five = perf.median_ci([0.9, 1.2, 0.8, 1.0, 1.1])
    assert (five["lo"], five["hi"]) == (0.8, 1.2)  # n = 5: min and max, 94%
    assert five["confidence"] == pytest.approx(1 - 2 / 32)
    nine = perf.median_ci([float(x) for x in range(9, 0, -1)])
    assert (nine["lo"], nine["hi"]) == (2.0, 8.0)  # n = 9: 2nd smallest and largest, 96%
    assert nine["confidence"] == pytest.approx(1 - 2 * 10 / 512)
    assert perf.median_ci([float(x) for x in range(15)])["lo"] == 3.0  # n = 15: 4th, 96.5%


def test_the_target_is_judged_by_every_rounds_ratio():
    assert perf.verdict({"min": 0.95, "max": 1.2, "n": 5}) == "holds"
    assert perf.verdict({"min": 0.90, "max": 1.2, "n": 30}) == "within noise"
    assert perf.verdict({"min": 0.80, "max": 0.949, "n": 5}) == "misses"


def test_too_few_rounds_are_not_judged_whatever_the_bounds():
    assert perf.verdict({"min": 0.80, "max": 0.80, "n": 1}) == "not judged"
    assert perf.verdict({"min": 0.80, "max": 0.83, "n": 4}) == "not judged"
    assert perf.verdict({"min": 0.80, "max": 0.84, "n": 5}) == "misses"


def test_the_rule_is_declared_with_the_rounds_it_judges():
    text = perf.rule(5, 30)
    assert "declared before the run" in text and "30 one-CPU rounds" in text
    assert "within noise" in text and "never pooled" in text
    assert "5 rounds" in perf.rule(5, 0)


def test_a_row_prints_its_interval_and_verdict():
    from burstbench.measure.perf import format_row

    ratios = [0.9, 0.96, 0.97, 1.0, 1.1]
    sp = {"median": 0.97, "min": 0.9, "max": 1.1, "n": 5, "ci": perf.median_ci(ratios)}
    row = {"client": "net-stomp", "size": 6,
           "send": {"loop": {"median": 10, "min": 9, "max": 11},
                    "client": {"median": 10, "min": 9, "max": 11}, "ratio": 0.97,
                    "ratio_spread": sp},
           "recv": {"loop": {"median": 10, "min": 9, "max": 11},
                    "client": {"median": 10, "min": 9, "max": 11}, "ratio": 0.97}}
    send, recv = format_row(row).splitlines()
    assert send.endswith("target: within noise (94% CI 0.90-1.10)")
    assert "CI" not in recv


def test_the_common_span_is_where_every_consumer_ran_warm():
    """From the latest warm start to the earliest last message, each consumer's messages in
    it; nothing when the span is empty or too thin a share of someone's timed messages."""
    def even(first, rate):  # messages by time t, arriving at `rate` a ns from `first`
        return lambda t: max(0.0, (t - first) * rate)

    span = perf.common_span([(100, 1100), (300, 900)], [even(0, 1.0), even(0, 0.5)],
                             count=1200, skip=200)
    assert span == (300, 900, [600.0, 300.0])
    assert perf.common_span([(100, 200), (300, 900)], [even(0, 1), even(0, 1)], 1200, 200) is None
    # 100 of 1,000 timed messages is under MIN_COMMON
    assert perf.common_span([(0, 1000), (900, 2000)], [even(0, 1), even(0, 1)], 1200, 200) is None


def test_the_aa_check_holds_one_or_leans():
    """Two copies of one code: their interval should hold 1.00; one that does not says the
    comparison itself leans; fewer than 5 rounds settle nothing."""
    assert perf.lean(perf.median_ci([0.97, 0.99, 1.0, 1.02, 1.04])) == "none"
    assert perf.lean(perf.median_ci([0.90, 0.92, 0.93, 0.95, 0.97])) == "leans"
    assert perf.lean(perf.median_ci([0.99, 1.0, 1.01])) == "not judged"
    sc = perf.self_check_summary([(4.0, 4.0, 0.8), (math.nan, math.nan, math.nan),
                                   (4.2, 4.0, 0.9)])
    assert sc["rounds"] == 2 and sc["of"] == 3
    assert sc["ratio"]["min"] == 1.0 and sc["ratio"]["max"] == pytest.approx(1.05)
    assert sc["cpu_us_per_msg"]["a"]["max"] == 4.2 and sc["share"]["min"] == 0.8
    assert perf.self_check_summary([(math.nan,) * 3]) == {"rounds": 0, "of": 1}


def test_a_row_prints_its_aa_line():
    from burstbench.measure.perf import format_row

    side = {"median": 10, "min": 9, "max": 11}
    sc = perf.self_check_summary([(4.0, 4.1, 0.9), (4.1, 4.0, 0.9), (4.0, 4.0, 0.8),
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
    its heap's start size, 28955a4:docs/perf.md): a loop and its client run with the same
    options."""
    c = clients.get(spec)
    send, recv = c.loops
    opts = _jvm_options(c.producer)
    assert opts and "-XX:+AlwaysPreTouch" in opts
    assert _jvm_options(c.consumer) == opts
    assert _jvm_options(send) == opts and _jvm_options(recv) == opts
