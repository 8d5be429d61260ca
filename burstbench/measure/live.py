"""The live view (``./bench run --live``, ``./bench sweep --live``): a page on 127.0.0.1 that
follows a run while it goes.

The page (burstbench/measure/livepage/) loads @stomp/stompjs's browser bundle
(clients/node/node_modules) and subscribes, over the broker's WebSocket connector, to ``TOPIC`` on
the broker of the point that is running. The harness publishes a snapshot there twice a second from
the events its clients print anyway (ticks, burst confirmations, done lines): the point, its burst,
messages sent and received so far, the send and receive rates over the last interval. The topic is
no measured destination (every measured destination is a queue named for its run), nobody's
records or the brokers' queue counters see it, so it stays out of every figure; what it costs
the broker is a few small messages a second. ``GET /state`` tells the page which broker to
follow and lists the points already finished, as their result files say.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from burstbench.paths import CLIENTS

TOPIC = "/topic/burstbench.live"
PAGE = Path(__file__).resolve().parent / "livepage"
BUNDLE = CLIENTS / "node" / "node_modules" / "@stomp" / "stompjs" / "bundles" / "stomp.umd.min.js"
FILES = {
    "/": (PAGE / "index.html", "text/html; charset=utf-8"),
    "/live.js": (PAGE / "live.js", "text/javascript; charset=utf-8"),
    "/stompjs/stomp.umd.min.js": (BUNDLE, "text/javascript; charset=utf-8"),
}

# the one live view of this process, or None: Runner calls the hooks below either way
ACTIVE: LiveView | None = None


class LiveView:
    """The HTTP server, the state the page polls and the publisher of the snapshots."""

    def __init__(self, port: int = 0, interval: float = 0.5):
        self.interval = interval
        self.lock = threading.Lock()
        self.state: dict = {"topic": TOPIC, "point": None, "broker_ws": None, "login": None,
                            "passcode": None, "note": "waiting for a point", "points": []}
        self.conn = None
        self.snap: dict = {}
        self.counts: dict[str, tuple[str, int]] = {}  # child -> (role, sent or received)
        self.last = (time.monotonic(), 0, 0)
        self.seq = 0
        self.version = 0  # the state's changes, and the last one a page fetched (None: no page)
        self.served: int | None = None
        view = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                path = self.path.split("?", 1)[0]
                if path == "/state":
                    with view.lock:
                        body = json.dumps(view.state).encode()
                        view.served = view.version
                    ctype = "application/json"
                elif path in FILES:
                    f, ctype = FILES[path]
                    body = f.read_bytes()
                else:
                    self.send_response(204 if path == "/favicon.ico" else 404)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("content-type", ctype)
                self.send_header("cache-control", "no-store")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):  # quiet: the harness's stderr is the run's
                pass

        if not BUNDLE.exists():
            raise RuntimeError(f"--live: no stompjs bundle at {BUNDLE}: run ./bench setup")
        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.stop_event = threading.Event()
        threading.Thread(target=self.server.serve_forever, daemon=True, name="live-http").start()
        threading.Thread(target=self._publish_loop, daemon=True, name="live-publish").start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/"

    def close(self, linger: float = 5.0) -> None:
        """Stop; a page that follows gets up to ``linger`` seconds to fetch the last state."""
        deadline = time.monotonic() + linger
        while (self.served is not None and self.served < self.version
               and time.monotonic() < deadline):
            time.sleep(0.05)
        if self.served is not None:
            time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))  # ... and to draw it
        self.stop_event.set()
        self._disconnect()
        self.server.shutdown()
        self.server.server_close()

    # -- a point's life --------------------------------------------------------------------
    def point_started(self, runner) -> None:
        spec = runner.spec
        name = runner.dir.name
        prods, cons = spec.slots()
        label = (f"{' '.join(sorted({r.label for r in prods}))} x{spec.producers} -> "
                 f"{' '.join(sorted({r.label for r in cons}))} x{spec.consumers}, "
                 f"{spec.count:,} msgs x {spec.bursts} bursts, {spec.size:,} B")
        broker = next(iter(runner.stack.brokers.values()))
        self._disconnect()
        with self.lock:
            self.counts = {}
            self.last = (time.monotonic(), 0, 0)
            self.snap = {"point": name, "label": label, "status": "running", "bursts": spec.bursts,
                         "burst": 0, "confirmed": 0,
                         "target": spec.count * spec.producers * spec.bursts,
                         "sent": 0, "received": 0, "send_rate": 0.0, "recv_rate": 0.0}
            reachable = runner.stack.net is None and not spec.tls
            self.state.update(point=name, label=label,
                              broker_ws=broker.url_for("ws") if reachable else None,
                              note=None if reachable else "this point's broker is not reachable "
                              "from the host's loopback without TLS: not shown live")
            creds = runner.stack.credentials
            self.state.update(login=creds[0] if creds else None,
                              passcode=creds[1] if creds else None)
            self.version += 1
        if not reachable:
            return
        import stomp

        host, _, port = broker.stomp_url.split("://", 1)[1].rpartition(":")
        conn = stomp.Connection12([(host, int(port))])
        try:
            if creds:
                conn.connect(creds[0], creds[1], wait=True)
            else:
                conn.connect(wait=True)
        except Exception as e:  # noqa: BLE001 - the live view never fails a point
            with self.lock:
                self.state["note"] = f"cannot publish to the broker: {e}"
            return
        self.conn = conn

    def event(self, child, ev: dict) -> None:
        kind = ev.get("event")
        with self.lock:
            if not self.snap:
                return
            if kind == "tick" and child.role in ("producer", "consumer"):
                n = int(ev.get("sent" if child.role == "producer" else "received", 0))
                slot = f"{child.name}/{ev.get('id', '')}"  # a process may hold several
                old = self.counts.get(slot, (child.role, 0))[1]
                self.counts[slot] = (child.role, max(old, n))

    def burst(self, b: int) -> None:
        with self.lock:
            if self.snap:
                self.snap["burst"] = b + 1

    def confirmed(self, b: int) -> None:
        with self.lock:
            if self.snap:
                self.snap["confirmed"] = b + 1

    def point_finished(self, done: dict, roles: dict) -> None:
        """The clients' done lines (by slot, ``roles`` the slots' roles): the final counts,
        published before the broker stops."""
        with self.lock:
            if not self.snap:
                return
            self.counts = {}  # the ticks' counts give way to the slots' done lines
            for name, ev in done.items():
                role = roles.get(name)
                if role == "producer":
                    self.counts[name] = (role, int(ev.get("sent", 0)))
                elif role == "consumer":
                    self.counts[name] = (role, int(ev.get("received", 0)))
            self.snap["foreign"] = sum(int(ev.get("foreign", 0)) for n, ev in done.items()
                                       if roles.get(n) == "consumer")
            self.snap["status"] = "clients done"
        self._publish()
        self._disconnect()

    def point_result(self, point_id: str, doc: dict) -> None:
        """A finished point as its result file says (listed by ``/state``)."""
        self._disconnect()
        acc = doc.get("accounting") or {}
        thr = doc.get("throughput") or {}
        with self.lock:
            self.state["points"].append({
                "point": point_id, "status": doc.get("status"),
                "sent": acc.get("sent"), "received": acc.get("received"),
                "lost": acc.get("lost"), "duplicates": acc.get("duplicates"),
                "corrupt": acc.get("corrupt"),
                "send_msgs_per_s": thr.get("send_msgs_per_s"),
                "recv_msgs_per_s": thr.get("recv_msgs_per_s"),
                "errors": doc.get("errors", [])[:3],
            })
            self.state.update(point=None, broker_ws=None, note="between points")
            self.snap = {}
            self.version += 1

    # -- publishing ------------------------------------------------------------------------
    def _totals(self) -> tuple[int, int]:
        sent = sum(n for role, n in self.counts.values() if role == "producer")
        received = sum(n for role, n in self.counts.values() if role == "consumer")
        return sent, received

    def _publish(self) -> None:
        conn = self.conn
        if conn is None:
            return
        with self.lock:
            if not self.snap:
                return
            sent, received = self._totals()
            now = time.monotonic()
            t0, s0, r0 = self.last
            if now - t0 >= 0.9:  # rates over about a second: the clients tick once a second
                self.snap["send_rate"] = round((sent - s0) / (now - t0), 1)
                self.snap["recv_rate"] = round((received - r0) / (now - t0), 1)
                self.last = (now, sent, received)
            self.seq += 1
            self.snap.update(sent=sent, received=received, in_flight=sent - received,
                             seq=self.seq, t_ns=time.time_ns())
            body = json.dumps(self.snap)
        try:
            conn.send(destination=TOPIC, body=body, content_type="application/json")
        except Exception:  # noqa: BLE001 - a broker going down: the next point connects anew
            self.conn = None

    def _publish_loop(self) -> None:
        while not self.stop_event.wait(self.interval):
            self._publish()

    def _disconnect(self) -> None:
        conn, self.conn = self.conn, None
        if conn is not None:  # aside: a broker already gone must not hold the point up

            def bye():
                try:
                    conn.disconnect()
                except Exception:  # noqa: BLE001, S110 - a goodbye to a broker that may be gone
                    pass

            threading.Thread(target=bye, daemon=True, name="live-disconnect").start()


# -- the hooks Runner calls (nothing happens without --live) -----------------------------------
def start(port: int = 0) -> LiveView:
    global ACTIVE
    ACTIVE = LiveView(port)
    return ACTIVE


def close() -> None:
    """Stop the live view (``contextlib.closing(live)`` calls this)."""
    global ACTIVE
    if ACTIVE is not None:
        ACTIVE.close()
        ACTIVE = None


def point_started(runner) -> None:
    if ACTIVE is not None:
        ACTIVE.point_started(runner)


def event(child, ev: dict) -> None:
    if ACTIVE is not None:
        ACTIVE.event(child, ev)


def burst(b: int) -> None:
    if ACTIVE is not None:
        ACTIVE.burst(b)


def confirmed(b: int) -> None:
    if ACTIVE is not None:
        ACTIVE.confirmed(b)


def point_finished(done: dict, roles: dict) -> None:
    if ACTIVE is not None:
        ACTIVE.point_finished(done, roles)


def point_result(point_id: str, doc: dict) -> None:
    if ACTIVE is not None:
        ACTIVE.point_result(point_id, doc)
