"""The table ``./bench perf`` prints and writes, with its footnotes."""

from __future__ import annotations

from burstbench.measure.perf.stats import TARGET, lean, verdict

HEADER = (
    f"{'client':<14}{'size':>6}  {'role':<5}{'loop msg/s (min-max)':>28}"
    f"{'client msg/s (min-max)':>30}{'ratio, by round (min-max)':>28}"
)




CI_FOOTNOTE = (
    "target 0.95 by the rule above: holds = every round's ratio at or above it, misses = every "
    "round's below,\n  within noise = the rounds straddle it. CI: a distribution-free "
    "confidence interval of the median ratio\n  (order statistics of the rounds' ratios), "
    "information only: the spread between runs is wider.")


ONE_CPU_FOOTNOTE = (
    "1 CPU: {rounds} more rounds, in which the loop's producer and the client's run at the same "
    "time pinned to CPU {clients_cpu},\n  then their consumers (the broker alone on CPU "
    "{broker_cpu}); the ratio is loop / client CPU per message round by round. A receive\n  "
    "counts only the common window, while both drained (the one left alone costs more a "
    "message, likely\n  waiting on the broker); a round whose window holds less than a quarter "
    "of the timed messages is left out\n  (common window: rounds kept, and their share of the "
    "timed messages). A send is judged over each producer's own\n  timed messages; below it, "
    "its common window, while both producers sent (a loop counts its sends from its\n  "
    "at_ns; a stompjs send, timed whole, has none). The host's\n  "
    "speed flips within seconds here and moves both alike, so this ratio settles where the "
    "rates' cannot (docs/perf.md).\n  A JVM's one-CPU rounds run longer, the extra all "
    "warm-up, as long at every size (--count-jvm-one-cpu);\n  JIT share: the part of its timed "
    "CPU its compiler threads took, left out of its CPU per message (compiling\n  is a one-time "
    "cost).\n  "
    "sys us/msg: the system (kernel) part of a consumer's CPU in the common window (counted "
    "in 10 ms ticks: rough\n  in a round, less so as a median); reads/msg: its read system "
    "calls a message (how it took the socket's traffic).")


SELF_CHECK_FOOTNOTE = (
    "1 CPU, A/A loops: {rounds} more one-CPU receive rounds with the loop on both sides: two of "
    "its producers fill a queue each,\n  then two of its receive loops, a and b (each starts "
    "first in turn), drain them together, pinned and held as above;\n  a / b is their CPU per "
    "message in the common window, round by round. Two copies of one code: lean none = the\n  "
    "interval holds 1.00, as it should; leans = the comparison itself favours a side, and the "
    "loop / client figures carry that too.")


CPU_FOOTNOTE = (
    "CPU us/msg: the consumer process's own CPU time (user + system, from /proc) over the timed "
    "messages, per message;\n  the ratio is loop / client round by round (the client's share "
    "of the loop's efficiency). page faults/msg: its minor faults over\n  the same messages "
    "(fresh memory touched; 3-6 us each on this VM).")


def warmup_footnote(warmup: float) -> str:
    return (f"timed: each process from message {warmup:.0%} of its count to its last (the "
            "first share is its warm-up), loop and client alike;\n  a stompjs send is timed "
            "whole (publish() only queues).")


TUNED_FOOTNOTE = (
    "tuned rows: the stock client's rate (left) against its -tuned entry's (right), measured "
    "in the same rounds;\n  their ratio is the headroom the library's public API leaves on "
    "the table, not a figure of the library.")


CLI_FOOTNOTE = (
    "vs CLI: ActiveMQ's own producer and consumer (activemq-console) on the same broker; left "
    "theirs, right ours.\n  apart = the producer sends its burst, then the consumer drains "
    "the queue; together = the consumer listens while the producer sends.\n"
    "* ActiveMQ's CLI producer times itself to its last send call (its sends are "
    "asynchronous), so these rows time ours the same way;\n  the rows above time every send "
    "to the broker's confirmation of the last message. The CLI times all of its messages, and "
    "so do these rows.")


def _ratio_spread(d: dict) -> str:
    """The round-by-round ratios' min-max, when the row has them."""
    sp = d.get("ratio_spread")
    return f" ({sp['min']:.2f}-{sp['max']:.2f})" if sp else ""


def _ci(sp: dict | None) -> str:
    """What the rule says of the target, and the median ratio's confidence interval."""
    if not sp or "ci" not in sp:
        return ""
    ci = sp["ci"]
    return (f"  target: {verdict(sp, TARGET)} ({ci['confidence']:.0%} CI "
            f"{ci['lo']:.2f}-{ci['hi']:.2f})")


def _cpu_line(label: str, role: str, loop: dict, client: dict, ratio: dict) -> str:
    """A row's line of CPU µs per message: loop, client, loop / client and its verdict."""
    return (f"{label:<22}{role:<5}"
            f"{loop['median']:>10.2f} ({loop['min']:.2f}-{loop['max']:.2f})".ljust(58)
            + f"{client['median']:>10.2f} ({client['min']:.2f}-{client['max']:.2f})".ljust(30)
            + f"{ratio['median']:>7.2f} ({ratio['min']:.2f}-{ratio['max']:.2f})"
            + _ci(ratio))


def _pair_line(label: str, role: str, loop: dict, client: dict, fmt: str) -> str:
    """A row's line of one more figure, loop and client side by side (no ratio)."""
    return (f"{label:<22}{role:<5}"
            f"{loop['median']:>10{fmt}} ({loop['min']:{fmt}}-{loop['max']:{fmt}})".ljust(58)
            + f"{client['median']:>10{fmt}} ({client['min']:{fmt}}-{client['max']:{fmt}})")


