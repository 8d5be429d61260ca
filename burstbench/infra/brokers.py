"""ActiveMQ brokers the bench starts: render an ordinary configuration file, start the broker,
know when it is ready.

Two kinds, one protocol between launcher and harness (the ready line, ``stats``, ``hold``):

- ``classic``: ``broker/`` (a Maven module embedding ActiveMQ Classic 6.1.7) running an
  activemq.xml rendered from ``broker/templates/activemq.xml.j2``;
- ``artemis``: ``broker/artemis/`` (embedding ActiveMQ Artemis 2.44.0) running a broker.xml
  rendered from ``broker/templates/broker.xml.j2``, with JAAS's properties login module for
  users, as the Artemis distribution configures it.

Ready means the launcher printed its ready line *and* every port accepts a TCP connection;
there is no fixed sleep anywhere.
"""

from __future__ import annotations

import collections
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import jinja2

from burstbench import clients, paths
from burstbench.infra.brokerspec import (  # noqa: F401 (what a broker is, read as brokers.X)
    ACTIVEMQ_VERSION,
    ARTEMIS_VERSION,
    BROKERS,
    CLASSIC_VERSIONS,
    KINDS,
    PERSISTENCE,
    PRODUCTS,
    STOMP_FRAME_OVERHEAD,
    STORES,
    BrokerError,
    BrokerSpec,
    NetworkConnector,
    check_store,
    launcher_dirs,
    parse_broker,
    protocols_of,
    stomp_window,
)
from burstbench.infra.procs import Child, Supervisor

_GIVEN: collections.deque[int] = collections.deque(maxlen=256)
_GIVEN_LOCK = threading.Lock()


# ports handed out by any harness process on this machine in the last minute (two test
# workers, two runs at once): a file each appends to under an exclusive lock
_GIVEN_FILE = Path(os.environ.get("TMPDIR", "/tmp")) / "burstbench-ports-given"
_GIVEN_FOR_S = 60.0


