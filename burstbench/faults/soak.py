"""A long run with repeated faults: ``./bench chaos soak --duration 10m [--seed N]``.

Producers and competing consumers of all four stock clients (Perl, Python, Node, Java) run
at once on one queue: persistent messages, ``--ack client``, every client with
``--failover URL`` (its own broker's address once more), so each library's own reconnect
is what carries it through a broker restart (clients/contract.md, "Failover"). Each
producer is paced at ``--fraction`` of the rate its language reached in a calibration burst
at the start (one unpaced persistent burst per language, measured from ``go`` to the
broker's confirmation), and is fed bursts of ``--count`` messages, the next once the last
was confirmed, until the duration is over.

Faults come from a schedule drawn from ``--seed`` (printed; the same seed, duration and
fault count give the same schedule): the run is cut into ``--faults`` equal slots between
10% and 85% of the duration and each slot holds one fault at a random moment, of a random
kind:

================ =========================================================================
broker-kill      SIGKILL one broker's process group, restart it on the same store and ports
link-cut         take broker b's link down for 3-10 s (``forward`` a -> b on network
                 namespaces only: producers on a, consumers on b)
consumer-kill    a fresh consumer with a prefetch it cannot fill joins, receives, and is
                 SIGKILLed (it acknowledged nothing, so the broker redelivers what it held)
producer-kill    SIGKILL one producer; a new one (new id) takes its language's place
================ =========================================================================

With network namespaces (root) the brokers are ``forward``'s a and b, each in its own
namespace; without, one broker on loopback and no link-cut. Every few seconds each broker
answers ``stats`` (heap, open files, store usage: broker/Main.java) for the chart
(``soak.png``), so a leak shows as a slope. At the end producers are stopped, consumers drain
what was confirmed, and the accounting of ``burstbench.faults`` applies to every process that
lived: 0 confirmed messages lost, duplicates and recovery time per fault.
"""

from __future__ import annotations

import json
import random
import re
import shutil
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from burstbench import clients, paths
from burstbench.faults.base import Scenario
from burstbench.faults.lives import Life
from burstbench.faults.reckon import RULE, Result
from burstbench.faults.soakstore import (  # noqa: F401 (read as soak.X)
    doubled_consumers,
    store_notes,
    store_view,
)
from burstbench.faults.spec import NS, ChaosFailed, ChaosSpec, Skip
from burstbench.infra import brokers
from burstbench.infra.procs import Interrupted
from burstbench.measure.results import json_safe

FAULTS = ("broker-kill", "link-cut", "consumer-kill", "producer-kill")
STATS_EVERY_S = 5.0


