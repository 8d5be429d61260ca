"""A point's definition: ``PointSpec``, every parameter of one measured point, checked."""

from __future__ import annotations

import itertools
import os
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path

from burstbench import clients, options
from burstbench.infra import brokers, browser, outside, topology


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


