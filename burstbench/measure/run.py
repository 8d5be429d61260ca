"""One point: brokers up, consumers ready, producers gated burst by burst, records collected.

The harness drives every producer and consumer through the contract's ``--gate`` stdin
protocol: all producers get ``go`` at once for a burst; the next burst starts only once the
consumers' ticks say every message of this one arrived (or the drain timeout passes, in which
case the accounting will show the loss). Waiting between bursts never enters a figure: burst
throughput comes from the records' timestamps.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import secrets
import shutil
import statistics
import subprocess
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path

from burstbench import clients, options
from burstbench.infra import brokerlog, brokers, browser, outside, topology
from burstbench.infra.procs import (
    Child,
    Interrupted,
    Supervisor,
    harness_cpu_seconds,
    machine_busy_seconds,
)
from burstbench.infra.stack import Stack
from burstbench.measure import live, measure
from burstbench.measure.errors import PointFailed


@dataclass
class PointSpec:
    """Everything that defines one measured point. Keys are the result file's parameters."""

    producer: list[str] = field(default_factory=lambda: ["stomp-py"])
    consumer: list[str] = field(default_factory=lambda: ["stomp-py"])
    producers: int = 0  # 0: one per entry of ``producer``
    consumers: int = 1
    # producer and consumer slots per client process, each a connection of its own
    # (clients/contract.md, --connections): 1 = a process per slot
    connections_per_process: int = 1
    # the clients' --connect-timeout, seconds per connection (0: the clients' own default, 10)
    connect_timeout: float = 0.0
    count: int = 10000  # per producer per burst
    size: int = 6
    bursts: int = 4
    queues: int = 1
    persistent: bool = False
    # the broker the bench starts: classic (ActiveMQ Classic 6.1.7) or artemis (ActiveMQ
    # Artemis 2.44.0), see burstbench/infra/brokers.py; unused with broker_urls
    broker: str = "classic"
    persistence: str = "none"
    ack: str = "auto"
    prefetch: int = 1000
    rate: float = 0.0
    # sustained mode (burstbench/measure/sustained.py): one open-loop burst of warmup + duration
    # seconds at ``rate`` per producer (0: as fast as possible), figures per time window; 0 = bursts
    duration: float = 0.0
    warmup: float = 0.0
    tx_batch: int = 0
    topology: str = "single"
    discovery: str = "static"
    # loopback, netns, netns-ssh or an inventory FILE (burstbench/infra/inventory.py)
    hosts: str = "loopback"
    # SSH hosts only: where the profile puts things, {"broker": {"a": HOST}, "producers":
    # [HOST...], "consumers": [HOST...]}, each key optional; otherwise round robin by role
    placement: dict = field(default_factory=dict)
    link_rate: str = ""  # tbf rate on inter-broker links (netns only), e.g. "10mbit"
    producer_flow_control: bool = True
    optimized_dispatch: bool = False  # the queues' optimizedDispatch (see brokers.BrokerSpec)
    tcp_nodelay: bool = False  # the broker connectors' transport.tcpNoDelay (see BrokerSpec)
    # the Classic broker's STOMP and OpenWire connectors: tcp (a thread per connection, as
    # ActiveMQ ships them) or nio (one selector for many connections); see BrokerSpec
    transport: str = "tcp"
    # CPU lists (taskset -c) for the brokers and for the clients: the load generator kept
    # off the broker's cores; "" lets the kernel schedule them anywhere
    cpus_broker: str = ""
    cpus_clients: str = ""
    tls: bool = False  # TLS-only connectors, a throwaway CA, clients verify the broker
    auth: bool = False  # brokers require a user with a generated password
    broker_urls: list[str] = field(default_factory=list)  # brokers the harness did not start
    # their Jolokia URLs, in the order of broker_urls (burstbench/infra/outside.py), and the
    # console's user; its password from admin_password_file or BURSTBENCH_ADMIN_PASSWORD
    broker_admin: list[str] = field(default_factory=list)
    admin_user: str = ""
    admin_password_file: str = ""
    # a --broker-url broker's own login and trust (burstbench/infra/outside.py): the user, its
    # password from password_file or BURSTBENCH_PASSWORD (never on a command line nor in a
    # result), the CA bundle its certificates are checked against (else the system's)
    user: str = ""
    password_file: str = ""
    ca: str = ""
    cert: str = ""  # the clients' certificate and its key, for a broker that asks (mutual TLS)
    key: str = ""
    # browser consumers (stompjs:browser): each its own Chromium ("browsers"), or tabs of one
    # Chromium the harness starts for the point ("tabs"); see burstbench/infra/browser.py
    browser: str = "browsers"
    expect_loss: bool = False
    # a point without faults expects every message exactly once: a duplicate fails it
    expect_duplicates: bool = False
    drain_timeout: float = 20.0  # seconds without progress before a burst is declared stalled
    ready_timeout: float = 60.0
    label: str = ""

    def __post_init__(self) -> None:
        if isinstance(self.producer, str):
            self.producer = [self.producer]
        if isinstance(self.consumer, str):
            self.consumer = [self.consumer]
        if not self.producers:
            self.producers = len(self.producer)
        if self.duration:
            self.bursts = 1  # a sustained run is one timed burst (--count is unused then)

    def slots(self) -> tuple[list[clients.Resolved], list[clients.Resolved]]:
        """Each producer and consumer slot with its client, the lists taken in turn."""
        prods = [clients.resolve(s) for s in self.producer]
        cons = [clients.resolve(s) for s in self.consumer]
        return (
            [prods[i % len(prods)] for i in range(self.producers)],
            [cons[i % len(cons)] for i in range(self.consumers)],
        )

    def processes(self, role: str) -> list[tuple[clients.Resolved, int]]:
        """The ``role`` client processes: each with its client and how many slots it holds
        (``connections_per_process`` of one client's slots, the last of a client fewer)."""
        slots = self.slots()[0 if role == "producer" else 1]
        n = self.connections_per_process
        if n == 1:
            return [(r, 1) for r in slots]
        per_client: dict[str, list[tuple[clients.Resolved, int]]] = {}
        for r in slots:
            per_client.setdefault(r.label, []).append(r)
        chunks = [[(same[0], min(n, len(same) - k)) for k in range(0, len(same), n)]
                  for same in per_client.values()]
        # the clients' processes taken in turn, as their slots are
        return [c for row in itertools.zip_longest(*chunks) for c in row if c is not None]

    def client_args(self, role: str, r: clients.Resolved | None = None,
                    product: str = "") -> list[str]:
        """The contract options this point gives every ``role`` client (clients/options.yaml;
        the runner adds the addresses, ids, nonce, records and credentials): ``r`` a STOMP
        consumer on ActiveMQ Artemis (``product``) gets its window in bytes too."""
        args = ["--count", str(self.count), "--size", str(self.size), "--bursts", str(self.bursts)]
        if self.connect_timeout:
            args += ["--connect-timeout", f"{self.connect_timeout:g}"]
        if self.tx_batch:
            args += ["--tx-batch", str(self.tx_batch)]
        if role == "consumer":
            args += ["--ack", self.ack, "--prefetch", str(self.prefetch)]
            window = self.stomp_window(r, product)
            return args + (["--window-bytes", str(window)] if window is not None else [])
        if self.persistent:
            args.append("--persistent")
        if self.rate:
            args += ["--rate", f"{self.rate:g}"]
        if self.duration:
            args += ["--duration", f"{self.warmup + self.duration:g}"]
        return args

    def stomp_window(self, r: clients.Resolved | None, product: str = "") -> int | None:
        """``--window-bytes`` for consumer ``r`` on ``product`` (the broker the bench starts
        when not given), None when it sends activemq.prefetchSize (brokers.stomp_window)."""
        if r is None or r.protocol not in ("stomp", "ws"):
            return None
        product = product or ("" if self.broker_urls else brokers.PRODUCTS[self.broker_kind])
        return brokers.stomp_window(product, self.ack, self.prefetch, self.size,
                                    transacted=bool(self.tx_batch))

    def flow_control(self, product: str) -> dict:
        """What each consumer of the point was told to hold at most, by the protocol it
        speaks, for the result file."""
        cons = self.slots()[1]
        out = {}
        for r in {r.label: r for r in cons}.values():
            w = self.stomp_window(r, product)
            out[r.label] = (f"consumer-window-size {w} bytes" if w not in (None, -1) else
                            "consumer-window-size -1 (no limit)" if w == -1 else
                            f"prefetch {self.prefetch} messages")
        return out

    def validate(self) -> None:
        """Raise ValueError with one line naming the first bad parameter."""
        checks = [
            (self.producers >= 1, f"producers must be >= 1: {self.producers}"),
            (self.consumers >= 1, f"consumers must be >= 1: {self.consumers}"),
            (1 <= self.connections_per_process <= 100000,
             f"connections per process must be 1..100000: {self.connections_per_process}"),
            (0 <= self.connect_timeout <= 86400,
             f"connect timeout must be 0..86400 s: {self.connect_timeout:g}"),
            (1 <= self.queues <= 65536, f"queues must be 1..65536: {self.queues}"),
            (self.warmup >= 0, f"warmup must be >= 0 s: {self.warmup:g}"),
            (not self.warmup or self.duration, "--warmup needs --duration (sustained mode)"),
            (
                self.persistence in brokers.PERSISTENCE,
                (f"unknown persistence {self.persistence!r} "
                f"(have: {', '.join(brokers.PERSISTENCE)})"),
            ),
        ]
        for ok, why in checks:
            if not ok:
                raise ValueError(why)
        self._check_broker()
        topology.check(self.topology, self.discovery, self.hosts)
        if self.broker_urls:
            need = len(topology.layout(self.topology).brokers)
            if len(self.broker_urls) < need:
                raise ValueError(f"topology {self.topology} needs {need} --broker-url, "
                                 f"got {len(self.broker_urls)}")
            if self.persistence != "none" or self.hosts in ("netns", "netns-ssh"):
                raise ValueError("with --broker-url the deployment decides persistence and "
                                 "where the brokers are (only an inventory FILE may place the "
                                 "clients)")
            for i, text in enumerate(self.broker_urls):
                outside.parse_external(f"#{i + 1}", text)
        if self.broker_admin and not self.broker_urls:
            raise ValueError("--broker-admin is for brokers given with --broker-url (a broker "
                             "the bench starts is read from inside)")
        if len(self.broker_admin) > len(self.broker_urls):
            raise ValueError(f"{len(self.broker_admin)} --broker-admin for "
                             f"{len(self.broker_urls)} --broker-url (one each, in order)")
        for text in self.broker_admin:
            outside.check_admin_url(text)
        if self.admin_password_file and not Path(self.admin_password_file).is_file():
            raise ValueError(f"--admin-password-file: no such file: {self.admin_password_file}")
        outside.check_login(self)
        if self.browser not in browser.MODES:
            raise ValueError(f"browser must be one of {', '.join(browser.MODES)}: {self.browser}")
        for name, cpus in (("cpus-broker", self.cpus_broker), ("cpus-clients", self.cpus_clients)):
            if cpus:
                _check_cpus(name, cpus)
        if self.link_rate and self.hosts not in ("netns", "netns-ssh"):
            raise ValueError("--link-rate needs --hosts netns (or netns-ssh)")
        from burstbench.infra import inventory
        if inventory.is_remote(self.hosts):
            inventory.check_point(self)
        elif self.placement:
            raise ValueError("placement needs SSH hosts (--hosts FILE or netns-ssh)")
        if self.hosts == "netns":
            from burstbench.infra import netns
            why = netns.available()
            if why:
                raise ValueError(f"--hosts netns: {why}")
        prods, cons = self.slots()  # raises UnknownClient (a ValueError) with the known list
        for r in cons:
            if self.ack not in r.client.ack_modes:
                raise ValueError(
                    f"client {r.client.name} cannot do --ack {self.ack} "
                    f"(it can: {', '.join(sorted(r.client.ack_modes))})"
                )
        if self.cert and any(r.client.language == "browser" for r in (*prods, *cons)):
            raise ValueError("--cert: the browser client cannot show a client certificate (a "
                             "page cannot be given one)")
        if self.connections_per_process > 1:
            for r in {r.label: r for r in (*prods, *cons)}.values():
                if not r.client.many_connections:
                    raise ValueError(f"client {r.label} holds one connection per process "
                                     "(not with --connections-per-process)")
        for r in prods if self.duration else ():
            if not r.client.timed_bursts:
                raise ValueError(f"client {r.client.name} cannot send for a --duration "
                                 "(sustained mode); it sends bursts of --count only")
        # every value a client will get, against clients/options.yaml (BadOption: one line)
        for role, slots in (("producer", prods), ("consumer", cons)):
            for r in {r.label: r for r in slots}.values():
                options.check(r, role, self.client_args(role, r), complete=False)
        for r in {r.client.name: r for r in (*prods, *cons)}.values():
            why = r.client.missing()
            if why:
                raise ValueError(why)
        if not inventory.is_remote(self.hosts):
            from burstbench.infra import capacity
            capacity.check(self)  # thousands of connections: the machine's limits first

    @property
    def broker_kind(self) -> str:
        """``classic`` or ``artemis``: the kind of broker the bench starts."""
        return self.broker.partition(":")[0]

    def _check_broker(self) -> None:
        """The broker exists, has the store and the transports asked for, and can do what the
        point asks."""
        try:
            kind, version = brokers.parse_broker(self.broker)
        except brokers.BrokerError as e:
            raise ValueError(str(e)) from None
        if self.transport not in brokers.TRANSPORTS:
            raise ValueError(f"--transport: {self.transport!r} is not one of "
                             f"{', '.join(brokers.TRANSPORTS)}")
        if self.transport != "tcp" and not any(
                r.protocol in ("stomp", "openwire") for r in (*self.slots()[0], *self.slots()[1])):
            raise ValueError(f"--transport {self.transport} changes the STOMP and OpenWire "
                             "connectors; every client of this point speaks WebSocket, whose "
                             "connector it leaves as it is (stompjs:tcp speaks STOMP over TCP)")
        if self.transport != "tcp" and self.broker_urls:
            raise ValueError("--transport is the connectors of the broker the bench starts; "
                             "with --broker-url the URL's scheme says (nio://, stomp+nio://)")
        if self.broker != "classic" and self.broker_urls:
            raise ValueError("--broker is the broker the bench starts; with --broker-url "
                             "the broker is the one at that URL")
        if self.broker_urls:
            return
        try:
            brokers.check_store(kind, self.persistence)
        except brokers.BrokerError as e:
            raise ValueError(str(e)) from None
        have = brokers.protocols_of(kind, version)
        for r in (*self.slots()[0], *self.slots()[1]):
            if r.protocol not in have:
                raise ValueError(
                    f"client {r.label} speaks {r.protocol}, which {brokers.PRODUCTS[kind]} "
                    f"{version} has not here (its transports: {', '.join(have)}"
                    + ("; its WebSocket module activemq-http is not served" if
                       r.protocol == "ws" and kind == "classic" else "") + ")")
        if kind == "classic":
            return
        why = {
            "optimized_dispatch": "--optimized-dispatch is ActiveMQ Classic's queue policy",
            "transport": "--transport nio: Artemis's acceptors are Netty's, non-blocking as it "
                         "ships (a --transport of its own would change nothing)",
            "tcp_nodelay": "--tcp-nodelay: Artemis's acceptors set TCP_NODELAY already "
                           "(tcpNoDelay=true as it ships)",
        }
        for attr, text in why.items():
            if getattr(self, attr) not in (False, "tcp"):  # each one's default
                raise ValueError(f"{text}; not with --broker artemis")
        if not self.producer_flow_control:
            raise ValueError("--no-flow-control is ActiveMQ Classic's producer flow control; "
                             "Artemis pages a full address to disk as it ships (not with "
                             "--broker artemis)")
        if self.topology == "chain3":
            raise ValueError("topology chain3 on Artemis: a cluster connection reaches every "
                             "node it learns of directly, so there is no chain of hops "
                             "(Artemis runs single, forward, split, mesh2 and mesh3)")
        if self.discovery != "static":
            raise ValueError("--discovery multicast is Classic's; an Artemis cluster here "
                             "names its nodes (static connectors)")
        if self.hosts != "loopback":
            raise ValueError("--broker artemis runs on this machine's loopback only so far "
                             f"(not --hosts {self.hosts})")

    def params(self) -> dict:
        d = asdict(self)
        d.pop("drain_timeout")
        d.pop("ready_timeout")
        return d


