"""One point: brokers up, consumers ready, producers gated burst by burst, records collected.

The harness drives every producer and consumer through the contract's ``--gate`` stdin
protocol: all producers get ``go`` at once for a burst; the next burst starts only once the
consumers' ticks say every message of this one arrived (or the drain timeout passes, in which
case the accounting will show the loss). Waiting between bursts never enters a figure: burst
throughput comes from the records' timestamps.
"""

from __future__ import annotations

import json
import secrets
import shutil
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from burstbench import clients, options
from burstbench.errors import PointFailed
from burstbench.infra import brokerlog, browser, outside
from burstbench.infra.procs import Child, Interrupted, Supervisor, dump_java_threads
from burstbench.infra.sampling import CpuWindow
from burstbench.infra.stack import Stack
from burstbench.measure import live, measure
from burstbench.measure.outcome import Outcome
from burstbench.measure.spec import PointSpec


def slot_of(child: Child, ev: dict, slots: dict[str, list[str]]) -> str:
    """Whose line ``ev`` is: the slot whose id it carries when ``child`` holds several
    (clients/contract.md, --connections), else the child itself."""
    own = slots.get(child.name)
    if own is None or len(own) == 1:
        return child.name
    return ev.get("id", child.name)


def _wait_all(
    sup: Supervisor, children: list[Child], event: str, timeout: float, on_other=None,
    slots: dict[str, list[str]] | None = None,
) -> dict[str, dict]:
    """Wait until every child (every slot of a child that holds several: ``slots``, child
    -> slot ids) has printed ``event``; fail fast if one exits first. Keyed by child or slot."""
    slots = slots or {}
    got: dict[str, dict] = {}
    names = {c.name for c in children}
    want = {s for c in children for s in slots.get(c.name, [c.name])}

    def take(child: Child, ev: dict) -> None:
        kind = ev.get("event")
        own = slots.get(child.name, [child.name])
        if child.name in names and kind == event:
            got[slot_of(child, ev, slots)] = ev
        elif kind == "exit" and all(s in got for s in own) and ev["code"] == 0:
            return  # finished after saying what we waited for
        elif kind == "exit" and child.name in names:
            missing = [s for s in own if s not in got]
            raise PointFailed(
                f"{child.name} exited with {ev['code']} before '{event}'"
                + (f" from {len(missing)} of its {len(own)} connections" if len(own) > 1
                   else "")
                + f": {child.last_error() or 'no message'} (log: {child.log_path})"
            )
        elif kind == "exit" and child.role == "broker":
            raise PointFailed(f"{child.name} exited with {ev['code']}: {child.last_error()}")
        elif on_other:
            on_other(child, ev)

    if not sup.wait_until(lambda: want <= got.keys(), timeout, take):
        waiting = sorted(want - got.keys())
        shown = ", ".join(waiting[:8]) + (f" and {len(waiting) - 8} more" if len(waiting) > 8
                                          else "")
        raise PointFailed(f"timed out after {timeout:.0f} s waiting for '{event}' from "
                          f"{len(waiting)} of {len(want)}: {shown}")
    return got


@dataclass
class _Clients:
    """The point's running clients and what they have said so far."""

    producers: list[Child]
    consumers: list[Child]
    brokers: list[Child]  # the brokers the harness started: their CPU is measured too
    slots: dict[str, list[str]]  # each client process's slot ids (its own name when one)
    received: dict[str, int] = field(default_factory=dict)  # consumer slot -> its last tick
    finished: set[str] = field(default_factory=set)  # which slots said ``done``

    def __post_init__(self) -> None:
        self.received = {s: 0 for c in self.consumers for s in self.slots[c.name]}

    def of(self, children: list[Child]) -> list[str]:
        """The slot ids of ``children``."""
        return [s for c in children for s in self.slots[c.name]]

    def slot(self, child: Child, ev: dict) -> str:
        """The slot whose line ``ev`` is."""
        return slot_of(child, ev, self.slots)

    @property
    def everyone(self) -> list[Child]:
        return [*self.brokers, *self.consumers, *self.producers]

    def note(self, child: Child, ev: dict) -> None:
        """Any event while the point runs: ticks counted, a process that dies fails it."""
        live.event(child, ev)
        slot = self.slot(child, ev)
        if ev.get("event") == "tick" and slot in self.received:
            self.received[slot] = max(self.received[slot], int(ev.get("received", 0)))
        elif ev.get("event") == "done":
            self.finished.add(slot)
        elif ev.get("event") == "exit" and not (
                ev["code"] == 0 and set(self.slots.get(child.name, [slot])) <= self.finished):
            own = self.slots.get(child.name, [])
            lost = (f" with {len(own)} connections ({sum(s not in self.finished for s in own)} "
                    "not finished)" if len(own) > 1 else "")
            raise PointFailed(
                f"{child.name} exited with {ev['code']} mid-run{lost}: "
                f"{child.last_error() or 'no message'} (log: {child.log_path})"
            )


