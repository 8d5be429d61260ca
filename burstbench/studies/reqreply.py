"""The request/reply study: blocking round trips, one at a time, payload 1 B .. 1 MB.

Three modes of ``burstbench.bridge.reqreply.ReqReply`` (akka-bridge/README.md): ``temp-queue``
(Spring JmsTemplate.sendAndReceive: a temporary reply queue per request, as the
request/reply paper measured), ``reused-queue`` (one reply queue, replies matched by
correlation id) and ``actor-ask`` (Akka ask, no broker). The JMS modes run against a broker
the harness starts. Each point writes one latency (ns) per measured request; percentiles are
computed here from those records (nearest rank, burstbench.measure.measure.percentile).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from burstbench import clients, paths
from burstbench.infra import brokers
from burstbench.infra.procs import ChildExited, Supervisor
from burstbench.measure import measure, results
from burstbench.studies.studyfile import StudyFile, config_from_profile

BRIDGE = paths.ROOT / "akka-bridge"
# ReqReply on each actor runtime: the bridge's one source tree (pekko-bridge/pom.xml)
RUNTIMES = {rt: (module, clients.BRIDGE_RUNTIMES[rt])
            for rt, module in clients.BRIDGE_MODULES.items()}
MODES = ("temp-queue", "reused-queue", "actor-ask")
MAX_PAYLOAD = 1_000_000


class StudyError(ValueError):
    """Bad study parameters (reported as one line, exit 2)."""


@dataclass
class ReqReplyConfig:
    """Modes x payloads, with the number of measured requests and warm-up requests."""

    modes: list[str] = field(default_factory=lambda: list(MODES))
    payloads: list[int] = field(default_factory=lambda: [1, 10, 100, 1000, 10000, 100000])
    requests: int = 300
    warmup: int = 100
    # the factory behind JmsTemplate (ReqReply --spring-cf). "plain" is JmsTemplate used as it
    # comes, on a plain ConnectionFactory: a connection, a session and a temporary reply queue
    # per request, which is the setup the paper measured; "single" shares one connection.
    spring_cf: str = "plain"
    timeout: float = 30.0  # seconds per request before ReqReply gives up
    runtime: str = "akka"  # the actors' runtime (actor-ask), and the bridge every mode runs in

    def validate(self) -> None:
        bad = [m for m in self.modes if m not in MODES]
        if bad or not self.modes:
            raise StudyError(f"reqreply: modes are {', '.join(MODES)}; got {self.modes!r}")
        if not self.payloads or any(not isinstance(p, int) or not 0 <= p <= MAX_PAYLOAD
                                    for p in self.payloads):
            raise StudyError(f"reqreply: payloads must be integers 0..{MAX_PAYLOAD}: "
                             f"{self.payloads!r}")
        if self.requests < 1:
            raise StudyError(f"reqreply: requests must be >= 1: {self.requests}")
        if self.warmup < 0:
            raise StudyError(f"reqreply: warmup must be >= 0: {self.warmup}")
        if self.runtime not in RUNTIMES:
            raise StudyError(f"reqreply: runtime is {' or '.join(RUNTIMES)}: {self.runtime!r}")
        if self.spring_cf not in ("single", "caching", "plain"):
            raise StudyError(f"reqreply: spring_cf is single, caching or plain: "
                             f"{self.spring_cf!r}")

    @classmethod
    def from_profile(cls, profile: str) -> ReqReplyConfig:
        return config_from_profile(cls, "reqreply", profile, StudyError)


def latency_ms(records_ns: list[int]) -> dict:
    """Nearest-rank percentiles (ms) of the per-request latencies."""
    vals = sorted(records_ns)
    pct = measure.percentile
    return {
        "p50": pct(vals, 50) / 1e6, "p99": pct(vals, 99) / 1e6, "p99_9": pct(vals, 99.9) / 1e6,
        "max": vals[-1] / 1e6 if vals else None, "min": vals[0] / 1e6 if vals else None,
        "mean": sum(vals) / len(vals) / 1e6 if vals else None, "n": len(vals),
    }


def run_point(sup: Supervisor, broker, cfg: ReqReplyConfig, mode: str, payload: int,
              records_dir) -> dict:
    """One mode x payload: ReqReply in its own JVM; returns the point's result."""
    tag = f"{mode}-{payload}"
    rec = records_dir / f"{tag}.txt"
    argv = ["java", *clients.JAVA_OPTS, "-cp", clients.java_cp(RUNTIMES[cfg.runtime][0]),
            "burstbench.bridge.reqreply.ReqReply", "--mode", mode, "--payload", str(payload),
            "--requests", str(cfg.requests), "--warmup", str(cfg.warmup),
            "--records", str(rec), "--timeout", f"{cfg.timeout:g}"]
    if mode != "actor-ask":
        argv += ["--url", broker.openwire_url]
    if mode == "temp-queue":
        argv += ["--spring-cf", cfg.spring_cf]
    doc: dict = {"mode": mode, "payload": payload, "requests": cfg.requests,
                 "warmup": cfg.warmup, "status": "failed", "errors": []}
    if mode == "temp-queue":
        doc["spring_cf"] = cfg.spring_cf
    child = sup.start(f"reqreply-{tag}", argv, role="reqreply")
    out: dict = {}
    n = cfg.requests + cfg.warmup
    timeout = 120 + n * (0.05 + payload * 2e-7)
    exited: list[int] = []

    def take(c, ev: dict) -> None:
        if c is not child:
            return
        if "ops_per_s" in ev:
            out.clear()
            out.update(ev)
        if ev.get("event") == "exit":
            exited.append(ev.get("code"))

    try:
        if not sup.wait_until(lambda: bool(exited), timeout, take, watch=[child],
                              poll=timeout):
            doc["errors"].append("timed out")
    except ChildExited as e:
        doc["errors"].append(f"ReqReply exited with {e.code}: "
                             f"{child.last_error()} (log: {child.log_path})")
    finally:
        sup.stop(child, grace=5)
    if out and not doc["errors"]:
        try:
            lat = [int(line) for line in rec.read_text().split()]
        except (OSError, ValueError) as e:
            lat = []
            doc["errors"].append(f"records {rec}: {e}")
        if len(lat) != cfg.requests:
            doc["errors"].append(f"{len(lat)} latency records, expected {cfg.requests}")
        doc.update(ops_per_s=float(out["ops_per_s"]), seconds=float(out["seconds"]),
                   latency_ms=latency_ms(lat), records=str(rec.relative_to(records_dir.parent
                                                                            .parent)))
        if not doc["errors"] and doc["ops_per_s"] > 0:
            doc["status"] = "ok"
    doc["resources"] = {"cpu_s": round(child.usage.cpu_s, 3),
                        "max_rss_mb": round(child.usage.max_rss_mb, 1),
                        "exit_code": child.returncode}
    return doc


