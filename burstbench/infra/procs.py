"""Child processes the harness starts, and the guarantee that it stops every one of them.

Each child runs in its own session (its own process group, so it can be stopped as a group
by its PID), gets SIGKILL from the kernel if the harness dies (PR_SET_PDEATHSIG), has its
stdout read as JSON lines into one event queue and its stderr written to a log file. Exit
status and resource usage come from ``wait4``: CPU seconds and peak RSS are the kernel's,
not a sampler's guess.
"""

from __future__ import annotations

import ctypes
import json
import os
import pwd
import queue
import resource
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

from burstbench.infra import sampling

_PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True)


# What a child may open: thousands of queues and connections need file descriptors. Root
# raises the hard limit too, to the kernel's ceiling (fs.nr_open) or this, whichever is lower.
NOFILE_WANTED = 1 << 20


def _nofile_target() -> int:
    """The open-files limit children get: the hard limit, raised when this process may raise
    it (root with CAP_SYS_RESOURCE: a container's root often lacks it). Tried on the harness
    itself, whose own limit may as well be as high."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if os.geteuid() != 0:
        return hard
    try:
        ceiling = int(Path("/proc/sys/fs/nr_open").read_text())
    except (OSError, ValueError):
        return hard
    want = max(hard, min(NOFILE_WANTED, ceiling))
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, want))
    except (ValueError, OSError):
        return hard  # not allowed to raise the maximum
    return want


_NOFILE = _nofile_target()


def die_with_parent() -> None:  # runs in the child between fork and exec
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (_NOFILE, _NOFILE))
    except (ValueError, OSError):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft < hard:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def limits() -> dict:
    """The limits children run with (recorded with every result): open files (raised by the
    harness, see die_with_parent), processes and threads of the user, the kernel's ceilings
    on threads and process ids (each thread takes one), and the local ports a host has for
    connections to one address."""
    _, nproc = resource.getrlimit(resource.RLIMIT_NPROC)
    out = {"nofile": _NOFILE, "nproc": nproc}
    for key, path in (("threads_max", "/proc/sys/kernel/threads-max"),
                      ("pid_max", "/proc/sys/kernel/pid_max")):
        try:
            out[key] = int(Path(path).read_text())
        except (OSError, ValueError):
            pass
    try:
        lo, hi = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
        out["local_ports"] = hi - lo + 1
    except (OSError, ValueError):
        pass
    return out


def popen_ids(user: str | None) -> dict:
    """subprocess.Popen keyword arguments that run a child as ``user`` (none for None)."""
    if user is None:
        return {}
    pw = pwd.getpwnam(user)
    return {"user": pw.pw_uid, "group": pw.pw_gid,
            "extra_groups": os.getgrouplist(pw.pw_name, pw.pw_gid)}


class Interrupted(Exception):
    """The harness received SIGINT or SIGTERM."""

    def __init__(self, signum: int):
        super().__init__(f"interrupted by {signal.Signals(signum).name}")
        self.signum = signum


class ChildExited(RuntimeError):
    """A child the caller watched exited with a non-zero code while it waited."""

    def __init__(self, child: Child, code: int | None):
        super().__init__(f"{child.name} exited with {code}: "
                         f"{child.last_error() or 'no message'} (log: {child.log_path})")
        self.child = child
        self.code = code


@dataclass
class Usage:
    """What a child used, from the kernel (wait4) and from /proc samples."""

    cpu_s: float = 0.0
    max_rss_mb: float = 0.0
    max_open_files: int = 0
    max_threads: int = 0


@dataclass
class Child:
    name: str
    argv: list[str]
    popen: subprocess.Popen
    log_path: Path
    role: str = ""
    # started through an SSH launcher: the program runs on another host, ``popen`` is the
    # local ssh client, and what the program used arrives in its ``remote_exit`` line
    remote: bool = False
    returncode: int | None = None
    usage: Usage = field(default_factory=Usage)
    stderr_tail: list[str] = field(default_factory=list)
    _err_thread: threading.Thread | None = field(default=None, repr=False)

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.returncode is None

    def send(self, line: str) -> None:
        """Write one control line to the child's stdin (ignored if it has gone)."""
        try:
            self.popen.stdin.write((line + "\n").encode())
            self.popen.stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            pass

    def close_stdin(self) -> None:
        try:
            self.popen.stdin.close()
        except (BrokenPipeError, OSError):
            pass

    def cpu_seconds_now(self) -> float | None:
        """User+system CPU seconds so far of the child and every live process under it (a
        client's browser, a database's backends), read from /proc while the child runs (None
        for a program on another host: the local ssh client's figure is not the program's)."""
        return None if self.remote else sampling.tree_cpu_seconds(self.pid)

    def status_now(self) -> dict:
        """Its resident memory (MiB) and threads now, from /proc (empty when it is gone or
        runs on another host)."""
        return {} if self.remote or not self.alive() else sampling.status(self.pid)

    def last_error(self) -> str:
        for line in reversed(self.stderr_tail):
            if line.startswith("error"):
                return line
        return self.stderr_tail[-1] if self.stderr_tail else ""


