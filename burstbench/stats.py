"""The harness's statistics, one module for every command: a figure's median with its spread
over repetitions, a distribution-free interval of a median, ratios taken round by round, the
rule a target is judged by, and whether two spreads overlap.

A figure is reported as its median with the min and max of the repetitions (bursts, windows,
rounds) it came from; ``./bench run`` and the sweeps (``measure``), ``./bench perf``,
``./bench compare`` and the figures the docs quote read them from here.
"""

from __future__ import annotations

import math
import statistics

MIN_ROUNDS = 5  # fewer repetitions than this judge no target
MIN_CONFIDENCE = 0.9  # an interval below it (fewer than 5 values) settles nothing


def spread(values: list[float]) -> dict:
    """Median, min, max and count of the repetitions' figures (NaN and None left out; NaN
    figures when none is left)."""
    vals = [v for v in values if v is not None and not math.isnan(v)]
    if not vals:
        return {"median": math.nan, "min": math.nan, "max": math.nan, "n": 0}
    return {"median": statistics.median(vals), "min": min(vals), "max": max(vals), "n": len(vals)}


def overlap(a: dict, b: dict) -> bool:
    """Whether two spreads' min-max ranges overlap: if they do, the difference between their
    medians is within the repetitions' own noise."""
    return not (b["max"] < a["min"] or b["min"] > a["max"])


def median_ci(vals: list[float], confidence: float = 0.95) -> dict:
    """A distribution-free confidence interval for the median of ``vals``: the k-th smallest
    and k-th largest value, k the largest for which a Binomial(n, 1/2) falls below k with
    probability at most (1 - confidence) / 2; ``confidence`` in the result is the interval's
    own, which is at least the one asked for, or the most n values can give (n = 5: min and
    max, 94%; n = 9: the 2nd smallest and 2nd largest, 96%)."""
    v = sorted(vals)
    n = len(v)
    tail = (1 - confidence) / 2
    k, below = 1, 0.5**n  # P(X <= k - 1) for k = 1
    while k < n // 2:
        nxt = below + math.comb(n, k) * 0.5**n  # P(X <= k)
        if nxt > tail:
            break
        k, below = k + 1, nxt
    return {"lo": v[k - 1], "hi": v[n - k], "confidence": 1 - 2 * below}


def paired_ratios(a: list[tuple], b: list[tuple], idx: int) -> dict:
    """a / b round by round (both measured in the same round, next to each other): the
    median of those ratios with their min and max, and the median's confidence interval."""
    ratios = [x[idx] / y[idx] for x, y in zip(a, b, strict=True)]
    return {**spread(ratios), "ci": median_ci(ratios)}


def verdict(ratios: dict, target: float) -> str:
    """A target judged once on one run's rounds: 'holds' when every round's ratio is at or
    above it, 'misses' when every round's is below, 'within noise' when the rounds straddle
    it; 'not judged' with fewer than MIN_ROUNDS rounds."""
    if ratios.get("n", MIN_ROUNDS) < MIN_ROUNDS:
        return "not judged"
    if ratios["min"] >= target:
        return "holds"
    if ratios["max"] < target:
        return "misses"
    return "within noise"


def median_abs_log_ratio(pairs: list[tuple[float, float]]) -> float | None:
    """How far two runs lie apart over their common points: the median of |ln(b / a)| over
    the (a, b) pairs with both figures positive (0.10 is about 10% either way), or None."""
    logs = [abs(math.log(b / a)) for a, b in pairs if a and b and a > 0 and b > 0]
    return statistics.median(logs) if logs else None
