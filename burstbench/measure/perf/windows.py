"""The timed window of a round: which messages are warm-up, and the send and receive rates from the
records' and the broker's timestamps."""

from __future__ import annotations

import bisect
import math
from typing import NamedTuple

from burstbench import clients


class Sample(NamedTuple):
    """One measurement of a loop or a client: the producer's burst, then the consumer's drain."""

    send: float          # msg/s, timed after the warm-up, to the broker's confirmation
    recv: float          # msg/s, timed after the warm-up
    send_like_cli: float  # msg/s of all messages, to the last send call (as ActiveMQ's CLI)
    cpu_us: float        # the consumer's CPU µs per message after the warm-up
    recv_whole: float    # msg/s of the whole drain, first to last arrival
    faults: float = math.nan  # the consumer's minor page faults per message after the warm-up
    jit: float = math.nan     # the share of the consumer's CPU after the warm-up its JIT took


def rate_of(n: int, first: int, last: int) -> float:
    return n / ((last - first) / 1e9) if last > first else float("nan")


def skip_of(count: int, warmup: float) -> int:
    """The messages of a process's warm-up: the first ``warmup`` share of ``count``, leaving
    at least two timed (the receive window runs from one arrival to another)."""
    return max(0, min(count - 2, int(count * warmup)))


def send_timed_from_mark(r: clients.Resolved) -> bool:
    """Whether a send can be timed from the hand-over of message SKIP: Perl's, Python's and
    Java's send calls write to the socket before they return; stompjs's publish() only queues
    (its sends are timed whole, from the first message)."""
    return r.client.language != "node"


def send_rate(count: int, skip: int, first: int, mark: int, confirmed: int,
              from_mark: bool) -> float:
    """Messages SKIP.. handed over from ``mark`` until the broker confirmed the last one (or,
    when the send cannot be timed from a mark, all of them from ``first``)."""
    if not from_mark:
        return rate_of(count, first, confirmed)
    return rate_of(count - skip, mark, confirmed)


def recv_rate(count: int, skip: int, mark: int, last: int) -> float:
    """Arrivals after message SKIP's, from its arrival (``mark``) to the last one's."""
    return rate_of(count - skip - 1, mark, last)


class OneCpu(NamedTuple):
    """A loop's or a client's side of a one-CPU round: its producer, then its consumer, each
    running at the same time as its counterpart's, on the same CPU."""

    send_cpu_us: float   # the producer's CPU µs per timed message, its JIT threads' left out
    recv_cpu_us: float   # the consumer's, in the round's common window (nan: it had none)
    send: float          # msg/s while sharing the CPU
    recv: float
    recv_faults: float   # the consumer's minor page faults per message of the common window
    send_jit: float = math.nan  # the share of the producer's timed CPU its JIT compiler took
    recv_jit: float = math.nan  # the consumer's, in the common window
    recv_cpu_us_own: float = math.nan  # the consumer's over its own timed messages
    recv_common: float = math.nan  # the common window's messages / the timed messages
    recv_held_ms: float = math.nan  # how long the broker held the queues for both consumers
    recv_sys_us: float = math.nan  # the consumer's system CPU µs per message, common window
    recv_reads: float = math.nan   # its read system calls per message, common window
    send_cpu_us_common: float = math.nan  # the producer's, in the send's common window
    send_common: float = math.nan  # that window's messages / the timed messages (nan: none)


# A receive round's common window must hold at least this share of each side's timed messages
MIN_COMMON = 0.25


def loop_arrived(rcv: dict, t: int) -> float:
    """How many messages a receive loop had by time ``t`` (epoch ns), from its last line:
    ``at_ns`` holds when messages 0, EVERY, 2 EVERY... arrived, ``last_ns`` the last one's;
    linear in between. A send loop's line reads the same way (``at_ns``: when they were handed
    to send; ``last_ns``: when the broker confirmed the last)."""
    every = int(rcv["every"])
    pts = [(int(x), k * every + 1) for k, x in enumerate(rcv["at_ns"])]
    pts.append((int(rcv["last_ns"]), int(rcv["count"])))
    if t < pts[0][0]:
        return 0.0
    i = bisect.bisect_right(pts, (t, math.inf))
    if i == len(pts):
        return float(pts[-1][1])
    (t0, n0), (t1, n1) = pts[i - 1], pts[i]
    return n0 + (n1 - n0) * ((t - t0) / (t1 - t0) if t1 > t0 else 0.0)


def common_window(rcv: dict, arrivals: list[int], count: int,
                  skip: int) -> tuple[int, int, float, int] | None:
    """The span in which a receive loop and a client's consumer, draining their backlogs on
    one CPU, both ran warm: from the later of their messages SKIP to the earlier of their last
    ones. (from, to, the loop's messages in it, the client's), or None when it holds less than
    MIN_COMMON of either side's timed messages. A send's is the same span of a send loop's line
    and the client's send calls (send_common_window).

    The two seldom finish together, and the one left alone costs more a message: timed over
    its own messages, the later one was alone for 9-114% of its window in 7 JMS rounds
    (always the client), and loop / client fell from 0.90-0.97 at 9-20% alone to 0.82-0.85.
    Likely, alone it outruns the broker on the other CPU and waits for each next batch, each
    wait a wake-up (not proven; 28955a4:docs/perf.md)."""
    w = common_span([(int(rcv["mark_ns"]), int(rcv["last_ns"])), (arrivals[skip], arrivals[-1])],
                     [lambda t: loop_arrived(rcv, t), lambda t: bisect.bisect_right(arrivals, t)],
                     count, skip)
    return None if w is None else (w[0], w[1], *w[2])


def send_common_window(r: clients.Resolved, sent: dict, calls: list[int], count: int,
                       skip: int) -> tuple[int, int, float, int] | None:
    """The span in which a send loop's producer and the client's, on one CPU, both sent warm:
    from the later of their messages SKIP to the earlier of their ends (the loop's: the broker's
    confirmation of its last message; the client's: its last send call, as
    _client_send_cpu_window takes it). (from, to, the loop's messages in it, the client's), or
    None when a send is timed whole (stompjs), when the loop's line has no ``at_ns`` or when
    the span holds less than MIN_COMMON of either side's timed messages.

    Timed over its own messages, each producer's window also holds a part the other did not
    share: the client's producer started its timed messages 0.07-1.09 s after the loop's and
    ended 0.18-0.85 s later in 9 Akka rounds at 6 B (windows of 1.8-4.2 s), and the host's speed
    moves within seconds (28955a4:docs/perf.md)."""
    if not send_timed_from_mark(r) or "at_ns" not in sent:
        return None
    return common_window(sent, calls, count, skip)


def common_span(spans: list[tuple[int, int]], arrived: list, count: int,
                 skip: int) -> tuple[int, int, list[float]] | None:
    """From the latest of the consumers' warm starts to the earliest of their last messages
    (``spans``: each one's (message SKIP, last message), epoch ns), and each one's messages in
    that span (``arrived``: each one's count of messages by a time); None when the span is
    empty or holds less than MIN_COMMON of some consumer's timed messages."""
    a = max(x[0] for x in spans)
    b = min(x[1] for x in spans)
    if b <= a:
        return None
    n = [got(b) - got(a) for got in arrived]
    if min(n) < MIN_COMMON * (count - skip):
        return None
    return a, b, n