def _kernel_port(host: str) -> int:
    """The port the kernel gives a bind to port 0 on host, released at once."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def free_port(host: str = "127.0.0.1") -> int:
    """A port the kernel says is free now (bind to 0), never one of the last 256 this process
    handed out nor one another harness process on this machine handed out in the last minute:
    the kernel may give the same free port to two binds in a row, and a broker binds its three
    connectors only later (run 20261123-065119-chaos-20565, store-full-stompjs: its OpenWire
    and WebSocket connectors were both given 42939). Start-up still retries when another
    program takes a port in between."""
    import contextlib
    import fcntl

    with _GIVEN_LOCK, contextlib.ExitStack() as stack:
        try:  # another user's file (a run as someone else): this process's own list only
            f = stack.enter_context(open(_GIVEN_FILE, "a+"))
            fcntl.flock(f, fcntl.LOCK_EX)
            f.seek(0)
            lines = f.read().splitlines()
        except OSError:
            f, lines = None, []
        now = time.time()
        recent = {}
        for line in lines:
            p, _, t = line.partition(" ")
            if p.isdigit() and t and now - float(t) < _GIVEN_FOR_S:
                recent[int(p)] = float(t)
        for _ in range(64):
            port = _kernel_port(host)
            if port not in _GIVEN and port not in recent:
                _GIVEN.append(port)
                if f is not None:
                    recent[port] = now
                    f.seek(0)
                    f.truncate()
                    f.write("".join(f"{q} {t}\n" for q, t in recent.items()))
                return port
    raise OSError("no free port the kernel would give that was not given out already")


def port_accepts(host: str, port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


@dataclass
class Broker:
    spec: BrokerSpec
    child: Child
    xml_path: Path
    version: str = ""

    def __post_init__(self) -> None:
        self.version = self.version or self.spec.version

    @property
    def product(self) -> str:
        return PRODUCTS[self.spec.kind]

    @property
    def openwire_url(self) -> str:
        scheme = "ssl" if self.spec.tls else "tcp"
        return f"{scheme}://{self.spec.host}:{self.spec.openwire_port}"

    @property
    def stomp_url(self) -> str:
        scheme = "stomp+ssl" if self.spec.tls else "stomp"
        return f"{scheme}://{self.spec.host}:{self.spec.stomp_port}"

    @property
    def ws_url(self) -> str:
        scheme = "wss" if self.spec.tls else "ws"
        return f"{scheme}://{self.spec.host}:{self.spec.ws_port}/"

    def url_for(self, protocol: str) -> str:
        if protocol not in protocols_of(self.spec.kind, self.spec.version):
            raise BrokerError(f"{self.product} {self.spec.version} has no {protocol} transport "
                              "here")
        return {"openwire": self.openwire_url, "stomp": self.stomp_url, "ws": self.ws_url}[protocol]

    @property
    def ports(self) -> list[int]:
        have = protocols_of(self.spec.kind, self.spec.version)
        return [port for proto, port in (("openwire", self.spec.openwire_port),
                                         ("stomp", self.spec.stomp_port),
                                         ("ws", self.spec.ws_port)) if proto in have]

    def ask(self, sup: Supervisor, line: str, event: str, timeout: float = 30) -> dict | None:
        """Write ``line`` on the launcher's stdin (``stats``, ``hold Q1 Q2``) and return the first
        ``event`` it prints after, or None after ``timeout`` seconds; the other children's
        events taken meanwhile go back to the supervisor's queue, in order."""
        got: list[dict] = []
        others: list[tuple[Child, dict]] = []

        def take(who: Child, ev: dict) -> None:
            if not got and who is self.child and ev.get("event") == event:
                got.append(ev)
            else:
                others.append((who, ev))

        self.child.send(line)
        try:
            sup.wait_until(lambda: bool(got), timeout, take)
        finally:
            sup.put_back(others)
        return got[0] if got else None

    def store_bytes(self) -> int:
        """Bytes on disk under the broker's data directory (the store's size)."""
        total = 0
        for root, _dirs, files in os.walk(self.spec.data_dir):
            for f in files:
                try:
                    total += os.path.getsize(os.path.join(root, f))
                except OSError:
                    pass
        return total


def _templates() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(paths.BROKER_TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )


# Each Classic connector's own cap on connections: above anything a point may open (a point
# with --connections-per-process meets the machine's limits first, named by its checks)
MAX_CONNECTIONS = 200_000
TRANSPORTS = ("tcp", "nio")
# (transport, TLS) -> the OpenWire and STOMP connectors' schemes (Classic)
CONNECTOR_SCHEMES = {("tcp", False): ("tcp", "stomp"), ("tcp", True): ("ssl", "stomp+ssl"),
                     ("nio", False): ("nio", "stomp+nio"),
                     ("nio", True): ("nio+ssl", "stomp+nio+ssl")}


