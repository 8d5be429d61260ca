"""broker-kill: SIGKILL the broker's process group mid-burst, restart it on the same store
and ports. OpenWire clients reconnect by themselves (``failover:`` URL); STOMP clients
cannot, so the harness starts new ones once the broker is back."""

from __future__ import annotations

import time

from burstbench.faults.base import Scenario
from burstbench.faults.spec import NS, ChaosFailed
from burstbench.infra import brokers


class BrokerKill(Scenario):
    name = "broker-kill"
    description = "broker SIGKILLed mid-burst, restarted on the same store and ports"
    recovery = "kill -> first message received after the restart"

    @classmethod
    def fault_words(cls, fault: dict) -> list[str]:
        f = fault
        if "restarted_pid" not in f:
            return []
        return [f"pid {f['killed_pid']} -> {f['restarted_pid']}, down {f['down_s']:.1f} s"]

    def play(self) -> None:
        spec = self.spec
        stomp = self.resolved.protocol != "openwire"
        bs = self.broker_spec("a")
        self.progress("starting broker a (kahadb, sync)")
        b = self.start_broker(bs, "broker a")
        big = 2 * (spec.total() + spec.producers * spec.count) + 2
        prefetch = [big if stomp else spec.prefetch] * spec.consumers
        self.start_clients([self.url(b)], [self.url(b)], prefetch)
        self.wait_mid_run()

        old_pid = b.child.pid
        at = {life.ident: len(set(life.producer.confirmed)) for life in self.producers()}
        if stomp:
            self.hold = True
            for life in self.lives:
                life.may_exit = True
        self.expected_broker_exit.add(id(b.child))
        t_kill = time.time_ns()
        self.sup.kill(b.child)
        self.progress(f"killed broker a (pid {old_pid}, SIGKILL to its process group) with "
                      f"{at} bursts confirmed")
        self.wait_until(lambda: not b.child.alive(), 30, "the killed broker to exit")
        if stomp:
            for c in self.consumers():
                c.stopping = True
                c.child.send("stop")  # one that is still running writes its records
        b2 = self.start_broker(bs, "broker a (restarted)")  # same spec: same store and ports
        t_ready = self.broker_ready_ns[id(b2.child)]
        self.progress(f"broker a restarted as pid {b2.child.pid} in "
                      f"{(t_ready - t_kill) / NS:.1f} s")
        self.result.fault = {
            "killed_pid": old_pid, "restarted_pid": b2.child.pid, "kill_ns": t_kill,
            "ready_ns": t_ready, "down_s": round((t_ready - t_kill) / NS, 3),
            "bursts_confirmed_at_kill": at, "ports": b2.ports,
        }
        self.t_kill, self.t_ready = t_kill, t_ready
        if stomp:
            self._restart_stomp_clients(b2, big)
        self.finish()

    def _restart_stomp_clients(self, b: brokers.Broker, prefetch: int) -> None:
        """New consumers, then new producers owing what the old ones did not get confirmed."""
        spec = self.spec
        old = [life for life in self.lives if life.alive]
        try:
            self.wait_until(lambda: all(not life.alive for life in old), 20,
                            "STOMP clients to notice the dropped connection")
        except ChaosFailed:
            for life in old:
                if life.alive:
                    life.stopping = True
                    self.sup.stop(life.child)
        gone = [life for life in self.lives if life.exit_code not in (None, 0)]
        if gone:
            self.result.notes.append("exited on the dropped connection: " + ", ".join(
                f"{life.ident} ({life.exit_code})" for life in gone))
        self.hold = False
        gen = 1 + max(int(life.ident.partition("r")[2] or 0) for life in self.lives)
        cons = [self.start_client("consumer", f"c{i + 1}", self.url(b), generation=gen,
                                  prefetch=prefetch) for i in range(spec.consumers)]
        self.wait_until(lambda: all(c.ready for c in cons), spec.ready_timeout,
                        "the new consumers' ready")
        owed = {}
        for i in range(spec.producers):
            slot = f"p{i + 1}"
            left = spec.bursts - self.confirmed_bursts(slot)
            if left > 0:
                owed[slot] = left
        prods = [self.start_client("producer", slot, self.url(b), generation=gen, plan=left)
                 for slot, left in owed.items()]
        self.wait_until(lambda: all(p.ready for p in prods), spec.ready_timeout,
                        "the new producers' ready")
        self.progress("restarted STOMP clients: " + ", ".join(
            f"{p.ident} owes {p.plan} burst(s)" for p in prods) if prods else "nothing owed")
        self.result.notes.append(
            "STOMP clients do not reconnect: after the restart the harness started "
            + ", ".join(life.ident for life in cons + prods)
            + f"; STOMP consumers ran with prefetch {prefetch} so one that died unrecorded had "
            "acknowledged nothing")
        for p in prods:
            self._feed(p)

    def after(self) -> None:
        first = self.first_received_after(self.t_ready)
        if first is not None:
            self.result.recovery_s = round((first - self.t_kill) / NS, 3)
            self.result.fault["first_after_restart_ns"] = first
        self.unmarked_duplicates()
