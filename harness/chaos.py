"""Faults during a persistent, client-acknowledged burst, and what they cost: ``./bench chaos``.

Every scenario runs producers and competing consumers of one client (``--client``) against
KahaDB with synchronous journal writes, persistent messages and ``--ack client``, injects one
fault mid-run, waits until everything that can arrive has arrived, and reports sent, received,
lost, duplicated and redelivered messages and how long recovery took:

=============== ===========================================================================
broker-kill     SIGKILL the broker's process group mid-burst, restart it on the same store
                and ports. OpenWire clients reconnect by themselves (``failover:`` URL);
                STOMP clients cannot, so the harness starts new ones once the broker is back.
link-cut        ``forward`` topology on network namespaces (producer on a, consumers on b):
                take b's link down for ``--cut-seconds`` mid-run, then restore it. Clients
                talk to their own host's broker, so only the bridge a -> b crosses the cut
                (cutting a would do the same).
failover-pair   two brokers on one KahaDB directory (shared-store master/slave): SIGKILL the
                master; the slave gets the store's lock and takes over. Every client gets
                ``--url MASTER --failover SLAVE`` and reconnects with its library's own
                mechanism (``FAILOVER_HOW``; clients/contract.md, "Failover").
consumer-kill   SIGKILL one of several consumers mid-run; the broker redelivers what it held.
slow-consumer   stop one consumer 80% of every 100 ms (SIGSTOP/SIGCONT on its process group),
                prefetch 10, 1 KiB bodies, queue memory limit 1 MB: its prefetch fills, the
                others take the rest, and nothing may stall for ``stall_timeout``.
mesh-partition  ``mesh3`` on network namespaces (duplex bridges a-b, a-c, b-c), a producer
                and a consumer on each broker: c's link goes down for ``--cut-seconds``
                (c's clients keep talking to c, a and b to each other), then comes back;
                once the bridges are up again every confirmed message must be delivered,
                and after the consumers stop the brokers' own counters must show nothing
                left on any broker (none stranded).
store-full      8 KiB persistent messages into a broker whose store limit (``storeUsage``)
                holds about a third of the run, 1 MB journal files reclaimed every second;
                producers start with no consumer until the broker says the store is full
                and they stopped getting confirmations, then consumers drain it: producers
                must be held back (flow control) or get a clear error, and every burst must
                complete once the store drains.
=============== ===========================================================================

Accounting (``reckon``). A producer is driven through the contract's ``--gate`` in bursts of
``--count`` messages, the next ``go`` sent only when the previous burst's ``burst`` event came
(the last message of a burst is confirmed by the broker: a STOMP receipt, a synchronous JMS
send), so at most one burst per producer is unconfirmed when a fault strikes. A message counts
as *sent* once its burst was confirmed; it is *lost* if it was sent and no consumer recorded
it. Messages of the one unconfirmed burst may or may not have reached the broker: they are
reported as *unconfirmed* (and how many of them arrived), never as lost. A STOMP producer
whose connection died is replaced by a new process with a new id (``p1`` -> ``p1r1``: a
contract producer always starts at sequence 0) that sends the bursts still owed, the
unconfirmed one included, so every producer id is accounted for on its own.

A consumer killed with SIGKILL, or a STOMP consumer that exits on a dropped connection, writes
no records; had it acknowledged messages, those would be neither redelivered nor recorded and
would look lost. So such a consumer runs with a prefetch of more than twice the run's messages
(a ``client``-mode consumer acknowledges every ceil(prefetch/2), and at stop): it acknowledges
nothing before it dies and the broker redelivers everything it held.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import signal
import threading
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path

from harness import brokers, clients, measure, options, paths, topology
from harness.procs import Child, Interrupted, Supervisor
from harness.results import json_safe

SCENARIOS = ("broker-kill", "link-cut", "failover-pair", "consumer-kill", "slow-consumer",
             "store-full", "mesh-partition")
# failover-pair: how each library fails over (stock, documented options) and what the
# client's own code adds on top (clients/contract.md, "Failover")
FAILOVER_HOW = {
    "perl": "Net::Stomp hosts + reconnect_attempts/connect_delay: the library reconnects and "
            "re-subscribes inside its next send/receive; the client adds: resend a burst "
            "whose receipt the drop took, forget unacked messages",
    "python": "stomp.py host list + reconnect_sleep_*/reconnect_attempts_max; connect() again "
              "after on_disconnected (its documented pattern) and subscribe again; the client "
              "adds: resend a burst whose receipt the drop took, forget unacked messages",
    "node": "stompjs reconnectDelay (reconnects by itself), beforeConnect picks the next "
            "address, subscribe again in onConnect; the client adds: resend a burst whose "
            "receipt the drop took, forget unacked messages",
    "java": "failover:(master,slave) transport: reconnects, replays session state and "
            "resends in-flight sends itself; the client adds nothing",
}
DEFAULT_CLIENT = {"failover-pair": "openwire-jms"}
NS = 1_000_000_000

RULE = (
    "sent = messages of bursts the broker confirmed (receipt / synchronous send); lost = sent "
    "and never received; unconfirmed = the at most one burst per producer in flight at the "
    "fault (not counted as sent; a replacement producer with a new id resends it); "
    "duplicates = deliveries beyond the first (redeliveries after a fault)"
)

DESCRIPTION = {
    "broker-kill": "broker SIGKILLed mid-burst, restarted on the same store and ports",
    "link-cut": "inter-broker link (forward, a -> b) cut mid-burst, then restored",
    "failover-pair": "shared-store master SIGKILLed mid-burst, slave takes over",
    "consumer-kill": "one of several client-ack consumers SIGKILLed mid-burst",
    "slow-consumer": "one consumer stopped 80% of every 100 ms (SIGSTOP/SIGCONT)",
    "mesh-partition": "mesh3 on network namespaces, clients on all three brokers: broker c's "
                      "links cut mid-run, then restored",
    "store-full": "persistent burst into a small store (storeUsage limit) with no consumer "
                  "until it is full; then consumers drain it",
}


class ChaosFailed(RuntimeError):
    """The scenario could not be carried out (a process failed, a wait timed out)."""


class Skip(Exception):
    """The scenario cannot run here or does not apply to the client; the message says why."""

    def __init__(self, reason: str, status: str = "skipped"):
        super().__init__(reason)
        self.status = status


@dataclass
class ChaosSpec:
    """One scenario with one client. Zero means the scenario's default."""

    scenario: str
    client: str = ""
    count: int = 500  # messages per burst: small, so little is in flight at the fault
    bursts: int = 12  # per producer
    size: int = 0  # body bytes (6; 1024 for slow-consumer, so the broker's memory fills)
    producers: int = 1
    consumers: int = 0  # 2; 3 for consumer-kill and slow-consumer
    prefetch: int = 0  # 100; 10 for slow-consumer, so its limit binds the slow one early
    cut_s: float = 10.0  # link-cut: how long the link stays down
    stall_timeout: float = 60.0  # no progress at all for this long: stuck (a deadlock)
    ready_timeout: float = 60.0

    def __post_init__(self) -> None:
        self.client = self.client or DEFAULT_CLIENT.get(self.scenario, "stomp-py")
        if not self.size:
            self.size = {"slow-consumer": 1024, "store-full": 8192}.get(self.scenario, 6)
        if self.scenario == "mesh-partition":  # one producer and one consumer per broker
            self.producers = self.consumers = 3
        if not self.consumers:
            self.consumers = 3 if self.scenario in ("consumer-kill", "slow-consumer") else 2
        if not self.prefetch:
            self.prefetch = 10 if self.scenario == "slow-consumer" else 100

    def validate(self) -> clients.Resolved:
        """The resolved client; ValueError for bad input, Skip when it cannot run here."""
        if self.scenario not in SCENARIOS:
            raise ValueError(f"unknown scenario {self.scenario!r} (have: {', '.join(SCENARIOS)}, "
                             "all)")
        for name, v, low in (("count", self.count, 1), ("bursts", self.bursts, 4),
                             ("producers", self.producers, 1), ("size", self.size, 1),
                             ("prefetch", self.prefetch, 1)):
            if v < low:
                raise ValueError(f"{name} must be >= {low}: {v}")
        if self.consumers < (2 if self.scenario in ("consumer-kill", "slow-consumer") else 1):
            raise ValueError(f"{self.scenario} needs at least 2 consumers: {self.consumers}")
        if self.cut_s <= 0:
            raise ValueError(f"cut seconds must be > 0: {self.cut_s}")
        r = clients.resolve(self.client)
        if "client" not in r.client.ack_modes:
            raise Skip(f"{r.client.name} cannot do --ack client", "n/a")
        why = r.client.missing()
        if why:
            raise Skip(why)
        if not paths.BROKER_CLASSES.exists():
            raise Skip("broker not built (./bench setup)")
        if self.scenario in ("link-cut", "mesh-partition"):
            from harness import netns

            why = netns.available()
            if why:
                raise Skip(f"{self.scenario} needs network namespaces: {why}")
        return r

    def total(self) -> int:
        """Messages the producers are to get confirmed, all together."""
        return self.producers * self.bursts * self.count