def render(spec: BrokerSpec) -> str:
    """The configuration file for ``spec`` (ports must already be chosen): an activemq.xml
    for Classic, a broker.xml for Artemis."""
    if spec.kind == "artemis":
        return render_artemis(spec)
    env = _templates()
    store = {"none": "memory", "kahadb": "kahadb", "kahadb-nosync": "kahadb"}.get(
        spec.persistence, "jdbc"
    )
    h = spec.host
    nodelay = "&transport.tcpNoDelay=true" if spec.tcp_nodelay else ""
    openwire, stomp = CONNECTOR_SCHEMES[(spec.transport, bool(spec.tls))]
    connectors = [
        {
            "name": "openwire",
            "uri": f"{openwire}://{h}:{spec.openwire_port}"
            f"?maximumConnections={MAX_CONNECTIONS}"
            "&wireFormat.maxFrameSize=104857600" + nodelay,
            "discovery": spec.discovery_uri,
        },
        {
            "name": "stomp",
            "uri": f"{stomp}://{h}:{spec.stomp_port}"
            f"?maximumConnections={MAX_CONNECTIONS}"
            "&wireFormat.maxFrameSize=104857600" + nodelay,
        },
        {
            "name": "ws",
            "uri": f"{'wss' if spec.tls else 'ws'}://{h}:{spec.ws_port}"
            f"?maximumConnections={MAX_CONNECTIONS}"
            "&wireFormat.maxFrameSize=104857600"
            # Jetty's default caps a WebSocket text message at 64 KiB
            "&websocket.maxTextMessageSize=104857600",
        },
    ]
    have = protocols_of(spec.kind, spec.version)
    connectors = [c for c in connectors if c["name"] in have]
    return env.get_template("activemq.xml.j2").render(
        name=spec.name,
        data_dir=str(spec.data_dir),
        persistent=spec.persistence != "none",
        store=store,
        kahadb_sync="always" if spec.persistence == "kahadb" else "never",
        lock_acquire_ms=spec.lock_acquire_ms,
        kahadb_attrs=spec.kahadb_attrs,
        producer_flow_control=spec.producer_flow_control,
        optimized_dispatch=spec.optimized_dispatch,
        queue_prefetch=spec.queue_prefetch,
        queue_memory_limit=spec.queue_memory_limit,
        max_page_size=spec.max_page_size,
        memory_limit=spec.memory_limit,
        store_limit=spec.store_limit,
        temp_limit=spec.temp_limit,
        network=bool(spec.network_connectors),
        network_connectors=spec.network_connectors,
        users=spec.users,
        tls=spec.tls,
        jdbc=spec.jdbc,
        connectors=connectors,
    )


# Artemis's acceptors as its distribution writes them (etc/broker.xml), one protocol each: the
# STOMP ones map the STOMP destinations /queue/NAME and /topic/NAME to an anycast and a
# multicast address NAME, as an ActiveMQ Classic user's clients expect (competing consumers
# on /queue/, a copy per subscriber on /topic/); the WebSocket acceptor is a STOMP acceptor
# (Artemis upgrades an HTTP request on any STOMP acceptor), its frames up to 100 MiB.
_ARTEMIS_ACCEPTOR = "tcpSendBufferSize=1048576;tcpReceiveBufferSize=1048576;useEpoll=true"
_STOMP_PREFIXES = "anycastPrefix=/queue/;multicastPrefix=/topic/"


def render_artemis(spec: BrokerSpec) -> str:
    """The broker.xml text for an Artemis ``spec`` (ports chosen)."""
    h = spec.host
    tls = ""
    if spec.tls:
        tls = (f";sslEnabled=true;keyStorePath={spec.tls.keystore};keyStoreType=PKCS12"
               f";keyStorePassword={spec.tls.password}")
    # a node of a cluster: its OpenWire acceptor speaks core too, for the other nodes' bridges,
    # which check the nodes' certificates against the CA under --tls
    openwire = "CORE,OPENWIRE" if spec.cluster_peers else "OPENWIRE"
    trust = (f"?sslEnabled=true;trustStorePath={spec.tls.truststore};trustStoreType=PKCS12"
             f";trustStorePassword={spec.tls.password}") if spec.tls else ""
    acceptors = [
        {"name": "openwire", "uri": f"tcp://{h}:{spec.openwire_port}?protocols={openwire};"
         f"{_ARTEMIS_ACCEPTOR};supportAdvisory=false;suppressInternalManagementObjects=true"
         + tls},
        {"name": "stomp", "uri": f"tcp://{h}:{spec.stomp_port}?protocols=STOMP;"
         f"{_ARTEMIS_ACCEPTOR};{_STOMP_PREFIXES}" + tls},
        {"name": "ws", "uri": f"tcp://{h}:{spec.ws_port}?protocols=STOMP;{_ARTEMIS_ACCEPTOR};"
         f"{_STOMP_PREFIXES};webSocketMaxFramePayloadLength=104857600" + tls},
    ]
    return _templates().get_template("broker.xml.j2").render(
        name=spec.name,
        data_dir=str(spec.data_dir),
        persistent=spec.persistence != "none",
        sync=spec.persistence in ("journal", *(p for p in PERSISTENCE if p.startswith("jdbc"))),
        jdbc=spec.jdbc,
        users=spec.users,
        acceptors=acceptors,
        global_max_size=spec.memory_limit.upper().removesuffix("B"),
        cluster=({"self": f"tcp://{h}:{spec.openwire_port}" + trust,
                  "peers": [{**p, "uri": p["uri"] + trust} for p in spec.cluster_peers],
                  "user": "bench-cluster", "password": spec.cluster_password}
                 if spec.cluster_peers else None),
        # Artemis's answer to a full address as it ships: PAGE (to disk)
        full_policy="PAGE",
    )


