"""A small HTTP CONNECT proxy: how namespace hosts reach the package registries while
``./bench setup --hosts netns-ssh`` provisions them.

The namespace hosts have no route out of their bridge (``burstbench/infra/netns.py``), as hosts
behind a firewall often have none: a real deployment gives them an HTTP proxy, and so does the
harness here, for the duration of the provisioning. One process does it: its listening socket
is made inside a namespace on the hosts' bridge (``--netns``, normally ``ctl``: a thread joins
that namespace with ``setns``, makes the socket and ends; a socket keeps the namespace it was
made in), while every outgoing connection, and the name look-ups, leave from the namespace
the process itself lives in, this machine's own.

It serves ``CONNECT host:443`` only (TLS tunnels: pip, npm and Maven speak HTTPS to their
registries) and answers anything else with a status line saying why: ``405`` for another
method, ``403`` for another port, ``400`` for a request it cannot read, ``502`` when the
target cannot be reached. Every request is one line on stderr (the provisioning log):
``CONNECT host:443 200 from ADDR:PORT``, then ``closed host:443 up N down M bytes``.
``--allow-port`` replaces 443 (the tests tunnel to a local echo server with it).

Run by the harness (``start``), which reads its ``ready`` line (a JSON line on stdout with
the address and port it listens on) and stops it by its PID; SIGTERM ends it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import socket
import sys
import time
from pathlib import Path

HEAD_LIMIT = 8192  # bytes of request line and headers
HEAD_TIMEOUT = 30.0  # seconds to send them
CONNECT_TIMEOUT = 30.0  # seconds to reach the target
_TARGET = re.compile(r"^(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(?P<port>\d{1,5})$")
_REASONS = {200: "Connection established", 400: "Bad Request", 403: "Forbidden",
            405: "Method Not Allowed", 408: "Request Timeout", 502: "Bad Gateway"}


def _log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class Proxy:
    """The proxy's request handling; ``allow_ports``: the only target ports it tunnels to."""

    def __init__(self, allow_ports: set[int]):
        self.allow_ports = set(allow_ports)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        who = f"{peer[0]}:{peer[1]}" if peer else "?"
        try:
            await self._handle(reader, writer, who)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async def _handle(self, reader, writer, who: str) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEAD_TIMEOUT)
        except TimeoutError:
            return await self._refuse(writer, 408, "no request within "
                                      f"{HEAD_TIMEOUT:.0f} s", "-", who)
        except asyncio.LimitOverrunError:
            return await self._refuse(writer, 400, f"request head over {HEAD_LIMIT} bytes",
                                      "-", who)
        except asyncio.IncompleteReadError:
            return  # closed before a whole request: nothing to answer
        line = head.split(b"\r\n", 1)[0].decode("latin-1")
        parts = line.split()
        if len(parts) != 3 or not parts[2].startswith("HTTP/"):
            return await self._refuse(writer, 400, "not an HTTP request line", line[:80], who)
        method, target, _ = parts
        if method != "CONNECT":
            return await self._refuse(writer, 405, "this proxy serves CONNECT only",
                                      f"{method} {target[:80]}", who)
        m = _TARGET.match(target)
        if not m:
            return await self._refuse(writer, 400, "CONNECT needs host:port", target[:80], who)
        host, port = m["host"].strip("[]"), int(m["port"])
        if port not in self.allow_ports:
            allowed = ", ".join(map(str, sorted(self.allow_ports)))
            return await self._refuse(writer, 403, f"only port {allowed} is tunnelled",
                                      f"CONNECT {target}", who)
        try:
            up_r, up_w = await asyncio.wait_for(asyncio.open_connection(host, port),
                                                CONNECT_TIMEOUT)
        except (OSError, TimeoutError) as e:
            why = e.strerror if isinstance(e, OSError) and e.strerror else type(e).__name__
            return await self._refuse(writer, 502, f"cannot reach {target}: {why}",
                                      f"CONNECT {target}", who)
        _log(f"CONNECT {target} 200 from {who}")
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        try:
            await writer.drain()
            up, down = await asyncio.gather(_pump(reader, up_w), _pump(up_r, writer))
        finally:
            up_w.close()
        _log(f"closed {target} up {up} down {down} bytes")

    async def _refuse(self, writer, status: int, why: str, what: str, who: str) -> None:
        _log(f"REFUSED {what} {status} from {who}: {why}")
        body = f"{why}\n".encode()
        writer.write(f"HTTP/1.1 {status} {_REASONS[status]}\r\nContent-Type: text/plain\r\n"
                     f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
        try:
            await writer.drain()
        except ConnectionError:
            pass


async def _pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> int:
    """Copy until ``src`` ends, then half-close ``dst``; returns the bytes copied."""
    n = 0
    try:
        while data := await src.read(65536):
            dst.write(data)
            await dst.drain()
            n += len(data)
        if dst.can_write_eof():
            dst.write_eof()
    except (ConnectionError, OSError):
        dst.close()
    return n


def listening_socket(address: str, port: int, netns: str | None) -> socket.socket:
    """A listening TCP socket on ``address:port``, made inside network namespace ``netns``
    (by a thread that joins it; the process stays where it is), or here for None."""

    def make() -> socket.socket:
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        s = socket.socket(family, socket.SOCK_STREAM)
        try:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((address, port))
            s.listen(128)
            s.setblocking(False)
        except BaseException:
            s.close()
            raise
        return s

    if netns is None:
        return make()
    from burstbench.infra.netns import in_namespace
    return in_namespace(netns, make)


async def serve(sock: socket.socket, proxy: Proxy) -> None:
    """Serve on ``sock`` until SIGTERM or SIGINT."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    server = await asyncio.start_server(proxy.handle, sock=sock, limit=HEAD_LIMIT)
    host, port = sock.getsockname()[:2]
    print(json.dumps({"event": "ready", "address": host, "port": port, "pid": os.getpid()}),
          flush=True)
    async with server:
        await stop.wait()
    _log(f"stopped at {time.strftime('%H:%M:%S')}")


def connects(log: Path) -> list[str]:
    """The targets (``host:port``) the proxy tunnelled to, in order, from its log."""
    try:
        lines = Path(log).read_text(errors="replace").splitlines()
    except OSError:
        return []
    return [ln.split()[1] for ln in lines if ln.startswith("CONNECT ") and " 200 " in ln]


def start(sup, netns: str | None, address: str, *, port: int = 0,
          name: str = "connect-proxy", timeout: float = 15.0):
    """Start the proxy as a child of Supervisor ``sup`` (stopped with it, by PID), listening
    on ``address:port`` in namespace ``netns``; returns ``(child, "http://ADDRESS:PORT")``
    once it listens. Its log is ``sup``'s log of ``name``."""
    from burstbench import paths
    argv = [sys.executable, "-m", "burstbench.infra.connect_proxy", "--bind", f"{address}:{port}"]
    if netns:
        argv += ["--netns", netns]
    child = sup.start(name, argv, role="proxy", cwd=paths.ROOT)
    deadline = time.monotonic() + timeout
    other = []
    try:
        while time.monotonic() < deadline:
            got = sup.wait_event(deadline - time.monotonic())
            if got is None:
                break
            c, ev = got
            if c is not child:
                other.append(got)
                continue
            if ev.get("event") == "ready":
                host = f"[{address}]" if ":" in address else address
                return child, f"http://{host}:{ev['port']}"
            if ev.get("event") == "exit":
                raise RuntimeError(f"the CONNECT proxy exited with {ev.get('code')}: "
                                   f"{child.last_error() or 'no message'} "
                                   f"(log: {child.log_path})")
        sup.stop(child)
        raise RuntimeError(f"the CONNECT proxy did not say ready within {timeout:.0f} s "
                           f"(log: {child.log_path})")
    finally:
        sup.put_back(other)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m burstbench.infra.connect_proxy",
                                 description="an HTTP CONNECT proxy for port 443 only")
    ap.add_argument("--bind", required=True, metavar="ADDRESS:PORT",
                    help="where to listen (port 0: any free port; the ready line says which)")
    ap.add_argument("--netns", help="make the listening socket inside this named network "
                                    "namespace (needs root); connections out leave from here")
    ap.add_argument("--allow-port", type=int, action="append", metavar="PORT",
                    help="a target port to tunnel to (repeatable; default: 443 only)")
    args = ap.parse_args(argv)
    address, sep, port = args.bind.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        ap.error(f"--bind must be ADDRESS:PORT, not {args.bind!r}")
    address = address.strip("[]")
    ports = set(args.allow_port or [443])
    if not all(1 <= p <= 65535 for p in ports):
        ap.error("--allow-port must be 1..65535")
    try:
        sock = listening_socket(address, int(port), args.netns)
    except OSError as e:
        print(f"connect_proxy: error: cannot listen on {args.bind}"
              f"{f' in {args.netns}' if args.netns else ''}: {e.strerror or e}",
              file=sys.stderr)
        return 1
    asyncio.run(serve(sock, Proxy(ports)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
