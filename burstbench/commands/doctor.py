"""``./bench doctor``: which features of every client work on this machine."""

from __future__ import annotations

from burstbench import clients
from burstbench.commands.args import integer

NAME = "doctor"
WRITES_RUNS = False
HELP = ("which features of every client (each transport: plain, "
        "TLS, credentials) work on this machine, and what is missing; exit 1 "
        "if one does not")


def add_arguments(p) -> None:
    p.add_argument("--clients", metavar="LIST", help="comma-separated client specs (default: "
                   f"every registered client and transport). Known: {clients.help_text()}")
    p.add_argument("--count", type=integer(1), default=10, help="messages per round trip")
    p.add_argument("--jobs", type=integer(1), metavar="N", help="checks at a time (default: one "
                   "per core, at most 4)")


def run(args) -> int:
    from burstbench import doctor

    return doctor.main(args)