def parse_duration(text: str) -> float:
    """``600``, ``90s``, ``10m``, ``1h`` -> seconds; ValueError otherwise."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*", str(text))
    if not m or float(m.group(1)) <= 0:
        raise ValueError(f"--duration must be a positive number of seconds, or with s/m/h: "
                         f"{text!r}")
    return float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[m.group(2)]


@dataclass
class Fault:
    """One scheduled fault: when (seconds after the load started), what, and on whom."""

    at_s: float
    kind: str
    target: str  # a broker name, a language, or "" (link-cut: always b)
    hold_s: float = 0.0  # link-cut: how long the link stays down
    # filled in while it runs and from the records afterwards
    t_ns: int = 0
    end_ns: int = 0  # broker back / link restored / victim gone
    recovery_s: float | None = None
    duplicates: int = 0
    detail: dict = field(default_factory=dict)


def schedule(seed: int, duration_s: float, n: int, kinds: tuple[str, ...],
             languages: list[str], brokers_: list[str]) -> list[Fault]:
    """The seeded fault plan: ``n`` equal slots between 10% and 85% of the run, one fault at
    a random moment of each, of a random kind and target."""
    rng = random.Random(seed)
    lo, hi = 0.10 * duration_s, 0.85 * duration_s
    width = (hi - lo) / n
    out = []
    for i in range(n):
        kind = rng.choice(kinds)
        at = round(lo + width * i + rng.uniform(0.15, 0.85) * width, 2)
        target = {"broker-kill": lambda: rng.choice(brokers_), "link-cut": lambda: "b"}.get(
            kind, lambda: rng.choice(languages))()
        hold = round(rng.uniform(3.0, 10.0), 1) if kind == "link-cut" else 0.0
        out.append(Fault(at, kind, target, hold))
    return out


@dataclass
class SoakSpec:
    """What ``./bench chaos soak`` runs. Zero means the default."""

    duration_s: float = 600.0
    seed: int | None = None  # drawn (and printed) when not given
    faults: int = 0  # how many; 0 = one per 2 minutes, at least 3
    fraction: float = 0.25  # of each language's calibrated rate
    count: int = 200  # messages per burst
    size: int = 256
    languages: tuple[str, ...] = tuple(clients.LANGUAGE_CLIENTS)
    kinds: tuple[str, ...] = FAULTS
    prefetch: int = 100
    netns: bool | None = None  # None: when available
    journal_mb: int = 0  # KahaDB's journalMaxFileLength in MB; 0 = ActiveMQ's (32)

    def __post_init__(self) -> None:
        if self.seed is None:
            self.seed = random.SystemRandom().randrange(1, 2**31)
        if not self.faults:
            self.faults = max(3, int(self.duration_s // 120))

    def validate(self) -> None:
        if self.duration_s < 20:
            raise ValueError(f"--duration must be at least 20 s: {self.duration_s:g}")
        if not 0 < self.fraction <= 1:
            raise ValueError(f"--fraction must be in (0, 1]: {self.fraction}")
        if self.faults < 1 or self.faults > self.duration_s / 10:
            raise ValueError(f"--faults must be between 1 and one per 10 s: {self.faults}")
        if not self.kinds:
            raise ValueError(f"--kinds needs at least one of: {', '.join(FAULTS)}")
        for k in self.kinds:
            if k not in FAULTS:
                raise ValueError(f"unknown fault {k!r} (have: {', '.join(FAULTS)})")
        if not self.languages:
            raise ValueError("--languages needs at least one client")
        if not 0 <= self.journal_mb <= 2047:
            raise ValueError(f"--journal-mb must be between 1 and 2047: {self.journal_mb}")
        for c in self.languages:
            clients.resolve(c)


class Soak(Scenario):
    """The soak, on ``Scenario``'s processes, events and accounting."""

    def __init__(self, spec: SoakSpec, out_dir: Path, progress=None):
        self.soak = spec
        base = ChaosSpec("broker-kill", "stomp-py", count=spec.count, bursts=4, size=spec.size,
                         prefetch=spec.prefetch, consumers=len(spec.languages),
                         producers=len(spec.languages), stall_timeout=90)
        super().__init__(base, out_dir, progress)
        self.result.scenario = "soak"
        self.result.client = ("all four" if tuple(spec.languages) == tuple(
            clients.LANGUAGE_CLIENTS) else ", ".join(spec.languages))
        self.plan: list[Fault] = []
        self.rates: dict[str, float] = {}
        self.calibrated: dict[str, float] = {}
        self.victims = 0
        self.lang_of: dict[str, str] = {}  # ident -> client name
        self.brokers_: dict[str, brokers.Broker] = {}
        self.bspecs: dict[str, brokers.BrokerSpec] = {}

    # -- the frame -------------------------------------------------------------------------
    def run(self) -> Result:
        t0 = time.monotonic()
        sk = self.soak
        try:
            sk.validate()
            for c in sk.languages:
                why = clients.resolve(c).client.missing()
                if why:
                    raise Skip(why)
            if not paths.BROKER_CLASSES.exists():
                raise Skip("broker not built (./bench setup)")
        except Skip as e:
            self.result.status, self.result.reason = e.status, str(e)
            return self.result
        self._open_dirs()
        try:
            self._soak()
        except (Interrupted, KeyboardInterrupt):
            self.result.status = "failed"
            self.result.errors.append("interrupted")
            raise
        except Exception as e:  # noqa: BLE001 - the report says what failed
            self.result.status = "failed"
            self.result.errors.append(str(e) or type(e).__name__)
        finally:
            self.sup.stop_all()
            if self.net is not None:
                self.net.remove()
            self._account()
            self.result.wall_s = round(time.monotonic() - t0, 1)
            shutil.rmtree(self.work, ignore_errors=True)
        return self.result

    def struck(self) -> bool:
        return True  # each fault's figures say whether it struck

    def after(self) -> None:
        self._per_fault()

    # -- processes -------------------------------------------------------------------------
    def client_url(self, broker: str, resolved: clients.Resolved) -> str:
        b = self.brokers_[broker]
        return b.openwire_url if resolved.protocol == "openwire" else b.url_for(resolved.protocol)

    def start_lang(self, role: str, slot: str, lang: str, *, generation: int = 0,
                   plan: int = 0, prefetch: int | None = None, rate: float = 0.0) -> Life:
        """One client of language ``lang``: its own broker's address and ``--failover`` the
        same address (the library's reconnect), in its host's namespace."""
        r = clients.resolve(lang)
        host = self.producer_host if role == "producer" else self.consumer_host
        url = self.client_url(host, r)
        self.resolved = r
        extra = ["--failover", url]
        if role == "producer" and rate:
            extra += ["--rate", f"{rate:.3f}"]
        life = self.start_client(role, slot, url, generation=generation, plan=plan,
                                 prefetch=prefetch, wrap=self.wrap(host), extra=extra)
        self.lang_of[life.ident] = lang
        return life

    def wrap(self, host: str) -> list[str]:
        return self.net.wrap(host) if self.net is not None else []

    # -- brokers ---------------------------------------------------------------------------
    def start_brokers(self) -> None:
        sk = self.soak
        use_netns = sk.netns
        if use_netns is None or use_netns:
            from burstbench.infra import netns

            why = netns.available()
            if why and use_netns:
                raise ChaosFailed(f"network namespaces: {why}")
            use_netns = not why
        if use_netns:
            _, specs = self.namespaced_specs("forward", "s")
            self.producer_host, self.consumer_host = "a", "b"
        else:
            specs = {"a": self.broker_spec("a")}
            self.producer_host = self.consumer_host = "a"
        if sk.journal_mb:  # smaller journal files: a pinned one shows within minutes
            for bs in specs.values():
                bs.kahadb_attrs = {**bs.kahadb_attrs,
                                   "journalMaxFileLength": f"{sk.journal_mb}mb"}
        self.bspecs = specs
        for name in specs:
            self.boot(name)
        if self.net is not None:
            def bridged() -> bool:
                return bool(self.bridge_events) and self.bridge_events[-1][1] > 0

            self.wait_until(bridged, 60, "the network bridge a -> b")

    def boot(self, name: str) -> brokers.Broker:
        bs = self.bspecs[name]
        kw = {}
        if self.net is not None:
            kw = {"wrap": self.net.wrap(name),
                  "probe": lambda host, port, n=name: self.net.probe(n, port)}
        self.progress(f"starting broker {name}" + (f" on {bs.host} (namespace)"
                                                   if self.net is not None else ""))
        b = self.start_broker(bs, f"broker {name}", **kw)
        self.brokers_[name] = b
        return b

    def sample_stats(self) -> None:
        for b in self.brokers_.values():
            if b.child.alive():
                b.child.send("stats")

    # -- the run ---------------------------------------------------------------------------
    def _soak(self) -> None:
        sk = self.soak
        self.start_brokers()
        names = list(self.bspecs)
        kinds = tuple(k for k in sk.kinds if k != "link-cut" or self.net is not None)
        if len(kinds) < len(sk.kinds):
            self.result.notes.append("no network namespaces here: link-cut left out of the "
                                     "schedule")
        self.plan = schedule(sk.seed, sk.duration_s, sk.faults, kinds, list(sk.languages),
                             names)
        self.progress(f"seed {sk.seed}: " + "; ".join(
            f"{f.at_s:.0f}s {f.kind} {f.target}".strip() for f in self.plan))
        # consumers, one per language
        cons = [self.start_lang("consumer", f"c{i + 1}", lang)
                for i, lang in enumerate(sk.languages)]
        self.wait_until(lambda: all(c.ready for c in cons), 90, "the consumers' ready")
        self.calibrate()
        prods = [self.start_lang("producer", f"p{i + 1}", lang, plan=10**9,
                                 rate=self.rates[lang])
                 for i, lang in enumerate(sk.languages)]
        self.wait_until(lambda: all(p.ready for p in prods), 90, "the producers' ready")
        for p in prods:
            self._feed(p)
        start = time.monotonic()
        self.t_start_ns = time.time_ns()
        next_stats = 0.0
        pending = list(self.plan)
        while (elapsed := time.monotonic() - start) < sk.duration_s:
            if elapsed >= next_stats:
                self.sample_stats()
                next_stats = elapsed + STATS_EVERY_S
            if pending and elapsed >= pending[0].at_s:
                f = pending.pop(0)
                self.progress(f"{elapsed:.0f}s: {f.kind} {f.target}".strip())
                self.inject(f)
                continue
            self.pump(0.2)
        self.progress("duration over: stopping the producers after their current burst")
        self.sample_stats()
        self.stop_producers()
        self.settle()
        self.sample_stats()
        self.pause(1.0)
        self.t_drained = time.time_ns()
        self.stop_consumers()
        # what each broker still holds once every consumer has acknowledged and left, and
        # its store then (a store that does not shrink holds something)
        self.left_after = self.query_stats()
        self.stop_brokers()

    def calibrate(self) -> None:
        """One unpaced persistent burst per language, alone: its rate from go to the broker's
        confirmation; each producer then runs at ``fraction`` of it."""
        sk = self.soak
        for i, lang in enumerate(sk.languages):
            life = self.start_lang("producer", f"k{i + 1}", lang, plan=1)
            self.wait_until(lambda life=life: life.ready, 90,
                            f"calibration producer {life.ident}")
            t = time.monotonic()
            self._feed(life)
            self.wait_until(lambda life=life: life.producer.confirmed, 120,
                            f"calibration burst of {life.ident}")
            took = time.monotonic() - t
            self.calibrated[lang] = round(sk.count / took, 1)
            self.rates[lang] = max(1.0, round(sk.fraction * sk.count / took, 1))
            self.wait_until(lambda life=life: not life.alive, 30, f"{life.ident} to finish")
        self.progress("calibrated (msg/s, persistent, confirmed): " + ", ".join(
            f"{k} {v:,.0f} -> paced at {self.rates[k]:,.0f}" for k, v in self.calibrated.items()))
        self.result.notes.append(
            f"load: each producer at {sk.fraction:.0%} of its language's calibrated rate: "
            + ", ".join(f"{k} {self.rates[k]:,.0f}/{v:,.0f} msg/s"
                        for k, v in self.calibrated.items()))

    def lives_of(self, role: str, lang: str | None = None) -> list[Life]:
        return [x for x in self.lives if x.role == role and x.alive and not x.stopping
                and (lang is None or self.lang_of.get(x.ident) == lang)
                and not x.ident.startswith(("k", "v"))]

    def inject(self, f: Fault) -> None:
        f.t_ns = time.time_ns()
        faults = {"broker-kill": self._fault_broker_kill, "link-cut": self._fault_link_cut,
                  "consumer-kill": self._fault_consumer_kill,
                  "producer-kill": self._fault_producer_kill}  # FAULTS, each kind's method
        faults[f.kind](f)
        self.last_progress = time.monotonic()

    def _fault_broker_kill(self, f: Fault) -> None:
        b = self.brokers_[f.target]
        self.expected_broker_exit.add(id(b.child))
        self.sup.kill(b.child)
        self.wait_until(lambda: not b.child.alive(), 30, "the killed broker to exit")
        b2 = self.boot(f.target)  # same spec: same store and ports
        f.end_ns = self.broker_ready_ns[id(b2.child)]
        f.detail = {"killed_pid": b.child.pid, "restarted_pid": b2.child.pid,
                    "down_s": round((f.end_ns - f.t_ns) / NS, 3)}

    def _fault_link_cut(self, f: Fault) -> None:
        self.net.cut(f.target)
        try:
            self.pause(f.hold_s)
        finally:
            self.net.restore(f.target)
        f.end_ns = time.time_ns()
        f.detail = {"cut_s": round((f.end_ns - f.t_ns) / NS, 3)}

    def _fault_consumer_kill(self, f: Fault) -> None:
        self.victims += 1
        slot = f"v{self.victims}"
        big = 30000  # it acknowledges every ceil(prefetch/2): it will hold, never ack, this many
        v = self.start_lang("consumer", slot, f.target, prefetch=big)
        self.wait_until(lambda: v.ready, 90, f"{v.ident}'s ready")
        self.wait_until(lambda: v.received > 0, 60, f"{v.ident} to receive something")
        self.pause(1.0)
        held = v.received
        if held >= big // 2:
            raise ChaosFailed(f"{v.ident} received {held}: it may have acknowledged some")
        v.may_exit = True
        f.t_ns = time.time_ns()
        self.sup.kill(v.child)
        self.wait_until(lambda: not v.alive, 30, f"{v.ident} to exit")
        f.end_ns = time.time_ns()
        f.detail = {"victim": v.ident, "received_before_kill": held}

    def _fault_producer_kill(self, f: Fault) -> None:
        (p, *_) = self.lives_of("producer", f.target) or [None]
        if p is None:
            f.detail = {"skipped": f"no live {f.target} producer"}
            return
        p.may_exit = True
        self.sup.kill(p.child)
        self.wait_until(lambda: not p.alive, 30, f"{p.ident} to exit")
        gen = 1 + sum(1 for x in self.lives if x.slot == p.slot and x is not p)
        q = self.start_lang("producer", p.slot, f.target, generation=gen, plan=10**9,
                            rate=self.rates[f.target])
        self.wait_until(lambda: q.ready, 90, f"{q.ident}'s ready")
        self._feed(q)
        f.end_ns = time.time_ns()
        f.detail = {"killed": p.ident, "replacement": q.ident,
                    "bursts_confirmed": len(set(p.producer.confirmed))}

    # -- the end ---------------------------------------------------------------------------
    def stop_producers(self) -> None:
        for life in self.producers():
            if life.alive:
                p = life.producer
                life.plan = max(len(set(p.confirmed)), p.started)
                self._feed(life)
        self.wait_until(lambda: all(not x.alive for x in self.producers()), 180,
                        "the producers to finish their last burst")

    def settle(self, quiet: float = 3.0) -> None:
        """Until consumers hold what was confirmed and nothing new came for ``quiet`` s."""
        def counted() -> int:
            return sum(x.received for x in self.consumers() if x.alive or x.exit_code == 0)

        want = sum(len(set(x.producer.confirmed)) * self.spec.count for x in self.producers())
        last, changed = -1, time.monotonic()
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            self.pump(0.2)
            n = counted()
            if n != last:
                last, changed = n, time.monotonic()
            if n >= want and time.monotonic() - changed >= quiet:
                return
            if time.monotonic() - changed > self.spec.stall_timeout:
                break
        self.result.errors.append(f"did not settle: {last} received, {want} confirmed")
        self.result.status = "failed"

    def _per_fault(self) -> None:
        """Recovery time and duplicates per fault, from the records."""
        recs = [(r.recv_ns, r.producer, r.seq, r.redelivered)
                for rs in self.consumer_records.values() for r in rs]
        recs.sort()
        seen: set = set()
        dup_times = []
        for t, p, s, _red in recs:
            if (p, s) in seen:
                dup_times.append(t)
            seen.add((p, s))
        bounds = [f.t_ns for f in self.plan if f.t_ns] + [2**63]
        for i, f in enumerate(x for x in self.plan if x.t_ns):
            f.duplicates = sum(1 for t in dup_times if f.t_ns <= t < bounds[i + 1])
            ref = f.end_ns or f.t_ns
            if f.kind == "consumer-kill":
                first = self.first_received_after(f.t_ns, redelivered_only=True)
            elif f.kind == "producer-kill" and "replacement" in f.detail:
                rep = f.detail["replacement"]
                times = [r.recv_ns for rs in self.consumer_records.values() for r in rs
                         if r.producer == rep]
                first = min(times) if times else None
            else:
                first = self.first_received_after(ref)
            if first is not None:
                f.recovery_s = round((first - f.t_ns) / NS, 3)
        self.result.fault = {
            "seed": self.soak.seed, "duration_s": self.soak.duration_s,
            "faults": [asdict(f) for f in self.plan],
            "calibrated_msgs_per_s": self.calibrated, "paced_msgs_per_s": self.rates,
            "netns": self.net is not None, "stats": self.broker_stats,
            "reconnects": {k: len(v) for k, v in self.reconnects.items()},
            "brokers_after": getattr(self, "left_after", {}),
        }
        self.result.fault["store_after"] = store_view(self.broker_stats)
        self.result.notes.extend(store_notes(self.result.fault["store_after"],
                                             self.broker_stats))
        left = {b: q["size"] for b, q in self.result.fault["brokers_after"].items()
                if q.get("size")}
        if left:
            self.result.notes.append(f"left on a broker after the consumers had gone: {left}")
        last = {}
        for st in self.broker_stats:
            if "usage" in st:
                last[st["broker"]] = st["usage"]["store_bytes"]
        if last:
            self.result.notes.append("store at the end (MiB): " + ", ".join(
                f"{b} {v / (1 << 20):,.0f}" for b, v in sorted(last.items())))
        missing = [f for f in self.plan if f.t_ns and f.recovery_s is None
                   and "skipped" not in f.detail]
        if missing:
            self.result.notes.append("no recovery seen after: " + ", ".join(
                f"{f.kind}@{f.at_s:.0f}s" for f in missing))