def _check_cpus(option: str, cpus: str) -> None:
    """A taskset CPU list naming only CPUs this process may use, or ValueError."""
    import re

    if not re.fullmatch(r"\d+(-\d+)?(,\d+(-\d+)?)*", cpus):
        raise ValueError(f"--{option} must be a CPU list like 0 or 0-1 or 0,2: {cpus!r}")
    if shutil.which("taskset") is None:
        raise ValueError(f"--{option} needs taskset (Debian package util-linux)")
    want = set()
    for part in cpus.split(","):
        lo, _, hi = part.partition("-")
        want |= set(range(int(lo), int(hi or lo) + 1))
    have = os.sched_getaffinity(0)
    if not want <= have:
        raise ValueError(f"--{option} {cpus}: CPU(s) {sorted(want - have)} are not available "
                         f"(this machine offers {sorted(have)})")


@dataclass
class Outcome:
    """What a point produced: raw records, per-process usage and the burst timeline."""

    spec: PointSpec
    point_dir: Path
    broker_version: str = ""
    broker_product: str = ""
    status: str = "ok"
    errors: list[str] = field(default_factory=list)
    producer_records: list = field(default_factory=list)
    consumer_records: dict = field(default_factory=dict)
    foreign_reported: int = 0
    processes: list[dict] = field(default_factory=list)
    burst_cpu: list[dict] = field(default_factory=list)
    store_bytes: int = 0
    wall_s: float = 0.0
    namespaces: list[str] = field(default_factory=list)
    external: dict = field(default_factory=dict)
    confirmed: dict = field(default_factory=dict)  # burst -> when every producer had its receipt
    # the brokers' own counters for the run's queues, after each burst, on a stall and at the
    # end: [{"at": "burst 0" | "stall" | "end", "brokers": {name: {"queues", "bridges"}}}]
    broker_counts: list[dict] = field(default_factory=list)
    nonce: str | None = None  # this point's run nonce: every message it sends carries it
    # sustained mode: when each message was handed to its library (the records' actual_ns),
    # and the brokers' summed counters read once a second
    send_actual: list = field(default_factory=list)
    samples: list[dict] = field(default_factory=list)
    # SSH hosts (--hosts netns-ssh or FILE): the inventory, and each host's clock offset and
    # its uncertainty over the point (burstbench/measure/clocks.py)
    hosts: dict = field(default_factory=dict)
    clocks: dict = field(default_factory=dict)
    # what the clients' connections used (schemes, TLS, a login, which trust): the URLs they
    # were given, not the flags (burstbench/infra/outside.py connections)
    connections: dict | None = None
    client_urls: set = field(default_factory=set)
    # what each consumer may hold, as it was told (PointSpec.flow_control)
    flow_control: dict = field(default_factory=dict)
    # how long the clients took to connect, and what the brokers the harness started held
    # before and once they were all connected (burstbench/measure/run.py _start_clients)
    connect: dict = field(default_factory=dict)