def _self_check_line(role: str, sc: dict) -> str:
    """A row's A/A line: each loop's CPU µs a message, a / b, and whether the comparison leans
    (lean)."""
    label = "  1 CPU, A/A loops"
    if "ratio" not in sc:
        return (f"{label:<22}{role:<5}    no common window in any of its {sc['of']} rounds: "
                "nothing to compare")
    a, b, q = sc["cpu_us_per_msg"]["a"], sc["cpu_us_per_msg"]["b"], sc["ratio"]
    ci = q["ci"]
    return (f"{label:<22}{role:<5}"
            f"{a['median']:>10.2f} ({a['min']:.2f}-{a['max']:.2f})".ljust(58)
            + f"{b['median']:>10.2f} ({b['min']:.2f}-{b['max']:.2f})".ljust(30)
            + f"{q['median']:>7.2f} ({q['min']:.2f}-{q['max']:.2f})"
            + f"  {ci['confidence']:.0%} CI {ci['lo']:.2f}-{ci['hi']:.2f}: lean {lean(ci)}"
            + f"  ({sc['rounds']} of {sc['of']} rounds)")


def format_row(row: dict) -> str:
    lines = []
    for role in ("send", "recv"):
        d = row[role]
        lo, cl = d["loop"], d["client"]
        lines.append(
            f"{row['client']:<14}{row['size']:>6}  {role:<5}"
            f"{lo['median']:>10,.0f} ({lo['min']:,.0f}-{lo['max']:,.0f})".ljust(58)
            + f"{cl['median']:>10,.0f} ({cl['min']:,.0f}-{cl['max']:,.0f})".ljust(30)
            + f"{d['ratio']:>7.2f}" + _ratio_spread(d) + _ci(d.get("ratio_spread"))
        )
        if "cpu_us_per_msg" in d:
            c = d["cpu_us_per_msg"]
            lines.append(_cpu_line("  CPU us/msg", role, c["loop"], c["client"], c["ratio"]))
        if "one_cpu" in d and "ratio" not in d["one_cpu"]:
            c, ow = d["one_cpu"]["common"], d["one_cpu"]["own_windows"]["ratio"]
            lines.append(f"{'  1 CPU, CPU us/msg':<22}{role:<5}    no common window in any of "
                         f"its {c['of']} rounds: nothing to compare (own windows: loop / "
                         f"client {ow['median']:.2f})")
        elif "one_cpu" in d:
            o = d["one_cpu"]
            lines.append(_cpu_line("  1 CPU, CPU us/msg", role, o["cpu_us_per_msg"]["loop"],
                                   o["cpu_us_per_msg"]["client"], o["ratio"]))
            if "common" in o:
                c, ow = o["common"], o["own_windows"]
                lines.append(f"{'    common window':<22}{role:<5}"
                             f"{c['rounds']:>4} of {c['of']} rounds, "
                             f"{c['share']['median']:.0%} ({c['share']['min']:.0%}-"
                             f"{c['share']['max']:.0%}) of the timed messages; "
                             + f"own windows: loop / client {ow['ratio']['median']:.2f} "
                             f"({ow['ratio']['min']:.2f}-{ow['ratio']['max']:.2f})")
            if "common_window" in o:  # a send's, beside its own windows' (the judged line)
                cw = o["common_window"]
                lines.append(_cpu_line("    common window", role, cw["cpu_us_per_msg"]["loop"],
                                       cw["cpu_us_per_msg"]["client"], cw["ratio"])
                             + f"  ({cw['rounds']} of {cw['of']} rounds, "
                             f"{cw['share']['median']:.0%} of the timed messages)")
            jl, jc = o.get("jit_share", {}).get("loop"), o.get("jit_share", {}).get("client")
            if jl and jc and (jl["max"] > 0 or jc["max"] > 0):
                lines.append(_pair_line("  1 CPU, JIT share", role, jl, jc, ".1%"))
            for key, label, fmt in (("sys_us_per_msg", "  1 CPU, sys us/msg", ".2f"),
                                    ("reads_per_msg", "  1 CPU, reads/msg", ".3f")):
                if key in o:
                    lines.append(_pair_line(label, role, o[key]["loop"], o[key]["client"], fmt))
        if "self_check" in d:
            lines.append(_self_check_line(role, d["self_check"]))
        if "faults_per_msg" in d:
            lines.append(_pair_line("  page faults/msg", role, d["faults_per_msg"]["loop"],
                                    d["faults_per_msg"]["client"], ".3f"))
        if "tuned" in d:
            tu = d["tuned"]["rates"]
            lines.append(f"{'  ' + d['tuned']['client']:<22}{role:<5}"
                         f"{cl['median']:>10,.0f} ({cl['min']:,.0f}-{cl['max']:,.0f})".ljust(58)
                         + f"{tu['median']:>10,.0f} ({tu['min']:,.0f}-{tu['max']:,.0f})".ljust(30)
                         + f"{d['tuned']['ratio_to_stock']:>7.2f}" + _ratio_spread(d["tuned"]))
        for mode, c in d.get("vs_cli", {}).items():
            ac, mine = c["activemq_cli"], c["client_like_cli"]
            label = f"  vs CLI ({mode})" + ("*" if role == "send" else "")
            lines.append(f"{label:<22}{role:<5}"
                         f"{ac['median']:>10,.0f} ({ac['min']:,.0f}-{ac['max']:,.0f})".ljust(58)
                         + f"{mine['median']:>10,.0f} "
                           f"({mine['min']:,.0f}-{mine['max']:,.0f})".ljust(30)
                         + f"{c['ratio_to_cli']:>7.2f}")
    return "\n".join(lines)
