"""What one chaos scenario runs with (``ChaosSpec``), and the two ways it can end early:
``Skip`` (it cannot run here or does not apply to the client) and ``ChaosFailed`` (it could
not be carried out). A scenario's own defaults come from its class (``Scenario.make_spec``)."""

from __future__ import annotations

from dataclasses import dataclass

from burstbench import clients, paths

NS = 1_000_000_000


class ChaosFailed(RuntimeError):
    """The scenario could not be carried out (a process failed, a wait timed out)."""


class Skip(Exception):
    """The scenario cannot run here or does not apply to the client; the message says why."""

    def __init__(self, reason: str, status: str = "skipped"):
        super().__init__(reason)
        self.status = status


@dataclass
class ChaosSpec:
    """One scenario with one client. Zero means the default (the scenario's, filled in by
    ``Scenario.make_spec``, else the one below)."""

    scenario: str
    client: str = ""  # stomp-py
    count: int = 500  # messages per burst: small, so little is in flight at the fault
    bursts: int = 12  # per producer
    size: int = 0  # body bytes: 6
    producers: int = 1
    consumers: int = 0  # 2
    prefetch: int = 0  # 100
    cut_s: float = 10.0  # link-cut: how long the link stays down
    stall_timeout: float = 60.0  # no progress at all for this long: stuck (a deadlock)
    ready_timeout: float = 60.0

    def __post_init__(self) -> None:
        self.client = self.client or "stomp-py"
        self.size = self.size or 6
        self.consumers = self.consumers or 2
        self.prefetch = self.prefetch or 100

    def validate(self, min_consumers: int = 1, netns: bool = False) -> clients.Resolved:
        """The resolved client; ValueError for bad input, Skip when it cannot run here.
        ``min_consumers`` and ``netns`` (needs network namespaces) are the scenario's."""
        for name, v, low in (("count", self.count, 1), ("bursts", self.bursts, 4),
                             ("producers", self.producers, 1), ("size", self.size, 1),
                             ("prefetch", self.prefetch, 1)):
            if v < low:
                raise ValueError(f"{name} must be >= {low}: {v}")
        if self.consumers < min_consumers:
            raise ValueError(f"{self.scenario} needs at least {min_consumers} consumers: "
                             f"{self.consumers}")
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
        if netns:
            from burstbench.infra import netns as ns

            why = ns.available()
            if why:
                raise Skip(f"{self.scenario} needs network namespaces: {why}")
        return r

    def total(self) -> int:
        """Messages the producers are to get confirmed, all together."""
        return self.producers * self.bursts * self.count