# -- accounting ------------------------------------------------------------------------------
@dataclass
class ProducerLife:
    """What one producer process was asked to send and what the broker confirmed."""

    ident: str
    count: int
    started: int = 0  # bursts it was told to send ("go" lines)
    confirmed: list[int] = field(default_factory=list)  # bursts with a ``burst`` event
    recorded: list[tuple[str, int, int, int]] = field(default_factory=list)  # its records

    def confirmed_keys(self) -> set[tuple[str, int]]:
        return {(self.ident, s) for b in set(self.confirmed)
                for s in range(b * self.count, (b + 1) * self.count)}

    def attempted_keys(self) -> set[tuple[str, int]]:
        keys = {(self.ident, s) for s in range(self.started * self.count)}
        return keys | {(p, s) for p, s, _b, _t in self.recorded}


@dataclass
class Tally:
    sent: int = 0
    received: int = 0
    lost: int = 0
    duplicates: int = 0
    redelivered: int = 0
    unconfirmed: int = 0
    unconfirmed_received: int = 0
    foreign: int = 0
    body_errors: int = 0
    lost_sample: list[str] = field(default_factory=list)
    by_consumer: dict[str, int] = field(default_factory=dict)  # distinct messages each recorded


def reckon(producers: list[ProducerLife], consumers: dict[str, list[measure.ConsumerRecord]],
           size: int | None = None) -> Tally:
    """Match confirmed sends with every consumer's records (the rule is the module's)."""
    t = Tally()
    confirmed: set = set()
    attempted: set = set()
    for p in producers:
        confirmed |= p.confirmed_keys()
        attempted |= p.attempted_keys()
    unconfirmed = attempted - confirmed
    seen: dict[tuple[str, int], int] = {}
    for name, records in consumers.items():
        mine = set()
        for r in records:
            key = (r.producer, r.seq)
            if key not in attempted:
                t.foreign += 1
                continue
            seen[key] = seen.get(key, 0) + 1
            mine.add(key)
            t.redelivered += r.redelivered
            if not r.body_ok or (size is not None and r.nbytes != size):
                t.body_errors += 1
        t.by_consumer[name] = len(mine)
    t.sent = len(confirmed)
    t.received = len(confirmed & seen.keys())
    t.unconfirmed = len(unconfirmed)
    t.unconfirmed_received = len(unconfirmed & seen.keys())
    t.duplicates = sum(n - 1 for n in seen.values())
    missing = confirmed - seen.keys()
    t.lost = len(missing)
    t.lost_sample = [f"{p}#{s}" for p, s in sorted(missing)[:10]]
    return t


