"""``./bench doctor``: which features of every registered client work on this machine.

Three throwaway brokers on free loopback ports: *plain*, *tls* (TLS-only connectors, a
throwaway CA the clients verify, as ``--tls``) and *auth* (a required user with a generated
password, as ``--auth``). For each client of the registry (stock and tuned entries) and each
transport it has, a short round trip per broker: its consumer subscribes, its producer sends
a few messages, the consumer's records must hold all of them with good bodies. A client that
is not installed (toolchain, build, or one of its program files missing) is reported as such
without a try. A feature that fails is named with the client's own one-line error, which is
where the missing piece is named (``IO::Socket::SSL``, a certificate, a password).

Checks run ``jobs`` at a time (the brokers start side by side too), each under a Supervisor
of its own so that no check takes another's events. Every process is stopped after its check,
and all of them (brokers included) on success, failure or Ctrl-C.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from burstbench import clients, options, paths
from burstbench.infra import brokers, secret
from burstbench.infra.procs import Child, Supervisor
from burstbench.measure import measure

FEATURES = ("plain", "tls", "auth")
USER = "bench"


@dataclass
class Check:
    """One client, one transport, one broker feature, and how it went."""

    client: str
    transport: str
    feature: str
    verdict: str = ""  # "ok", "FAIL" or "missing" (the client is not installed)
    detail: str = ""  # the client's one-line error, or what is not installed
    seconds: float = 0.0

    @property
    def label(self) -> str:
        return f"{self.client} {self.transport} {self.feature}"


class DoctorError(RuntimeError):
    pass


def program_missing(c: clients.Client) -> str | None:
    """Why ``c`` cannot run here (toolchain, build, or a file its argv names), or None."""
    why = c.missing()
    if why:
        return why
    for role in ("producer", "consumer"):
        argv = c.argv(role)
        for i, a in enumerate(argv):
            p = Path(a)
            if p.is_absolute() and p.suffix in (".py", ".pl", ".pm", ".mjs", ".js"):
                if not p.exists():
                    return f"{c.name}: not installed ({p} missing)"
            elif a.startswith("-M") and len(a) > 2:  # perl -I DIR -MModule
                mod = a[2:].split("=")[0].replace("::", "/") + ".pm"
                dirs = [argv[j + 1] for j in range(len(argv) - 1) if argv[j] == "-I"]
                if not any((Path(d) / mod).exists() for d in dirs):
                    return f"{c.name}: not installed ({mod} in none of {', '.join(dirs)})"
            elif a in ("-cp", "-classpath") and i + 2 < len(argv):
                main = next((x for x in argv[i + 2:] if not x.startswith("-")), None)
                dirs = [Path(d) for d in argv[i + 1].split(":") if not d.endswith("*")]
                cls = (main or "").replace(".", "/") + ".class"
                if main and not any((d / cls).exists() for d in dirs):
                    return (f"{c.name}: not installed ({main} not built in "
                            f"{', '.join(map(str, dirs))}: run ./bench setup)")
    return None


def _wait(sup: Supervisor, want: Callable[[Child, dict], bool], deadline: float,
          watch: list[Child], cancel: threading.Event | None = None) -> None:
    """Take events until ``want`` says yes. A watched child that exits early (non-zero, or
    before what we wait for) raises with its last error line; so does the deadline, and
    ``cancel`` being set (the doctor is stopping)."""
    while True:
        if cancel is not None and cancel.is_set():
            raise DoctorError("interrupted")
        item = sup.wait_event(min(0.5, max(0.0, deadline - time.monotonic())))
        if item is None:
            if time.monotonic() >= deadline:
                raise DoctorError("no answer in time: "
                                  + "; ".join(f"{c.name} {c.last_error() or 'said nothing'}"
                                              for c in watch if c.alive()))
            continue
        who, ev = item
        if want(who, ev):
            return
        if ev.get("event") == "exit" and ev["code"] != 0:
            if any(who is c for c in watch):
                raise DoctorError(who.last_error() or f"{who.name} exited with {ev['code']}")
            if who.role == "broker":
                raise DoctorError(f"{who.name} died ({ev['code']}): {who.last_error()}")


def round_trip(sup: Supervisor, r: clients.Resolved, url: str, extra: list[str], count: int,
               work: Path, tag: str, timeout: float = 60.0,
               cancel: threading.Event | None = None) -> None:
    """``count`` messages from r's producer to r's consumer through ``url``; raises
    DoctorError with the client's error line if it does not come through whole."""
    q = f"doctor.{uuid.uuid4().hex[:8]}"
    crec = work / f"{tag}.consumer.tsv"
    common = ["--url", url, "--destinations", q, "--count", str(count),
              "--connect-timeout", "10", *extra]
    deadline = time.monotonic() + timeout
    cons = sup.start(f"{tag}.consumer", options.command(
        r, "consumer", common + ["--records", str(crec), "--id", "doc-c"]), role="consumer")
    prod = None
    try:
        def ready(who, ev) -> bool:
            if who is cons and ev.get("event") == "exit":
                raise DoctorError(cons.last_error() or f"consumer exited ({ev['code']}) "
                                  "before it was ready")
            return who is cons and ev.get("event") == "ready"

        _wait(sup, ready, deadline, [cons], cancel)
        prod = sup.start(f"{tag}.producer", options.command(
            r, "producer", common + ["--size", "32", "--id", "doc-p"]), role="producer")
        exited: set[str] = set()

        def both_done(who, ev) -> bool:
            if ev.get("event") == "exit" and (who is cons or who is prod) and ev["code"] == 0:
                exited.add(who.name)
            return len(exited) == 2

        _wait(sup, both_done, deadline, [cons, prod], cancel)
    finally:
        for c in (prod, cons):
            if c is not None:
                sup.stop(c, grace=5)
    got = measure.read_consumer_records(crec) if crec.exists() else []
    good = sum(1 for x in got if x.producer == "doc-p" and x.body_ok)
    if good != count:
        raise DoctorError(f"{good} of {count} messages came through whole "
                          f"({len(got)} records)")


