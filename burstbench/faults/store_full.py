"""store-full: 8 KiB persistent messages into a broker whose store limit (``storeUsage``)
holds about a third of the run, 1 MB journal files reclaimed every second; producers start
with no consumer until the broker says the store is full and they stopped getting
confirmations, then consumers drain it: producers must be held back (flow control) or get a
clear error, and every burst must complete once the store drains."""

from __future__ import annotations

import itertools
import time
from pathlib import Path
from typing import ClassVar

from burstbench.faults.base import Scenario
from burstbench.faults.spec import NS
from burstbench.infra.procs import Child


class StoreFull(Scenario):
    name = "store-full"
    description = ("persistent burst into a small store (storeUsage limit) with no consumer "
                   "until it is full; then consumers drain it")
    recovery = "store full -> first message the consumers got"
    defaults: ClassVar[dict] = {"size": 8192}

    @classmethod
    def fault_words(cls, fault: dict) -> list[str]:
        f = fault
        if "surfaced_as" not in f:
            return []
        return [f"limit {f['store_limit_mb']} MB; {f['surfaced_as']}"]

    def store_limit_mb(self) -> int:
        """About a third of the run's bytes (at least 3 MB: three 1 MB journal files)."""
        return max(3, self.spec.total() * self.spec.size // (3 << 20))

    def play(self) -> None:
        spec = self.spec
        limit = self.store_limit_mb()
        self.progress(f"starting broker a (kahadb, sync, store limit {limit} MB, 1 MB journal "
                      "files)")
        b = self.start_broker(self.broker_spec(
            "a", store_limit=f"{limit}mb",
            kahadb_attrs={"journalMaxFileLength": "1mb", "cleanupInterval": "1000",
                          "checkpointInterval": "500"}), "broker a")
        self.broker_log = b.child.log_path
        self.progress(f"starting {spec.producers} producer(s), no consumer yet "
                      f"({self.resolved.label})")
        prods = [self.start_client("producer", f"p{i + 1}", self.url(b), plan=spec.bursts)
                 for i in range(spec.producers)]
        self.wait_until(lambda: all(p.ready for p in prods), spec.ready_timeout,
                        "the producers' ready")
        for p in prods:
            self._feed(p)
        t0 = time.time_ns()
        held = 3.0  # no confirmation for this long, with the broker saying "full": held back

        def full() -> bool:
            if not self._log_says(b.child, "store is full"):
                return False
            last = max([t0] + [t for ts in self.burst_ns.values() for t in ts])
            return time.time_ns() - last >= held * NS or any(not p.alive for p in prods)

        self.wait_until(full, self._burst_timeout(spec.producers * spec.bursts),
                        "the store to fill (the broker's 'store is full' and producers held)")
        t_full = time.time_ns()
        at = {p.ident: len(set(p.producer.confirmed)) for p in prods}
        self.progress(f"store full after {(t_full - t0) / NS:.1f} s with {at} bursts confirmed; "
                      "starting the consumers")
        self.result.fault = {"store_limit_mb": limit, "full_ns": t_full,
                             "bursts_confirmed_when_full": at,
                             "producers_alive_when_full": [p.ident for p in prods if p.alive]}
        self.t_kill = t_full
        cons = [self.start_client("consumer", f"c{i + 1}", self.url(b))
                for i in range(spec.consumers)]
        self.wait_until(lambda: all(c.ready for c in cons), spec.ready_timeout,
                        "the consumers' ready")
        self.finish()

    def _log_says(self, child: Child, words: str) -> bool:
        try:
            return words in child.log_path.read_text(errors="replace").lower()
        except OSError:
            return False

    def after(self) -> None:
        f = self.result.fault
        gaps = {}
        for ident, ts in sorted(self.burst_ns.items()):
            marks = sorted(ts)
            gaps[ident] = round(max(y - x for x, y in itertools.pairwise(marks)) / NS, 3) \
                if len(marks) > 1 else None
        f["longest_wait_for_a_confirmation_s"] = gaps
        text = ""
        try:
            text = Path(getattr(self, "broker_log", "")).read_text(errors="replace")
        except OSError:
            pass
        f["store_full_log_lines"] = text.lower().count("store is full")
        errors = {life.ident: life.child.last_error() for life in self.producers()
                  if life.exit_code not in (None, 0)}
        f["producer_errors"] = errors
        if errors:
            how = "error: " + "; ".join(f"{k}: {v}" for k, v in errors.items())
        else:
            where = ("the synchronous send() blocked" if self.resolved.protocol == "openwire"
                     else "the broker withheld the receipt and stopped reading the connection")
            how = (f"blocked, no error: {where} (producer flow control) until the store "
                   "drained; longest wait for a confirmation " + ", ".join(
                       f"{k} {v:.1f} s" for k, v in gaps.items() if v is not None))
        f["surfaced_as"] = how
        self.result.notes.append(f"{self.resolved.client.language}: {how}")
        first = self.first_received_after(self.t_kill)
        if first is not None:
            self.result.recovery_s = round((first - self.t_kill) / NS, 3)
