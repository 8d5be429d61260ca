"""Tables and charts of the Pi and request/reply studies, from their result files alone.

``pi.json`` and ``reqreply.json`` in a run directory (written by burstbench/studies/pi/
and burstbench/studies/reqreply.py) -> Markdown/HTML tables and ``charts/pi.png``,
``charts/reqreply.png``, with the papers' figures (burstbench/plots/references.yaml) beside ours.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import yaml

from burstbench.plots import style
from burstbench.plots.figure import brokers_named, finish_figure
from burstbench.plots.pages import render_blocks

REFERENCES = yaml.safe_load((Path(__file__).parent / "references.yaml").read_text())
PI_REF = REFERENCES["pi"]
RR_REF = REFERENCES["reqreply"]
BACKEND_LABEL = {"activemq": "ActiveMQ", "akka": "Akka", "pekko": "Pekko"}
MODES = ("temp-queue", "reused-queue", "actor-ask")


def paper_pi(backend: str, elements: int, workers: int, messages: int) -> float | None:
    """The Pi paper's seconds for this point (Tables I-IV), or None if it has none."""
    table = PI_REF.get(backend, {}).get(elements)
    if table is None or workers not in PI_REF["workers"] or messages not in PI_REF["messages"]:
        return None
    return table[PI_REF["messages"].index(messages)][PI_REF["workers"].index(workers)]


def _footer(doc: dict) -> str:
    m = doc.get("machine", {})
    return (f"{brokers_named([doc])} | {m.get('cpu', '?')} | {m.get('cores', '?')} cores | "
            f"{(doc.get('started') or '')[:10]} | commit {doc.get('git_commit', '?')} | "
            f"run {doc.get('run_id')}{style.drawn_at(doc.get('git_commit'))}")


def _s(v) -> str:
    return "-" if v is None else f"{v:.2f}" if v >= 0.995 else f"{v:.3f}"


# -- Pi ------------------------------------------------------------------------------------

def _pi_cells(doc: dict) -> dict:
    return {(p["backend"], p["elements"], p["workers"], p["messages"]): p for p in doc["points"]}


def pi_blocks(doc: dict) -> list[dict]:
    """The paper's layout (messages x workers, seconds, per elements value), ActiveMQ then
    Akka, each cell ``ours (paper)``, as blocks (burstbench/plots/pages.py)."""
    par = doc["parameters"]
    cells = _pi_cells(doc)
    backends = [b for b in BACKEND_LABEL if b in par["backends"]]
    head = ["messages"] + [f"{BACKEND_LABEL[b]} W={w}" for b in backends for w in par["workers"]]
    out = [{"type": "heading", "level": 1,
            "text": f"Leibniz Pi: seconds, ours (paper)  [{doc.get('status', '?')}]"},
           {"type": "para",
            "text": f"Run {doc.get('run_id')}; worker languages: {', '.join(par['languages'])}; "
                    f"prefetch {par['prefetch']}. Paper: {PI_REF['citation']}; "
                    f"{PI_REF['source']}."},
           {"type": "para", "text": f"Timing: {doc.get('timing', '')}. Paper: {PI_REF['timing']}."}]
    out += [{"type": "para", "text": f"Note: {note}."} for note in doc.get("notes", [])]
    for e in par["elements"]:
        rows = []
        for m in par["messages"]:
            row = [f"{m:,}"]
            for b in backends:
                for w in par["workers"]:
                    p = cells.get((b, e, w, m))
                    ours = ("FAILED" if p and p["status"] != "ok" else _s(p.get("seconds"))
                            if p else "-")
                    ref = paper_pi(b, e, w, m)
                    row.append(ours + (f" ({_s(ref)})" if ref is not None else ""))
            rows.append(row)
        out += [{"type": "heading", "level": 2, "text": f"{e:,} elements per message"},
                {"type": "table", "head": head, "rows": rows}]
    bad = [p for p in doc["points"] if p["status"] != "ok"]
    if bad:
        out.append({"type": "list", "title": "Failed points:", "items": [
            f"{p['backend']} W={p['workers']} M={p['messages']} E={p['elements']}: "
            f"{'; '.join(p['errors'])}" for p in bad]})
    return out


