"""``./bench perf clients``: each client against a minimal loop of the same library.

Both are measured the same way on the same broker, alternating within each round so that
the machine's noise falls on both (loop then client in even rounds, client then loop in odd
ones): the producer sends COUNT messages into an empty queue (send rate = the messages from
SKIP on / (broker's confirmation of the last message − hand-over of message SKIP); the loops
time their sends the same way), then the consumer drains that backlog (receive rate = the
arrivals after message SKIP's / (last arrival − message SKIP's)). Within each process the
first share of its messages (``--warmup-share``, half by default) is its warm-up and is not timed:
rates and CPU run from message SKIP (counted from 0) to the last, for loop and client alike,
the same message indices on both sides (a fresh JVM compiles for its first few hundred
thousand messages, and loop and client compile different amounts of code, so a drain timed
from its first message measures the compiler). A stompjs send is timed
whole: its publish() only queues, so when message SKIP was handed over says nothing about when
it left. One warm-up round is discarded; the table shows the median of the measured rounds
with min and max, and the ratio client / loop: the bench's own cost, which must stay within
5% (ratio >= 0.95). A ratio is taken round by round (client / loop measured next to each
other), and the table shows the median of those with their min and max: the machine's slow
drift falls on both sides of each. The target is judged once, by a rule the run prints and
records before it measures (``rule``): a ratio *holds* 0.95 when every measured round's ratio
is at or above it, *misses* it when every round's is below, and is *within noise* when the
rounds straddle it; fewer than 5 rounds are not judged. A run repeated is a run of its own,
reported beside the first, never pooled into it. The median's distribution-free confidence
interval (order statistics of the rounds' ratios) is printed beside as information: the
rounds of one run share one broker, and the spread between runs is wider than it. A stock
client with a tuned entry (``stomp-py-tuned``...) has it measured in the same rounds, and
tuned / stock is printed as the headroom the library leaves.
"""

from __future__ import annotations

import bisect
import json
import math
import os
import re
import shutil
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import NamedTuple

from burstbench import clients, options, paths
from burstbench.infra import brokers
from burstbench.infra.procs import ChildExited, Supervisor
from burstbench.measure import measure, results


class PerfError(RuntimeError):
    pass


_TICK_NS = 1e9 / os.sysconf("SC_CLK_TCK")
_TASKSET = shutil.which("taskset")  # util-linux: Debian's essential packages


def process_cpu_clock(pid: int) -> int | None:
    """The clock id of process ``pid``'s CPU time, all its threads, in ns (Linux's
    clock_getcpuclockid: CPUCLOCK_SCHED of the process, ``~pid << 3 | 2``); None where it
    cannot be read."""
    clock = (~pid << 3) | 2
    try:
        time.clock_gettime_ns(clock)
    except (OSError, OverflowError, AttributeError):
        return None
    return clock


class _ProcFile:
    """A /proc file of one process, opened once and read from its start at each sample (one
    pread, not an open, a read and a close every few ms). The open file stays the process's
    own, whatever its PID is given to later. ``read`` is None once it cannot be read: the
    process is gone (or the file closed)."""

    def __init__(self, path: str):
        self.path, self.fd, self.closed = path, None, False

    def read(self) -> bytes | None:
        if self.closed:
            return None
        try:
            if self.fd is None:
                self.fd = os.open(self.path, os.O_RDONLY)
            return os.pread(self.fd, 4096, 0)
        except OSError:
            return None

    def close(self) -> None:
        self.closed = True
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


class CpuSampler(threading.Thread):
    """The CPU time (user + system, all threads) and the minor page faults of one process,
    read from /proc every ``every`` seconds with the wall clock beside them, so that what it
    spent between two instants (the first and the last message it received) can be told
    afterwards: a figure of the process's own work per message, which the broker's and the
    machine's scheduling move much less than they move its rate. The faults count the fresh
    memory it touched: on this VM each costs 3-6 µs, so a consumer that keeps 1 KiB of every
    message pays about a microsecond a message that its loop, which keeps nothing, does not.
    Beside them: its system CPU time (/proc's stime, in clock ticks), which tells whether a
    gap between two processes is in the kernel or in their own code. With ``reads`` (one more
    file a sample, so only where they are used: the one-CPU receives), its read system calls
    too (/proc/PID/io's syscr; nan until read once), which tell whether two that read the same
    socket traffic read it in the same pieces."""

    def __init__(self, pid: int, every: float = 0.005, reads: bool = False):
        super().__init__(daemon=True, name=f"cpu-{pid}")
        self.every = every
        self.io = f"/proc/{pid}/io" if reads else None    # its path (None: not counted)
        self._stat = _ProcFile(f"/proc/{pid}/stat")
        self._io = _ProcFile(self.io) if self.io else None
        self.last_reads = math.nan
        self.clock = process_cpu_clock(pid)
        self.jit = JitThreads(pid)
        # (epoch ns, CPU ns, minor faults, CPU ns of its JIT compiler threads, system CPU ns,
        # read system calls)
        self.samples: list[tuple[int, float, float, float, float, float]] = []
        self.halt = threading.Event()

    def run(self) -> None:
        try:
            while not self.halt.is_set():
                stat = self._stat.read()
                if stat is None:    # the process is gone
                    return
                try:
                    fields = stat.rsplit(b")", 1)[1].split()
                    # the process's CPU clock counts in ns; /proc's utime + stime in clock
                    # ticks (10 ms here: 1% of a one-second window at each end), its fallback
                    cpu = (float(time.clock_gettime_ns(self.clock)) if self.clock is not None
                           else (int(fields[11]) + int(fields[12])) * _TICK_NS)
                except (OSError, IndexError):
                    return
                # fields[0] is the state (field 3): minflt is field 10, utime and stime 14, 15
                self.samples.append((time.time_ns(), cpu, float(fields[7]), self.jit.cpu_ns(),
                                     int(fields[12]) * _TICK_NS, self._reads()))
                self.halt.wait(self.every)
        finally:
            self._stat.close()
            if self._io is not None:
                self._io.close()

    def cpu_between(self, first_ns: int, last_ns: int) -> float:
        """CPU ns spent from first_ns to last_ns (interpolated between samples); nan when the
        samples do not cover the span. A process that exits within 25 ms of last_ns (a loop
        that disconnects and prints) is taken at its last sample: that can only make it look
        cheaper than it was."""
        return self._between(first_ns, last_ns, 1)

    def _reads(self) -> float:
        """Its read system calls so far; the last count read when /proc/PID/io cannot be read
        (a process that is exiting, whose stat still can), nan before any."""
        data = self._io.read() if self._io is not None else None
        for line in (data or b"").splitlines():
            if line.startswith(b"syscr:"):
                self.last_reads = float(line.split()[1])
                break
        return self.last_reads

    def sys_between(self, first_ns: int, last_ns: int) -> float:
        """System CPU ns from first_ns to last_ns, as cpu_between (counted in clock ticks:
        10 ms here)."""
        return self._between(first_ns, last_ns, 4)

    def reads_between(self, first_ns: int, last_ns: int) -> float:
        """Read system calls from first_ns to last_ns, as cpu_between."""
        return self._between(first_ns, last_ns, 5)

    def faults_between(self, first_ns: int, last_ns: int) -> float:
        """Minor page faults from first_ns to last_ns, as cpu_between."""
        return self._between(first_ns, last_ns, 2)

    def jit_between(self, first_ns: int, last_ns: int) -> float:
        """CPU ns its JIT compiler threads spent from first_ns to last_ns, as cpu_between
        (0 for a process without them)."""
        return self._between(first_ns, last_ns, 3)

    def jit_share(self, first_ns: int, last_ns: int) -> float:
        """The share of the CPU from first_ns to last_ns that its JIT compiler threads spent
        (nan as cpu_between)."""
        cpu = self.cpu_between(first_ns, last_ns)
        return self.jit_between(first_ns, last_ns) / cpu if cpu > 0 else math.nan

    def _between(self, first_ns: int, last_ns: int, k: int) -> float:
        s = self.samples
        if len(s) < 2 or s[0][0] > first_ns or s[-1][0] < last_ns - 25_000_000:
            return math.nan
        return _interp(s, last_ns, k) - _interp(s, first_ns, k)


# HotSpot names its compiler threads so (/proc shows the first 15 characters of a name)
_JIT_THREADS = (b"C1 CompilerThre", b"C2 CompilerThre")