def slot_of(child: Child, ev: dict, slots: dict[str, list[str]]) -> str:
    """Whose line ``ev`` is: the slot whose id it carries when ``child`` holds several
    (clients/contract.md, --connections), else the child itself."""
    own = slots.get(child.name)
    if own is None or len(own) == 1:
        return child.name
    return ev.get("id", child.name)


def _wait_all(
    sup: Supervisor, children: list[Child], event: str, timeout: float, on_other=None,
    slots: dict[str, list[str]] | None = None,
) -> dict[str, dict]:
    """Wait until every child (every slot of a child that holds several: ``slots``, child
    -> slot ids) has printed ``event``; fail fast if one exits first. Keyed by child or slot."""
    slots = slots or {}
    got: dict[str, dict] = {}
    names = {c.name for c in children}
    want = {s for c in children for s in slots.get(c.name, [c.name])}

    def take(child: Child, ev: dict) -> None:
        kind = ev.get("event")
        own = slots.get(child.name, [child.name])
        if child.name in names and kind == event:
            got[slot_of(child, ev, slots)] = ev
        elif kind == "exit" and all(s in got for s in own) and ev["code"] == 0:
            return  # finished after saying what we waited for
        elif kind == "exit" and child.name in names:
            missing = [s for s in own if s not in got]
            raise PointFailed(
                f"{child.name} exited with {ev['code']} before '{event}'"
                + (f" from {len(missing)} of its {len(own)} connections" if len(own) > 1
                   else "")
                + f": {child.last_error() or 'no message'} (log: {child.log_path})"
            )
        elif kind == "exit" and child.role == "broker":
            raise PointFailed(f"{child.name} exited with {ev['code']}: {child.last_error()}")
        elif on_other:
            on_other(child, ev)

    if not sup.wait_until(lambda: want <= got.keys(), timeout, take):
        waiting = sorted(want - got.keys())
        shown = ", ".join(waiting[:8]) + (f" and {len(waiting) - 8} more" if len(waiting) > 8
                                          else "")
        raise PointFailed(f"timed out after {timeout:.0f} s waiting for '{event}' from "
                          f"{len(waiting)} of {len(want)}: {shown}")
    return got


