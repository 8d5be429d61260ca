"""Net::Stomp 0.61 subscribes twice when a reconnect attempt is accepted and dropped.

The soak's broker b held 100 messages (one prefetch) unacknowledged for six minutes after a
restart (docs/findings-faults.md#soak-store-growth): the Perl consumer's connection carried two
consumers of one queue. Net::Stomp's ``_reconnect`` connects and then re-subscribes; when the
broker accepts the connection and closes it before CONNECTED (a broker still starting does),
``connect()`` only logs "failed to connect", the re-subscribe's ``send_frame`` finds the socket
closed and reconnects once more (inner: CONNECT, SUBSCRIBE), and then sends its own SUBSCRIBE
on the new connection too (Net::Stomp's own comment: "worst scenario we send a few subscribe
frame more than once"). ActiveMQ makes every SUBSCRIBE a consumer, even with an id already in
use. One scripted listener plays the broker: it answers the first connection and closes it
(the kill), closes the second unanswered (starting), and counts the SUBSCRIBE frames on the
third. The bench's Perl consumer is stock (Net::Stomp's documented failover), so the test
pins the library's behaviour the finding rests on: when it changes, the finding must too.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import threading

import pytest
from test_netstomp_reconnect import handshake, message, read_frame

from burstbench import paths

pytestmark = pytest.mark.skipif(shutil.which("perl") is None, reason="needs perl")

N = 20


def broker(srv: socket.socket, log: list[str]) -> None:
    c1, _ = srv.accept()
    buf = bytearray()
    c1.sendall(handshake(c1, buf, "session-1"))  # the subscription's RECEIPT: ready
    # the kill: closed once the consumer waits for messages
    c1.settimeout(0.3)
    try:
        read_frame(c1, buf)
    except TimeoutError:
        pass
    c1.close()
    c2, _ = srv.accept()  # a broker that is starting: takes the connection, then drops it
    buf = bytearray()
    cmd = read_frame(c2, buf)
    log.append(f"second connection: {cmd and cmd[0]}, closed unanswered")
    c2.close()
    c3, _ = srv.accept()
    buf = bytearray()
    cmd, _ = read_frame(c3, buf)
    assert cmd == "CONNECT", cmd
    c3.sendall(b"CONNECTED\nversion:1.0\nsession:session-3\n\n\0\n")
    c3.settimeout(1.5)  # every SUBSCRIBE the reconnect sends comes at once
    try:
        while (f := read_frame(c3, buf)) is not None:
            log.append(f"third connection: {f[0]} {f[1].get('id', '')}")
    except TimeoutError:
        pass
    c3.settimeout(30)
    c3.sendall(b"".join(message(s, 3) for s in range(N)))
    while (f := read_frame(c3, buf)) is not None:
        if f[0] == "DISCONNECT":
            c3.sendall(f"RECEIPT\nreceipt-id:{f[1].get('receipt', '')}\n\n\0\n".encode())
            break
    c3.close()


def test_a_reconnect_through_a_dropped_attempt_subscribes_twice_on_one_connection(tmp_path):
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    srv.settimeout(30)
    url = f"stomp://127.0.0.1:{srv.getsockname()[1]}"
    log: list[str] = []
    t = threading.Thread(target=broker, args=(srv, log), daemon=True)
    t.start()
    try:
        # the soak's configuration: --failover naming the same broker (restarted in place)
        r = subprocess.run(["perl", str(paths.CLIENTS / "perl" / "consumer.pl"), "--url", url,
                            "--failover", url, "--destinations", "q", "--ack", "client",
                            "--count", str(N), "--records", str(tmp_path / "c1.tsv")],
                           check=False, capture_output=True, text=True, timeout=60)
    finally:
        srv.close()
    t.join(10)
    assert r.returncode == 0, r.stderr
    events = [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]
    assert [e["event"] for e in events if e["event"] != "tick"] == [
        "ready", "reconnected", "done"], r.stdout
    assert events[-1]["received"] == N
    assert "second connection: CONNECT, closed unanswered" in log, log
    subscribes = [x for x in log if x.startswith("third connection: SUBSCRIBE")]
    assert subscribes == ["third connection: SUBSCRIBE bb-sub-0"] * 2, log
