"""Network namespaces as broker hosts: one namespace per host, all joined by a bridge.

A ``Network`` makes a bridge namespace ``bb<tag>br`` holding ``br0`` and, per host, a namespace
``bb<tag><host>`` whose ``eth0`` is one end of a veth pair; the other end (``vh<i>``) is a port
of ``br0``. Hosts get ``10.<a>.<b>.<i>/24`` (``a.b`` drawn at random per Network). Everything
lives inside those namespaces: the harness's own namespace gets no interface, address or route,
so it cannot reach the hosts, and the hosts cannot reach anything but each other.

Named namespaces outlive the process that made them, so every Network is recorded in a state
file (``/run/burstbench/netns/<tag>.json``: owner PID and start time, names, watchdog PID) and
watched by a small process in its own session that removes the namespaces when the owner is
gone, even after SIGKILL. ``python -m burstbench.infra.netns cleanup`` removes what dead owners left
if a watchdog was killed too; it only ever touches namespaces named in a state file.

Kernel facts this was built against: ``tbf`` rate limits work; ``netem`` is not compiled in
(``CONFIG_NET_SCH_NETEM`` unset: "Specified qdisc kind is unknown"), so there is no delay
emulation; ``delay=`` is checked against the running kernel and refused with that reason.
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import json
import os
import random
import re
import secrets
import select
import shutil
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Self

ROOT = Path(__file__).resolve().parents[2]
STATE_DIRS = (Path("/run/burstbench/netns"), Path("/tmp/burstbench-netns"))
NETNS_DIR = Path("/run/netns")
NO_NETEM = "this kernel has no netem: delay emulation is not available (only --link-rate with tbf)"
_TAG = re.compile(r"^[a-z0-9]{1,16}$")
_HOST = re.compile(r"^[a-z][a-z0-9]{0,11}$")
_RATE = re.compile(r"^(\d+(?:\.\d+)?)([kmgt]?)(bit|bps)$")
_CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


class NetnsUnavailable(RuntimeError):
    """Network namespaces cannot be used here (not root, no ``ip``, or the kernel refuses)."""


class DelayUnavailable(NetnsUnavailable, ValueError):
    """Link delay was asked for, but the kernel has no netem."""


# -- small helpers ---------------------------------------------------------------------------
def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    r = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30, check=False)
    if check and r.returncode != 0:
        raise NetnsUnavailable(f"ip {' '.join(args)}: {_first_line(r.stderr)}")
    return r


def _tc(*args: str) -> None:
    r = subprocess.run(["tc", *args], capture_output=True, text=True, timeout=30, check=False)
    if r.returncode != 0:
        raise NetnsUnavailable(f"tc {' '.join(args)}: {_first_line(r.stderr)}")


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0] if lines else "failed"


def _start_ticks(pid: int) -> int | None:
    """The process's start time in clock ticks (with the PID, an identity that survives reuse)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        if fields[0] == "Z":
            return None
        return int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def _alive(pid: int, ticks: int | None) -> bool:
    now = _start_ticks(pid)
    return now is not None and (ticks is None or now == ticks)


def _state_dir() -> Path:
    for d in STATE_DIRS:
        try:
            d.mkdir(parents=True, exist_ok=True)
            if os.access(d, os.W_OK):
                return d
        except OSError:
            continue
    raise NetnsUnavailable(f"cannot write a state directory ({', '.join(map(str, STATE_DIRS))})")


def _write_state(path: Path, state: dict) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(json.dumps(state))
    os.replace(tmp, path)


def ns_exists(name: str) -> bool:
    return (NETNS_DIR / name).exists()


def _delete_namespaces(names: list[str]) -> None:
    """Kill whatever still runs inside (it can only have been started there by us) and delete.

    A process left inside would keep the namespace, and its veth, alive after the name is gone.
    """
    for name in names:
        if not ns_exists(name):
            continue
        r = _ip("netns", "pids", name, check=False)
        for pid in r.stdout.split():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        _ip("netns", "del", name, check=False)


