"""``./bench run``: measure one point and print its summary."""

from __future__ import annotations

import math
import sys

from burstbench.commands.args import number
from burstbench.commands.point import add_live_options, add_point_options, live_started, spec_from
from burstbench.errors import PointFailed
from burstbench.infra.procs import Interrupted
from burstbench.measure import results
from burstbench.measure.spec import PointSpec

NAME = "run"
HELP = "measure one point and print its summary"


def add_arguments(p) -> None:
    add_point_options(p)
    p.add_argument("--find-max", action="store_true",
                   help="find the maximum sustainable rate: a flood, then sustained probes at "
                   "25-110%% of its rate and two bisections (--duration/--warmup per probe, "
                   "default 10s/10s); a probe holds when receive keeps up with send, the backlog "
                   "does not grow and p99 <= --p99-bound")
    p.add_argument("--calibrate", action="store_true",
                   help="first measure the calibration reference (stock Java pair, 6 B, and a "
                   "CPU loop) and record it in the run, for ./bench compare --calibrated")
    p.add_argument("--p99-bound", type=number(0), default=50.0, metavar="MS",
                   help="--find-max: the p99 latency a probe may have and still hold (default 50)")
    add_live_options(p)


def run(args) -> int:
    spec = spec_from(args)
    if spec.broker_urls:
        from burstbench.infra import outside

        outside.preflight(spec)  # a refused login is bad input: one line, exit 2
    if args.find_max:
        return _find_max(args, spec)
    if args.live and (spec.tls or spec.hosts == "netns"):
        print("bench run: error: --live follows a broker on the host's loopback without TLS "
              "(not with --tls or --hosts netns)", file=sys.stderr)
        return 2
    with live_started(args):
        return _run(args, spec)


def _run(args, spec) -> int:
    run = results.Run(results.new_run_id("run"), sys.argv)
    print(f"run {run.id}: results in {run.dir}", flush=True)
    status = "complete"
    try:
        if args.calibrate:
            from burstbench.measure import calibration

            calibration.measure(run)
        doc = point_printing(run, "point", spec)
    except PointFailed as e:
        status = "failed"
        doc = results.load_point(run.point_path("point"))
        print(summary(doc))
        print(f"bench run: error: {e}", file=sys.stderr)
        return 1
    except (Interrupted, KeyboardInterrupt):
        status = "incomplete"
        raise
    finally:
        run.finish(status)
    print(summary(doc))
    return 0


def point_printing(run, point_id: str, spec: PointSpec) -> dict:
    from burstbench.measure.points import measure_point

    def progress(msg: str) -> None:
        print(f"  [{point_id}] {msg}", file=sys.stderr, flush=True)

    return measure_point(run, point_id, spec, progress=progress)


