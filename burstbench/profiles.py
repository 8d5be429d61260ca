"""Sweep profiles (``profiles/*.yaml``): which there are, and one read as data.

The sweep expands a profile's axes into points (``burstbench/sweep.py``); the studies read
their own section of it (``studies.pi``, ``studies.reqreply``). Both come here for the file,
so neither imports the other.

Each axis may declare the chart it gets (``chart: KIND``, one of ``CHART_KINDS``); without
one, a ``grid`` axis gets ``language-pair``, a ``latency-vs-load`` or ``find-max`` axis the
chart of that name, and any other axis ``by-category`` (bars per value). burstbench/plots/charts.py
draws each kind; the axis's name decides nothing.
"""

from __future__ import annotations

import yaml

from burstbench import paths


class ProfileError(ValueError):
    pass


# chart kind -> what it draws (burstbench/plots/charts.py has one drawing per kind)
CHART_KINDS = {
    "by-category": "bars per axis value, receive and send panels",
    "line": "a line per series over a numeric axis, receive and send panels",
    "by-consumers": "line over competing consumers, the blog's two consumer figures",
    "by-size": "line over body size (log), plus receive bandwidth in MiB/s",
    "by-queues": "line over queues (log), plus the broker's open files; the blog's figures",
    "by-persistence": "bars per store, the blog's store ratios",
    "by-topology": "bars per topology, the blog's cross-broker ratio",
    "by-tls": "bars, plain vs TLS",
    "by-broker": "bars per broker (ActiveMQ Classic, Artemis), a series per client pair",
    "latency-by-broker": "p50 and p99 bars per broker at a paced rate, a series per pair",
    "by-tcp-nodelay": "bars, Nagle on vs TCP_NODELAY",
    "stock-vs-tuned": "bars, each stock client beside its -tuned entry",
    "mqperf": "bars by producer-consumer pairs beside mqperf's table",
    "language-pair": "heat map, producer x consumer",
    "latency-vs-load": "latency percentiles over offered load",
    "find-max": "received and latency over offered load, the maximum sustainable rate",
    "browser": "browser tabs vs Node: a flood axis and its -paced axis in one chart",
    "by-connections": "rate, p50/p99, broker memory per connection and connect time over "
                      "concurrent clients",
}


# a latency-vs-load axis offers at least this many loads (fractions of its maximum): fewer,
# joined by a line on a log axis, look like a curve that was never measured
MIN_LOADS = 5
DEFAULT_FRACTIONS = (0.1, 0.25, 0.5, 0.75, 0.9)


def chart_kind(axis: dict | None) -> str:
    """The chart an axis (its profile mapping) gets: its ``chart``, else the default."""
    axis = axis or {}
    if axis.get("chart"):
        return axis["chart"]
    if "grid" in axis:
        return "language-pair"
    if axis.get("kind") in ("latency-vs-load", "find-max"):
        return axis["kind"]
    return "by-category"


def profile_names() -> list[str]:
    return sorted(p.stem for p in paths.PROFILES.glob("*.yaml"))


def load_profile(name: str) -> dict:
    path = paths.PROFILES / f"{name}.yaml"
    if not path.exists():
        raise ProfileError(f"unknown profile {name!r} (have: {', '.join(profile_names())})")
    doc = yaml.safe_load(path.read_text())
    if not isinstance(doc, dict) or not isinstance(doc.get("axes"), dict):
        raise ProfileError(f"{path}: expected a mapping with 'axes'")
    for axis, ax in doc["axes"].items():
        kind = (ax or {}).get("chart")
        if kind is not None and kind not in CHART_KINDS:
            raise ProfileError(f"profile {name}, axis {axis}: unknown chart kind {kind!r} "
                               f"(have: {', '.join(CHART_KINDS)})")
        fractions = (ax or {}).get("fractions", DEFAULT_FRACTIONS)
        if (ax or {}).get("kind") == "latency-vs-load" and len(set(fractions)) < MIN_LOADS:
            raise ProfileError(f"profile {name}, axis {axis}: {len(set(fractions))} offered "
                               f"loads (fractions); a latency-vs-load curve needs at least "
                               f"{MIN_LOADS}")
    doc["name"] = name
    return doc
