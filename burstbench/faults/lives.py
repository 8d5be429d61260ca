"""The processes of a scenario: a ``Life`` per producer or consumer process, the
``DutyCycle`` that stops one now and then, and the OpenWire failover URL."""

from __future__ import annotations

import os
import signal
import threading
from dataclasses import dataclass
from pathlib import Path

from burstbench.faults.reckon import ProducerLife
from burstbench.infra.procs import Child


@dataclass
class Life:
    """One process in a producer or consumer slot; a slot gets a new life after a fault."""

    slot: str
    ident: str
    role: str
    child: Child
    records: Path
    plan: int = 0  # producer: bursts to send
    producer: ProducerLife | None = None
    received: int = 0  # consumer: from its ticks
    ready: bool = False
    done: dict | None = None
    exit_code: int | None = None
    may_exit: bool = False  # a fault is expected to end it
    stopping: bool = False

    @property
    def alive(self) -> bool:
        return self.exit_code is None


class DutyCycle(threading.Thread):
    """Stops a child's process group for ``stopped_s`` of every ``period_s`` until finished."""

    def __init__(self, child: Child, stopped_s: float = 0.08, period_s: float = 0.1):
        super().__init__(daemon=True, name=f"duty-{child.name}")
        self.child, self.stopped_s, self.period_s = child, stopped_s, period_s
        self.halt = threading.Event()
        self.cycles = 0

    def _signal(self, sig: int) -> bool:
        try:
            os.killpg(self.child.pid, sig)  # the child leads its own group
            return True
        except ProcessLookupError:
            return False

    def run(self) -> None:
        while not self.halt.is_set() and self.child.alive():
            if not self._signal(signal.SIGSTOP):
                break
            self.halt.wait(self.stopped_s)
            self._signal(signal.SIGCONT)
            self.cycles += 1
            self.halt.wait(self.period_s - self.stopped_s)

    def finish(self) -> None:
        self.halt.set()
        if self.is_alive():
            self.join(timeout=2)
        self._signal(signal.SIGCONT)


def failover_url(*urls: str) -> str:
    """OpenWire failover over ``urls``, retrying every 0.1-1 s, a send blocking up to 120 s."""
    return (f"failover:({','.join(urls)})?randomize=false&initialReconnectDelay=100"
            "&maxReconnectDelay=1000&timeout=120000")

