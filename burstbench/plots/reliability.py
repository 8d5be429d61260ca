"""The reliability table's head and rows, from results as ``chaos.json`` keeps them.

Imports nothing: the run's HTML report (burstbench/plots/report.py) draws the table from the
result file without loading the scenarios that inject the faults.
"""

from __future__ import annotations

HEAD = ["scenario", "client", "status", "sent", "received", "lost", "duplicates", "redelivered",
        "unconfirmed (arrived)", "recovery s", "notes"]


def rows(results: list[dict]) -> list[list[str]]:
    """One row per result (``Result.as_dict`` with its ``fault_words``)."""
    out = []
    for r in results:
        t = r.get("tally")
        n = _num if t else _dash
        rec = "-" if r.get("recovery_s") is None else f"{r['recovery_s']:.2f}"
        note = r.get("reason") or "; ".join((r.get("errors") or [])[:1]
                                            + list(r.get("fault_words") or []))
        unc = f"{t['unconfirmed']:,} ({t['unconfirmed_received']:,})" if t else "-"
        out.append([r["scenario"], r["client"], r["status"], n(t and t["sent"]),
                    n(t and t["received"]), n(t and t["lost"]), n(t and t["duplicates"]),
                    n(t and t["redelivered"]), unc, rec, note])
    return out


def _num(v: int) -> str:
    return f"{v:,}"


def _dash(_v) -> str:
    return "-"