def fmt_rate(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return f"{v:,.0f}"


def fmt_percentiles(lat: dict) -> str:
    """p50 .. p99.99 and max, ``n/a`` where too few samples lie in the tail."""
    keys = (("p50", "p50"), ("p90", "p90"), ("p99", "p99"), ("p99_9", "p99.9"),
            ("p99_99", "p99.99"), ("max", "max"))
    parts = [f"{label} {fmt_ms(lat.get(k)) if lat.get(k) is not None else 'n/a'}"
             for k, label in keys if k in lat]
    return "  ".join(parts) + f"  ({lat.get('samples', 0):,} samples)"


def fmt_ms(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return f"{v:.2f}"


def summary(doc: dict) -> str:
    """The readable report of one point."""
    p = doc["parameters"]
    # `./bench run`'s one point is called "point": "point: OK", not "point point: OK"
    name = "point" if doc["point"] == "point" else f"point {doc['point']}"
    lines = [
        f"{name}: {doc['status'].upper()}",
        f"  {','.join(p['producer'])} x{p['producers']} -> {','.join(p['consumer'])} "
        + (f"x{p['consumers']}, sustained, " if p.get("duration") else
           f"x{p['consumers']}, {p['count']:,} msgs x {p['bursts']} bursts, ")
        + f"{p['size']} B, "
        f"{p['queues']} queue(s), persistence {p['persistence']}"
        f"{', persistent' if p['persistent'] else ''}, ack {p['ack']}",
    ]
    t = doc.get("throughput")
    if t and doc.get("sustained"):  # one timed burst, its windows instead of a burst table
        from burstbench.measure.sustained import summary_lines

        lines += summary_lines(doc)
    elif t:
        lines.append("  burst   sent      received   send msg/s   recv msg/s")
        for b in doc["bursts"]:
            tag = " (warm-up)" if t["warmup_excluded"] and b["burst"] == 0 else ""
            lines.append(
                f"  {b['burst']:>5} {b['sent']:>9,} {b['received']:>10,} "
                f"{fmt_rate(b['send_msgs_per_s']):>12} "
                f"{fmt_rate(b['recv_msgs_per_s']):>12}{tag}"
            )
    if t:
        lines.append(
            f"  send msg/s: median {fmt_rate(t['send_msgs_per_s'])} "
            f"(min {fmt_rate(t['send_min'])}, max {fmt_rate(t['send_max'])})"
        )
        lines.append(
            f"  recv msg/s: median {fmt_rate(t['recv_msgs_per_s'])} "
            f"(min {fmt_rate(t['recv_min'])}, max {fmt_rate(t['recv_max'])}) "
            + (f"over {t['measured_windows']} measured 1-s window(s)" if doc.get("sustained")
               else f"over {t['measured_bursts']} measured burst(s)")
        )
        clk = doc.get("clocks") or {}
        unc = clk.get("cross_host_uncertainty_ms")
        across = f"  ±{unc:.3f} ms across hosts (clock offsets)" if unc is not None else ""
        if doc.get("latency_ms"):
            lines.append("  latency ms (paced, from the intended send time): "
                         + fmt_percentiles(doc["latency_ms"]) + across)
        elif doc.get("time_in_queue_ms"):
            lines.append("  time in queue ms (an unpaced flood: not latency): "
                         + fmt_percentiles(doc["time_in_queue_ms"]) + across)
        if clk.get("exceeds_p50"):
            lines.append("  the clocks' uncertainty across hosts exceeds p50: p50 says little")
        for host, h in (clk.get("hosts") or {}).items():
            if h.get("available"):
                lines.append(f"  clock {host}: offset {h['offset_ns'] / 1e3:+.1f} us "
                             f"±{h['uncertainty_ns'] / 1e3:.1f} us (drift "
                             f"{h['drift_ns'] / 1e3:.1f} us over the point)")
        a = doc["accounting"]
        lines.append(
            f"  accounting: sent {a['sent']:,}  received {a['received']:,}  "
            f"lost {a['lost']:,}  duplicates {a['duplicates']:,}  "
            f"out-of-order {a['out_of_order']:,}  foreign {a['foreign']:,}  "
            f"redelivered {a['redelivered']:,}  corrupt {a.get('corrupt', 0):,}"
        )
        con = doc.get("connect") or {}
        if con.get("processes") and con["processes"] < con["slots"]:  # slots shared processes
            cost = (f"; broker +{con['broker_rss_kib_per_connection']:,.0f} KiB resident and "
                    f"+{con['broker_threads_per_connection']:.2f} threads per connection"
                    if "broker_rss_kib_per_connection" in con else "")
            lines.append(f"  connections: {con['slots']:,} in {con['processes']} processes; "
                         f"consumers ready in {con['consumers_ready_s']:.1f} s, producers in "
                         f"{con['producers_ready_s']:.1f} s{cost}")
        if a.get("foreign_kinds") or a.get("corrupt_kinds"):
            kinds = {**{f"foreign ({k})": n for k, n in (a.get("foreign_kinds") or {}).items()},
                     **{f"corrupt ({k})": n for k, n in (a.get("corrupt_kinds") or {}).items()}}
            lines.append("  not counted: " + ", ".join(f"{k} {n:,}" for k, n in kinds.items()))
        w = doc.get("broker_witness") or {}
        if w.get("available"):
            tot = w["total"]
            fwd = (f", {w['forwarded_in']:,} forwarded between brokers"
                   if w["forwarded_in"] > 0 and len(w["brokers"]) > 1 else "")
            by = ", ".join(sorted(set((w.get("sources") or {}).values())))
            lines.append(
                f"  brokers' counters{f' ({by})' if by else ''}: enqueued "
                f"{tot['enqueued']:,}  dequeued "
                f"{tot['dequeued']:,}{fwd}, left {tot['size']:,}: "
                + ("agree with the clients" if w["agrees"] else "DISAGREE (see errors)"))
        elif w and str(w.get("why", "")).startswith("no second witness"):
            lines.append(f"  brokers' counters: {w['why']}")
        elif w:
            lines.append(f"  brokers' counters: not read ({w.get('why')})")
        busy = doc.get("busiest") or {}
        if busy:
            lines.append(
                f"  busiest: {busy['process']} at {busy['cpu_share']:.2f} cores"
                f"{' (CPU-bound)' if busy['cpu_bound'] else ''}"
            )
            if busy.get("cores"):
                lines.append(
                    f"  machine: {busy['machine_busy_cores']:.2f} of {busy['cores']} cores busy "
                    f"({busy['point_processes_and_harness_cores']:.2f} the point's processes and "
                    f"the harness, {busy['harness_cores']:.2f} of it the harness)"
                    + ("; SATURATED: the machine bounds this figure, not one process"
                       if busy["machine_saturated"] else ""))
    procs = doc.get("resources", {}).get("processes", [])
    if procs:
        where = bool(doc.get("hosts"))  # SSH hosts: say where each process ran
        lines.append("  process              CPU s   peak RSS MB   max fds   exit"
                     + ("   host" if where else ""))
        for pr in procs:
            lines.append(
                f"  {pr['name']:<20} {pr['cpu_s']:>6.2f} {pr['max_rss_mb']:>12.1f} "
                f"{pr['max_open_files']:>9} {pr['exit_code']!s:>6}"
                + (f"   {pr.get('host', '')}" if where else "")
            )
    for e in doc.get("errors", []):
        lines.append(f"  error: {e}")
    return "\n".join(lines)


def _find_max(args, spec) -> int:
    """``./bench run --find-max``: one series, the run's points and find-max.json."""
    from burstbench.measure import findmax, results

    run = results.Run(results.new_run_id("find-max"), sys.argv)
    print(f"run {run.id}: results in {run.dir}", flush=True)
    label = " -> ".join(",".join(x) for x in (spec.producer, spec.consumer))
    status = "failed"
    try:
        if getattr(args, "calibrate", False):
            from burstbench.measure import calibration

            calibration.measure(run)
        verdict = findmax.search(run, spec, label, args.p99_bound)
        findmax.save(run, [verdict])
        every_ok = all(p["status"] == "ok" for p in verdict["probes"])
        status = "complete" if verdict["max_sustainable_msgs_per_s"] and every_ok else "failed"
        try:
            from burstbench.plots import charts

            for path in charts.render_run(run.dir):
                print(f"chart: {path}", file=sys.stderr)
        except Exception as e:  # noqa: BLE001 (charts never hide the run's own outcome)
            print(f"bench run: charts failed: {e}", file=sys.stderr)
    finally:
        run.finish(status)
    print(findmax.table(verdict))
    return 0 if status == "complete" else 1
