"""What both backends' point drivers share: their error and the wait for child events."""

from __future__ import annotations

import time

from harness.procs import Child, Supervisor


class PointError(RuntimeError):
    pass


def _wait_for(sup: Supervisor, want, timeout: float, what: str, watch: list[Child]) -> list:
    """Events accepted by ``want(child, ev)`` until it returns True for all needed (it
    returns 'done' when satisfied); fails if a watched child exits non-zero meanwhile."""
    deadline = time.monotonic() + timeout
    watched = {c.name for c in watch}
    got = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise PointError(f"timed out after {timeout:.0f} s waiting for {what}")
        item = sup.wait_event(min(left, 0.5))
        if item is None:
            continue
        child, ev = item
        if ev.get("event") == "exit" and child.name in watched and ev.get("code") != 0:
            raise PointError(f"{child.name} exited with {ev.get('code')} while waiting for "
                             f"{what}: {child.last_error()} (log: {child.log_path})")
        got.append(item)
        if want(child, ev, got):
            return got
