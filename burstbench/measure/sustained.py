"""Sustained, open-loop runs: a fixed duration at a target rate, figures per time window.

The OpenMessaging Benchmark's method beside the blog's bursts. Every producer gets one
``go`` and sends for ``warmup + duration`` seconds on its own schedule (message *i* due at
``t0 + i / rate``, stamped with that intended time; ``--rate max`` floods until the time is
up), never waiting for a consumer; consumers are never gated, so a backlog may build. Once a
second the harness reads the brokers' own counters (the launcher's ``stats`` line), which
give the backlog. Afterwards the records are cut into windows of 1 s and 10 s from the first
intended send time:

* offered msg/s: messages whose intended send time falls in the window;
* send msg/s: messages handed to the client library in the window (the records' ``actual_ns``);
* receive msg/s: messages received in the window (clean records only, as everywhere);
* backlog: messages the brokers hold (queue size, summed over brokers and queues) at the
  last reading inside the window;
* latency (paced) or time in queue (a flood): receive − intended send time of the messages
  received in the window, HDR percentiles with the n/a rule of ``measure.latency_ms``.

Windows that start before the warm-up ends are kept but marked; the steady state is every
whole window after it, and its figures are the median with min and max over those windows.
The run's latency percentiles are over every message whose intended send time lies in the
measured period (after the warm-up).
"""

from __future__ import annotations

import math
import statistics
import time
from bisect import bisect_left

from burstbench import stats
from burstbench.errors import PointFailed
from burstbench.infra.sampling import CpuWindow
from burstbench.measure import measure

WIDTHS = (1.0, 10.0)  # window widths in seconds
# seconds between two readings of the brokers' counters: two per 1 s window, so that a reading
# that slips (a busy machine answers late) still leaves one inside every window
SAMPLE_EVERY = 0.5
# a run keeps up when, over the measured period, receive reaches this share of send and the
# backlog grows by less than the messages of this many seconds at the offered rate
KEEP_UP_RECV_SHARE = 0.98
KEEP_UP_BACKLOG_S = 1.0


def parse_rate(text: str) -> float:
    """``--rate`` text: a number of msg/s per producer, or ``max`` (0: as fast as possible)."""
    if text.strip().lower() == "max":
        return 0.0
    v = float(text)
    if v < 0 or math.isnan(v):
        raise ValueError(f"rate must be >= 0 or max: {text}")
    return v


def parse_seconds(text: str) -> float:
    """``60``, ``60s``, ``2m`` or ``500ms`` as seconds."""
    t = text.strip().lower()
    for suffix, scale in (("ms", 1e-3), ("s", 1.0), ("m", 60.0)):
        if t.endswith(suffix):
            return float(t[: -len(suffix)]) * scale
    return float(t)


