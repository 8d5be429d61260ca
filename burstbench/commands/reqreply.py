"""``./bench reqreply``: the request/reply study (burstbench/studies/reqreply.py)."""

from __future__ import annotations

from burstbench import clients
from burstbench.commands.args import Renamed, integer

NAME = "reqreply"
HELP = ("blocking request/reply: JmsTemplate temp queue, "
        "reused reply queue, actor ask; payload 1 B .. 1 MB")


def add_arguments(p) -> None:
    p.add_argument("--profile", default="quick",
                   help="modes/payloads from profiles/<name>.yaml studies.reqreply")
    p.add_argument("--modes", help="temp-queue, reused-queue, actor-ask (comma-separated)")
    p.add_argument("--payloads", help="payload bytes, comma-separated (0..1000000)")
    p.add_argument("--requests", type=integer(1), help="measured requests per point")
    p.add_argument("--warmup-requests", "--warmup", dest="warmup", type=integer(0), action=Renamed,
                   metavar="N", help="warm-up requests per point (not measured)")
    p.add_argument("--runtime", choices=sorted(clients.BRIDGE_MODULES),
                   help="the actors' runtime for actor-ask, and the bridge every mode runs in: "
                   "akka (Akka 2.6.20, the default) or pekko (Apache Pekko 1.7.0)")
    p.add_argument("--spring-cf", choices=["single", "caching", "plain"],
                   help="temp-queue: the ConnectionFactory behind JmsTemplate (default plain: "
                   "a connection per request, as JmsTemplate does out of the box; single "
                   "shares one connection)")


def run(args) -> int:
    from burstbench.studies import reqreply

    return reqreply.main(args)
