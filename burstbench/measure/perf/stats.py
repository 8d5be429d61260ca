"""The rounds' summaries: the one-CPU and self-check figures, the rule a run declares before it
measures and its verdict, on burstbench.stats (medians, spreads, intervals, paired ratios)."""

from __future__ import annotations

import math

from burstbench import stats
from burstbench.measure.perf.windows import OneCpu
from burstbench.stats import MIN_CONFIDENCE, MIN_ROUNDS, median_ci, paired_ratios  # noqa: F401
from burstbench.stats import spread as spread_of

TARGET = 0.95  # the stock client within 5% of its loop: the bench's own cost


def one_cpu_summary(one: list[tuple[OneCpu, OneCpu]], role: str) -> dict:
    """CPU per message of loop and client in the one-CPU rounds, and loop / client round by
    round with its confidence interval (>= 0.95: the client's code costs at most 5% more).
    A receive counts the rounds with a common window (common_window; when none had one, the
    row has no figures but ``common`` and ``own_windows``); its figures over each side's own
    timed messages are kept beside, as ``own_windows``. ``each`` keeps every round's figures
    of the role (OneCpu's fields named for it), in the rounds' order, so that a round far from
    the rest can be read whole: its compiler share, its kernel part, its window."""
    cpu, rate = ("send_cpu_us", "send") if role == "send" else ("recv_cpu_us", "recv")
    k = OneCpu._fields.index(cpu)
    role_fields = [f for f in OneCpu._fields if f == role or f.startswith(role + "_")]
    d: dict = {"each": {side: [{f: getattr(x[i], f) for f in role_fields} for x in one]
                        for i, side in enumerate(("loop", "client"))}}
    kept = one
    if role == "recv":
        kept = [x for x in one if not math.isnan(x[0].recv_cpu_us)]
        own = OneCpu._fields.index("recv_cpu_us_own")
        d["common"] = {"rounds": len(kept), "of": len(one)}
        held = [x[0].recv_held_ms for x in one if not math.isnan(x[0].recv_held_ms)]
        if held:  # how long the broker held both queues (Hold)
            d["common"]["held_ms"] = spread_of(held)
        if kept:
            d["common"]["share"] = spread_of([x[0].recv_common for x in kept])
        d["own_windows"] = {
            "cpu_us_per_msg": {"loop": spread_of([x[0].recv_cpu_us_own for x in one]),
                               "client": spread_of([x[1].recv_cpu_us_own for x in one])},
            "ratio": paired_ratios([x[0] for x in one], [x[1] for x in one], own)}
        if not kept:
            return d
    loops, mine = [x[0] for x in kept], [x[1] for x in kept]
    d.update({"cpu_us_per_msg": {"loop": spread_of([getattr(x, cpu) for x in loops]),
                                 "client": spread_of([getattr(x, cpu) for x in mine])},
              "ratio": paired_ratios(loops, mine, k),
              "rates": {"loop": spread_of([getattr(x, rate) for x in loops]),
                        "client": spread_of([getattr(x, rate) for x in mine])},
              "rounds": {"loop": [getattr(x, cpu) for x in loops],
                         "client": [getattr(x, cpu) for x in mine]}})
    if role == "recv":
        # the fresh memory it touched, where its CPU went (the kernel's part), and how many
        # reads the socket's traffic took; a figure a side could not read is left out
        for key, field in (("faults_per_msg", "recv_faults"), ("sys_us_per_msg", "recv_sys_us"),
                           ("reads_per_msg", "recv_reads")):
            lo, cl = ([getattr(x, field) for x in side] for side in (loops, mine))
            if not any(math.isnan(v) for v in lo + cl):
                d[key] = {"loop": spread_of(lo), "client": spread_of(cl)}
    if role == "send":
        both = [x for x in one if not math.isnan(x[0].send_cpu_us_common)]
        if both:  # beside the judged figure: the span in which both producers sent
            k_common = OneCpu._fields.index("send_cpu_us_common")
            d["common_window"] = {
                "rounds": len(both), "of": len(one),
                "share": spread_of([x[0].send_common for x in both]),
                "cpu_us_per_msg": {"loop": spread_of([x[0].send_cpu_us_common for x in both]),
                                   "client": spread_of([x[1].send_cpu_us_common for x in both])},
                "ratio": paired_ratios([x[0] for x in both], [x[1] for x in both], k_common)}
    jit = "send_jit" if role == "send" else "recv_jit"
    d["jit_share"] = {"loop": spread_of([getattr(x, jit) for x in loops]),
                      "client": spread_of([getattr(x, jit) for x in mine])}
    return d


def self_check_summary(rounds: list[tuple[float, float, float]]) -> dict:
    """The A/A rounds (self_check_once): how many had a common window, each loop's CPU µs a
    message, a / b round by round with its interval (which should hold 1.00), and the window's
    share of the timed messages."""
    kept = [x for x in rounds if not math.isnan(x[0])]
    d: dict = {"rounds": len(kept), "of": len(rounds)}
    if kept:
        d.update({"cpu_us_per_msg": {"a": spread_of([x[0] for x in kept]),
                                     "b": spread_of([x[1] for x in kept])},
                  "ratio": paired_ratios(kept, [(x[1],) for x in kept], 0),
                  "share": spread_of([x[2] for x in kept])})
    return d


def lean(ci: dict) -> str:
    """What an A/A interval says: 'none' when it holds 1.00 (as two copies of one code should),
    'leans' when it does not; 'not judged' when it is too narrow a claim (fewer than 5 rounds)."""
    if ci["confidence"] < MIN_CONFIDENCE:
        return "not judged"
    return "none" if ci["lo"] <= 1 <= ci["hi"] else "leans"


def verdict(ratios: dict, target: float = TARGET) -> str:
    """The rule (``rule``) on a row's rounds: burstbench.stats.verdict against the target."""
    return stats.verdict(ratios, target)


def rule(rounds: int, one_cpu_rounds: int) -> str:
    """The rule a run declares before it measures, printed first and kept in perf.json."""
    judged = f"{one_cpu_rounds} one-CPU rounds" if one_cpu_rounds else f"{rounds} rounds"
    return (f"rule (declared before the run): each stock row's loop / client ratio is judged "
            f"once against {TARGET}, over its {judged}: holds = every round at or above it, "
            f"misses = every round below, within noise = the rounds straddle it; fewer than "
            f"{MIN_ROUNDS} rounds: not judged. A repeated run is reported beside this one, "
            "never pooled into it.")
