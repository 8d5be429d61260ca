"""Akka and Apache Pekko side by side: the bridge's one source tree built for each runtime
(pekko-bridge/pom.xml), measured in one run, round by round, the runtimes' order swapped every
round (A B, B A, ...) so that a machine drifting during the run weighs on both alike.

Per round and runtime:

- **bursts through actors**: ``POST /bursts`` with route ``actors`` on the bridge's HTTP server
  (one server per runtime, started once and warmed up before the first round): a creator
  actor, a pool of worker actors that check every body, a collector; no broker. Its counts
  are the bridge's own (nothing leaves the JVM); a burst that lost, duplicated or garbled a
  message fails.
- **the Pi study's actor rows**: ``PiActors``, one JVM per row as in ``./bench pi``, its sum
  checked against the exact partial sum.
- **request/reply through ask**: ``ReqReply --mode actor-ask``, one JVM per payload as in
  ``./bench reqreply``; requests/s and the round trip's p50.

Bursts through actors *and a broker* are the profile's ``runtime`` axis (the bridge as
producer and consumer, a sweep point each, checked message by message by the harness); this
study's table and chart take those points from the same run when they are there. Every
figure is the median with min-max over the rounds (or, for the axis, over its bursts).
"""

from __future__ import annotations

import http.client
import itertools
import json
import sys
from dataclasses import dataclass, field

from burstbench import clients, paths, stats
from burstbench.infra.procs import Supervisor
from burstbench.measure import results
from burstbench.studies import reqreply
from burstbench.studies.pi.akka import run_akka_point
from burstbench.studies.pi.maths import ExactSums
from burstbench.studies.pi.point import PointError, wait_for
from burstbench.studies.studyfile import StudyFile, config_from_profile

RUNTIMES = tuple(clients.BRIDGE_MODULES)  # ("akka", "pekko")
NAMES = {rt: f"{clients.BRIDGE_RUNTIMES[rt]} + {clients.BRIDGE_HTTP[rt]}" for rt in RUNTIMES}
MAX_BURST_BYTES = 256 << 20  # the bridge's limits.max-burst-bytes (akka-bridge/README.md)
AXIS = "runtime"  # the profile's axis of bridge pairs through the broker


class StudyError(ValueError):
    """Bad study parameters (reported as one line, exit 2)."""


@dataclass
class RuntimesConfig:
    """How many rounds, and what each round measures on each runtime."""

    rounds: int = 5
    sizes: list[int] = field(default_factory=lambda: [6, 1024])  # bursts through actors
    count: int = 200_000  # messages per burst
    workers: int = 4  # the burst's worker actors
    warmup: int = 400_000  # messages per size through each server before the first round
    pi_workers: list[int] = field(default_factory=lambda: [1, 10])
    pi_messages: list[int] = field(default_factory=lambda: [1000, 100_000])
    pi_elements: list[int] = field(default_factory=lambda: [1000])
    ask_payloads: list[int] = field(default_factory=lambda: [1, 1000, 100_000])
    ask_requests: int = 20_000
    ask_warmup: int = 20_000

    def validate(self) -> None:
        if isinstance(self.count, int) and isinstance(self.sizes, list) and any(
                isinstance(s, int) and self.count * s > MAX_BURST_BYTES for s in self.sizes):
            raise StudyError(f"runtimes: count x size must be at most {MAX_BURST_BYTES:,} bytes "
                             "(the bridge's limits.max-burst-bytes)")
        for key in ("rounds", "count", "workers", "ask_requests"):
            if not isinstance(getattr(self, key), int) or getattr(self, key) < 1:
                raise StudyError(f"runtimes: {key} must be an integer >= 1: "
                                 f"{getattr(self, key)!r}")
        for key in ("warmup", "ask_warmup"):
            if not isinstance(getattr(self, key), int) or getattr(self, key) < 0:
                raise StudyError(f"runtimes: {key} must be an integer >= 0: "
                                 f"{getattr(self, key)!r}")
        for key, low, high in (("sizes", 6, 1 << 20), ("pi_workers", 1, 64),
                               ("pi_messages", 1, 10 ** 7), ("pi_elements", 1, 10 ** 6),
                               ("ask_payloads", 0, reqreply.MAX_PAYLOAD)):
            vals = getattr(self, key)
            if not isinstance(vals, list) or any(not isinstance(v, int) or not low <= v <= high
                                                 for v in vals):
                raise StudyError(f"runtimes: {key} must be a list of integers {low}..{high}: "
                                 f"{vals!r}")

    @classmethod
    def from_profile(cls, profile: str) -> RuntimesConfig:
        return config_from_profile(cls, "runtimes", profile, StudyError)


def order(round_no: int) -> tuple[str, ...]:
    """The runtimes in round ``round_no``'s order: as listed, then reversed, and so on."""
    return RUNTIMES if round_no % 2 == 0 else RUNTIMES[::-1]