def replay_args(spec: SoakSpec) -> str:
    """The options that replay ``spec``'s schedule (the drawing depends on each of them)."""
    out = (f"--duration {spec.duration_s:g}s --seed {spec.seed} --faults {spec.faults} "
           f"--fraction {spec.fraction:g}")
    if tuple(spec.kinds) != FAULTS:
        out += " --kinds " + ",".join(spec.kinds)
    if tuple(spec.languages) != tuple(clients.LANGUAGE_CLIENTS):
        out += " --languages " + ",".join(spec.languages)
    if spec.journal_mb:
        out += f" --journal-mb {spec.journal_mb}"
    return out


# -- report and command ----------------------------------------------------------------------
def report(r: Result, spec: SoakSpec) -> str:
    lines = [f"chaos soak (seed {spec.seed}, {spec.duration_s:g} s, {spec.faults} faults): "
             f"{r.status.upper()}" + (f": {r.reason}" if r.reason else "")]
    t = r.tally
    if t:
        lines.append(f"  sent {t.sent:,}  received {t.received:,}  lost {t.lost:,}  duplicates "
                     f"{t.duplicates:,}  redelivered {t.redelivered:,}  unconfirmed "
                     f"{t.unconfirmed:,} ({t.unconfirmed_received:,} arrived)")
    lines.append("  | at s | fault | target | recovery s | duplicates | detail |")
    lines.append("  |---|---|---|---|---|---|")
    for f in r.fault.get("faults", []):
        rec = "-" if f["recovery_s"] is None else f"{f['recovery_s']:.2f}"
        det = ", ".join(f"{k} {v}" for k, v in f["detail"].items())
        lines.append(f"  | {f['at_s']:.0f} | {f['kind']} | {f['target']} | {rec} | "
                     f"{f['duplicates']:,} | {det} |")
    for n in r.notes:
        lines.append(f"  note: {n}")
    for e in r.errors:
        lines.append(f"  error: {e}")
    lines.append(f"  replay: ./bench chaos soak {replay_args(spec)}")
    lines.append(f"  logs and records: {r.dir}")
    return "\n".join(lines)