def _md_html(blocks: list[dict]) -> tuple[str, str]:
    return render_blocks(blocks, "md") + "\n", render_blocks(blocks, "html") + "\n"


def pi_tables(doc: dict) -> tuple[str, str]:
    """``pi_blocks`` as (Markdown, HTML fragment)."""
    return _md_html(pi_blocks(doc))


def chart_pi(doc: dict, path: Path) -> Path:
    """Seconds vs messages (log-log), one panel per elements value; ActiveMQ in its workers'
    language colour, Akka in Akka's, a line style per number of workers; the paper's figures
    as hollow markers of the same colour and shape."""
    par = doc["parameters"]
    cells = _pi_cells(doc)
    els = par["elements"]
    fig, axes = plt.subplots(1, len(els), figsize=(max(8.5, 6.4 * len(els)) + 2.6, 5.2),
                             squeeze=False)
    langs = {style.client_of(n).client.language for n in par.get("languages") or []
             if style.client_of(n)}
    color = {"activemq": style.LANGUAGE_COLORS.get(next(iter(langs)), style.NEUTRAL[0])
             if len(langs) == 1 else style.NEUTRAL[0],
             "akka": style.LANGUAGE_COLORS["akka"], "pekko": style.LANGUAGE_COLORS["pekko"]}
    for ax, e in zip(axes[0], els):
        for i, w in enumerate(par["workers"]):
            ls, mk = ("-", "--", ":")[i % 3], "osD"[i % 3]
            for b in par["backends"]:
                col = color[b]
                pts = [(m, cells.get((b, e, w, m))) for m in par["messages"]]
                xs = [m for m, p in pts if p and p.get("seconds") and p["status"] == "ok"]
                ys = [p["seconds"] for m, p in pts if p and p.get("seconds")
                      and p["status"] == "ok"]
                if xs:
                    ax.plot(xs, ys, linestyle=ls, marker=mk, color=col, markersize=4,
                            label=f"{BACKEND_LABEL[b]} W={w} (ours)")
                refs = [(m, paper_pi(b, e, w, m)) for m in PI_REF["messages"]]
                refs = [(m, r) for m, r in refs if r is not None]
                if refs:
                    ax.plot([m for m, _ in refs], [r for _, r in refs], linestyle="none",
                            marker=mk, markerfacecolor="none", color=col, markersize=8,
                            label=f"{BACKEND_LABEL[b]} W={w} (paper)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("work messages (log)")
        ax.set_ylabel("seconds (log)")
        ax.set_title(f"Leibniz Pi, {e:,} elements per message")
        ax.grid(True, which="both", alpha=0.25)
    handles, labels = axes[0][0].get_legend_handles_labels()
    style.legend_beside(fig, handles, labels)
    langs_text = ", ".join(par["languages"])
    actors = " and ".join(BACKEND_LABEL[b] for b in ("akka", "pekko") if b in par["backends"])
    fig.suptitle(f"Seconds to compute Leibniz Pi over ActiveMQ vs {actors or 'Akka'} actors; "
                 f"hollow markers: {PI_REF['short']}'s paper (ActiveMQ 5.8 / Akka 2.0, 2-CPU "
                 f"VM)\nclients: {langs_text} workers and master; {actors or 'Akka'}'s own "
                 "actors", fontsize=9)
    return finish_figure(fig, path, _footer(doc))


# -- request/reply -------------------------------------------------------------------------

def reqreply_blocks(doc: dict) -> list[dict]:
    """Per mode and payload: ops/s and latency percentiles (ms), as blocks."""
    head = ["mode", "payload B", "requests", "ops/s", "p50 ms", "p99 ms", "p99.9 ms", "max ms"]
    rows = []
    for p in doc["points"]:
        lat = p.get("latency_ms") or {}
        ok = p["status"] == "ok"
        rows.append([p["mode"], f"{p['payload']:,}", f"{p.get('requests', 0):,}",
                     f"{p['ops_per_s']:,.0f}" if ok else "FAILED",
                     *(f"{lat[k]:.3f}" if ok and lat.get(k) is not None else "-"
                       for k in ("p50", "p99", "p99_9", "max"))])
    out = [{"type": "heading", "level": 1,
            "text": f"Request/reply: blocking, one at a time  [{doc.get('status', '?')}]"},
           {"type": "para",
            "text": f"Run {doc.get('run_id')}. Paper: {RR_REF['citation']}; {RR_REF['source']}: "
                    f"JmsTemplate capped at about {RR_REF['jmstemplate_ops_per_s']} ops/s; Akka "
                    f"{RR_REF['akka_vs_jmstemplate_throughput'][0]}-"
                    f"{RR_REF['akka_vs_jmstemplate_throughput'][1]}x its throughput."}]
    ratio = doc.get("summary", {}).get("reused_over_temp")
    if ratio:
        out.append({"type": "para",
                    "text": f"reused-queue / temp-queue ops/s at "
                            f"{doc['summary']['small_payload']} B: {ratio:.1f}x"})
    out.append({"type": "table", "head": head, "rows": rows})
    bad = [p for p in doc["points"] if p["status"] != "ok"]
    if bad:
        out.append({"type": "list", "title": "Failed points:", "items": [
            f"{p['mode']} {p['payload']} B: {'; '.join(p['errors'])}" for p in bad]})
    return out


def reqreply_table(doc: dict) -> tuple[str, str]:
    """``reqreply_blocks`` as (Markdown, HTML fragment)."""
    return _md_html(reqreply_blocks(doc))


def chart_reqreply(doc: dict, path: Path) -> Path:
    """Two panels over payload (log x): latency p50 (solid) / p99 (dotted), and ops/s; the
    JMS modes in Java's colour (the reused queue darker), Akka ask in Akka's; the paper's
    JmsTemplate figure as crosses on the ops/s panel."""
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(14.5, 4.8))
    runtime = (doc.get("parameters") or {}).get("runtime") or "akka"  # akka or pekko
    actors = BACKEND_LABEL[runtime]
    java = style.LANGUAGE_COLORS["java"]
    look = {"temp-queue": (java, "s"), "reused-queue": (style.darker(java), "o"),
            "actor-ask": (style.LANGUAGE_COLORS[runtime], "^")}
    for mode in MODES:
        pts = sorted((p for p in doc["points"] if p["mode"] == mode and p["status"] == "ok"),
                     key=lambda p: p["payload"])
        if not pts:
            continue
        xs = [max(p["payload"], 1) for p in pts]
        c, mk = look[mode]
        a1.plot(xs, [p["latency_ms"]["p50"] for p in pts], "-", marker=mk, color=c,
                markersize=4, label=f"{mode} p50")
        a1.plot(xs, [p["latency_ms"]["p99"] for p in pts], ":", marker=mk, color=c,
                markersize=4, markerfacecolor="none", label=f"{mode} p99")
        a2.plot(xs, [p["ops_per_s"] for p in pts], "-", marker=mk, color=c, markersize=4,
                label=mode)
    payloads = sorted({max(p["payload"], 1) for p in doc["points"]})
    if payloads:
        small = [x for x in payloads if x <= 1000] or payloads[:1]
        a2.plot(small, [RR_REF["jmstemplate_ops_per_s"]] * len(small), linestyle="none",
                marker="x", markersize=8, color=look["temp-queue"][0],
                label=f"{RR_REF['short']}: JmsTemplate "
                      f"~{RR_REF['jmstemplate_ops_per_s']} ops/s (cap)")
    for ax, yl, t in ((a1, "latency ms (log)", "latency per request"),
                      (a2, "requests/s (log)", "throughput, one request at a time")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("payload bytes (log)")
        ax.set_ylabel(yl)
        ax.set_title(t)
        ax.grid(True, which="both", alpha=0.25)
    h1, l1 = a1.get_legend_handles_labels()
    h2, l2 = a2.get_legend_handles_labels()
    # the ops/s panel's lines are the latency panel's modes; its crosses are the paper's
    paper = [(h, lab) for h, lab in zip(h2, l2) if lab not in MODES]
    style.legend_beside(fig, h1 + [h for h, _ in paper], l1 + [lab for _, lab in paper])
    fig.suptitle("Blocking request/reply, latency and requests/s: Spring JmsTemplate (temporary "
                 f"queue per request), a reused reply queue, {actors} ask\nclients: "
                 f"{runtime}-bridge's ReqReply (Java: spring-jms over activemq-client, OpenWire; "
                 f"{actors} ask, no broker)", fontsize=9)
    return finish_figure(fig, path, _footer(doc))


def render_studies(run) -> list[Path]:
    """Re-draw the study charts and tables a run's result files support (``run`` is a
    ``burstbench.measure.results.RunFiles``)."""
    written = []
    for name, tables, chart in (("pi", pi_tables, chart_pi),
                                ("reqreply", reqreply_table, chart_reqreply),
                                ("runtimes", runtimes_table, chart_runtimes)):
        doc = run.studies.get(name)
        if doc is None:
            continue
        md, h = tables(doc)
        (run.dir / f"{name}.md").write_text(md)
        (run.dir / f"{name}.html").write_text(h)
        written.append(chart(doc, run.dir / "charts" / f"{name}.png"))
    return written


# -- Akka vs Pekko ---------------------------------------------------------------------------

RUNTIMES = ("akka", "pekko")


def _mm(s: dict | None) -> str:
    """``median (min-max)`` at three significant figures."""
    from burstbench.plots.quoted import sig

    if not s or s.get("median") is None:
        return "-"
    return f"{sig(s['median'], 3)} ({sig(s['min'], 3)}-{sig(s['max'], 3)})"


def _what(key: list) -> tuple[str, str]:
    """(the row's label, its unit) for a summary key of burstbench/studies/runtimes.py."""
    if key[0] == "bursts":
        return f"bursts through actors, {key[1]:,} B", "msg/s"
    if key[0] == "pi":
        return f"Pi W={key[1]} M={key[2]:,} E={key[3]:,}", "s, lower is better"
    return f"ask, {key[1]:,} B", "requests/s"


def runtimes_rows(doc: dict) -> list[list[str]]:
    """The side-by-side table: the broker axis's bridge pairs (when the run has them), then
    the study's rows; every cell a median (min-max)."""
    rows = []
    pairs = {(p["series"], p["size"]): p for p in doc.get("broker_pairs") or []}
    for size in sorted({s for _, s in pairs}):
        got = [pairs.get((rt, size)) for rt in RUNTIMES]
        cells = [_mm(p["recv"]) if p and p["status"] == "ok" else "failed" for p in got]
        ok = all(p and p["status"] == "ok" for p in got)
        ratio = f"{got[1]['recv']['median'] / got[0]['recv']['median']:.2f}" if ok else "-"
        rows.append([f"bursts through actors and the broker (bridge pair), {size:,} B",
                     "msg/s", *cells, ratio])
    for row in doc.get("summary") or []:
        label, unit = _what(row["key"])
        if row["status"] != "ok":
            rows.append([label, unit, "failed", "failed", "-"])
            continue
        v = row["values"]
        rows.append([label, unit, *(_mm(v.get(rt)) for rt in RUNTIMES),
                     f"{row['pekko_over_akka']:.2f}" if "pekko_over_akka" in row else "-"])
        if "p50_us" in row:
            p50 = row["p50_us"]
            rows.append([f"ask, {row['key'][1]:,} B, round trip p50", "us, lower is better",
                         *(_mm(p50.get(rt)) for rt in RUNTIMES),
                         f"{p50['pekko']['median'] / p50['akka']['median']:.2f}"])
    return rows


def runtimes_blocks(doc: dict) -> list[dict]:
    par = doc["parameters"]
    v = doc.get("versions") or {}
    return [
        {"type": "heading", "level": 2, "text": "The bridge on Akka and on Apache Pekko"},
        {"type": "para", "text": f"{v.get('akka', 'Akka')} beside {v.get('pekko', 'Pekko')}: "
         f"the same sources, {par['rounds']} rounds with the runtimes' order swapped each "
         "round; every cell is the median (min-max) over the rounds (the bridge pair's over "
         "its measured bursts). Pekko / Akka is the ratio of the medians."},
        {"type": "table", "head": ["what", "unit", "Akka", "Pekko", "Pekko / Akka"],
         "rows": runtimes_rows(doc)},
    ]


def runtimes_table(doc: dict) -> tuple[str, str]:
    return _md_html(runtimes_blocks(doc))


def chart_runtimes(doc: dict, path: Path) -> Path:
    """Three panels of grouped bars, Akka beside Pekko, each bar its median with a min-max
    whisker: bursts (through actors; through actors and the broker), the Pi rows' seconds,
    ask's requests/s."""
    import numpy as np

    panels: list[tuple[str, str, list[tuple[str, dict]]]] = [
        ("broker", "messages/s", []), ("bursts", "messages/s", []),
        ("pi", "seconds (lower is better)", []), ("ask", "requests/s", [])]
    by_kind = {k: items for k, _, items in panels}
    pairs = {(p["series"], p["size"]): p for p in doc.get("broker_pairs") or []}
    for size in sorted({s for _, s in pairs}):
        by_kind["broker"].append((f"{size:,} B", {
            rt: pairs[(rt, size)]["recv"] if pairs.get((rt, size), {}).get("status") == "ok"
            else None for rt in RUNTIMES}))
    for row in doc.get("summary") or []:
        key = row["key"]
        label = (f"W={key[1]}\nM={key[2]:,}\nE={key[3]:,}" if key[0] == "pi"
                 else f"{key[1]:,} B")
        vals = row.get("values") or {}
        by_kind[key[0]].append((label, {rt: vals.get(rt) for rt in RUNTIMES}))
    panels = [p for p in panels if p[2]]
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels) + 2.4, 5.2),
                             squeeze=False)
    axes = axes[0]
    titles = {"broker": "bursts through actors and the broker\n(the bridge as producer and "
                        "consumer)",
              "bursts": "bursts through actors only\n(POST /bursts, route actors)",
              "pi": "Leibniz Pi over actors\n(PiActors)", "ask": "request/reply through ask\n"
                                                               "(one request at a time)"}
    for ax, (kind, ylabel, items) in zip(axes, panels):
        xs = np.arange(len(items))
        for i, rt in enumerate(RUNTIMES):
            med = [v[rt]["median"] if v.get(rt) else np.nan for _, v in items]
            lo = [m - v[rt]["min"] if v.get(rt) else 0 for m, (_, v) in zip(med, items)]
            hi = [v[rt]["max"] - m if v.get(rt) else 0 for m, (_, v) in zip(med, items)]
            ax.bar(xs + (i - 0.5) * 0.38, med, width=0.36, yerr=[lo, hi], capsize=3,
                   color=style.LANGUAGE_COLORS[rt], label=BACKEND_LABEL[rt])
        ax.set_xticks(xs, [label for label, _ in items], fontsize=8)
        ax.set_ylabel(ylabel)
        ax.set_title(titles[kind], fontsize=9.5)
        ax.grid(True, axis="y", alpha=0.25)
    handles, labels = axes[0].get_legend_handles_labels()
    style.legend_beside(fig, handles, labels)
    v = doc.get("versions") or {}
    fig.suptitle(f"The bridge on {v.get('akka', 'Akka')} and on {v.get('pekko', 'Pekko')}, "
                 f"one run, {doc['parameters']['rounds']} rounds alternating\nbars: median; "
                 "whiskers: min-max over the rounds (via broker: over the bridge pair's "
                 "measured bursts)", fontsize=9)
    m = doc.get("machine", {})
    footer = (f"{m.get('cpu', '?')} | {m.get('cores', '?')} cores | "
              f"{(doc.get('started') or '')[:10]} | commit {doc.get('git_commit', '?')} | "
              f"run {doc.get('run_id')}{style.drawn_at(doc.get('git_commit'))}")
    return finish_figure(fig, path, footer)
