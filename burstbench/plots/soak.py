"""The soak's chart: each broker's heap, open files and store over time, faults marked.

Reads only ``soak.json`` (burstbench/faults/soak.py writes it); a leak shows as a slope that the
restarts (broker-kill) do not explain.
"""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from burstbench.plots import style
from burstbench.plots.figure import finish_figure

FAULT_COLORS = {"broker-kill": "#c0392b", "link-cut": "#8e44ad", "consumer-kill": "#d68910",
                "producer-kill": "#2471a3"}
MIB = 1 << 20


def series(doc: dict) -> dict[str, dict[str, list[tuple[float, float]]]]:
    """broker -> metric -> [(seconds since the first sample, value)], from the stats lines."""
    stats = [s for s in doc["result"]["fault"].get("stats", []) if "error" not in s]
    if not stats:
        return {}
    t0 = min(s["t_ns"] for s in stats)
    out: dict[str, dict[str, list]] = {}
    for s in stats:
        m = out.setdefault(s["broker"], {"heap MiB": [], "open files": [], "store MiB": []})
        t = (s["t_ns"] - t0) / 1e9
        if "heap_used" in s:
            m["heap MiB"].append((t, s["heap_used"] / MIB))
        if "open_files" in s:
            m["open files"].append((t, s["open_files"]))
        if "usage" in s:
            m["store MiB"].append((t, s["usage"]["store_bytes"] / MIB))
    return out


def draw(json_path: Path, png_path: Path) -> Path:
    doc = json.loads(Path(json_path).read_text())
    data = series(doc)
    if not data:
        raise ValueError("no broker stats in the run")
    stats = doc["result"]["fault"]["stats"]
    t0 = min(s["t_ns"] for s in stats if "error" not in s)
    metrics = ["heap MiB", "open files", "store MiB"]
    fig, axes = plt.subplots(len(metrics), 1, figsize=(9, 7.5), sharex=True)
    styles = ["-", "--", ":"]
    for ax, metric in zip(axes, metrics, strict=True):
        for i, (broker, m) in enumerate(sorted(data.items())):
            pts = m[metric]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], styles[i % 3], marker=".",
                        markersize=3, color="#333333", label=broker)
        ax.set_ylabel(metric)
        ax.yaxis.set_major_formatter(style.NUMBER)
        ax.grid(alpha=0.3)
        seen = set()
        for f in doc["result"]["fault"].get("faults", []):
            if not f.get("t_ns"):
                continue
            x = (f["t_ns"] - t0) / 1e9
            label = f["kind"] if f["kind"] not in seen else None
            seen.add(f["kind"])
            ax.axvline(x, color=FAULT_COLORS.get(f["kind"], "#777777"), linewidth=1.2,
                       alpha=0.8, label=label)
    handles, labels = axes[0].get_legend_handles_labels()
    style.legend_beside(fig, handles, labels)
    axes[-1].set_xlabel("seconds since the first sample")
    spec = doc.get("spec", {})
    t = doc["result"].get("tally") or {}
    n_faults = len(doc["result"]["fault"].get("faults", []))
    langs = spec.get("languages") or []
    who = (", ".join(langs) + ", each producing and consuming") if langs else "not recorded"
    fig.suptitle(f"Soak: brokers' heap, open files and store over time (seed {spec.get('seed')}, "
                 f"{spec.get('duration_s', 0):,.0f} s, {n_faults} faults; lost "
                 f"{_count(t.get('lost'))}, duplicates {_count(t.get('duplicates'))})\n"
                 f"clients: {who}", fontsize=10)
    # what ran, never where: the command's paths are the drawing machine's, not the reader's
    command = " ".join(["bench", *(doc.get("command") or ["bench", "chaos", "soak"])[1:]])
    run_id = doc.get("run_id") or Path(json_path).resolve().parent.name
    foot = f"{command} | run {run_id} | drawn at {style.drawing_commit()}"
    return finish_figure(fig, Path(png_path), foot)


def _count(v) -> str:
    return f"{v:,}" if isinstance(v, int) else "-"
