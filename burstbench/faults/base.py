"""The life cycle every chaos scenario shares: ``Scenario`` starts brokers and clients
under one Supervisor, acts on their events, feeds producers their bursts, drains, stops
everything it started (by PID, on every exit path) and accounts for every message.

A scenario is a subclass (one module each, registered in ``burstbench.faults.registry``) that
says what it is (``name``, ``description``, ``recovery``), what it runs with (``client``,
``defaults``, ``fixed``, ``min_consumers``, ``needs_netns``) and does its part in ``play()``
(start what it needs, inject the fault, finish) and ``after()`` (its figures, from the
records, once every process has stopped)."""

from __future__ import annotations

import shutil
import time
import uuid
from pathlib import Path
from typing import ClassVar

from burstbench import clients, options
from burstbench.faults.lives import DutyCycle, Life, failover_url
from burstbench.faults.reckon import ProducerLife, Result, reckon
from burstbench.faults.spec import ChaosFailed, ChaosSpec, Skip
from burstbench.infra import brokers, topology
from burstbench.infra.procs import Child, Interrupted, Supervisor
from burstbench.measure import measure


class Scenario:
    """Runs one scenario inside ``out_dir``; ``run()`` always stops what it started."""

    name: ClassVar[str] = ""  # as on the command line
    description: ClassVar[str] = ""  # the fault, one line (report, chaos.json, chaos.md)
    recovery: ClassVar[str] = ""  # what its recovery time measures, from -> to
    client: ClassVar[str] = "stomp-py"  # when --client is not given
    defaults: ClassVar[dict] = {}  # ChaosSpec fields it sets otherwise, when zero
    fixed: ClassVar[dict] = {}  # ChaosSpec fields it always sets
    min_consumers: ClassVar[int] = 1
    needs_netns: ClassVar[bool] = False

    @classmethod
    def make_spec(cls, client: str = "", **kw) -> ChaosSpec:
        """This scenario's spec: a field left zero gets the scenario's default."""
        for k, v in cls.defaults.items():
            kw[k] = kw.get(k) or v
        return ChaosSpec(cls.name, client or cls.client, **{**kw, **cls.fixed})

    @classmethod
    def check(cls, spec: ChaosSpec) -> clients.Resolved:
        """The resolved client; ValueError for bad input, Skip when it cannot run here."""
        return spec.validate(cls.min_consumers, cls.needs_netns)

    @classmethod
    def fault_words(cls, fault: dict) -> list[str]:
        """The fault in a few words, for the table and the report (once it struck)."""
        return []

    def __init__(self, spec: ChaosSpec, out_dir: Path, progress=None):
        self.spec = spec
        self.dir = Path(out_dir)
        self.progress = progress or (lambda msg: None)
        self.result = Result(spec.scenario, spec.client, dir=str(self.dir))
        self.lives: list[Life] = []
        self.broker_children: dict[int, str] = {}  # id(child) -> what it is
        self.broker_ready_ns: dict[int, int] = {}
        self.bridge_events: list[tuple[int, int]] = []  # (t_ns, active bridges on a)
        self.expected_broker_exit: set[int] = set()
        self.hold = False  # no new "go" while a fault is being handled
        self.net = None
        self.duty: DutyCycle | None = None
        self.last_progress = time.monotonic()
        self.queue = f"bb.chaos.{uuid.uuid4().hex[:8]}"
        # when the fault struck and ended (time.time_ns, the clock the records use)
        self.t_kill = self.t_ready = self.t_cut = self.t_restore = self.t_drained = None
        self.consumer_records: dict = {}
        self.reconnects: dict[str, list[int]] = {}  # ident -> t_ns of its reconnected lines
        self.burst_ns: dict[str, list[int]] = {}  # ident -> when each burst event came
        self.broker_stats: list[dict] = []  # the brokers' stats lines, as they came
        self.bridges_now: dict[str, int] = {}  # broker -> active bridges, as it last said

    # -- the frame -------------------------------------------------------------------------
    def _open_dirs(self) -> None:
        """The scenario's directory, its work and records folders, and its Supervisor."""
        self.dir.mkdir(parents=True, exist_ok=True)
        self.work = self.dir / "work"
        self.work.mkdir(exist_ok=True)
        (self.dir / "records").mkdir(exist_ok=True)
        self.sup = Supervisor(self.dir / "logs")

    def run(self) -> Result:
        spec = self.spec
        t0 = time.monotonic()
        try:
            self.result.client = clients.resolve(spec.client).label
            self.resolved = self.check(spec)
        except Skip as e:
            self.result.status, self.result.reason = e.status, str(e)
            return self.result
        self.result.client = self.resolved.label
        self._open_dirs()
        try:
            self.play()
        except (Interrupted, KeyboardInterrupt):
            self.result.status = "failed"
            self.result.errors.append("interrupted")
            raise
        except Exception as e:  # noqa: BLE001 - the row says what failed; the next one runs
            self.result.status = "failed"
            self.result.errors.append(str(e) or type(e).__name__)
        finally:
            if self.duty is not None:
                self.duty.finish()
            self.sup.stop_all()
            if self.net is not None:
                self.net.remove()
            self._account()
            self.result.wall_s = round(time.monotonic() - t0, 1)
            shutil.rmtree(self.work, ignore_errors=True)  # broker stores: big, not a result
        return self.result

    def _account(self) -> None:
        producers = [life.producer for life in self.lives if life.producer is not None]
        consumers = {}
        for life in self.lives:
            if life.role == "producer" and life.records.exists():
                life.producer.recorded = measure.read_producer_records(life.records)
            if life.role == "consumer" and life.records.exists():
                consumers[life.ident] = measure.read_consumer_records(life.records)
        self.consumer_records = consumers
        unrecorded = [life.ident for life in self.lives
                      if life.role == "consumer" and life.ident not in consumers]
        if unrecorded and producers:
            self.result.notes.append("no records from " + ", ".join(unrecorded)
                                     + " (died without writing them)")
        if not producers:
            return
        t = reckon(producers, consumers, self.spec.size)
        self.result.tally = t
        if t.lost:
            self.result.status = "failed"
            self.result.errors.append(f"{t.lost} of {t.sent} confirmed messages lost "
                                      f"(e.g. {', '.join(t.lost_sample[:3])})")
        if t.body_errors:
            self.result.status = "failed"
            self.result.errors.append(f"{t.body_errors} messages with a wrong body")
        try:
            if self.struck():
                self.after()
        except Exception as e:  # noqa: BLE001 - a figure we could not compute is just absent
            self.result.notes.append(f"could not compute the fault's figures: {e}")

    def play(self) -> None:
        """Start what the scenario needs, inject its fault, drain and stop (per scenario)."""
        raise NotImplementedError

    def struck(self) -> bool:
        """Whether the fault happened, so that ``after()`` has something to measure."""
        return self.t_kill is not None or self.t_restore is not None

    def after(self) -> None:
        """Figures from the records once every process has stopped (per scenario)."""

    # -- events ----------------------------------------------------------------------------
    def _life_of(self, child: Child) -> Life | None:
        for life in self.lives:
            if life.child is child:
                return life
        return None

    def pump(self, timeout: float) -> None:
        """Take at most one event (waiting up to ``timeout``) and act on it."""
        item = self.sup.wait_event(timeout)
        if item is not None:
            self.on_event(*item)

    def on_event(self, child: Child, ev: dict) -> None:
        """Act on one event: a broker's or a client's."""
        kind = ev.get("event")
        what = self.broker_children.get(id(child))
        if what is not None:
            if kind == "ready":
                self.broker_ready_ns[id(child)] = time.time_ns()
            elif kind == "bridges":
                self.bridge_events.append((time.time_ns(), int(ev.get("active", 0))))
                self.bridges_now[what] = int(ev.get("active", 0))
            elif kind == "stats":  # answers to "stats" on its stdin (the soak's chart)
                self.broker_stats.append({"broker": what, "t_ns": time.time_ns(), **ev})
            elif kind == "exit" and id(child) not in self.expected_broker_exit:
                raise ChaosFailed(f"{what} exited with {ev['code']}: {child.last_error()} "
                                  f"(log: {child.log_path})")
            return
        life = self._life_of(child)
        if life is None:
            return
        if kind == "ready":
            life.ready = True
            self.last_progress = time.monotonic()
        elif kind == "tick" and life.role == "consumer":
            n = int(ev.get("received", 0))
            if n != life.received:
                self.last_progress = time.monotonic()
            life.received = max(life.received, n)
        elif kind == "burst" and life.producer is not None:
            life.producer.confirmed.append(int(ev["burst"]))
            self.burst_ns.setdefault(life.ident, []).append(time.time_ns())
            self.last_progress = time.monotonic()
            self._feed(life)
        elif kind == "reconnected":
            self.reconnects.setdefault(life.ident, []).append(int(ev.get("t_ns", 0)))
            self.last_progress = time.monotonic()
        elif kind == "done":
            life.done = ev
            if life.role == "consumer":
                life.received = max(life.received, int(ev.get("received", 0)))
        elif kind == "exit":
            life.exit_code = ev["code"]
            if ev["code"] != 0 and not life.may_exit:
                raise ChaosFailed(f"{life.ident} exited with {ev['code']}: "
                                  f"{child.last_error() or 'no message'} (log: {child.log_path})")
            if ev["code"] == 0 and not life.stopping and life.done is None:
                raise ChaosFailed(f"{life.ident} exited unasked (log: {child.log_path})")

    def _feed(self, life: Life) -> None:
        """Next burst for a producer whose last one was confirmed (or ``stop`` after its last)."""
        p = life.producer
        if not life.alive or self.hold:
            return
        if len(set(p.confirmed)) >= life.plan:
            if not life.stopping:
                life.stopping = True
                life.child.send("stop")
        elif p.started == len(set(p.confirmed)) and p.started < life.plan:
            p.started += 1
            life.child.send("go")

    def wait_until(self, pred, timeout: float, what: str) -> None:
        if not self.sup.wait_until(pred, timeout, self.on_event, poll=0.2):
            raise ChaosFailed(f"timed out after {timeout:.0f} s waiting for {what}")

    def pause(self, seconds: float) -> None:
        """Handle events for ``seconds``."""
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            self.pump(min(left, 0.1))

    # -- starting things -------------------------------------------------------------------
    def broker_spec(self, name: str, host: str = "127.0.0.1", **kw) -> brokers.BrokerSpec:
        kw.setdefault("data_dir", self.work / f"broker-{name}")
        return brokers.BrokerSpec(
            name=name, host=host, persistence="kahadb", queue_prefetch=self.spec.prefetch,
            openwire_port=brokers.free_port(), stomp_port=brokers.free_port(),
            ws_port=brokers.free_port(), **kw)

    def start_broker(self, bs: brokers.BrokerSpec, what: str, **kw) -> brokers.Broker:
        """Start and wait until ready; a port still held by a killed broker is retried."""
        deadline = time.monotonic() + 30
        while True:
            try:
                b = brokers.start(self.sup, bs, self.work, timeout=self.spec.ready_timeout, **kw)
                break
            except brokers.BrokerError as e:
                if "in use" not in str(e).lower() or time.monotonic() > deadline:
                    raise
                time.sleep(1)
        self.broker_children[id(b.child)] = what
        self.broker_ready_ns[id(b.child)] = time.time_ns()
        return b

    def url(self, broker: brokers.Broker) -> str:
        """OpenWire clients get a failover URL (they reconnect by themselves); STOMP cannot."""
        if self.resolved.protocol == "openwire":
            return failover_url(broker.openwire_url)
        return broker.url_for(self.resolved.protocol)

    def start_client(self, role: str, slot: str, url: str, *, generation: int = 0,
                     plan: int = 0, prefetch: int | None = None, wrap: list[str] | None = None,
                     extra: list[str] | None = None) -> Life:
        spec = self.spec
        ident = slot if generation == 0 else f"{slot}r{generation}"
        rec = self.dir / "records" / f"{ident}.tsv"
        args = [
            "--url", url, "--destinations", self.queue, "--count", str(spec.count),
            "--size", str(spec.size), "--bursts", str(max(plan, 1)), "--id", ident, "--gate",
            "--records", str(rec), "--connect-timeout", "30", *(extra or []),
        ]  # fmt: skip
        if role == "producer":
            args.append("--persistent")
        else:
            args += ["--ack", "client", "--prefetch", str(prefetch or spec.prefetch)]
        argv = options.command(self.resolved, role, args)
        child = self.sup.start(ident, (wrap or []) + argv, role=role)
        life = Life(slot=slot, ident=ident, role=role, child=child, records=rec, plan=plan)
        if role == "producer":
            life.producer = ProducerLife(ident, spec.count)
        self.lives.append(life)
        return life

    def start_clients(self, urls_c: list[str], urls_p: list[str], prefetch: list[int],
                      wrap_c=None, wrap_p=None, extra: list[str] | None = None) -> None:
        """Consumers (``c1``...), then producers (``p1``...) each with the whole plan; go."""
        spec = self.spec
        self.progress(f"starting {spec.consumers} consumer(s) and {spec.producers} producer(s) "
                      f"({self.resolved.label})")
        cons = [self.start_client("consumer", f"c{i + 1}", urls_c[i % len(urls_c)],
                                  prefetch=prefetch[i], wrap=wrap_c, extra=extra)
                for i in range(spec.consumers)]
        self.wait_until(lambda: all(c.ready for c in cons), spec.ready_timeout,
                        "the consumers' ready")
        prods = [self.start_client("producer", f"p{i + 1}", urls_p[i % len(urls_p)],
                                   plan=spec.bursts, wrap=wrap_p, extra=extra)
                 for i in range(spec.producers)]
        self.wait_until(lambda: all(p.ready for p in prods), spec.ready_timeout,
                        "the producers' ready")
        for p in prods:
            self._feed(p)

    def producers(self) -> list[Life]:
        return [life for life in self.lives if life.role == "producer"]

    def consumers(self) -> list[Life]:
        return [life for life in self.lives if life.role == "consumer"]

    def confirmed_bursts(self, slot: str | None = None) -> int:
        return sum(len(set(life.producer.confirmed)) for life in self.producers()
                   if slot is None or life.slot == slot)

    def wait_mid_run(self) -> None:
        """Until half the bursts are confirmed, then a moment so the next one is in flight."""
        half = self.spec.producers * self.spec.bursts // 2
        self.wait_until(lambda: self.confirmed_bursts() >= half, self._burst_timeout(half),
                        f"{half} confirmed bursts")
        self.pause(0.05)

    def _burst_timeout(self, bursts: int) -> float:
        return 60 + bursts * self.spec.count * max(self.spec.size, 100) / 2e4

    # -- the end ---------------------------------------------------------------------------
    def drain(self, quiet: float = 3.0) -> None:
        """Until every producer slot is done and consumers hold what was confirmed, then
        ``quiet`` seconds without a new message (redeliveries); or no progress at all for
        ``stall_timeout`` (recorded as an error: the accounting then shows what is missing)."""
        spec = self.spec
        slots = {life.slot for life in self.producers()}
        self.last_progress = time.monotonic()

        def producers_done() -> bool:
            return all(self.confirmed_bursts(s) >= spec.bursts for s in slots) and all(
                not life.alive for life in self.producers())

        def counted() -> int:  # consumers whose records we will have
            return sum(life.received for life in self.consumers()
                       if life.alive or (life.exit_code == 0))

        last_total, last_change = -1, time.monotonic()
        while True:
            self.pump(0.2)
            now = time.monotonic()
            total = counted()
            if total != last_total:
                last_total, last_change = total, now
            want = sum(len(set(life.producer.confirmed)) for life in self.producers()) * \
                spec.count
            if producers_done() and total >= want and now - last_change >= quiet:
                return
            if now - self.last_progress > spec.stall_timeout:
                self.result.errors.append(
                    f"stalled: no progress for {spec.stall_timeout:.0f} s ({total} received, "
                    f"{want} confirmed); stopped and accounted")
                self.result.status = "failed"
                return

    def stop_consumers(self) -> None:
        if self.duty is not None:
            self.duty.finish()
        live = [c for c in self.consumers() if c.alive]
        for c in live:
            c.stopping = True
            c.child.send("stop")
        try:
            self.wait_until(lambda: all(not c.alive for c in live), 90, "the consumers to stop")
        except ChaosFailed as e:
            self.result.errors.append(str(e))
            for c in live:
                self.sup.stop(c.child)

    def stop_brokers(self) -> None:
        for child in reversed(self.sup.children):
            if id(child) in self.broker_children:
                self.expected_broker_exit.add(id(child))
                self.sup.stop(child)

    def finish(self) -> None:
        self.drain()
        self.t_drained = time.time_ns()
        self.stop_consumers()
        self.stop_brokers()

    def first_received_after(self, t_ns: int, redelivered_only: bool = False) -> int | None:
        times = [r.recv_ns for recs in self.consumer_records.values() for r in recs
                 if r.recv_ns >= t_ns and (r.redelivered or not redelivered_only)]
        return min(times) if times else None

    def unmarked_duplicates(self) -> None:
        t = self.result.tally
        if t.duplicates and t.duplicates > t.redelivered:
            self.result.notes.append(
                f"{t.duplicates - t.redelivered:,} duplicate(s) came without the redelivered "
                "flag: a broker that starts from the store does not know what was dispatched "
                "before (persistJMSRedelivered is off)")

    # -- brokers in network namespaces ------------------------------------------------------
    def namespaced_specs(self, layout: str, prefix: str):
        """The layout's brokers, one network namespace each (self.net, created), with static
        network connectors between them: (layout, {name: BrokerSpec})."""
        from burstbench.infra import netns

        lay = topology.layout(layout)
        tag = f"{prefix}{uuid.uuid4().hex[:6]}"
        self.net = netns.Network(tag, lay.brokers)
        self.net.create()
        specs = {name: self.broker_spec(name, host=self.net.address(name))
                 for name in lay.brokers}
        for name, bs in specs.items():
            bs.network_connectors = topology.connectors(
                lay, name, "static", tag,
                lambda peer: f"tcp://{specs[peer].host}:{specs[peer].openwire_port}")
        return lay, specs

    def start_namespaced(self, specs: dict) -> dict:
        """Start each broker of namespaced_specs in its namespace; {name: broker}."""
        started = {}
        for name, bs in specs.items():
            self.progress(f"starting broker {name} on {bs.host} (namespace)")
            started[name] = self.start_broker(
                bs, f"broker {name}", wrap=self.net.wrap(name),
                probe=lambda host, port, n=name: self.net.probe(n, port))
        return started

    def query_stats(self, timeout: float = 30) -> dict[str, dict]:
        """Every live broker's counters for this run's queue (its ``stats`` line)."""
        kids = [c for c in self.sup.children if id(c) in self.broker_children and c.alive()]
        n0 = len(self.broker_stats)
        for c in kids:
            c.send("stats")
        self.wait_until(lambda: len(self.broker_stats) - n0 >= len(kids), timeout,
                        "the brokers' stats")
        out = {}
        for st in self.broker_stats[n0:]:
            q = st.get("queues", {}).get(self.queue, {})
            out[st.get("broker", "?")] = {k: q.get(k, 0) for k in
                                          ("enqueued", "dequeued", "size", "inflight")}
        return out

