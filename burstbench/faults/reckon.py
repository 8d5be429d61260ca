"""What a chaos run counts (``reckon``) and the row it produces (``Result``).

A producer is driven through the contract's ``--gate`` in bursts of ``--count`` messages, the
next ``go`` sent only when the previous burst's ``burst`` event came (the last message of a
burst is confirmed by the broker: a STOMP receipt, a synchronous JMS send), so at most one
burst per producer is unconfirmed when a fault strikes. A message counts as *sent* once its
burst was confirmed; it is *lost* if it was sent and no consumer recorded it. Messages of
the one unconfirmed burst may or may not have reached the broker: they are reported as
*unconfirmed* (and how many of them arrived), never as lost. A STOMP producer whose
connection died is replaced by a new process with a new id (``p1`` -> ``p1r1``: a contract
producer always starts at sequence 0) that sends the bursts still owed, the unconfirmed one
included, so every producer id is accounted for on its own.

A consumer killed with SIGKILL, or a STOMP consumer that exits on a dropped connection,
writes no records; had it acknowledged messages, those would be neither redelivered nor
recorded and would look lost. So such a consumer runs with a prefetch of more than twice the
run's messages (a ``client``-mode consumer acknowledges every ceil(prefetch/2), and at
stop): it acknowledges nothing before it dies and the broker redelivers everything it held.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from burstbench.measure import measure

RULE = (
    "sent = messages of bursts the broker confirmed (receipt / synchronous send); lost = sent "
    "and never received; unconfirmed = the at most one burst per producer in flight at the "
    "fault (not counted as sent; a replacement producer with a new id resends it); "
    "duplicates = deliveries beyond the first (redeliveries after a fault)"
)
@dataclass
class ProducerLife:
    """What one producer process was asked to send and what the broker confirmed."""

    ident: str
    count: int
    started: int = 0  # bursts it was told to send ("go" lines)
    confirmed: list[int] = field(default_factory=list)  # bursts with a ``burst`` event
    recorded: list[tuple[str, int, int, int]] = field(default_factory=list)  # its records

    def confirmed_keys(self) -> set[tuple[str, int]]:
        return {(self.ident, s) for b in set(self.confirmed)
                for s in range(b * self.count, (b + 1) * self.count)}

    def attempted_keys(self) -> set[tuple[str, int]]:
        keys = {(self.ident, s) for s in range(self.started * self.count)}
        return keys | {(p, s) for p, s, _b, _t in self.recorded}


@dataclass
class Tally:
    sent: int = 0
    received: int = 0
    lost: int = 0
    duplicates: int = 0
    redelivered: int = 0
    unconfirmed: int = 0
    unconfirmed_received: int = 0
    foreign: int = 0
    body_errors: int = 0
    lost_sample: list[str] = field(default_factory=list)
    by_consumer: dict[str, int] = field(default_factory=dict)  # distinct messages each recorded


def reckon(producers: list[ProducerLife], consumers: dict[str, list[measure.ConsumerRecord]],
           size: int | None = None) -> Tally:
    """Match confirmed sends with every consumer's records (the rule is the module's)."""
    t = Tally()
    confirmed: set = set()
    attempted: set = set()
    for p in producers:
        confirmed |= p.confirmed_keys()
        attempted |= p.attempted_keys()
    unconfirmed = attempted - confirmed
    seen: dict[tuple[str, int], int] = {}
    for name, records in consumers.items():
        mine = set()
        for r in records:
            key = (r.producer, r.seq)
            if key not in attempted:
                t.foreign += 1
                continue
            seen[key] = seen.get(key, 0) + 1
            mine.add(key)
            t.redelivered += r.redelivered
            if not r.body_ok or (size is not None and r.nbytes != size):
                t.body_errors += 1
        t.by_consumer[name] = len(mine)
    t.sent = len(confirmed)
    t.received = len(confirmed & seen.keys())
    t.unconfirmed = len(unconfirmed)
    t.unconfirmed_received = len(unconfirmed & seen.keys())
    t.duplicates = sum(n - 1 for n in seen.values())
    missing = confirmed - seen.keys()
    t.lost = len(missing)
    t.lost_sample = [f"{p}#{s}" for p, s in sorted(missing)[:10]]
    return t


@dataclass
class Result:
    """One scenario with one client: the row of the reliability table and its details."""

    scenario: str
    client: str
    status: str = "ok"  # ok, failed, skipped, n/a
    reason: str = ""
    tally: Tally | None = None
    recovery_s: float | None = None
    fault: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    wall_s: float = 0.0
    dir: str = ""

    @property
    def lost(self) -> int:
        return self.tally.lost if self.tally else 0

    def ok(self) -> bool:
        return self.status in ("ok", "skipped", "n/a")

    def as_dict(self) -> dict:
        d = asdict(self)
        d["tally"] = asdict(self.tally) if self.tally else None
        return d

