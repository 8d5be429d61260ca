"""What both backends' point drivers share: their error and the wait for child events."""

from __future__ import annotations

from burstbench.infra.procs import Child, ChildExited, Supervisor


class PointError(RuntimeError):
    pass


def wait_for(sup: Supervisor, want, timeout: float, what: str, watch: list[Child]) -> list:
    """Events accepted by ``want(child, ev)`` until it returns True for all needed (it
    returns 'done' when satisfied); fails if a watched child exits non-zero meanwhile."""
    got: list = []
    satisfied: list[bool] = []

    def take(child: Child, ev: dict) -> None:
        got.append((child, ev))
        if want(child, ev, got):
            satisfied.append(True)

    try:
        ok = sup.wait_until(lambda: bool(satisfied), timeout, take, watch=watch)
    except ChildExited as e:
        raise PointError(f"{e.child.name} exited with {e.code} while waiting for "
                         f"{what}: {e.child.last_error()} (log: {e.child.log_path})") from None
    if not ok:
        raise PointError(f"timed out after {timeout:.0f} s waiting for {what}")
    return got