@dataclass
class Result:
    """One scenario with one client: the row of the reliability table and its details."""

    scenario: str
    client: str
    status: str = "ok"  # ok, failed, skipped, n/a
    reason: str = ""
    tally: Tally | None = None
    recovery_s: float | None = None
    fault: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    wall_s: float = 0.0
    dir: str = ""

    @property
    def lost(self) -> int:
        return self.tally.lost if self.tally else 0

    def ok(self) -> bool:
        return self.status in ("ok", "skipped", "n/a")

    def as_dict(self) -> dict:
        d = asdict(self)
        d["tally"] = asdict(self.tally) if self.tally else None
        return d


# -- processes -------------------------------------------------------------------------------
@dataclass
class Life:
    """One process in a producer or consumer slot; a slot gets a new life after a fault."""

    slot: str
    ident: str
    role: str
    child: Child
    records: Path
    plan: int = 0  # producer: bursts to send
    producer: ProducerLife | None = None
    received: int = 0  # consumer: from its ticks
    ready: bool = False
    done: dict | None = None
    exit_code: int | None = None
    may_exit: bool = False  # a fault is expected to end it
    stopping: bool = False

    @property
    def alive(self) -> bool:
        return self.exit_code is None


class DutyCycle(threading.Thread):
    """Stops a child's process group for ``stopped_s`` of every ``period_s`` until finished."""

    def __init__(self, child: Child, stopped_s: float = 0.08, period_s: float = 0.1):
        super().__init__(daemon=True, name=f"duty-{child.name}")
        self.child, self.stopped_s, self.period_s = child, stopped_s, period_s
        self.halt = threading.Event()
        self.cycles = 0

    def _signal(self, sig: int) -> bool:
        try:
            os.killpg(self.child.pid, sig)  # the child leads its own group
            return True
        except ProcessLookupError:
            return False

    def run(self) -> None:
        while not self.halt.is_set() and self.child.alive():
            if not self._signal(signal.SIGSTOP):
                break
            self.halt.wait(self.stopped_s)
            self._signal(signal.SIGCONT)
            self.cycles += 1
            self.halt.wait(self.period_s - self.stopped_s)

    def finish(self) -> None:
        self.halt.set()
        if self.is_alive():
            self.join(timeout=2)
        self._signal(signal.SIGCONT)


def failover_url(*urls: str) -> str:
    """OpenWire failover over ``urls``, retrying every 0.1-1 s, a send blocking up to 120 s."""
    return (f"failover:({','.join(urls)})?randomize=false&initialReconnectDelay=100"
            "&maxReconnectDelay=1000&timeout=120000")


