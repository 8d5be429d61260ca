"""The Pi study over actors: the bridge's PiActors program on Akka or Pekko, one JVM per point."""

from __future__ import annotations

from burstbench import clients
from burstbench.infra.procs import Supervisor
from burstbench.studies.pi.config import ACTORS, TOLERANCE
from burstbench.studies.pi.point import PointError, wait_for


def run_akka_point(sup: Supervisor, w: int, m: int, e: int, exact: float, tag: str,
                   backend: str = "akka") -> dict:
    """One actors point: PiActors in its own JVM (start-up outside its timing), on the
    runtime ``backend`` names (akka or pekko)."""
    doc: dict = {"backend": backend, "workers": w, "messages": m, "elements": e,
                 "status": "failed", "errors": []}
    argv = ["java", *clients.JAVA_OPTS, "-cp", clients.java_cp(ACTORS[backend]),
            "burstbench.bridge.pi.PiActors", "--workers", str(w), "--messages", str(m),
            "--elements", str(e)]
    child = sup.start(f"{tag}-{backend}", argv, role="pi-actors")
    result: dict = {}

    def finished(c, ev, _got):
        if c is child and "pi" in ev:
            result.update(ev)
        return c is child and ev.get("event") == "exit"

    try:
        # the actors compute M*E terms twice (the run and PiActors' own exact loop)
        wait_for(sup, finished, 120 + m * e * 5e-8, "PiActors", [child])
        if not result:
            raise PointError(f"PiActors printed no result: {child.last_error()}")
        pi = float(result["pi"])
        doc.update(seconds=round(float(result["seconds"]), 4), pi=pi, exact=exact,
                   error=abs(pi - exact), actors_exact=result.get("exact"))
        if abs(pi - exact) > TOLERANCE:
            doc["errors"].append(f"pi {pi!r} differs from the exact partial sum {exact!r} by "
                                 f"{abs(pi - exact):.3g} (> {TOLERANCE:g})")
        doc["status"] = "ok" if not doc["errors"] else "failed"
    except PointError as ex:
        doc["errors"].append(str(ex))
    finally:
        sup.stop(child, grace=5)
        doc["resources"] = [{"name": child.name, "cpu_s": round(child.usage.cpu_s, 3),
                             "max_rss_mb": round(child.usage.max_rss_mb, 1),
                             "exit_code": child.returncode}]
    return doc