class _CpuWindow:
    """Every process's CPU seconds, the harness's and the machine's busy seconds, from its
    start; ``shares()`` turns them into CPU shares (1.0 = one core) over a wall time."""

    def __init__(self, children: list[Child]):
        self.children = children
        self.cpu0 = {c.name: c.cpu_seconds_now() for c in children}
        self.machine0, self.harness0 = machine_busy_seconds(), harness_cpu_seconds()
        self.t0 = time.monotonic()

    def shares(self, burst: int, wall: float) -> dict:
        cpu = {}
        for c in self.children:
            now = c.cpu_seconds_now()
            if now is not None and self.cpu0.get(c.name) is not None:
                cpu[c.name] = round((now - self.cpu0[c.name]) / wall, 3)
        return {"burst": burst, "wall_s": round(wall, 3), "cpu_share": cpu,
                "harness_share": round((harness_cpu_seconds() - self.harness0) / wall, 3),
                "machine_busy_cores": round((machine_busy_seconds() - self.machine0) / wall, 3)}


@dataclass
class _Clients:
    """The point's running clients and what they have said so far."""

    producers: list[Child]
    consumers: list[Child]
    brokers: list[Child]  # the brokers the harness started: their CPU is measured too
    slots: dict[str, list[str]]  # each client process's slot ids (its own name when one)
    received: dict[str, int] = field(default_factory=dict)  # consumer slot -> its last tick
    finished: set[str] = field(default_factory=set)  # which slots said ``done``

    def __post_init__(self) -> None:
        self.received = {s: 0 for c in self.consumers for s in self.slots[c.name]}

    def of(self, children: list[Child]) -> list[str]:
        """The slot ids of ``children``."""
        return [s for c in children for s in self.slots[c.name]]

    def slot(self, child: Child, ev: dict) -> str:
        """The slot whose line ``ev`` is."""
        return slot_of(child, ev, self.slots)

    @property
    def everyone(self) -> list[Child]:
        return [*self.brokers, *self.consumers, *self.producers]

    def note(self, child: Child, ev: dict) -> None:
        """Any event while the point runs: ticks counted, a process that dies fails it."""
        live.event(child, ev)
        slot = self.slot(child, ev)
        if ev.get("event") == "tick" and slot in self.received:
            self.received[slot] = max(self.received[slot], int(ev.get("received", 0)))
        elif ev.get("event") == "done":
            self.finished.add(slot)
        elif ev.get("event") == "exit" and not (
                ev["code"] == 0 and set(self.slots.get(child.name, [slot])) <= self.finished):
            own = self.slots.get(child.name, [])
            lost = (f" with {len(own)} connections ({sum(s not in self.finished for s in own)} "
                    "not finished)" if len(own) > 1 else "")
            raise PointFailed(
                f"{child.name} exited with {ev['code']} mid-run{lost}: "
                f"{child.last_error() or 'no message'} (log: {child.log_path})"
            )


