"""``./bench`` commands (set-up lives in the ``bench`` script itself, before Python exists)."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from burstbench import clients, profiles
from burstbench.faults.registry import SCENARIOS
from burstbench.infra import brokers, topology
from burstbench.infra.procs import Interrupted, install_signal_handlers
from burstbench.measure import results
from burstbench.measure.run import PointFailed, PointSpec
from burstbench.paths import NotBuilt


class Parser(argparse.ArgumentParser):
    """Bad arguments: one line, exit 2."""

    def error(self, message):
        sys.stderr.write(f"bench {self.prog.split()[-1]}: error: {message}\n")
        sys.exit(2)


def _int(minimum: int):
    def parse(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if v < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}: {v}")
        return v

    return parse


def _float(minimum: float, below: float | None = None):
    def parse(text):
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if v < minimum or math.isnan(v) or (below is not None and v >= below):
            upper = "" if below is None else f" and < {below:g}"
            raise argparse.ArgumentTypeError(f"must be >= {minimum:g}{upper}: {text}")
        return v

    return parse


class _Renamed(argparse._StoreAction):
    """An option whose first spelling is its name; the others still work for one release, with
    a line on stderr (``--warmup`` meant seconds in run, a share in perf, requests in reqreply)."""

    def __call__(self, parser, namespace, values, option_string=None):
        if option_string and option_string != self.option_strings[0]:
            print(f"burstbench: {option_string} is now {self.option_strings[0]} here; the old "
                  "spelling goes in the next release", file=sys.stderr)
        setattr(namespace, self.dest, values)


def _rate(text: str) -> float:
    from burstbench.measure.sustained import parse_rate

    try:
        return parse_rate(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a rate (msg/s >= 0, or max): {text!r}") from None


def _seconds(text: str) -> float:
    from burstbench.measure.sustained import parse_seconds

    try:
        v = parse_seconds(text)
    except ValueError:
        v = math.nan
    if math.isnan(v) or v < 0:
        raise argparse.ArgumentTypeError(f"not a duration (e.g. 60s, 2m, 500ms): {text!r}")
    return v


def add_point_options(p: argparse.ArgumentParser) -> None:
    known = clients.help_text()
    p.add_argument(
        "--producer",
        default="stomp-py",
        help=f"producer client(s), comma-separated, taken in turn. Known: {known}",
    )
    p.add_argument("--consumer", default="stomp-py", help="consumer client(s), comma-separated")
    p.add_argument(
        "--producers",
        type=_int(0),
        default=0,
        help="producer processes (default: one per --producer entry)",
    )
    p.add_argument("--consumers", type=_int(1), default=1, help="competing consumers")
    p.add_argument("--count", type=_int(1), default=10000, help="messages per producer per burst")
    p.add_argument("--size", type=_int(1), default=6, help="body bytes")
    p.add_argument(
        "--bursts",
        type=_int(1),
        default=4,
        help="bursts; the first is warm-up and excluded when > 1",
    )
    p.add_argument("--queues", type=_int(1), default=1, help="queues the messages spread over")
    p.add_argument("--persistent", action="store_true", help="persistent delivery")
    p.add_argument("--broker", default="classic", choices=brokers.BROKERS,
                   help="the broker the bench starts: ActiveMQ Classic 6.1.7 (default), another "
                   "Classic version (classic:5.18.6, classic:6.3.1: OpenWire and STOMP only) or "
                   "ActiveMQ Artemis 2.44.0 (docs/brokers.md)")
    p.add_argument(
        "--persistence", default="none",
        help="broker store: none; Classic: kahadb, kahadb-nosync; Artemis: journal, "
        "journal-nosync; either: jdbc-postgres, jdbc-mariadb (Classic also jdbc-derby)"
    )
    p.add_argument(
        "--ack", default="auto", choices=["auto", "client", "client-individual", "dups-ok"]
    )
    p.add_argument("--prefetch", type=_int(1), default=1000)
    p.add_argument("--rate", type=_rate, default=0.0,
                   help="msg/s per producer; 0 or max = as fast as possible")
    p.add_argument("--duration", type=_seconds, default=0.0, metavar="SECONDS",
                   help="sustained mode: producers send open-loop for this long after the "
                   "warm-up (e.g. 60s), figures per 1 s and 10 s window; --count and --bursts "
                   "are then unused")
    p.add_argument("--warmup", type=_seconds, default=0.0, metavar="SECONDS",
                   help="sustained mode: seconds sent before the measured duration (e.g. 15s)")
    p.add_argument("--tx-batch", type=_int(0), default=0, help="transacted batches of N")
    p.add_argument("--topology", default="single",
                   help="networks of brokers: " + ", ".join(topology.TOPOLOGIES)
                   + " (Classic's network connectors; on Artemis a cluster, chain3 refused)")
    p.add_argument("--discovery", default="static", help="static or multicast (netns only)")
    p.add_argument("--hosts", default="loopback",
                   help="loopback (ports on 127.0.0.1), netns (a network namespace each), "
                        "netns-ssh (namespaces each running sshd: brokers, producers and "
                        "consumers on hosts of their own, reached over SSH) or an inventory "
                        "FILE.yaml of SSH hosts (see burstbench/infra/inventory.py)")
    p.add_argument("--link-rate", default="", help="tbf rate limit on broker links, e.g. "
                   "10mbit (netns only)")
    p.add_argument("--tls", action="store_true", help="TLS-only connectors with a throwaway CA; "
                   "clients verify the broker's certificate (with --broker-url: only TLS URLs, "
                   "which make a point TLS without it)")
    p.add_argument("--auth", action="store_true",
                   help="brokers require a user (generated password); clients log in (with "
                   "--broker-url: needs --user, which makes a point one with a login without it)")
    p.add_argument("--broker-url", action="append", default=[], metavar="URLS",
                   help="use a broker the harness did not start: comma-separated URLs, e.g. "
                   "tcp://h:61616,stomp://h:61613,ws://h:61614/ (repeat per broker); over TLS "
                   "ssl://, stomp+ssl://, wss://")
    add_login_options(p)
    add_admin_options(p)
    p.add_argument(
        "--no-flow-control", action="store_true", help="turn the broker's producer flow control off"
    )
    p.add_argument(
        "--optimized-dispatch", action=argparse.BooleanOptionalAction, default=False,
        help="queues dispatch in the thread that wakes them (a send, an ack) rather than in a "
        "pooled task (ActiveMQ's optimizedDispatch)")
    p.add_argument("--browser", default="browsers", choices=["browsers", "tabs"],
                   help="stompjs:browser consumers: each in a Chromium of its own (browsers) or "
                   "as tabs of one Chromium (tabs); recorded in the result")
    p.add_argument("--cpus-broker", default="", metavar="LIST",
                   help="run the brokers on these CPUs only (taskset -c LIST, e.g. 0)")
    p.add_argument("--cpus-clients", default="", metavar="LIST",
                   help="run the producers and consumers on these CPUs only (e.g. 1): the load "
                   "generator kept off the broker's cores")
    p.add_argument(
        "--tcp-nodelay", action=argparse.BooleanOptionalAction, default=False,
        help="TCP_NODELAY on the broker's STOMP and OpenWire connectors (transport.tcpNoDelay; "
        "off as ActiveMQ ships it; an OpenWire connection then takes the negotiated "
        "wireFormat.tcpNoDelayEnabled, true by default). The clients keep their libraries' own "
        "setting")
    p.add_argument("--transport", choices=["tcp", "nio"], default="tcp",
                   help="the Classic broker's STOMP and OpenWire connectors: tcp (a thread per "
                   "connection, as ActiveMQ ships them) or nio (a selector serving many "
                   "connections: nio://, stomp+nio://); recorded in the result")


def add_login_options(p) -> None:
    """A --broker-url broker's own login and trust (burstbench/infra/outside.py)."""
    p.add_argument("--user", default="", metavar="NAME",
                   help="the --broker-url broker's user, for every client (its password from "
                   "--password-file or BURSTBENCH_PASSWORD; the clients get it in their "
                   "environment)")
    p.add_argument("--password-file", default="", metavar="FILE",
                   help="a file holding the --user's password (never printed nor recorded)")
    p.add_argument("--ca", default="", metavar="FILE",
                   help="the PEM CA bundle the --broker-url broker's TLS certificates are "
                   "checked against (default: the system's trust store)")
    p.add_argument("--cert", default="", metavar="FILE",
                   help="the clients' PEM certificate, for a --broker-url broker that asks for "
                   "one (mutual TLS; with --key)")
    p.add_argument("--key", default="", metavar="FILE",
                   help="the --cert's PEM private key, unencrypted (PKCS#8)")


