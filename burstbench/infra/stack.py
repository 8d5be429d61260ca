"""A point's infrastructure as one object: hosts, network, databases, brokers and bridges.

``Stack`` is built from a ``PointSpec`` and is a context manager: entering brings up
everything the point runs on (network namespaces or SSH hosts, a throwaway CA and
credentials, the JDBC databases, every broker of the topology, their network bridges), the
body gets the endpoints (broker URLs per client kind, the security options, where each
client runs), and leaving takes it all down again, on success, failure and Ctrl-C alike:
every process it started is stopped by PID through the point's ``Supervisor``, the
namespaces and SSH hosts are removed, the brokers' stores deleted. A bring-up that fails half
way takes down what it had already brought up before the error passes on.

The runner (``burstbench/measure/runner.py``) drives clients and measures; it asks the stack where
things are and never starts or stops infrastructure itself.
"""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path
from typing import Self

from burstbench.errors import PointFailed
from burstbench.infra import brokers, secret, topology
from burstbench.infra.procs import Child, Supervisor


class Stack:
    """Everything one point runs on. ``with Stack(spec, point_dir, sup) as stack: ...``"""

    def __init__(self, spec, point_dir: Path, sup: Supervisor, progress=None,
                 broker_limits: dict | None = None):
        self.spec = spec
        # BrokerSpec fields every started broker takes instead of its defaults (./bench perf
        # sizes heap and memory limits to its largest backlog)
        self.broker_limits = broker_limits or {}
        self.dir = Path(point_dir)
        self.sup = sup
        self.progress = progress or (lambda msg: None)
        self.work = self.dir / "work"  # broker stores, TLS material: big, and not a result
        self.layout = topology.layout(spec.topology)
        self.brokers: dict[str, brokers.Broker] = {}  # by topology name, started or external
        self.databases: list = []
        self.remote_databases: list = []  # dbserve's children on SSH hosts
        self.net = None  # a netns.Network for --hosts netns
        self.remote = None  # an inventory.Placement when the hosts are reached over SSH
        self.ca: Path | None = None  # the CA the clients verify (--tls; --ca outside)
        # (user, password): generated with --auth, an outside broker's own with --user
        self.credentials: tuple[str, str] | None = None
        self.connections: dict | None = None  # what an outside broker's connections use
        self.external: dict = {}  # brokers the harness did not start: their URLs, version
        self.store_bytes = 0  # the started brokers' stores, measured before they are removed
        self.namespaces: list[str] = []  # the network namespaces the point's hosts live in
        self.hosts: dict = {}  # the SSH hosts' inventory (burstbench/infra/inventory.py)

    # -- life cycle ------------------------------------------------------------------------
    def __enter__(self) -> Self:
        self.work.mkdir(parents=True, exist_ok=True)
        try:
            self._up()
        except BaseException:
            self.down()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.down()

    def down(self) -> None:
        """Stop every broker and database this stack started (by PID), then remove the
        SSH hosts, the namespaces and the stores. Safe to call twice."""
        try:
            for b in reversed(list(self.brokers.values())):
                if b.child is not None:  # never stop a broker we did not start
                    self.sup.stop(b.child)
            self.store_bytes = sum(b.store_bytes() for b in self.brokers.values())
            if self.databases:
                from burstbench.infra import databases
                for db in self.databases:  # their data directories may live outside ``work``
                    databases.stop(self.sup, db)
                self.databases = []
            for child in self.remote_databases:
                self.sup.stop(child)
            self.remote_databases = []
            if self.remote is not None:
                self.remote.close()
        finally:
            if self.net is not None:
                self.net.remove()
            shutil.rmtree(self.work, ignore_errors=True)

    # -- endpoints the runner reads ----------------------------------------------------------
    @property
    def broker_version(self) -> str:
        return next((b.version for b in reversed(list(self.brokers.values()))), "")

    @property
    def broker_product(self) -> str:
        """``ActiveMQ Classic`` or ``ActiveMQ Artemis`` (an outside broker: what it said)."""
        return next((b.product for b in reversed(list(self.brokers.values()))), "")

    def broker_for(self, role: str, i: int) -> tuple[str, brokers.Broker]:
        """The broker the ``i``-th ``role`` client connects to, with its topology name."""
        names = self.layout.producer_hosts if role == "producer" else self.layout.consumer_hosts
        name = names[i % len(names)]
        return name, self.brokers[name]

    def security_args(self) -> list[str]:
        """The contract options every client needs to reach these brokers (CA, user). The
        password is not among them: it goes in the client's environment (``client_env``), off
        the process list; a client on an SSH host, whose environment does not travel, gets it
        as ``--password``."""
        args = []
        if self.ca is not None:
            args += ["--ca", str(self.ca)]
        if getattr(self.spec, "cert", ""):  # an outside broker asks for the clients' own
            args += ["--cert", self.spec.cert, "--key", self.spec.key]
        if self.credentials is not None:
            args += ["--user", self.credentials[0]]
            if self.remote is not None:
                args += ["--password", self.credentials[1]]
        return args

    def client_env(self, env: dict | None) -> dict | None:
        """A client's environment (``env``, else the harness's) with the password in it."""
        if self.credentials is None or self.remote is not None:
            return env
        import os
        return {**(env if env is not None else os.environ), "BB_PASSWORD": self.credentials[1]}

    def place(self, role: str, i: int, broker: str, argv: list[str],
              cwd: Path) -> tuple[list[str], str]:
        """The ``i``-th ``role`` client's command line where it runs, and that host's name: in
        its broker's namespace, on its load host over SSH (working directory ``cwd`` there),
        or here as it is."""
        host = broker
        if self.net is not None:
            argv = self.net.wrap(broker) + argv
        if self.remote is not None:  # on its load host, wherever its broker is
            host = self.remote.client_host(role, i)
            argv = self.remote.launchers[host].command(argv, cwd=cwd)
        return argv, host

    def started_brokers(self) -> dict[str, brokers.Broker]:
        return {n: b for n, b in self.brokers.items() if b.child is not None}

    def broker_hosts(self) -> dict[str, str]:
        """SSH hosts only: the process name of every broker the harness started -> its host."""
        if self.remote is None:
            return {}
        return {b.child.name: self.remote.broker_host(n)
                for n, b in self.started_brokers().items()}

    def shell_namespaces(self) -> list[str | None]:
        """Where to look at sockets: this machine (None), then each of the point's namespaces."""
        return [None] if self.net is None else [None, *self.net.names]

    # -- bring-up --------------------------------------------------------------------------
    def _up(self) -> None:
        """Every broker of the topology, on its host, networked, with its store."""
        spec, lay = self.spec, self.layout
        tag = uuid.uuid4().hex[:6]
        if spec.broker_urls:
            from burstbench.infra import outside
            admins = outside.admins(spec)
            if spec.user:
                self.credentials = (spec.user, outside.login_password(spec) or "")
            self.ca = Path(spec.ca) if spec.ca else None
            for i, (name, text) in enumerate(zip(lay.brokers, spec.broker_urls)):
                ext = outside.external(name, text, spec)
                admin = admins[i] if i < len(admins) else None
                try:
                    outside.inspect(ext, admin, *(self.credentials or (None, None)))
                except outside.OutsideError as e:
                    raise PointFailed(str(e)) from None
                self.progress(f"broker {name}: {ext.product} {ext.version}, counters read "
                              + ("by nobody (no second witness)" if ext.witness == "none"
                                 else f"through {ext.witness}"))
                self.brokers[name] = ext
                self.external[name] = ext.describe()
            if spec.hosts != "loopback":  # the clients on an inventory's hosts (or pods)
                self._open_remote([])
            return
        if spec.hosts not in ("loopback", "netns"):
            self._open_remote(lay.brokers)
        if spec.hosts == "netns":
            from burstbench.infra import netns
            self.net = netns.Network(tag, lay.brokers, link_rate=spec.link_rate or None,
                                     multicast=spec.discovery == "multicast")
            self.net.create()
            self.namespaces = list(self.net.names)
        hosts = {n: (self.net.address(n) if self.net else
                     self.remote.address(self.remote.broker_host(n)) if self.remote else
                     "127.0.0.1") for n in lay.brokers}
        material = None
        if spec.tls:
            from burstbench.infra import tls
            material = tls.make(self.work, sorted(set(hosts.values())))
            self.ca = material.ca_pem
        if spec.auth:
            self.credentials = ("bench", secret.throwaway(16))
        users = ([{"name": self.credentials[0], "password": self.credentials[1]}]
                 if self.credentials else [])
        specs = {}
        for name in lay.brokers:
            specs[name] = brokers.BrokerSpec(
                name=name, host=hosts[name], kind=spec.broker_kind,
                version=spec.broker.partition(":")[2], persistence=spec.persistence,
                queue_prefetch=spec.prefetch, producer_flow_control=spec.producer_flow_control,
                optimized_dispatch=spec.optimized_dispatch, tcp_nodelay=spec.tcp_nodelay,
                transport=spec.transport, cpus=spec.cpus_broker,
                openwire_port=brokers.free_port(), stomp_port=brokers.free_port(),
                ws_port=brokers.free_port(), data_dir=self.work / f"broker-{name}",
                discovery_uri=(f"multicast://default?group=bb{tag}"
                               if spec.discovery == "multicast" else None),
                tls=material, users=users, **self.broker_limits)
        if spec.broker_kind == "artemis":  # a cluster of every node: Artemis's own network
            cluster_secret = secret.throwaway(16)
            for name, bs in specs.items():
                bs.cluster_password = cluster_secret
                bs.cluster_peers = [{"name": peer, "uri": f"tcp://{specs[peer].host}:"
                                                          f"{specs[peer].openwire_port}"}
                                    for peer in lay.brokers if peer != name]
        for name, bs in specs.items():
            if spec.broker_kind == "artemis":
                bs.jdbc = self._jdbc(name)
                continue
            bs.network_connectors = topology.connectors(
                lay, name, spec.discovery, f"bb{tag}",
                lambda peer: f"{'ssl' if spec.tls else 'tcp'}://{specs[peer].host}:"
                             f"{specs[peer].openwire_port}")
            for nc in bs.network_connectors:
                if self.credentials:
                    nc.user, nc.password = self.credentials
            bs.jdbc = self._jdbc(name)
        for name, bs in specs.items():
            kw = {}
            if self.net is not None:
                kw = {"wrap": self.net.wrap(name),
                      "probe": lambda host, port, n=name: self.net.probe(n, port)}
            if self.remote is not None:
                on = self.remote.broker_host(name)
                kw = {"launcher": self.remote.launchers[on],
                      "probe": lambda host, port, h=on: self.remote.probe(h, port)}
            self.progress(f"starting broker {name} ({brokers.PRODUCTS[bs.kind]}, "
                          f"{bs.persistence}, {bs.host})")
            self.brokers[name] = brokers.start(self.sup, bs, self.work, **kw)
        self._wait_bridges()

    def _open_remote(self, broker_names: list[str]) -> None:
        from burstbench.infra import inventory
        self.remote = inventory.Placement.open(self.spec.hosts, self.dir, broker_names,
                                               self.dir / "logs", self.spec.link_rate or None,
                                               self.spec.placement)
        self.namespaces = self.remote.namespaces
        self.hosts = self.remote.describe()

    def _jdbc(self, name: str) -> dict | None:
        """The JDBC store of broker ``name``: a database started for it (in its namespace)."""
        p = self.spec.persistence
        if not p.startswith("jdbc-"):
            return None
        from burstbench.infra import databases
        if p == "jdbc-derby":
            return databases.derby_jdbc(self.work / f"derby-{name}")
        kind = p.removeprefix("jdbc-")
        if self.remote is not None:  # beside its broker, on that host (infra/dbserve.py)
            from burstbench.infra import dbserve
            on = self.remote.broker_host(name)
            self.progress(f"starting {kind} for broker {name} on {on}")
            child, jdbc = dbserve.start(self.sup, self.remote.launchers[on], kind,
                                        self.work / f"db-{name}", f"db-{name}")
            self.remote_databases.append(child)
            return jdbc
        kw = {}
        if self.net is not None:
            kw = {"host": self.net.address(name), "wrap": self.net.wrap(name)}
        self.progress(f"starting {kind} for broker {name}")
        db = databases.start(self.sup, kind, self.work, **kw)
        self.databases.append(db)
        return db.jdbc()

    def _wait_bridges(self) -> None:
        """Wait until every broker's network connectors have their bridges up."""
        want = {n: self.layout.expected_bridges(n, self.spec.discovery) for n in self.brokers}
        if self.spec.broker_kind == "artemis":  # each node bridges to every other
            want = {n: len(self.brokers) - 1 for n in self.brokers}
        want = {n: k for n, k in want.items() if k}
        if not want:
            return
        have = {n: 0 for n in want}
        by_child = {b.child.name: n for n, b in self.brokers.items()}

        def take(child: Child, ev: dict) -> None:
            name = by_child.get(child.name)
            if ev.get("event") == "bridges" and name in have:
                have[name] = int(ev.get("active", 0))
            elif ev.get("event") == "exit":
                raise PointFailed(f"{child.name} exited with {ev['code']}: {child.last_error()}")

        if not self.sup.wait_until(lambda: all(have[n] >= want[n] for n in want),
                                   self.spec.ready_timeout, take):
            raise PointFailed(f"network of brokers not connected after "
                              f"{self.spec.ready_timeout:.0f} s: bridges {have}, "
                              f"expected {want}")
        self.progress(f"network connected: {sum(have.values())} bridge(s)")
