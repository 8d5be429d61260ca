"""``./bench perf``: each client against a minimal loop of its library, or a consumer's own
listener against its loop's work (docs/perf.md)."""

from __future__ import annotations

import argparse

from burstbench.commands.args import Renamed, integer, number

NAME = "perf"
HELP = ("benchmarks: 'clients' = each client vs a minimal loop; "
        "'listener' = a consumer's own work a message, without a broker")


def add_arguments(p) -> None:
    p.add_argument("what", choices=["clients", "listener"])
    p.add_argument("--clients", help="comma-separated client specs (default: the four "
                   "languages; akka-bridge, pekko-bridge and stompjs:tcp by name; listener: "
                   "net-stomp and openwire-jms, the two it has)")
    p.add_argument("--sizes", default="6,1024", help="body sizes, comma-separated")
    p.add_argument(
        "--count",
        type=integer(1000),
        default=100000,
        help="messages per measurement at 6 B (half that at 1 KiB)",
    )
    p.add_argument("--count-jvm", type=integer(1000), default=400000,
                   help="messages per measurement of a JVM client at 6 B (half that at 1 KiB; "
                   "default 400000): a fresh JVM runs its first few hundred thousand messages "
                   "slower while it compiles, and the loop and the client compile different "
                   "amounts of code")
    p.add_argument("--count-jvm-one-cpu", type=integer(1000), default=None, metavar="COUNT",
                   help="messages per one-CPU round of a JVM client at 6 B (default: twice "
                   "--count-jvm). Its timed messages stay those of --count-jvm, the rest is "
                   "warm-up, as long at 1 KiB (by default 800000 at 6 B and 700000 at 1 KiB, "
                   "600000 of each warm-up): two JVMs and their compilers share the one CPU, "
                   "and a JVM's compiling then reaches into a window the two-CPU rounds leave "
                   "clean")
    p.add_argument("--warmup-share", "--warmup", dest="warmup", type=number(0.0, below=1.0),
                   default=0.5, action=Renamed, metavar="SHARE",
                   help="the share of each process's messages that is its warm-up and is not "
                   "timed, for loop and client alike (default 0.5: the second half is timed)")
    p.add_argument("--cli", action=argparse.BooleanOptionalAction, default=True,
                   help="measure the JMS pair against ActiveMQ's own command-line producer and "
                   "consumer too")
    p.add_argument("--tuned", action=argparse.BooleanOptionalAction, default=True,
                   help="measure each stock client's tuned entry in the same rounds (the "
                   "headroom the library leaves); --no-tuned makes a long run of stock against "
                   "loop a third shorter")
    p.add_argument("--rounds", type=integer(1), default=5,
                   help="measured rounds after a warm-up (loop and client alternate)")
    p.add_argument("--one-cpu-rounds", type=integer(0), default=None, metavar="N",
                   help="rounds in which loop and client run at the same time, pinned to one "
                   "CPU (the broker on another), compared by CPU per message: the machine's "
                   "state falls on both at once (default: as many as --rounds; 0: none)")
    p.add_argument("--self-check", type=integer(0), default=0, metavar="N",
                   help="N more one-CPU receive rounds with the loop on both sides (A/A): how "
                   "far the one-CPU comparison leans on its own, which two copies of one code "
                   "should show as 1.00 (default 0: none)")
    p.add_argument("--optimized-dispatch", action=argparse.BooleanOptionalAction, default=False,
                   help="the broker's queues dispatch in the waking thread (see bench run --help)")


def run(args) -> int:
    if args.what == "listener":
        from burstbench.measure import listener

        return listener.main(args)
    from burstbench.measure import perf

    return perf.main(args)
