"""A broker's JDBC database on the host the broker runs on (an SSH host).

``python -m burstbench.infra.dbserve KIND WORKDIR`` runs where the broker will: it starts a
throwaway ``KIND`` server (``postgres`` or ``mariadb``) with ``databases.start`` under its own
``Supervisor``, on a free loopback port of that host, and prints one JSON line
``{"event": "ready", "jdbc": {...}, "ready_s": S, "init_s": S}`` (the broker's store settings,
its URL on 127.0.0.1), and says so on stderr (the harness's log of it). At the end of its
stdin (the harness's stop, through ``remote_exec.py``), SIGTERM or SIGHUP it stops the server
and removes its data. A server that cannot start is one line ``{"event": "error", "message":
...}`` and exit 1.

The harness side is ``start``: it runs this through the host's launcher and waits for the line.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from pathlib import Path

KINDS = ("postgres", "mariadb")


def _say(event: dict) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def serve(kind: str, workdir: Path) -> int:
    from burstbench.infra import databases
    from burstbench.infra.procs import Supervisor

    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: stop.set())

    def stdin_ends() -> None:
        for _ in sys.stdin.buffer:
            pass
        stop.set()

    with Supervisor(workdir / "logs") as sup:
        try:
            db = databases.start(sup, kind, workdir)
        except databases.DatabaseError as e:
            _say({"event": "error", "message": str(e)})
            return 1
        try:
            _say({"event": "ready", "jdbc": db.jdbc(), "ready_s": round(db.ready_s, 3),
                  "init_s": round(db.init_s, 3)})
            print(f"{kind} ready on {db.host}:{db.port} in {db.ready_s:.1f} s "
                  f"(data {db.data_dir})", file=sys.stderr, flush=True)
            threading.Thread(target=stdin_ends, daemon=True).start()
            while not stop.wait(0.5):
                if not db.child.alive():
                    _say({"event": "error", "message": f"{kind} exited while in use"})
                    return 1
        finally:
            databases.stop(sup, db)
    return 0


def start(sup, launcher, kind: str, workdir: Path, name: str, timeout: float = 90.0):
    """Run ``dbserve`` for ``kind`` on ``launcher``'s host (``workdir`` as it maps there) under
    ``sup``; returns ``(child, jdbc settings)`` once ready. ``sup.stop(child)`` stops it."""
    from burstbench import paths
    from burstbench.infra.databases import DatabaseError

    argv = [str(paths.ROOT / ".venv" / "bin" / "python"), "-m", "burstbench.infra.dbserve",
            kind, str(workdir)]
    child = sup.start(name, launcher.command(argv, cwd=workdir), role="database", remote=True)
    got = sup.first_event(child, ("ready", "error"), timeout)
    if got is None:
        sup.stop(child)
        raise DatabaseError(f"{kind} on {launcher.name}: not ready in {timeout:.0f} s "
                            f"(log: {child.log_path})")
    if got["event"] != "ready":
        sup.stop(child)
        why = got.get("message") or f"exited with {got.get('code')} (log: {child.log_path})"
        raise DatabaseError(f"{kind} on {launcher.name}: {why} (a broker host with JDBC needs "
                            "the role `databases` too: ./bench setup --hosts)")
    return child, got["jdbc"]


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in KINDS:
        print(f"usage: python -m burstbench.infra.dbserve {{{','.join(KINDS)}}} WORKDIR",
              file=sys.stderr)
        return 2
    return serve(argv[0], Path(argv[1]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