class JitThreads:
    """The CPU time a JVM's JIT compiler threads have spent, in ns, from each one's
    /proc/PID/task/TID/schedstat (the kernel lets no other process read a thread's CPU clock,
    only a whole process's). A fresh JVM compiles for its first few hundred thousand
    messages, longer on a CPU it shares (the one-CPU rounds), so a window that still holds
    compilation measures the compiler, not the code: this tells how much it held. A compiler
    thread that ends keeps the time last read (HotSpot starts and stops them as its queue
    grows and shrinks).

    A new thread has its creator's name until it names itself (HotSpot does so first thing),
    so one that still has it is looked at again, at most ``LOOKS`` samples in all: then it is
    taken as a thread that keeps that name (a runtime's that names none), and not read again."""

    LOOKS = 3

    def __init__(self, pid: int):
        self.pid, self.tasks = pid, f"/proc/{pid}/task"
        self.kinds: dict[int, bool] = {}  # tid: whether it is a compiler thread still running
        self.unnamed: dict[int, int] = {}  # tid: samples it was seen with its creator's name
        self.spent: dict[int, int] = {}   # compiler tid: CPU ns last read

    def cpu_ns(self) -> float:
        try:
            tids = os.listdir(self.tasks)
        except OSError:
            tids = []
        own = None
        for t in tids:
            tid = int(t)
            if tid in self.kinds:
                continue
            try:
                with open(f"{self.tasks}/{t}/comm", "rb") as f:
                    comm = f.read()
            except OSError:
                continue
            if tid != self.pid:
                own = self._own_comm() if own is None else own
                if comm == own:
                    self.unnamed[tid] = self.unnamed.get(tid, 0) + 1
                    if self.unnamed[tid] < self.LOOKS:
                        continue
            self.unnamed.pop(tid, None)
            self.kinds[tid] = comm.startswith(_JIT_THREADS)
        for tid, jit in self.kinds.items():
            if jit:
                try:
                    with open(f"{self.tasks}/{tid}/schedstat", "rb") as f:
                        self.spent[tid] = int(f.read().split()[0])
                except (OSError, IndexError, ValueError):
                    self.kinds[tid] = False  # it ended: its time stays as last read
        return float(sum(self.spent.values()))

    def _own_comm(self) -> bytes:
        try:
            with open(f"/proc/{self.pid}/comm", "rb") as f:
                return f.read()
        except OSError:
            return b""


def _interp(s: list[tuple], t: int, k: int = 1) -> float:
    """Column ``k`` of the samples at time ``t``, linear between the two around it."""
    i = bisect.bisect_left(s, (t, -1.0))
    if i == 0:
        return s[0][k]
    if i == len(s):
        return s[-1][k]
    t0, c0, t1, c1 = s[i - 1][0], s[i - 1][k], s[i][0], s[i][k]
    return c0 + (c1 - c0) * ((t - t0) / (t1 - t0) if t1 > t0 else 0.0)


def _run_to_end(sup: Supervisor, name: str, argv: list[str], timeout: float,
                cpu: list | None = None) -> list[dict]:
    """Run one program to its end; its events. With ``cpu`` (a list), a CpuSampler of the
    process is appended to it."""
    evs, samplers = _run_all(sup, [(name, argv)], timeout, sample=cpu is not None)
    if cpu is not None:
        cpu.append(samplers[name])
    return evs[name]


def _run_all(sup: Supervisor, progs: list[tuple[str, list[str]]], timeout: float,
             cpus: set[int] | None = None, sample: bool = True, on_other=None,
             reads: bool = False) -> tuple[dict[str, list[dict]], dict[str, CpuSampler]]:
    """Start the programs one after the other and wait until all have exited 0: each one's
    events, and (with ``sample``) its CpuSampler, by name (counting its read calls too with
    ``reads``). With ``cpus`` each runs on those CPUs from its start, under ``taskset``, so
    that a runtime that sizes itself by the CPUs it may use sees them (a JVM started on two
    and moved to one kept two collector threads, spinning on one); its threads are pinned once
    more right after the start, in case.
    ``on_other(child, event)`` gets the events of other children meanwhile (the broker's)."""
    kids: dict[str, object] = {}
    samplers: dict[str, CpuSampler] = {}
    evs: dict[str, list[dict]] = {name: [] for name, _ in progs}
    exited: set[str] = set()

    def take(who, ev: dict) -> None:
        name = next((n for n, c in kids.items() if c is who), None)
        if name is None:
            if on_other is not None:
                on_other(who, ev)
            return
        if ev.get("event") == "exit":
            exited.add(name)
        else:
            evs[name].append(ev)

    on = (["taskset", "-c", ",".join(str(c) for c in sorted(cpus))]
          if cpus is not None and _TASKSET else [])
    try:
        for name, argv in progs:
            child = sup.start(name, [*on, *argv], role="perf")
            kids[name] = child
            if cpus is not None:
                pin_threads([child.pid], cpus)
            if sample:
                samplers[name] = CpuSampler(child.pid, reads=reads)
                samplers[name].start()
        try:
            ok = sup.wait_until(lambda: len(exited) == len(kids), timeout, take,
                                watch=list(kids.values()), poll=1.0)
        except ChildExited as e:
            raise PerfError(f"{e.child.name} exited with {e.code}: {e.child.last_error()}") \
                from None
        if not ok:
            where = (f"log: {next(iter(kids.values())).log_path}" if len(kids) == 1
                     else f"logs: {sup.log_dir}")
            raise PerfError(f"{' and '.join(kids)} did not finish within {timeout:.0f} s "
                            f"({where})")
        return evs, samplers
    finally:
        for sm in samplers.values():
            sm.halt.set()
            sm.join()
        for child in kids.values():
            if child.alive():
                sup.stop(child)


def _run_together(sup: Supervisor, consumer: tuple[str, list[str]], producer: tuple[str, list[str]],
                  subscribed, timeout: float) -> dict[str, list[dict]]:
    """Start the consumer, wait until ``subscribed(child, events)`` says it is listening, start
    the producer, and wait for both to exit 0. Returns each one's events by name."""
    deadline = time.monotonic() + timeout
    children = {consumer[0]: sup.start(consumer[0], consumer[1], role="perf")}
    evs: dict[str, list[dict]] = {consumer[0]: [], producer[0]: []}

    def take(who, ev: dict) -> None:
        name = next((n for n, c in children.items() if c is who), None)
        if name is None:
            return
        if ev.get("event") == "exit" and ev["code"] != 0:
            for c in children.values():
                sup.stop(c)
            raise PerfError(f"{name} exited with {ev['code']}: {who.last_error()}")
        evs[name].append(ev)

    def pump(until) -> None:
        if not sup.wait_until(until, deadline - time.monotonic(), take, poll=0.2):
            for c in children.values():
                sup.stop(c)
            raise PerfError(f"{' and '.join(children)} did not finish within "
                            f"{timeout:.0f} s (logs: {sup.log_dir})")

    c = children[consumer[0]]
    pump(lambda: subscribed(c, evs[consumer[0]]))
    children[producer[0]] = sup.start(producer[0], producer[1], role="perf")
    pump(lambda: all(any(e.get("event") == "exit" for e in evs[n]) for n in children))
    return evs


class Sample(NamedTuple):
    """One measurement of a loop or a client: the producer's burst, then the consumer's drain."""

    send: float          # msg/s, timed after the warm-up, to the broker's confirmation
    recv: float          # msg/s, timed after the warm-up
    send_like_cli: float  # msg/s of all messages, to the last send call (as ActiveMQ's CLI)
    cpu_us: float        # the consumer's CPU µs per message after the warm-up
    recv_whole: float    # msg/s of the whole drain, first to last arrival
    faults: float = math.nan  # the consumer's minor page faults per message after the warm-up
    jit: float = math.nan     # the share of the consumer's CPU after the warm-up its JIT took


def _rate(n: int, first: int, last: int) -> float:
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
        return _rate(count, first, confirmed)
    return _rate(count - skip, mark, confirmed)


def recv_rate(count: int, skip: int, mark: int, last: int) -> float:
    """Arrivals after message SKIP's, from its arrival (``mark``) to the last one's."""
    return _rate(count - skip - 1, mark, last)


def loop_once(sup, broker, r: clients.Resolved, count: int, size: int, tag: str,
              skip: int = 0) -> Sample:
    send_argv, recv_argv = r.client.loops
    url = broker.url_for(r.protocol)
    q = f"perf.{tag}.{uuid.uuid4().hex[:6]}"
    s = _run_to_end(sup, f"loop-send-{tag}",
                    [*send_argv, url, q, str(count), str(size), str(skip)], 600)
    cpu: list[CpuSampler] = []
    rcv = _run_to_end(sup, f"loop-recv-{tag}", [*recv_argv, url, q, str(count), str(skip)], 600,
                      cpu)
    return _loop_sample(r, count, skip, s[-1], rcv[-1], cpu[0])


