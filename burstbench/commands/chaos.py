"""``./bench chaos``: faults injected into real brokers, every confirmed message accounted for."""

from __future__ import annotations

from burstbench import clients
from burstbench.commands.args import integer, number
from burstbench.faults.registry import SCENARIOS

NAME = "chaos"
HELP = ("inject a fault into a persistent client-ack burst; "
        "exit 1 if anything was lost")


def add_arguments(p) -> None:
    p.add_argument("scenario", choices=[*SCENARIOS, "all", "soak"],
                   help="the fault, or all (every scenario x every applicable language), or "
                   "soak (all four languages for --duration with faults from a seeded "
                   "schedule)")
    p.add_argument("--client", help="the client for producers and consumers (default stomp-py; "
                   f"failover-pair: openwire-jms). Known: {clients.help_text()}")
    p.add_argument("--count", type=integer(1), default=500, help="messages per burst")
    p.add_argument("--bursts", type=integer(4), default=12, help="bursts per producer")
    p.add_argument("--cut-seconds", type=number(0.1), default=10.0,
                   help="link-cut, mesh-partition: how long the link stays down")
    p.add_argument("--duration", help="soak: how long, e.g. 600, 90s, 10m (default 10m)")
    p.add_argument("--seed", type=integer(1), help="soak: the fault schedule's seed (printed; "
                   "the same seed, duration and --faults replay the same schedule)")
    p.add_argument("--faults", type=integer(1), help="soak: how many faults (default one per "
                   "2 minutes, at least 3)")
    p.add_argument("--fraction", type=number(0.01), default=0.25,
                   help="soak: each producer's rate as a fraction of its language's "
                   "calibrated rate (default 0.25)")
    p.add_argument("--kinds", metavar="LIST", help="soak: the fault kinds to draw from, "
                   "comma-separated (default all: broker-kill,link-cut,consumer-kill,"
                   "producer-kill; the replay needs the same list)")
    p.add_argument("--languages", metavar="LIST", help="soak: the clients, one producer and "
                   "one consumer each (default the four stock ones; the replay needs the "
                   "same list)")
    p.add_argument("--journal-mb", type=integer(1), metavar="N", help="soak: KahaDB journal "
                   "files of N MB instead of ActiveMQ's 32 (a kept file shows sooner)")


def run(args) -> int:
    if args.scenario == "soak":
        from burstbench.faults import soak

        return soak.main(args)
    from burstbench.faults import command

    return command.main(args)