def drive(runner, sup, clients) -> None:
    """One timed burst: every producer sends for warm-up + duration, the consumers drain,
    the brokers' counters are read twice a second throughout."""
    spec = runner.spec
    out = runner.outcome
    producers, received, note = clients.producers, clients.received, clients.note
    everyone = clients.everyone
    confirmations: dict[str, dict] = {}  # by producer slot (a process may hold several)
    names = {p.name for p in producers}
    slots = len(clients.of(producers))

    def on_event(child, ev):
        if child.name in names and ev.get("event") == "burst":
            confirmations[clients.slot(child, ev)] = ev
        else:
            note(child, ev)

    def sample():
        asked = time.time_ns()
        snap = runner._witness(sup, "sample", on_event, keep=False)
        answered = time.time_ns()
        # the reading's time: the brokers' own, when it lies between asking and the answer (a
        # broker on this machine), else the answer's (a busy machine can take a while to answer)
        said = [b.get("t_ns") for b in snap.values() if isinstance(b.get("t_ns"), int)]
        t_ns = max(said) if said and all(asked <= t <= answered for t in said) else answered
        tot = {"t_ns": t_ns, "size": 0, "inflight": 0, "enqueued": 0, "dequeued": 0}
        for b in snap.values():
            for q in b.get("queues", {}).values():
                for k in ("size", "inflight", "enqueued", "dequeued"):
                    tot[k] += int(q.get(k, 0))
        out.samples.append(tot)

    span = spec.warmup + spec.duration
    window = w0 = None
    go = time.monotonic()
    for p in producers:
        p.send("go")
    next_sample = go + SAMPLE_EVERY
    deadline = go + span * 2 + 60
    while len(confirmations) < slots:
        now = time.monotonic()
        if now > deadline:
            raise PointFailed(
                f"producers did not finish {span:g} s of sending within {deadline - go:.0f} s"
            )
        if w0 is None and now - go >= spec.warmup:  # the measured period starts
            window, w0 = CpuWindow(everyone), now
        item = sup.wait_event(max(0.0, min(next_sample - now, 0.25)))
        if item is not None:
            on_event(*item)
        if time.monotonic() >= next_sample:
            sample()
            next_sample += SAMPLE_EVERY
    out.confirmed[0] = max(e["_rx_ns"] for e in confirmations.values())
    if w0 is not None and time.monotonic() > w0:
        out.burst_cpu.append(window.shares(0, time.monotonic() - w0))
    target = sum(int(e["sent"]) for e in confirmations.values())
    runner.progress(f"sent {target:,} in {span:g} s; draining")
    # drain, still reading the counters twice a second (the backlog's way down is a figure too)
    last_total, last_change = sum(received.values()), time.monotonic()
    while sum(received.values()) < target:
        item = sup.wait_event(max(0.0, min(next_sample - time.monotonic(), 0.5)))
        if item is not None:
            on_event(*item)
        if time.monotonic() >= next_sample:
            sample()
            next_sample += SAMPLE_EVERY
        total = sum(received.values())
        if total != last_total:
            last_total, last_change = total, time.monotonic()
        elif time.monotonic() - last_change > spec.drain_timeout:
            out.errors.append(
                f"drain: {total} of {target} messages received, no progress for "
                f"{spec.drain_timeout:.0f} s{runner._stall_counts(sup, note)}"
            )
            return
    runner._witness(sup, "burst 0", note)
    runner.progress(f"received {sum(received.values()):,}/{target:,}")


def _rate_spread(values: list[float]) -> dict:
    s = stats.spread(values)
    return {"median": s["median"], "min": s["min"], "max": s["max"], "windows": s["n"]}


def _hops(sent, actual, measured: dict) -> dict:
    """Where the time goes, per message of the measured period: the producer's lateness
    (handed to its library − intended time: its pacing loop, its scheduling) and the rest
    (received − handed over: the library, both sockets, the broker, the consumer). Nearest-
    rank percentiles in ms; the latency figures themselves stay the HDR ones."""
    when = {(p, s): a for (p, s, _b, _t), a in zip(sent, actual)}
    late, transit = [], []
    for recs in measured.values():
        for r in recs:
            a = when.get((r.producer, r.seq))
            if a is not None:
                late.append((a - r.sent_ns) / 1e6)
                transit.append((r.recv_ns - a) / 1e6)

    def pcts(v: list[float]) -> dict:
        v.sort()
        out = {
            measure.percentile_key(p): round(measure.percentile(v, p), 3)
            for p in (50.0, 90.0, 99.0, 99.9)
        }
        return {**out, "max": round(v[-1], 3) if v else None, "samples": len(v)}

    return {"producer_late": pcts(late), "handed_over_to_received": pcts(transit)}