def add_admin_options(p) -> None:
    """The second witness of a broker given with --broker-url: its Jolokia (both consoles)."""
    p.add_argument("--broker-admin", action="append", default=[], metavar="URL",
                   help="the --broker-url broker's Jolokia, whose counters witness the run "
                   "(repeat per broker, in order): Classic http://HOST:8161/api/jolokia, "
                   "Artemis http://HOST:8161/console/jolokia. Without it: Classic's statistics "
                   "plugin if the broker runs it, else no second witness")
    p.add_argument("--admin-user", default="", metavar="NAME",
                   help="the console user for --broker-admin (the password from "
                   "--admin-password-file or BURSTBENCH_ADMIN_PASSWORD)")
    p.add_argument("--admin-password-file", default="", metavar="FILE",
                   help="a file holding the --admin-user's password (never printed nor "
                   "recorded)")


def add_live_options(p) -> None:
    p.add_argument("--live", action="store_true",
                   help="serve a page on 127.0.0.1 that follows the run (stompjs in the browser, "
                   "over the broker's WebSocket, from a topic of the harness's own)")
    p.add_argument("--live-port", type=_int(0), default=0, metavar="PORT",
                   help="the live page's port (default: a free one)")


def live_started(args):
    """Start the live view when asked (its address on stderr); a context for the command."""
    import contextlib

    from burstbench.measure import live

    if not getattr(args, "live", False):
        return contextlib.nullcontext()
    view = live.start(args.live_port)
    print(f"live view: {view.url}", file=sys.stderr, flush=True)
    return contextlib.closing(live)