def _loop_send_window(r: clients.Resolved, count: int, skip: int, s: dict) -> tuple[int, int, int]:
    """The loop's timed send: (from, to, messages), as send_rate times it."""
    if send_timed_from_mark(r):
        return int(s["mark_ns"]), int(s["last_ns"]), count - skip
    return int(s["first_ns"]), int(s["last_ns"]), count


def _loop_sample(r: clients.Resolved, count: int, skip: int, s: dict, rcv: dict,
                 cpu: CpuSampler) -> Sample:
    """A loop's sample from its producer's and its consumer's last lines."""
    if int(rcv["count"]) != count:
        raise PerfError(f"loop {r.label} received {rcv['count']} of {count}")
    first, mark, last = int(rcv["first_ns"]), int(rcv["mark_ns"]), int(rcv["last_ns"])
    s_first, s_last = int(s["first_ns"]), int(s["last_ns"])
    return Sample(
        send_rate(count, skip, s_first, int(s["mark_ns"]), s_last, send_timed_from_mark(r)),
        recv_rate(count, skip, mark, last),
        _rate(count, s_first, s_last),
        _cpu_us(cpu, count - skip, mark, last),
        _rate(count, first, last),
        _faults(cpu, count - skip, mark, last),
        cpu.jit_share(mark, last),
    )


def _cpu_us(sampler: CpuSampler, count: int, first: int, last: int) -> float:
    """The consumer's CPU microseconds per message between two of its arrivals, ``count``
    messages apart counting both."""
    return sampler.cpu_between(first, last) / 1000 / max(1, count - 1)


def _faults(sampler: CpuSampler, count: int, first: int, last: int) -> float:
    """The consumer's minor page faults per message, as _cpu_us."""
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


def _client_argvs(broker, r: clients.Resolved, q: str, count: int, size: int, prec: Path,
                  crec: Path) -> tuple[list[str], list[str]]:
    # (the consumer sizes its record memory from --count and --size, as in a sweep's points)
    common = ["--url", broker.url_for(r.protocol), "--destinations", q, "--count", str(count),
              "--size", str(size)]
    return (options.command(r, "producer", common + ["--records", str(prec)]),
            options.command(r, "consumer", common + ["--records", str(crec)]))


def _client_rates(r: clients.Resolved, count: int, times: tuple[list[int], int], crec: Path,
                  cpu: CpuSampler | None = None, skip: int = 0,
                  arrivals: list[int] | None = None) -> Sample:
    """The client's sample from its records (``times``: _client_send_times of its producer's;
    the CPU only with ``cpu``). ActiveMQ's CLI
    producer times itself to its last send call (its asynchronous sends return before the
    broker has the message), hence ``send_like_cli``. Message SKIP is the SKIP-th of the
    records' times in order, as the loops count it (``arrivals``: those times sorted, when
    already read)."""
    calls, confirmed = times
    if arrivals is None:
        arrivals = sorted(x.recv_ns for x in measure.read_consumer_records(crec))
    if len(arrivals) != count:
        raise PerfError(f"client {r.label} received {len(arrivals)} of {count}")
    first, last_call = calls[0], calls[-1]
    r0, mark, r1 = arrivals[0], arrivals[skip], arrivals[-1]
    return Sample(
        send_rate(count, skip, first, calls[skip], confirmed, send_timed_from_mark(r)),
        recv_rate(count, skip, mark, r1),
        _rate(count, first, last_call),
        _cpu_us(cpu, count - skip, mark, r1) if cpu is not None else math.nan,
        _rate(count, r0, r1),
        _faults(cpu, count - skip, mark, r1) if cpu is not None else math.nan,
        cpu.jit_share(mark, r1) if cpu is not None else math.nan,
    )


def _client_send_times(prec: Path, send_events: list[dict]) -> tuple[list[int], int]:
    """The producer's send calls in time order, and when the broker confirmed the last message
    (the producer's burst line; never before the last call)."""
    calls = sorted(t for *_, t in measure.read_producer_records(prec))
    confirmed = max((e["_rx_ns"] for e in send_events if e.get("event") == "burst"),
                    default=calls[-1])
    return calls, max(confirmed, calls[-1])


def _client_send_cpu_window(r: clients.Resolved, count: int, skip: int, calls: list[int],
                            confirmed: int) -> tuple[int, int, int]:
    """The span of the client's timed send whose CPU counts: (from, to, messages). A producer
    whose send calls write before they return (timed from a mark) has done its sending at its
    last call, and then waits for the receipt; the harness reads the burst line that confirms
    it a few ms later, while the producer already disconnects and writes its records (work a
    loop does not do, and not sending). A stompjs send, timed whole, runs to the confirmation.
    ``calls`` and ``confirmed``: _client_send_times."""
    if send_timed_from_mark(r):
        return calls[skip], calls[-1], count - skip
    return calls[0], confirmed, count


def client_once(sup, broker, r: clients.Resolved, count: int, size: int, tag: str, work: Path,
                skip: int = 0):
    """Our producer sends the burst into an empty queue, then our consumer drains it."""
    prec, crec = work / f"{tag}-p.tsv", work / f"{tag}-c.tsv"
    send, recv = _client_argvs(broker, r, f"perf.{tag}.{uuid.uuid4().hex[:6]}", count, size,
                               prec, crec)
    sent_evs = _run_to_end(sup, f"client-send-{tag}", send, 600)
    cpu: list[CpuSampler] = []
    _run_to_end(sup, f"client-recv-{tag}", recv, 600, cpu)
    return _client_rates(r, count, _client_send_times(prec, sent_evs), crec, cpu[0], skip)