class Runner:
    """Runs one point inside its own directory, on a ``Stack`` (burstbench/infra/stack.py) that
    brings the point's hosts, databases and brokers up and down: the runner starts the clients,
    gates the bursts, waits for each to drain, reads the brokers' counters and collects the records.
    ``run()`` always stops what it started."""

    def __init__(self, spec: PointSpec, point_dir: Path, progress=None):
        self.spec = spec
        self.dir = Path(point_dir)
        self.progress = progress or (lambda msg: None)
        self.outcome = Outcome(spec=spec, point_dir=self.dir)
        self.stack: Stack | None = None
        self.queue_prefix = ""  # every queue of this point's run: bb.<tag>.
        self.placement: dict[str, str] = {}  # broker or client slot -> the host it runs on
        # each client process's slots (clients/contract.md, --connections): [its name] for one
        self.slots: dict[str, list[str]] = {}
        self.ready: dict[str, dict] = {}  # client slot -> its ready line
        self.done: dict[str, dict] = {}  # client slot (and shared Chromium) -> its done line
        self._clock_hosts: list[str] = []

    def run(self) -> Outcome:
        spec = self.spec
        spec.validate()
        self.dir.mkdir(parents=True, exist_ok=True)
        t0 = time.monotonic()
        sup = Supervisor(self.dir / "logs")
        self.stack = Stack(spec, self.dir, sup, self.progress)
        try:
            with self.stack:
                try:
                    self._drive(sup)
                finally:
                    sup.stop_all()  # the clients, then whatever of the stack is still up
                    self._fetch_remote_records()
        except BaseException as e:
            interrupted = isinstance(e, (Interrupted, KeyboardInterrupt))
            self.outcome.status = "interrupted" if interrupted else "failed"
            self.outcome.errors.append(str(e) or type(e).__name__)
            raise
        finally:
            sup.stop_all()  # (a failed bring-up has stopped its own already)
            if self.outcome.status == "failed":
                self._broker_reasons()
            self._note_stack()
            self._collect(sup)
            if self.stack.remote is not None:
                self._correct_clocks()
            self.outcome.wall_s = time.monotonic() - t0
        return self.outcome

    def _broker_reasons(self) -> None:
        """A failed point's errors gain what each started broker's log says about dropped
        connections (burstbench/infra/brokerlog.py): the client only knew it lost one."""
        for name, b in self.stack.started_brokers().items():
            self.outcome.errors += [f"broker {name} {why} (log: {b.child.log_path})"
                                    for why in brokerlog.explain(b.child.log_path)]

    def _note_stack(self) -> None:
        """What the outcome records of the infrastructure (kept after it is gone)."""
        out, stack = self.outcome, self.stack
        out.broker_version = stack.broker_version
        out.broker_product = stack.broker_product
        if stack.brokers:
            out.flow_control = out.spec.flow_control(stack.broker_product)
        out.external = dict(stack.external)
        out.namespaces = list(stack.namespaces)
        out.hosts = stack.hosts
        out.store_bytes = stack.store_bytes
        if out.client_urls:
            trust = ("the --ca bundle" if self.spec.ca else "the system's trust store"
                     ) if self.spec.broker_urls else "the bench's throwaway CA"
            out.connections = outside.connections(
                sorted(out.client_urls), stack.credentials[0] if stack.credentials else None,
                trust, self.spec.cert,
                {name: ev.get("tls") for name, ev in self.ready.items()})

    # -- the point's life --------------------------------------------------------------------
    def _drive(self, sup: Supervisor) -> None:
        """Clients up, the bursts (or one timed burst), clients down, the brokers' last word."""
        self._name_run()
        self._measure_clocks("before")
        live.point_started(self)
        cl = self._start_clients(sup)
        if self.spec.duration:
            from burstbench.measure import sustained
            sustained.drive(self, sup, cl)
        else:
            for b in range(self.spec.bursts):
                self._burst(sup, cl, b)
        self._stop_clients(sup, cl)
        self._measure_clocks("after")
        self._stop_shared_browser(sup)
        self._final_witness(sup)

    def _name_run(self) -> None:
        """This run's queue names and nonce, and the hosts the brokers run on."""
        self.queue_prefix = f"bb.{uuid.uuid4().hex[:8]}."
        self.outcome.nonce = secrets.token_hex(8)
        self.placement = self.stack.broker_hosts()

    def _measure_clocks(self, at: str) -> None:
        """SSH hosts only: every host's clock offset, ``before`` and ``after`` the point."""
        remote = self.stack.remote
        if remote is None:
            return
        if at == "before":
            spec = self.spec
            self._clock_hosts = sorted({*self.placement.values(),
                                        *(remote.client_host("producer", i)
                                          for i in range(len(spec.processes("producer")))),
                                        *(remote.client_host("consumer", i)
                                          for i in range(len(spec.processes("consumer"))))})
            self.progress(f"clock offsets of {', '.join(self._clock_hosts)} (before)")
        else:
            self.progress("clock offsets (after)")
        remote.measure_clocks(at, self._clock_hosts)

    def _start_clients(self, sup: Supervisor) -> _Clients:
        """The shared Chromium if the browser consumers want one, then every consumer, then
        every producer, each group waited for until it says ``ready``."""
        spec = self.spec
        prods, cons = spec.processes("producer"), spec.processes("consumer")
        rec = self.dir / "records"
        rec.mkdir(exist_ok=True)
        dests = ",".join(f"{self.queue_prefix}q{i}" for i in range(spec.queues))
        shared = None  # the DevTools address of the point's shared Chromium (--browser tabs)
        if browser.shares(spec.browser, [r for r, _n in cons]):
            self.progress("starting a shared Chromium for the browser consumers' tabs")
            chromium = sup.start("browser", browser.shared_argv(self.stack.ca), role="browser")
            shared = _wait_all(sup, [chromium], "ready", spec.ready_timeout)[chromium.name]["ws"]
        brokers_before = self._broker_status()
        t0 = time.monotonic()
        self.progress(f"starting {spec.consumers} consumer(s)" + (
            f" in {len(cons)} processes" if len(cons) != spec.consumers else ""))
        consumers = [self._start_client(sup, "consumer", i, r, n, dests, rec, shared)
                     for i, (r, n) in enumerate(cons)]
        self.ready = _wait_all(sup, consumers, "ready", self._ready_timeout(spec.consumers),
                               slots=self.slots)
        t1 = time.monotonic()
        self.progress(f"starting {spec.producers} producer(s)" + (
            f" in {len(prods)} processes" if len(prods) != spec.producers else ""))
        producers = [self._start_client(sup, "producer", i, r, n, dests, rec, shared)
                     for i, (r, n) in enumerate(prods)]
        self.ready |= _wait_all(sup, producers, "ready", self._ready_timeout(spec.producers),
                                slots=self.slots)
        self.outcome.connect = self._connect_figures(brokers_before, t1 - t0,
                                                     time.monotonic() - t1)
        started = [b.child for b in self.stack.brokers.values() if b.child]
        return _Clients(producers=producers, consumers=consumers, brokers=started,
                        slots=self.slots)

    def _ready_timeout(self, slots: int) -> float:
        """How long ``slots`` clients may take to say ready: the spec's time-out, and for
        thousands of connections 20 ms more each (a broker accepted about 200 a second here
        while it was busy with others)."""
        return self.spec.ready_timeout + (0.02 * slots if slots > 100 else 0)

    def _broker_status(self) -> dict[str, dict]:
        """Each started broker's resident memory and threads now."""
        return {name: b.child.status_now() for name, b in self.stack.brokers.items()
                if b.child is not None}

    def _connect_figures(self, before: dict, consumers_s: float, producers_s: float) -> dict:
        """The clients' connect times, and each started broker's memory and threads before
        the first client and once every slot said ready: what a connection costs it."""
        slots = self.spec.producers + self.spec.consumers
        out = {"slots": slots, "processes": len(self.slots),
               "consumers_ready_s": round(consumers_s, 3),
               "producers_ready_s": round(producers_s, 3), "brokers": {}}
        for name, now in self._broker_status().items():
            was = before.get(name) or {}
            entry = {"before": was, "connected": now}
            if was and now:
                entry["rss_kib_per_connection"] = round(
                    (now["rss_mb"] - was["rss_mb"]) * 1024 / slots, 1)
                entry["threads_per_connection"] = round(
                    (now["threads"] - was["threads"]) / slots, 3)
            out["brokers"][name] = entry
        costs = [b for b in out["brokers"].values() if "rss_kib_per_connection" in b]
        if costs:  # every broker of the point together, per connection of the point
            out["broker_rss_kib_per_connection"] = round(
                sum(b["rss_kib_per_connection"] for b in costs), 1)
            out["broker_threads_per_connection"] = round(
                sum(b["threads_per_connection"] for b in costs), 3)
        return out

    def _start_client(self, sup: Supervisor, role: str, i: int, r: clients.Resolved, n: int,
                      dests: str, rec: Path, shared: str | None) -> Child:
        """The ``i``-th ``role`` client process, gated, holding ``n`` slots (connections), on
        its broker's host (or its load host)."""
        spec = self.spec
        # a tuned entry is named in full wherever its processes appear
        who = r.client.name if r.client.tuned else r.client.language
        ident = f"{'p' if role == 'producer' else 'c'}{i + 1}-{who}"
        host, broker = self.stack.broker_for(role, i)
        url = broker.url_for(r.protocol)
        self.outcome.client_urls.add(url)
        # several slots: ids ident.1..ident.n, each its own records file (clients/contract.md)
        self.slots[ident] = [ident] if n == 1 else [f"{ident}.{k}" for k in range(1, n + 1)]
        many = ["--connections", str(n)] if n > 1 else []
        args = [
            "--url", url, "--destinations", dests,
            *spec.client_args(role, r, broker.product), "--id", ident, "--gate", *many,
            "--records", str(rec / ("{id}.tsv" if n > 1 else f"{ident}.tsv")),
        ]  # fmt: skip
        if role == "producer":
            args += ["--nonce", self.outcome.nonce]
        args += self.stack.security_args()
        argv = options.command(r, role, args)
        if spec.cpus_clients:
            argv = ["taskset", "-c", spec.cpus_clients, *argv]
        # over SSH its working directory there is its records directory (made by remote_exec)
        argv, host = self.stack.place(role, i, host, argv, cwd=rec)
        child = sup.start(ident, argv, role=role, remote=self.stack.remote is not None,
                          env=self.stack.client_env(browser.env_for(r, role, shared)))
        for slot in self.slots[ident]:
            self.placement[slot] = host
        return child

    def _burst(self, sup: Supervisor, cl: _Clients, b: int) -> None:
        """Burst ``b``: every producer gets ``go`` at once; wait for their confirmations, then
        until the consumers have it all; the brokers' counters and the CPU shares over it."""
        window = CpuWindow(cl.everyone)
        live.burst(b)
        for p in cl.producers:
            p.send("go")
        confirmations = _wait_all(sup, cl.producers, "burst", self._burst_timeout(),
                                  on_other=cl.note, slots=cl.slots)
        self.outcome.confirmed[b] = max(e["_rx_ns"] for e in confirmations.values())
        live.confirmed(b)
        target = self.spec.count * len(cl.of(cl.producers)) * (b + 1)
        self._drain(sup, cl.received, target, cl.note)
        wall = time.monotonic() - window.t0
        self._witness(sup, f"burst {b}", cl.note)
        self.outcome.burst_cpu.append(window.shares(b, wall))
        self.progress(
            f"burst {b + 1}/{self.spec.bursts}: {sum(cl.received.values())}/{target} received"
        )

    def _stop_clients(self, sup: Supervisor, cl: _Clients) -> None:
        """``stop`` to the producers, then the consumers, their ``done`` lines kept; then let
        them exit by themselves (their usage comes from wait4)."""
        for p in cl.producers:
            p.send("stop")
        done = _wait_all(sup, cl.producers, "done", 60, on_other=cl.note, slots=cl.slots)
        for c in cl.consumers:
            c.send("stop")
        done.update(_wait_all(sup, cl.consumers, "done", 120, slots=cl.slots))
        self.done = done
        gated = cl.producers + cl.consumers
        live.point_finished(done, {s: c.role for c in gated for s in cl.slots[c.name]})
        self.outcome.foreign_reported = sum(int(done[s].get("foreign", 0))
                                            for s in cl.of(cl.consumers))
        for child in gated:
            child.close_stdin()
        deadline = time.monotonic() + 30
        while any(c.alive() for c in gated) and time.monotonic() < deadline:
            time.sleep(0.02)

    def _stop_shared_browser(self, sup: Supervisor) -> None:
        for c in sup.children:
            if c.role == "browser" and c.alive():  # the shared Chromium, its tabs all closed
                c.send("stop")
                self.done.update(_wait_all(sup, [c], "done", 30))
                sup.stop(c)

    # -- the brokers' own counters: a second witness beside the clients' records -----------
    def _witness(self, sup: Supervisor, at: str, on_other=None, keep=True) -> dict[str, dict]:
        """Every broker the harness started reads out its counters for the run's queues (a
        ``stats`` line on its stdin, answered from inside the broker); kept in the outcome."""
        started = self.stack.started_brokers()
        kids = [b.child for b in started.values() if b.child.alive()]
        snap: dict[str, dict] = {}
        outside_brokers = {n: b for n, b in self.stack.brokers.items() if b.child is None}
        if any(b.witness == "none" for b in outside_brokers.values()):
            return snap  # counters from some brokers of the path only would prove nothing
        for name, b in outside_brokers.items():  # brokers we did not start: their witness
            snap[name] = b.queue_counts(self.queue_prefix, *(self.stack.credentials or
                                                               (None, None)),
                                        queues=self.spec.queues)
        if not kids:
            if snap and keep:
                self.outcome.broker_counts.append({"at": at, "brokers": snap})
            return snap
        for c in kids:
            c.send("stats")
        got = _wait_all(sup, kids, "stats", 30, on_other=on_other)
        for name, b in started.items():
            ev = got.get(b.child.name)
            if ev is None:
                continue
            if "error" in ev:
                snap[name] = {"error": ev["error"]}
                continue
            snap[name] = {
                "queues": {q: v for q, v in ev.get("queues", {}).items()
                           if q.startswith(self.queue_prefix)},
                "bridges": ev.get("bridges", []),
                "t_ns": ev.get("t_ns"),  # when the broker read them (its own clock)
            }
        if keep:
            self.outcome.broker_counts.append({"at": at, "brokers": snap})
        return snap

    def _final_witness(self, sup: Supervisor) -> None:
        """The end of the point, once the clients are gone: read until two readings agree and
        nothing is in flight (a store may count its last acknowledgements a moment later)."""
        deadline = time.monotonic() + 10
        last = self._witness(sup, "end", keep=False)
        while time.monotonic() < deadline:
            time.sleep(0.2)
            snap = self._witness(sup, "end", keep=False)
            settled = _counts(snap) == _counts(last) and not any(
                q.get("inflight") for b in snap.values() for q in b.get("queues", {}).values())
            last = snap
            if settled:
                break
        if last:
            self.outcome.broker_counts.append({"at": "end", "brokers": last})

    def _stall_counts(self, sup: Supervisor, note) -> str:
        """On a stall: the brokers' queue depths and bridge counts go next to the logs, and
        the error says where the messages wait."""
        try:
            snap = self._witness(sup, "stall", note)
        except PointFailed as e:
            return f"; the brokers' counters could not be read: {e}"
        path = sup.log_dir / "stall-broker-counts.json"
        path.write_text(json.dumps(snap, indent=2))
        self._stall_sockets(sup.log_dir / "stall-sockets.txt")
        waiting = [f"{name} {q} holds {v['size']:,} ({v['inflight']:,} in flight)"
                   for name, b in snap.items() for q, v in b.get("queues", {}).items()
                   if v.get("size") or v.get("inflight")]
        return (f"; {', '.join(waiting[:6])}{' ...' if len(waiting) > 6 else ''} "
                f"({path.name})" if waiting else f"; no broker holds any ({path.name})")

    def _stall_sockets(self, path: Path) -> None:
        """Every TCP socket's queues and windows (``ss -tinmp``) on each host of the point, so
        that a stall says which side stopped reading."""
        ss = shutil.which("ss")
        if ss is None:
            return
        with open(path, "w") as f:
            for ns in self.stack.shell_namespaces():
                argv = [ss, "-tinmp"] if ns is None else ["ip", "netns", "exec", ns, ss, "-tinmp"]
                f.write(f"==== {'host' if ns is None else ns}: {' '.join(argv)}\n")
                f.flush()
                subprocess.run(argv, stdout=f, stderr=subprocess.STDOUT, timeout=20, check=False)

    def _burst_timeout(self) -> float:
        spec = self.spec
        if spec.rate:
            return spec.count / spec.rate * 2 + 60
        return max(120.0, spec.count * spec.size / 1e6 + spec.count / 200.0)

    def _drain(self, sup: Supervisor, received: dict, target: int, note) -> None:
        """Wait until consumers report ``target`` messages, or no progress for a while."""
        last_total = sum(received.values())
        last_change = time.monotonic()
        while sum(received.values()) < target:
            item = sup.wait_event(0.5)
            if item is not None:
                note(*item)
            total = sum(received.values())
            if total != last_total:
                last_total, last_change = total, time.monotonic()
            elif time.monotonic() - last_change > self.spec.drain_timeout:
                where = self._stall_counts(sup, note)
                self.outcome.errors.append(
                    f"drain: {total} of {target} messages received, no progress for "
                    f"{self.spec.drain_timeout:.0f} s{where}"
                )
                dump_java_threads(sup)
                return

    def _fetch_remote_records(self) -> None:
        """SSH hosts only: bring each client's records back from its host (before the stack
        takes the hosts down)."""
        if self.stack.remote is None:
            return
        rec = self.dir / "records"
        for ident, host in self.placement.items():
            if not ident.startswith("broker-"):
                self.stack.remote.fetch(host, rec / f"{ident}.tsv")

    def _correct_clocks(self) -> None:
        """Every timestamp onto the harness's clock, by its host's offset
        (burstbench/infra/clocks.py)."""
        from burstbench.infra import clocks
        summary = self.stack.remote.clock_summary()
        placement = self.placement
        clocks.correct(self.outcome.producer_records, self.outcome.consumer_records,
                       placement, summary)
        prods = [n for n in placement if n.startswith("p")]
        cons = [n for n in placement if n.startswith("c")]
        cross = clocks.cross_host_uncertainty_ns(placement, summary, prods, cons)
        self.outcome.clocks = {"hosts": summary, "cross_host_uncertainty_ns": cross,
                               "method": "NTP-style over SSH: 4 timestamps, the minimum "
                                         f"round trip of {clocks.PROBES} probes, before and "
                                         "after the point"}

    def _host_of(self, name: str, slot: str) -> str:
        """Where a child ran: its slot's host; a broker's (``broker-a``) or its database's
        (``db-a``) is broker ``a``'s."""
        if name.startswith("db-"):
            name = "broker-" + name.removeprefix("db-")
            slot = name
        return self.placement.get(slot, name.removeprefix("broker-"))

    def _collect(self, sup: Supervisor) -> None:
        rec = self.dir / "records"
        ready = self.ready
        for child in sup.children:
            own = self.slots.get(child.name, [child.name])
            said = ready.get(own[0], {})
            socket = ({"tcp_nodelay": said.get("tcp_nodelay"),
                       "tcp_nodelay_how": said.get("tcp_nodelay_how", "not reported")}
                      if child.role in ("producer", "consumer") else {})
            self.outcome.processes.append(
                {
                    **socket,
                    "name": child.name,
                    "role": child.role,
                    "host": self._host_of(child.name, own[0]),
                    **({"connections": len(own)} if len(own) > 1 else {}),
                    "pid": child.pid,
                    "exit_code": child.returncode,
                    "cpu_s": round(child.usage.cpu_s, 3),
                    "max_rss_mb": round(child.usage.max_rss_mb, 1),
                    "max_open_files": child.usage.max_open_files,
                    "max_threads": child.usage.max_threads,
                    "log": str(child.log_path.relative_to(self.dir)),
                    # a browser client: its own Chromium or a tab, what Chromium reports
                    **browser.reported(self.done.get(child.name, {})),
                }
            )
            for slot in own:
                self._collect_records(child.role, slot, rec / f"{slot}.tsv")

    def _collect_records(self, role: str, slot: str, path: Path) -> None:
        if not path.exists():
            return
        if role == "producer":
            self.outcome.producer_records.extend(measure.read_producer_records(path))
            if self.spec.duration:
                self.outcome.send_actual.extend(measure.read_producer_actual(path))
        elif role == "consumer":
            self.outcome.consumer_records[slot] = measure.read_consumer_records(path)


def _counts(snap: dict) -> dict:
    """A witness reading without the moment it was taken (``t_ns`` differs every time): what
    two readings must share to count as settled."""
    return {name: {k: v for k, v in b.items() if k != "t_ns"} for name, b in snap.items()}
