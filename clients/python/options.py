"""The contract's options for the stomp.py programs: argparse built from this client's rows of
clients/options.tsv (the harness renders it from clients/options.yaml), each value checked
against its row, then what this client cannot do (clients/contract.md, "Arguments")."""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from pathlib import Path
from urllib.parse import urlsplit

import common
import stomp


class ArgumentParser(argparse.ArgumentParser):
    """argparse that reports bad arguments as one ``error:`` line and exit 2."""

    def error(self, message):
        sys.stderr.write(f"error: {message}\n")
        sys.exit(2)


def version_line() -> str:
    return json.dumps(
        {
            "client": common.CLIENT,
            "library": f"stomp.py {stomp.__version__}",
            "runtime": f"Python {sys.version.split()[0]}",
        }
    )


class VersionAction(argparse.Action):
    def __init__(self, option_strings, dest, **kw):
        super().__init__(option_strings, dest, nargs=0, **kw)

    def __call__(self, parser, namespace, values, option_string=None):
        print(version_line())
        sys.exit(0)


TABLE = Path(__file__).resolve().parent.parent / "options.tsv"


def table(role: str, client: str | None = None) -> list[dict[str, str]]:
    """clients/options.tsv's rows for ``client``'s ``role``: the contract's options with this
    client's defaults and bounds (generated from clients/options.yaml)."""
    client = client or common.CLIENT  # (tuned.py names its entry before the programs parse)
    with open(TABLE) as f:
        rows = [line.rstrip("\n").split("\t") for line in f if not line.startswith("#")]
    return [row for row in (dict(zip(rows[0], r)) for r in rows[1:])
            if row["client"] == client and row["role"] == role]


def checked(row: dict[str, str]):
    """An argparse type for ``row``: the value converted and checked against its bounds,
    pattern and choices."""
    kind, pattern, choices = row["type"], row["pattern"], row["choices"].split(",")
    lo, hi, above = (float(row[k]) if row[k] else None for k in ("min", "max", "above"))

    def check(text):
        if kind in ("int", "number"):
            try:
                x = int(text) if kind == "int" else float(text)
            except ValueError:
                what = "an integer" if kind == "int" else "a number"
                raise argparse.ArgumentTypeError(f"not {what}: {text!r}") from None
            if (not math.isfinite(x) or (lo is not None and x < lo) or (hi is not None and x > hi)
                    or (above is not None and x <= above)):
                span = (f"> {row['above']} and <= {row['max']}" if row["above"]
                        else f"{row['min']}..{row['max']}")
                raise argparse.ArgumentTypeError(f"must be {span}: {text!r}")
            return x
        items = text.split(",") if kind in ("queues", "urls") else [text]
        if kind in ("url", "urls") and not all(re.fullmatch(pattern, i) for i in items):
            raise argparse.ArgumentTypeError(f"not an address in {', '.join(choices)}: {text!r}")
        if kind == "string" and row["choices"] and text not in choices:
            raise argparse.ArgumentTypeError(f"not one of {', '.join(choices)}: {text!r}")
        if pattern and not all(re.fullmatch(pattern, i) for i in items):
            raise argparse.ArgumentTypeError(f"does not match {pattern}: {text!r}")
        return items if kind == "queues" else text

    return check


def parser(role: str) -> ArgumentParser:
    """argparse over the contract's options for ``role``, as clients/options.tsv gives them."""
    p = ArgumentParser(prog=f"{role}.py",
                       description=f"burstbench {role} (stomp.py); see clients/contract.md")
    for row in table(role):
        name = row["option"]
        if name == "help":
            continue  # argparse's own
        if name == "version":
            p.add_argument("--version", action=VersionAction, help=row["help"])
        elif row["type"] == "flag":
            p.add_argument(f"--{name}", action="store_true", help=row["help"])
        else:
            kind = checked(row)
            p.add_argument(f"--{name}", type=kind, required=row["required"] == "1",
                           default=kind(row["default"]) if row["default"] else None,
                           help=row["help"])
    return p


def parse(role: str, argv=None) -> argparse.Namespace:
    p = parser(role)
    args = p.parse_args(argv)
    if args.user is not None and args.password is None:  # off the process list
        args.password = os.environ.get("BB_PASSWORD")
    if (args.cert is None) != (args.key is None):
        p.error("--cert and --key must be given together")
    for name in ("ca", "cert", "key"):
        f = getattr(args, name)
        if f is not None and not os.access(f, os.R_OK):
            p.error(f"--{name}: cannot read {f}")
    if role == "consumer" and args.ack == "dups-ok":
        p.error("--ack dups-ok is not supported by STOMP (use auto, client or client-individual)")
    u = urlsplit(args.url)  # of a form the table allows
    args.host, args.port, args.ssl = u.hostname, u.port, u.scheme == "stomp+ssl"
    args.hosts = [(args.host, args.port)]
    if args.failover is not None:
        for url in args.failover.split(","):
            f = urlsplit(url)
            if f.scheme != u.scheme:
                p.error(f"--failover addresses must be {u.scheme}://HOST:PORT: {url!r}")
            args.hosts.append((f.hostname, f.port))
        if args.tx_batch:
            p.error("--failover with --tx-batch is not supported by this client")
    if args.connections > 1:
        if args.records is not None and "{id}" not in args.records:
            p.error("--connections > 1 needs a --records path with {id} (one file per slot): "
                    f"{args.records!r}")
        if args.failover is not None:
            p.error("--failover with --connections > 1 is not supported by this client")
    return args