def spec_from(args) -> PointSpec:
    spec = PointSpec(
        producer=[s for s in args.producer.split(",") if s],
        consumer=[s for s in args.consumer.split(",") if s],
        producers=args.producers,
        consumers=args.consumers,
        count=args.count,
        size=args.size,
        bursts=args.bursts,
        queues=args.queues,
        persistent=args.persistent,
        broker=args.broker,
        persistence=args.persistence,
        ack=args.ack,
        prefetch=args.prefetch,
        rate=args.rate,
        duration=args.duration,
        warmup=args.warmup,
        tx_batch=args.tx_batch,
        topology=args.topology,
        discovery=args.discovery,
        hosts=args.hosts,
        link_rate=args.link_rate,
        broker_urls=args.broker_url,
        broker_admin=args.broker_admin,
        admin_user=args.admin_user,
        admin_password_file=args.admin_password_file,
        user=args.user,
        password_file=args.password_file,
        ca=args.ca,
        cert=args.cert,
        key=args.key,
        tls=args.tls,
        auth=args.auth,
        producer_flow_control=not args.no_flow_control,
        optimized_dispatch=args.optimized_dispatch,
        tcp_nodelay=args.tcp_nodelay,
        transport=args.transport,
        cpus_broker=args.cpus_broker,
        cpus_clients=args.cpus_clients,
        browser=args.browser,
    )
    spec.validate()
    return spec


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


def cmd_run(args) -> int:
    spec = spec_from(args)
    if spec.broker_urls:
        from burstbench.infra import outside

        outside.preflight(spec)  # a refused login is bad input: one line, exit 2
    if args.find_max:
        from burstbench.measure import findmax

        return findmax.cmd_run(args, spec)
    if args.live and (spec.tls or spec.hosts == "netns"):
        print("bench run: error: --live follows a broker on the host's loopback without TLS "
              "(not with --tls or --hosts netns)", file=sys.stderr)
        return 2
    with live_started(args):
        return _cmd_run(args, spec)


def _cmd_run(args, spec) -> int:
    run = results.Run(results.new_run_id("run"), sys.argv)
    print(f"run {run.id}: results in {run.dir}", flush=True)
    status = "complete"
    try:
        if args.calibrate:
            from burstbench.measure import calibration

            calibration.measure(run)
        doc = run_point_printing(run, "point", spec)
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


def run_point_printing(run, point_id: str, spec: PointSpec) -> dict:
    from burstbench.measure.points import measure_point

    def progress(msg: str) -> None:
        print(f"  [{point_id}] {msg}", file=sys.stderr, flush=True)

    return measure_point(run, point_id, spec, progress=progress)


def cmd_sweep(args) -> int:
    from burstbench import sweep

    with live_started(args):
        return sweep.main(args)


