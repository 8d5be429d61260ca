"""What the harness runs at the far end of an SSH session (standard library only).

``run [--cwd DIR] -- ARGV...`` starts ARGV and ties its life to the SSH session: the session's
stdin, stdout and stderr are the program's own (the client contract's JSON lines and the gate
travel unchanged), and when the session ends — the harness stopped it, the harness was
SIGKILLed, the network went — the program's process group gets SIGTERM, then SIGKILL.

Without a terminal, sshd sends no SIGHUP when a connection drops: a program would run on with
closed pipes. Here this process asks the kernel for SIGTERM when its parent, the sshd session
process that ran it, exits (``PR_SET_PDEATHSIG``), and the program asks for SIGKILL when this
process dies. After the program exits, one line ``{"event": "remote_exit", ...}`` on stdout
carries its exit code and what it used (``wait4``: CPU seconds, peak RSS), measured on its
own host.

``run --relay`` is for sessions whose end does not end this process's parent (``kubectl exec``:
the container runtime stays): this process carries stdin to the program itself, and when the
session's stdin ends it closes the program's (the contract's stop), then after a grace period
sends SIGTERM and SIGKILL.

``clock`` answers the harness's clock probes: for each line read it writes
``T2 T3`` — the wall clock in ns when the line arrived and when the answer left (NTP's
receive and transmit timestamps).
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import time

_PR_SET_PDEATHSIG = 1
GRACE_S = 10.0


def _pdeathsig(sig: int) -> None:
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, sig, 0, 0, 0)


def _child_setup() -> None:  # between fork and exec, in the program
    _pdeathsig(signal.SIGKILL)


def run(argv: list[str], cwd: str | None, relay: bool = False) -> int:
    parent = os.getppid()
    _pdeathsig(signal.SIGTERM)
    if os.getppid() != parent or (parent == 1 and not relay):  # the session ended before we asked
        return 129
    if cwd:
        os.makedirs(cwd, exist_ok=True)
    try:
        proc = subprocess.Popen(argv, cwd=cwd, start_new_session=True,
                                preexec_fn=_child_setup,  # noqa: PLW1509 - the program dies with its ssh session
                                stdin=subprocess.PIPE if relay else None)
    except OSError as e:
        print(f"error: cannot start {argv[0]}: {e}", file=sys.stderr)
        return 127

    def stop(_signum, _frame):
        # the session is gone (or the harness asked): the program stops as after SIGTERM,
        # then is killed; nothing of it outlives the session
        for sig, wait in ((signal.SIGTERM, GRACE_S), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                break
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline:
                if os.waitpid(proc.pid, os.WNOHANG)[0]:
                    os._exit(143)
                time.sleep(0.02)
        os._exit(143)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGHUP, stop)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if relay:
        import threading
        threading.Thread(target=_relay, args=(proc,), daemon=True).start()
    else:
        os.close(0)  # the program holds the session's stdin; its end of file is the program's
    _, status, ru = os.wait4(proc.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    line = {"event": "remote_exit", "code": code, "pid": proc.pid,
            "cpu_s": round(ru.ru_utime + ru.ru_stime, 3),
            "max_rss_mb": round(ru.ru_maxrss / 1024.0, 1)}
    try:
        sys.stdout.write(json.dumps(line) + "\n")
        sys.stdout.flush()
    except OSError:
        pass
    return code if code >= 0 else 128 - code


def _relay(proc: subprocess.Popen) -> None:
    """The session's stdin to the program's; at its end, the program stops or is stopped."""
    src = sys.stdin.buffer.raw
    while True:
        try:
            data = src.read(65536)
        except OSError:
            data = b""
        if not data:
            break
        try:
            proc.stdin.write(data)
            proc.stdin.flush()
        except (BrokenPipeError, OSError):
            break
    try:
        proc.stdin.close()
    except OSError:
        pass
    deadline = time.monotonic() + GRACE_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return
        time.sleep(0.05)
    os.kill(os.getpid(), signal.SIGTERM)  # the handler stops the program's group


def clock() -> int:
    out = sys.stdout.buffer
    for _line in sys.stdin.buffer:
        t2 = time.time_ns()
        out.write(b"%d %d\n" % (t2, time.time_ns()))
        out.flush()
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["clock"]:
        return clock()
    if argv[:1] != ["run"]:
        print("error: usage: remote_exec.py run [--cwd DIR] -- ARGV... | clock", file=sys.stderr)
        return 2
    global GRACE_S
    usage = "error: usage: remote_exec.py run [--relay] [--grace S] [--cwd DIR] -- ARGV..."
    rest, cwd, relay = argv[1:], None, False
    while rest and rest[0] != "--":
        if rest[0] == "--relay":
            relay, rest = True, rest[1:]
        elif rest[0] in ("--cwd", "--grace") and len(rest) >= 2:
            try:
                if rest[0] == "--cwd":
                    cwd = rest[1]
                else:
                    GRACE_S = float(rest[1])
            except ValueError:
                print(usage, file=sys.stderr)
                return 2
            rest = rest[2:]
        else:
            print(usage, file=sys.stderr)
            return 2
    if len(rest) < 2:
        print(usage, file=sys.stderr)
        return 2
    return run(rest[1:], cwd, relay)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
