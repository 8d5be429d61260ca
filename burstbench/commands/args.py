"""Argument types every command shares: one clear line for a bad value (argparse's
ArgumentTypeError, which the parser reports and exits 2 on)."""

from __future__ import annotations

import argparse
import math
import sys


def integer(minimum: int):
    def parse(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if v < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}: {v}")
        return v

    return parse


def number(minimum: float, below: float | None = None):
    def parse(text):
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if v < minimum or math.isnan(v) or (below is not None and v >= below):
            upper = "" if below is None else f" and < {below:g}"
            raise argparse.ArgumentTypeError(f"must be >= {minimum:g}{upper}: {text}")
        return v

    return parse


class Renamed(argparse._StoreAction):
    """An option whose first spelling is its name; the others still work for one release, with
    a line on stderr (``--warmup`` meant seconds in run, a share in perf, requests in reqreply)."""

    def __call__(self, parser, namespace, values, option_string=None):
        if option_string and option_string != self.option_strings[0]:
            print(f"burstbench: {option_string} is now {self.option_strings[0]} here; the old "
                  "spelling goes in the next release", file=sys.stderr)
        setattr(namespace, self.dest, values)


def rate(text: str) -> float:
    from burstbench.measure.sustained import parse_rate

    try:
        return parse_rate(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a rate (msg/s >= 0, or max): {text!r}") from None


def seconds(text: str) -> float:
    from burstbench.measure.sustained import parse_seconds

    try:
        v = parse_seconds(text)
    except ValueError:
        v = math.nan
    if math.isnan(v) or v < 0:
        raise argparse.ArgumentTypeError(f"not a duration (e.g. 60s, 2m, 500ms): {text!r}")
    return v