def summary(points: list[dict]) -> dict:
    """reused-queue / temp-queue ops/s at the smallest payload both measured."""
    ok = {(p["mode"], p["payload"]): p["ops_per_s"] for p in points if p["status"] == "ok"}
    both = sorted(pl for (m, pl) in ok if m == "temp-queue" and ("reused-queue", pl) in ok)
    if not both:
        return {}
    small = both[0]
    return {"small_payload": small,
            "reused_over_temp": ok[("reused-queue", small)] / ok[("temp-queue", small)]}


def run_study(run: results.Run, cfg: ReqReplyConfig, progress=None) -> dict:
    """Measure every mode x payload into ``run``: reqreply.json, .md, .html (run directory),
    records under reqreply/records, charts/reqreply.png."""
    from burstbench.plots import studies

    cfg.validate()
    say = progress or (lambda msg: print(msg, file=sys.stderr, flush=True))
    bridge, runtime = RUNTIMES[cfg.runtime]
    paths.require_built(bridge.name, bridge / "target" / "classes" / "burstbench")
    out = run.dir / "reqreply"
    records_dir = out / "records"
    records_dir.mkdir(parents=True, exist_ok=True)
    study = StudyFile.begin(run, "reqreply",
                            {"modes": cfg.modes, "payloads": cfg.payloads,
                             "requests": cfg.requests, "warmup": cfg.warmup,
                             "spring_cf": cfg.spring_cf, "runtime": cfg.runtime}, say)
    doc = study.doc

    with Supervisor(out / "logs") as sup:
        broker = None
        if any(m != "actor-ask" for m in cfg.modes):
            say("reqreply: starting the broker")
            broker = brokers.start(sup, brokers.BrokerSpec(name="reqreply"), out / "work")
        doc["versions"] = {
            "broker": {"name": "ActiveMQ Classic",
                       "version": broker.version if broker else brokers.ACTIVEMQ_VERSION},
            "bridge": f"{bridge.name} ReqReply: {runtime}, spring-jms 6.1, activemq-client 6.1.7",
            "runtimes": results.runtimes(),
        }
        with study.measuring():
            for payload in cfg.payloads:
                for mode in cfg.modes:
                    pt = run_point(sup, broker, cfg, mode, payload, records_dir)
                    study.add(pt)
                    if pt["status"] == "ok":
                        lat = pt["latency_ms"]
                        fig = (f"{pt['ops_per_s']:,.0f} ops/s, p50 {lat['p50']:.3f} ms, "
                               f"p99 {lat['p99']:.3f} ms")
                    else:
                        fig = "; ".join(pt["errors"])
                    say(f"reqreply {mode:<12} {payload:>8} B: {pt['status']}: {fig}")
    doc["summary"] = summary(doc["points"])
    return study.finish(studies.reqreply_table, studies.chart_reqreply)


def config_from_args(args) -> ReqReplyConfig:
    cfg = ReqReplyConfig.from_profile(args.profile)
    if args.modes:
        cfg.modes = [s.strip() for s in args.modes.split(",") if s.strip()]
    if args.payloads:
        try:
            cfg.payloads = [int(s.strip().replace("_", "")) for s in args.payloads.split(",")
                            if s.strip()]
        except ValueError:
            raise StudyError(f"--payloads: expected integers, comma-separated: "
                             f"{args.payloads!r}") from None
    for key in ("requests", "warmup", "spring_cf", "runtime"):
        v = getattr(args, key)
        if v is not None:
            setattr(cfg, key, v)
    cfg.validate()
    return cfg


def main(args) -> int:
    """``./bench reqreply``: every mode x payload of the profile (or the options)."""
    from burstbench.plots import studies

    cfg = config_from_args(args)
    return results.study_command("reqreply", lambda run: run_study(run, cfg),
                                 studies.reqreply_table)