def cmd_perf(args) -> int:
    if args.what == "listener":
        from burstbench.measure import listener

        return listener.main(args)
    from burstbench.measure import perf

    return perf.main(args)


def cmd_compare(args) -> int:
    from burstbench import compare
    return compare.main(args)


def cmd_chaos(args) -> int:
    if args.scenario == "soak":
        from burstbench.faults import soak

        return soak.main(args)
    from burstbench.faults import command

    return command.main(args)


def cmd_bridge(args) -> int:
    """``./bench bridge``: the bridge's HTTP API in the foreground on the runtime asked for;
    the JVM takes this process's place, so Ctrl-C (or SIGTERM) reaches it directly and it
    shuts down as akka-bridge/README.md says."""
    import os

    from burstbench import paths

    if args.port > 65535:
        raise ValueError(f"--port: must be 0..65535: {args.port}")
    module = clients.BRIDGE_MODULES[args.runtime]
    paths.require_built(module.name, module / "target" / "classes" / "burstbench")
    settings = {"host": args.host, "port": args.port}
    if args.broker_url:
        settings["broker_url"] = args.broker_url
    for item in args.set or ():
        key, eq, value = item.partition("=")
        if not eq or not key or any(c.isspace() for c in key):
            raise ValueError(f"--set: expected KEY=VALUE (a key of the bridge's configuration, "
                             f"e.g. limits.max-body-bytes=65536): {item!r}")
        settings[key] = value
    argv = clients.bridge_http(args.runtime, **settings)
    print(f"bench bridge: {module.name} on {args.host}:{args.port or 'any free port'}",
          file=sys.stderr, flush=True)
    os.execvp(argv[0], argv)
    return 1  # not reached


def cmd_runtimes(args) -> int:
    from burstbench.studies import runtimes

    return runtimes.main(args)


def cmd_pi(args) -> int:
    from burstbench.studies import pi

    return pi.main(args)


def cmd_reqreply(args) -> int:
    from burstbench.studies import reqreply

    return reqreply.main(args)


def cmd_plot(args) -> int:
    from burstbench.plots import charts, style

    run_dir = results.resolve_run(args.run)
    style.warn_if_dirty()  # the footers say '-dirty' only when the tree is
    written = charts.render_run(run_dir)
    for w in written:
        print(w)
    return 0


def cmd_docs(args) -> int:
    from burstbench.measure import results
    from burstbench.plots import quoted

    try:
        if args.action == "publish":
            if not args.run:
                raise quoted.QuoteError("docs publish needs a run id, 'latest' or a path")
            for f in quoted.publish(results.resolve_run(args.run)):
                print(f"bench docs: wrote {f.relative_to(quoted.paths.ROOT)}")
            return 0
        n, diffs = quoted.check(write=args.action == "render")
    except (quoted.QuoteError, FileNotFoundError) as e:
        print(f"bench docs: error: {e}", file=sys.stderr)
        return 2
    for d in diffs:
        print(f"bench docs: {'rewrote' if args.action == 'render' else 'differs'}: {d}",
              file=sys.stderr if args.action == "check" else sys.stdout)
    print(f"bench docs: {n} quoted figures, {len(diffs)} "
          f"{'rewritten' if args.action == 'render' else 'differ from their source'}")
    return 1 if diffs and args.action == "check" else 0


def cmd_doctor(args) -> int:
    from burstbench import doctor

    return doctor.main(args)


