"""Running a round's programs under the ``Supervisor``: one to its end, several together with a CPU
sampler each, a queue held until its consumers are there."""

from __future__ import annotations

import time

from burstbench.infra.procs import ChildExited, Supervisor
from burstbench.measure.perf.cpu import (
    TASKSET,
    CpuSampler,
    pin_threads,
)


class PerfError(RuntimeError):
    pass


def run_to_end(sup: Supervisor, name: str, argv: list[str], timeout: float,
                cpu: list | None = None) -> list[dict]:
    """Run one program to its end; its events. With ``cpu`` (a list), a CpuSampler of the
    process is appended to it."""
    evs, samplers = _run_all(sup, [(name, argv)], timeout, sample=cpu is not None)
    if cpu is not None:
        cpu.append(samplers[name])
    return evs[name]


def _run_all(sup: Supervisor, progs: list[tuple[str, list[str]]], timeout: float,
             cpus: set[int] | None = None, sample: bool = True, on_other=None,
             reads: bool = False) -> tuple[dict[str, list[dict]], dict[str, CpuSampler]]:
    """Start the programs one after the other and wait until all have exited 0: each one's
    events, and (with ``sample``) its CpuSampler, by name (counting its read calls too with
    ``reads``). With ``cpus`` each runs on those CPUs from its start, under ``taskset``, so
    that a runtime that sizes itself by the CPUs it may use sees them (a JVM started on two
    and moved to one kept two collector threads, spinning on one); its threads are pinned once
    more right after the start, in case.
    ``on_other(child, event)`` gets the events of other children meanwhile (the broker's)."""
    kids: dict[str, object] = {}
    samplers: dict[str, CpuSampler] = {}
    evs: dict[str, list[dict]] = {name: [] for name, _ in progs}
    exited: set[str] = set()

    def take(who, ev: dict) -> None:
        name = next((n for n, c in kids.items() if c is who), None)
        if name is None:
            if on_other is not None:
                on_other(who, ev)
            return
        if ev.get("event") == "exit":
            exited.add(name)
        else:
            evs[name].append(ev)

    on = (["taskset", "-c", ",".join(str(c) for c in sorted(cpus))]
          if cpus is not None and TASKSET else [])
    try:
        for name, argv in progs:
            child = sup.start(name, [*on, *argv], role="perf")
            kids[name] = child
            if cpus is not None:
                pin_threads([child.pid], cpus)
            if sample:
                samplers[name] = CpuSampler(child.pid, reads=reads)
                samplers[name].start()
        try:
            ok = sup.wait_until(lambda: len(exited) == len(kids), timeout, take,
                                watch=list(kids.values()), poll=1.0)
        except ChildExited as e:
            raise PerfError(f"{e.child.name} exited with {e.code}: {e.child.last_error()}") \
                from None
        if not ok:
            where = (f"log: {next(iter(kids.values())).log_path}" if len(kids) == 1
                     else f"logs: {sup.log_dir}")
            raise PerfError(f"{' and '.join(kids)} did not finish within {timeout:.0f} s "
                            f"({where})")
        return evs, samplers
    finally:
        for sm in samplers.values():
            sm.halt.set()
            sm.join()
        for child in kids.values():
            if child.alive():
                sup.stop(child)


def run_together(sup: Supervisor, consumer: tuple[str, list[str]], producer: tuple[str, list[str]],
                  subscribed, timeout: float) -> dict[str, list[dict]]:
    """Start the consumer, wait until ``subscribed(child, events)`` says it is listening, start
    the producer, and wait for both to exit 0. Returns each one's events by name."""
    deadline = time.monotonic() + timeout
    children = {consumer[0]: sup.start(consumer[0], consumer[1], role="perf")}
    evs: dict[str, list[dict]] = {consumer[0]: [], producer[0]: []}

    def take(who, ev: dict) -> None:
        name = next((n for n, c in children.items() if c is who), None)
        if name is None:
            return
        if ev.get("event") == "exit" and ev["code"] != 0:
            for c in children.values():
                sup.stop(c)
            raise PerfError(f"{name} exited with {ev['code']}: {who.last_error()}")
        evs[name].append(ev)

    def pump(until) -> None:
        if not sup.wait_until(until, deadline - time.monotonic(), take, poll=0.2):
            for c in children.values():
                sup.stop(c)
            raise PerfError(f"{' and '.join(children)} did not finish within "
                            f"{timeout:.0f} s (logs: {sup.log_dir})")

    c = children[consumer[0]]
    pump(lambda: subscribed(c, evs[consumer[0]]))
    children[producer[0]] = sup.start(producer[0], producer[1], role="perf")
    pump(lambda: all(any(e.get("event") == "exit" for e in evs[n]) for n in children))
    return evs


class Hold:
    """The broker holding queues' dispatch until each has a consumer (its ``hold`` command,
    broker/src/main/java/burstbench/broker/Main.java): its ``held`` and ``released`` events."""

    def __init__(self, sup: Supervisor, broker, queues: list[str], timeout: float = 30):
        self.broker, self.queues = broker, queues
        held = broker.ask(sup, "hold " + " ".join(queues), "held", timeout)
        if held is None:
            raise PerfError(f"the broker did not answer 'hold' within {timeout:.0f} s")
        if "error" in held:
            raise PerfError(f"the broker cannot hold {' '.join(queues)}: {held['error']}")
        self.events = [held]

    def take(self, child, ev: dict) -> bool:
        """Keep the broker's hold events; whether ``ev`` was one."""
        if child is self.broker.child and ev.get("event") in ("held", "released"):
            self.events.append(ev)
            return True
        return False

    def released(self) -> dict:
        """The ``released`` event, which must say that every queue had its consumer."""
        rel = next((e for e in self.events if e.get("event") == "released"), None)
        if rel is None or rel.get("subscribed") is not True:
            raise PerfError(f"the broker let {' '.join(self.queues)} go before each had its "
                            f"consumer: {rel}")
        return rel


def fill_then_drain(sup, broker, queues: list[str], sends: list[tuple[str, list[str]]],
                     recvs: list[tuple[str, list[str]]], cpus: set[int], first: bool,
                     reads: bool = False) -> tuple[dict, dict, dict, dict, float]:
    """A one-CPU round's two phases: both producers at the same time on ``cpus``, then both
    consumers, the broker holding ``queues`` until each has subscribed (Hold). ``sends`` and
    ``recvs`` are (name, argv) pairs, the first of each started first when ``first``, else the
    second (``reads``: count the consumers' read calls too). Returns the producers' events and
    CpuSamplers, the consumers', and how long the broker held the queues (ms)."""
    def order(progs):
        return progs if first else progs[::-1]

    sent, s_cpu = _run_all(sup, order(sends), 600, cpus)
    hold = Hold(sup, broker, queues)
    got, r_cpu = _run_all(sup, order(recvs), 600, cpus, on_other=hold.take, reads=reads)
    return sent, s_cpu, got, r_cpu, float(hold.released()["held_ms"])
