"""The CONNECT proxy that namespace hosts are provisioned through
(burstbench/infra/connect_proxy.py): a real process on loopback, refusing what it must not serve
with its status line, and tunnelling bytes to a local echo server (a test-only allowed port; the
proxy's own is 443)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from burstbench.infra import connect_proxy

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def echo_port():
    """A TLS-less echo server on loopback: what it receives it sends back, until EOF."""
    srv = socket.create_server(("127.0.0.1", 0))
    srv.settimeout(0.1)  # so the thread sees the end of the test
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.settimeout(10)
            with conn:
                while data := conn.recv(65536):
                    conn.sendall(data)

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield srv.getsockname()[1]
    stop.set()
    srv.close()
    t.join(timeout=5)


@pytest.fixture
def proxy(tmp_path, echo_port):
    """The proxy as its own process, allowed to tunnel to the echo server's port only."""
    err = open(tmp_path / "proxy.log", "w")  # noqa: SIM115 - the process's stderr, closed below
    p = subprocess.Popen([sys.executable, "-m", "burstbench.infra.connect_proxy", "--bind",
                          "127.0.0.1:0", "--allow-port", str(echo_port)], cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=err, text=True)
    try:
        ready = json.loads(p.stdout.readline())
        assert ready["event"] == "ready" and ready["pid"] == p.pid
        yield ready["port"], tmp_path / "proxy.log"
    finally:
        p.terminate()
        assert p.wait(timeout=10) == 0  # SIGTERM is its orderly stop
        p.stdout.close()
        err.close()


def ask(port: int, request: bytes) -> tuple[bytes, socket.socket]:
    """Send ``request``, return the status line and the socket (the tunnel, on 200)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(request)
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(1)
        if not chunk:
            break
        head += chunk
    return head.split(b"\r\n", 1)[0], s


def test_a_request_other_than_connect_is_refused_with_405(proxy):
    port, _ = proxy
    status, s = ask(port, b"GET http://example.invalid/ HTTP/1.1\r\nHost: example.invalid"
                          b"\r\n\r\n")
    body = s.recv(200)
    s.close()
    assert status == b"HTTP/1.1 405 Method Not Allowed"
    assert b"CONNECT only" in body


def test_a_connect_to_another_port_is_refused_with_403_and_logged(proxy, echo_port):
    port, log = proxy
    other = echo_port + 1 if echo_port < 65535 else echo_port - 1
    status, s = ask(port, f"CONNECT 127.0.0.1:{other} HTTP/1.1\r\n\r\n".encode())
    s.close()
    assert status == b"HTTP/1.1 403 Forbidden"
    assert f"REFUSED CONNECT 127.0.0.1:{other} 403" in log.read_text()
    assert connect_proxy.connects(log) == []


def test_a_garbled_request_is_refused_with_400(proxy):
    port, _ = proxy
    status, s = ask(port, b"hello\r\n\r\n")
    s.close()
    assert status == b"HTTP/1.1 400 Bad Request"


def start_proxy(*allow: int) -> tuple[subprocess.Popen, int]:
    argv = [sys.executable, "-m", "burstbench.infra.connect_proxy", "--bind", "127.0.0.1:0"]
    for port in allow:
        argv += ["--allow-port", str(port)]
    p = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True)
    return p, json.loads(p.stdout.readline())["port"]


def stop_proxy(p: subprocess.Popen) -> None:
    p.terminate()
    p.wait(timeout=10)
    p.stdout.close()


def test_without_allow_port_only_443_is_tunnelled(echo_port):
    p, port = start_proxy()
    try:
        status, s = ask(port, f"CONNECT 127.0.0.1:{echo_port} HTTP/1.1\r\n\r\n".encode())
        body = s.recv(200)
        s.close()
    finally:
        stop_proxy(p)
    assert status == b"HTTP/1.1 403 Forbidden" and body == b"only port 443 is tunnelled\n"


def test_a_bad_bind_is_one_line_and_exit_2():
    r = subprocess.run([sys.executable, "-m", "burstbench.infra.connect_proxy", "--bind",
                        "nonsense"],
                       cwd=ROOT, capture_output=True, text=True, timeout=30, check=False)
    assert r.returncode == 2 and "--bind must be ADDRESS:PORT" in r.stderr


def test_a_connect_tunnels_bytes_both_ways_and_is_logged(proxy, echo_port):
    port, log = proxy
    status, s = ask(port, f"CONNECT 127.0.0.1:{echo_port} HTTP/1.1\r\nHost: x\r\n\r\n"
                    .encode())
    assert status == b"HTTP/1.1 200 Connection established"
    payload = bytes(range(256)) * 512  # 128 KiB, more than one read
    s.sendall(payload)
    s.shutdown(socket.SHUT_WR)
    got = b""
    while chunk := s.recv(65536):
        got += chunk
    s.close()
    assert got == payload
    assert connect_proxy.connects(log) == [f"127.0.0.1:{echo_port}"]
    # the close line comes once both directions have ended
    deadline = time.monotonic() + 10
    while "closed" not in log.read_text() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert f"closed 127.0.0.1:{echo_port} up {len(payload)} down {len(payload)} bytes" \
        in log.read_text()


def test_a_target_that_cannot_be_reached_is_502(tmp_path):
    # a port that nothing listens on, allowed: the proxy answers 502, it does not hang
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    dead = free.getsockname()[1]
    free.close()
    p, port = start_proxy(dead)
    try:
        status, s = ask(port, f"CONNECT 127.0.0.1:{dead} HTTP/1.1\r\n\r\n".encode())
        s.close()
    finally:
        stop_proxy(p)
    assert status == b"HTTP/1.1 502 Bad Gateway"
