"""``./bench perf listener``: a stock consumer's own work a message, apart from the broker.

``./bench perf clients`` compares a consumer with its library's loop through a real broker,
where the harness's part is a few per cent of what a message costs and the broker, the socket
and the scheduler move both. This benchmark takes them away: messages made as the library
receives them are handed, in one process, to the loop's per-message work and to the consumer's
own listener (the code the bench runs, read from the client's source), alternating round by
round. The difference is what the harness adds to a receive: the timestamp, the record, the
check of the body. Where it is smaller than the gap ``perf clients`` finds, the rest of that
gap is not the listener's code.
"""

from __future__ import annotations

import json
import subprocess
import sys

from burstbench import paths

_MICRO = paths.ROOT / "perf" / "micro"


def _argv(name: str, size: int, messages: int, rounds: int) -> list[str]:
    if name == "openwire-jms":
        java = paths.CLIENTS / "java" / "target"
        cp = f"{java / 'classes'}:{java / 'lib'}/*"
        # a young generation the timed loop's allocations do not fill (ListenerCost collects
        # before each): no collection in a timed loop
        return ["java", "-Xms1g", "-Xmx1g", "-Xmn768m", "-XX:+AlwaysPreTouch", "-XX:+UseParallelGC",
                "-cp", cp, str(_MICRO / "ListenerCost.java"), str(size), str(messages), str(rounds)]
    return ["perl", str(_MICRO / "listener-cost.pl"), str(size), str(messages), str(rounds)]


CLIENTS = ("openwire-jms", "net-stomp")
MESSAGES = 5_000  # a round's, each side
ROUNDS = 40


class ListenerError(RuntimeError):
    pass


def measure(name: str, size: int, rounds: int, messages: int | None = None) -> dict:
    """One client's listener against its loop's per-message work: the benchmark's JSON line."""
    argv = _argv(name, size, messages or MESSAGES, rounds)
    p = subprocess.run(argv, capture_output=True, text=True, timeout=900, check=False)
    if p.returncode != 0:
        tail = (p.stderr.strip().splitlines() or ["(nothing on stderr)"])[-1]
        raise ListenerError(f"{name} {size} B: {argv[0]} exited {p.returncode}: {tail}")
    lines = p.stdout.strip().splitlines()
    if not lines:
        raise ListenerError(f"{name} {size} B: {argv[0]} printed no result")
    return json.loads(lines[-1])


def row(name: str, r: dict) -> str:
    def f(x):
        return f"{x[0]:7.0f} ({x[1]:.0f}-{x[2]:.0f})"

    share = r["harness_ns"][0] / r["consumer_ns"][0]
    return (f"{name:<14} {r['size']:>5} B  {f(r['loop_ns']):<22} {f(r['consumer_ns']):<22} "
            f"{f(r['harness_ns']):<22} {share:6.1%}")


HEADER = (f"{'client':<14} {'size':>7}  {'loop ns/msg':<22} {'consumer ns/msg':<22} "
          f"{'harness ns/msg':<22} {'share':>6}")
FOOTNOTE = ("ns a message in one process, no broker: the median of the rounds after the first "
            "quarter, min-max in brackets; harness = consumer - loop, round by round; share = "
            "harness / consumer (of a listener alone: beside a broker a message costs more, "
            "and the share is smaller)")



def main(args) -> int:
    names = args.clients.split(",") if args.clients else list(CLIENTS)
    unknown = [n for n in names if n not in CLIENTS]
    if unknown:
        print(f"bench perf: error: no listener benchmark for {', '.join(unknown)} (there is one "
              f"for {', '.join(CLIENTS)})", file=sys.stderr)
        return 2
    sizes = [int(s) for s in args.sizes.split(",")]
    print(HEADER, flush=True)
    try:
        for name in names:
            for size in sizes:
                print(row(name, measure(name, size, ROUNDS)), flush=True)
    except ListenerError as e:
        print(f"bench perf: error: {e}", file=sys.stderr)
        return 1
    print(FOOTNOTE)
    return 0
