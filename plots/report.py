"""``results/<run-id>/report.html``: one self-contained page (charts embedded) per run."""

from __future__ import annotations

import base64
import html
import json
import math
from pathlib import Path

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; font-size: 0.82em; margin: 0.5em 0 1em; }
th, td { border: 1px solid #ddd; padding: 3px 7px; text-align: right; }
th { background: #f3f3f3; } td.l, th.l { text-align: left; }
tr.failed td { background: #fde8e8; } tr.skipped td { color: #888; }
figure { margin: 1em 0; } figure img { max-width: 100%; border: 1px solid #eee; }
.ok { color: #1a7f37; } .bad { color: #b42318; font-weight: bold; }
code { background: #f5f5f5; padding: 0 3px; }
"""


def _num(v, digits=0) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return f"{v:,.{digits}f}"


def _img(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode()
    return (f'<figure><img alt="{html.escape(path.stem)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{html.escape(path.name)}</figcaption></figure>")


def _md_table(text: str) -> str:
    """A Markdown pipe table (as the studies write them) as HTML; other lines as paragraphs."""
    out, rows = [], []

    def flush():
        if rows:
            head, body = rows[0], [r for r in rows[1:] if not set("".join(r)) <= set("-: ")]
            out.append("<table><tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in head)
                       + "</tr>" + "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>"
                                                             for c in r) + "</tr>"
                                           for r in body) + "</table>")
            rows.clear()

    for line in text.splitlines():
        if line.strip().startswith("|"):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
            continue
        flush()
        if line.strip().startswith("#"):
            out.append(f"<h3>{html.escape(line.strip('# ').strip())}</h3>")
        elif line.strip():
            out.append(f"<p>{html.escape(line)}</p>")
    flush()
    return "\n".join(out)


def render(run_dir: Path) -> Path:
    run_dir = Path(run_dir)
    manifest = json.loads((run_dir / "run.json").read_text())
    points = [json.loads(p.read_text()) for p in sorted((run_dir / "points").glob("*.json"))]
    m = manifest.get("machine", {})
    versions: dict = {}
    broker = "?"
    for p in points:
        v = p.get("versions") or {}
        broker = (v.get("broker") or {}).get("version") or broker
        for name, info in (v.get("clients") or {}).items():
            versions[name] = info
    totals = {"sent": 0, "received": 0, "lost": 0, "duplicates": 0, "redelivered": 0}
    statuses: dict[str, int] = {}
    for p in points:
        statuses[p.get("status", "?")] = statuses.get(p.get("status", "?"), 0) + 1
        for k in totals:
            totals[k] += (p.get("accounting") or {}).get(k, 0) or 0

    parts = [(f"<!doctype html><html><head><meta charset='utf-8'><title>burstbench "
             f"{html.escape(manifest.get('run_id', ''))}</title><style>{_STYLE}</style></head>"
             "<body>"),
             f"<h1>burstbench run {html.escape(manifest.get('run_id', ''))}</h1>",
             (f"<p>Status <b>{html.escape(str(manifest.get('status')))}</b>; "
             f"{len(points)} points ({', '.join(f'{v} {k}' for k, v in statuses.items())}); "
             f"profile {html.escape(str(manifest.get('profile', '-')))}; started "
             f"{html.escape(str(manifest.get('started', '')))}.</p>")]

    lost_cls = "ok" if totals["lost"] == 0 else "bad"
    parts.append("<h2>Accounting</h2><table><tr>" + "".join(f"<th>{k}</th>" for k in totals)
                 + "</tr><tr>" + "".join(
                     f"<td class='{lost_cls if k == 'lost' else ''}'>{_num(v)}</td>"
                     for k, v in totals.items()) + "</tr></table>")

    charts = sorted((run_dir / "charts").glob("*.png"))
    if charts:
        parts.append("<h2>Charts</h2>" + "".join(_img(c) for c in charts))

    for name, title in (("pi.md", "Pi study"), ("reqreply.md", "Request/reply study"),
                        ("chaos.md", "Reliability")):
        f = run_dir / name
        if f.exists():
            parts.append(f"<h2>{title}</h2>" + _md_table(f.read_text()))

    if points:
        cols = ("point", "status", "send msg/s", "recv msg/s (min-max)", "p50 ms", "p99 ms",
                "sent", "received", "lost", "dup", "busiest")
        rows = []
        for p in points:
            t, lat, a = p.get("throughput") or {}, p.get("latency_ms") or {}, \
                p.get("accounting") or {}
            if p.get("status") != "ok":  # a failed point's rates are no figure: counts only
                t, lat = {}, {}
            busy = p.get("busiest") or {}
            rows.append(
                f"<tr class='{html.escape(p.get('status', ''))}'>"
                f"<td class='l'>{html.escape(p.get('point', ''))}</td>"
                f"<td class='l'>{html.escape(p.get('status', ''))}</td>"
                f"<td>{_num(t.get('send_msgs_per_s'))}</td>"
                f"<td>{_num(t.get('recv_msgs_per_s'))} ({_num(t.get('recv_min'))}-"
                f"{_num(t.get('recv_max'))})</td>"
                f"<td>{_num(lat.get('p50'), 2)}</td><td>{_num(lat.get('p99'), 2)}</td>"
                f"<td>{_num(a.get('sent'))}</td><td>{_num(a.get('received'))}</td>"
                f"<td>{_num(a.get('lost'))}</td><td>{_num(a.get('duplicates'))}</td>"
                f"<td class='l'>{html.escape(str(busy.get('process', '')))} "
                f"{_num(busy.get('cpu_share'), 2) if busy else ''}</td></tr>")
            for err in p.get("errors") or []:
                rows.append(f"<tr class='failed'><td class='l' colspan='{len(cols)}'>"
                            f"{html.escape(err)}</td></tr>")
        parts.append("<h2>Points</h2><table><tr>" + "".join(
            f"<th class='l'>{c}</th>" for c in cols) + "</tr>" + "".join(rows) + "</table>")

    env_rows = [("broker", f"ActiveMQ Classic {broker}"), ("CPU", m.get("cpu")),
                ("cores", m.get("cores")), ("memory GiB", m.get("memory_gib")),
                ("kernel", m.get("kernel")), ("commit", manifest.get("git_commit")),
                ("command", " ".join(manifest.get("command") or []))]
    env_rows += [(f"runtime {k}", v) for k, v in (manifest.get("runtimes") or {}).items()]
    env_rows += [(f"client {k}", f"{v.get('library', '')} on {v.get('runtime', '')}"
                  if isinstance(v, dict) else v) for k, v in sorted(versions.items())]
    parts.append("<h2>Environment</h2><table>" + "".join(
        f"<tr><th class='l'>{html.escape(str(k))}</th><td class='l'>"
        f"{html.escape(str(v))}</td></tr>" for k, v in env_rows) + "</table>")
    parts.append("</body></html>")
    out = run_dir / "report.html"
    out.write_text("\n".join(parts))
    return out