def windows(
    sent: list[tuple[str, int, int, int]],
    actual: list[int],
    received: list[measure.ConsumerRecord],
    samples: list[dict],
    warmup: float,
    duration: float,
    width: float,
) -> list[dict]:
    """The run cut into windows of ``width`` seconds from the first intended send time (see
    the module text); each window says whether it lies in the measured period."""
    if not sent:
        return []
    t0 = min(t for _p, _s, _b, t in sent)
    w_ns = int(width * 1e9)
    span = warmup + duration
    n = max(1, math.ceil(round(span / width, 9)))
    warm_end = t0 + int(warmup * 1e9)
    run_end = t0 + int(span * 1e9)

    def bucket(ts) -> list[int]:
        counts = [0] * n
        for t in ts:
            if t0 <= t < run_end:  # the last window may be cut short by the run's end
                counts[(t - t0) // w_ns] += 1
        return counts

    offered = bucket(t for _p, _s, _b, t in sent)
    sent_n = bucket(actual)
    by_window: list[list[measure.ConsumerRecord]] = [[] for _ in range(n)]
    for r in received:
        if t0 <= r.recv_ns < run_end:
            by_window[(r.recv_ns - t0) // w_ns].append(r)
    sample_t = [s["t_ns"] for s in samples]
    out = []
    for k in range(n):
        start, end = t0 + k * w_ns, t0 + (k + 1) * w_ns
        secs = (min(end, run_end) - start) / 1e9
        i = bisect_left(sample_t, end) - 1  # the last reading before the window ends
        backlog = samples[i]["size"] if i >= 0 and sample_t[i] >= start else None
        lat = measure.latency_ms({"w": by_window[k]}, {r.burst for r in by_window[k]})
        out.append(
            {
                "start_s": round(k * width, 3),
                "seconds": round(secs, 3),
                "measured": start >= warm_end and end <= run_end,
                "offered_msgs_per_s": offered[k] / secs if secs > 0 else math.nan,
                "send_msgs_per_s": sent_n[k] / secs if secs > 0 else math.nan,
                "recv_msgs_per_s": len(by_window[k]) / secs if secs > 0 else math.nan,
                "backlog": backlog,
                "latency_ms": {
                    key: lat.get(key) for key in ("p50", "p99", "p99_9", "max", "samples")
                },
            }
        )
    return out


def figures(spec, sent, actual, received_by_consumer: dict, samples: list[dict],
            latency_records: list | None = None) -> dict:
    """The result's ``sustained`` section and the point's throughput and latency figures
    (``latency_records``: see ``measure.latency_ms``)."""
    received = [r for recs in received_by_consumer.values() for r in recs]
    by_width = {
        f"{w:g}s": windows(sent, actual, received, samples, spec.warmup, spec.duration, w)
        for w in WIDTHS
    }
    one = [w for w in by_width["1s"] if w["measured"]]
    steady = {
        key: _rate_spread([w[key] for w in one])
        for key in ("offered_msgs_per_s", "send_msgs_per_s", "recv_msgs_per_s")
    }
    backlogs = [w["backlog"] for w in one if w["backlog"] is not None]
    steady["backlog"] = _rate_spread(backlogs)
    steady["p99_ms"] = _rate_spread(
        [w["latency_ms"]["p99"] for w in one if w["latency_ms"]["p99"] is not None]
    )
    # the run's percentiles: every message whose intended send time is in the measured period
    t0 = min((t for _p, _s, _b, t in sent), default=0)
    lo, hi = t0 + int(spec.warmup * 1e9), t0 + int((spec.warmup + spec.duration) * 1e9)
    measured = {
        name: [r for r in recs if lo <= r.sent_ns < hi]
        for name, recs in received_by_consumer.items()
    }
    lat = measure.latency_ms(measured, {r.burst for recs in measured.values() for r in recs},
                             latency_records)
    hops = _hops(sent, actual, measured) if len(actual) == len(sent) else None
    sent_measured = sum(1 for _p, _s, _b, t in sent if lo <= t < hi)
    recv_measured = sum(len(v) for v in measured.values())
    growth = (backlogs[-1] - backlogs[0]) if len(backlogs) >= 2 else None
    offered = steady["offered_msgs_per_s"]["median"]
    allowed = offered * KEEP_UP_BACKLOG_S if offered and not math.isnan(offered) else math.inf
    recv_share = (
        statistics.fmean(w["recv_msgs_per_s"] for w in one)
        / statistics.fmean(w["send_msgs_per_s"] for w in one)
        if one and statistics.fmean(w["send_msgs_per_s"] for w in one)
        else math.nan
    )
    keeps_up = (
        bool(one) and recv_share >= KEEP_UP_RECV_SHARE and (growth is None or growth <= allowed)
    )
    return {
        "sustained": {
            "warmup_s": spec.warmup,
            "duration_s": spec.duration,
            "rate_per_producer": spec.rate or "max",
            "steady": steady,
            "messages_in_measured_period": {"sent": sent_measured, "received": recv_measured},
            "backlog_growth": growth,
            "recv_share_of_send": recv_share,
            "keeps_up": keeps_up,
            "keeps_up_rule": (
                f"receive >= {KEEP_UP_RECV_SHARE:.0%} of send over the measured "
                f"windows and the backlog grows by at most "
                f"{KEEP_UP_BACKLOG_S:g} s of the offered rate"
            ),
            "hops_ms": hops,
            "windows": by_width,
            "broker_samples": samples,
        },
        "latency": lat,
    }


def _f(v) -> str:
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:,.0f}"


def _ms(v) -> str:
    return "n/a" if v is None else f"{v:.2f}"


def summary_lines(doc: dict) -> list[str]:
    """The sustained part of a point's summary: each 10 s window (the 1 s windows are in the
    result file) and the steady state with its spread over the 1 s windows."""
    s = doc["sustained"]
    what = "latency" if doc.get("latency_ms") else "in queue"
    rate = s["rate_per_producer"]
    rate = f"{rate:,g} msg/s" if isinstance(rate, (int, float)) else rate
    lines = [
        (
            f"  sustained: {s['warmup_s']:g} s warm-up + {s['duration_s']:g} s measured, "
            f"rate {rate} per producer, open loop"
        ),
        f"  window     offered      send      recv    backlog  {what} p50 / p99 ms",
    ]
    for w in s["windows"]["10s"]:
        lat = w["latency_ms"]
        tag = "" if w["measured"] else " (warm-up)" if w["start_s"] < s["warmup_s"] else " (part)"
        lines.append(
            f"  {w['start_s']:>5g} s {_f(w['offered_msgs_per_s']):>10} "
            f"{_f(w['send_msgs_per_s']):>9} {_f(w['recv_msgs_per_s']):>9} "
            f"{_f(w['backlog']):>10}  {_ms(lat['p50'])} / {_ms(lat['p99'])}{tag}"
        )
    st = s["steady"]
    for key, label in (
        ("offered_msgs_per_s", "offered msg/s"),
        ("send_msgs_per_s", "send msg/s"),
        ("recv_msgs_per_s", "recv msg/s"),
        ("backlog", "backlog msgs"),
        ("p99_ms", "window p99 ms"),
    ):
        v = st[key]
        fmt = _ms if key == "p99_ms" else _f
        lines.append(
            f"  steady {label}: median {fmt(v['median'])} (min {fmt(v['min'])}, "
            f"max {fmt(v['max'])}) over {v['windows']} 1-s windows"
        )
    hops = s.get("hops_ms")
    if hops:
        for key, label in (
            ("producer_late", "producer late (pacing)"),
            ("handed_over_to_received", "handed over -> received"),
        ):
            h = hops[key]
            lines.append(
                f"  {label} ms: p50 {_ms(h['p50'])}  p90 {_ms(h['p90'])}  "
                f"p99 {_ms(h['p99'])}  max {_ms(h['max'])}"
            )
    lines.append(
        f"  keeps up: {'yes' if s['keeps_up'] else 'NO'} ({s['keeps_up_rule']}; "
        f"receive/send {s['recv_share_of_send']:.3f}, backlog growth "
        f"{_f(s['backlog_growth'])})"
    )
    return lines