class Runner:
    """Runs one point inside its own directory, on a ``Stack`` (burstbench/infra/stack.py) that
    brings the point's hosts, databases and brokers up and down: the runner starts the clients,
    gates the bursts, waits for each to drain, reads the brokers' counters and collects the records.
    ``run()`` always stops what it started."""

    def __init__(self, spec: PointSpec, point_dir: Path, progress=None):
        self.spec = spec
        self.dir = Path(point_dir)
        self.progress = progress or (lambda msg: None)
        self.outcome = Outcome(spec=spec, point_dir=self.dir)
        self.stack: Stack | None = None
        self.queue_prefix = ""  # every queue of this point's run: bb.<tag>.
        self.placement: dict[str, str] = {}  # broker or client slot -> the host it runs on
        # each client process's slots (clients/contract.md, --connections): [its name] for one
        self.slots: dict[str, list[str]] = {}
        self.ready: dict[str, dict] = {}  # client slot -> its ready line
        self.done: dict[str, dict] = {}  # client slot (and shared Chromium) -> its done line
        self._clock_hosts: list[str] = []

    def run(self) -> Outcome:
        spec = self.spec
        spec.validate()
        self.dir.mkdir(parents=True, exist_ok=True)
        t0 = time.monotonic()
        sup = Supervisor(self.dir / "logs")
        self.stack = Stack(spec, self.dir, sup, self.progress)
        try:
            with self.stack:
                try:
                    self._drive(sup)
                finally:
                    sup.stop_all()  # the clients, then whatever of the stack is still up
                    self._fetch_remote_records()
        except BaseException as e:
            interrupted = isinstance(e, (Interrupted, KeyboardInterrupt))
            self.outcome.status = "interrupted" if interrupted else "failed"
            self.outcome.errors.append(str(e) or type(e).__name__)
            raise
        finally:
            sup.stop_all()  # (a failed bring-up has stopped its own already)
            if self.outcome.status == "failed":
                self._broker_reasons()
            self._note_stack()
            self._collect(sup)
            if self.stack.remote is not None:
                self._correct_clocks()
            self.outcome.wall_s = time.monotonic() - t0
        return self.outcome

    def _broker_reasons(self) -> None:
        """A failed point's errors gain what each started broker's log says about dropped
        connections (burstbench/infra/brokerlog.py): the client only knew it lost one."""
        for name, b in self.stack.started_brokers().items():
            self.outcome.errors += [f"broker {name} {why} (log: {b.child.log_path})"
                                    for why in brokerlog.explain(b.child.log_path)]

    def _note_stack(self) -> None:
        """What the outcome records of the infrastructure (kept after it is gone)."""
        out, stack = self.outcome, self.stack
        out.broker_version = stack.broker_version
        out.broker_product = stack.broker_product
        if stack.brokers:
            out.flow_control = out.spec.flow_control(stack.broker_product)
        out.external = dict(stack.external)
        out.namespaces = list(stack.namespaces)
        out.hosts = stack.hosts
        out.store_bytes = stack.store_bytes
        if out.client_urls:
            trust = ("the --ca bundle" if self.spec.ca else "the system's trust store"
                     ) if self.spec.broker_urls else "the bench's throwaway CA"
            out.connections = outside.connections(
                sorted(out.client_urls), stack.credentials[0] if stack.credentials else None,
                trust, self.spec.cert,
                {name: ev.get("tls") for name, ev in self.ready.items()})

    # -- the point's life --------------------------------------------------------------------
    def _drive(self, sup: Supervisor) -> None:
        """Clients up, the bursts (or one timed burst), clients down, the brokers' last word."""
        self._name_run()
        self._measure_clocks("before")
        live.point_started(self)
        cl = self._start_clients(sup)
        if self.spec.duration:
            from burstbench.measure import sustained
            sustained.drive(self, sup, cl)
        else:
            for b in range(self.spec.bursts):
                self._burst(sup, cl, b)
        self._stop_clients(sup, cl)
        self._measure_clocks("after")
        self._stop_shared_browser(sup)
        self._final_witness(sup)

    def _name_run(self) -> None:
        """This run's queue names and nonce, and the hosts the brokers run on."""
        self.queue_prefix = f"bb.{uuid.uuid4().hex[:8]}."
        self.outcome.nonce = secrets.token_hex(8)
        self.placement = self.stack.broker_hosts()

    def _measure_clocks(self, at: str) -> None:
        """SSH hosts only: every host's clock offset, ``before`` and ``after`` the point."""
        remote = self.stack.remote
        if remote is None:
            return
        if at == "before":
            spec = self.spec
            self._clock_hosts = sorted({*self.placement.values(),
                                        *(remote.client_host("producer", i)
                                          for i in range(len(spec.processes("producer")))),
                                        *(remote.client_host("consumer", i)
                                          for i in range(len(spec.processes("consumer"))))})
            self.progress(f"clock offsets of {', '.join(self._clock_hosts)} (before)")
        else:
            self.progress("clock offsets (after)")
        remote.measure_clocks(at, self._clock_hosts)

    def _start_clients(self, sup: Supervisor) -> _Clients:
        """The shared Chromium if the browser consumers want one, then every consumer, then
        every producer, each group waited for until it says ``ready``."""
        spec = self.spec
        prods, cons = spec.processes("producer"), spec.processes("consumer")
        rec = self.dir / "records"
        rec.mkdir(exist_ok=True)
        dests = ",".join(f"{self.queue_prefix}q{i}" for i in range(spec.queues))
        shared = None  # the DevTools address of the point's shared Chromium (--browser tabs)
        if browser.shares(spec.browser, [r for r, _n in cons]):
            self.progress("starting a shared Chromium for the browser consumers' tabs")
            chromium = sup.start("browser", browser.shared_argv(self.stack.ca), role="browser")
            shared = _wait_all(sup, [chromium], "ready", spec.ready_timeout)[chromium.name]["ws"]
        brokers_before = self._broker_status()
        t0 = time.monotonic()
        self.progress(f"starting {spec.consumers} consumer(s)" + (
            f" in {len(cons)} processes" if len(cons) != spec.consumers else ""))
        consumers = [self._start_client(sup, "consumer", i, r, n, dests, rec, shared)
                     for i, (r, n) in enumerate(cons)]
        self.ready = _wait_all(sup, consumers, "ready", self._ready_timeout(spec.consumers),
                               slots=self.slots)
        t1 = time.monotonic()
        self.progress(f"starting {spec.producers} producer(s)" + (
            f" in {len(prods)} processes" if len(prods) != spec.producers else ""))
        producers = [self._start_client(sup, "producer", i, r, n, dests, rec, shared)
                     for i, (r, n) in enumerate(prods)]
        self.ready |= _wait_all(sup, producers, "ready", self._ready_timeout(spec.producers),
                                slots=self.slots)
        self.outcome.connect = self._connect_figures(brokers_before, t1 - t0,
                                                     time.monotonic() - t1)
        started = [b.child for b in self.stack.brokers.values() if b.child]
        return _Clients(producers=producers, consumers=consumers, brokers=started,
                        slots=self.slots)

    def _ready_timeout(self, slots: int) -> float:
        """How long ``slots`` clients may take to say ready: the spec's time-out, and for
        thousands of connections 20 ms more each (a broker accepted about 200 a second here
        while it was busy with others)."""
        return self.spec.ready_timeout + (0.02 * slots if slots > 100 else 0)

    def _broker_status(self) -> dict[str, dict]:
        """Each started broker's resident memory and threads now."""
        return {name: b.child.status_now() for name, b in self.stack.brokers.items()
                if b.child is not None}

    def _connect_figures(self, before: dict, consumers_s: float, producers_s: float) -> dict:
        """The clients' connect times, and each started broker's memory and threads before
        the first client and once every slot said ready: what a connection costs it."""
        slots = self.spec.producers + self.spec.consumers
        out = {"slots": slots, "processes": len(self.slots),
               "consumers_ready_s": round(consumers_s, 3),
               "producers_ready_s": round(producers_s, 3), "brokers": {}}
        for name, now in self._broker_status().items():
            was = before.get(name) or {}
            entry = {"before": was, "connected": now}
            if was and now:
                entry["rss_kib_per_connection"] = round(
                    (now["rss_mb"] - was["rss_mb"]) * 1024 / slots, 1)
                entry["threads_per_connection"] = round(
                    (now["threads"] - was["threads"]) / slots, 3)
            out["brokers"][name] = entry
        costs = [b for b in out["brokers"].values() if "rss_kib_per_connection" in b]
        if costs:  # every broker of the point together, per connection of the point
            out["broker_rss_kib_per_connection"] = round(
                sum(b["rss_kib_per_connection"] for b in costs), 1)
            out["broker_threads_per_connection"] = round(
                sum(b["threads_per_connection"] for b in costs), 3)
        return out

    def _start_client(self, sup: Supervisor, role: str, i: int, r: clients.Resolved, n: int,
                      dests: str, rec: Path, shared: str | None) -> Child:
        """The ``i``-th ``role`` client process, gated, holding ``n`` slots (connections), on
        its broker's host (or its load host)."""
        spec = self.spec
        # a tuned entry is named in full wherever its processes appear
        who = r.client.name if r.client.tuned else r.client.language
        ident = f"{'p' if role == 'producer' else 'c'}{i + 1}-{who}"
        host, broker = self.stack.broker_for(role, i)
        url = broker.url_for(r.protocol)
        self.outcome.client_urls.add(url)
        # several slots: ids ident.1..ident.n, each its own records file (clients/contract.md)
        self.slots[ident] = [ident] if n == 1 else [f"{ident}.{k}" for k in range(1, n + 1)]
        many = ["--connections", str(n)] if n > 1 else []
        args = [
            "--url", url, "--destinations", dests,
            *spec.client_args(role, r, broker.product), "--id", ident, "--gate", *many,
            "--records", str(rec / ("{id}.tsv" if n > 1 else f"{ident}.tsv")),
        ]  # fmt: skip
        if role == "producer":
            args += ["--nonce", self.outcome.nonce]
        args += self.stack.security_args()
        argv = options.command(r, role, args)
        if spec.cpus_clients:
            argv = ["taskset", "-c", spec.cpus_clients, *argv]
        # over SSH its working directory there is its records directory (made by remote_exec)
        argv, host = self.stack.place(role, i, host, argv, cwd=rec)
        child = sup.start(ident, argv, role=role, remote=self.stack.remote is not None,
                          env=self.stack.client_env(browser.env_for(r, role, shared)))
        for slot in self.slots[ident]:
            self.placement[slot] = host
        return child

    def _burst(self, sup: Supervisor, cl: _Clients, b: int) -> None:
        """Burst ``b``: every producer gets ``go`` at once; wait for their confirmations, then
        until the consumers have it all; the brokers' counters and the CPU shares over it."""
        window = _CpuWindow(cl.everyone)
        live.burst(b)
        for p in cl.producers:
            p.send("go")
        confirmations = _wait_all(sup, cl.producers, "burst", self._burst_timeout(),
                                  on_other=cl.note, slots=cl.slots)
        self.outcome.confirmed[b] = max(e["_rx_ns"] for e in confirmations.values())
        live.confirmed(b)
        target = self.spec.count * len(cl.of(cl.producers)) * (b + 1)
        self._drain(sup, cl.received, target, cl.note)
        wall = time.monotonic() - window.t0
        self._witness(sup, f"burst {b}", cl.note)
        self.outcome.burst_cpu.append(window.shares(b, wall))
        self.progress(
            f"burst {b + 1}/{self.spec.bursts}: {sum(cl.received.values())}/{target} received"
        )

    def _stop_clients(self, sup: Supervisor, cl: _Clients) -> None:
        """``stop`` to the producers, then the consumers, their ``done`` lines kept; then let
        them exit by themselves (their usage comes from wait4)."""
        for p in cl.producers:
            p.send("stop")
        done = _wait_all(sup, cl.producers, "done", 60, on_other=cl.note, slots=cl.slots)
        for c in cl.consumers:
            c.send("stop")
        done.update(_wait_all(sup, cl.consumers, "done", 120, slots=cl.slots))
        self.done = done
        gated = cl.producers + cl.consumers
        live.point_finished(done, {s: c.role for c in gated for s in cl.slots[c.name]})
        self.outcome.foreign_reported = sum(int(done[s].get("foreign", 0))
                                            for s in cl.of(cl.consumers))
        for child in gated:
            child.close_stdin()
        deadline = time.monotonic() + 30
        while any(c.alive() for c in gated) and time.monotonic() < deadline:
            time.sleep(0.02)

    def _stop_shared_browser(self, sup: Supervisor) -> None:
        for c in sup.children:
            if c.role == "browser" and c.alive():  # the shared Chromium, its tabs all closed
                c.send("stop")
                self.done.update(_wait_all(sup, [c], "done", 30))
                sup.stop(c)

    # -- the brokers' own counters: a second witness beside the clients' records -----------
    def _witness(self, sup: Supervisor, at: str, on_other=None, keep=True) -> dict[str, dict]:
        """Every broker the harness started reads out its counters for the run's queues (a
        ``stats`` line on its stdin, answered from inside the broker); kept in the outcome."""
        started = self.stack.started_brokers()
        kids = [b.child for b in started.values() if b.child.alive()]
        snap: dict[str, dict] = {}
        outside_brokers = {n: b for n, b in self.stack.brokers.items() if b.child is None}
        if any(b.witness == "none" for b in outside_brokers.values()):
            return snap  # counters from some brokers of the path only would prove nothing
        for name, b in outside_brokers.items():  # brokers we did not start: their witness
            snap[name] = b.queue_counts(self.queue_prefix, *(self.stack.credentials or
                                                               (None, None)),
                                        queues=self.spec.queues)
        if not kids:
            if snap and keep:
                self.outcome.broker_counts.append({"at": at, "brokers": snap})
            return snap
        for c in kids:
            c.send("stats")
        got = _wait_all(sup, kids, "stats", 30, on_other=on_other)
        for name, b in started.items():
            ev = got.get(b.child.name)
            if ev is None:
                continue
            if "error" in ev:
                snap[name] = {"error": ev["error"]}
                continue
            snap[name] = {
                "queues": {q: v for q, v in ev.get("queues", {}).items()
                           if q.startswith(self.queue_prefix)},
                "bridges": ev.get("bridges", []),
                "t_ns": ev.get("t_ns"),  # when the broker read them (its own clock)
            }
        if keep:
            self.outcome.broker_counts.append({"at": at, "brokers": snap})
        return snap

    def _final_witness(self, sup: Supervisor) -> None:
        """The end of the point, once the clients are gone: read until two readings agree and
        nothing is in flight (a store may count its last acknowledgements a moment later)."""
        deadline = time.monotonic() + 10
        last = self._witness(sup, "end", keep=False)
        while time.monotonic() < deadline:
            time.sleep(0.2)
            snap = self._witness(sup, "end", keep=False)
            settled = _counts(snap) == _counts(last) and not any(
                q.get("inflight") for b in snap.values() for q in b.get("queues", {}).values())
            last = snap
            if settled:
                break
        if last:
            self.outcome.broker_counts.append({"at": "end", "brokers": last})

    def _stall_counts(self, sup: Supervisor, note) -> str:
        """On a stall: the brokers' queue depths and bridge counts go next to the logs, and
        the error says where the messages wait."""
        try:
            snap = self._witness(sup, "stall", note)
        except PointFailed as e:
            return f"; the brokers' counters could not be read: {e}"
        path = sup.log_dir / "stall-broker-counts.json"
        path.write_text(json.dumps(snap, indent=2))
        self._stall_sockets(sup.log_dir / "stall-sockets.txt")
        waiting = [f"{name} {q} holds {v['size']:,} ({v['inflight']:,} in flight)"
                   for name, b in snap.items() for q, v in b.get("queues", {}).items()
                   if v.get("size") or v.get("inflight")]
        return (f"; {', '.join(waiting[:6])}{' ...' if len(waiting) > 6 else ''} "
                f"({path.name})" if waiting else f"; no broker holds any ({path.name})")

    def _stall_sockets(self, path: Path) -> None:
        """Every TCP socket's queues and windows (``ss -tinmp``) on each host of the point, so
        that a stall says which side stopped reading."""
        ss = shutil.which("ss")
        if ss is None:
            return
        with open(path, "w") as f:
            for ns in self.stack.shell_namespaces():
                argv = [ss, "-tinmp"] if ns is None else ["ip", "netns", "exec", ns, ss, "-tinmp"]
                f.write(f"==== {'host' if ns is None else ns}: {' '.join(argv)}\n")
                f.flush()
                subprocess.run(argv, stdout=f, stderr=subprocess.STDOUT, timeout=20, check=False)

    def _burst_timeout(self) -> float:
        spec = self.spec
        if spec.rate:
            return spec.count / spec.rate * 2 + 60
        return max(120.0, spec.count * spec.size / 1e6 + spec.count / 200.0)

    def _drain(self, sup: Supervisor, received: dict, target: int, note) -> None:
        """Wait until consumers report ``target`` messages, or no progress for a while."""
        last_total = sum(received.values())
        last_change = time.monotonic()
        while sum(received.values()) < target:
            item = sup.wait_event(0.5)
            if item is not None:
                note(*item)
            total = sum(received.values())
            if total != last_total:
                last_total, last_change = total, time.monotonic()
            elif time.monotonic() - last_change > self.spec.drain_timeout:
                where = self._stall_counts(sup, note)
                self.outcome.errors.append(
                    f"drain: {total} of {target} messages received, no progress for "
                    f"{self.spec.drain_timeout:.0f} s{where}"
                )
                _dump_java_threads(sup)
                return

    def _fetch_remote_records(self) -> None:
        """SSH hosts only: bring each client's records back from its host (before the stack
        takes the hosts down)."""
        if self.stack.remote is None:
            return
        rec = self.dir / "records"
        for ident, host in self.placement.items():
            if not ident.startswith("broker-"):
                self.stack.remote.fetch(host, rec / f"{ident}.tsv")

    def _correct_clocks(self) -> None:
        """Every timestamp onto the harness's clock, by its host's offset
        (burstbench/measure/clocks.py)."""
        from burstbench.measure import clocks
        summary = self.stack.remote.clock_summary()
        placement = self.placement
        clocks.correct(self.outcome.producer_records, self.outcome.consumer_records,
                       placement, summary)
        prods = [n for n in placement if n.startswith("p")]
        cons = [n for n in placement if n.startswith("c")]
        cross = clocks.cross_host_uncertainty_ns(placement, summary, prods, cons)
        self.outcome.clocks = {"hosts": summary, "cross_host_uncertainty_ns": cross,
                               "method": "NTP-style over SSH: 4 timestamps, the minimum "
                                         f"round trip of {clocks.PROBES} probes, before and "
                                         "after the point"}

    def _host_of(self, name: str, slot: str) -> str:
        """Where a child ran: its slot's host; a broker's (``broker-a``) or its database's
        (``db-a``) is broker ``a``'s."""
        if name.startswith("db-"):
            name = "broker-" + name.removeprefix("db-")
            slot = name
        return self.placement.get(slot, name.removeprefix("broker-"))

    def _collect(self, sup: Supervisor) -> None:
        rec = self.dir / "records"
        ready = self.ready
        for child in sup.children:
            own = self.slots.get(child.name, [child.name])
            said = ready.get(own[0], {})
            socket = ({"tcp_nodelay": said.get("tcp_nodelay"),
                       "tcp_nodelay_how": said.get("tcp_nodelay_how", "not reported")}
                      if child.role in ("producer", "consumer") else {})
            self.outcome.processes.append(
                {
                    **socket,
                    "name": child.name,
                    "role": child.role,
                    "host": self._host_of(child.name, own[0]),
                    **({"connections": len(own)} if len(own) > 1 else {}),
                    "pid": child.pid,
                    "exit_code": child.returncode,
                    "cpu_s": round(child.usage.cpu_s, 3),
                    "max_rss_mb": round(child.usage.max_rss_mb, 1),
                    "max_open_files": child.usage.max_open_files,
                    "max_threads": child.usage.max_threads,
                    "log": str(child.log_path.relative_to(self.dir)),
                    # a browser client: its own Chromium or a tab, what Chromium reports
                    **browser.reported(self.done.get(child.name, {})),
                }
            )
            for slot in own:
                self._collect_records(child.role, slot, rec / f"{slot}.tsv")

    def _collect_records(self, role: str, slot: str, path: Path) -> None:
        if not path.exists():
            return
        if role == "producer":
            self.outcome.producer_records.extend(measure.read_producer_records(path))
            if self.spec.duration:
                self.outcome.send_actual.extend(measure.read_producer_actual(path))
        elif role == "consumer":
            self.outcome.consumer_records[slot] = measure.read_consumer_records(path)


