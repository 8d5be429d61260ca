"""What the processes the harness starts and the machine use, read from /proc: one module for
every reading of it. A point's CPU shares over a burst or a window (``CpuWindow``: each child's
process tree, the harness itself, the machine's busy cores), a child's memory, threads and
open files (the supervisor's samples), and one process's CPU clock, page faults, kernel time,
reads and JIT compiler threads sampled every few ms (``CpuSampler``: ``./bench perf``'s CPU a
message)."""

from __future__ import annotations

import bisect
import math
import os
import threading
import time
from pathlib import Path

_TICK_NS = 1e9 / os.sysconf("SC_CLK_TCK")


def _proc_stats() -> dict[int, tuple[int, int]]:
    """Every live process: pid -> (parent pid, user+system clock ticks)."""
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                parts = f.read().rsplit(")", 1)[1].split()
            out[int(d)] = (int(parts[1]), int(parts[11]) + int(parts[12]))
        except (OSError, IndexError, ValueError):
            continue
    return out


def tree_cpu_seconds(pid: int) -> float | None:
    """User+system CPU seconds so far of process ``pid`` and every live process under it (a
    client's browser, a database's backends); None when it is gone."""
    stats = _proc_stats()
    if pid not in stats:
        return None
    kids: dict[int, list[int]] = {}
    for p, (ppid, _cpu) in stats.items():
        kids.setdefault(ppid, []).append(p)
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        total += stats[p][1]
        todo.extend(kids.get(p, ()))
    return total / os.sysconf("SC_CLK_TCK")


def status(pid: int) -> dict:
    """Its resident memory (MiB) and threads now (empty when it is gone)."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return {}
    fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
    try:
        return {"rss_mb": round(int(fields["VmRSS"].split()[0]) / 1024, 1),
                "threads": int(fields["Threads"])}
    except (KeyError, ValueError, IndexError):
        return {}


def open_files(pid: int) -> int:
    """Its open file descriptors now (0 when it is gone)."""
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


def machine_busy_seconds() -> float:
    """CPU seconds the whole machine has been busy (every core, every process), /proc/stat."""
    try:
        with open("/proc/stat") as f:
            vals = [int(v) for v in f.readline().split()[1:9]]
    except (OSError, ValueError):
        return math.nan
    idle = vals[3] + vals[4]  # idle + iowait
    return (sum(vals) - idle) / os.sysconf("SC_CLK_TCK")


def harness_cpu_seconds() -> float:
    """CPU seconds (user + system) this process has used so far."""
    t = os.times()
    return t.user + t.system


class CpuWindow:
    """Every process's CPU seconds, the harness's and the machine's busy seconds, from its
    start; ``shares()`` turns them into CPU shares (1.0 = one core) over a wall time."""

    def __init__(self, children: list):  # procs.Child: a name and cpu_seconds_now()
        self.children = children
        self.cpu0 = {c.name: c.cpu_seconds_now() for c in children}
        self.machine0, self.harness0 = machine_busy_seconds(), harness_cpu_seconds()
        self.t0 = time.monotonic()

    def shares(self, burst: int, wall: float) -> dict:
        cpu = {}
        for c in self.children:
            now = c.cpu_seconds_now()
            if now is not None and self.cpu0.get(c.name) is not None:
                cpu[c.name] = round((now - self.cpu0[c.name]) / wall, 3)
        return {"burst": burst, "wall_s": round(wall, 3), "cpu_share": cpu,
                "harness_share": round((harness_cpu_seconds() - self.harness0) / wall, 3),
                "machine_busy_cores": round((machine_busy_seconds() - self.machine0) / wall, 3)}


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
