"""Raw records in, metrics and accounting out — once, for every client language.

Definitions (docs/measuring.md repeats them):

* Burst throughput = messages of that burst received by all consumers /
  (last receive of the burst − first send of the burst). Send rate = messages sent in the
  burst / (confirmation of the burst's last message − first send), across all producers:
  a client that buffers does not look faster than the wire.
* The first burst is warm-up and excluded when there is more than one burst; the point's
  figure is the median over measured bursts, with min and max beside it.
* Latency = receive time − ``bb_sent_ns`` (the intended send time under ``--rate``), over
  every record of the measured bursts: an HDR histogram per consumer (microseconds, 3
  significant digits), merged, never an average of per-client percentiles (the point's
  ``.hlog`` holds the same samples, one histogram per second of receive time). A percentile is
  given only when at least ``TAIL_SAMPLES`` samples lie at or beyond it (p99 needs 1,000
  samples), else ``None`` ("n/a"). For an unpaced flood the same figures are *time in queue*,
  not latency, and the result files say so (``time_in_queue_ms``).
* Accounting: sent (from producer records), received, lost (sent, never received),
  duplicates (received more than once), out of order (per consumer, producer and queue, a
  sequence number lower than one already seen), foreign (not a bench message, another run's
  nonce, or a key this run never sent), corrupt (a record of a message this run sent whose
  body length, body CRC-32, header CRC-32 or ``bb_sent_ns`` is not what the producer sent).
  The harness decides all of it from the records; a client's own verdict (``body_ok``) is one
  more check, never the only one. Foreign and corrupt records are never throughput or
  latency.
"""

from __future__ import annotations

import math
import zlib
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

PERCENTILES = (50.0, 90.0, 99.0, 99.9, 99.99)
TAIL_SAMPLES = 10  # samples a percentile needs at or beyond it to be reported
HDR_MAX_US = 3_600_000_000  # an hour: anything slower is recorded as an hour


@dataclass
class ConsumerRecord:
    producer: str
    seq: int
    burst: int
    sent_ns: int
    recv_ns: int
    nbytes: int
    body_ok: bool
    redelivered: bool
    dest: str
    nonce: str = ""  # the message's bb_nonce ("-" when it had none; "" for old records)
    crc_header: str = ""  # bb_crc32 as received
    crc_body: str = ""  # CRC-32 the consumer computed over the body it received


def _rows(path: Path):
    """A records file's data lines as lists of fields (comments and blank lines skipped)."""
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            yield line.rstrip("\n").split("\t")


def read_producer_records(path: Path) -> list[tuple[str, int, int, int]]:
    return [(c[0], int(c[1]), int(c[2]), int(c[3])) for c in _rows(path)]


def read_producer_actual(path: Path) -> list[int]:
    """The records' ``actual_ns`` column (when each message was handed to the library);
    empty for records written without it."""
    out = []
    for c in _rows(path):
        if len(c) < 5:
            return []
        out.append(int(c[4]))
    return out


def read_consumer_records(path: Path) -> list[ConsumerRecord]:
    return [
        ConsumerRecord(c[0], int(c[1]), int(c[2]), int(c[3]), int(c[4]), int(c[5]),
                       c[6] == "1", c[7] == "1", c[8] if len(c) > 8 else "", *c[9:12])
        for c in _rows(path)
    ]


