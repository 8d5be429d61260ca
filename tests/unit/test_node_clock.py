"""The Node and browser clients' epoch clock: a monotonic clock plus one offset taken on
Date.now() millisecond edges (clients/node/common.mjs epochOffset; page.js has the same
code). Run against fake clocks, so the fault is placed exactly: the process is descheduled
between seeing an edge and reading the monotonic clock."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from conftest import ROOT

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node not installed")

# t is true time in ns; every clock read costs 100 ns; the monotonic clock is t + 7e12, so
# the true offset (wall - monotonic) is -7e12 ns. PAUSE_AT names the monotonic reads that
# are preceded by a 4.4 ms pause (the first edge's, or all of them).
SCRIPT = r"""
// (common.mjs sends console.log to stderr: stdout is the event stream)
import { epochOffset } from '%s';
const [edges, pauseAll] = [Number(process.argv[1]), process.argv[2] === 'all'];
let t = 1_795_476_606_316_000_123n, monoReads = 0;
const wallMs = () => { t += 100n; return Number(t / 1000000n); };
const monoNs = () => {
  if (pauseAll || monoReads++ === 0) t += 4_400_000n;
  t += 100n;
  return t + 7_000_000_000_000n;
};
const off = epochOffset(wallMs, monoNs, edges);
process.stdout.write(JSON.stringify({ error_ns: String(off + 7_000_000_000_000n) }));
"""


def _error_ns(edges: int, pause: str) -> int:
    script = SCRIPT % (ROOT / "clients/node/common.mjs").as_uri()
    out = subprocess.run([NODE, "--input-type=module", "-e", script, str(edges), pause],
                         capture_output=True, text=True, timeout=30, check=True).stdout
    return int(json.loads(out)["error_ns"])


def test_one_pause_after_an_edge_does_not_shift_the_clock():
    # one edge alone takes the pause into the offset: every stamp 4.4 ms early
    assert _error_ns(1, "first") < -4_000_000
    # the largest of five edges is off by at most the cost of two clock reads
    assert -1_000 <= _error_ns(5, "first") <= 0


def test_when_every_edge_is_paused_the_error_stays_one_sided():
    # no estimate can be late: every error only lowers it, which is why the largest is kept
    assert -4_500_000 <= _error_ns(5, "all") < -4_000_000
