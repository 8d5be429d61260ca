"""The one list of clients. CLI help, tests and sweeps read it; nothing else names a client.

A client speaks clients/contract.md. A *spec* names one on the command line: its name or an
alias, optionally with a transport — ``stompjs``, ``node:tcp``, ``perl``.

A client named after a library (``net-stomp``, ``stomp-py``, ``stompjs``, ``openwire-jms``)
uses that library's public API and documented options only: it measures what the library's
users get. Faster paths (own parsers, overrides, reflection, custom transports) live in
*tuned* entries (``stomp-py-tuned``...) whose code is in files named ``tuned``/``Tuned``; they
are never a default and their name says what they are wherever a figure appears.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from burstbench.paths import CLIENTS, ROOT


def java_cp(module: Path) -> str:
    return f"{module / 'target' / 'classes'}{os.pathsep}{module / 'target' / 'lib'}/*"


# Every Java client, loop and CLI tool runs in a JVM with these options (the Akka bridge's with
# a larger heap at start, BRIDGE_JAVA_OPTS below). The young generation is
# fixed (-Xmn) and the heap touched at start (AlwaysPreTouch, 0.1 s and ~300 MB of RSS a JVM):
# otherwise the parallel collector's adaptive sizing grows eden while messages flow, and each
# fresh 4 KiB page costs a fault of 3-6 us on the bench's VM. How far it grows depended on the
# run, so the JMS consumer and its loop took 0.02-0.36 faults a message in the same rounds
# (28955a4:docs/perf.md, "Kept bodies are page faults"); with these options both take none.
JAVA_OPTS = ("-Xms256m", "-Xmx1g", "-Xmn128m", "-XX:+AlwaysPreTouch", "-XX:+UseParallelGC",
             "-Djava.net.preferIPv4Stack=true")


def java_options_extra() -> list[str]:
    """``BURSTBENCH_JAVA_OPTS``: options added to every JVM of a client (the JMS client, its
    tuned entry, the bridges) and of a broker the bench starts, after the bench's own; a run
    records them (run.json, runtimes.java_options). The test suite sets
    ``-XX:TieredStopAtLevel=1`` (tests/conftest.py): its JVMs live seconds, and C2's compiling
    took a third of their CPU (a broker's start 3.7 CPU-s against 6.1)."""
    return shlex.split(os.environ.get("BURSTBENCH_JAVA_OPTS", ""))


# The bridge's programs (its contract clients and its loops alike) start with 384 MB of old
# generation instead of 128: its producer hands a whole burst to its sender actors' mailboxes
# at once (an 800,000-message burst is ~55 MB held until sent), and with 128 MB the parallel
# collector's ergonomics ran a full collection of 1.3-1.5 s early in every one-CPU round of
# the client's producer (0.5-0.7 s of CPU) and one of ~0.2 s in its consumer (which keeps
# records), none in the loops (smaller mailboxes, no records) (28955a4:docs/perf.md, "The Akka
# bridge's full collections"); 512 MB pre-touched is ~560 MB of RSS a JVM.
BRIDGE_JAVA_OPTS = ("-Xms512m", *JAVA_OPTS[1:])


@dataclass(frozen=True, eq=False)
class Client:
    """One client library, its two programs and what it can do."""

    name: str
    language: str
    aliases: tuple[str, ...]
    library: str
    transports: dict[str, str]  # transport -> broker protocol ("stomp", "ws", "openwire")
    default_transport: str
    producer: tuple[str, ...]
    consumer: tuple[str, ...]
    toolchain: str  # the executable that must be on PATH
    built: Path  # exists once set-up has built/installed the client
    ack_modes: frozenset[str] = frozenset({"auto", "client", "client-individual"})
    # minimal same-library loops for ./bench perf: (send argv, receive argv); they take
    # URL QUEUE COUNT SIZE [SKIP] (send) / URL QUEUE COUNT [SKIP] (receive) and print
    # {"count", "first_ns", "mark_ns" (message SKIP), "last_ns"}, and but for stompjs's send
    # "every" and "at_ns" (when messages 0, EVERY, 2 EVERY... arrived or were handed to send)
    loops: tuple[tuple[str, ...], tuple[str, ...]] | None = None
    notes: str = ""
    extra_env: dict = field(default_factory=dict)
    tuned_of: str | None = None  # a tuned entry names the stock client it speeds up
    timed_bursts: bool = True  # its producer takes --duration (sustained runs)
    # its programs hold several connections, a slot each (clients/contract.md, --connections)
    many_connections: bool = False
    # what else must be there (a runtime the toolchain drives): None, or why it is missing
    requires: Callable[[], str | None] | None = None

    @property
    def tuned(self) -> bool:
        return self.tuned_of is not None

    @property
    def jvm(self) -> bool:
        """Runs in a JVM (the JMS client and the Akka bridge): ./bench perf gives it longer
        samples, a fresh JVM being slower while it compiles."""
        return self.toolchain == "java"

    def argv(self, role: str) -> list[str]:
        argv = list(self.producer if role == "producer" else self.consumer)
        if argv[0] == "java" and "-cp" in argv:  # after the JVM's own options: they win
            at = argv.index("-cp")
            argv[at:at] = java_options_extra()
        return argv

    def missing(self) -> str | None:
        """Why this client cannot run here, or None."""
        if shutil.which(self.toolchain) is None:
            return f"{self.name}: toolchain '{self.toolchain}' not found on PATH"
        if not self.built.exists():
            return f"{self.name}: not installed/built ({self.built} missing): run ./bench setup"
        return self.requires() if self.requires else None


_JAVA_CLIENT = CLIENTS / "java"
_LOOPS = ROOT / "perf" / "loops"
_BRIDGE = ROOT / "akka-bridge"
# The bridge on each actor runtime: akka-bridge's one source tree, built for Pekko by
# pekko-bridge/pom.xml (sources filtered at build time, nothing written twice)
_BRIDGES = (("akka-bridge", "Akka", _BRIDGE), ("pekko-bridge", "Pekko", ROOT / "pekko-bridge"))
# runtime -> the bridge's module, for the studies that run its programs (Pi, request/reply)
BRIDGE_MODULES = {runtime.lower(): module for _name, runtime, module in _BRIDGES}
# runtime -> what it is, as results name it (pekko-bridge/pom.xml pins the Pekko versions)
BRIDGE_RUNTIMES = {"akka": "Akka 2.6.20", "pekko": "Apache Pekko 1.7.0"}
BRIDGE_HTTP = {"akka": "Akka HTTP 10.2.10", "pekko": "Pekko HTTP 1.3.0"}


def _bridge(name: str, runtime: str, module: Path) -> Client:
    """The bridge on one runtime: a JMS consumer or producer feeding an actor pool."""
    cp = java_cp(module)
    main = ("java", *BRIDGE_JAVA_OPTS, "-cp", cp)
    return Client(
        name=name,
        language=runtime.lower(),
        aliases=(runtime.lower(),),
        library=f"{runtime} typed actors + activemq-client",
        transports={"tcp": "openwire"},
        default_transport="tcp",
        producer=(*main, "burstbench.bridge.contract.ContractProducer"),
        consumer=(*main, "burstbench.bridge.contract.ContractConsumer"),
        toolchain="java",
        built=module / "target" / "classes" / "burstbench",
        ack_modes=frozenset({"auto", "client", "client-individual", "dups-ok"}),
        notes="JMS consumer or producer feeding an actor pool",
        timed_bursts=False,
        loops=((*main, "burstbench.bridge.loops.Send"), (*main, "burstbench.bridge.loops.Recv")),
    )


def bridge_http(runtime: str, **settings) -> list[str]:
    """The bridge's HTTP server (``burstbench.bridge.http.App``: POST /bursts, /messages, /pi)
    on ``runtime`` (akka or pekko); ``settings`` are keys of its ``burstbench.bridge``
    configuration (akka-bridge/README.md), given as system properties: ``port=0``,
    ``broker_url="tcp://..."``, ``**{"limits.max-body-bytes": 65536}``."""
    props = [f"-Dburstbench.bridge.{k.replace('_', '-')}={v}" for k, v in settings.items()]
    return ["java", *BRIDGE_JAVA_OPTS, *props, "-cp", java_cp(BRIDGE_MODULES[runtime]),
            "burstbench.bridge.http.App"]


REGISTRY: tuple[Client, ...] = (
    Client(
        name="net-stomp",
        language="perl",
        aliases=("perl",),
        library="Net::Stomp",
        transports={"tcp": "stomp"},
        default_transport="tcp",
        producer=("perl", str(CLIENTS / "perl" / "producer.pl")),
        consumer=("perl", str(CLIENTS / "perl" / "consumer.pl")),
        toolchain="perl",
        built=Path("/usr/share/perl5/Net/Stomp.pm"),
        loops=(("perl", str(_LOOPS / "perl-send.pl")), ("perl", str(_LOOPS / "perl-recv.pl"))),
        many_connections=True,
    ),
    Client(
        name="stomp-py",
        language="python",
        aliases=("python", "py"),
        library="stomp.py",
        transports={"tcp": "stomp"},
        default_transport="tcp",
        producer=(sys.executable, str(CLIENTS / "python" / "producer.py")),
        consumer=(sys.executable, str(CLIENTS / "python" / "consumer.py")),
        toolchain=sys.executable,
        built=ROOT / ".venv",
        loops=(
            (sys.executable, str(_LOOPS / "python-send.py")),
            (sys.executable, str(_LOOPS / "python-recv.py")),
        ),
        many_connections=True,
    ),
    Client(
        name="stompjs",
        language="node",
        aliases=("node", "js"),
        library="@stomp/stompjs",
        transports={"ws": "ws", "tcp": "stomp", "browser": "ws"},
        default_transport="ws",
        producer=("node", str(CLIENTS / "node" / "producer.mjs")),
        consumer=("node", str(CLIENTS / "node" / "consumer.mjs")),
        toolchain="node",
        built=CLIENTS / "node" / "node_modules" / "@stomp" / "stompjs",
        loops=(("node", str(_LOOPS / "node-send.mjs")), ("node", str(_LOOPS / "node-recv.mjs"))),
        many_connections=True,
    ),
    Client(
        name="openwire-jms",
        language="java",
        aliases=("java", "jms"),
        library="activemq-client (JMS)",
        transports={"tcp": "openwire"},
        default_transport="tcp",
        producer=("java", *JAVA_OPTS, "-cp", java_cp(_JAVA_CLIENT), "burstbench.clients.Producer"),
        consumer=("java", *JAVA_OPTS, "-cp", java_cp(_JAVA_CLIENT), "burstbench.clients.Consumer"),
        toolchain="java",
        built=_JAVA_CLIENT / "target" / "classes" / "burstbench",
        ack_modes=frozenset({"auto", "client", "client-individual", "dups-ok"}),
        loops=(
            ("java", *JAVA_OPTS, "-cp", java_cp(_JAVA_CLIENT), "burstbench.clients.loops.Send"),
            ("java", *JAVA_OPTS, "-cp", java_cp(_JAVA_CLIENT), "burstbench.clients.loops.Recv"),
        ),
        many_connections=True,
    ),
    *(_bridge(name, runtime, module) for name, runtime, module in _BRIDGES),
)

# Tuned entries: the same programs with faster paths than the library's public API, loaded
# from files named tuned/Tuned (tests/unit/test_stock_clients.py keeps the stock files clean).
_STOCK = {c.name: c for c in REGISTRY}


def _tuned(stock: str, producer: tuple[str, ...], consumer: tuple[str, ...], notes: str) -> Client:
    s = _STOCK[stock]
    return Client(
        name=f"{stock}-tuned",
        language=s.language,
        aliases=(),
        library=s.library,
        # a transport with programs of its own (the browser) has no tuned twin
        transports={k: v for k, v in s.transports.items() if k != "browser"},
        default_transport=s.default_transport,
        producer=producer,
        consumer=consumer,
        toolchain=s.toolchain,
        built=s.built,
        ack_modes=s.ack_modes,
        notes=notes,
        extra_env=s.extra_env,
        tuned_of=stock,
    )


_PERL = CLIENTS / "perl"
_PY = CLIENTS / "python"
_NODE = CLIENTS / "node"
REGISTRY += (
    _tuned(
        "net-stomp",
        ("perl", "-I", str(_PERL), "-MTuned", str(_PERL / "producer.pl")),
        ("perl", "-I", str(_PERL), "-MTuned", str(_PERL / "consumer.pl")),
        "Net::Stomp's wire path replaced: one-pass frame parser, SEND built as one string, "
        "no getpeername per frame",
    ),
    _tuned(
        "stomp-py",
        (sys.executable, str(_PY / "tuned.py"), str(_PY / "producer.py")),
        (sys.executable, str(_PY / "tuned.py"), str(_PY / "consumer.py")),
        "stomp.py's frame parser replaced, MESSAGE frames handed past the listener "
        "dispatch, blocking socket, cyclic GC off",
    ),
    _tuned(
        "stompjs",
        ("node", str(_NODE / "tuned.mjs"), str(_NODE / "producer.mjs")),
        ("node", str(_NODE / "tuned.mjs"), str(_NODE / "consumer.mjs")),
        "frames written through stompjs's private _transmit, socket writes corked",
    ),
    _tuned(
        "openwire-jms",
        ("java", *JAVA_OPTS, "-cp", java_cp(_JAVA_CLIENT),
         "burstbench.clients.tuned.TunedProducer"),
        ("java", *JAVA_OPTS, "-cp", java_cp(_JAVA_CLIENT),
         "burstbench.clients.tuned.TunedConsumer"),
        "a private tcp transport holding acks and async sends in the socket buffer "
        "(reflection on the session), hand-marshalled properties, loose encoding",
    ),
)

# The four languages of the pair matrix, stock (the bridge joins where a test names it).
LANGUAGE_CLIENTS = ("net-stomp", "stomp-py", "stompjs", "openwire-jms")
BRIDGES = tuple(name for name, _runtime, _module in _BRIDGES)


def _chromium_missing() -> str | None:
    from burstbench.paths import chromium_path

    return None if chromium_path() else (
        "stompjs:browser: no Chromium found (Debian's chromium: ./bench setup)")


_BROWSER_DRIVER = _NODE / "browser" / "driver.mjs"
# A transport whose programs are not the client's own: ``resolve("stompjs:browser")`` gives
# this entry (same name and library, language ``browser``). stompjs in a page of headless
# Chromium (the library's browser bundle from clients/node/node_modules, the Node client's
# version), driven over the DevTools protocol by clients/node/browser/driver.mjs.
TRANSPORT_PROGRAMS: dict[tuple[str, str], Client] = {
    ("stompjs", "browser"): Client(
        name="stompjs",
        language="browser",
        aliases=(),
        library="@stomp/stompjs (browser bundle)",
        transports=_STOCK["stompjs"].transports,
        default_transport="ws",
        producer=("node", str(_BROWSER_DRIVER), "producer"),
        consumer=("node", str(_BROWSER_DRIVER), "consumer"),
        toolchain="node",
        built=_NODE / "node_modules" / "puppeteer-core",
        notes="a page of headless Chromium (one browser per process, or tabs of a shared one)",
        requires=_chromium_missing,
    ),
}
# the browser entries of the pair matrix and the languages axis
BROWSER_CLIENTS = ("stompjs:browser",)


def tuned_clients() -> list[Client]:
    """The tuned entries, each beside the stock client it speeds up."""
    return [c for c in REGISTRY if c.tuned]


class UnknownClient(ValueError):
    pass


@dataclass(frozen=True)
class Resolved:
    """A client with the transport it will use."""

    client: Client
    transport: str

    @property
    def protocol(self) -> str:
        return self.client.transports[self.transport]

    @property
    def label(self) -> str:
        c = self.client
        return c.name if self.transport == c.default_transport else f"{c.name}:{self.transport}"


def names() -> list[str]:
    return [c.name for c in REGISTRY]


def help_text() -> str:
    rows = []
    for c in REGISTRY:
        tr = "|".join(c.transports)
        what = [", ".join(c.aliases), f"transport {tr}"] if c.aliases else [f"transport {tr}"]
        if c.tuned:
            what.insert(0, f"{c.tuned_of} tuned beyond its library's API")
        rows.append(f"{c.name} ({'; '.join(what)})")
    return "; ".join(rows)


def get(name: str) -> Client:
    for c in REGISTRY:
        if name == c.name or name in c.aliases:
            return c
    raise UnknownClient(f"unknown client {name!r} (known: {help_text()})")


def resolve(spec: str) -> Resolved:
    """``NAME[:TRANSPORT]`` -> the client and transport."""
    name, _, transport = spec.strip().partition(":")
    c = get(name)
    transport = transport or c.default_transport
    if transport not in c.transports:
        raise UnknownClient(
            f"client {c.name} has no transport {transport!r} (it has: {', '.join(c.transports)})"
        )
    return Resolved(TRANSPORT_PROGRAMS.get((c.name, transport), c), transport)


@cache
def version(name: str) -> dict:
    """The client's own ``--version`` answer (cached per process)."""
    c = get(name)
    if c.missing():
        return {"client": c.name, "error": c.missing()}
    try:
        out = subprocess.run(
            c.argv("producer") + ["--version"], capture_output=True, text=True, timeout=60,
            check=True
        )
        return json.loads(out.stdout.strip().splitlines()[-1])
    except (subprocess.SubprocessError, ValueError, IndexError, OSError) as e:
        return {"client": c.name, "error": f"--version failed: {e}"}
