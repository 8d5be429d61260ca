"""The Pi study: Leibniz's series computed by competing workers over the broker, and by actors.

Over the broker (as in the Pi paper): a creator sends M work messages of E terms each to a
fresh work queue; W workers — any mix of the four client languages, ``pi-worker.*`` of
clients/contract.md "Pi workers" — compete for them and send each chunk's partial sum to a
results queue; the collector (in the harness process) adds the sums up. The time runs from
the creator's first send to the collector's last result: creator -> work queue -> workers ->
results queue -> collector, with every process already started and connected (process
start-up is reported beside it, not in it). Over actors: ``burstbench.bridge.PiActors`` with
the same W, M, E. Both results must equal the same partial sum computed directly here to
1e-9, or the point fails.

``python -m harness.pi creator ...`` is the creator process (stomp.py; the harness starts it).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from harness import brokers, clients, paths, profiles, results
from harness.procs import Child, ChildExited, Interrupted, Supervisor

TOLERANCE = 1e-9
LANGUAGES = ("net-stomp", "stomp-py", "stompjs", "openwire-jms")  # clients with a pi-worker
BRIDGE = paths.ROOT / "akka-bridge"


class StudyError(ValueError):
    """Bad study parameters (reported as one line, exit 2)."""


# -- configuration -------------------------------------------------------------------------

@dataclass
class PiConfig:
    """One Pi study: the grid, the worker languages taken in turn, and how workers run."""

    workers: list[int] = field(default_factory=lambda: [1, 10])
    messages: list[int] = field(default_factory=lambda: [100, 1000, 10000])
    elements: list[int] = field(default_factory=lambda: [10])
    languages: list[str] = field(default_factory=lambda: ["openwire-jms"])
    java_threads: int = 10  # Java workers per JVM (--threads): W java workers = ceil(W/T) JVMs
    prefetch: int = 1000  # per worker consumer (the JMS default the paper ran with)
    backends: list[str] = field(default_factory=lambda: ["activemq", "akka"])
    idle_timeout: float = 120.0  # seconds without a new result before a point fails

    def validate(self) -> None:
        for key in ("workers", "messages", "elements"):
            vals = getattr(self, key)
            if not vals or any(not isinstance(v, int) or v < 1 for v in vals):
                raise StudyError(f"pi: {key} must be a list of integers >= 1: {vals!r}")
        resolved = []
        for name in self.languages:
            c = clients.get(name)  # UnknownClient is a ValueError
            if c.name not in LANGUAGES:
                raise StudyError(f"pi: no Pi worker for client {c.name} "
                                 f"(have: {', '.join(LANGUAGES)})")
            resolved.append(c.name)
        if not resolved:
            raise StudyError("pi: --workers-lang is empty")
        self.languages = resolved
        if self.java_threads < 1:
            raise StudyError(f"pi: java threads must be >= 1: {self.java_threads}")
        if self.prefetch < 1:
            raise StudyError(f"pi: prefetch must be >= 1: {self.prefetch}")
        bad = set(self.backends) - {"activemq", "akka"}
        if bad or not self.backends:
            raise StudyError(f"pi: backends are activemq and/or akka, got {self.backends!r}")

    @classmethod
    def from_profile(cls, profile: str) -> PiConfig:
        doc = (profiles.load_profile(profile).get("studies") or {}).get("pi")
        if not isinstance(doc, dict):
            raise StudyError(f"profile {profile} has no studies.pi section")
        known = set(cls.__dataclass_fields__)
        unknown = set(doc) - known
        if unknown:
            raise StudyError(f"profile {profile}: studies.pi: unknown key(s) "
                             f"{', '.join(sorted(unknown))}")
        return cls(**doc)


# -- the exact partial sum -----------------------------------------------------------------

class ExactSums:
    """4 * sum of (-1)^k / (2k+1) for k < N, summed directly term by term (no closed form).

    Terms are added in blocks (numpy's pairwise sum of each block, then math.fsum of the
    block sums), so the result is exact to a few ulps; sums for growing N reuse the blocks
    already added, so a whole grid costs one pass over its largest N.
    """

    BLOCK = 1 << 20

    def __init__(self):
        self.n = 0
        self.blocks: list[float] = []
        self.cache: dict[int, float] = {}

    def __call__(self, terms: int) -> float:
        if terms in self.cache:
            return self.cache[terms]
        if terms < self.n:
            self.n, self.blocks = 0, []
        while self.n < terms:
            end = min(terms, self.n + self.BLOCK)
            self.blocks.append(_block_sum(self.n, end))
            self.n = end
        value = 4.0 * math.fsum(self.blocks)
        self.cache[terms] = value
        return value


def _block_sum(start: int, end: int) -> float:
    try:
        import numpy as np  # matplotlib's dependency: always installed with the harness
    except ImportError:
        return math.fsum((-1.0 if k & 1 else 1.0) / (2.0 * k + 1.0) for k in range(start, end))
    k = np.arange(start, end, dtype=np.float64)
    terms = 1.0 / (2.0 * k + 1.0)
    if start & 1:
        terms[::2] *= -1.0
    else:
        terms[1::2] *= -1.0
    return float(terms.sum())


# -- workers -------------------------------------------------------------------------------

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
        except Exception:  # noqa: BLE001 - closing after the measurement: nothing to save
            pass


# -- one point -----------------------------------------------------------------------------

class PointError(RuntimeError):
    pass


def _wait_for(sup: Supervisor, want, timeout: float, what: str, watch: list[Child]) -> list:
    """Events accepted by ``want(child, ev)`` until it returns True for all needed (it
    returns 'done' when satisfied); fails if a watched child exits non-zero meanwhile."""
    got: list = []
    satisfied: list[bool] = []

    def take(child: Child, ev: dict) -> None:
        got.append((child, ev))
        if want(child, ev, got):
            satisfied.append(True)

    try:
        ok = sup.wait_until(lambda: bool(satisfied), timeout, take, watch=watch)
    except ChildExited as e:
        raise PointError(f"{e.child.name} exited with {e.code} while waiting for "
                         f"{what}: {e.child.last_error()} (log: {e.child.log_path})") from None
    if not ok:
        raise PointError(f"timed out after {timeout:.0f} s waiting for {what}")
    return got


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
        creator = sup.start(f"{tag}-creator", [
            sys.executable, "-m", "harness.pi", "creator", "--url", broker.stomp_url,
            "--work", work_q, "--messages", str(m), "--elements", str(e)],
            role="pi-creator", cwd=paths.ROOT)
        everyone = children + [creator]
        ready: set = set()

        def all_ready(child, ev, _got):
            if ev.get("event") == "ready":
                ready.add(child.name)
            return len(ready) == len(everyone)

        _wait_for(sup, all_ready, 60 + 0.5 * len(everyone), "workers and creator to be ready",
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

        _wait_for(sup, creator_sent, max(60.0, m / 500), "the creator to send", everyone)
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


def run_akka_point(sup: Supervisor, w: int, m: int, e: int, exact: float, tag: str) -> dict:
    """One actors point: PiActors in its own JVM (start-up outside its timing)."""
    doc: dict = {"backend": "akka", "workers": w, "messages": m, "elements": e,
                 "status": "failed", "errors": []}
    argv = ["java", *clients.JAVA_OPTS, "-cp", clients._java_cp(BRIDGE),
            "burstbench.bridge.PiActors", "--workers", str(w), "--messages", str(m),
            "--elements", str(e)]
    child = sup.start(f"{tag}-akka", argv, role="pi-actors")
    result: dict = {}

    def finished(c, ev, _got):
        if c is child and "pi" in ev:
            result.update(ev)
        return c is child and ev.get("event") == "exit"

    try:
        # the actors compute M*E terms twice (the run and PiActors' own exact loop)
        _wait_for(sup, finished, 120 + m * e * 5e-8, "PiActors", [child])
        if not result:
            raise PointError(f"PiActors printed no result: {child.last_error()}")
        pi = float(result["pi"])
        doc.update(seconds=round(float(result["seconds"]), 4), pi=pi, exact=exact,
                   error=abs(pi - exact), actors_exact=result.get("exact"))
        if abs(pi - exact) > TOLERANCE:
            doc["errors"].append(f"pi {pi!r} differs from the exact partial sum {exact!r} by "
                                 f"{abs(pi - exact):.3g} (> {TOLERANCE:g})")
        doc["status"] = "ok" if not doc["errors"] else "failed"
    except PointError as ex:
        doc["errors"].append(str(ex))
    finally:
        sup.stop(child, grace=5)
        doc["resources"] = [{"name": child.name, "cpu_s": round(child.usage.cpu_s, 3),
                             "max_rss_mb": round(child.usage.max_rss_mb, 1),
                             "exit_code": child.returncode}]
    return doc


# -- the study -----------------------------------------------------------------------------

def versions(broker_version: str, cfg: PiConfig) -> dict:
    return {
        "broker": {"name": "ActiveMQ Classic", "version": broker_version},
        "clients": {n: clients.version(n) for n in cfg.languages},
        "akka": "Akka 2.6.20 (akka-bridge PiActors)",
        "runtimes": results.runtimes(),
    }


def run_study(run: results.Run, cfg: PiConfig, progress=None) -> dict:
    """Measure the grid into ``run``: writes pi.json, pi.md, pi.html and charts/pi.png (logs
    under pi/).

    Returns the document; its ``status`` is ``ok`` only if every point is.
    """
    from plots import studies

    cfg.validate()
    say = progress or (lambda msg: print(msg, file=sys.stderr, flush=True))
    if "activemq" in cfg.backends:
        why = missing_toolchains(cfg.languages)
        if why:
            raise StudyError("; ".join(why))
    if "akka" in cfg.backends:
        paths.require_built("akka-bridge", BRIDGE / "target" / "classes" / "burstbench")
    out = run.dir / "pi"
    out.mkdir(parents=True, exist_ok=True)
    exact = ExactSums()
    grid = list(itertools.product(cfg.elements, cfg.messages, cfg.workers))
    procs_note = ""
    if "openwire-jms" in cfg.languages:
        procs_note = (f"Java workers run {cfg.java_threads} per JVM (--threads): "
                      f"W Java workers = ceil(W/{cfg.java_threads}) processes")
    doc = {
        "schema_version": results.SCHEMA_VERSION, "study": "pi", "run_id": run.id,
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "machine": results.machine(),
        "git_commit": results.git_commit(), "status": "running",
        "parameters": {"workers": cfg.workers, "messages": cfg.messages,
                       "elements": cfg.elements, "languages": cfg.languages,
                       "java_threads": cfg.java_threads, "prefetch": cfg.prefetch,
                       "backends": cfg.backends, "tolerance": TOLERANCE},
        "timing": "ActiveMQ: creator's first send -> collector's last result, every process "
                  "already started and connected (setup_seconds beside it); Akka: creating "
                  "the actors -> the collector's last sum (JVM start-up outside)",
        "notes": [n for n in (procs_note,) if n],
        "points": [],
    }
    path = run.dir / "pi.json"

    def save() -> None:
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(results.json_safe(doc), indent=2))
        tmp.replace(path)

    with Supervisor(out / "logs") as sup:
        broker = None
        if "activemq" in cfg.backends:
            say("pi: starting the broker")
            broker = brokers.start(sup, brokers.BrokerSpec(name="pi"), out / "work")
        doc["versions"] = versions(broker.version if broker else brokers.ACTIVEMQ_VERSION, cfg)
        try:
            for e, m, w in grid:
                ex = exact(m * e)
                for backend in cfg.backends:
                    tag = f"{backend}-w{w}-m{m}-e{e}"
                    if backend == "activemq":
                        pt = run_broker_point(sup, broker, cfg, w, m, e, ex,
                                              lambda msg, t=tag: say(f"  [{t}] {msg}"), tag)
                    else:
                        pt = run_akka_point(sup, w, m, e, ex, tag)
                    pt["paper_seconds"] = studies.paper_pi(backend, e, w, m)
                    doc["points"].append(pt)
                    save()
                    figure = (f"{pt['seconds']:.3f} s" if "seconds" in pt else "no figure")
                    err = f" error {pt['error']:.1e}" if "error" in pt else ""
                    say(f"pi {backend:<8} W={w:<3} M={m:<6} E={e:<7}: {pt['status']}: "
                        f"{figure}{err}" + (f" ({'; '.join(pt['errors'])})"
                                           if pt["errors"] else ""))
        except (Interrupted, KeyboardInterrupt):
            doc["status"] = "incomplete"
            save()
            raise
    failed = [p for p in doc["points"] if p["status"] != "ok"]
    doc["status"] = "failed" if failed else "ok"
    doc["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    save()
    md, html = studies.pi_tables(doc)
    (run.dir / "pi.md").write_text(md)
    (run.dir / "pi.html").write_text(html)
    try:
        studies.chart_pi(doc, run.dir / "charts" / "pi.png")
    except Exception as e:  # noqa: BLE001 - a chart must never hide the study's outcome
        say(f"pi: chart failed: {e}")
    return doc


def config_from_args(args) -> PiConfig:
    cfg = PiConfig.from_profile(args.profile)
    for key in ("workers", "messages", "elements"):
        text = getattr(args, key)
        if text:
            setattr(cfg, key, _int_list(key, text))
    if args.workers_lang:
        cfg.languages = [s.strip() for s in args.workers_lang.split(",") if s.strip()]
    elif not cfg.languages:
        cfg.languages = ["openwire-jms"]
    if args.java_threads is not None:
        cfg.java_threads = args.java_threads
    if args.prefetch is not None:
        cfg.prefetch = args.prefetch
    if args.backends:
        cfg.backends = [s.strip() for s in args.backends.split(",") if s.strip()]
    cfg.validate()
    return cfg


def _int_list(name: str, text: str) -> list[int]:
    out = []
    for part in text.split(","):
        part = part.strip().replace("_", "")
        if not part.isdigit() or int(part) < 1:
            raise StudyError(f"--{name}: expected integers >= 1, comma-separated: {text!r}")
        out.append(int(part))
    return out


def main(args) -> int:
    """``./bench pi``: the grid from the profile (or the options), tables on stdout."""
    from plots import studies

    cfg = config_from_args(args)
    return results.study_command("pi", lambda run: run_study(run, cfg), studies.pi_tables)


# -- the creator process -------------------------------------------------------------------

def creator_main(argv: list[str]) -> int:
    """``python -m harness.pi creator --url stomp://H:P --work Q --messages M --elements E``.

    Connects, prints ``ready``, waits for ``go`` on stdin, sends the M work messages (the
    last with a receipt, waited for), prints ``sent`` with the first and last send times.
    """
    import stomp

    class Parser(argparse.ArgumentParser):
        def error(self, message):
            sys.stderr.write(f"error: {message}\n")
            sys.exit(2)

    ap = Parser(prog="python -m harness.pi creator")
    ap.add_argument("--url", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--messages", type=int, required=True)
    ap.add_argument("--elements", type=int, required=True)
    a = ap.parse_args(argv)
    u = urlsplit(a.url)
    if u.scheme != "stomp" or not u.hostname or not u.port:
        ap.error(f"--url must be stomp://HOST:PORT: {a.url!r}")
    if a.messages < 1 or a.elements < 1:
        ap.error("--messages and --elements must be >= 1")
    receipt = threading.Event()

    class Listener(stomp.ConnectionListener):
        def on_receipt(self, frame):
            receipt.set()

    conn = stomp.Connection11([(u.hostname, u.port)], reconnect_attempts_max=1, timeout=10,
                              auto_decode=False, heartbeats=(0, 0))
    conn.set_listener("creator", Listener())
    try:
        conn.connect(wait=True)
    except Exception as e:  # noqa: BLE001 - stomp.py raises several kinds for one meaning
        sys.stderr.write(f"error: cannot connect to {a.url}: {type(e).__name__} {e}\n")
        return 3

    def emit(event: str, **kw) -> None:
        sys.stdout.write(json.dumps({"event": event, "id": "creator", **kw}) + "\n")
        sys.stdout.flush()

    emit("ready", role="pi-creator")
    for line in sys.stdin:
        if line.strip() == "go":
            break
    else:
        return 0
    dest, m, e = f"/queue/{a.work}", a.messages, a.elements
    first = time.time_ns()
    for i in range(m):
        h = {"pi_cmd": "work", "pi_chunk": str(i), "pi_start": str(i * e),
             "pi_elements": str(e)}
        if i == m - 1:
            h["receipt"] = "last"
        conn.send(dest, b"", headers=h)
    last = time.time_ns()
    if not receipt.wait(120):
        sys.stderr.write(f"error: no receipt for the last work message from {a.url}\n")
        return 1
    emit("sent", sent=m, first_ns=first, last_ns=last)
    conn.disconnect()
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["creator"]:
        sys.exit(creator_main(sys.argv[2:]))
    sys.exit("usage: python -m harness.pi creator --url stomp://H:P --work Q --messages M "
             "--elements E (the study itself runs with ./bench pi)")