def metrics(outcome: Outcome, latency_records: list | None = None) -> dict:
    """Turn an outcome's records into the result file's metrics and accounting.
    ``latency_records``, when given, receives the records behind the latency (or time in
    queue) figures."""
    spec = outcome.spec
    sent = outcome.producer_records
    # foreign and corrupt records are never throughput or latency: only the ones kept count
    kept: list = []
    acc = measure.account(sent, outcome.consumer_records, outcome.foreign_reported, spec.size,
                          nonce=outcome.nonce, kept=kept)
    all_received = kept
    clean_ids = {id(r) for r in all_received}
    by_consumer = {name: [r for r in recs if id(r) in clean_ids]
                   for name, recs in outcome.consumer_records.items()}
    bursts = measure.per_burst(sent, all_received, outcome.confirmed)
    counted = measure.measured(bursts)
    counted_ids = {b.burst for b in counted}
    send = measure.spread([b.send_msgs_per_s for b in counted])
    recv = measure.spread([b.recv_msgs_per_s for b in counted])
    busiest = _busiest(outcome, counted_ids)
    extra = {}
    if spec.duration:
        from burstbench.measure import sustained
        extra = sustained.figures(spec, sent, outcome.send_actual, by_consumer, outcome.samples,
                                  latency_records)
        lat = extra.pop("latency")
        st = extra["sustained"]["steady"]
        send = {**send, **{k: st["send_msgs_per_s"][k] for k in ("median", "min", "max")}}
        recv = {**recv, **{k: st["recv_msgs_per_s"][k] for k in ("median", "min", "max")},
                "n": st["recv_msgs_per_s"]["windows"]}
    else:
        lat = measure.latency_ms(by_consumer, counted_ids, latency_records)
    return {
        "throughput": {
            "send_msgs_per_s": send["median"],
            "send_min": send["min"],
            "send_max": send["max"],
            "recv_msgs_per_s": recv["median"],
            "recv_min": recv["min"],
            "recv_max": recv["max"],
            "recv_kib_per_s": recv["median"] * spec.size / 1024 if recv["n"] else math.nan,
            "measured_bursts": 0 if spec.duration else recv["n"],
            **({"measured_windows": recv["n"]} if spec.duration else {}),
            "warmup_excluded": len(bursts) > 1 or bool(spec.duration and spec.warmup),
        },
        **extra,
        "bursts": [asdict(b) for b in bursts],
        # latency means latency only under a paced load; a flood's figure is time in queue
        **({"latency_ms": lat, "time_in_queue_ms": None} if spec.rate
           else {"latency_ms": None, "time_in_queue_ms": lat}),
        "accounting": acc.as_dict(),
        "busiest": busiest,
        "broker_witness": _witness_of(outcome, acc),
    }