def percentile(sorted_values: list[float], p: float) -> float:
    """Nearest-rank percentile of an ascending list (p in 0..100)."""
    if not sorted_values:
        return math.nan
    rank = max(1, math.ceil(p / 100.0 * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


class BodyCrc:
    """The CRC-32 of the contract's body of message ``seq`` at ``size`` bytes, without
    building the body: the body is a 6-digit counter and a constant filler, and
    crc32(filler, start) is affine in ``start`` over GF(2), so a 32x32 bit matrix (as four
    byte tables) turns crc32(counter) into crc32(counter + filler)."""

    def __init__(self, size: int):
        self.size = size
        self.tables = None
        if size <= 6:
            return
        filler = b"x" * (size - 6)
        self.f0 = zlib.crc32(filler, 0)
        cols = [zlib.crc32(filler, 1 << i) ^ self.f0 for i in range(32)]
        self.tables = []
        for k in range(4):
            table = []
            for v in range(256):
                x = 0
                for j in range(8):
                    if v >> j & 1:
                        x ^= cols[8 * k + j]
                table.append(x)
            self.tables.append(table)

    def __call__(self, seq: int) -> int:
        counter = b"%06d" % (seq % 1000000)
        if self.tables is None:
            return zlib.crc32(counter[: self.size])
        c = zlib.crc32(counter)
        t0, t1, t2, t3 = self.tables
        return self.f0 ^ t0[c & 255] ^ t1[c >> 8 & 255] ^ t2[c >> 16 & 255] ^ t3[c >> 24]


@dataclass
class Accounting:
    sent: int = 0
    received: int = 0
    lost: int = 0
    duplicates: int = 0
    out_of_order: int = 0
    foreign: int = 0
    redelivered: int = 0
    corrupt: int = 0
    body_errors: int = 0  # (kept for readers of older results: the same as corrupt)
    lost_sample: list[str] = field(default_factory=list)
    foreign_kinds: dict = field(default_factory=dict)  # why: reported, nonce, never sent
    corrupt_kinds: dict = field(default_factory=dict)  # length, crc32, crc32_header, sent_ns...
    corrupt_sample: list[str] = field(default_factory=list)

    def ok(self, expect_loss: bool = False) -> bool:
        return (expect_loss or self.lost == 0) and self.corrupt == 0

    def as_dict(self) -> dict:
        return asdict(self)


def verdict(r: ConsumerRecord, sent_ns: dict, nonce: str | None, size: int | None,
            crc: BodyCrc | None) -> tuple[str, str]:
    """("ok" | "foreign" | "corrupt", why) for one record, from the harness's own knowledge:
    the run's nonce, the keys and send times the producers recorded, and the body the
    contract defines for (seq, size)."""
    if nonce is not None and r.nonce != nonce:
        return "foreign", "another run's nonce" if r.nonce not in ("", "-") else "no nonce"
    key = (r.producer, r.seq)
    if key not in sent_ns:
        return "foreign", "never sent"
    if size is not None and r.nbytes != size:
        return "corrupt", "length"
    if crc is not None:
        want = f"{crc(r.seq):08x}"
        if r.crc_body != want:
            return "corrupt", "crc32" if r.crc_body not in ("", "-") else "no crc32"
        if r.crc_header != want:
            return "corrupt", "crc32_header"
    if r.sent_ns != sent_ns[key]:
        return "corrupt", "sent_ns"
    if not r.body_ok:
        return "corrupt", "counter"
    return "ok", ""


def clean(
    sent: list[tuple[str, int, int, int]], records: list[ConsumerRecord],
    nonce: str | None = None, size: int | None = None,
) -> list[ConsumerRecord]:
    """The records that may count as throughput and latency (see ``verdict``)."""
    sent_ns = {(p, s): t for p, s, _b, t in sent}
    crc = BodyCrc(size) if nonce is not None and size is not None else None
    return [r for r in records if verdict(r, sent_ns, nonce, size, crc)[0] == "ok"]


def account(
    sent: list[tuple[str, int, int, int]],
    received_by_consumer: dict[str, list[ConsumerRecord]],
    foreign_reported: int = 0,
    size: int | None = None,
    nonce: str | None = None,
    kept: list | None = None,
) -> Accounting:
    """Match every message sent with what every consumer received. With the run's
    ``nonce`` (a real point) every record must carry it and the body's CRC-32; without one
    (records from before the nonce) the checks that need them are left out. ``kept``, when
    given, receives the records judged ok (what ``clean`` returns), so that a caller does
    not judge every record twice."""
    a = Accounting(foreign=foreign_reported)
    foreign: Counter = Counter({"reported by the clients": foreign_reported}
                               if foreign_reported else {})
    corrupt: Counter = Counter()
    sent_ns = {(p, s): t for p, s, _b, t in sent}
    crc = BodyCrc(size) if nonce is not None and size is not None else None
    a.sent = len(sent_ns)
    seen: Counter = Counter()
    for records in received_by_consumer.values():
        last: dict[tuple[str, str], int] = {}
        # order of arrival, not of the file: a client may record after an actor pool
        for r in sorted(records, key=lambda rec: rec.recv_ns):
            key = (r.producer, r.seq)
            kind, why = verdict(r, sent_ns, nonce, size, crc)
            if kind == "foreign":
                a.foreign += 1
                foreign[why] += 1
                continue
            if kind == "corrupt":
                a.corrupt += 1
                corrupt[why] += 1
                if len(a.corrupt_sample) < 10:
                    a.corrupt_sample.append(f"{r.producer}#{r.seq} ({why})")
                continue
            seen[key] += 1
            if kept is not None:
                kept.append(r)
            a.redelivered += r.redelivered
            stream = (r.producer, r.dest)
            prev = last.get(stream)
            if prev is not None and r.seq < prev:
                a.out_of_order += 1
            else:
                last[stream] = r.seq
    a.received = len(seen)
    a.duplicates = sum(n - 1 for n in seen.values())
    missing = sent_ns.keys() - seen.keys()
    a.lost = len(missing)
    a.body_errors = a.corrupt
    a.foreign_kinds, a.corrupt_kinds = dict(foreign), dict(corrupt)
    a.lost_sample = [f"{p}#{s}" for p, s in sorted(missing)[:10]]
    return a


@dataclass
class BurstFigures:
    burst: int
    sent: int
    received: int
    send_msgs_per_s: float
    recv_msgs_per_s: float
    seconds: float


def per_burst(
    sent: list[tuple[str, int, int, int]], received: list[ConsumerRecord],
    confirmed: dict[int, int] | None = None,
) -> list[BurstFigures]:
    """Per-burst figures. ``confirmed[b]``: when the broker had confirmed burst b to every
    producer (the harness reads each producer's ``burst`` line); the send rate ends there
    rather than at the last send call, which for a client that buffers is not the wire."""
    by_burst_sent: dict[int, list[int]] = defaultdict(list)
    for _p, _s, b, t in sent:
        by_burst_sent[b].append(t)
    recv_last: dict[int, int] = {}
    recv_n: Counter = Counter()
    sent_keys = {(p, s) for p, s, _b, _t in sent}
    seen: set[tuple[str, int]] = set()
    for r in received:
        key = (r.producer, r.seq)
        if key in seen or key not in sent_keys:
            continue  # a duplicate, or a message this run never sent, is not throughput
        seen.add(key)
        recv_n[r.burst] += 1
        if r.recv_ns > recv_last.get(r.burst, 0):
            recv_last[r.burst] = r.recv_ns
    out = []
    for b in sorted(by_burst_sent):
        ts = by_burst_sent[b]
        first, last = min(ts), max(ts)
        if confirmed and confirmed.get(b, 0) > last:
            last = confirmed[b]
        send_rate = len(ts) / ((last - first) / 1e9) if last > first else math.nan
        end = recv_last.get(b)
        secs = (end - first) / 1e9 if end and end > first else math.nan
        recv_rate = recv_n[b] / secs if secs and not math.isnan(secs) else math.nan
        out.append(BurstFigures(b, len(ts), recv_n[b], send_rate, recv_rate, secs))
    return out


def measured(bursts: list[BurstFigures]) -> list[BurstFigures]:
    """Bursts that count: all but the first (warm-up) when there are several."""
    return bursts[1:] if len(bursts) > 1 else bursts


def percentile_key(p: float) -> str:
    return f"p{p:g}".replace(".", "_")


def samples_needed(p: float) -> int:
    """How many samples a percentile needs so that TAIL_SAMPLES lie at or beyond it."""
    return math.ceil(round(TAIL_SAMPLES / (1 - p / 100), 6))


def _hdr():
    from hdrh.histogram import HdrHistogram

    return HdrHistogram(1, HDR_MAX_US, 3)


def _hdr_us(ns: int) -> int:
    """A latency in ns as the histograms record it: whole µs, clamped to 1 µs .. an hour."""
    return min(max(1, ns // 1000), HDR_MAX_US)


def latency_ms(received: list[ConsumerRecord] | dict[str, list[ConsumerRecord]],
               bursts: set[int], latency_records: list | None = None) -> dict:
    """Percentiles of receive − sent over the measured bursts, in ms (see the module text).
    ``received`` is one list, or a list per consumer (each its own histogram, then merged).
    ``latency_records``, when given, receives the records the figures are over (what the
    point's interval log holds, ``interval_histograms``)."""
    by_consumer = received if isinstance(received, dict) else {"all": received}
    merged = _hdr()
    n, total, lo, hi = 0, 0, math.inf, -math.inf
    for records in by_consumer.values():
        h = _hdr()
        for r in records:
            if r.burst not in bursts:
                continue
            ns = r.recv_ns - r.sent_ns
            n, total, lo, hi = n + 1, total + ns, min(lo, ns), max(hi, ns)
            h.record_value(_hdr_us(ns))
            if latency_records is not None:
                latency_records.append(r)
        merged.add(h)
    out: dict = {}
    for p in PERCENTILES:
        ok = n >= samples_needed(p)
        out[percentile_key(p)] = merged.get_value_at_percentile(p) / 1000 if ok else None
    out["max"] = hi / 1e6 if n else None
    out["min"] = lo / 1e6 if n else None
    out["mean"] = total / n / 1e6 if n else None
    out["samples"] = n
    out["samples_needed"] = {percentile_key(p): samples_needed(p) for p in PERCENTILES}
    out["histogram"] = "HdrHistogram, 1 us .. 1 h, 3 significant digits, merged per consumer"
    return out


def interval_histograms(records: list[ConsumerRecord], interval_ns: int = 1_000_000_000):
    """The records' receive − sent (recorded as ``latency_ms`` records it) in one HDR
    histogram per ``interval_ns`` of receive time, counted from the earliest ``recv_ns``:
    ``[(start_ns, histogram)]`` in time order, an interval in which nothing was received (a
    pause between bursts) left out."""
    if not records:
        return []
    t0 = min(r.recv_ns for r in records)
    hists: dict = defaultdict(_hdr)
    for r in records:
        hists[(r.recv_ns - t0) // interval_ns].record_value(_hdr_us(r.recv_ns - r.sent_ns))
    return [(t0 + i * interval_ns, hists[i]) for i in sorted(hists)]


_COUNTERS = ("enqueued", "dequeued", "dispatched", "inflight", "expired", "size")


def _per_queue(counts: dict[str, dict], key: str, most: int = 6) -> str:
    """``a bb.q0 enqueued 9,000, a bb.q1 enqueued 10,000``: where the messages went."""
    rows = [f"{name} {q} {key} {int(v.get(key, 0)):,}" for name, b in sorted(counts.items())
            for q, v in sorted(b.get("queues", {}).items())]
    return ", ".join(rows[:most]) + (" ..." if len(rows) > most else "") or "no queue"


def witness(counts: dict[str, dict], acc: Accounting) -> dict:
    """The brokers' own counters at the end of a point beside the clients' accounting.

    ``counts``: per broker, the run's queues with ActiveMQ's destination statistics. Each
    message a producer sent is enqueued once where it was sent and once more on every broker
    a network bridge forwards it to; each delivery the consumers acknowledged is dequeued
    once, and so is each message a bridge took away. So, over all brokers:

        forwarded in  = enqueued − sent
        forwarded out = dequeued − delivered (received + duplicates + foreign + corrupt)

    and the two must be equal (0 on one broker), with nothing left in a queue or in flight.
    Anything else is a disagreement the topology does not explain, named in ``problems``.
    """
    per_broker = {}
    problems = []
    for name, b in sorted(counts.items()):
        if "error" in b:
            problems.append(f"{name}: counters unreadable ({b['error']})")
            continue
        tot = {k: sum(int(q.get(k, 0)) for q in b.get("queues", {}).values()) for k in _COUNTERS}
        tot["bridges_forwarded"] = sum(int(x.get("dequeued", 0)) for x in b.get("bridges", []))
        per_broker[name] = tot
        for q, v in sorted(b.get("queues", {}).items()):
            if v.get("size"):
                problems.append(f"{name} still holds {v['size']:,} message(s) in {q}")
            if v.get("inflight"):
                problems.append(f"{name} has {v['inflight']:,} message(s) in flight "
                                f"(dispatched, never acknowledged) in {q}")
            if v.get("expired"):
                problems.append(f"{name} expired {v['expired']:,} message(s) in {q} (its own "
                                "expiry: the run's messages carry none)")
            if v.get("killed"):
                problems.append(f"{name} sent {v['killed']:,} message(s) of {q} to its "
                                "dead-letter address")
        for addr, a in sorted(b.get("addresses", {}).items()):  # Artemis's, where read
            if a.get("unrouted"):
                problems.append(f"{name} dropped {a['unrouted']:,} message(s) sent to address "
                                f"{addr} ({a.get('routing') or '?'}): no queue was bound to it "
                                "when they came")
            if a.get("routed") and "multicast" in a.get("routing", ""):
                problems.append(f"{name} routed {a['routed']:,} message(s) sent to address "
                                f"{addr} (multicast) into a queue per subscription "
                                f"({a.get('queues', 0)} left now): copies, not one queue the "
                                "consumers compete on (a /queue/ name the broker does not map "
                                "to anycast)")
    total = {k: sum(t[k] for t in per_broker.values()) for k in _COUNTERS}
    delivered = acc.received + acc.duplicates + acc.foreign + acc.corrupt
    fwd_in = total["enqueued"] - acc.sent
    fwd_out = total["dequeued"] - delivered
    if per_broker:
        if fwd_in < 0:
            problems.append(f"the brokers enqueued {total['enqueued']:,} messages but the "
                            f"producers' records say {acc.sent:,} were sent: "
                            f"{-fwd_in:,} never reached a queue of the run ("
                            + _per_queue(counts, "enqueued") + ")")
        elif fwd_in != fwd_out:
            problems.append(
                f"the brokers enqueued {total['enqueued']:,} and dequeued "
                f"{total['dequeued']:,}; with {acc.sent:,} sent and {delivered:,} delivered to "
                f"the bench's consumers that is {fwd_in:,} forwarded in but {fwd_out:,} "
                "forwarded out"
                + (" (messages taken by someone else?)" if fwd_out > fwd_in else
                   " (messages enqueued that no producer of the run sent?)"))
        if len(per_broker) == 1 and fwd_in > 0 and not problems:
            problems.append(f"one broker, yet {fwd_in:,} more enqueued than sent: copies ("
                            + _per_queue(counts, "enqueued") + ")")
    return {
        "brokers": per_broker,
        "total": total,
        "delivered": delivered,
        "forwarded_in": fwd_in,
        "forwarded_out": fwd_out,
        "agrees": per_broker != {} and not problems,
        "problems": problems,
    }
