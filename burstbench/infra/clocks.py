"""Clock offsets of the hosts a point ran on, measured NTP-style over the SSH channel.

A latency across hosts is a receive time on one clock minus a send time on another, so it is
only as good as the two clocks. Before and after each point the harness sends a host a few
probes over an SSH session (``remote_exec.py clock``) and keeps the four timestamps of each:
T1 sent here, T2 received there, T3 answered there, T4 received here. The probe with the
smallest round trip ``d = (T4 - T1) - (T3 - T2)`` gives the offset
``theta = ((T2 - T1) + (T3 - T4)) / 2`` (the host's clock minus the harness's), true to within
``d / 2`` whatever the path's asymmetry. Over a point, a host's offset is the mean of the two
readings and its uncertainty the larger half round trip plus half the drift between them.

Records are corrected onto the harness's clock (a send time by its producer's host's
offset, a receive time by its consumer's host's); a cross-host latency is then uncertain by
the sum of the two hosts' uncertainties, which is printed beside its percentiles.
"""

from __future__ import annotations

import select
import subprocess
import time
from dataclasses import asdict, dataclass

from burstbench.infra.procs import die_with_parent

PROBES = 24


@dataclass
class Reading:
    offset_ns: int  # the host's clock minus the harness's
    uncertainty_ns: int  # half the smallest round trip
    rtt_ns: int
    probes: int
    at_ns: int


def offset(samples: list[tuple[int, int, int, int]]) -> Reading:
    """The NTP estimate from ``(T1, T2, T3, T4)`` samples: the minimum-round-trip one."""
    if not samples:
        raise ValueError("no clock samples")
    best = min(samples, key=lambda s: (s[3] - s[0]) - (s[2] - s[1]))
    t1, t2, t3, t4 = best
    rtt = (t4 - t1) - (t3 - t2)
    theta = ((t2 - t1) + (t3 - t4)) // 2
    return Reading(offset_ns=theta, uncertainty_ns=max(0, rtt) // 2 + 1, rtt_ns=rtt,
                   probes=len(samples), at_ns=t4)


def measure(argv: list[str], probes: int = PROBES, timeout: float = 20.0) -> Reading:
    """Probe the clock responder that ``argv`` starts (an ssh command line) ``probes`` times."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, preexec_fn=die_with_parent)  # noqa: PLW1509 - dies with us
    samples = []
    deadline = time.monotonic() + timeout
    try:
        for _ in range(probes):
            t1 = time.time_ns()
            proc.stdin.write(b"t\n")
            proc.stdin.flush()
            ready, _, _ = select.select([proc.stdout], [], [], max(0.0,
                                                                    deadline - time.monotonic()))
            if not ready:
                raise RuntimeError(f"clock probe timed out after {timeout:.0f} s")
            line = proc.stdout.readline()
            t4 = time.time_ns()
            parts = line.split()
            if len(parts) != 2:
                err = proc.stderr.read1(4096).decode(errors="replace").strip() if \
                    proc.poll() is not None else ""
                raise RuntimeError(f"clock probe got {line[:80]!r} {err}".strip())
            samples.append((t1, int(parts[0]), int(parts[1]), t4))
    finally:
        try:
            proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
        proc.stdout.close()
        proc.stderr.close()
    return offset(samples)


def combine(before: Reading | None, after: Reading | None) -> dict:
    """A host's offset over a point from its readings before and after it."""
    got = [r for r in (before, after) if r is not None]
    if not got:
        return {"available": False}
    off = sum(r.offset_ns for r in got) // len(got)
    drift = abs(got[0].offset_ns - got[-1].offset_ns)
    unc = max(r.uncertainty_ns for r in got) + drift // 2
    return {"available": True, "offset_ns": off, "uncertainty_ns": unc, "drift_ns": drift,
            "before": asdict(before) if before else None,
            "after": asdict(after) if after else None}


def correct(producer_records: list, consumer_records: dict, host_of: dict[str, str],
            hosts: dict[str, dict]) -> None:
    """Put every timestamp on the harness's clock, in place.

    ``host_of`` maps a process id (``p1-python``) to its host, ``hosts`` a host to its
    ``combine`` result. A producer's own records shift by its host's offset; a consumer's
    record shifts its send stamp by the producer's host and its receive time by its own.
    """
    def off(ident: str) -> int:
        h = hosts.get(host_of.get(ident, ""), {})
        return h.get("offset_ns", 0) if h.get("available") else 0

    for i, (p, s, b, t) in enumerate(producer_records):
        producer_records[i] = (p, s, b, t - off(p))
    for consumer, records in consumer_records.items():
        own = off(consumer)
        for r in records:
            r.sent_ns -= off(r.producer)
            r.recv_ns -= own


def cross_host_uncertainty_ns(host_of: dict[str, str], hosts: dict[str, dict],
                              producers: list[str], consumers: list[str]) -> int | None:
    """The largest uncertainty of a producer-to-consumer latency whose ends are on different
    hosts (the sum of both hosts' uncertainties); None when every pair shares a host."""
    worst = None
    for p in producers:
        for c in consumers:
            hp, hc = host_of.get(p), host_of.get(c)
            if hp is None or hc is None or hp == hc:
                continue
            u = sum(hosts.get(h, {}).get("uncertainty_ns", 0) for h in (hp, hc))
            worst = u if worst is None else max(worst, u)
    return worst