def write_login(spec: BrokerSpec, workdir: Path) -> Path | None:
    """JAAS files for an Artemis ``spec`` with users, as the distribution's etc/ has them:
    login.config naming PropertiesLoginModule, artemis-users.properties and
    artemis-roles.properties beside it (every user in role ``bench``; the module reads them
    relative to login.config's directory). None without users."""
    if spec.kind != "artemis" or not spec.users:
        return None
    d = workdir / f"login-{spec.name}"
    d.mkdir(parents=True, exist_ok=True)
    (d / "artemis-users.properties").write_text(
        "".join(f"{u['name']} = {u['password']}\n" for u in spec.users))
    (d / "artemis-roles.properties").write_text(
        "bench = " + ",".join(u["name"] for u in spec.users) + "\n")
    for f in ("artemis-users.properties", "artemis-roles.properties"):
        (d / f).chmod(0o600)
    login = d / "login.config"
    login.write_text(
        "activemq {\n"
        "  org.apache.activemq.artemis.spi.core.security.jaas.PropertiesLoginModule required\n"
        "    reload=false\n"
        '    org.apache.activemq.jaas.properties.user="artemis-users.properties"\n'
        '    org.apache.activemq.jaas.properties.role="artemis-roles.properties";\n'
        "};\n")
    return login


def java_argv(xml_path: Path, heap: str = "1g", extra: list[str] | None = None,
              kind: str = "classic", version: str = ACTIVEMQ_VERSION) -> list[str]:
    classes, lib = launcher_dirs(kind, version)
    cp = f"{classes}{os.pathsep}{lib}/*"
    main = "burstbench.artemis.Main" if kind == "artemis" else "burstbench.broker.Main"
    return [
        "java",
        f"-Xms{heap}",
        f"-Xmx{heap}",
        "-XX:+UseParallelGC",
        "-Djava.net.preferIPv4Stack=true",
        *clients.java_options_extra(),
        "-cp",
        cp,
        main,
        *(extra or []),
        str(xml_path),
    ]


