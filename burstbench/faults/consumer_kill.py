"""consumer-kill: SIGKILL one of several consumers mid-run; the broker redelivers what it
held."""

from __future__ import annotations

import time
from typing import ClassVar

from burstbench.faults.base import Scenario
from burstbench.faults.spec import NS


class ConsumerKill(Scenario):
    name = "consumer-kill"
    description = "one of several client-ack consumers SIGKILLed mid-burst"
    recovery = "kill -> first redelivered message at a survivor"
    defaults: ClassVar[dict] = {"consumers": 3}
    min_consumers = 2

    @classmethod
    def fault_words(cls, fault: dict) -> list[str]:
        f = fault
        if "victim" not in f:
            return []
        return [f"{f['victim']} killed holding >= {f['victim_received_before_kill']:,}"]

    def play(self) -> None:
        spec = self.spec
        self.progress("starting broker a (kahadb, sync)")
        b = self.start_broker(self.broker_spec("a"), "broker a")
        big = 2 * spec.total() + 2
        prefetch = [big] + [spec.prefetch] * (spec.consumers - 1)
        self.start_clients([self.url(b)], [self.url(b)], prefetch)
        victim = self.consumers()[0]
        self.wait_mid_run()
        self.wait_until(lambda: victim.received > 0, 30, f"{victim.ident} to receive something")
        victim.may_exit = True
        t_kill = time.time_ns()
        held = victim.received
        self.sup.kill(victim.child)
        self.wait_until(lambda: not victim.alive, 30, f"{victim.ident} to exit")
        self.progress(f"killed {victim.ident} (pid {victim.child.pid}) holding at least {held} "
                      "unacknowledged message(s)")
        self.result.fault = {"victim": victim.ident, "victim_pid": victim.child.pid,
                             "victim_exit": victim.exit_code, "kill_ns": t_kill,
                             "victim_received_before_kill": held, "victim_prefetch": big}
        self.result.notes.append(f"{victim.ident} ran with prefetch {big} so it acknowledged "
                                 "nothing before it was killed (a SIGKILLed process writes no "
                                 "records)")
        self.t_kill = t_kill
        self.finish()

    def after(self) -> None:
        first = self.first_received_after(self.t_kill, redelivered_only=True)
        if first is not None:
            self.result.recovery_s = round((first - self.t_kill) / NS, 3)
        t = self.result.tally
        if t and not t.redelivered and self.result.status == "ok":
            self.result.status = "failed"
            self.result.errors.append("no redelivery recorded: the kill took nothing back")
