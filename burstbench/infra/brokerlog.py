"""What a started broker's log says about a failed point: the broker-side reasons for dropped
connections, counted, in one line each.

A client that loses its connection only knows that it did; the broker's log often says why
(it ran out of file descriptors, closed a connection it considered idle, ran out of heap).
``explain`` reads a log once, line by line (a log of millions of lines included), and
returns a sentence per kind of line found, with how many there were and the first time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Reason:
    pattern: re.Pattern
    says: str  # the sentence; {n} lines, {first} the first line's time, {ms} a captured timeout


REASONS = (
    Reason(re.compile(r"Channel was inactive \(no connection attempt made\) "
                      r"for too \(>(\d+)\) long"),
           "closed {n} connection(s) as never having sent CONNECT within {ms} ms (first at "
           "{first}); Classic's STOMP-over-WebSocket connect check can also fire on a connection "
           "that did connect (docs/findings-broker.md#activemq-ws-connect-check)"),
    Reason(re.compile(r"Channel was inactive for too \(>(\d+)\) long"),
           "closed {n} connection(s) it heard nothing from for {ms} ms (first at {first})"),
    Reason(re.compile(r"AMQ229014: Did not receive data from .* "
                      r"within the (\d+) ?ms connection TTL"),
           "closed {n} connection(s) it heard nothing from within the {ms} ms connection TTL "
           "(first at {first})"),
    Reason(re.compile(r"Too many open files"),
           "ran out of file descriptors: {n} log line(s) (first at {first})"),
    Reason(re.compile(r"OutOfMemoryError"),
           "ran out of memory: {n} log line(s) (first at {first})"),
    Reason(re.compile(r"Exceeded the maximum number of allowed client connections"),
           "refused {n} connection(s) above its maximum (first at {first})"),
)

# any of them, for the one test most lines take (a log of millions of lines is read whole)
_ANY = re.compile("|".join(r.pattern.pattern for r in REASONS))
_TIME = re.compile(r"^(\d\d:\d\d:\d\d(?:[.,]\d+)?)|^\S+ (\d\d:\d\d:\d\d(?:[.,]\d+)?)")


def explain_lines(lines) -> list[str]:
    """The sentences for an iterable of log lines (see ``explain``)."""
    found: dict[int, list] = {}  # reason index -> [count, first time, captured]
    for line in lines:
        if not _ANY.search(line):
            continue
        for i, r in enumerate(REASONS):
            m = r.pattern.search(line)
            if m:
                seen = found.setdefault(i, [0, _time_of(line), m.group(1) if m.groups() else ""])
                seen[0] += 1
                break
    return [REASONS[i].says.format(n=f"{n:,}", first=first or "?", ms=ms)
            for i, (n, first, ms) in sorted(found.items())]


def explain(log: Path) -> list[str]:
    """A sentence per kind of connection-dropping line in the broker log ``log`` (none if it
    is missing)."""
    try:
        with open(log, errors="replace") as f:
            return explain_lines(f)
    except OSError:
        return []


def _time_of(line: str) -> str:
    m = _TIME.match(line)
    return next((g for g in m.groups() if g), "") if m else ""