class Chaos:
    """Runs one scenario inside ``out_dir``; ``run()`` always stops what it started."""

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
            self.resolved = spec.validate()
        except Skip as e:
            self.result.status, self.result.reason = e.status, str(e)
            return self.result
        self.result.client = self.resolved.label
        self._open_dirs()
        try:
            getattr(self, "_" + spec.scenario.replace("-", "_"))()
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
            self._after()
        except Exception as e:  # noqa: BLE001 - a figure we could not compute is just absent
            self.result.notes.append(f"could not compute the fault's figures: {e}")

    def _after(self) -> None:
        """Figures from the records once every process has stopped (per scenario)."""
        hook = getattr(self, "_after_" + self.spec.scenario.replace("-", "_"), None)
        fault_struck = self.t_kill is not None or self.t_restore is not None
        if hook and (fault_struck or self.spec.scenario == "slow-consumer"):
            hook()

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

    # -- broker-kill -----------------------------------------------------------------------
    def _broker_kill(self) -> None:
        spec = self.spec
        stomp = self.resolved.protocol != "openwire"
        bs = self.broker_spec("a")
        self.progress("starting broker a (kahadb, sync)")
        b = self.start_broker(bs, "broker a")
        big = 2 * (spec.total() + spec.producers * spec.count) + 2
        prefetch = [big if stomp else spec.prefetch] * spec.consumers
        self.start_clients([self.url(b)], [self.url(b)], prefetch)
        self.wait_mid_run()

        old_pid = b.child.pid
        at = {life.ident: len(set(life.producer.confirmed)) for life in self.producers()}
        if stomp:
            self.hold = True
            for life in self.lives:
                life.may_exit = True
        self.expected_broker_exit.add(id(b.child))
        t_kill = time.time_ns()
        self.sup.kill(b.child)
        self.progress(f"killed broker a (pid {old_pid}, SIGKILL to its process group) with "
                      f"{at} bursts confirmed")
        self.wait_until(lambda: not b.child.alive(), 30, "the killed broker to exit")
        if stomp:
            for c in self.consumers():
                c.stopping = True
                c.child.send("stop")  # one that is still running writes its records
        b2 = self.start_broker(bs, "broker a (restarted)")  # same spec: same store and ports
        t_ready = self.broker_ready_ns[id(b2.child)]
        self.progress(f"broker a restarted as pid {b2.child.pid} in "
                      f"{(t_ready - t_kill) / NS:.1f} s")
        self.result.fault = {
            "killed_pid": old_pid, "restarted_pid": b2.child.pid, "kill_ns": t_kill,
            "ready_ns": t_ready, "down_s": round((t_ready - t_kill) / NS, 3),
            "bursts_confirmed_at_kill": at, "ports": b2.ports,
        }
        self.t_kill, self.t_ready = t_kill, t_ready
        if stomp:
            self._restart_stomp_clients(b2, big)
        self.finish()

    def _restart_stomp_clients(self, b: brokers.Broker, prefetch: int) -> None:
        """New consumers, then new producers owing what the old ones did not get confirmed."""
        spec = self.spec
        old = [life for life in self.lives if life.alive]
        try:
            self.wait_until(lambda: all(not life.alive for life in old), 20,
                            "STOMP clients to notice the dropped connection")
        except ChaosFailed:
            for life in old:
                if life.alive:
                    life.stopping = True
                    self.sup.stop(life.child)
        gone = [life for life in self.lives if life.exit_code not in (None, 0)]
        if gone:
            self.result.notes.append("exited on the dropped connection: " + ", ".join(
                f"{life.ident} ({life.exit_code})" for life in gone))
        self.hold = False
        gen = 1 + max(int(life.ident.partition("r")[2] or 0) for life in self.lives)
        cons = [self.start_client("consumer", f"c{i + 1}", self.url(b), generation=gen,
                                  prefetch=prefetch) for i in range(spec.consumers)]
        self.wait_until(lambda: all(c.ready for c in cons), spec.ready_timeout,
                        "the new consumers' ready")
        owed = {}
        for i in range(spec.producers):
            slot = f"p{i + 1}"
            left = spec.bursts - self.confirmed_bursts(slot)
            if left > 0:
                owed[slot] = left
        prods = [self.start_client("producer", slot, self.url(b), generation=gen, plan=left)
                 for slot, left in owed.items()]
        self.wait_until(lambda: all(p.ready for p in prods), spec.ready_timeout,
                        "the new producers' ready")
        self.progress("restarted STOMP clients: " + ", ".join(
            f"{p.ident} owes {p.plan} burst(s)" for p in prods) if prods else "nothing owed")
        self.result.notes.append(
            "STOMP clients do not reconnect: after the restart the harness started "
            + ", ".join(life.ident for life in cons + prods)
            + f"; STOMP consumers ran with prefetch {prefetch} so one that died unrecorded had "
            "acknowledged nothing")
        for p in prods:
            self._feed(p)

    def _after_broker_kill(self) -> None:
        first = self.first_received_after(self.t_ready)
        if first is not None:
            self.result.recovery_s = round((first - self.t_kill) / NS, 3)
            self.result.fault["first_after_restart_ns"] = first
        self._unmarked_duplicates()

    def _unmarked_duplicates(self) -> None:
        t = self.result.tally
        if t.duplicates and t.duplicates > t.redelivered:
            self.result.notes.append(
                f"{t.duplicates - t.redelivered:,} duplicate(s) came without the redelivered "
                "flag: a broker that starts from the store does not know what was dispatched "
                "before (persistJMSRedelivered is off)")

    # -- failover-pair ---------------------------------------------------------------------
    def _failover_pair(self) -> None:
        spec = self.spec
        store = self.work / "shared-store"
        ms = self.broker_spec("master", data_dir=store, lock_acquire_ms=500)
        ss = self.broker_spec("slave", data_dir=store, lock_acquire_ms=500)
        self.progress("starting the master (kahadb, sync, shared store)")
        master = self.start_broker(ms, "master")
        slave = self._start_waiting(ss)
        self.progress("slave started: waiting for the store's lock")
        locked = self._wait_log(slave.child, ("locked", "slave"), 60)
        if not locked:
            self.result.notes.append("the slave's log never said it waits for the lock")
        # every client: the master's address and --failover the slave's (its library's own
        # failover; for OpenWire the client builds failover:(master,slave))
        proto = self.resolved.protocol
        url_m, url_s = ((master.openwire_url, slave.openwire_url) if proto == "openwire"
                        else (master.url_for(proto), slave.url_for(proto)))
        self.start_clients([url_m], [url_m], [spec.prefetch] * spec.consumers,
                           extra=["--failover", url_s])
        self.wait_mid_run()
        t_kill = time.time_ns()
        self.expected_broker_exit.add(id(master.child))
        self.sup.kill(master.child)
        self.progress(f"killed the master (pid {master.child.pid})")
        self.wait_until(lambda: id(slave.child) in self.broker_ready_ns, spec.ready_timeout,
                        "the slave to take over")
        deadline = time.monotonic() + 30
        while not all(brokers.port_accepts(ss.host, p) for p in slave.ports):
            if time.monotonic() > deadline:
                raise ChaosFailed(f"slave said ready but ports {slave.ports} do not accept")
            self.pump(0.05)
        t_ready = time.time_ns()
        self.progress(f"slave (pid {slave.child.pid}) took over in {(t_ready - t_kill) / NS:.1f} s")
        self.result.fault = {
            "master_pid": master.child.pid, "slave_pid": slave.child.pid, "kill_ns": t_kill,
            "slave_ready_ns": t_ready, "failover_s": round((t_ready - t_kill) / NS, 3),
            "slave_waited_for_lock": locked,
        }
        self.t_kill, self.t_ready = t_kill, t_ready
        self.finish()

    def _start_waiting(self, bs: brokers.BrokerSpec) -> brokers.Broker:
        """Launch a broker without waiting for it: a slave says ready only once it has the
        store's lock."""
        bs.data_dir.mkdir(parents=True, exist_ok=True)
        xml = self.work / f"activemq-{bs.name}.xml"
        xml.write_text(brokers.render(bs))
        child = self.sup.start(f"broker-{bs.name}",
                               brokers.java_argv(xml, bs.heap, ["--watch-stdin"]),
                               role="broker", cwd=bs.data_dir)
        self.broker_children[id(child)] = f"broker {bs.name}"
        return brokers.Broker(spec=bs, child=child, xml_path=xml)

    def _wait_log(self, child: Child, words: tuple[str, ...], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                text = child.log_path.read_text(errors="replace").lower()
            except OSError:
                text = ""
            if all(w in text for w in words):
                return True
            self.pump(0.2)
        return False

    def _after_failover_pair(self) -> None:
        # the first message on a new connection: after the first consumer's reconnection
        # (the slave may accept clients before its launcher says ready), else after ready
        back_c = [min(ts) for ident, ts in self.reconnects.items()
                  if ts and ident.startswith("c")]
        first = self.first_received_after(min(back_c) if back_c else self.t_ready)
        if first is not None:
            self.result.recovery_s = round((first - self.t_kill) / NS, 3)
            self.result.fault["first_after_takeover_ns"] = first
        back = {ident: round((min(ts) - self.t_kill) / NS, 3)
                for ident, ts in sorted(self.reconnects.items()) if ts}
        self.result.fault["reconnected_s"] = back
        self.result.fault["beyond_documented_options"] = (
            self.resolved.client.language != "java")
        self.result.notes.append(
            f"{self.resolved.client.language}: {FAILOVER_HOW[self.resolved.client.language]}")
        gone = [life.ident for life in self.lives if life.exit_code not in (None, 0)]
        if gone:
            self.result.notes.append("exited instead of failing over: " + ", ".join(gone))
        self._unmarked_duplicates()

    # -- consumer-kill ---------------------------------------------------------------------
    def _consumer_kill(self) -> None:
        spec = self.spec
        self.progress("starting broker a (kahadb, sync)")
        b = self.start_broker(self.broker_spec("a"), "broker a")
        big = 2 * spec.total() + 2
        prefetch = [big] + [spec.prefetch] * (spec.consumers - 1)
        self.start_clients([self.url(b)], [self.url(b)], prefetch)
        victim = self.consumers()[0]
        self.wait_mid_run()
        self.wait_until(lambda: victim.received > 0, 30, f"{victim.ident} to receive something")
        victim.may_exit = True
        t_kill = time.time_ns()
        held = victim.received
        self.sup.kill(victim.child)
        self.wait_until(lambda: not victim.alive, 30, f"{victim.ident} to exit")
        self.progress(f"killed {victim.ident} (pid {victim.child.pid}) holding at least {held} "
                      "unacknowledged message(s)")
        self.result.fault = {"victim": victim.ident, "victim_pid": victim.child.pid,
                             "victim_exit": victim.exit_code, "kill_ns": t_kill,
                             "victim_received_before_kill": held, "victim_prefetch": big}
        self.result.notes.append(f"{victim.ident} ran with prefetch {big} so it acknowledged "
                                 "nothing before it was killed (a SIGKILLed process writes no "
                                 "records)")
        self.t_kill = t_kill
        self.finish()

    def _after_consumer_kill(self) -> None:
        first = self.first_received_after(self.t_kill, redelivered_only=True)
        if first is not None:
            self.result.recovery_s = round((first - self.t_kill) / NS, 3)
        t = self.result.tally
        if t and not t.redelivered and self.result.status == "ok":
            self.result.status = "failed"
            self.result.errors.append("no redelivery recorded: the kill took nothing back")

    # -- slow-consumer ---------------------------------------------------------------------
    def _slow_consumer(self) -> None:
        spec = self.spec
        self.progress("starting broker a (kahadb, sync, queue memory limit 1mb)")
        b = self.start_broker(self.broker_spec("a", queue_memory_limit="1mb"), "broker a")
        self.broker_log = b.child.log_path
        self.start_clients([self.url(b)], [self.url(b)], [spec.prefetch] * spec.consumers)
        slow = self.consumers()[0]
        self.duty = DutyCycle(slow.child)
        self.duty.start()
        self.progress(f"{slow.ident} stopped 80% of every 100 ms")
        t0 = time.time_ns()
        self.result.fault = {"slow": slow.ident, "stopped_fraction": 0.8, "period_s": 0.1,
                             "prefetch": spec.prefetch}
        self.drain()
        self.result.fault.update(duty_cycles=self.duty.cycles,
                                 run_s=round((time.time_ns() - t0) / NS, 1))
        self.stop_consumers()
        self.stop_brokers()

    def _after_slow_consumer(self) -> None:
        t = self.result.tally
        slow = self.result.fault.get("slow")
        total = sum(t.by_consumer.values()) or 1
        shares = {k: round(v / total, 3) for k, v in t.by_consumer.items()}
        self.result.fault["shares"] = shares
        self.result.fault["fair_share"] = round(1 / self.spec.consumers, 3)
        if slow in shares:
            self.result.notes.append(f"{slow}'s share {shares[slow]:.1%} (fair share "
                                     f"{1 / self.spec.consumers:.1%})")
        text = ""
        try:
            text = Path(getattr(self, "broker_log", "")).read_text(errors="replace")
        except OSError:
            pass
        pfc = text.count("Usage Manager Memory Limit reached")
        blocked = text.count("cursor blocked")
        self.result.fault["flow_control_log_lines"] = pfc
        self.result.fault["cursor_blocked_log_lines"] = blocked
        self.result.notes.append(
            f"broker log: producer flow control {pfc} time(s), cursor blocked at the queue's "
            f"memory limit (no page-in) {blocked} time(s); prefetch {self.spec.prefetch} "
            "bounds what the slow consumer holds, the rest goes to the others")

    # -- brokers in network namespaces ------------------------------------------------------
    def namespaced_specs(self, layout: str, prefix: str):
        """The layout's brokers, one network namespace each (self.net, created), with static
        network connectors between them: (layout, {name: BrokerSpec})."""
        from harness import netns

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

    # -- mesh-partition ---------------------------------------------------------------------
    def _mesh_partition(self) -> None:
        spec = self.spec
        lay, specs = self.namespaced_specs("mesh3", "m")
        started = self.start_namespaced(specs)
        want = {f"broker {n}": lay.expected_bridges(n, "static") for n in lay.brokers}

        def meshed() -> bool:
            return all(self.bridges_now.get(k, 0) >= v for k, v in want.items())

        self.wait_until(meshed, spec.ready_timeout, "the mesh's bridges")
        self.pause(1.0)
        self.progress(f"starting a consumer and a producer on each of a, b, c "
                      f"({self.resolved.label})")
        hosts = lay.brokers
        cons = [self.start_client("consumer", f"c{i + 1}", self.url(started[h]),
                                  wrap=self.net.wrap(h)) for i, h in enumerate(hosts)]
        self.wait_until(lambda: all(c.ready for c in cons), spec.ready_timeout,
                        "the consumers' ready")
        self.pause(1.0)  # each consumer's demand reaches the other brokers
        prods = [self.start_client("producer", f"p{i + 1}", self.url(started[h]),
                                   plan=spec.bursts, wrap=self.net.wrap(h))
                 for i, h in enumerate(hosts)]
        self.wait_until(lambda: all(p.ready for p in prods), spec.ready_timeout,
                        "the producers' ready")
        for p in prods:
            self._feed(p)
        self.wait_mid_run()
        t_cut = time.time_ns()
        self.net.cut("c")
        self.progress(f"cut c's link for {spec.cut_s:g} s (a <-> b stays up)")
        try:
            self.pause(spec.cut_s)
        finally:
            self.net.restore("c")
        t_restore = time.time_ns()
        self.progress("restored c's link")
        self.t_cut, self.t_restore = t_cut, t_restore
        self.result.fault = {"cut": "c", "cut_ns": t_cut, "restore_ns": t_restore,
                             "cut_s": round((t_restore - t_cut) / NS, 3),
                             "bursts_confirmed_at_cut": self.confirmed_bursts()}
        try:
            self.wait_until(meshed, 120, "the bridges to c to come back")
            self.result.fault["bridges_back_s"] = round((time.time_ns() - t_restore) / NS, 3)
        except ChaosFailed as e:
            self.result.errors.append(str(e))
        self.drain()
        self.t_drained = time.time_ns()
        self.stop_consumers()
        # what each broker still holds once every consumer has acknowledged and left. A
        # message the network bridge took just before the consumers left is in flight until
        # the remote broker's acknowledgement comes back (asynchronously): the counters are
        # read until nothing is in flight or 20 s have passed, and both readings kept
        first = left = self.query_stats()
        t0 = time.monotonic()
        while any(q.get("inflight") for q in left.values()) and time.monotonic() - t0 < 20:
            time.sleep(0.5)
            left = self.query_stats()
        self.result.fault["brokers_at_leave"] = first
        self.result.fault["brokers_after"] = left
        self.result.fault["settle_s"] = round(time.monotonic() - t0, 1)
        self.stop_brokers()

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

    def _after_mesh_partition(self) -> None:
        # deliveries that cross c's link: a producer on c to a consumer on a or b, or back
        host = {"1": "a", "2": "b", "3": "c"}
        cross = [r for c, recs in self.consumer_records.items() for r in recs
                 if (host.get(c[1:2]) == "c") != (host.get(r.producer[1:2]) == "c")]
        after = sorted(r.recv_ns for r in cross if r.recv_ns >= self.t_restore)
        if after:
            self.result.recovery_s = round((after[0] - self.t_restore) / NS, 3)
        # the cut separated c: nothing sent a second into it crossed before the restore
        # (messages forwarded before the cut may still be consumed on the far side meanwhile)
        leaked = sum(1 for r in cross
                     if r.sent_ns > self.t_cut + NS and r.recv_ns < self.t_restore)
        held = sum(1 for r in cross
                   if self.t_cut + NS < r.sent_ns < self.t_restore <= r.recv_ns)
        self.result.fault["crossed_total"] = len(cross)
        self.result.fault["crossed_during_cut"] = leaked
        self.result.fault["held_until_restore"] = held
        if leaked:
            self.result.notes.append(f"{leaked} message(s) sent during the cut crossed c's "
                                     "link before the restore: the cut did not separate c")
        end = self.t_drained or time.time_ns()
        drops = sum(1 for t, n in self.bridge_events if self.t_cut <= t <= end and n == 0)
        self.result.fault["bridge_drops"] = drops
        self.result.notes.append(
            f"{held:,} message(s) sent during the cut crossed c's link only after the "
            "restore; " + (f"bridges dropped {drops} time(s) and reconnected" if drops else
               "the bridges' TCP connections outlived the cut"))
        left = self.result.fault.get("brokers_after", {})
        stranded = {b: q["size"] for b, q in left.items() if q.get("size")}
        self.result.fault["stranded"] = stranded
        if stranded and self.result.status == "ok":
            self.result.status = "failed"
            self.result.errors.append(f"messages stranded on a broker: {stranded}")
        self.result.notes.append(
            "brokers after the consumers left (enqueued/dequeued/left): " + ", ".join(
                f"{b} {q['enqueued']:,}/{q['dequeued']:,}/{q['size']:,}"
                for b, q in sorted(left.items())))

    # -- store-full -------------------------------------------------------------------------
    def store_limit_mb(self) -> int:
        """About a third of the run's bytes (at least 3 MB: three 1 MB journal files)."""
        return max(3, self.spec.total() * self.spec.size // (3 << 20))

    def _store_full(self) -> None:
        spec = self.spec
        limit = self.store_limit_mb()
        self.progress(f"starting broker a (kahadb, sync, store limit {limit} MB, 1 MB journal "
                      "files)")
        b = self.start_broker(self.broker_spec(
            "a", store_limit=f"{limit}mb",
            kahadb_attrs={"journalMaxFileLength": "1mb", "cleanupInterval": "1000",
                          "checkpointInterval": "500"}), "broker a")
        self.broker_log = b.child.log_path
        self.progress(f"starting {spec.producers} producer(s), no consumer yet "
                      f"({self.resolved.label})")
        prods = [self.start_client("producer", f"p{i + 1}", self.url(b), plan=spec.bursts)
                 for i in range(spec.producers)]
        self.wait_until(lambda: all(p.ready for p in prods), spec.ready_timeout,
                        "the producers' ready")
        for p in prods:
            self._feed(p)
        t0 = time.time_ns()
        held = 3.0  # no confirmation for this long, with the broker saying "full": held back

        def full() -> bool:
            if not self._log_says(b.child, "store is full"):
                return False
            last = max([t0] + [t for ts in self.burst_ns.values() for t in ts])
            return time.time_ns() - last >= held * NS or any(not p.alive for p in prods)

        self.wait_until(full, self._burst_timeout(spec.producers * spec.bursts),
                        "the store to fill (the broker's 'store is full' and producers held)")
        t_full = time.time_ns()
        at = {p.ident: len(set(p.producer.confirmed)) for p in prods}
        self.progress(f"store full after {(t_full - t0) / NS:.1f} s with {at} bursts confirmed; "
                      "starting the consumers")
        self.result.fault = {"store_limit_mb": limit, "full_ns": t_full,
                             "bursts_confirmed_when_full": at,
                             "producers_alive_when_full": [p.ident for p in prods if p.alive]}
        self.t_kill = t_full
        cons = [self.start_client("consumer", f"c{i + 1}", self.url(b))
                for i in range(spec.consumers)]
        self.wait_until(lambda: all(c.ready for c in cons), spec.ready_timeout,
                        "the consumers' ready")
        self.finish()

    def _log_says(self, child: Child, words: str) -> bool:
        try:
            return words in child.log_path.read_text(errors="replace").lower()
        except OSError:
            return False

    def _after_store_full(self) -> None:
        f = self.result.fault
        gaps = {}
        for ident, ts in sorted(self.burst_ns.items()):
            marks = sorted(ts)
            gaps[ident] = round(max(y - x for x, y in itertools.pairwise(marks)) / NS, 3) \
                if len(marks) > 1 else None
        f["longest_wait_for_a_confirmation_s"] = gaps
        text = ""
        try:
            text = Path(getattr(self, "broker_log", "")).read_text(errors="replace")
        except OSError:
            pass
        f["store_full_log_lines"] = text.lower().count("store is full")
        errors = {life.ident: life.child.last_error() for life in self.producers()
                  if life.exit_code not in (None, 0)}
        f["producer_errors"] = errors
        if errors:
            how = "error: " + "; ".join(f"{k}: {v}" for k, v in errors.items())
        else:
            where = ("the synchronous send() blocked" if self.resolved.protocol == "openwire"
                     else "the broker withheld the receipt and stopped reading the connection")
            how = (f"blocked, no error: {where} (producer flow control) until the store "
                   "drained; longest wait for a confirmation " + ", ".join(
                       f"{k} {v:.1f} s" for k, v in gaps.items() if v is not None))
        f["surfaced_as"] = how
        self.result.notes.append(f"{self.resolved.client.language}: {how}")
        first = self.first_received_after(self.t_kill)
        if first is not None:
            self.result.recovery_s = round((first - self.t_kill) / NS, 3)

    # -- link-cut --------------------------------------------------------------------------
    def _link_cut(self) -> None:
        spec = self.spec
        _lay, specs = self.namespaced_specs("forward", "c")
        started = self.start_namespaced(specs)
        a, b = started["a"], started["b"]
        def bridged() -> bool:  # attempts made while b was starting come and go: wait it out
            return bool(self.bridge_events) and self.bridge_events[-1][1] > 0

        for _ in range(2):
            self.wait_until(bridged, spec.ready_timeout, "the network bridge a -> b")
            self.pause(1.0)
        self.start_clients([self.url(b)], [self.url(a)], [spec.prefetch] * spec.consumers,
                           wrap_c=self.net.wrap("b"), wrap_p=self.net.wrap("a"))
        self.wait_mid_run()
        # clients talk to their own host's broker; only the bridge a -> b crosses the cut
        t_cut = time.time_ns()
        self.net.cut("b")
        self.progress(f"cut b's link for {spec.cut_s:g} s")
        try:
            self.pause(spec.cut_s)
        finally:
            self.net.restore("b")
        t_restore = time.time_ns()
        self.progress("restored b's link")
        self.result.fault = {"cut": "b", "cut_ns": t_cut, "restore_ns": t_restore,
                             "cut_s": round((t_restore - t_cut) / NS, 3),
                             "bursts_confirmed_at_cut": self.confirmed_bursts()}
        self.t_cut, self.t_restore = t_cut, t_restore
        self.finish()

    def _after_link_cut(self) -> None:
        times = sorted(r.recv_ns for recs in self.consumer_records.values() for r in recs)
        gap, at = 0, None
        for x, y in itertools.pairwise(times):
            if y > self.t_cut and x < self.t_restore + 60 * NS and y - x > gap:
                gap, at = y - x, x
        self.result.fault["longest_gap_s"] = round(gap / NS, 3)
        if at is not None:
            self.result.fault["gap_from_ns"] = at
        first = self.first_received_after(self.t_restore)
        if first is not None:
            self.result.recovery_s = round((first - self.t_restore) / NS, 3)
        if gap < self.spec.cut_s / 2 * NS:
            self.result.notes.append("deliveries never paused for half the cut: the cut did "
                                     "not interrupt forwarding")
        end = self.t_drained or time.time_ns()
        drops = sum(1 for t, n in self.bridge_events if n == 0 and self.t_cut <= t <= end)
        self.result.fault["bridge_drops"] = drops
        self.result.notes.append(
            f"longest pause in deliveries {gap / NS:.1f} s; recovery = restore -> first "
            "message forwarded after it; "
            + (f"the bridge dropped {drops} time(s) and reconnected" if drops else
               "the bridge (one TCP connection) stayed up through the cut"))


# -- the command -----------------------------------------------------------------------------
def matrix(client: str | None) -> list[tuple[str, str]]:
    """(scenario, client) pairs ``./bench chaos all`` runs: every scenario x every language."""
    names = [client] if client else list(clients.LANGUAGE_CLIENTS)
    return [(s, c) for s in SCENARIOS for c in names]


def table(results: list[Result]) -> str:
    """The reliability table, Markdown."""
    head = ("| scenario | client | status | sent | received | lost | duplicates | redelivered "
            "| unconfirmed (arrived) | recovery s | notes |")
    lines = [head, "|" + "---|" * 11]
    for r in results:
        t = r.tally
        n = _num if t else _dash
        rec = "-" if r.recovery_s is None else f"{r.recovery_s:.2f}"
        note = r.reason or "; ".join(r.errors[:1] + _fault_words(r))
        unc = f"{t.unconfirmed:,} ({t.unconfirmed_received:,})" if t else "-"
        lines.append(
            f"| {r.scenario} | {r.client} | {r.status} | {n(t and t.sent)} | "
            f"{n(t and t.received)} | {n(t and t.lost)} | {n(t and t.duplicates)} | "
            f"{n(t and t.redelivered)} | {unc} | {rec} | {note.replace('|', '/')} |")
    return "\n".join(lines)


def _num(v: int) -> str:
    return f"{v:,}"


def _dash(_v) -> str:
    return "-"


def _fault_words(r: Result) -> list[str]:
    f = r.fault
    if r.scenario == "broker-kill" and "restarted_pid" in f:
        return [f"pid {f['killed_pid']} -> {f['restarted_pid']}, down {f['down_s']:.1f} s"]
    if r.scenario == "failover-pair" and "slave_pid" in f:
        return [f"master {f['master_pid']} -> slave {f['slave_pid']} in {f['failover_s']:.1f} s"]
    if r.scenario == "consumer-kill" and "victim" in f:
        return [f"{f['victim']} killed holding >= {f['victim_received_before_kill']:,}"]
    if r.scenario == "link-cut" and "longest_gap_s" in f:
        return [f"cut {f['cut_s']:.0f} s, gap {f['longest_gap_s']:.1f} s"]
    if r.scenario == "mesh-partition" and "cut_s" in f:
        stranded = sum(f.get("stranded", {}).values())
        return [(f"c cut {f['cut_s']:.0f} s, bridges back in {f.get('bridges_back_s', '-')} s, "
                f"held until restore {f.get('held_until_restore', 0):,}, stranded {stranded:,}")]
    if r.scenario == "store-full" and "surfaced_as" in f:
        return [f"limit {f['store_limit_mb']} MB; {f['surfaced_as']}"]
    if r.scenario == "slow-consumer" and "shares" in f:
        s = f["shares"].get(f["slow"])
        lim = [f"prefetch {f.get('prefetch')}"] + [
            w for k, w in (("flow_control_log_lines", "producer flow control"),
                           ("cursor_blocked_log_lines", "cursor blocked")) if f.get(k)]
        return [f"slow share {s:.1%} of fair {f['fair_share']:.1%}; limits: {', '.join(lim)}"] \
            if s is not None else []
    return []


def report(r: Result) -> str:
    """A scenario's readable summary."""
    lines = [f"chaos {r.scenario} ({r.client}): {r.status.upper()}"
             + (f": {r.reason}" if r.reason else "")]
    if r.status in ("skipped", "n/a"):
        return lines[0]
    lines.append(f"  fault: {DESCRIPTION[r.scenario]}")
    t = r.tally
    if t:
        lines.append(
            f"  sent {t.sent:,}  received {t.received:,}  lost {t.lost:,}  duplicates "
            f"{t.duplicates:,}  redelivered {t.redelivered:,}  unconfirmed {t.unconfirmed:,} "
            f"({t.unconfirmed_received:,} arrived)  foreign {t.foreign:,}")
        lines.append("  per consumer (distinct): " + ", ".join(
            f"{k} {v:,}" for k, v in t.by_consumer.items()))
    if r.recovery_s is not None:
        how = {"broker-kill": "kill -> first message received after the restart",
               "failover-pair": "kill -> first message received on a reconnected consumer",
               "consumer-kill": "kill -> first redelivered message at a survivor",
               "link-cut": "restore -> first message forwarded after it",
               "store-full": "store full -> first message the consumers got",
               "mesh-partition": "restore -> first message across c's link"}[r.scenario]
        lines.append(f"  recovery {r.recovery_s:.2f} s ({how})")
    for w in _fault_words(r):
        lines.append(f"  {w}")
    for note in r.notes:
        lines.append(f"  note: {note}")
    lines.append(f"  rule: {RULE}")
    for e in r.errors:
        lines.append(f"  error: {e}")
    lines.append(f"  logs and records: {r.dir}")
    return "\n".join(lines)


def write(run_dir: Path, results: list[Result], command: list[str]) -> None:
    """``chaos.json`` and ``chaos.md`` in the run directory."""
    doc = {"schema_version": 1, "command": command, "rule": RULE,
           "scenarios": DESCRIPTION, "results": [r.as_dict() for r in results]}
    (run_dir / "chaos.json").write_text(json.dumps(json_safe(doc), indent=2))
    md = ["# Reliability under faults", "", table(results), "",
          f"Rule: {RULE}.", "", "Scenarios:", ""]
    md += [f"- **{k}**: {v}" for k, v in DESCRIPTION.items()]
    md += ["", "failover-pair, each library's own failover (clients/contract.md):", ""]
    md += [f"- {lang}: {how}" for lang, how in FAILOVER_HOW.items()]
    (run_dir / "chaos.md").write_text("\n".join(md) + "\n")




def main(args) -> int:
    """``./bench chaos SCENARIO|all [--client SPEC] ...``: exit 1 if anything was lost or
    a scenario failed."""
    import sys

    from harness import results as res

    if args.scenario != "all" and args.scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {args.scenario!r} (have: {', '.join(SCENARIOS)}, "
                         "all)")
    if args.client:
        clients.resolve(args.client)  # an unknown name is a one-line error, before anything runs
    pairs = (matrix(args.client) if args.scenario == "all"
             else [(args.scenario, args.client or "")])
    kw = {"count": args.count, "bursts": args.bursts, "cut_s": args.cut_seconds}
    for s, c in pairs:  # bad input is refused before anything starts
        try:
            ChaosSpec(s, c, **kw).validate()
        except Skip as e:
            if args.scenario != "all" and e.status == "n/a":
                raise ValueError(str(e)) from None
    run = res.Run(res.new_run_id("chaos"), sys.argv)
    print(f"chaos {run.id}: results in {run.dir}", flush=True)
    done: list[Result] = []
    status = "complete"
    try:
        for s, c in pairs:
            spec = ChaosSpec(s, c, **kw)
            label = f"{s}-{spec.client.replace(':', '_')}"

            def progress(msg: str, label=label) -> None:
                print(f"  [{label}] {msg}", file=sys.stderr, flush=True)

            r = Chaos(spec, run.dir / "chaos" / label, progress).run()
            done.append(r)
            print(report(r), flush=True)
            write(run.dir, done, sys.argv)
    except (Interrupted, KeyboardInterrupt):
        status = "incomplete"
        raise
    finally:
        if done:
            write(run.dir, done, sys.argv)
        bad = [r for r in done if not r.ok()]
        run.finish(status if status != "complete" or not bad else "failed")
        from plots import report as html_report  # the reliability table in the run's page

        html_report.render(run.dir)
    print()
    print(table(done))
    print(f"\nwritten: {run.dir / 'chaos.json'}, {run.dir / 'chaos.md'}, "
          f"{run.dir / 'report.html'}")
    return 1 if bad else 0
