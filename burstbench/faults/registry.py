"""Every chaos scenario, once: name -> class. ``./bench chaos``'s scenario list, ``all``'s
order, the report and the tests read it; a new scenario is its module and one line here."""

from __future__ import annotations

from burstbench.faults.base import Scenario
from burstbench.faults.broker_kill import BrokerKill
from burstbench.faults.consumer_kill import ConsumerKill
from burstbench.faults.failover_pair import FailoverPair
from burstbench.faults.link_cut import LinkCut
from burstbench.faults.mesh_partition import MeshPartition
from burstbench.faults.slow_consumer import SlowConsumer
from burstbench.faults.store_full import StoreFull

SCENARIOS: dict[str, type[Scenario]] = {
    cls.name: cls for cls in (BrokerKill, LinkCut, FailoverPair, ConsumerKill, SlowConsumer,
                              StoreFull, MeshPartition)
}


def get(name: str) -> type[Scenario]:
    """The scenario called ``name``; ValueError (one line, the names) for any other."""
    try:
        return SCENARIOS[name]
    except KeyError:
        raise ValueError(f"unknown scenario {name!r} (have: {', '.join(SCENARIOS)}, "
                         "all)") from None