class Server:
    """The bridge's HTTP server on one runtime, a child of ``sup`` on a free loopback port."""

    def __init__(self, sup: Supervisor, runtime: str):
        self.runtime = runtime
        self.child = sup.start(f"http-{runtime}", clients.bridge_http(runtime, port=0),
                               role="bridge-http")
        url: list[str] = []

        def ready(c, ev, _got):
            if c is self.child and ev.get("event") == "ready":
                url.append(ev["url"])
            return bool(url)

        wait_for(sup, ready, 60, f"the {runtime} bridge's ready line", [self.child])
        host, port = url[0].removeprefix("http://").rstrip("/").split(":")
        self.host, self.port = host, int(port)

    def bursts(self, count: int, size: int, workers: int) -> dict:
        """One POST /bursts, route actors, one burst; its answer (or PointError)."""
        body = json.dumps({"count": count, "size": size, "workers": workers, "bursts": 1,
                           "route": "actors"})
        conn = http.client.HTTPConnection(self.host, self.port, timeout=300)
        try:
            conn.request("POST", "/bursts", body=body,
                         headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            text = resp.read().decode()
        except OSError as e:
            raise PointError(f"POST /bursts on {self.runtime}: {e}") from None
        finally:
            conn.close()
        if resp.status != 200:
            raise PointError(f"POST /bursts on {self.runtime}: HTTP {resp.status}: {text[:200]}")
        return json.loads(text)


def burst_point(server: Server, cfg: RuntimesConfig, size: int, round_no: int) -> dict:
    doc = {"kind": "bursts", "runtime": server.runtime, "round": round_no, "size": size,
           "count": cfg.count, "workers": cfg.workers, "status": "failed", "errors": []}
    try:
        ans = server.bursts(cfg.count, size, cfg.workers)
    except PointError as e:
        doc["errors"].append(str(e))
        return doc
    (b,) = ans["bursts"]
    acc = ans["accounting"]
    doc["accounting"] = acc
    if not (b["complete"] and acc["lost"] == 0 and acc["duplicates"] == 0
            and b["bad_bodies"] == 0 and b["received"] == cfg.count):
        doc["errors"].append(f"burst not whole: received {b['received']} of {cfg.count}, "
                             f"lost {acc['lost']}, duplicates {acc['duplicates']}, bad bodies "
                             f"{b['bad_bodies']}")
    doc.update(value=b["msgs_per_s"], seconds=b["seconds"])
    doc["status"] = "ok" if not doc["errors"] else "failed"
    return doc


def pi_point(sup: Supervisor, runtime: str, w: int, m: int, e: int, exact: float,
             round_no: int) -> dict:
    pt = run_akka_point(sup, w, m, e, exact, f"pi-r{round_no}-w{w}-m{m}-e{e}", runtime)
    pt.pop("backend")
    return {"kind": "pi", "runtime": runtime, "round": round_no, **pt,
            **({"value": pt["seconds"]} if "seconds" in pt else {})}


def ask_point(sup: Supervisor, runtime: str, cfg: RuntimesConfig, payload: int, round_no: int,
              out) -> dict:
    rr = reqreply.ReqReplyConfig(modes=["actor-ask"], payloads=[payload],
                                 requests=cfg.ask_requests, warmup=cfg.ask_warmup,
                                 runtime=runtime)
    records = out / "records" / f"r{round_no}-{runtime}"
    records.mkdir(parents=True, exist_ok=True)
    pt = reqreply.run_point(sup, None, rr, "actor-ask", payload, records)
    pt.pop("mode")
    doc = {"kind": "ask", "runtime": runtime, "round": round_no, **pt}
    if pt["status"] == "ok":
        doc.update(value=pt["ops_per_s"], p50_us=pt["latency_ms"]["p50"] * 1000)
    return doc


def key_of(p: dict) -> tuple:
    """What a sample measured, apart from its runtime and round."""
    if p["kind"] == "bursts":
        return ("bursts", p["size"])
    if p["kind"] == "pi":
        return ("pi", p["workers"], p["messages"], p["elements"])
    return ("ask", p["payload"])


def summarise(points: list[dict]) -> list[dict]:
    """One row per measured thing: each runtime's median (min-max) over the rounds, and
    Pekko's median over Akka's. A row with a failed sample has no figure."""
    rows: dict[tuple, dict] = {}
    for p in points:
        row = rows.setdefault(key_of(p), {"key": list(key_of(p)), "failed": False})
        row["failed"] |= p["status"] != "ok"
        row.setdefault("values", {}).setdefault(p["runtime"], []).append(p.get("value"))
        if p["kind"] == "ask":
            row.setdefault("p50_us", {}).setdefault(p["runtime"], []).append(p.get("p50_us"))
    out = []
    for row in rows.values():
        if row.pop("failed"):
            row["status"] = "failed"
            row.pop("values")
            row.pop("p50_us", None)
            out.append(row)
            continue
        row["status"] = "ok"
        for what in ("values", "p50_us"):
            if what in row:
                row[what] = {rt: stats.spread(v) for rt, v in row[what].items()}
        v = row["values"]
        if all(rt in v for rt in RUNTIMES):
            row["pekko_over_akka"] = v["pekko"]["median"] / v["akka"]["median"]
        out.append(row)
    return out


def broker_pairs(run: results.Run) -> list[dict]:
    """The profile's ``runtime`` axis in this run (the bridge pair through the broker): each
    point's receive rate, median (min-max) over its measured bursts."""
    try:
        points = results.load_run(run.dir).by_axis().get(AXIS, [])
    except (OSError, ValueError):
        return []
    out = []
    for p in points:
        t, a = p.get("throughput") or {}, p.get("accounting") or {}
        out.append({"series": p["sweep"]["series"], "size": p["parameters"]["size"],
                    "status": p.get("status"), "lost": a.get("lost"),
                    "recv": {"median": t.get("recv_msgs_per_s"), "min": t.get("recv_min"),
                             "max": t.get("recv_max"), "n": t.get("measured_bursts")}})
    return out


def run_study(run: results.Run, cfg: RuntimesConfig, progress=None) -> dict:
    """Measure every round into ``run``: runtimes.json, .md, .html, charts/runtimes.png."""
    from burstbench.plots import studies

    cfg.validate()
    say = progress or (lambda msg: print(msg, file=sys.stderr, flush=True))
    for rt, module in clients.BRIDGE_MODULES.items():
        paths.require_built(module.name, module / "target" / "classes" / "burstbench")
    out = run.dir / "runtimes"
    out.mkdir(parents=True, exist_ok=True)
    study = StudyFile.begin(
        run, "runtimes", {k: getattr(cfg, k) for k in cfg.__dataclass_fields__}, say,
        timing="bursts: the bridge's first send -> its last receive (its answer's seconds); "
               "Pi: creating the actors -> the collector's last sum; ask: the measured requests, "
               "one at a time (JVM start-up and warm-up outside every figure)",
        order="the runtimes alternate: round 1 akka then pekko, round 2 pekko then akka, ...")
    doc = study.doc
    doc["versions"] = {**{rt: NAMES[rt] for rt in RUNTIMES}, "runtimes": results.runtimes()}
    doc["broker_pairs"] = broker_pairs(run)
    exact = ExactSums()
    pi_grid = list(itertools.product(cfg.pi_elements, cfg.pi_messages, cfg.pi_workers))
    with Supervisor(out / "logs") as sup, study.measuring():
        servers = {}
        for rt in RUNTIMES:
            say(f"runtimes: starting the {rt} bridge's HTTP server, warming it up")
            try:
                servers[rt] = Server(sup, rt)
                for size in cfg.sizes:  # in bursts of count: the bridge caps a burst's bytes
                    for _ in range(-(-cfg.warmup // cfg.count)):
                        servers[rt].bursts(cfg.count, size, cfg.workers)
            except PointError as e:
                raise StudyError(f"runtimes: the {rt} bridge: {e}") from None
        for r in range(cfg.rounds):
            for rt in order(r):
                for size in cfg.sizes:
                    study.add(pt := burst_point(servers[rt], cfg, size, r))
                    say(_line(pt, f"bursts {size} B", "msg/s"))
                for e, m, w in pi_grid:
                    study.add(pt := pi_point(sup, rt, w, m, e, exact(m * e), r))
                    say(_line(pt, f"pi W={w} M={m} E={e}", "s"))
                for payload in cfg.ask_payloads:
                    study.add(pt := ask_point(sup, rt, cfg, payload, r, out))
                    say(_line(pt, f"ask {payload} B", "requests/s"))
        for rt, server in servers.items():
            sup.stop(server.child, grace=15)
            c = server.child
            doc["servers"] = {**doc.get("servers", {}), rt: {
                "cpu_s": round(c.usage.cpu_s, 3), "max_rss_mb": round(c.usage.max_rss_mb, 1),
                "exit_code": c.returncode}}
    doc["summary"] = summarise(doc["points"])
    return study.finish(studies.runtimes_table, studies.chart_runtimes)


def _line(pt: dict, what: str, unit: str) -> str:
    fig = (f"{pt['value']:,.4g} {unit}" if pt["status"] == "ok"
           else "failed: " + "; ".join(pt["errors"]))
    return f"runtimes round {pt['round'] + 1} {pt['runtime']:<5} {what}: {fig}"


def main(args) -> int:
    """``./bench runtimes``: the profile's study (default: the runtimes profile's)."""
    from burstbench.plots import studies

    cfg = RuntimesConfig.from_profile(args.profile)
    if args.rounds is not None:
        cfg.rounds = args.rounds
    cfg.validate()
    return results.study_command("runtimes", lambda run: run_study(run, cfg),
                                 studies.runtimes_table)
