"""What a chaos run shows: the reliability table, a scenario's readable summary, and the
run's ``chaos.json`` and ``chaos.md``."""

from __future__ import annotations

import json
from pathlib import Path

from burstbench.faults.failover_pair import FAILOVER_HOW
from burstbench.faults.reckon import RULE, Result
from burstbench.faults.registry import SCENARIOS
from burstbench.measure.results import json_safe
from burstbench.plots.reliability import HEAD, rows


def description() -> dict[str, str]:
    """Scenario -> its fault in one line."""
    return {name: cls.description for name, cls in SCENARIOS.items()}


def table(results: list[Result]) -> str:
    """The reliability table, Markdown."""
    lines = ["| " + " | ".join(HEAD) + " |", "|" + "---|" * len(HEAD)]
    for row in rows([_as_dict(r) for r in results]):
        lines.append("| " + " | ".join(c.replace("|", "/") for c in row) + " |")
    return "\n".join(lines)


def _as_dict(r: Result) -> dict:
    """A result as chaos.json keeps it: its fields and the fault in a few words."""
    return {**r.as_dict(), "fault_words": _fault_words(r)}


def _fault_words(r: Result) -> list[str]:
    scenario = SCENARIOS.get(r.scenario)
    return scenario.fault_words(r.fault) if scenario else []


def report(r: Result) -> str:
    """A scenario's readable summary."""
    lines = [f"chaos {r.scenario} ({r.client}): {r.status.upper()}"
             + (f": {r.reason}" if r.reason else "")]
    if r.status in ("skipped", "n/a"):
        return lines[0]
    lines.append(f"  fault: {SCENARIOS[r.scenario].description}")
    t = r.tally
    if t:
        lines.append(
            f"  sent {t.sent:,}  received {t.received:,}  lost {t.lost:,}  duplicates "
            f"{t.duplicates:,}  redelivered {t.redelivered:,}  unconfirmed {t.unconfirmed:,} "
            f"({t.unconfirmed_received:,} arrived)  foreign {t.foreign:,}")
        lines.append("  per consumer (distinct): " + ", ".join(
            f"{k} {v:,}" for k, v in t.by_consumer.items()))
    if r.recovery_s is not None:
        how = SCENARIOS[r.scenario].recovery
        lines.append(f"  recovery {r.recovery_s:.2f} s ({how})")
    for w in _fault_words(r):
        lines.append(f"  {w}")
    for note in r.notes:
        lines.append(f"  note: {note}")
    lines.append(f"  rule: {RULE}")
    for e in r.errors:
        lines.append(f"  error: {e}")
    lines.append(f"  logs and records: {r.dir}")
    return "\n".join(lines)


def write(run_dir: Path, results: list[Result], command: list[str]) -> None:
    """``chaos.json`` and ``chaos.md`` in the run directory."""
    doc = {"schema_version": 1, "command": command, "rule": RULE,
           "scenarios": description(), "failover_how": FAILOVER_HOW,
           "results": [_as_dict(r) for r in results]}
    (run_dir / "chaos.json").write_text(json.dumps(json_safe(doc), indent=2))
    md = ["# Reliability under faults", "", table(results), "",
          f"Rule: {RULE}.", "", "Scenarios:", ""]
    md += [f"- **{k}**: {v}" for k, v in description().items()]
    md += ["", "failover-pair, each library's own failover (clients/contract.md):", ""]
    md += [f"- {lang}: {how}" for lang, how in FAILOVER_HOW.items()]
    (run_dir / "chaos.md").write_text("\n".join(md) + "\n")
