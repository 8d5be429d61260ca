"""How many messages a round sends, and how much queue memory the broker needs for them."""

from __future__ import annotations

from burstbench import clients
from burstbench.measure.perf.windows import (
    skip_of,
)

# The perf broker holds each sample's burst in one queue before the drain: its memory limit,
# and what a message counts there beside its body (ActiveMQ's minimum message size, 1,024 B,
# and the six bench properties marshalled). A Java loop's 400,000 1 KiB messages stopped near
# 250,000 at 512 MB, held by producer flow control. A one-CPU round fills two queues at once,
# a JVM's with up to 800,000 messages at 6 B each (and 700,000 at 1 KiB: one_cpu_counts): the
# broker's heap and its memory limit hold two full ones (broker_memory).
_QUEUE_MEMORY = 1 << 30           # a queue's, unless a run needs more


QUEUE_MEMORY_MOST = 2 << 30      # and at most (the broker's heap is then 8 GB)


BROKER_BYTES_PER_MSG = 1200


def broker_memory(most_bytes: int) -> tuple[int, str]:
    """(a queue's memory limit in bytes, the broker's heap) for a run whose fullest queue holds
    ``most_bytes``: 1 GiB and a 6 GB heap as before when that fits, else the bytes rounded up
    to 256 MiB, the heap two such queues and 4 GB more."""
    q = max(_QUEUE_MEMORY, -(-most_bytes // (256 << 20)) * (256 << 20))
    return q, f"{(2 * q >> 30) + 4}g" if q % (1 << 30) == 0 else f"{(2 * q >> 20) + 4096}m"


def messages_for(r: clients.Resolved, size: int, counts: dict[int, int],
           counts_jvm: dict[int, int] | None) -> int:
    """Messages per sample for this client at this size (a JVM's own counts when given)."""
    jvm = r.client.jvm
    return (counts_jvm if jvm and counts_jvm else counts).get(size, 50000)


def one_cpu_count(r: clients.Resolved, size: int, count: int, skip: int,
                  counts_jvm_one_cpu: dict[int, int] | None) -> tuple[int, int]:
    """(messages, warm-up) of a one-CPU round. A JVM client's run longer, the extra all
    warm-up, so the timed messages stay ``count - skip``: two JVMs and their compiler threads
    share one CPU there, and a JVM that compiled through the first half of its 400,000
    messages on two CPUs still compiled in its timed half on one (its JIT threads took
    0.6-0.8 s of the 2.2 s CPU of a timed window in 3 rounds of 5; 28955a4:docs/perf.md)."""
    if not r.client.jvm or not counts_jvm_one_cpu:
        return count, skip
    total = max(count, counts_jvm_one_cpu.get(size, count))
    return total, total - (count - skip)


def one_cpu_counts(one: int, counts_jvm: dict[int, int], warmup: float) -> dict[int, int]:
    """A JVM's one-CPU messages at each size, from ``one`` at 6 B: the same warm-up at every
    size (``one`` less its timed messages at 6 B), then that size's timed messages. Halving
    the whole at 1 KiB, as the two-CPU counts are, left 300,000 of warm-up where 6 B has
    600,000: the Akka bridge's compiler then took 6-39% of one side's CPU in 17 of 20 windows
    at 1 KiB (R57), near 1% at 6 B (28955a4:docs/perf.md)."""
    def timed(count: int) -> int:
        return count - skip_of(count, warmup)
    rest = max(0, one - timed(counts_jvm.get(6, one)))
    return {size: max(count, rest + timed(count)) for size, count in counts_jvm.items()}
