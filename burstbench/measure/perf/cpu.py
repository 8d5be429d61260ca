"""A measured process's CPU a message, from the harness's sampler (infra/sampling.py), and
pinning its threads to CPUs."""

from __future__ import annotations

import math
import os
import shutil

from burstbench.infra.sampling import CpuSampler, process_cpu_clock  # noqa: F401

TASKSET = shutil.which("taskset")  # util-linux: Debian's essential packages


def cpu_us_per_msg(sampler: CpuSampler, count: int, first: int, last: int) -> float:
    """The consumer's CPU microseconds per message between two of its arrivals, ``count``
    messages apart counting both."""
    return sampler.cpu_between(first, last) / 1000 / max(1, count - 1)


def faults_per_msg(sampler: CpuSampler, count: int, first: int, last: int) -> float:
    """The consumer's minor page faults per message, as cpu_us_per_msg."""
    return sampler.faults_between(first, last) / max(1, count - 1)


def pin_threads(pids: list[int], cpus: set[int]) -> None:
    """Every thread of these processes onto ``cpus``. A thread starts with its creator's CPUs,
    so once every thread is there the ones started later are too; the threads are listed again
    until a pass finds no new one (one could have been started by a thread not yet moved)."""
    done: set[int] = set()
    while True:
        new = []
        for pid in pids:
            try:
                new += [int(t) for t in os.listdir(f"/proc/{pid}/task") if int(t) not in done]
            except OSError:
                continue  # it ended
        if not new:
            return
        for tid in new:
            try:
                os.sched_setaffinity(tid, cpus)
            except OSError:
                pass  # it ended meanwhile
            done.add(tid)


def cpu_apart(sampler: CpuSampler, first: int, last: int, n: float) -> tuple[float, float]:
    """CPU µs per message over ``n`` messages from first to last, a JVM's compiler threads
    left out, and the share of the CPU they took. What compiling is left in a window is a
    one-time cost, and the loop and the client compile different code at different times
    (their share is kept, and printed)."""
    cpu, jit = sampler.cpu_between(first, last), sampler.jit_between(first, last)
    return (cpu - jit) / 1000 / n, (jit / cpu if cpu > 0 else math.nan)
