"""The Pi study over the broker: the workers (any mix of the four languages' ``pi-worker``
programs), the creator (clients/python/pi-creator.py), the collector (a stomp.py connection
in the harness process) and one point from the creator's first send to the last result."""

from __future__ import annotations

import math
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from burstbench import clients, paths
from burstbench.infra import brokers
from burstbench.infra.procs import Child, Supervisor
from burstbench.studies.pi.config import TOLERANCE, PiConfig
from burstbench.studies.pi.point import PointError, wait_for

CREATOR = paths.CLIENTS / "python" / "pi-creator.py"

def worker_argv(client: clients.Client) -> list[str]:
    """The client's pi-worker program: its producer's command with the program swapped."""
    argv = client.argv("producer")
    last = argv[-1]
    if last.startswith("burstbench.clients."):
        argv[-1] = "burstbench.clients.PiWorker"
    else:
        p = Path(last)
        argv[-1] = str(p.with_name("pi-worker" + p.suffix))
    return argv


def creator_argv() -> list[str]:
    """The creator program (stomp.py, beside the Python Pi worker), started as the stomp-py
    client's programs are."""
    return clients.get("stomp-py").argv("producer")[:-1] + [str(CREATOR)]


def worker_protocol(client: clients.Client) -> str:
    # Node speaks STOMP over TCP here too: the study compares languages, not transports
    return "openwire" if "openwire" in client.transports.values() else "stomp"


@dataclass
class WorkerProc:
    client: str
    id: str
    threads: int  # competing consumers in the process (> 1 only for Java)


def plan(workers: int, languages: list[str], java_threads: int) -> list[WorkerProc]:
    """W workers, languages taken in turn; Java workers packed ``java_threads`` per JVM."""
    per_lang = {name: 0 for name in languages}
    for i in range(workers):
        per_lang[languages[i % len(languages)]] += 1
    procs: list[WorkerProc] = []
    for name, n in per_lang.items():
        short = clients.get(name).language
        if name == "openwire-jms":
            for j in range(math.ceil(n / java_threads)):
                t = min(java_threads, n - j * java_threads)
                procs.append(WorkerProc(name, f"w-{short}{j}", t))
        else:
            procs.extend(WorkerProc(name, f"w-{short}{j}", 1) for j in range(n))
    return procs


def missing_toolchains(languages: list[str]) -> list[str]:
    return [why for why in (clients.get(n).missing() for n in languages) if why]


# -- the collector -------------------------------------------------------------------------

class Collector:
    """The results queue's consumer: one stomp.py connection in the harness process."""

    def __init__(self, url: str, queue: str, expected: int):
        import stomp

        u = urlsplit(url)
        self.queue, self.expected = queue, expected
        self.sums: dict[int, float] = {}
        self.total = 0.0  # in arrival order, as a collector actor adds them
        self.duplicates = 0
        self.foreign = 0
        self.last_ns = 0
        self.by_worker: dict[str, int] = {}
        self.error = ""
        self.complete = threading.Event()
        outer = self

        class Listener(stomp.ConnectionListener):
            def on_message(self, frame):
                outer._on_result(frame)

            def on_error(self, frame):
                outer.error = frame.headers.get("message", "broker error")

        self.conn = stomp.Connection11([(u.hostname, u.port)], reconnect_attempts_max=1,
                                       timeout=10, auto_decode=False, heartbeats=(0, 0))
        self.conn.set_listener("collector", Listener())
        self.conn.connect(wait=True)
        self.conn.subscribe(f"/queue/{queue}", id="results", ack="auto",
                            headers={"activemq.prefetchSize": "1000"})

    def _on_result(self, frame) -> None:
        now = time.time_ns()
        try:
            chunk = int(frame.headers["pi_chunk"])
            value = float(frame.body.decode() if isinstance(frame.body, bytes) else frame.body)
        except (KeyError, ValueError, UnicodeDecodeError):
            self.foreign += 1
            return
        if chunk in self.sums:
            self.duplicates += 1
            return
        self.sums[chunk] = value
        self.total += value
        self.last_ns = now
        w = frame.headers.get("pi_worker", "?")
        self.by_worker[w] = self.by_worker.get(w, 0) + 1
        if len(self.sums) >= self.expected:
            self.complete.set()

    def send_stops(self, work_queue: str, n: int) -> None:
        for _ in range(n):
            self.conn.send(f"/queue/{work_queue}", "stop", headers={"pi_cmd": "stop"})

    def close(self) -> None:
        try:
            self.conn.disconnect()
        except Exception:  # noqa: BLE001, S110 - closing after the measurement: nothing to save
            pass