@dataclass
class _Broker:
    feature: str
    broker: brokers.Broker | None
    extra: list[str]
    error: str = ""


def _start_broker(sup: Supervisor, work: Path, feature: str) -> _Broker:
    from burstbench.infra import tls

    spec = brokers.BrokerSpec(name=f"doctor-{feature}", heap="256m", memory_limit="64mb")
    extra: list[str] = []
    try:
        if feature == "tls":
            material = tls.make(work, ["127.0.0.1"])
            spec.tls = material
            extra = ["--ca", str(material.ca_pem)]
        elif feature == "auth":
            password = secret.throwaway(16)
            spec.users = [{"name": USER, "password": password}]
            extra = ["--user", USER, "--password", password]
        return _Broker(feature, brokers.start(sup, spec, work), extra)
    except (brokers.BrokerError, tls.TlsError, paths.NotBuilt, RuntimeError) as e:
        return _Broker(feature, None, extra, f"{feature} broker did not start: {e}")


def plan(specs: list[str] | None = None) -> list[Check]:
    """Every (client, transport, feature) to check, in registry order."""
    if specs:
        resolved = []
        for s in specs:
            name, _, tr = s.partition(":")
            c = clients.get(name)
            resolved += [(c, tr)] if tr else [(c, t) for t in c.transports]
            if tr:
                clients.resolve(s)  # an unknown transport is refused here
    else:
        resolved = [(c, t) for c in clients.REGISTRY for t in c.transports]
    return [Check(c.name, t, f) for c, t in resolved for f in FEATURES]


def default_jobs() -> int:
    """Checks at a time: one per core, at most four (a check is mostly process start-up)."""
    return max(1, min(4, os.cpu_count() or 1))


class _Supervisors:
    """One Supervisor per broker and per check, so that concurrent waits never take each
    other's events; ``stop_all`` stops every one of them, and none is handed out after."""

    def __init__(self, log_dir: Path):
        self.log_dir = log_dir
        self.all: list[Supervisor] = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()

    def new(self) -> Supervisor:
        with self.lock:
            if self.stopping.is_set():
                raise DoctorError("interrupted")
            sup = Supervisor(self.log_dir)
            self.all.append(sup)
            return sup

    def stop_all(self) -> None:
        self.stopping.set()
        with self.lock:
            sups = list(self.all)
        for sup in reversed(sups):  # checks first, the brokers last
            sup.stop_all(grace=5)