def parse_rate(rate: str) -> float:
    """A tc rate (``10mbit``, ``500kbit``, ``2mbps``) in bytes per second (k = 1000, as tc)."""
    m = _RATE.match(rate.strip().lower())
    if not m:
        raise ValueError(f"bad link rate {rate!r} (expected e.g. 10mbit, 500kbit, 1gbit, 2mbps)")
    value = float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}[m.group(2)]
    bps = value / 8 if m.group(3) == "bit" else value
    if bps < 1000:
        raise ValueError(f"link rate {rate!r} is too low (minimum 8kbit)")
    return bps


@functools.lru_cache(maxsize=1)
def netem_missing() -> str | None:
    """None if the running kernel has netem, else why not (tried in a throwaway namespace)."""
    if not shutil.which("unshare") or not shutil.which("tc"):
        return "cannot check for netem: needs unshare and tc"
    # an anonymous namespace dies with the command: nothing to clean up
    r = subprocess.run(
        ["unshare", "--net", "tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms"],
        capture_output=True,
        text=True,
        timeout=30, check=False,
    )
    if r.returncode == 0:
        return None
    if "unknown" in r.stderr.lower():
        return NO_NETEM
    return f"netem could not be tried: {_first_line(r.stderr)}"


@functools.lru_cache(maxsize=1)
def available() -> str | None:
    """None if network namespaces can be used here, else the reason in one line."""
    if os.geteuid() != 0:
        return f"network namespaces need root (running as uid {os.geteuid()})"
    for tool in ("ip", "tc"):
        if not shutil.which(tool):
            return f"no `{tool}` command (iproute2) on PATH"
    name = f"bb{secrets.token_hex(3)}pr"
    try:
        path = _state_dir() / f"probe-{name}.json"
    except NetnsUnavailable as e:
        return str(e)
    _write_state(path, {"owner": os.getpid(), "owner_start": _start_ticks(os.getpid()),
                        "names": [name], "watchdog": None})  # fmt: skip
    try:
        _ip("netns", "add", name)
        _ip("-n", name, "link", "add", "v0", "type", "veth", "peer", "name", "v1")
        _ip("-n", name, "link", "add", "b0", "type", "bridge")
        return None
    except NetnsUnavailable as e:
        return f"cannot make network namespaces here: {e}"
    finally:
        _delete_namespaces([name])
        path.unlink(missing_ok=True)


