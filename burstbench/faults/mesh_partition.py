"""mesh-partition: ``mesh3`` on network namespaces (duplex bridges a-b, a-c, b-c), a
producer and a consumer on each broker: c's link goes down for ``--cut-seconds`` (c's
clients keep talking to c, a and b to each other), then comes back; once the bridges are up
again every confirmed message must be delivered, and after the consumers stop the brokers'
own counters must show nothing left on any broker (none stranded)."""

from __future__ import annotations

import time
from typing import ClassVar

from burstbench.faults.base import Scenario
from burstbench.faults.spec import NS, ChaosFailed


class MeshPartition(Scenario):
    name = "mesh-partition"
    description = ("mesh3 on network namespaces, clients on all three brokers: broker c's "
                   "links cut mid-run, then restored")
    recovery = "restore -> first message across c's link"
    # one producer and one consumer per broker
    fixed: ClassVar[dict] = {"producers": 3, "consumers": 3}
    needs_netns = True

    @classmethod
    def fault_words(cls, fault: dict) -> list[str]:
        f = fault
        if "cut_s" not in f:
            return []
        stranded = sum(f.get("stranded", {}).values())
        return [(f"c cut {f['cut_s']:.0f} s, bridges back in {f.get('bridges_back_s', '-')} s, "
                f"held until restore {f.get('held_until_restore', 0):,}, stranded {stranded:,}")]

    def play(self) -> None:
        spec = self.spec
        lay, specs = self.namespaced_specs("mesh3", "m")
        started = self.start_namespaced(specs)
        want = {f"broker {n}": lay.expected_bridges(n, "static") for n in lay.brokers}

        def meshed() -> bool:
            return all(self.bridges_now.get(k, 0) >= v for k, v in want.items())

        self.wait_until(meshed, spec.ready_timeout, "the mesh's bridges")
        self.pause(1.0)
        self.progress(f"starting a consumer and a producer on each of a, b, c "
                      f"({self.resolved.label})")
        hosts = lay.brokers
        cons = [self.start_client("consumer", f"c{i + 1}", self.url(started[h]),
                                  wrap=self.net.wrap(h)) for i, h in enumerate(hosts)]
        self.wait_until(lambda: all(c.ready for c in cons), spec.ready_timeout,
                        "the consumers' ready")
        self.pause(1.0)  # each consumer's demand reaches the other brokers
        prods = [self.start_client("producer", f"p{i + 1}", self.url(started[h]),
                                   plan=spec.bursts, wrap=self.net.wrap(h))
                 for i, h in enumerate(hosts)]
        self.wait_until(lambda: all(p.ready for p in prods), spec.ready_timeout,
                        "the producers' ready")
        for p in prods:
            self._feed(p)
        self.wait_mid_run()
        t_cut = time.time_ns()
        self.net.cut("c")
        self.progress(f"cut c's link for {spec.cut_s:g} s (a <-> b stays up)")
        try:
            self.pause(spec.cut_s)
        finally:
            self.net.restore("c")
        t_restore = time.time_ns()
        self.progress("restored c's link")
        self.t_cut, self.t_restore = t_cut, t_restore
        self.result.fault = {"cut": "c", "cut_ns": t_cut, "restore_ns": t_restore,
                             "cut_s": round((t_restore - t_cut) / NS, 3),
                             "bursts_confirmed_at_cut": self.confirmed_bursts()}
        try:
            self.wait_until(meshed, 120, "the bridges to c to come back")
            self.result.fault["bridges_back_s"] = round((time.time_ns() - t_restore) / NS, 3)
        except ChaosFailed as e:
            self.result.errors.append(str(e))
        self.drain()
        self.t_drained = time.time_ns()
        self.stop_consumers()
        # what each broker still holds once every consumer has acknowledged and left. A
        # message the network bridge took just before the consumers left is in flight until
        # the remote broker's acknowledgement comes back (asynchronously): the counters are
        # read until nothing is in flight or 20 s have passed, and both readings kept
        first = left = self.query_stats()
        t0 = time.monotonic()
        while any(q.get("inflight") for q in left.values()) and time.monotonic() - t0 < 20:
            time.sleep(0.5)
            left = self.query_stats()
        self.result.fault["brokers_at_leave"] = first
        self.result.fault["brokers_after"] = left
        self.result.fault["settle_s"] = round(time.monotonic() - t0, 1)
        self.stop_brokers()

    def after(self) -> None:
        # deliveries that cross c's link: a producer on c to a consumer on a or b, or back
        host = {"1": "a", "2": "b", "3": "c"}
        cross = [r for c, recs in self.consumer_records.items() for r in recs
                 if (host.get(c[1:2]) == "c") != (host.get(r.producer[1:2]) == "c")]
        after = sorted(r.recv_ns for r in cross if r.recv_ns >= self.t_restore)
        if after:
            self.result.recovery_s = round((after[0] - self.t_restore) / NS, 3)
        # the cut separated c: nothing sent a second into it crossed before the restore
        # (messages forwarded before the cut may still be consumed on the far side meanwhile)
        leaked = sum(1 for r in cross
                     if r.sent_ns > self.t_cut + NS and r.recv_ns < self.t_restore)
        held = sum(1 for r in cross
                   if self.t_cut + NS < r.sent_ns < self.t_restore <= r.recv_ns)
        self.result.fault["crossed_total"] = len(cross)
        self.result.fault["crossed_during_cut"] = leaked
        self.result.fault["held_until_restore"] = held
        if leaked:
            self.result.notes.append(f"{leaked} message(s) sent during the cut crossed c's "
                                     "link before the restore: the cut did not separate c")
        end = self.t_drained or time.time_ns()
        drops = sum(1 for t, n in self.bridge_events if self.t_cut <= t <= end and n == 0)
        self.result.fault["bridge_drops"] = drops
        self.result.notes.append(
            f"{held:,} message(s) sent during the cut crossed c's link only after the "
            "restore; " + (f"bridges dropped {drops} time(s) and reconnected" if drops else
               "the bridges' TCP connections outlived the cut"))
        left = self.result.fault.get("brokers_after", {})
        stranded = {b: q["size"] for b, q in left.items() if q.get("size")}
        self.result.fault["stranded"] = stranded
        if stranded and self.result.status == "ok":
            self.result.status = "failed"
            self.result.errors.append(f"messages stranded on a broker: {stranded}")
        self.result.notes.append(
            "brokers after the consumers left (enqueued/dequeued/left): " + ", ".join(
                f"{b} {q['enqueued']:,}/{q['dequeued']:,}/{q['size']:,}"
                for b, q in sorted(left.items())))
