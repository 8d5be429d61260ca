"""slow-consumer: stop one consumer 80% of every 100 ms (SIGSTOP/SIGCONT on its process
group), prefetch 10, 1 KiB bodies, queue memory limit 1 MB: its prefetch fills, the others
take the rest, and nothing may stall for ``stall_timeout``."""

from __future__ import annotations

import time
from pathlib import Path
from typing import ClassVar

from burstbench.faults.base import Scenario
from burstbench.faults.lives import DutyCycle
from burstbench.faults.spec import NS


class SlowConsumer(Scenario):
    name = "slow-consumer"
    description = "one consumer stopped 80% of every 100 ms (SIGSTOP/SIGCONT)"
    # 1 KiB bodies, so the broker's memory fills; prefetch 10, so its limit binds the slow
    # one early
    defaults: ClassVar[dict] = {"size": 1024, "consumers": 3, "prefetch": 10}
    min_consumers = 2

    @classmethod
    def fault_words(cls, fault: dict) -> list[str]:
        f = fault
        if "shares" not in f:
            return []
        s = f["shares"].get(f["slow"])
        lim = [f"prefetch {f.get('prefetch')}"] + [
            w for k, w in (("flow_control_log_lines", "producer flow control"),
                           ("cursor_blocked_log_lines", "cursor blocked")) if f.get(k)]
        return [f"slow share {s:.1%} of fair {f['fair_share']:.1%}; limits: {', '.join(lim)}"] \
            if s is not None else []

    def struck(self) -> bool:
        return True  # the fault lasts the whole run

    def play(self) -> None:
        spec = self.spec
        self.progress("starting broker a (kahadb, sync, queue memory limit 1mb)")
        b = self.start_broker(self.broker_spec("a", queue_memory_limit="1mb"), "broker a")
        self.broker_log = b.child.log_path
        self.start_clients([self.url(b)], [self.url(b)], [spec.prefetch] * spec.consumers)
        slow = self.consumers()[0]
        self.duty = DutyCycle(slow.child)
        self.duty.start()
        self.progress(f"{slow.ident} stopped 80% of every 100 ms")
        t0 = time.time_ns()
        self.result.fault = {"slow": slow.ident, "stopped_fraction": 0.8, "period_s": 0.1,
                             "prefetch": spec.prefetch}
        self.drain()
        self.result.fault.update(duty_cycles=self.duty.cycles,
                                 run_s=round((time.time_ns() - t0) / NS, 1))
        self.stop_consumers()
        self.stop_brokers()

    def after(self) -> None:
        t = self.result.tally
        slow = self.result.fault.get("slow")
        total = sum(t.by_consumer.values()) or 1
        shares = {k: round(v / total, 3) for k, v in t.by_consumer.items()}
        self.result.fault["shares"] = shares
        self.result.fault["fair_share"] = round(1 / self.spec.consumers, 3)
        if slow in shares:
            self.result.notes.append(f"{slow}'s share {shares[slow]:.1%} (fair share "
                                     f"{1 / self.spec.consumers:.1%})")
        text = ""
        try:
            text = Path(getattr(self, "broker_log", "")).read_text(errors="replace")
        except OSError:
            pass
        pfc = text.count("Usage Manager Memory Limit reached")
        blocked = text.count("cursor blocked")
        self.result.fault["flow_control_log_lines"] = pfc
        self.result.fault["cursor_blocked_log_lines"] = blocked
        self.result.notes.append(
            f"broker log: producer flow control {pfc} time(s), cursor blocked at the queue's "
            f"memory limit (no page-in) {blocked} time(s); prefetch {self.spec.prefetch} "
            "bounds what the slow consumer holds, the rest goes to the others")
