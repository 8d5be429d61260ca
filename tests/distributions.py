"""The official ActiveMQ distributions, started as their users start them, for the tests of
brokers the bench did not start (``--broker-url``).

``./bench setup`` copies the tarballs from Maven Central (``broker/distributions/pom.xml``);
here one is unpacked into a test's directory, its configuration left as it ships but for
the addresses (every listener on 127.0.0.1, on free ports), and started with its own
``bin/`` script in the foreground. It is stopped by PID, through the test's Supervisor.
"""

from __future__ import annotations

import os
import re
import subprocess
import tarfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from burstbench import paths
from burstbench.infra import brokers
from burstbench.infra.procs import Supervisor

DIST = paths.ROOT / "broker" / "distributions" / "target"
CLASSIC = "5.18.3"


@dataclass
class Distribution:
    """A running distribution: its client URLs, its console's Jolokia, its home."""

    home: Path
    ports: dict[str, int]
    jolokia: str
    child: object = None
    urls: dict[str, str] = field(default_factory=dict)

    def broker_url(self, *protos: str) -> str:
        return ",".join(self.urls[p] for p in protos or ("openwire", "stomp", "ws"))


def _unpack(tarball: Path, into: Path) -> Path:
    if not tarball.exists():
        pytest.fail(f"{tarball.name} is missing: ./bench setup copies it (broker/distributions)")
    into = into / "dist"
    into.mkdir()
    with tarfile.open(tarball) as t:
        t.extractall(into, filter="tar")
    return next(p for p in into.iterdir() if p.is_dir())


def start_classic(sup: Supervisor, work: Path, configure=None) -> Distribution:
    """ActiveMQ Classic 5.18.3 as it ships (conf/activemq.xml, conf/jetty.xml), listening on
    127.0.0.1 only. ``configure(conf_dir)`` may change it further before the start."""
    home = _unpack(DIST / f"apache-activemq-{CLASSIC}-bin.tar.gz", work)
    ports = {p: brokers.free_port() for p in ("openwire", "stomp", "ws", "amqp", "mqtt", "jetty")}
    _rebind(home / "conf" / "activemq.xml", ports, openwire="0.0.0.0:61616",
            amqp="0.0.0.0:5672", stomp="0.0.0.0:61613", mqtt="0.0.0.0:1883", ws="0.0.0.0:61614")
    jetty = home / "conf" / "jetty.xml"
    jetty.write_text(re.sub(r'(name="port" value=")8161(")', rf"\g<1>{ports['jetty']}\2",
                            jetty.read_text()))
    if configure is not None:
        configure(home / "conf")
    return _launch(sup, home, ports, "/api/jolokia", ("openwire", "stomp", "ws"),
                   [str(home / "bin" / "activemq"), "console"],
                   {"ACTIVEMQ_OPTS_MEMORY": "-Xms256M -Xmx1G"})


def _launch(sup: Supervisor, home: Path, ports: dict[str, int], jolokia_path: str,
            listeners: tuple[str, str, str], argv: list[str], env: dict | None = None
            ) -> Distribution:
    """Start ``argv`` in ``home`` and wait for its listeners: ``listeners`` names the ports of
    its OpenWire, STOMP and WebSocket URLs."""
    openwire, stomp, ws = (ports[n] for n in listeners)
    d = Distribution(home=home, ports=ports,
                     jolokia=f"http://127.0.0.1:{ports['jetty']}{jolokia_path}",
                     urls={"openwire": f"tcp://127.0.0.1:{openwire}",
                           "stomp": f"stomp://127.0.0.1:{stomp}", "ws": f"ws://127.0.0.1:{ws}/"})
    d.child = sup.start(f"{Path(argv[0]).name}-dist", argv,
                        role="broker", cwd=home, env={**os.environ, **(env or {})})
    _wait_ports(d, (*set(listeners), "jetty"))
    return d


def _rebind(path: Path, ports: dict[str, int], **shipped: str) -> None:
    """Each listener's address as shipped (``name="host:port"``) -> 127.0.0.1 and its port."""
    text = path.read_text()
    for name, address in shipped.items():
        text = text.replace(address, f"127.0.0.1:{ports[name]}")
    path.write_text(text)


def _wait_ports(d: Distribution, names, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not d.child.alive():
            pytest.fail(f"the distribution exited: {d.child.last_error()}")
        if all(brokers.port_accepts("127.0.0.1", d.ports[n]) for n in names):
            return
        time.sleep(0.2)
    pytest.fail(f"the distribution did not open its ports in {timeout:.0f} s")


ARTEMIS = "2.40.0"


def start_artemis(sup: Supervisor, work: Path, console_password: str,
                  configure=None) -> Distribution:
    """An ActiveMQ Artemis 2.40.0 instance made with its own ``artemis create`` (anonymous
    clients allowed, the console's user ``admin``), listening on 127.0.0.1 only, on free
    ports. ``configure(etc_dir)`` may change it further before the start."""
    home = _unpack(DIST / f"apache-artemis-{ARTEMIS}-bin.tar.gz", work)
    instance = work / "instance"
    made = subprocess.run([str(home / "bin" / "artemis"), "create", "--silent",
                           "--user", "admin", "--password", console_password,
                           "--allow-anonymous", "--host", "127.0.0.1",
                           "--http-host", "127.0.0.1", "--no-autotune", str(instance)],
                          capture_output=True, text=True, timeout=120, check=False)
    if made.returncode != 0:
        pytest.fail(f"artemis create failed: {made.stderr[-1000:]}")
    ports = {p: brokers.free_port() for p in ("artemis", "amqp", "stomp", "hornetq", "mqtt",
                                               "jetty")}
    _rebind(instance / "etc" / "broker.xml", ports, artemis="127.0.0.1:61616",
            amqp="127.0.0.1:5672", stomp="127.0.0.1:61613", hornetq="127.0.0.1:5445",
            mqtt="127.0.0.1:1883")
    _rebind(instance / "etc" / "bootstrap.xml", ports, jetty="127.0.0.1:8161")
    if configure is not None:
        configure(instance / "etc")
    # the one acceptor speaks OpenWire and STOMP over WebSocket; STOMP has its own
    return _launch(sup, instance, ports, "/console/jolokia", ("artemis", "stomp", "artemis"),
                   [str(instance / "bin" / "artemis"), "run"])
