"""./bench perf listener: the stock consumers' own listener code, run against their loops'
per-message work without a broker. Correctness only: the figures are the benchmark's."""

import subprocess
import sys

import pytest

from burstbench import paths
from burstbench.measure import listener

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("name", ["net-stomp", "openwire-jms"])
@pytest.mark.parametrize("size", [6, 1024])
def test_the_consumers_own_listener_records_every_message_it_is_handed(name, size):
    r = listener.measure(name, size, rounds=4, messages=2000)
    assert r["size"] == size and r["messages"] == 2000 and r["rounds"] == 3
    # the consumer's code ran: it recorded what it was handed (Perl: the last round's lines;
    # Java: every bench message of every round)
    if name == "net-stomp":
        assert r["records"] == 2000
    else:
        assert r["received"] == 4 * 2000
    for key in ("loop_ns", "consumer_ns"):
        med, lo, hi = r[key]
        assert 0 < lo <= med <= hi, (key, r[key])
    assert r["harness_ns"][1] <= r["harness_ns"][0] <= r["harness_ns"][2]


def test_the_perl_benchmark_runs_the_consumers_own_lines(tmp_path):
    # a copy of the benchmark beside a consumer.pl without its receive loop: it stops, and says
    # why
    micro = tmp_path / "perf" / "micro"
    perl = tmp_path / "clients" / "perl"
    micro.mkdir(parents=True)
    perl.mkdir(parents=True)
    (micro / "listener-cost.pl").write_text((paths.ROOT / "perf" / "micro" /
                                             "listener-cost.pl").read_text())
    (perl / "consumer.pl").write_text("sub other { }\n")
    p = subprocess.run(["perl", str(micro / "listener-cost.pl"), "6", "10", "4"],
                       check=False, capture_output=True, text=True, timeout=60)
    assert p.returncode != 0
    assert "no receive loop" in p.stderr


def test_a_client_without_a_listener_benchmark_is_refused_in_one_line():
    p = subprocess.run([sys.executable, "-m", "burstbench.cli", "perf", "listener", "--clients",
                        "stomp-py"], check=False, capture_output=True, text=True, timeout=60,
                       cwd=paths.ROOT)
    assert p.returncode == 2
    assert p.stderr.strip().splitlines() == [
        ("bench perf: error: no listener benchmark for stomp-py (there is one for openwire-jms, "
         "net-stomp)")]
