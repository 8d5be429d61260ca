"""--failover for the stomp.py producer and consumer: stomp.py's documented way back after
a drop (clients/contract.md, "Failover")."""

from __future__ import annotations

import os
import signal
import threading
import time

from common import Listener, emit, now_ns


class Reconnector(threading.Thread):
    """--failover: stomp.py's documented way back after a drop. ``on_disconnected`` wakes
    this thread, which calls ``connect()`` again (stomp.py tries the host list with its
    reconnect options), then ``then()`` (a consumer subscribes again) and prints
    ``reconnected``. If stomp.py gives up, ``gave_up`` says why and the main thread gets a
    SIGTERM (it stops as on SIGTERM, then exits 1 with that line)."""

    def __init__(self, conn, args, listener: Listener, then=None):
        super().__init__(daemon=True, name="reconnector")
        self.conn, self.args, self.listener, self.then = conn, args, listener, then
        self.wake = threading.Event()
        self.stopping = False
        self.gave_up = ""
        self.n = 0
        listener.reconnector = self

    def on_disconnected(self):
        if not self.stopping:
            self.wake.set()

    def run(self):
        while True:
            self.wake.wait()
            self.wake.clear()
            if self.stopping:
                return
            if self.conn.is_connected():  # (a failed attempt's own disconnect notice)
                continue
            if not self.connect_again():
                return
            if self.then is not None:
                self.then()
            self.n += 1
            emit("reconnected", id=self.args.id, t_ns=now_ns(), n=self.n)

    def connect_again(self) -> bool:
        """stomp.py's connect() until it succeeds or --connect-timeout has passed (a broker
        that takes over may accept a connection and drop it while it starts)."""
        deadline = time.monotonic() + self.args.connect_timeout
        while True:
            try:
                self.conn.connect(self.args.user, self.args.password, wait=True)
                return True
            except Exception as e:  # noqa: BLE001 - stomp.py raises several kinds
                if self.stopping:
                    return False
                if time.monotonic() < deadline:
                    time.sleep(0.2)
                    continue
                self.gave_up = (f"lost the connection to {self.args.url} and could not reconnect "
                                f"within about {self.args.connect_timeout:g} s: "
                                f"{type(e).__name__}")
                os.kill(os.getpid(), signal.SIGTERM)
                return False