class Supervisor:
    """Starts children and stops all of them, in reverse order, whatever happens.

    Use as a context manager. Events from every child arrive on ``events`` as
    ``(child, dict)``; a child's exit arrives as ``(child, {"event": "exit", "code": N})``.
    """

    def __init__(self, log_dir: Path):
        self.log_dir = Path(log_dir)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.children: list[Child] = []
        self.events: queue.Queue = queue.Queue()
        self._sampler_stop = threading.Event()
        self._sampler = threading.Thread(target=self._sample, name="proc-sampler", daemon=True)
        self._sampler.start()

    # -- starting --------------------------------------------------------------------------
    def start(
        self,
        name: str,
        argv: list[str],
        *,
        role: str = "",
        cwd: Path | None = None,
        env: dict | None = None,
        user: str | None = None,
        remote: bool = False,
    ) -> Child:
        """Start ``argv`` as child ``name``; ``user`` runs it as that account (needs root);
        ``remote``: ``argv`` is an ``ssh`` command line from ``burstbench.infra.launch.Ssh``."""
        # Popen switches ids before preexec_fn runs: the parent-death signal, which the
        # kernel clears on a uid change, is set after the switch and survives it
        ids = popen_ids(user)
        log_path = self.log_dir / f"{name}.log"
        log = open(log_path, "ab")  # noqa: SIM115 - the child's log, closed when it ends
        try:
            popen = subprocess.Popen(
                argv,
                cwd=cwd,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                preexec_fn=die_with_parent,  # noqa: PLW1509 - children die with the harness
                **ids,
            )
        except FileNotFoundError as e:
            log.close()
            raise RuntimeError(f"cannot start {name}: {e.filename} not found") from e
        child = Child(name=name, argv=argv, popen=popen, log_path=log_path, role=role,
                      remote=remote)
        self.children.append(child)
        child._err_thread = threading.Thread(
            target=self._read_stderr, args=(child, log), daemon=True, name=f"err-{name}"
        )
        child._err_thread.start()
        threading.Thread(
            target=self._read_stdout, args=(child,), daemon=True, name=f"out-{name}"
        ).start()
        return child

    def _read_stdout(self, child: Child) -> None:
        remote_usage = None
        for raw in child.popen.stdout:
            line = raw.decode(errors="replace").strip()
            if not line:
                continue
            try:
                ev = json.loads(line)
                if not isinstance(ev, dict):
                    raise ValueError  # noqa: TRY004 - caught just below: not an event line
            except ValueError:
                ev = {"event": "text", "text": line}
            ev["_rx_ns"] = time.time_ns()  # when the harness read it (e.g. a burst's confirmation)
            if child.remote and ev.get("event") == "remote_exit":
                remote_usage = ev  # the program's own wait4, on its host
                continue
            self.events.put((child, ev))
        child.popen.stdout.close()
        # stdout closed: reap the child here, the only place that waits on it
        _, status, ru = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        child.popen.returncode = child.returncode
        child.usage.cpu_s = ru.ru_utime + ru.ru_stime
        child.usage.max_rss_mb = max(child.usage.max_rss_mb, ru.ru_maxrss / 1024.0)
        if child.remote:
            child.usage.cpu_s = float(remote_usage.get("cpu_s", 0.0)) if remote_usage else 0.0
            child.usage.max_rss_mb = (float(remote_usage.get("max_rss_mb", 0.0))
                                      if remote_usage else 0.0)
        child._err_thread.join(timeout=2)  # so the exit event comes with the last stderr lines
        child.close_stdin()
        self.events.put((child, {"event": "exit", "code": child.returncode}))

    def _read_stderr(self, child: Child, log) -> None:
        with log:
            for raw in child.popen.stderr:
                log.write(raw)
                log.flush()
                line = raw.decode(errors="replace").strip()
                if line:
                    child.stderr_tail.append(line)
                    del child.stderr_tail[:-20]
            child.popen.stderr.close()

    def _sample(self) -> None:
        while not self._sampler_stop.wait(0.5):
            for child in list(self.children):
                if not child.alive() or child.remote:
                    continue
                child.usage.max_open_files = max(child.usage.max_open_files,
                                                 sampling.open_files(child.pid))
                threads = child.status_now().get("threads", 0)
                child.usage.max_threads = max(child.usage.max_threads, threads)

    # -- waiting ---------------------------------------------------------------------------
    def wait_event(self, timeout: float) -> tuple[Child, dict] | None:
        try:
            return self.events.get(timeout=max(0.0, timeout))
        except queue.Empty:
            return None

    def wait_until(
        self,
        done: Callable[[], bool],
        timeout: float,
        on_event: Callable[[Child, dict], None] | None = None,
        *,
        watch: Iterable[Child] = (),
        poll: float = 0.5,
    ) -> bool:
        """Hand every event to ``on_event`` until ``done()`` holds (True) or ``timeout``
        seconds pass (False): the one wait of the harness. A child of ``watch`` that exits
        with a non-zero code raises ``ChildExited``; ``on_event`` may raise to end the wait
        on anything else. ``done()`` is asked again at least every ``poll`` seconds."""
        deadline = time.monotonic() + timeout
        watched = {id(c) for c in watch}
        while not done():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            item = self.wait_event(min(left, poll))
            if item is None:
                continue
            child, ev = item
            if ev.get("event") == "exit" and id(child) in watched and ev.get("code") != 0:
                raise ChildExited(child, ev.get("code"))
            if on_event is not None:
                on_event(child, ev)
        return True

    def first_event(self, child: Child, kinds: tuple[str, ...], timeout: float) -> dict | None:
        """``child``'s first event whose kind is one of ``kinds``, or its exit (``{"event":
        "exit", "code": N}``), within ``timeout`` seconds; None when neither came. Other
        children's events taken meanwhile go back to the front of the queue, in their order."""
        got: list[dict] = []
        others: list[tuple[Child, dict]] = []

        def take(who: Child, e: dict) -> None:
            if who is not child:
                others.append((who, e))
            elif e.get("event") in kinds or e.get("event") == "exit":
                got.append(e)

        try:
            self.wait_until(lambda: bool(got), timeout, take, poll=timeout)
        finally:
            self.put_back(others)
        return got[0] if got else None

    def put_back(self, items: list[tuple[Child, dict]]) -> None:
        """Return events taken out of turn to the front of the queue, in their order."""
        if items:
            with self.events.mutex:
                self.events.queue.extendleft(reversed(items))
                self.events.not_empty.notify_all()

    # -- stopping --------------------------------------------------------------------------
    def stop(self, child: Child, grace: float = 10.0) -> None:
        """SIGTERM the child's process group, then SIGKILL after ``grace`` seconds.

        A program on another host first gets the end of its stdin (the contract's stop, and
        the broker launcher's); SIGTERM to its ssh client then ends the session, which ends
        the program (``burstbench/infra/remote_exec.py``)."""
        if child.alive() and child.remote:
            child.close_stdin()
            deadline = time.monotonic() + grace
            while child.alive() and time.monotonic() < deadline:
                time.sleep(0.02)
        if child.alive():
            self._signal(child, signal.SIGTERM)
            deadline = time.monotonic() + grace
            while child.alive() and time.monotonic() < deadline:
                time.sleep(0.02)
            if child.alive():
                self._signal(child, signal.SIGKILL)
                deadline = time.monotonic() + 5
                while child.alive() and time.monotonic() < deadline:
                    time.sleep(0.02)
        child.close_stdin()

    def kill(self, child: Child) -> None:
        self._signal(child, signal.SIGKILL)

    @staticmethod
    def _signal(child: Child, sig: int) -> None:
        try:
            os.killpg(child.pid, sig)  # the child leads its own group: pgid == its pid
        except ProcessLookupError:
            pass

    def stop_all(self, grace: float = 10.0) -> None:
        for child in reversed(self.children):
            self.stop(child, grace)
        self._sampler_stop.set()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.stop_all()


def install_signal_handlers() -> None:
    """Turn SIGINT and SIGTERM into ``Interrupted`` so ``finally`` blocks stop children."""

    def handler(signum, _frame):
        # a second signal while stopping must not interrupt the stopping
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise Interrupted(signum)

    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)


def dump_java_threads(sup: Supervisor) -> None:
    """A stall: every Java process we started (brokers, clients) appends its threads to
    NAME.threads.txt next to its log, so that what was blocked can be read afterwards (the
    first stall of a point is the telling one: later dumps are appended, never over it)."""
    jcmd = shutil.which("jcmd")
    if not jcmd:
        return
    for child in sup.children:
        if not child.alive() or not any(Path(a).name == "java" for a in child.argv[:8]):
            continue
        out = child.log_path.with_suffix(".threads.txt")
        try:
            with open(out, "a") as f:
                f.write(f"==== {time.strftime('%H:%M:%S')} stall: jcmd {child.pid} Thread.print\n")
                f.flush()
                subprocess.run([jcmd, str(child.pid), "Thread.print"], stdout=f,
                               stderr=subprocess.STDOUT, timeout=20, check=False)
        except (OSError, subprocess.TimeoutExpired) as e:
            out.write_text(f"jcmd failed: {e}\n")