def main(args) -> int:
    """``./bench chaos soak``: exit 1 if a confirmed message was lost or the run failed."""
    from burstbench.measure import results as res

    spec = SoakSpec(duration_s=parse_duration(args.duration or "10m"), seed=args.seed,
                    faults=args.faults or 0, fraction=args.fraction,
                    count=args.count, journal_mb=args.journal_mb or 0)
    if args.kinds is not None:
        spec.kinds = tuple(k.strip() for k in args.kinds.split(",") if k.strip())
    if args.languages is not None:
        spec.languages = tuple(x.strip() for x in args.languages.split(",") if x.strip())
    spec.validate()
    run = res.Run(res.new_run_id("soak"), sys.argv)
    print(f"chaos soak {run.id}: seed {spec.seed}; results in {run.dir}", flush=True)

    def progress(msg: str) -> None:
        print(f"  [soak] {msg}", file=sys.stderr, flush=True)

    status = "complete"
    r = None
    try:
        r = Soak(spec, run.dir / "soak", progress).run()
    except (Interrupted, KeyboardInterrupt):
        status = "incomplete"
        raise
    finally:
        if r is not None:
            doc = {"schema_version": 1, "command": sys.argv, "spec": asdict(spec),
                   "rule": RULE, "result": r.as_dict()}
            (run.dir / "soak.json").write_text(json.dumps(json_safe(doc), indent=2))
            try:
                from burstbench.plots import soak as soak_plot

                soak_plot.draw(run.dir / "soak.json", run.dir / "soak.png")
            except Exception as e:  # noqa: BLE001 - the figures stand without the chart
                print(f"  [soak] chart not drawn: {e}", file=sys.stderr)
        run.finish(status if status != "complete" or (r and r.ok()) else "failed")
    print(report(r, spec), flush=True)
    print(f"\nwritten: {run.dir / 'soak.json'}, {run.dir / 'soak.png'}")
    return 0 if r.ok() and r.status == "ok" else 1
