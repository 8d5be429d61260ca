"""The shared statistics (burstbench/stats.py) on figures made up here."""

import math

from burstbench import stats


def test_a_spread_leaves_out_missing_figures_and_counts_the_rest():
    assert stats.spread([3.0, None, math.nan, 1.0, 2.0]) == {
        "median": 2.0, "min": 1.0, "max": 3.0, "n": 3}
    empty = stats.spread([math.nan])
    assert empty["n"] == 0 and math.isnan(empty["median"])


def test_spreads_overlap_when_their_ranges_share_a_value():
    a = {"min": 10.0, "max": 12.0}
    assert stats.overlap(a, {"min": 12.0, "max": 15.0})
    assert stats.overlap(a, {"min": 8.0, "max": 13.0})
    assert not stats.overlap(a, {"min": 12.5, "max": 15.0})
    assert not stats.overlap({"min": 12.5, "max": 15.0}, a)


def test_paired_ratios_take_each_round_against_its_own_partner():
    r = stats.paired_ratios([(2.0,), (3.0,), (9.0,)], [(1.0,), (3.0,), (10.0,)], 0)
    assert (r["median"], r["min"], r["max"], r["n"]) == (1.0, 0.9, 2.0, 3)


def test_a_target_is_judged_on_every_round_and_not_on_too_few():
    def judged(*ratios):
        return stats.verdict(stats.spread(list(ratios)), 0.95)

    assert judged(0.95, 0.97, 1.0, 0.99, 0.96) == "holds"
    assert judged(0.90, 0.94, 0.93, 0.92, 0.949) == "misses"
    assert judged(0.90, 0.97, 1.0, 0.99, 0.96) == "within noise"
    assert judged(0.99, 0.98, 1.0) == "not judged"
