"""``./bench sweep``: run a profile's axes (and studies) and draw the charts."""

from __future__ import annotations

from burstbench import profiles
from burstbench.commands.point import (
    add_admin_options,
    add_live_options,
    add_login_options,
    live_started,
)

NAME = "sweep"
HELP = "run sweeps (axes x profile) and draw the charts"


def add_arguments(p) -> None:
    p.add_argument("axes", nargs="*", help="axes to run (default: all in the profile)")
    p.add_argument("--profile", default="quick",
                   help=", ".join(profiles.profile_names()) + " (profiles/*.yaml)")
    p.add_argument("--resume", metavar="RUN_ID", help="continue an interrupted run")
    p.add_argument("--producer", help="override the profile's producer client(s)")
    p.add_argument("--consumer", help="override the profile's consumer client(s)")
    p.add_argument("--broker-url", action="append", default=[], metavar="URLS",
                   help="measure brokers the harness did not start (see bench run --help); "
                   "points that need another broker configuration are skipped")
    add_login_options(p)
    add_admin_options(p)
    add_live_options(p)


def run(args) -> int:
    from burstbench import sweep

    with live_started(args):
        return sweep.main(args)