def run_broker_point(sup: Supervisor, broker: brokers.Broker, cfg: PiConfig, w: int, m: int,
                     e: int, exact: float, log, tag: str) -> dict:
    """One ActiveMQ point; returns its result (status ok/failed with errors)."""
    run_tag = f"{tag}.{uuid.uuid4().hex[:6]}"
    work_q, results_q = f"pi.work.{run_tag}", f"pi.results.{run_tag}"
    procs = plan(w, cfg.languages, cfg.java_threads)
    doc: dict = {"backend": "activemq", "workers": w, "messages": m, "elements": e,
                 "languages": sorted({p.client for p in procs}),
                 "processes": len(procs), "java_threads": cfg.java_threads,
                 "work_queue": work_q, "status": "failed", "errors": []}
    t_setup = time.monotonic()
    try:
        collector = Collector(broker.stomp_url, results_q, m)
    except Exception as ex:  # noqa: BLE001 - stomp.py raises several kinds for one meaning
        doc["errors"].append(f"collector cannot connect to {broker.stomp_url}: {ex!r}")
        return doc
    children: list[Child] = []
    try:
        for p in procs:
            c = clients.get(p.client)
            url = broker.url_for(worker_protocol(c))
            argv = worker_argv(c) + ["--url", url, "--work", work_q, "--results", results_q,
                                     "--id", p.id, "--prefetch", str(cfg.prefetch)]
            if p.client == "openwire-jms":
                argv += ["--threads", str(p.threads)]
            children.append(sup.start(f"{tag}-{p.id}", argv, role="pi-worker"))
        creator = sup.start(f"{tag}-creator", creator_argv() + [
            "--url", broker.stomp_url, "--work", work_q, "--messages", str(m),
            "--elements", str(e)], role="pi-creator")
        everyone = children + [creator]
        ready: set = set()

        def all_ready(child, ev, _got):
            if ev.get("event") == "ready":
                ready.add(child.name)
            return len(ready) == len(everyone)

        wait_for(sup, all_ready, 60 + 0.5 * len(everyone), "workers and creator to be ready",
                  everyone)
        doc["setup_seconds"] = round(time.monotonic() - t_setup, 3)
        log(f"{len(children)} worker process(es) ready in {doc['setup_seconds']:.1f} s; "
            f"sending {m:,} x {e:,}")
        cpu0 = (broker.child.cpu_seconds_now(), time.process_time())
        creator.send("go")
        sent: dict = {}

        def creator_sent(child, ev, _got):
            if child is creator and ev.get("event") == "sent":
                sent.update(ev)
                return True
            return False

        wait_for(sup, creator_sent, max(60.0, m / 500), "the creator to send", everyone)
        worker_names = {c.name for c in children}
        # the results: fail on a stall (no new result for idle_timeout), or on a worker exit
        last_n, last_change = -1, time.monotonic()
        while not collector.complete.wait(0.25):
            item = sup.wait_event(0)
            while item is not None:
                child, ev = item
                if ev.get("event") == "exit" and child.name in worker_names:
                    raise PointError(f"{child.name} exited with {ev.get('code')} during the "
                                     f"run: {child.last_error()} (log: {child.log_path})")
                item = sup.wait_event(0)
            if collector.error:
                raise PointError(f"collector: {collector.error}")
            n = len(collector.sums)
            if n != last_n:
                last_n, last_change = n, time.monotonic()
            elif time.monotonic() - last_change > cfg.idle_timeout:
                raise PointError(f"stalled: {n:,} of {m:,} results, none for "
                                 f"{cfg.idle_timeout:.0f} s")
        broker_cpu = broker.child.cpu_seconds_now()
        seconds = (collector.last_ns - sent["first_ns"]) / 1e9
        # who was busy during the run: the broker, and this process (the collector)
        doc["cpu_s"] = {"broker": None if broker_cpu is None or cpu0[0] is None
                        else round(broker_cpu - cpu0[0], 3),
                        "harness_collector": round(time.process_time() - cpu0[1], 3)}
        pi = 4.0 * collector.total
        doc.update(
            seconds=round(seconds, 4),
            send_seconds=round((sent["last_ns"] - sent["first_ns"]) / 1e9, 4),
            pi=pi, exact=exact, error=abs(pi - exact),
            received=len(collector.sums), duplicates=collector.duplicates,
            foreign=collector.foreign, chunks_by_worker=dict(sorted(collector.by_worker.items())),
        )
        if abs(pi - exact) > TOLERANCE:
            doc["errors"].append(f"pi {pi!r} differs from the exact partial sum {exact!r} by "
                                 f"{abs(pi - exact):.3g} (> {TOLERANCE:g})")
        if collector.duplicates:
            doc["errors"].append(f"{collector.duplicates} duplicate result(s)")
        # stop: one stop message per consumer; whoever has not gone in a few seconds (a stop
        # can sit in another worker's prefetch) gets SIGTERM, which also ends it with 'done'
        collector.send_stops(work_q, w)
        done = _stop_workers(sup, children)
        counted = sum(ev.get("chunks", 0) for ev in done.values())
        doc["worker_chunks"] = counted
        if len(done) == len(children) and counted != m:
            doc["errors"].append(f"workers report {counted:,} chunks, expected {m:,}")
        doc["status"] = "ok" if not doc["errors"] else "failed"
    except PointError as ex:
        doc["errors"].append(str(ex))
    finally:
        collector.close()
        for c in children:
            sup.stop(c, grace=5)
        doc["resources"] = [
            {"name": c.name, "cpu_s": round(c.usage.cpu_s, 3),
             "max_rss_mb": round(c.usage.max_rss_mb, 1), "exit_code": c.returncode}
            for c in sup.children if c.name.startswith(tag + "-")
        ]
    return doc


def _stop_workers(sup: Supervisor, children: list[Child], grace: float = 5.0) -> dict:
    """Each worker's 'done' line (by child name); SIGTERM those still running after
    ``grace`` seconds."""
    names = {c.name for c in children}
    done: dict[str, dict] = {}
    deadline = time.monotonic() + grace
    pending = set(names)
    while pending and time.monotonic() < deadline:
        item = sup.wait_event(0.2)
        if item is None:
            continue
        child, ev = item
        if child.name in pending:
            if ev.get("event") == "done":
                done[child.name] = ev
            elif ev.get("event") == "exit":
                pending.discard(child.name)
    for c in children:
        if c.name in pending:
            sup.stop(c, grace=10)
    # the 'done' lines of the SIGTERMed ones are in the queue by now (the exit comes last)
    while (item := sup.wait_event(0)) is not None:
        child, ev = item
        if ev.get("event") == "done" and child.name in names:
            done[child.name] = ev
    return done
