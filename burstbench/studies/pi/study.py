"""The Pi study: the grid of points over both backends into one result file, its tables
and chart; ``./bench pi``."""

from __future__ import annotations

import itertools
import sys

from burstbench import clients, paths
from burstbench.infra import brokers
from burstbench.infra.procs import Supervisor
from burstbench.measure import results
from burstbench.studies.pi.activemq import missing_toolchains, run_broker_point
from burstbench.studies.pi.akka import run_akka_point
from burstbench.studies.pi.config import ACTORS, TOLERANCE, PiConfig, StudyError, config_from_args
from burstbench.studies.pi.maths import ExactSums
from burstbench.studies.studyfile import StudyFile

RUNTIMES = {rt: f"{clients.BRIDGE_RUNTIMES[rt]} ({module.name} PiActors)"
            for rt, module in clients.BRIDGE_MODULES.items()}


def versions(broker_version: str, cfg: PiConfig) -> dict:
    return {
        "broker": {"name": "ActiveMQ Classic", "version": broker_version},
        "clients": {n: clients.version(n) for n in cfg.languages},
        **{b: RUNTIMES[b] for b in ACTORS if b in cfg.backends},
        "runtimes": results.runtimes(),
    }


def run_study(run: results.Run, cfg: PiConfig, progress=None) -> dict:
    """Measure the grid into ``run``: writes pi.json, pi.md, pi.html and charts/pi.png (logs
    under pi/).

    Returns the document; its ``status`` is ``ok`` only if every point is.
    """
    from burstbench.plots import studies

    cfg.validate()
    say = progress or (lambda msg: print(msg, file=sys.stderr, flush=True))
    if "activemq" in cfg.backends:
        why = missing_toolchains(cfg.languages)
        if why:
            raise StudyError("; ".join(why))
    for b in (b for b in ACTORS if b in cfg.backends):
        paths.require_built(ACTORS[b].name, ACTORS[b] / "target" / "classes" / "burstbench")
    out = run.dir / "pi"
    out.mkdir(parents=True, exist_ok=True)
    exact = ExactSums()
    grid = list(itertools.product(cfg.elements, cfg.messages, cfg.workers))
    procs_note = ""
    if "openwire-jms" in cfg.languages:
        procs_note = (f"Java workers run {cfg.java_threads} per JVM (--threads): "
                      f"W Java workers = ceil(W/{cfg.java_threads}) processes")
    study = StudyFile.begin(
        run, "pi",
        {"workers": cfg.workers, "messages": cfg.messages, "elements": cfg.elements,
         "languages": cfg.languages, "java_threads": cfg.java_threads,
         "prefetch": cfg.prefetch, "backends": cfg.backends, "tolerance": TOLERANCE},
        say,
        timing="ActiveMQ: creator's first send -> collector's last result, every process "
               "already started and connected (setup_seconds beside it); Akka: creating "
               "the actors -> the collector's last sum (JVM start-up outside)",
        notes=[n for n in (procs_note,) if n])
    doc = study.doc

    with Supervisor(out / "logs") as sup:
        broker = None
        if "activemq" in cfg.backends:
            say("pi: starting the broker")
            broker = brokers.start(sup, brokers.BrokerSpec(name="pi"), out / "work")
        doc["versions"] = versions(broker.version if broker else brokers.ACTIVEMQ_VERSION, cfg)
        with study.measuring():
            for e, m, w in grid:
                ex = exact(m * e)
                for backend in cfg.backends:
                    tag = f"{backend}-w{w}-m{m}-e{e}"
                    if backend == "activemq":
                        pt = run_broker_point(sup, broker, cfg, w, m, e, ex,
                                              lambda msg, t=tag: say(f"  [{t}] {msg}"), tag)
                    else:
                        pt = run_akka_point(sup, w, m, e, ex, tag, backend)
                    pt["paper_seconds"] = studies.paper_pi(backend, e, w, m)
                    study.add(pt)
                    figure = (f"{pt['seconds']:.3f} s" if "seconds" in pt else "no figure")
                    err = f" error {pt['error']:.1e}" if "error" in pt else ""
                    say(f"pi {backend:<8} W={w:<3} M={m:<6} E={e:<7}: {pt['status']}: "
                        f"{figure}{err}" + (f" ({'; '.join(pt['errors'])})"
                                           if pt["errors"] else ""))
    return study.finish(studies.pi_tables, studies.chart_pi)


def main(args) -> int:
    """``./bench pi``: the grid from the profile (or the options), tables on stdout."""
    from burstbench.plots import studies

    cfg = config_from_args(args)
    return results.study_command("pi", lambda run: run_study(run, cfg), studies.pi_tables)
