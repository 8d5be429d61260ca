"""What the brokers' statistics say of their stores over a soak: each broker's store use
over time, consumers counted twice, and the notes the report prints about both."""

from __future__ import annotations


# -- what the stores hold ------------------------------------------------------------------
def store_view(stats: list[dict]) -> dict[str, dict]:
    """Each broker's last stats line, reduced to what its store keeps: ActiveMQ's own queues
    (the DLQ), its journal files and its queue consumers then."""
    last: dict[str, dict] = {}
    for st in stats:
        if st.get("event") == "stats" and "usage" in st:
            last[st["broker"]] = st
    return {b: {"system_queues": st.get("system_queues", {}),
                "journal_files": st.get("journal_files", []),
                "store_bytes": st["usage"]["store_bytes"],
                "subscriptions": st.get("subscriptions", [])}
            for b, st in sorted(last.items())}


def doubled_consumers(stats: list[dict]) -> dict[str, dict]:
    """Connections that held more than one consumer of one queue at some sample (a client
    that subscribed twice: the older consumer's prefetch is dispatched once and then held,
    unacknowledged, for as long as the connection lives): {broker: first such sample}."""
    out: dict[str, dict] = {}
    for st in stats:
        if st.get("event") != "stats" or st.get("broker") in out:
            continue
        per: dict[tuple, list] = {}
        for sub in st.get("subscriptions", []):
            if sub.get("network") or not sub.get("remote"):
                continue
            per.setdefault((sub["queue"], sub["remote"]), []).append(sub)
        for (queue, remote), subs in per.items():
            if len(subs) > 1:
                out[st["broker"]] = {"t_ns": st.get("t_ns"), "queue": queue, "remote": remote,
                                     "consumers": [s["consumer"] for s in subs],
                                     "holding": [s["holding"] for s in subs]}
                break
    return out


def store_notes(view: dict[str, dict], stats: list[dict]) -> list[str]:
    """Notes on what keeps a store from being reclaimed
    (docs/findings-faults.md#soak-store-growth)."""
    notes = []
    for b, v in view.items():
        for q, c in v["system_queues"].items():
            if c.get("size"):
                notes.append(f"{q} on {b} holds {c['size']:,} message(s) that no one consumes "
                             "(each pins its KahaDB journal file, and the acknowledgements "
                             "after it the files that follow)")
        files = v["journal_files"]
        if files:
            notes.append(f"{b}'s journal at the end: {len(files)} file(s), db-{files[0][0]} .. "
                         f"db-{files[-1][0]}")
    for b, d in doubled_consumers(stats).items():
        notes.append(f"{b}: one connection ({d['remote']}) held {len(d['consumers'])} consumers "
                     f"of {d['queue']} (holding {d['holding']} unacknowledged): the client "
                     "subscribed twice")
    return notes
