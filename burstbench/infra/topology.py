"""Networks of brokers: which brokers a topology has, how they connect, where clients go.

| topology | brokers | network connectors (owner -> peer) | producers | consumers | TTL |
|---|---|---|---|---|---|
| single | a | none | a | a | - |
| forward | a, b | a -> b | a | b | 1 |
| split | a, b | a -> b | a | a, b | 1 |
| chain3 | a, b, c | a -> b, b -> c | a | c | 2 |
| mesh2 | a, b | a <-> b (duplex) | a, b | a, b | 1 |
| mesh3 | a, b, c | a <-> b, a <-> c, b <-> c (duplex) | a, b, c | a, b, c | 1 |

Queues only: ``conduitSubscriptions`` is off so each remote consumer counts for load
balancing; ``decreaseNetworkConsumerPriority`` keeps messages with local consumers first;
``networkTTL`` is the number of broker-to-broker hops a message may make (2 for the chain);
``replayWhenNoConsumers`` lets a message that was forwarded to a broker whose consumer left
go back, so nothing is stranded; the brokers' message audit drops duplicates a replay could
cause. With ``--discovery multicast`` (network namespaces only: the host's own loopback has
no multicast route, and the harness does not touch the host's network) every broker finds
every other, as in the reference blog.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from burstbench.infra.brokers import NetworkConnector

TOPOLOGIES = ("single", "forward", "split", "chain3", "mesh2", "mesh3")
DISCOVERY = ("static", "multicast")
HOSTS = ("loopback", "netns", "netns-ssh")  # or an inventory FILE (.yaml/.yml, or Ansible's)


@dataclass
class Layout:
    name: str
    brokers: list[str]
    links: list[tuple[str, str, bool]] = field(default_factory=list)  # owner, peer, duplex
    ttl: int = 1
    producer_hosts: list[str] = field(default_factory=list)
    consumer_hosts: list[str] = field(default_factory=list)

    def expected_bridges(self, broker: str, discovery: str) -> int:
        """Bridges ``broker``'s own network connectors hold once the network is up."""
        if discovery == "multicast":
            return len(self.brokers) - 1 if len(self.brokers) > 1 else 0
        return sum(1 for owner, _peer, _d in self.links if owner == broker)


def layout(topology: str) -> Layout:
    if topology == "single":
        return Layout("single", ["a"], producer_hosts=["a"], consumer_hosts=["a"])
    if topology == "forward":
        return Layout("forward", ["a", "b"], [("a", "b", False)], 1, ["a"], ["b"])
    if topology == "split":
        return Layout("split", ["a", "b"], [("a", "b", False)], 1, ["a"], ["a", "b"])
    if topology == "chain3":
        return Layout("chain3", ["a", "b", "c"], [("a", "b", False), ("b", "c", False)], 2,
                      ["a"], ["c"])
    if topology == "mesh2":
        return Layout("mesh2", ["a", "b"], [("a", "b", True)], 1, ["a", "b"], ["a", "b"])
    if topology == "mesh3":
        return Layout("mesh3", ["a", "b", "c"],
                      [("a", "b", True), ("a", "c", True), ("b", "c", True)], 1,
                      ["a", "b", "c"], ["a", "b", "c"])
    raise ValueError(f"unknown topology {topology!r} (have: {', '.join(TOPOLOGIES)})")


def check(topology: str, discovery: str, hosts: str) -> None:
    """Raise ValueError with one line for a combination that cannot be built."""
    layout(topology)
    if discovery not in DISCOVERY:
        raise ValueError(f"unknown discovery {discovery!r} (have: {', '.join(DISCOVERY)})")
    if hosts not in HOSTS and not hosts.endswith((".yaml", ".yml")) and not Path(hosts).exists():
        raise ValueError(f"unknown hosts {hosts!r} (have: {', '.join(HOSTS)}, or an inventory "
                         "FILE: burstbench's .yaml or an Ansible inventory)")
    if discovery == "multicast" and hosts != "netns":
        raise ValueError("--discovery multicast needs --hosts netns (the harness does not give "
                         "the host's loopback a multicast route)")
    if discovery == "multicast" and topology == "chain3":
        raise ValueError("chain3 needs --discovery static (multicast connects every broker "
                         "to every other, which is not a chain)")


def connectors(lay: Layout, broker: str, discovery: str, group: str,
               openwire_url) -> list[NetworkConnector]:
    """The network connectors ``broker`` owns. ``openwire_url(name)`` gives a peer's URL."""
    common = {"ttl": lay.ttl, "conduit": False, "decrease_priority": True,
              "suppress_duplicates": True}
    if len(lay.brokers) < 2:
        return []
    if discovery == "multicast":
        return [NetworkConnector(name=f"{broker}-mc", uri=f"multicast://default?group={group}",
                                 duplex=False, **common)]
    # socketBufferSize=0: the bridge's own socket keeps Linux's autotuned buffers too (the
    # accepting side is set in broker/templates/activemq.xml.j2); with ActiveMQ's locked
    # 64 KiB buffers chain3 deadlocked in the kernel (docs/findings-broker.md#activemq-chain3-stall)
    return [NetworkConnector(name=f"{owner}-to-{peer}",
                             uri=f"static:({openwire_url(peer)}?socketBufferSize=0)"
                                 "?maxReconnectDelay=1000",
                             duplex=duplex, **common)
            for owner, peer, duplex in lay.links if owner == broker]