def _witness_of(outcome: Outcome, acc: measure.Accounting) -> dict:
    """The brokers' counters at the end beside the accounting, and every reading taken."""
    sources = {n: e.get("witness", "none") for n, e in outcome.external.items()}
    blind = sorted(n for n, s in sources.items() if s == "none")
    if blind:
        return {"available": False, "sources": sources,
                "why": f"no second witness: broker {', '.join(blind)} offers neither Jolokia "
                       "(--broker-admin) nor the statistics plugin; the clients' exact "
                       "accounting alone decides", "readings": []}
    end = next((c["brokers"] for c in reversed(outcome.broker_counts) if c["at"] == "end"), None)
    if end is None:
        return {"available": False, "sources": sources or None,
                "why": "the point ended before the brokers were read",
                "readings": outcome.broker_counts}
    sources = {n: sources.get(n, "launcher") for n in end}
    return {"available": True, "sources": sources, **measure.witness(end, acc),
            "readings": outcome.broker_counts}


def _busiest(outcome: Outcome, counted: set[int]) -> dict:
    """The process with the highest CPU share (1.0 = one core) over the measured bursts, and
    the whole machine beside it: the processes the point started, the harness itself, and
    what the machine as a whole was busy with. When the machine is busy on (nearly) every
    core the figure is bounded by the machine, whatever one process shows."""
    shares: dict[str, list[float]] = {}
    bursts = [b for b in outcome.burst_cpu if b["burst"] in counted]
    for b in bursts:
        for name, s in b["cpu_share"].items():
            shares.setdefault(name, []).append(s)
    if not shares:
        return {}
    name, vals = max(shares.items(), key=lambda kv: sum(kv[1]) / len(kv[1]))
    share = sum(vals) / len(vals)
    ours = statistics.fmean(sum(b["cpu_share"].values()) + b.get("harness_share", 0)
                            for b in bursts)
    machine = [b["machine_busy_cores"] for b in bursts
               if not math.isnan(b.get("machine_busy_cores", math.nan))]
    busy = statistics.fmean(machine) if machine else math.nan
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"process": name, "cpu_share": round(share, 2), "cpu_bound": share >= 0.9,
            "point_processes_and_harness_cores": round(ours, 2),
            "harness_cores": round(statistics.fmean(b.get("harness_share", 0) for b in bursts),
                                   2),
            "machine_busy_cores": round(busy, 2), "cores": cores,
            "machine_saturated": bool(busy >= 0.9 * cores)}


def _dump_java_threads(sup: Supervisor) -> None:
    """A stall: every Java process we started (brokers, clients) appends its threads to
    NAME.threads.txt next to its log, so that what was blocked can be read afterwards (the
    first stall of a point is the telling one: later dumps are appended, never over it)."""
    jcmd = shutil.which("jcmd")
    if not jcmd:
        return
    for child in sup.children:
        if not child.alive() or not any(Path(a).name == "java" for a in child.argv[:8]):
            continue
        out = child.log_path.with_suffix(".threads.txt")
        try:
            with open(out, "a") as f:
                f.write(f"==== {time.strftime('%H:%M:%S')} stall: jcmd {child.pid} Thread.print\n")
                f.flush()
                subprocess.run([jcmd, str(child.pid), "Thread.print"], stdout=f,
                               stderr=subprocess.STDOUT, timeout=20, check=False)
        except (OSError, subprocess.TimeoutExpired) as e:
            out.write_text(f"jcmd failed: {e}\n")


def _counts(snap: dict) -> dict:
    """A witness reading without the moment it was taken (``t_ns`` differs every time): what
    two readings must share to count as settled."""
    return {name: {k: v for k, v in b.items() if k != "t_ns"} for name, b in snap.items()}