def run_checks(checks: list[Check], count: int = 10,
               progress: Callable[[str], None] = lambda s: None,
               work: Path | None = None, jobs: int | None = None) -> list[Check]:
    """Fill in every check's verdict, ``jobs`` checks at a time; brokers start only if some
    client is installed. The work directory (a temporary one unless given) is removed unless
    a check failed."""
    missing: dict[str, str | None] = {}
    for ch in checks:
        if ch.client not in missing:
            missing[ch.client] = program_missing(clients.get(ch.client))
        if missing[ch.client]:
            ch.verdict, ch.detail = "missing", missing[ch.client]
    own_work = work is None
    work = Path(work or tempfile.mkdtemp(prefix="bench-doctor-"))
    sups = _Supervisors(work / "logs")
    jobs = jobs or default_jobs()
    pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="doctor")
    say = threading.Lock()
    done = [0]

    def report(where: str, msg: str) -> None:
        with say:
            done[0] += 1
            progress(f"[{done[0]:>2}/{len(checks)}] {where}: {msg}")

    def start(feature: str) -> _Broker:
        t0 = time.monotonic()
        b = _start_broker(sups.new(), work, feature)
        with say:
            progress(f"broker {feature}: ready in {time.monotonic() - t0:.1f} s" if b.broker
                     else f"broker {feature}: did not start: {b.error}")
        return b

    def check(ch: Check, b: _Broker) -> None:
        t0 = time.monotonic()
        if b.broker is None:
            ch.verdict, ch.detail = "FAIL", b.error
        else:
            r = clients.resolve(f"{ch.client}:{ch.transport}")
            tag = f"{ch.client}.{ch.transport}.{ch.feature}"
            sup = sups.new()
            try:
                round_trip(sup, r, b.broker.url_for(r.protocol), b.extra, count, work, tag,
                           cancel=sups.stopping)
                ch.verdict = "ok"
            except (DoctorError, RuntimeError) as e:
                ch.verdict, ch.detail = "FAIL", str(e)
            finally:
                sup.stop_all(grace=5)
        ch.seconds = time.monotonic() - t0
        report(ch.label, f"ok ({count} msgs, {ch.seconds:.1f} s)" if ch.verdict == "ok"
               else f"FAIL: {ch.detail}")

    try:
        wanted = sorted({ch.feature for ch in checks if ch.verdict != "missing"},
                        key=FEATURES.index)
        brk = dict(zip(wanted, pool.map(start, wanted), strict=True))
        futures = []
        for ch in checks:
            if ch.verdict == "missing":
                report(ch.label, "not installed")
            else:
                futures.append(pool.submit(check, ch, brk[ch.feature]))
        for f in as_completed(futures):
            f.result()
    finally:
        # interrupted or done: every check's processes and the brokers stop; a check still
        # under way sees the stop and ends; the logs stay only when a check failed
        sups.stop_all()
        pool.shutdown(wait=True, cancel_futures=True)
        sups.stop_all()  # anything a check started while the first stop went on
        failed = any(ch.verdict not in ("ok", "missing") for ch in checks)
        if own_work and not failed:
            shutil.rmtree(work, ignore_errors=True)
        elif failed:
            progress(f"logs: {work / 'logs'}")
    return checks


def table(checks: list[Check]) -> str:
    """One row per client and transport, one column per feature; then what is missing."""
    rows: dict[tuple[str, str], dict[str, Check]] = {}
    for ch in checks:
        rows.setdefault((ch.client, ch.transport), {})[ch.feature] = ch
    w = max([len("client")] + [len(c) for c, _ in rows])
    lines = [(f"{'client':<{w}}  {'transport':<9}  " + "  ".join(f"{f:<7}" for f in FEATURES))
             .rstrip()]
    for (c, t), by in rows.items():
        cells = [by[f].verdict if f in by else "-" for f in FEATURES]
        lines.append(f"{c:<{w}}  {t:<9}  " + "  ".join(f"{v:<7}" for v in cells).rstrip())
    notes = []
    seen_missing = set()
    for ch in checks:
        if ch.verdict == "missing" and ch.client not in seen_missing:
            seen_missing.add(ch.client)
            notes.append(f"  {ch.client}: {ch.detail.removeprefix(ch.client + ': ')}")
        elif ch.verdict == "FAIL":
            notes.append(f"  {ch.label}: {ch.detail}")
    if notes:
        lines += ["", "what does not work:", *notes]
    return "\n".join(lines)


def main(args) -> int:
    checks = plan([s for s in (args.clients or "").split(",") if s.strip()] or None)

    def progress(msg: str) -> None:
        print(f"  {msg}", file=sys.stderr, flush=True)

    jobs = args.jobs or default_jobs()
    progress(f"{len(checks)} checks: {len({(c.client, c.transport) for c in checks})} "
             f"client transports x {', '.join(FEATURES)}, {args.count} messages each, "
             f"{jobs} at a time")
    run_checks(checks, count=args.count, progress=progress, jobs=jobs)
    print(table(checks))
    bad = [ch for ch in checks if ch.verdict != "ok"]
    print(f"\nbench doctor: {len(checks) - len(bad)} of {len(checks)} features work"
          + (f"; {len(bad)} do not" if bad else ""))
    return 1 if bad else 0
