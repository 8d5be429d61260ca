"""What a broker is, before it runs: the kinds and versions the bench starts, the stores each
takes, and ``BrokerSpec``, everything one broker should be (checked when made). Starting
and rendering it is burstbench/infra/brokers.py's."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from burstbench import paths

ACTIVEMQ_VERSION = "6.1.7"
ARTEMIS_VERSION = "2.44.0"
KINDS = ("classic", "artemis")
PRODUCTS = {"classic": "ActiveMQ Classic", "artemis": "ActiveMQ Artemis"}
# the Classic versions the bench can start: the launcher's Maven module and the transports
# that version has here (the WebSocket one needs activemq-http, not served for 6.2.0-6.3.1)
CLASSIC_VERSIONS = {
    ACTIVEMQ_VERSION: {"module": "", "protocols": ("openwire", "stomp", "ws")},
    "5.18.6": {"module": "classic-5.18", "protocols": ("openwire", "stomp", "ws")},
    "6.3.1": {"module": "classic-6.3", "protocols": ("openwire", "stomp")},
}
# ``--broker`` values: a kind, or classic:VERSION
BROKERS = ("classic", "artemis", *(f"classic:{v}" for v in CLASSIC_VERSIONS))


def parse_broker(text: str) -> tuple[str, str]:
    """``classic``, ``classic:5.18.6``, ``artemis`` -> (kind, version); BrokerError (one line)
    naming the choices otherwise."""
    kind, _, version = text.partition(":")
    if kind == "classic" and (not version or version in CLASSIC_VERSIONS):
        return kind, version or ACTIVEMQ_VERSION
    if kind == "artemis" and version in ("", ARTEMIS_VERSION):
        return kind, ARTEMIS_VERSION
    raise BrokerError(f"unknown broker {text!r} (have: {', '.join(BROKERS)})")


def protocols_of(kind: str, version: str) -> tuple[str, ...]:
    """The protocols a broker the bench starts serves: (openwire, stomp, ws) but where a
    version lacks one."""
    if kind == "classic":
        return CLASSIC_VERSIONS[version]["protocols"]
    return ("openwire", "stomp", "ws")


def launcher_dirs(kind: str, version: str) -> tuple[Path, Path]:
    """(classes, lib) of the launcher that runs ``kind`` at ``version``."""
    if kind == "artemis":
        return paths.ARTEMIS_CLASSES, paths.ARTEMIS_LIB
    module = CLASSIC_VERSIONS[version]["module"]
    if not module:
        return paths.BROKER_CLASSES, paths.BROKER_LIB
    target = paths.BROKER_DIR / module / "target"
    return target / "classes", target / "lib"
PERSISTENCE = ("none", "kahadb", "kahadb-nosync", "journal", "journal-nosync", "jdbc-derby",
               "jdbc-postgres", "jdbc-mariadb")
# the stores each kind has: KahaDB is Classic's, the journal Artemis's; Artemis's JDBC store
# knows PostgreSQL and MySQL/MariaDB (Derby only embedded in a test of its own)
STORES = {"classic": ("none", "kahadb", "kahadb-nosync", "jdbc-derby", "jdbc-postgres",
                      "jdbc-mariadb"),
          "artemis": ("none", "journal", "journal-nosync", "jdbc-postgres", "jdbc-mariadb")}


# a STOMP MESSAGE frame's bytes beside its body, about: the bench's headers (bb_id, bb_seq,
# bb_sent_ns, bb_nonce, bb_crc), the broker's (destination, message-id, subscription,
# timestamp, expires, priority, persistent, content-length) and the frame's own
STOMP_FRAME_OVERHEAD = 512


def stomp_window(product: str, ack: str, prefetch: int, size: int,
                 transacted: bool = False) -> int | None:
    """The ``consumer-window-size`` a STOMP consumer sends on ``product``, or None where
    ``activemq.prefetchSize`` means what it says (messages: ActiveMQ Classic).

    ActiveMQ Artemis reads both headers as a window in *bytes* and returns a consumer's credits
    only when it acknowledges: with ``ack:auto`` any window stalls the subscription after its
    first window's worth (Artemis 2.44.0's StompSession acknowledges auto deliveries without
    giving credits back), so auto gets -1, Artemis's own default for auto (no limit); the
    client modes get ``prefetch`` frames' worth of bytes, so a consumer still holds about
    ``prefetch`` messages, as on Classic. A transacted consumer's acknowledgements give no
    window back either (a stomp.py consumer acknowledging inside transactions stopped at 1,328
    of 3,000), so it gets -1 too."""
    if product != PRODUCTS["artemis"]:
        return None
    if ack == "auto" or transacted:
        return -1
    return prefetch * (size + STOMP_FRAME_OVERHEAD)


def check_store(kind: str, persistence: str) -> None:
    """Raise BrokerError (one line) when broker ``kind`` has no store ``persistence``."""
    if persistence not in STORES[kind]:
        twin = {"kahadb": "journal", "kahadb-nosync": "journal-nosync"}.get(persistence)
        hint = (f" (Artemis's own store is {twin})" if kind == "artemis" and twin else
                " (the journal is Artemis's store; Classic's is kahadb)"
                if persistence.startswith("journal") else "")
        raise BrokerError(f"{PRODUCTS[kind]} has no store {persistence!r}{hint}; it has: "
                          f"{', '.join(STORES[kind])}")


class BrokerError(RuntimeError):
    """A broker could not be configured or started."""


@dataclass
class NetworkConnector:
    name: str
    uri: str
    duplex: bool = False
    ttl: int = 1
    conduit: bool = False
    decrease_priority: bool = True
    suppress_duplicates: bool = True
    prefetch: int = 1000
    user: str = ""
    password: str = ""


@dataclass
class BrokerSpec:
    """What a broker should be. Ports of 0 are chosen free at start."""

    name: str = "bench"
    host: str = "127.0.0.1"
    kind: str = "classic"  # classic or artemis (KINDS)
    version: str = ""  # Classic: a key of CLASSIC_VERSIONS ("" = ACTIVEMQ_VERSION)
    persistence: str = "none"
    data_dir: Path | None = None
    openwire_port: int = 0
    stomp_port: int = 0
    ws_port: int = 0
    producer_flow_control: bool = True
    # queue dispatch in the thread that wakes the queue (a send, an ack) instead of a pooled
    # task: ActiveMQ's policyEntry optimizedDispatch
    optimized_dispatch: bool = False
    # TCP_NODELAY on the sockets of the OpenWire and STOMP connectors (transport.tcpNoDelay);
    # off as ActiveMQ ships it (the option is then not written at all)
    tcp_nodelay: bool = False
    # the STOMP and OpenWire connectors' transport (Classic): "tcp", a thread per connection as
    # ActiveMQ ships them, or "nio", a selector and a pool serving many connections
    transport: str = "tcp"
    cpus: str = ""  # a taskset CPU list the broker runs on ("" = wherever the kernel likes)
    queue_prefetch: int = 1000
    queue_memory_limit: str = "64mb"
    max_page_size: int = 200
    memory_limit: str = "512mb"
    store_limit: str = "8gb"
    temp_limit: str = "4gb"
    heap: str = "1g"
    network_connectors: list[NetworkConnector] = field(default_factory=list)
    users: list[dict] = field(default_factory=list)
    jdbc: dict | None = None
    tls: object | None = None  # burstbench.infra.tls.Material: TLS-only connectors
    discovery_uri: str | None = None  # advertise the OpenWire connector (multicast)
    # Artemis: the other nodes of its cluster, {"name", "uri"} each (their OpenWire acceptor,
    # which takes Artemis's core protocol too), and the cluster's user and password
    cluster_peers: list[dict] = field(default_factory=list)
    cluster_password: str = ""
    # KahaDB shared-store master/slave: how often a broker waiting for the store's lock
    # retries (ms); 0 keeps ActiveMQ's default locker (no <locker> element)
    lock_acquire_ms: int = 0
    # more <kahaDB> attributes, e.g. journalMaxFileLength, cleanupInterval (a small store
    # whose journal files are reclaimed soon after their messages are consumed)
    kahadb_attrs: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise BrokerError(f"unknown broker kind {self.kind!r} (have: {', '.join(KINDS)})")
        self.version = parse_broker(f"{self.kind}:{self.version}" if self.version
                                    else self.kind)[1]
        if self.persistence not in PERSISTENCE:
            raise BrokerError(f"unknown persistence {self.persistence!r} "
                              f"(expected one of {', '.join(PERSISTENCE)})")
        check_store(self.kind, self.persistence)