def start(
    sup: Supervisor,
    spec: BrokerSpec,
    workdir: Path,
    timeout: float = 60.0,
    wrap: list[str] | None = None,
    probe: Callable[[str, int], bool] | None = None,
    launcher=None,
) -> Broker:
    """Render, launch and wait until ready. Retries with new ports if one was taken meanwhile.

    ``wrap`` prefixes the command (e.g. ``ip netns exec NS``); ``probe(host, port)`` says
    whether a port accepts connections (default ``port_accepts`` from the harness's own
    network namespace; a broker in another namespace needs one that looks from inside it).
    ``launcher`` (a ``burstbench.infra.launch.Ssh``) runs the broker on another host: its
    activemq.xml is copied there first.
    """
    paths.require_built(f"the {PRODUCTS[spec.kind]} {spec.version} launcher",
                        launcher_dirs(spec.kind, spec.version)[0])
    fixed = spec.openwire_port and spec.stomp_port and spec.ws_port
    last_error = ""
    for attempt in range(1 if fixed else 3):
        if not fixed:
            spec.openwire_port, spec.stomp_port, spec.ws_port = (
                free_port(),
                free_port(),
                free_port(),
            )
        spec.data_dir = Path(spec.data_dir or workdir / f"broker-{spec.name}")
        spec.data_dir.mkdir(parents=True, exist_ok=True)
        xml_path = workdir / (f"broker-{spec.name}.xml" if spec.kind == "artemis"
                              else f"activemq-{spec.name}.xml")
        xml_path.write_text(render(spec))
        extra = ["--watch-stdin"]
        login = write_login(spec, workdir)
        if login is not None:
            extra += ["--login-config", str(login)]
        argv = java_argv(xml_path, spec.heap, extra, spec.kind, spec.version)
        if spec.cpus:
            argv = ["taskset", "-c", spec.cpus, *argv]
        if launcher is not None:
            for f in [xml_path, *(sorted(login.parent.iterdir()) if login else [])]:
                launcher.put(f)
            cmd, cwd = launcher.command(argv, cwd=spec.data_dir), None
        else:
            # whatever the broker writes beside it (derby.log) stays in its data directory
            cmd, cwd = (wrap or []) + argv, spec.data_dir
        child = sup.start(
            f"broker-{spec.name}" + (f"-try{attempt}" if attempt else ""),
            cmd,
            role="broker",
            cwd=cwd,
            remote=launcher is not None,
        )
        broker = Broker(spec=spec, child=child, xml_path=xml_path)
        try:
            wait_ready(sup, broker, timeout, probe)
            return broker
        except BrokerError as e:
            last_error = str(e)
            sup.stop(child)
            if fixed or "in use" not in last_error.lower():
                raise
    raise BrokerError(last_error)


def wait_ready(
    sup: Supervisor,
    broker: Broker,
    timeout: float,
    probe: Callable[[str, int], bool] | None = None,
) -> None:
    probe = probe or port_accepts
    deadline = time.monotonic() + timeout
    child = broker.child
    e = sup.first_event(child, ("ready",), timeout)
    if e is None:
        raise BrokerError(
            f"broker {broker.spec.name} not ready after {timeout:.0f} s (log: {child.log_path})"
        )
    if e["event"] == "exit":
        raise BrokerError(
            f"broker {broker.spec.name} exited with {e['code']} before ready: "
            f"{_why(child)} (log: {child.log_path})"
        )
    broker.version = e.get("version", broker.version)
    while not all(probe(broker.spec.host, p) for p in broker.ports):
        if time.monotonic() > deadline:
            raise BrokerError(
                f"broker {broker.spec.name} said ready but ports {broker.ports} do not accept"
            )
        time.sleep(0.05)


def _why(child: Child) -> str:
    for line in reversed(child.stderr_tail):
        low = line.lower()
        if "address already in use" in low or "bindexception" in low:
            return "a port is already in use: " + line
    return child.last_error()


_RENDER_DRIVERS = {
    "jdbc-postgres": {"driver": "org.postgresql.Driver"},
    "jdbc-mariadb": {"driver": "org.mariadb.jdbc.Driver", "adapter": "mysql-jdbc-adapter"},
    "jdbc-derby": {"driver": "org.apache.derby.jdbc.EmbeddedDriver"},
}