def client_pair_once(sup, broker, r: clients.Resolved, count: int, size: int, tag: str,
                     work: Path):
    """Our producer and consumer at the same time on one queue (the consumer subscribed
    first)."""
    prec, crec = work / f"{tag}-pair-p.tsv", work / f"{tag}-pair-c.tsv"
    send, recv = _client_argvs(broker, r, f"perf.pair.{tag}.{uuid.uuid4().hex[:6]}", count,
                               size, prec, crec)
    cname, pname = f"pair-recv-{tag}", f"pair-send-{tag}"
    evs = _run_together(sup, (cname, recv), (pname, send),
                        lambda c, e: any(x.get("event") == "ready" for x in e), 600)
    return _client_rates(r, count, _client_send_times(prec, evs[pname]), crec)


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
    w = _common_span([(int(rcv["mark_ns"]), int(rcv["last_ns"])), (arrivals[skip], arrivals[-1])],
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


def _common_span(spans: list[tuple[int, int]], arrived: list, count: int,
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


class Hold:
    """The broker holding queues' dispatch until each has a consumer (its ``hold`` command,
    broker/src/main/java/burstbench/broker/Main.java): its ``held`` and ``released`` events."""

    def __init__(self, sup: Supervisor, broker, queues: list[str], timeout: float = 30):
        self.broker, self.queues = broker, queues
        held = broker.ask(sup, "hold " + " ".join(queues), "held", timeout)
        if held is None:
            raise PerfError(f"the broker did not answer 'hold' within {timeout:.0f} s")
        if "error" in held:
            raise PerfError(f"the broker cannot hold {' '.join(queues)}: {held['error']}")
        self.events = [held]

    def take(self, child, ev: dict) -> bool:
        """Keep the broker's hold events; whether ``ev`` was one."""
        if child is self.broker.child and ev.get("event") in ("held", "released"):
            self.events.append(ev)
            return True
        return False

    def released(self) -> dict:
        """The ``released`` event, which must say that every queue had its consumer."""
        rel = next((e for e in self.events if e.get("event") == "released"), None)
        if rel is None or rel.get("subscribed") is not True:
            raise PerfError(f"the broker let {' '.join(self.queues)} go before each had its "
                            f"consumer: {rel}")
        return rel


def _fill_then_drain(sup, broker, queues: list[str], sends: list[tuple[str, list[str]]],
                     recvs: list[tuple[str, list[str]]], cpus: set[int], first: bool,
                     reads: bool = False) -> tuple[dict, dict, dict, dict, float]:
    """A one-CPU round's two phases: both producers at the same time on ``cpus``, then both
    consumers, the broker holding ``queues`` until each has subscribed (Hold). ``sends`` and
    ``recvs`` are (name, argv) pairs, the first of each started first when ``first``, else the
    second (``reads``: count the consumers' read calls too). Returns the producers' events and
    CpuSamplers, the consumers', and how long the broker held the queues (ms)."""
    def order(progs):
        return progs if first else progs[::-1]

    sent, s_cpu = _run_all(sup, order(sends), 600, cpus)
    hold = Hold(sup, broker, queues)
    got, r_cpu = _run_all(sup, order(recvs), 600, cpus, on_other=hold.take, reads=reads)
    return sent, s_cpu, got, r_cpu, float(hold.released()["held_ms"])


def _arrivals_line(r: clients.Resolved, rcv: dict) -> dict:
    """A receive loop's last line, which must report when its messages arrived (at_ns)."""
    if "at_ns" not in rcv:
        raise PerfError(f"the receive loop of {r.label} reports no at_ns (its arrivals)")
    return rcv


def one_cpu_once(sup, broker, r: clients.Resolved, count: int, size: int, tag: str, work: Path,
                 skip: int, cpus: set[int], loop_first: bool) -> tuple[OneCpu, OneCpu]:
    """The loop's producer and the client's at the same time, both pinned to ``cpus``, each
    into its own queue; then their consumers, the same way, each draining its own backlog.
    On one CPU the two share the machine's state (the host's speed flips within seconds here,
    28955a4:docs/perf.md) as closely as two processes can, so their CPU per message compares what
    their code costs. A consumer's is taken in the common window (common_window), when both
    were running. The broker holds both queues until both consumers have subscribed (Hold):
    each process boots in turn on the one CPU, and the JMS consumer started first drained
    alone for the 1.0-1.5 s the other JVM took to subscribe (28955a4:docs/perf.md). Returns (loop,
    client)."""
    send_argv, recv_argv = r.client.loops
    url = broker.url_for(r.protocol)
    ql, qc = (f"perf.1cpu.{tag}.{w}.{uuid.uuid4().hex[:6]}" for w in ("loop", "client"))
    prec, crec = work / f"{tag}-1cpu-p.tsv", work / f"{tag}-1cpu-c.tsv"
    c_send, c_recv = _client_argvs(broker, r, qc, count, size, prec, crec)
    ls, cs, lr, cr = (f"1cpu-{w}-{tag}" for w in ("loop-send", "client-send", "loop-recv",
                                                   "client-recv"))

    sent, s_cpu, got, r_cpu, held_ms = _fill_then_drain(
        sup, broker, [ql, qc],
        [(ls, [*send_argv, url, ql, str(count), str(size), str(skip)]), (cs, c_send)],
        [(lr, [*recv_argv, url, ql, str(count), str(skip)]), (cr, c_recv)],
        cpus, loop_first, reads=True)
    rcv = _arrivals_line(r, got[lr][-1])
    loop = _loop_sample(r, count, skip, sent[ls][-1], rcv, r_cpu[lr])
    times = _client_send_times(prec, sent[cs])
    arrivals = sorted(x.recv_ns for x in measure.read_consumer_records(crec))
    client = _client_rates(r, count, times, crec, r_cpu[cr], skip, arrivals)
    common = common_window(rcv, arrivals, count, skip)
    share = min(common[2:]) / (count - skip) if common is not None else math.nan
    s_common = send_common_window(r, sent[ls][-1], times[0], count, skip)
    s_share = min(s_common[2:]) / (count - skip) if s_common is not None else math.nan
    out = []
    for i, (smp, s_side, r_side, send_window, own) in enumerate((
            (loop, s_cpu[ls], r_cpu[lr], _loop_send_window(r, count, skip, sent[ls][-1]),
             (int(rcv["mark_ns"]), int(rcv["last_ns"]))),
            (client, s_cpu[cs], r_cpu[cr], _client_send_cpu_window(r, count, skip, *times),
             (arrivals[skip], arrivals[-1])))):
        send_us, send_jit = _cpu_apart(s_side, *send_window)
        send_common_us = (math.nan if s_common is None
                          else _cpu_apart(s_side, s_common[0], s_common[1], s_common[2 + i])[0])
        own_us = _cpu_apart(r_side, *own, max(1, count - skip - 1))[0]  # as _cpu_us counts
        recv_us = recv_jit = faults = sys_us = reads = math.nan
        if common is not None:
            a, b, n = common[0], common[1], common[2 + i]
            recv_us, recv_jit = _cpu_apart(r_side, a, b, n)
            faults = r_side.faults_between(a, b) / n
            sys_us, reads = r_side.sys_between(a, b) / 1000 / n, r_side.reads_between(a, b) / n
        out.append(OneCpu(send_us, recv_us, smp.send, smp.recv, faults, send_jit, recv_jit,
                          own_us, share, held_ms, sys_us, reads, send_common_us, s_share))
    return out[0], out[1]


def self_check_once(sup, broker, r: clients.Resolved, count: int, size: int, tag: str,
                    work: Path, skip: int, cpus: set[int],
                    loop_first: bool) -> tuple[float, float, float]:
    """A one-CPU receive round with the loop on both sides (A/A): two of the loop's producers
    fill a queue each at the same time, then two of its receive loops drain them together, each
    its own, pinned and held as one_cpu_once runs loop and client (``work`` unused: the loops
    keep no records). Two copies of one code cost the same a message, so their ratio shows how
    far the comparison leans on its own: toward a queue, or the side started first (loop a
    when ``loop_first``, else loop b). Returns loop a's and loop b's CPU µs a message in their
    common window, and its share of the timed messages; three nan when the round had no
    common window."""
    send_argv, recv_argv = r.client.loops
    url = broker.url_for(r.protocol)
    qs = [f"perf.aa.{tag}.{w}.{uuid.uuid4().hex[:6]}" for w in ("a", "b")]
    names = [f"aa-recv-{w}-{tag}" for w in "ab"]
    _, _, got, cpu, _ = _fill_then_drain(
        sup, broker, qs,
        [(f"aa-send-{w}-{tag}", [*send_argv, url, q, str(count), str(size), str(skip)])
         for w, q in zip("ab", qs)],
        [(n, [*recv_argv, url, q, str(count), str(skip)]) for n, q in zip(names, qs)],
        cpus, loop_first)
    rcv = [_arrivals_line(r, got[n][-1]) for n in names]
    for n, x in zip(names, rcv):
        if int(x["count"]) != count:
            raise PerfError(f"{n} ({r.label}'s receive loop) received {x['count']} of {count}")
    w = _common_span([(int(x["mark_ns"]), int(x["last_ns"])) for x in rcv],
                     [lambda t, x=x: loop_arrived(x, t) for x in rcv], count, skip)
    if w is None:
        return math.nan, math.nan, math.nan
    a, b, n = w
    return (_cpu_apart(cpu[names[0]], a, b, n[0])[0], _cpu_apart(cpu[names[1]], a, b, n[1])[0],
            min(n) / (count - skip))


def _cpu_apart(sampler: CpuSampler, first: int, last: int, n: float) -> tuple[float, float]:
    """CPU µs per message over ``n`` messages from first to last, a JVM's compiler threads
    left out, and the share of the CPU they took. What compiling is left in a window is a
    one-time cost, and the loop and the client compile different code at different times
    (their share is kept, and printed)."""
    cpu, jit = sampler.cpu_between(first, last), sampler.jit_between(first, last)
    return (cpu - jit) / 1000 / n, (jit / cpu if cpu > 0 else math.nan)


_CONSOLE = paths.CLIENTS / "java" / "target" / "console-lib"
_TIME = re.compile(r"^(\d\d):(\d\d):(\d\d)\.(\d{3}) .* Received ")


def _cli_argv(role: str, url: str, q: str, count: int, size: int) -> list[str]:
    if not _CONSOLE.exists():
        raise PerfError(f"{_CONSOLE} missing: run ./bench setup")
    argv = ["java", *clients.JAVA_OPTS, "-Dorg.slf4j.simpleLogger.showDateTime=true",
            "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS", "-cp", f"{_CONSOLE}/*",
            "org.apache.activemq.console.command.ShellCommand", role, "--brokerUrl", url,
            "--destination", f"queue://{q}", "--messageCount", str(count)]
    if role == "producer":
        argv += ["--messageSize", str(size), "--persistent", "false"]
    return argv


def _cli_send_rate(log: Path, count: int) -> float:
    ms = re.findall(r"Elapsed time in milli second : (\d+)", log.read_text())
    if not ms:
        raise PerfError(f"ActiveMQ's CLI producer printed no elapsed time ({log})")
    return count / (int(ms[-1]) / 1000)


def _cli_recv_rate(log: Path, count: int) -> float:
    stamps = []
    for line in log.read_text().splitlines():
        m = _TIME.match(line)
        if m:
            h, mi, sec, milli = map(int, m.groups())
            stamps.append(((h * 60 + mi) * 60 + sec) * 1000 + milli)
    if len(stamps) != count:
        raise PerfError(f"ActiveMQ's CLI consumer logged {len(stamps)} of {count} messages")
    span_ms = (stamps[-1] - stamps[0]) % 86_400_000
    return (count - 1) / (span_ms / 1000) if span_ms else math.nan


def cli_once(sup, broker, count: int, size: int, tag: str):
    """ActiveMQ's own command-line producer and consumer (activemq-console), as users run
    them, one after the other: the producer reports its elapsed time; the consumer logs a line
    per message, whose first and last timestamps give its rate."""
    q = f"perf.cli.{tag}.{uuid.uuid4().hex[:6]}"
    url = broker.openwire_url
    _run_to_end(sup, f"cli-send-{tag}", _cli_argv("producer", url, q, count, size), 600)
    _run_to_end(sup, f"cli-recv-{tag}", _cli_argv("consumer", url, q, count, size), 600)
    return (_cli_send_rate(sup.log_dir / f"cli-send-{tag}.log", count),
            _cli_recv_rate(sup.log_dir / f"cli-recv-{tag}.log", count))


def cli_pair_once(sup, broker, count: int, size: int, tag: str):
    """The CLI consumer, then the CLI producer once the consumer says it waits for messages."""
    q = f"perf.cli-pair.{tag}.{uuid.uuid4().hex[:6]}"
    url = broker.openwire_url
    cname, pname = f"cli-pair-recv-{tag}", f"cli-pair-send-{tag}"
    clog = sup.log_dir / f"{cname}.log"

    def waiting(_child, _evs) -> bool:
        return clog.exists() and " wait until " in clog.read_text()

    _run_together(sup, (cname, _cli_argv("consumer", url, q, count, size)),
                  (pname, _cli_argv("producer", url, q, count, size)), waiting, 600)
    return (_cli_send_rate(sup.log_dir / f"{pname}.log", count), _cli_recv_rate(clog, count))


def _one_cpu_rounds(sup, broker, r: clients.Resolved, count: int, size: int, work: Path,
                    skip: int, rounds: int, cpus: list[int], once=one_cpu_once) -> list[tuple]:
    """``rounds`` one-CPU rounds after one discarded (loop started first in even rounds, the
    client in odd ones), the broker kept on the last CPU meanwhile and then let go again.
    ``once`` runs a round: one_cpu_once (loop and client), or self_check_once (A/A)."""
    if not rounds:
        return []
    got = []
    pin_threads([broker.child.pid], {cpus[-1]})
    try:
        for i in range(rounds + 1):
            tag = f"{r.client.name}-{size}-{i}"
            pair = once(sup, broker, r, count, size, tag, work, skip, {cpus[0]},
                        loop_first=i % 2 == 0)
            if i:
                got.append(pair)
    finally:
        pin_threads([broker.child.pid], set(cpus))
    return got


def _one_cpu_summary(one: list[tuple[OneCpu, OneCpu]], role: str) -> dict:
    """CPU per message of loop and client in the one-CPU rounds, and loop / client round by
    round with its confidence interval (>= 0.95: the client's code costs at most 5% more).
    A receive counts the rounds with a common window (common_window; when none had one, the
    row has no figures but ``common`` and ``own_windows``); its figures over each side's own
    timed messages are kept beside, as ``own_windows``. ``each`` keeps every round's figures
    of the role (OneCpu's fields named for it), in the rounds' order, so that a round far from
    the rest can be read whole: its compiler share, its kernel part, its window."""
    cpu, rate = ("send_cpu_us", "send") if role == "send" else ("recv_cpu_us", "recv")
    k = OneCpu._fields.index(cpu)
    role_fields = [f for f in OneCpu._fields if f == role or f.startswith(role + "_")]
    d: dict = {"each": {side: [{f: getattr(x[i], f) for f in role_fields} for x in one]
                        for i, side in enumerate(("loop", "client"))}}
    kept = one
    if role == "recv":
        kept = [x for x in one if not math.isnan(x[0].recv_cpu_us)]
        own = OneCpu._fields.index("recv_cpu_us_own")
        d["common"] = {"rounds": len(kept), "of": len(one)}
        held = [x[0].recv_held_ms for x in one if not math.isnan(x[0].recv_held_ms)]
        if held:  # how long the broker held both queues (Hold)
            d["common"]["held_ms"] = _spread(held)
        if kept:
            d["common"]["share"] = _spread([x[0].recv_common for x in kept])
        d["own_windows"] = {
            "cpu_us_per_msg": {"loop": _spread([x[0].recv_cpu_us_own for x in one]),
                               "client": _spread([x[1].recv_cpu_us_own for x in one])},
            "ratio": _paired([x[0] for x in one], [x[1] for x in one], own)}
        if not kept:
            return d
    loops, mine = [x[0] for x in kept], [x[1] for x in kept]
    d.update({"cpu_us_per_msg": {"loop": _spread([getattr(x, cpu) for x in loops]),
                                 "client": _spread([getattr(x, cpu) for x in mine])},
              "ratio": _paired(loops, mine, k),
              "rates": {"loop": _spread([getattr(x, rate) for x in loops]),
                        "client": _spread([getattr(x, rate) for x in mine])},
              "rounds": {"loop": [getattr(x, cpu) for x in loops],
                         "client": [getattr(x, cpu) for x in mine]}})
    if role == "recv":
        # the fresh memory it touched, where its CPU went (the kernel's part), and how many
        # reads the socket's traffic took; a figure a side could not read is left out
        for key, field in (("faults_per_msg", "recv_faults"), ("sys_us_per_msg", "recv_sys_us"),
                           ("reads_per_msg", "recv_reads")):
            lo, cl = ([getattr(x, field) for x in side] for side in (loops, mine))
            if not any(math.isnan(v) for v in lo + cl):
                d[key] = {"loop": _spread(lo), "client": _spread(cl)}
    if role == "send":
        both = [x for x in one if not math.isnan(x[0].send_cpu_us_common)]
        if both:  # beside the judged figure: the span in which both producers sent
            k_common = OneCpu._fields.index("send_cpu_us_common")
            d["common_window"] = {
                "rounds": len(both), "of": len(one),
                "share": _spread([x[0].send_common for x in both]),
                "cpu_us_per_msg": {"loop": _spread([x[0].send_cpu_us_common for x in both]),
                                   "client": _spread([x[1].send_cpu_us_common for x in both])},
                "ratio": _paired([x[0] for x in both], [x[1] for x in both], k_common)}
    jit = "send_jit" if role == "send" else "recv_jit"
    d["jit_share"] = {"loop": _spread([getattr(x, jit) for x in loops]),
                      "client": _spread([getattr(x, jit) for x in mine])}
    return d


def _self_check_summary(rounds: list[tuple[float, float, float]]) -> dict:
    """The A/A rounds (self_check_once): how many had a common window, each loop's CPU µs a
    message, a / b round by round with its interval (which should hold 1.00), and the window's
    share of the timed messages."""
    kept = [x for x in rounds if not math.isnan(x[0])]
    d: dict = {"rounds": len(kept), "of": len(rounds)}
    if kept:
        d.update({"cpu_us_per_msg": {"a": _spread([x[0] for x in kept]),
                                     "b": _spread([x[1] for x in kept])},
                  "ratio": _paired(kept, [(x[1],) for x in kept], 0),
                  "share": _spread([x[2] for x in kept])})
    return d


def lean(ci: dict) -> str:
    """What an A/A interval says: 'none' when it holds 1.00 (as two copies of one code should),
    'leans' when it does not; 'not judged' when it is too narrow a claim (fewer than 5 rounds)."""
    if ci["confidence"] < MIN_CONFIDENCE:
        return "not judged"
    return "none" if ci["lo"] <= 1 <= ci["hi"] else "leans"


def _tuned_of(r: clients.Resolved) -> clients.Resolved | None:
    """The tuned entry of a stock client, on the same transport; None if it has none."""
    for c in clients.tuned_clients():
        if c.tuned_of == r.client.name and r.transport in c.transports:
            return clients.Resolved(c, r.transport)
    return None


def _spread(vals: list[float]) -> dict:
    return {"median": statistics.median(vals), "min": min(vals), "max": max(vals)}


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


MIN_CONFIDENCE = 0.9  # below it (fewer than 5 rounds) an interval settles nothing


MIN_ROUNDS = 5  # fewer rounds than this are not judged


def verdict(spread: dict, target: float = 0.95) -> str:
    """The rule (``RULE``): 'holds' when every round's ratio is at or above the target,
    'misses' when every round's is below it, 'within noise' when the rounds straddle it;
    'not judged' with fewer than MIN_ROUNDS rounds. Judged once, on one run's rounds."""
    if spread.get("n", MIN_ROUNDS) < MIN_ROUNDS:
        return "not judged"
    if spread["min"] >= target:
        return "holds"
    if spread["max"] < target:
        return "misses"
    return "within noise"


def rule(rounds: int, one_cpu_rounds: int) -> str:
    """The rule a run declares before it measures, printed first and kept in perf.json."""
    judged = f"{one_cpu_rounds} one-CPU rounds" if one_cpu_rounds else f"{rounds} rounds"
    return (f"rule (declared before the run): each stock row's loop / client ratio is judged "
            f"once against {TARGET}, over its {judged}: holds = every round at or above it, "
            f"misses = every round below, within noise = the rounds straddle it; fewer than "
            f"{MIN_ROUNDS} rounds: not judged. A repeated run is reported beside this one, "
            "never pooled into it.")


def _paired(a: list[tuple], b: list[tuple], idx: int) -> dict:
    """a / b round by round (both measured in the same round, next to each other): the
    median of those ratios with their min and max, and the median's confidence interval."""
    ratios = [x[idx] / y[idx] for x, y in zip(a, b, strict=True)]
    return {**_spread(ratios), "n": len(ratios), "ci": median_ci(ratios)}


# The perf broker holds each sample's burst in one queue before the drain: its memory limit,
# and what a message counts there beside its body (ActiveMQ's minimum message size, 1,024 B,
# and the six bench properties marshalled). A Java loop's 400,000 1 KiB messages stopped near
# 250,000 at 512 MB, held by producer flow control. A one-CPU round fills two queues at once,
# a JVM's with up to 800,000 messages at 6 B each (and 700,000 at 1 KiB: one_cpu_counts): the
# broker's heap and its memory limit hold two full ones (broker_memory).
_QUEUE_MEMORY = 1 << 30           # a queue's, unless a run needs more
_QUEUE_MEMORY_MOST = 2 << 30      # and at most (the broker's heap is then 8 GB)
_BROKER_BYTES_PER_MSG = 1200


def broker_memory(most_bytes: int) -> tuple[int, str]:
    """(a queue's memory limit in bytes, the broker's heap) for a run whose fullest queue holds
    ``most_bytes``: 1 GiB and a 6 GB heap as before when that fits, else the bytes rounded up
    to 256 MiB, the heap two such queues and 4 GB more."""
    q = max(_QUEUE_MEMORY, -(-most_bytes // (256 << 20)) * (256 << 20))
    return q, f"{(2 * q >> 30) + 4}g" if q % (1 << 30) == 0 else f"{(2 * q >> 20) + 4096}m"


def _count(r: clients.Resolved, size: int, counts: dict[int, int],
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


def run(
    specs: list[str], sizes: list[int], counts: dict[int, int], rounds: int, out=sys.stdout,
    optimized_dispatch: bool = False, counts_jvm: dict[int, int] | None = None,
    with_cli: bool = True, warmup: float = 0.5, with_tuned: bool = True,
    one_cpu_rounds: int = 0, counts_jvm_one_cpu: dict[int, int] | None = None,
    self_check_rounds: int = 0,
) -> dict:
    resolved = [clients.resolve(s) for s in specs]
    cpus = sorted(os.sched_getaffinity(0))
    if (one_cpu_rounds or self_check_rounds) and len(cpus) < 2:
        raise PerfError(f"one-CPU rounds need two CPUs (one for the broker, one shared by the "
                        f"two consumers); this process may run on {len(cpus)}: "
                        f"--one-cpu-rounds 0 --self-check 0")
    most_bytes = 0    # the fullest queue's
    for r in resolved:
        why = r.client.missing()
        if why:
            raise PerfError(why)
        if r.client.tuned:
            raise PerfError(f"{r.client.name} is a tuned entry: name its stock client "
                            f"({r.client.tuned_of}); the tuned one is measured beside it")
        if not r.client.loops:
            raise PerfError(f"{r.client.name} has no minimal loop to compare with")
        tuned = _tuned_of(r) if with_tuned else None
        if tuned is not None and tuned.client.missing():
            raise PerfError(tuned.client.missing())
        for size in sizes:
            count = _count(r, size, counts, counts_jvm)
            if one_cpu_rounds:
                count = max(count, one_cpu_count(r, size, count, 0, counts_jvm_one_cpu)[0])
            per_msg = size + _BROKER_BYTES_PER_MSG   # a message's bytes in the broker
            need = count * per_msg                   # this queue's
            most_bytes = max(most_bytes, need)
            if need > _QUEUE_MEMORY_MOST:
                most = _QUEUE_MEMORY_MOST // per_msg
                raise PerfError(
                    f"{count:,} messages of {size} B do not fit in the perf broker's queue memory "
                    f"({_QUEUE_MEMORY_MOST >> 20} MB at most, at about {_BROKER_BYTES_PER_MSG} B "
                    f"a message beside its body): flow control would hold the producer until the "
                    f"sample timed out; at most {most:,} at {size} B (--count, or --count-jvm "
                    f"and --count-jvm-one-cpu for Java)")
    queue_memory, heap = broker_memory(most_bytes)
    run_dir = results.Run(results.new_run_id("perf-clients"), sys.argv)
    table = []
    with tempfile.TemporaryDirectory(prefix="burstbench-perf-") as tmp:
        work = Path(tmp)
        with Supervisor(run_dir.dir / "logs") as sup:
            broker = brokers.start(
                sup,
                brokers.BrokerSpec(
                    name="perf", heap=heap, queue_memory_limit=f"{queue_memory >> 20}mb",
                    memory_limit=f"{(2 * queue_memory + (512 << 20)) >> 20}mb",
                    optimized_dispatch=optimized_dispatch,
                ),
                work,
            )
            for r in resolved:
                tuned = _tuned_of(r) if with_tuned else None
                for size in sizes:
                    count = _count(r, size, counts, counts_jvm)
                    skip = skip_of(count, warmup)
                    samples = {k: [] for k in ("loop", "client", "tuned", "cli", "pair",
                                               "cli_pair")}
                    cli = with_cli and r.client.name == "openwire-jms"
                    for i in range(rounds + 1):
                        tag = f"{r.client.name}-{size}-{i}"
                        measures = {
                            # (each called in this iteration, below: B023 does not apply)
                            "loop": lambda: loop_once(sup, broker, r, count, size, tag,  # noqa: B023
                                                      skip),  # noqa: B023
                            "client": lambda: client_once(sup, broker, r, count, size, tag,  # noqa: B023
                                                          work, skip),  # noqa: B023
                        }
                        if tuned is not None:
                            measures["tuned"] = lambda: client_once(
                                sup, broker, tuned, count, size, f"{tag}-tuned", work,  # noqa: B023
                                skip)  # noqa: B023
                        order = list(measures) if i % 2 == 0 else list(measures)[::-1]
                        got = {k: measures[k]() for k in order}
                        if cli:
                            # apart: send a backlog, then drain it; together: the consumer
                            # listens while the producer sends (the pair as users run it)
                            got["cli"] = cli_once(sup, broker, count, size, tag)
                            got["pair"] = client_pair_once(sup, broker, r, count, size, tag, work)
                            got["cli_pair"] = cli_pair_once(sup, broker, count, size, tag)
                        if i == 0:
                            continue  # warm-up round: broker and JIT settle
                        for k, v in got.items():
                            samples[k].append(v)
                    one_count, one_skip = one_cpu_count(r, size, count, skip,
                                                        counts_jvm_one_cpu)
                    one = _one_cpu_rounds(sup, broker, r, one_count, size, work, one_skip,
                                          one_cpu_rounds, cpus)
                    aa = _one_cpu_rounds(sup, broker, r, one_count, size, work, one_skip,
                                         self_check_rounds, cpus, once=self_check_once)
                    row = {"client": r.label, "size": size, "count": count, "skip": skip,
                           "send_timed_from_mark": send_timed_from_mark(r)}
                    if one or aa:
                        row["one_cpu_count"], row["one_cpu_skip"] = one_count, one_skip
                    for role, idx in (("send", 0), ("recv", 1)):
                        lo = _spread([s[idx] for s in samples["loop"]])
                        cl = _spread([s[idx] for s in samples["client"]])
                        # each round's client against the loop measured beside it: the machine's
                        # slow drift falls on both, so the ratio's spread is the rounds' own
                        paired = _paired(samples["client"], samples["loop"], idx)
                        row[role] = {"loop": lo, "client": cl, "ratio": paired["median"],
                                     "ratio_spread": paired,
                                     "ratio_of_medians": cl["median"] / lo["median"],
                                     "rounds": {"loop": [s[idx] for s in samples["loop"]],
                                                "client": [s[idx] for s in samples["client"]]}}
                        if role == "recv":
                            # the whole drain, warm-up included, for the record
                            row[role]["whole_drain"] = {
                                "loop": _spread([s.recv_whole for s in samples["loop"]]),
                                "client": _spread([s.recv_whole for s in samples["client"]]),
                                "ratio": _paired(samples["client"], samples["loop"], 4)}
                            # the consumer's own CPU per message: its work, less moved by the
                            # machine's scheduling than its rate (loop / client: >= 0.95 too)
                            row[role]["cpu_us_per_msg"] = {
                                "loop": _spread([s.cpu_us for s in samples["loop"]]),
                                "client": _spread([s.cpu_us for s in samples["client"]]),
                                "ratio": _paired(samples["loop"], samples["client"], 3)}
                            # fresh memory it touched: kept bodies show here first
                            row[role]["faults_per_msg"] = {
                                "loop": _spread([s.faults for s in samples["loop"]]),
                                "client": _spread([s.faults for s in samples["client"]])}
                        if samples["tuned"]:
                            tu = _spread([s[idx] for s in samples["tuned"]])
                            tp = _paired(samples["tuned"], samples["client"], idx)
                            row[role]["tuned"] = {"client": tuned.label, "rates": tu,
                                                  "ratio_to_stock": tp["median"],
                                                  "ratio_spread": tp,
                                                  "rounds": [s[idx] for s in samples["tuned"]]}
                        if one:
                            row[role]["one_cpu"] = _one_cpu_summary(one, role)
                        if aa and role == "recv":
                            row[role]["self_check"] = _self_check_summary(aa)
                        for mode, ours, theirs in (("apart", "client", "cli"),
                                                   ("together", "pair", "cli_pair")):
                            if not samples[theirs]:
                                continue
                            ac = _spread([s[idx] for s in samples[theirs]])
                            # like with like: the CLI's send time ends at its last send call
                            # (and the whole drain: the CLI's consumer times all of it)
                            mine = _spread([s.send_like_cli if role == "send" else s.recv_whole
                                            for s in samples[ours]])
                            row[role].setdefault("vs_cli", {})[mode] = {
                                "activemq_cli": ac, "client_like_cli": mine,
                                "ratio_to_cli": mine["median"] / ac["median"]}
                    table.append(row)
                    print(format_row(row), file=out, flush=True)
    doc = {
        "kind": "perf-clients",
        "rule": rule(rounds, one_cpu_rounds),
        "rounds": rounds,
        "warmup": warmup,
        "tuned": with_tuned,
        "counts": {str(k): v for k, v in counts.items()},
        "counts_jvm": {str(k): v for k, v in (counts_jvm or counts).items()},
        "counts_jvm_one_cpu": ({str(k): v for k, v in counts_jvm_one_cpu.items()}
                               if counts_jvm_one_cpu and one_cpu_rounds else None),
        "table": table,
        "broker_version": brokers.ACTIVEMQ_VERSION,
        "broker_memory": {"queue_mb": queue_memory >> 20, "heap": heap},
        "optimized_dispatch": optimized_dispatch,
        "one_cpu": {"rounds": one_cpu_rounds, "clients_cpu": cpus[0],
                    "broker_cpu": cpus[-1]} if one_cpu_rounds else None,
        "self_check": {"rounds": self_check_rounds, "clients_cpu": cpus[0],
                       "broker_cpu": cpus[-1]} if self_check_rounds else None,
    }
    (run_dir.dir / "perf.json").write_text(json.dumps(results.json_safe(doc), indent=2))
    run_dir.finish("complete")
    return doc


HEADER = (
    f"{'client':<14}{'size':>6}  {'role':<5}{'loop msg/s (min-max)':>28}"
    f"{'client msg/s (min-max)':>30}{'ratio, by round (min-max)':>28}"
)


TARGET = 0.95  # the stock client within 5% of its loop: the bench's own cost

CI_FOOTNOTE = (
    "target 0.95 by the rule above: holds = every round's ratio at or above it, misses = every "
    "round's below,\n  within noise = the rounds straddle it. CI: a distribution-free "
    "confidence interval of the median ratio\n  (order statistics of the rounds' ratios), "
    "information only: the spread between runs is wider.")

ONE_CPU_FOOTNOTE = (
    "1 CPU: {rounds} more rounds, in which the loop's producer and the client's run at the same "
    "time pinned to CPU {clients_cpu},\n  then their consumers (the broker alone on CPU "
    "{broker_cpu}); the ratio is loop / client CPU per message round by round. A receive\n  "
    "counts only the common window, while both drained (the one left alone costs more a "
    "message, likely\n  waiting on the broker); a round whose window holds less than a quarter "
    "of the timed messages is left out\n  (common window: rounds kept, and their share of the "
    "timed messages). A send is judged over each producer's own\n  timed messages; below it, "
    "its common window, while both producers sent (a loop counts its sends from its\n  "
    "at_ns; a stompjs send, timed whole, has none). The host's\n  "
    "speed flips within seconds here and moves both alike, so this ratio settles where the "
    "rates' cannot (docs/perf.md).\n  A JVM's one-CPU rounds run longer, the extra all "
    "warm-up, as long at every size (--count-jvm-one-cpu);\n  JIT share: the part of its timed "
    "CPU its compiler threads took, left out of its CPU per message (compiling\n  is a one-time "
    "cost).\n  "
    "sys us/msg: the system (kernel) part of a consumer's CPU in the common window (counted "
    "in 10 ms ticks: rough\n  in a round, less so as a median); reads/msg: its read system "
    "calls a message (how it took the socket's traffic).")

SELF_CHECK_FOOTNOTE = (
    "1 CPU, A/A loops: {rounds} more one-CPU receive rounds with the loop on both sides: two of "
    "its producers fill a queue each,\n  then two of its receive loops, a and b (each starts "
    "first in turn), drain them together, pinned and held as above;\n  a / b is their CPU per "
    "message in the common window, round by round. Two copies of one code: lean none = the\n  "
    "interval holds 1.00, as it should; leans = the comparison itself favours a side, and the "
    "loop / client figures carry that too.")

CPU_FOOTNOTE = (
    "CPU us/msg: the consumer process's own CPU time (user + system, from /proc) over the timed "
    "messages, per message;\n  the ratio is loop / client round by round (the client's share "
    "of the loop's efficiency). page faults/msg: its minor faults over\n  the same messages "
    "(fresh memory touched; 3-6 us each on this VM).")


def warmup_footnote(warmup: float) -> str:
    return (f"timed: each process from message {warmup:.0%} of its count to its last (the "
            "first share is its warm-up), loop and client alike;\n  a stompjs send is timed "
            "whole (publish() only queues).")

TUNED_FOOTNOTE = (
    "tuned rows: the stock client's rate (left) against its -tuned entry's (right), measured "
    "in the same rounds;\n  their ratio is the headroom the library's public API leaves on "
    "the table, not a figure of the library.")

CLI_FOOTNOTE = (
    "vs CLI: ActiveMQ's own producer and consumer (activemq-console) on the same broker; left "
    "theirs, right ours.\n  apart = the producer sends its burst, then the consumer drains "
    "the queue; together = the consumer listens while the producer sends.\n"
    "* ActiveMQ's CLI producer times itself to its last send call (its sends are "
    "asynchronous), so these rows time ours the same way;\n  the rows above time every send "
    "to the broker's confirmation of the last message. The CLI times all of its messages, and "
    "so do these rows.")


def _ratio_spread(d: dict) -> str:
    """The round-by-round ratios' min-max, when the row has them."""
    sp = d.get("ratio_spread")
    return f" ({sp['min']:.2f}-{sp['max']:.2f})" if sp else ""


def _ci(sp: dict | None) -> str:
    """What the rule says of the target, and the median ratio's confidence interval."""
    if not sp or "ci" not in sp:
        return ""
    ci = sp["ci"]
    return (f"  target: {verdict(sp, TARGET)} ({ci['confidence']:.0%} CI "
            f"{ci['lo']:.2f}-{ci['hi']:.2f})")


def _cpu_line(label: str, role: str, loop: dict, client: dict, ratio: dict) -> str:
    """A row's line of CPU µs per message: loop, client, loop / client and its verdict."""
    return (f"{label:<22}{role:<5}"
            f"{loop['median']:>10.2f} ({loop['min']:.2f}-{loop['max']:.2f})".ljust(58)
            + f"{client['median']:>10.2f} ({client['min']:.2f}-{client['max']:.2f})".ljust(30)
            + f"{ratio['median']:>7.2f} ({ratio['min']:.2f}-{ratio['max']:.2f})"
            + _ci(ratio))


def _pair_line(label: str, role: str, loop: dict, client: dict, fmt: str) -> str:
    """A row's line of one more figure, loop and client side by side (no ratio)."""
    return (f"{label:<22}{role:<5}"
            f"{loop['median']:>10{fmt}} ({loop['min']:{fmt}}-{loop['max']:{fmt}})".ljust(58)
            + f"{client['median']:>10{fmt}} ({client['min']:{fmt}}-{client['max']:{fmt}})")


def _self_check_line(role: str, sc: dict) -> str:
    """A row's A/A line: each loop's CPU µs a message, a / b, and whether the comparison leans
    (lean)."""
    label = "  1 CPU, A/A loops"
    if "ratio" not in sc:
        return (f"{label:<22}{role:<5}    no common window in any of its {sc['of']} rounds: "
                "nothing to compare")
    a, b, q = sc["cpu_us_per_msg"]["a"], sc["cpu_us_per_msg"]["b"], sc["ratio"]
    ci = q["ci"]
    return (f"{label:<22}{role:<5}"
            f"{a['median']:>10.2f} ({a['min']:.2f}-{a['max']:.2f})".ljust(58)
            + f"{b['median']:>10.2f} ({b['min']:.2f}-{b['max']:.2f})".ljust(30)
            + f"{q['median']:>7.2f} ({q['min']:.2f}-{q['max']:.2f})"
            + f"  {ci['confidence']:.0%} CI {ci['lo']:.2f}-{ci['hi']:.2f}: lean {lean(ci)}"
            + f"  ({sc['rounds']} of {sc['of']} rounds)")


def format_row(row: dict) -> str:
    lines = []
    for role in ("send", "recv"):
        d = row[role]
        lo, cl = d["loop"], d["client"]
        lines.append(
            f"{row['client']:<14}{row['size']:>6}  {role:<5}"
            f"{lo['median']:>10,.0f} ({lo['min']:,.0f}-{lo['max']:,.0f})".ljust(58)
            + f"{cl['median']:>10,.0f} ({cl['min']:,.0f}-{cl['max']:,.0f})".ljust(30)
            + f"{d['ratio']:>7.2f}" + _ratio_spread(d) + _ci(d.get("ratio_spread"))
        )
        if "cpu_us_per_msg" in d:
            c = d["cpu_us_per_msg"]
            lines.append(_cpu_line("  CPU us/msg", role, c["loop"], c["client"], c["ratio"]))
        if "one_cpu" in d and "ratio" not in d["one_cpu"]:
            c, ow = d["one_cpu"]["common"], d["one_cpu"]["own_windows"]["ratio"]
            lines.append(f"{'  1 CPU, CPU us/msg':<22}{role:<5}    no common window in any of "
                         f"its {c['of']} rounds: nothing to compare (own windows: loop / "
                         f"client {ow['median']:.2f})")
        elif "one_cpu" in d:
            o = d["one_cpu"]
            lines.append(_cpu_line("  1 CPU, CPU us/msg", role, o["cpu_us_per_msg"]["loop"],
                                   o["cpu_us_per_msg"]["client"], o["ratio"]))
            if "common" in o:
                c, ow = o["common"], o["own_windows"]
                lines.append(f"{'    common window':<22}{role:<5}"
                             f"{c['rounds']:>4} of {c['of']} rounds, "
                             f"{c['share']['median']:.0%} ({c['share']['min']:.0%}-"
                             f"{c['share']['max']:.0%}) of the timed messages; "
                             + f"own windows: loop / client {ow['ratio']['median']:.2f} "
                             f"({ow['ratio']['min']:.2f}-{ow['ratio']['max']:.2f})")
            if "common_window" in o:  # a send's, beside its own windows' (the judged line)
                cw = o["common_window"]
                lines.append(_cpu_line("    common window", role, cw["cpu_us_per_msg"]["loop"],
                                       cw["cpu_us_per_msg"]["client"], cw["ratio"])
                             + f"  ({cw['rounds']} of {cw['of']} rounds, "
                             f"{cw['share']['median']:.0%} of the timed messages)")
            jl, jc = o.get("jit_share", {}).get("loop"), o.get("jit_share", {}).get("client")
            if jl and jc and (jl["max"] > 0 or jc["max"] > 0):
                lines.append(_pair_line("  1 CPU, JIT share", role, jl, jc, ".1%"))
            for key, label, fmt in (("sys_us_per_msg", "  1 CPU, sys us/msg", ".2f"),
                                    ("reads_per_msg", "  1 CPU, reads/msg", ".3f")):
                if key in o:
                    lines.append(_pair_line(label, role, o[key]["loop"], o[key]["client"], fmt))
        if "self_check" in d:
            lines.append(_self_check_line(role, d["self_check"]))
        if "faults_per_msg" in d:
            lines.append(_pair_line("  page faults/msg", role, d["faults_per_msg"]["loop"],
                                    d["faults_per_msg"]["client"], ".3f"))
        if "tuned" in d:
            tu = d["tuned"]["rates"]
            lines.append(f"{'  ' + d['tuned']['client']:<22}{role:<5}"
                         f"{cl['median']:>10,.0f} ({cl['min']:,.0f}-{cl['max']:,.0f})".ljust(58)
                         + f"{tu['median']:>10,.0f} ({tu['min']:,.0f}-{tu['max']:,.0f})".ljust(30)
                         + f"{d['tuned']['ratio_to_stock']:>7.2f}" + _ratio_spread(d["tuned"]))
        for mode, c in d.get("vs_cli", {}).items():
            ac, mine = c["activemq_cli"], c["client_like_cli"]
            label = f"  vs CLI ({mode})" + ("*" if role == "send" else "")
            lines.append(f"{label:<22}{role:<5}"
                         f"{ac['median']:>10,.0f} ({ac['min']:,.0f}-{ac['max']:,.0f})".ljust(58)
                         + f"{mine['median']:>10,.0f} "
                           f"({mine['min']:,.0f}-{mine['max']:,.0f})".ljust(30)
                         + f"{c['ratio_to_cli']:>7.2f}")
    return "\n".join(lines)


def main(args) -> int:
    specs = args.clients.split(",") if args.clients else list(clients.LANGUAGE_CLIENTS)
    sizes = [int(s) for s in args.sizes.split(",")]
    jvm = args.count_jvm or args.count
    counts = {6: args.count, 1024: max(1000, args.count // 2)}
    counts_jvm = {6: jvm, 1024: max(1000, jvm // 2)}
    counts_jvm_one_cpu = one_cpu_counts(args.count_jvm_one_cpu or 2 * jvm, counts_jvm,
                                        args.warmup)
    one_cpu = args.rounds if args.one_cpu_rounds is None else args.one_cpu_rounds
    print(rule(args.rounds, one_cpu))
    print(HEADER)
    try:
        doc = run(specs, sizes, counts, args.rounds, optimized_dispatch=args.optimized_dispatch,
                  counts_jvm=counts_jvm, with_cli=args.cli, warmup=args.warmup,
                  with_tuned=args.tuned,
                  one_cpu_rounds=one_cpu, counts_jvm_one_cpu=counts_jvm_one_cpu,
                  self_check_rounds=args.self_check)
        print(warmup_footnote(args.warmup))
        print(CI_FOOTNOTE)
        print(CPU_FOOTNOTE)
        if doc["one_cpu"]:
            print(ONE_CPU_FOOTNOTE.format(**doc["one_cpu"]))
        if doc["self_check"]:
            print(SELF_CHECK_FOOTNOTE.format(**doc["self_check"]))
        if any("tuned" in row["send"] for row in doc["table"]):
            print(TUNED_FOOTNOTE)
        if any("vs_cli" in row["send"] for row in doc["table"]):
            print(CLI_FOOTNOTE)
    except PerfError as e:
        print(f"bench perf: error: {e}", file=sys.stderr)
        return 1
    return 0