def build_parser() -> argparse.ArgumentParser:
    ap = Parser(
        prog="bench",
        description="burstbench: real brokers, real clients, every message accounted for.",
    )
    sub = ap.add_subparsers(dest="command", required=True, parser_class=Parser)

    p = sub.add_parser("run", help="measure one point and print its summary")
    add_point_options(p)
    p.add_argument("--find-max", action="store_true",
                   help="find the maximum sustainable rate: a flood, then sustained probes at "
                   "25-110%% of its rate and two bisections (--duration/--warmup per probe, "
                   "default 10s/10s); a probe holds when receive keeps up with send, the backlog "
                   "does not grow and p99 <= --p99-bound")
    p.add_argument("--calibrate", action="store_true",
                   help="first measure the calibration reference (stock Java pair, 6 B, and a "
                   "CPU loop) and record it in the run, for ./bench compare --calibrated")
    p.add_argument("--p99-bound", type=_float(0), default=50.0, metavar="MS",
                   help="--find-max: the p99 latency a probe may have and still hold (default 50)")
    add_live_options(p)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("sweep", help="run sweeps (axes x profile) and draw the charts")
    p.add_argument("axes", nargs="*", help="axes to run (default: all in the profile)")
    p.add_argument("--profile", default="quick",
                   help=", ".join(profiles.profile_names()) + " (profiles/*.yaml)")
    p.add_argument("--resume", metavar="RUN_ID", help="continue an interrupted run")
    p.add_argument("--producer", help="override the profile's producer client(s)")
    p.add_argument("--consumer", help="override the profile's consumer client(s)")
    p.add_argument("--broker-url", action="append", default=[], metavar="URLS",
                   help="measure brokers the harness did not start (see bench run --help); "
                   "points that need another broker configuration are skipped")
    add_login_options(p)
    add_admin_options(p)
    add_live_options(p)
    p.set_defaults(func=cmd_sweep)

    p = sub.add_parser("perf", help="benchmarks: 'clients' = each client vs a minimal loop; "
                       "'listener' = a consumer's own work a message, without a broker")
    p.add_argument("what", choices=["clients", "listener"])
    p.add_argument("--clients", help="comma-separated client specs (default: the four "
                   "languages; akka-bridge, pekko-bridge and stompjs:tcp by name; listener: "
                   "net-stomp and openwire-jms, the two it has)")
    p.add_argument("--sizes", default="6,1024", help="body sizes, comma-separated")
    p.add_argument(
        "--count",
        type=_int(1000),
        default=100000,
        help="messages per measurement at 6 B (half that at 1 KiB)",
    )
    p.add_argument("--count-jvm", type=_int(1000), default=400000,
                   help="messages per measurement of a JVM client at 6 B (half that at 1 KiB; "
                   "default 400000): a fresh JVM runs its first few hundred thousand messages "
                   "slower while it compiles, and the loop and the client compile different "
                   "amounts of code")
    p.add_argument("--count-jvm-one-cpu", type=_int(1000), default=None, metavar="COUNT",
                   help="messages per one-CPU round of a JVM client at 6 B (default: twice "
                   "--count-jvm). Its timed messages stay those of --count-jvm, the rest is "
                   "warm-up, as long at 1 KiB (by default 800000 at 6 B and 700000 at 1 KiB, "
                   "600000 of each warm-up): two JVMs and their compilers share the one CPU, "
                   "and a JVM's compiling then reaches into a window the two-CPU rounds leave "
                   "clean")
    p.add_argument("--warmup-share", "--warmup", dest="warmup", type=_float(0.0, below=1.0),
                   default=0.5, action=_Renamed, metavar="SHARE",
                   help="the share of each process's messages that is its warm-up and is not "
                   "timed, for loop and client alike (default 0.5: the second half is timed)")
    p.add_argument("--cli", action=argparse.BooleanOptionalAction, default=True,
                   help="measure the JMS pair against ActiveMQ's own command-line producer and "
                   "consumer too")
    p.add_argument("--tuned", action=argparse.BooleanOptionalAction, default=True,
                   help="measure each stock client's tuned entry in the same rounds (the "
                   "headroom the library leaves); --no-tuned makes a long run of stock against "
                   "loop a third shorter")
    p.add_argument("--rounds", type=_int(1), default=5,
                   help="measured rounds after a warm-up (loop and client alternate)")
    p.add_argument("--one-cpu-rounds", type=_int(0), default=None, metavar="N",
                   help="rounds in which loop and client run at the same time, pinned to one "
                   "CPU (the broker on another), compared by CPU per message: the machine's "
                   "state falls on both at once (default: as many as --rounds; 0: none)")
    p.add_argument("--self-check", type=_int(0), default=0, metavar="N",
                   help="N more one-CPU receive rounds with the loop on both sides (A/A): how "
                   "far the one-CPU comparison leans on its own, which two copies of one code "
                   "should show as 1.00 (default 0: none)")
    p.add_argument("--optimized-dispatch", action=argparse.BooleanOptionalAction, default=False,
                   help="the broker's queues dispatch in the waking thread (see bench run --help)")
    p.set_defaults(func=cmd_perf)

    p = sub.add_parser("compare", help="per-point ratios of two runs; exit 1 on a regression")
    p.add_argument("run_a", help="baseline run id, 'latest' or a path")
    p.add_argument("run_b", help="run to judge")
    p.add_argument("--calibrated", action="store_true",
                   help="divide each run's receive figures by its own calibration reference "
                   "(the stock Java pair, measured at the start of a sweep or with --calibrate)")
    p.add_argument("--threshold", type=float, default=10.0,
                   help="percent drop (beyond the measured spread) that counts as a regression")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("chaos", help="inject a fault into a persistent client-ack burst; "
                       "exit 1 if anything was lost")
    p.add_argument("scenario", choices=[*SCENARIOS, "all", "soak"],
                   help="the fault, or all (every scenario x every applicable language), or "
                   "soak (all four languages for --duration with faults from a seeded "
                   "schedule)")
    p.add_argument("--client", help="the client for producers and consumers (default stomp-py; "
                   f"failover-pair: openwire-jms). Known: {clients.help_text()}")
    p.add_argument("--count", type=_int(1), default=500, help="messages per burst")
    p.add_argument("--bursts", type=_int(4), default=12, help="bursts per producer")
    p.add_argument("--cut-seconds", type=_float(0.1), default=10.0,
                   help="link-cut, mesh-partition: how long the link stays down")
    p.add_argument("--duration", help="soak: how long, e.g. 600, 90s, 10m (default 10m)")
    p.add_argument("--seed", type=_int(1), help="soak: the fault schedule's seed (printed; "
                   "the same seed, duration and --faults replay the same schedule)")
    p.add_argument("--faults", type=_int(1), help="soak: how many faults (default one per "
                   "2 minutes, at least 3)")
    p.add_argument("--fraction", type=_float(0.01), default=0.25,
                   help="soak: each producer's rate as a fraction of its language's "
                   "calibrated rate (default 0.25)")
    p.add_argument("--kinds", metavar="LIST", help="soak: the fault kinds to draw from, "
                   "comma-separated (default all: broker-kill,link-cut,consumer-kill,"
                   "producer-kill; the replay needs the same list)")
    p.add_argument("--languages", metavar="LIST", help="soak: the clients, one producer and "
                   "one consumer each (default the four stock ones; the replay needs the "
                   "same list)")
    p.add_argument("--journal-mb", type=_int(1), metavar="N", help="soak: KahaDB journal "
                   "files of N MB instead of ActiveMQ's 32 (a kept file shows sooner)")
    p.set_defaults(func=cmd_chaos)

    p = sub.add_parser("bridge", help="serve the bridge's HTTP API (POST /bursts, /messages, "
                       "/pi; akka-bridge/README.md) on Akka or Pekko until Ctrl-C")
    p.add_argument("--runtime", choices=sorted(clients.BRIDGE_MODULES), default="akka",
                   help="akka (Akka 2.6.20, the default) or pekko (Apache Pekko 1.7.0): the "
                   "same sources built for each")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=_int(0), default=8411, help="port (default 8411; 0 = any "
                   "free port, printed in the ready line)")
    p.add_argument("--broker-url", metavar="URL", help="the broker route broker and "
                   "?relay= use when a request names none, e.g. tcp://127.0.0.1:61616")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="any other key of the "
                   "bridge's configuration (akka-bridge/README.md), e.g. --set "
                   "ask-timeout=30s --set limits.max-workers=16; repeatable")
    p.set_defaults(func=cmd_bridge)

    p = sub.add_parser("pi", help="Leibniz Pi: competing workers over the broker vs actors "
                       "(the Pi paper's grid; tables and charts/pi.png)")
    p.add_argument("--profile", default="quick",
                   help="grid from profiles/<name>.yaml studies.pi (quick, blog, full)")
    p.add_argument("--workers", help="workers W, comma-separated (overrides the profile)")
    p.add_argument("--messages", help="work messages M, comma-separated")
    p.add_argument("--elements", help="series terms per message E, comma-separated")
    p.add_argument("--workers-lang", metavar="LIST",
                   help="worker languages taken in turn, e.g. perl,python,node,java "
                   "(default: the profile's, else java)")
    p.add_argument("--java-threads", type=_int(1), metavar="N",
                   help="Java workers per JVM (default 10): W Java workers = ceil(W/N) JVMs")
    p.add_argument("--prefetch", type=_int(1), help="work-queue prefetch per worker "
                   "(default 1000)")
    p.add_argument("--backends", help="activemq, akka and/or pekko (the bridge on Apache Pekko), "
                   "comma-separated (default: activemq,akka)")
    p.set_defaults(func=cmd_pi)

    p = sub.add_parser("reqreply", help="blocking request/reply: JmsTemplate temp queue, "
                       "reused reply queue, actor ask; payload 1 B .. 1 MB")
    p.add_argument("--profile", default="quick",
                   help="modes/payloads from profiles/<name>.yaml studies.reqreply")
    p.add_argument("--modes", help="temp-queue, reused-queue, actor-ask (comma-separated)")
    p.add_argument("--payloads", help="payload bytes, comma-separated (0..1000000)")
    p.add_argument("--requests", type=_int(1), help="measured requests per point")
    p.add_argument("--warmup-requests", "--warmup", dest="warmup", type=_int(0), action=_Renamed,
                   metavar="N", help="warm-up requests per point (not measured)")
    p.add_argument("--runtime", choices=["akka", "pekko"],
                   help="the actors' runtime for actor-ask, and the bridge every mode runs in: "
                   "akka (Akka 2.6.20, the default) or pekko (Apache Pekko 1.7.0)")
    p.add_argument("--spring-cf", choices=["single", "caching", "plain"],
                   help="temp-queue: the ConnectionFactory behind JmsTemplate (default plain: "
                   "a connection per request, as JmsTemplate does out of the box; single "
                   "shares one connection)")
    p.set_defaults(func=cmd_reqreply)

    p = sub.add_parser("runtimes", help="the bridge on Akka and on Apache Pekko side by side: "
                       "bursts through actors, the Pi actor rows, ask (docs/runtimes.md)")
    p.add_argument("--profile", default="runtimes",
                   help="what to measure, from profiles/<name>.yaml studies.runtimes")
    p.add_argument("--rounds", type=_int(1), help="rounds, the runtimes alternating (default "
                   "the profile's)")
    p.set_defaults(func=cmd_runtimes)

    p = sub.add_parser("plot", help="re-render a run's charts and report from its result files "
                       "(a footer says 'drawn at COMMIT' when the code is not the run's, "
                       "'-dirty' and a warning when the work tree has uncommitted changes)")
    p.add_argument("run", nargs="?", default="latest", help="run id, 'latest' or a path")
    p.set_defaults(func=cmd_plot)

    p = sub.add_parser("docs", help="the figures README.md and docs/ quote: check them against "
                       "docs/data/, render them from it, or publish a run's summary there")
    p.add_argument("action", choices=["check", "render", "publish"],
                   help="check: exit 1 when a quoted figure differs from its source; render: "
                   "rewrite them; publish RUN: copy a complete run's summary.csv and manifest "
                   "to docs/data/")
    p.add_argument("run", nargs="?", help="publish: run id, 'latest' or a path")
    p.set_defaults(func=cmd_docs)

    # doctor: which features of each registered client work here (burstbench/doctor.py)
    p = sub.add_parser("doctor", help="which features of every client (each transport: plain, "
                       "TLS, credentials) work on this machine, and what is missing; exit 1 "
                       "if one does not")
    p.add_argument("--clients", metavar="LIST", help="comma-separated client specs (default: "
                   f"every registered client and transport). Known: {clients.help_text()}")
    p.add_argument("--count", type=_int(1), default=10, help="messages per round trip")
    p.add_argument("--jobs", type=_int(1), metavar="N", help="checks at a time (default: one "
                   "per core, at most 4)")
    p.set_defaults(func=cmd_doctor)
    for name, p in sub.choices.items():
        if name not in ("doctor", "bridge"):  # every command that writes or reads runs
            p.add_argument("--output", "--results", dest="results", metavar="DIR",
                           help="where runs are written and read (default: results/ in the "
                           "repository, or the environment's BURSTBENCH_RESULTS)")
    return ap


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "results", None):
        import os

        from burstbench import paths
        paths.RESULTS = Path(args.results).resolve()
        os.environ["BURSTBENCH_RESULTS"] = str(paths.RESULTS)  # for the processes it starts
    install_signal_handlers()
    try:
        return args.func(args)
    except (ValueError, FileNotFoundError, FileExistsError, NotBuilt) as e:
        print(f"bench {args.command}: error: {e}", file=sys.stderr)
        return 2
    except (Interrupted, KeyboardInterrupt) as e:
        print(
            f"bench {args.command}: {e or 'interrupted'}; every process it started was "
            "stopped, partial results kept",
            file=sys.stderr,
        )
        return 130


if __name__ == "__main__":
    sys.exit(main())
