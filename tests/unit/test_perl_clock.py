"""The Perl consumer's receive timestamp (clients/perl/consumer.pl) and its loop's
(perf/loops/perl-recv.pl): Time::HiRes's gettimeofday called for its one value, the seconds as a
double, rounded back to the microsecond it read. The expression is read from both sources, so
these tests check the code the bench runs."""

from __future__ import annotations

import re
import subprocess

from conftest import ROOT


def _expression(path: str, var: str) -> str:
    text = (ROOT / path).read_text()
    found = re.findall(rf"^\s*\${var} = (int\(gettimeofday\(\)[^;]*);", text, re.MULTILINE)
    assert len(found) == 1, (path, found)
    return found[0]


def test_the_consumer_and_its_loop_read_the_clock_alike():
    assert _expression("clients/perl/consumer.pl", "now") == \
        _expression("perf/loops/perl-recv.pl", "t1")


# every microsecond of a second in 2026, of the last second before 2^31 and of the last before
# 2^32 (2106; past it a double's step is 0.95 µs, and about a quarter of a second's microseconds
# come back one off): the double gettimeofday returns (seconds + microseconds / 1e6, or * 1e-6:
# either way it may be computed) rounds back to exactly seconds * 1e9 + microseconds * 1000
EXACT = r"""
my $bad = 0;
our ($s, $us, $div);    # (a foreach over `my` ones would hide them from the sub)
sub gettimeofday { $div ? $s + $us / 1e6 : $s + $us * 1e-6 }
for $s (1795832951, 2147483647, 4294967295) {
    for $div (0, 1) {
        for $us (0 .. 999999) {
            my $got = %s;
            $bad++ if $got != $s * 1000000000 + $us * 1000;
        }
    }
}
print "$bad\n";
"""


def test_the_rounding_gives_back_every_microsecond_exactly():
    expr = _expression("clients/perl/consumer.pl", "now")
    out = subprocess.run(["perl", "-e", EXACT % expr], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    assert out.strip() == "0"


# the real clock: each scalar reading, rounded, lies between the list readings just before and
# just after it, and is a whole microsecond
REAL = r"""
use Time::HiRes qw(gettimeofday);
my ($bad, $n) = (0, 200000);
for (1 .. $n) {
    my ($s0, $u0) = gettimeofday();
    my $got = %s;
    my ($s1, $u1) = gettimeofday();
    my ($lo, $hi) = ($s0 * 1000000000 + $u0 * 1000, $s1 * 1000000000 + $u1 * 1000);
    $bad++ unless $lo <= $got && $got <= $hi && $got %% 1000 == 0;
}
print "$bad $n\n";
"""


def test_the_real_clock_rounds_to_the_microsecond_it_read():
    expr = _expression("clients/perl/consumer.pl", "now")
    out = subprocess.run(["perl", "-e", REAL % expr], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    assert out.split() == ["0", "200000"]