def render_main(argv: list[str]) -> int:
    """``python -m burstbench.infra.brokers render OPTIONS > activemq.xml``: print the activemq.xml
    of a broker the harness does not start (a container, another host), from the same template.

    Hosts, ports, the data directory (relative paths resolve against the broker's working
    directory), the store and the network connectors all come from the options. Text such as
    ``${NAME}`` passes through unchanged, so a secret can stay a placeholder that the
    deployment fills in when the broker starts (``deploy/broker-entrypoint.sh``).
    """
    import argparse
    import sys

    ap = argparse.ArgumentParser(
        prog="python -m burstbench.infra.brokers render",
        description="Print the activemq.xml of a broker the harness does not start, rendered "
        "from broker/templates/activemq.xml.j2.")
    ap.add_argument("--name", required=True, help="brokerName")
    ap.add_argument("--host", required=True, help="address the connectors bind, e.g. 0.0.0.0")
    for proto in ("openwire", "stomp", "ws"):
        ap.add_argument(f"--{proto}-port", type=int, required=True, metavar="PORT")
    ap.add_argument("--persistence", default="none", choices=PERSISTENCE)
    ap.add_argument("--data-dir", required=True, help="the broker's dataDirectory")
    ap.add_argument("--network-to", action="append", default=[], metavar="URL",
                    help="OpenWire URL of a peer this broker forwards to (repeatable)")
    ap.add_argument("--duplex", action="store_true", help="make the network connectors duplex")
    ap.add_argument("--network-ttl", type=int, default=1, metavar="HOPS")
    ap.add_argument("--jdbc-url", help="JDBC URL (jdbc-* persistence only)")
    ap.add_argument("--jdbc-user", default="", help="may be a ${NAME} placeholder")
    ap.add_argument("--jdbc-password", default="", help="may be a ${NAME} placeholder")
    ap.add_argument("--no-flow-control", action="store_true")
    args = ap.parse_args(argv)

    for opt in ("openwire_port", "stomp_port", "ws_port"):
        if not 0 < getattr(args, opt) < 65536:
            ap.error(f"--{opt.replace('_', '-')} must be 1..65535")
    jdbc = None
    if args.persistence in _RENDER_DRIVERS:
        if not args.jdbc_url:
            ap.error(f"--persistence {args.persistence} needs --jdbc-url")
        jdbc = {**_RENDER_DRIVERS[args.persistence], "url": args.jdbc_url,
                "user": args.jdbc_user, "password": args.jdbc_password}
    elif args.jdbc_url or args.jdbc_user or args.jdbc_password:
        ap.error(f"--jdbc-* options need a jdbc-* --persistence, not {args.persistence}")
    connectors = []
    for url in args.network_to:
        peer = url.split("://", 1)[-1].split(":", 1)[0].split("/", 1)[0]
        if "://" not in url or not peer:
            ap.error(f"--network-to: {url!r} is not a URL (tcp://host:port)")
        connectors.append(NetworkConnector(
            name=f"{args.name}-to-{peer}", uri=f"static:({url})?maxReconnectDelay=1000",
            duplex=args.duplex, ttl=args.network_ttl))
    spec = BrokerSpec(
        name=args.name, host=args.host, persistence=args.persistence,
        data_dir=Path(args.data_dir), openwire_port=args.openwire_port,
        stomp_port=args.stomp_port, ws_port=args.ws_port,
        producer_flow_control=not args.no_flow_control,
        network_connectors=connectors, jdbc=jdbc,
    )
    sys.stdout.write(render(spec))
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m burstbench.infra.brokers [--persistence P]``: run one broker until Ctrl-C (for
    developing a client by hand). Prints its URLs as one JSON line.

    ``python -m burstbench.infra.brokers render ...`` prints an activemq.xml instead
    (``render_main``).
    """
    import argparse
    import json
    import sys
    import tempfile

    from burstbench.infra.procs import Interrupted, install_signal_handlers

    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["render"]:
        return render_main(argv[1:])
    ap = argparse.ArgumentParser(prog="python -m burstbench.infra.brokers",
                                 epilog="python -m burstbench.infra.brokers render --help: print "
                                 "an activemq.xml for a broker the harness does not start")
    ap.add_argument("--persistence", default="none", choices=PERSISTENCE)
    args = ap.parse_args(argv)
    install_signal_handlers()
    work = Path(tempfile.mkdtemp(prefix="burstbench-broker-"))
    with Supervisor(work / "logs") as sup:
        b = start(sup, BrokerSpec(persistence=args.persistence), work)
        print(
            json.dumps(
                {
                    "openwire": b.openwire_url,
                    "stomp": b.stomp_url,
                    "ws": b.ws_url,
                    "log": str(b.child.log_path),
                }
            ),
            flush=True,
        )
        try:
            while b.child.alive():
                time.sleep(0.5)
        except Interrupted:
            pass
    return 0



if __name__ == "__main__":
    raise SystemExit(main())
