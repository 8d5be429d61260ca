"""``./bench runtimes``: the bridge on Akka and on Pekko (burstbench/studies/runtimes.py)."""

from __future__ import annotations

from burstbench.commands.args import integer

NAME = "runtimes"
HELP = ("the bridge on Akka and on Apache Pekko side by side: "
        "bursts through actors, the Pi actor rows, ask (docs/runtimes.md)")


def add_arguments(p) -> None:
    p.add_argument("--profile", default="runtimes",
                   help="what to measure, from profiles/<name>.yaml studies.runtimes")
    p.add_argument("--rounds", type=integer(1), help="rounds, the runtimes alternating (default "
                   "the profile's)")


def run(args) -> int:
    from burstbench.studies import runtimes

    return runtimes.main(args)
