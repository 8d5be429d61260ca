"""link-cut: ``forward`` topology on network namespaces (producer on a, consumers on b):
take b's link down for ``--cut-seconds`` mid-run, then restore it. Clients talk to their own
host's broker, so only the bridge a -> b crosses the cut (cutting a would do the same)."""

from __future__ import annotations

import itertools
import time

from burstbench.faults.base import Scenario
from burstbench.faults.spec import NS


class LinkCut(Scenario):
    name = "link-cut"
    description = "inter-broker link (forward, a -> b) cut mid-burst, then restored"
    recovery = "restore -> first message forwarded after it"
    needs_netns = True

    @classmethod
    def fault_words(cls, fault: dict) -> list[str]:
        f = fault
        if "longest_gap_s" not in f:
            return []
        return [f"cut {f['cut_s']:.0f} s, gap {f['longest_gap_s']:.1f} s"]

    def play(self) -> None:
        spec = self.spec
        _lay, specs = self.namespaced_specs("forward", "c")
        started = self.start_namespaced(specs)
        a, b = started["a"], started["b"]
        def bridged() -> bool:  # attempts made while b was starting come and go: wait it out
            return bool(self.bridge_events) and self.bridge_events[-1][1] > 0

        for _ in range(2):
            self.wait_until(bridged, spec.ready_timeout, "the network bridge a -> b")
            self.pause(1.0)
        self.start_clients([self.url(b)], [self.url(a)], [spec.prefetch] * spec.consumers,
                           wrap_c=self.net.wrap("b"), wrap_p=self.net.wrap("a"))
        self.wait_mid_run()
        # clients talk to their own host's broker; only the bridge a -> b crosses the cut
        t_cut = time.time_ns()
        self.net.cut("b")
        self.progress(f"cut b's link for {spec.cut_s:g} s")
        try:
            self.pause(spec.cut_s)
        finally:
            self.net.restore("b")
        t_restore = time.time_ns()
        self.progress("restored b's link")
        self.result.fault = {"cut": "b", "cut_ns": t_cut, "restore_ns": t_restore,
                             "cut_s": round((t_restore - t_cut) / NS, 3),
                             "bursts_confirmed_at_cut": self.confirmed_bursts()}
        self.t_cut, self.t_restore = t_cut, t_restore
        self.finish()

    def after(self) -> None:
        times = sorted(r.recv_ns for recs in self.consumer_records.values() for r in recs)
        gap, at = 0, None
        for x, y in itertools.pairwise(times):
            if y > self.t_cut and x < self.t_restore + 60 * NS and y - x > gap:
                gap, at = y - x, x
        self.result.fault["longest_gap_s"] = round(gap / NS, 3)
        if at is not None:
            self.result.fault["gap_from_ns"] = at
        first = self.first_received_after(self.t_restore)
        if first is not None:
            self.result.recovery_s = round((first - self.t_restore) / NS, 3)
        if gap < self.spec.cut_s / 2 * NS:
            self.result.notes.append("deliveries never paused for half the cut: the cut did "
                                     "not interrupt forwarding")
        end = self.t_drained or time.time_ns()
        drops = sum(1 for t, n in self.bridge_events if n == 0 and self.t_cut <= t <= end)
        self.result.fault["bridge_drops"] = drops
        self.result.notes.append(
            f"longest pause in deliveries {gap / NS:.1f} s; recovery = restore -> first "
            "message forwarded after it; "
            + (f"the bridge dropped {drops} time(s) and reconnected" if drops else
               "the bridge (one TCP connection) stayed up through the cut"))
