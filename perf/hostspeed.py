#!/usr/bin/env python3
"""How fast this machine runs the same work from one moment to the next.

Times one fixed piece of CPU work (a loop of integer arithmetic, about a millisecond) over and
over on each CPU named, pinned there, and prints the median time per second of wall clock, one
column per CPU. On a quiet dedicated machine the columns are flat; on a shared host they show
the host's own load: on the bench's VM they flip between about 740 and 1,300 µs within seconds,
each virtual CPU on its own, which is why `./bench perf clients` pairs every client sample
with a loop sample taken beside it and still needs many rounds (28955a4:docs/perf.md).

usage: perf/hostspeed.py [SECONDS] [CPU,CPU...]   (default: 20 s, every CPU)
"""

from __future__ import annotations

import multiprocessing as mp
import os
import statistics
import sys
import time


def work() -> int:
    s = 0
    for i in range(20000):
        s += i * i
    return s


def probe(cpu: int, seconds: float, out) -> None:
    os.sched_setaffinity(0, {cpu})
    per_second: list[float] = []
    t_end = time.monotonic() + seconds
    while time.monotonic() < t_end:
        window_end = time.monotonic() + 1.0
        took = []
        while time.monotonic() < window_end:
            t = time.perf_counter_ns()
            work()
            took.append((time.perf_counter_ns() - t) / 1000)
        per_second.append(statistics.median(took))
    out.put((cpu, per_second))


def main(argv: list[str]) -> int:
    try:
        seconds = float(argv[0]) if argv else 20.0
        cpus = ([int(c) for c in argv[1].split(",")] if len(argv) > 1
                else sorted(os.sched_getaffinity(0)))
        if seconds <= 0 or not cpus:
            raise ValueError
    except ValueError:
        print("usage: perf/hostspeed.py [SECONDS > 0] [CPU,CPU...]", file=sys.stderr)
        return 2
    out: mp.Queue = mp.Queue()
    procs = [mp.Process(target=probe, args=(c, seconds, out)) for c in cpus]
    for p in procs:
        p.start()
    got = dict(out.get() for _ in procs)
    for p in procs:
        p.join()
    print("second  " + "  ".join(f"cpu{c} µs" for c in cpus))
    for i in range(min(len(v) for v in got.values())):
        print(f"{i:>6}  " + "  ".join(f"{got[c][i]:>7.0f}" for c in cpus))
    for c in cpus:
        v = got[c]
        print(f"cpu{c}: median {statistics.median(v):.0f} µs, min {min(v):.0f}, max {max(v):.0f} "
              f"({max(v) / min(v):.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
