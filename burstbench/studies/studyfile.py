"""A study's result file (``pi.json``, ``reqreply.json``), written as it grows, and its ending:
the status, the tables beside it and its chart. The Pi and request/reply studies share it."""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path

from burstbench import profiles
from burstbench.infra.procs import Interrupted
from burstbench.measure import results


def config_from_profile(cls, kind: str, profile: str, error: type[ValueError]):
    """A study's configuration (a dataclass ``cls``) from the profile's ``studies.<kind>``
    section; a missing section or an unknown key is ``error``, one line."""
    doc = (profiles.load_profile(profile).get("studies") or {}).get(kind)
    if not isinstance(doc, dict):
        raise error(f"profile {profile} has no studies.{kind} section")
    unknown = set(doc) - set(cls.__dataclass_fields__)
    if unknown:
        raise error(f"profile {profile}: studies.{kind}: unknown key(s) "
                    f"{', '.join(sorted(unknown))}")
    return cls(**doc)


class StudyFile:
    """``doc`` (with ``study`` and ``points``) saved to ``RUN/<study>.json`` after every point.

    ``with study.measuring(): ...`` marks the file ``incomplete`` if the grid is interrupted;
    ``finish(...)`` writes the status, the tables (``.md``, ``.html``) and the chart."""

    def __init__(self, run_dir: Path, doc: dict, say):
        self.doc = doc
        self.kind = doc["study"]
        self.path = Path(run_dir) / f"{self.kind}.json"
        self.say = say

    @classmethod
    def begin(cls, run: results.Run, kind: str, parameters: dict, say, **more) -> StudyFile:
        """A new ``running`` document for ``run``: the result file's common head, the
        ``parameters``, then ``more`` keys, then the (empty) points."""
        doc = {
            "schema_version": results.SCHEMA_VERSION, "study": kind, "run_id": run.id,
            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "machine": results.machine(),
            "git_commit": results.git_commit(), "status": "running",
            "parameters": parameters, **more, "points": [],
        }
        return cls(run.dir, doc, say)

    def save(self) -> None:
        """Write the document whole (a reader never sees half a file)."""
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(results.json_safe(self.doc), indent=2))
        tmp.replace(self.path)

    def add(self, point: dict) -> None:
        self.doc["points"].append(point)
        self.save()

    @contextlib.contextmanager
    def measuring(self):
        """The grid's points; Ctrl-C (or SIGTERM) leaves the file saved as ``incomplete``."""
        try:
            yield self
        except (Interrupted, KeyboardInterrupt):
            self.doc["status"] = "incomplete"
            self.save()
            raise

    def finish(self, table, chart) -> dict:
        """Status (``ok`` only if every point is), end time, the file; then the tables
        ``table(doc) -> (markdown, html)`` beside it and ``chart(doc, png)`` under charts/ (a
        chart that fails is said, never hiding the study's outcome). Returns the document."""
        doc = self.doc
        doc["status"] = "failed" if any(p["status"] != "ok" for p in doc["points"]) else "ok"
        doc["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        self.save()
        md, html = table(doc)
        self.path.with_suffix(".md").write_text(md)
        self.path.with_suffix(".html").write_text(html)
        try:
            chart(doc, self.path.parent / "charts" / f"{self.kind}.png")
        except Exception as e:  # noqa: BLE001 - a chart must never hide the study's outcome
            self.say(f"{self.kind}: chart failed: {e}")
        return doc
