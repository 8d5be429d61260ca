"""``./bench pi``: the Leibniz Pi study (burstbench/studies/pi/)."""

from __future__ import annotations

from burstbench.commands.args import integer

NAME = "pi"
HELP = ("Leibniz Pi: competing workers over the broker vs actors "
        "(the Pi paper's grid; tables and charts/pi.png)")


def add_arguments(p) -> None:
    p.add_argument("--profile", default="quick",
                   help="grid from profiles/<name>.yaml studies.pi (quick, blog, full)")
    p.add_argument("--workers", help="workers W, comma-separated (overrides the profile)")
    p.add_argument("--messages", help="work messages M, comma-separated")
    p.add_argument("--elements", help="series terms per message E, comma-separated")
    p.add_argument("--workers-lang", metavar="LIST",
                   help="worker languages taken in turn, e.g. perl,python,node,java "
                   "(default: the profile's, else java)")
    p.add_argument("--java-threads", type=integer(1), metavar="N",
                   help="Java workers per JVM (default 10): W Java workers = ceil(W/N) JVMs")
    p.add_argument("--prefetch", type=integer(1), help="work-queue prefetch per worker "
                   "(default 1000)")
    p.add_argument("--backends", help="activemq, akka and/or pekko (the bridge on Apache Pekko), "
                   "comma-separated (default: activemq,akka)")


def run(args) -> int:
    from burstbench.studies import pi

    return pi.main(args)
