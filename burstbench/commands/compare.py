"""``./bench compare``: per-point ratios of two runs."""

from __future__ import annotations

NAME = "compare"
HELP = "per-point ratios of two runs; exit 1 on a regression"


def add_arguments(p) -> None:
    p.add_argument("run_a", help="baseline run id, 'latest' or a path")
    p.add_argument("run_b", help="run to judge")
    p.add_argument("--calibrated", action="store_true",
                   help="divide each run's receive figures by its own calibration reference "
                   "(the stock Java pair, measured at the start of a sweep or with --calibrate)")
    p.add_argument("--threshold", type=float, default=10.0,
                   help="percent drop (beyond the measured spread) that counts as a regression")


def run(args) -> int:
    from burstbench import compare
    return compare.main(args)