def in_namespace(name: str, fn):
    """Run ``fn`` on a fresh thread that has joined namespace ``name`` and return its result.

    setns(CLONE_NEWNET) changes only the calling thread, and a socket stays in the namespace
    it was made in, so the rest of the process is untouched.
    """
    out: dict = {}

    def run() -> None:
        try:
            fd = os.open(NETNS_DIR / name, os.O_RDONLY | os.O_CLOEXEC)
            try:
                if _libc.setns(fd, _CLONE_NEWNET) != 0:
                    err = ctypes.get_errno()
                    raise OSError(err, f"setns {name}: {os.strerror(err)}")
            finally:
                os.close(fd)
            out["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - handed to the caller's thread
            out["error"] = e

    t = threading.Thread(target=run, name=f"netns-{name}", daemon=True)
    t.start()
    t.join()
    if "error" in out:
        raise out["error"]
    return out["value"]


# -- the network -----------------------------------------------------------------------------
class Network:
    """Hosts in their own network namespaces on one bridge. Use as a context manager.

    ``tag`` (``[a-z0-9]{1,16}``) makes the names unique; ``subnet`` ``(a, b)`` fixes the
    addresses to ``10.a.b.0/24`` (default: drawn at random); ``hosts`` are short names
    (``[a-z][a-z0-9]{0,11}``, not ``br``). ``link_rate`` (a tc rate such as ``10mbit``) limits
    each host's link in both directions with tbf. ``delay`` needs netem and is refused on a
    kernel without it (``DelayUnavailable``). ``multicast`` routes 224.0.0.0/4 via each host's
    link (and turns multicast on for ``lo``) so multicast discovery works between hosts.

    Stop the processes running inside (e.g. leave the Supervisor's ``with`` first) before
    ``remove()``: whatever is still inside then is killed with SIGKILL.
    """

    def __init__(
        self,
        tag: str,
        hosts: list[str],
        link_rate: str | None = None,
        delay: str | None = None,
        multicast: bool = False,
        subnet: tuple[int, int] | None = None,
    ):
        if not _TAG.match(tag):
            raise ValueError(f"network tag must match [a-z0-9]{{1,16}}: {tag!r}")
        hosts = list(hosts)
        if not hosts or len(hosts) > 250:
            raise ValueError(f"a network needs 1..250 hosts, not {len(hosts)}")
        for h in hosts:
            if not _HOST.match(h) or h == "br":
                raise ValueError(f"host name must match [a-z][a-z0-9]{{0,11}} and not be br: {h!r}")
        if len(set(hosts)) != len(hosts):
            raise ValueError(f"host names repeat: {hosts}")
        self.rate_bps = parse_rate(link_rate) if link_rate else None
        if delay:
            why = available() or netem_missing()
            if why:
                raise DelayUnavailable(why)
        self.tag = tag
        self.hosts = hosts
        self.link_rate = link_rate
        self.delay = delay
        self.multicast = multicast
        self.bridge_ns = f"bb{tag}br"
        # the addresses exist only inside this Network's namespaces, so two Networks with
        # the same subnet do not meet; a fixed one keeps addresses the same from run to run
        if subnet is not None and not (1 <= subnet[0] <= 254 and 0 <= subnet[1] <= 255):
            raise ValueError(f"subnet must be (1..254, 0..255): {subnet!r}")
        self.subnet = subnet or (random.randint(1, 254), random.randint(0, 255))
        self._index = {h: i + 1 for i, h in enumerate(hosts)}
        self._by_addr = {self.address(h): h for h in hosts}
        self._state_path: Path | None = None
        self._watchdog: subprocess.Popen | None = None
        self._created = False

    # -- names and addresses -----------------------------------------------------------------
    def namespace(self, host: str) -> str:
        """The namespace name of ``host``."""
        self._check_host(host)
        return f"bb{self.tag}{host}"

    @property
    def names(self) -> list[str]:
        """Every namespace this Network makes, bridge first."""
        return [self.bridge_ns] + [self.namespace(h) for h in self.hosts]

    def address(self, host: str) -> str:
        """The IPv4 address of ``host`` (exists only inside this Network's namespaces)."""
        a, b = self.subnet
        return f"10.{a}.{b}.{self._index_of(host)}"

    def wrap(self, host: str) -> list[str]:
        """The command prefix that runs a program on ``host``."""
        return ["ip", "netns", "exec", self.namespace(host)]

    def _index_of(self, host: str) -> int:
        self._check_host(host)
        return self._index[host]

    def _check_host(self, host: str) -> None:
        if host not in self._index:
            raise KeyError(f"no host {host!r} in network {self.tag} (have {self.hosts})")

    def _host_for(self, host_or_address: str) -> str:
        return self._by_addr.get(host_or_address, host_or_address)

    # -- doing things inside -----------------------------------------------------------------
    def socket(self, host: str, kind: int = socket.SOCK_STREAM) -> socket.socket:
        """An IPv4 socket made inside ``host``'s namespace (the caller's thread stays put)."""
        ns = self.namespace(self._host_for(host))
        return in_namespace(ns, lambda: socket.socket(socket.AF_INET, kind))

    def probe(self, host: str, port: int, timeout: float = 0.5, to: str | None = None) -> bool:
        """Whether a TCP connection made inside ``host`` to ``port`` is accepted.

        The target is ``host``'s own address unless ``to`` names another host (or address).
        ``host`` may also be one of this Network's addresses, so ``probe=net.probe`` fits
        ``brokers.start`` for a broker bound to that address.
        """
        host = self._host_for(host)
        target = self.address(host) if to is None else to
        if target in self._index:
            target = self.address(target)
        try:
            with self.socket(host) as s:
                s.settimeout(timeout)
                s.connect((target, port))
            return True
        except OSError:
            return False

    def cut(self, host: str) -> None:
        """Take ``host``'s link down at the bridge: its packets vanish, like a pulled cable."""
        _ip("-n", self.bridge_ns, "link", "set", f"vh{self._index_of(host)}", "down")

    def restore(self, host: str) -> None:
        """Bring ``host``'s link back up after ``cut``."""
        _ip("-n", self.bridge_ns, "link", "set", f"vh{self._index_of(host)}", "up")

    # -- life --------------------------------------------------------------------------------
    def create(self) -> None:
        """Make the namespaces, the bridge, the links, addresses, rate limits and routes.

        The watchdog starts first, so a harness killed at any point after it leaves nothing.
        Raises ``NetnsUnavailable`` (having removed whatever it made) if something fails.
        """
        if self._created:
            return
        why = available()
        if why:
            raise NetnsUnavailable(why)
        for name in self.names:
            if ns_exists(name):
                raise NetnsUnavailable(f"namespace {name} already exists (tag {self.tag} in use)")
        self._created = True
        try:
            self._start_watchdog()
            self._build()
        except BaseException:
            self.remove()
            raise

    def _build(self) -> None:
        br = self.bridge_ns
        _ip("netns", "add", br)
        _ip("-n", br, "link", "set", "lo", "up")
        _ip("-n", br, "link", "add", "br0", "type", "bridge")
        if self.multicast:
            # no IGMP querier here: without snooping the bridge floods multicast to all ports
            _ip("-n", br, "link", "set", "br0", "type", "bridge", "mcast_snooping", "0")
        _ip("-n", br, "link", "set", "br0", "up")
        a, b = self.subnet
        for host in self.hosts:
            ns, i = self.namespace(host), self._index[host]
            port = f"vh{i}"
            _ip("netns", "add", ns)
            _ip("-n", ns, "link", "set", "lo", "up")
            # both ends are born inside our namespaces: the harness's own namespace never
            # sees them
            _ip("-n", br, "link", "add", port, "type", "veth", "peer", "name", "eth0",
                "netns", ns)  # fmt: skip
            _ip("-n", br, "link", "set", port, "master", "br0")
            _ip("-n", br, "link", "set", port, "up")
            _ip("-n", ns, "addr", "add", f"10.{a}.{b}.{i}/24", "dev", "eth0")
            _ip("-n", ns, "link", "set", "eth0", "up")
            if self.multicast:
                _ip("-n", ns, "link", "set", "lo", "multicast", "on")
                _ip("-n", ns, "route", "add", "224.0.0.0/4", "dev", "eth0")
            if self.rate_bps or self.delay:
                # each direction is shaped on its sending side: eth0 out of the host,
                # the bridge port into it
                self._shape(ns, "eth0")
                self._shape(br, port)

    def _shape(self, ns: str, dev: str) -> None:
        parent = ["root"]
        if self.delay:  # only reached on a kernel with netem (checked in __init__)
            _tc("-n", ns, "qdisc", "add", "dev", dev, "root", "handle", "1:", "netem",
                "delay", self.delay)  # fmt: skip
            parent = ["parent", "1:1"]
        if self.rate_bps:
            # burst: 4 ms at the rate but at least 10 full frames, or tbf cannot reach it
            burst = max(int(self.rate_bps * 0.004), 15140)
            _tc("-n", ns, "qdisc", "add", "dev", dev, *parent, "tbf", "rate", self.link_rate,
                "burst", str(burst), "latency", "100ms")  # fmt: skip

    def _start_watchdog(self) -> None:
        self._state_path = _state_dir() / f"{self.tag}.json"
        me = os.getpid()
        state = {"tag": self.tag, "owner": me, "owner_start": _start_ticks(me),
                 "names": self.names, "watchdog": None}  # fmt: skip
        _write_state(self._state_path, state)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}  # fmt: skip
        # its own session and no parent-death signal: it must outlive us to clean up after us
        wd = subprocess.Popen(
            [sys.executable, "-m", "burstbench.infra.netns", "watchdog", "--state",
             str(self._state_path)],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self._watchdog = wd
        state["watchdog"] = wd.pid
        _write_state(self._state_path, state)
        ready, _, _ = select.select([wd.stdout], [], [], 15)
        line = wd.stdout.readline() if ready else b""
        wd.stdout.close()
        if line.strip() != b"watching":
            raise NetnsUnavailable(f"the namespace watchdog did not start (exit {wd.poll()})")

    def remove(self) -> None:
        """Delete every namespace this Network made (their veths and bridge go with them) and
        stop the watchdog. Idempotent."""
        if not self._created:
            return
        _delete_namespaces(self.names)
        if self._state_path is not None:
            self._state_path.unlink(missing_ok=True)
        wd, self._watchdog = self._watchdog, None
        if wd is not None:
            if wd.poll() is None:
                try:
                    wd.send_signal(signal.SIGTERM)
                except ProcessLookupError:
                    pass
            try:
                wd.wait(timeout=5)
            except subprocess.TimeoutExpired:
                wd.kill()
                wd.wait(timeout=5)
        self._created = False

    def __enter__(self) -> Self:
        self.create()
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


# -- the watchdog and the cleanup command -----------------------------------------------------
def _load_state(path: Path) -> dict | None:
    try:
        state = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    names = state.get("names")
    if not isinstance(names, list) or not isinstance(state.get("owner"), int):
        return None
    # a state file only ever names our own kind of namespace; anything else is not ours
    state["names"] = [n for n in names if isinstance(n, str) and re.match(r"^bb[a-z0-9]+$", n)]
    return state


def watchdog(state_path: Path, poll: float = 0.2) -> int:
    """Remove the namespaces named in ``state_path`` once their owner process has gone.

    Exits quietly when the state file disappears (the owner's ``remove()`` did the work).
    SIGTERM means the owner is removing them: clean up (idempotent) and exit.
    """
    state = _load_state(state_path)
    if state is None:
        return 1
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C meant for the harness
    try:
        sys.stdout.write("watching\n")
        sys.stdout.flush()
    except OSError:  # the owner died before reading it: it is gone all the same
        pass
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # the owner has closed its end of the pipe
    owner, ticks = state["owner"], state.get("owner_start")
    while not stop.wait(poll):
        if not state_path.exists():
            return 0
        if not _alive(owner, ticks):
            break
    _delete_namespaces(state["names"])
    state_path.unlink(missing_ok=True)
    return 0


def cleanup(verbose: bool = True) -> list[str]:
    """Remove namespaces recorded by owners that are dead. Returns the names removed."""
    removed = []
    for d in STATE_DIRS:
        if not d.is_dir():
            continue
        for path in sorted(d.glob("*.json")):
            state = _load_state(path)
            if state is None:
                continue
            if _alive(state["owner"], state.get("owner_start")):
                continue
            present = [n for n in state["names"] if ns_exists(n)]
            _delete_namespaces(present)
            removed += present
            path.unlink(missing_ok=True)
            wd = state.get("watchdog")
            if verbose:
                print(
                    f"{path.name}: owner {state['owner']} is gone; removed "
                    f"{', '.join(present) or 'nothing'}"
                    + (f" (watchdog {wd} still running)" if wd and _alive(wd, None) else "")
                )
    return removed


def main(argv: list[str] | None = None) -> int:
    """``python -m burstbench.infra.netns cleanup`` (stale namespaces of dead owners) or
    ``watchdog --state FILE`` (started by ``Network.create``)."""
    ap = argparse.ArgumentParser(prog="python -m burstbench.infra.netns")
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("watchdog", help="remove a Network's namespaces when its owner dies")
    w.add_argument("--state", required=True, type=Path)
    sub.add_parser("cleanup", help="remove namespaces left by burstbench processes now dead")
    sub.add_parser("check", help="say whether network namespaces (and netem) are usable here")
    args = ap.parse_args(argv)
    if args.cmd == "watchdog":
        return watchdog(args.state)
    if args.cmd == "cleanup":
        if os.geteuid() != 0:
            print("error: cleanup needs root", file=sys.stderr)
            return 1
        removed = cleanup()
        print(f"removed {len(removed)} namespace(s)")
        return 0
    why = available()
    print(why or "network namespaces: usable")
    print(netem_missing() or "netem: available")
    return 1 if why else 0


if __name__ == "__main__":
    raise SystemExit(main())
