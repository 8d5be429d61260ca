"""failover-pair: two brokers on one KahaDB directory (shared-store master/slave): SIGKILL
the master; the slave gets the store's lock and takes over. Every client gets ``--url MASTER
--failover SLAVE`` and reconnects with its library's own mechanism (``FAILOVER_HOW``;
clients/contract.md, "Failover")."""

from __future__ import annotations

import time

from burstbench.faults.base import Scenario
from burstbench.faults.spec import NS, ChaosFailed
from burstbench.infra import brokers
from burstbench.infra.procs import Child

# how each library fails over (stock, documented options) and what the client's own code
# adds on top (clients/contract.md, "Failover")
FAILOVER_HOW = {
    "perl": "Net::Stomp hosts + reconnect_attempts/connect_delay: the library reconnects and "
            "re-subscribes inside its next send/receive; the client adds: resend a burst "
            "whose receipt the drop took, forget unacked messages",
    "python": "stomp.py host list + reconnect_sleep_*/reconnect_attempts_max; connect() again "
              "after on_disconnected (its documented pattern) and subscribe again; the client "
              "adds: resend a burst whose receipt the drop took, forget unacked messages",
    "node": "stompjs reconnectDelay (reconnects by itself), beforeConnect picks the next "
            "address, subscribe again in onConnect; the client adds: resend a burst whose "
            "receipt the drop took, forget unacked messages",
    "java": "failover:(master,slave) transport: reconnects, replays session state and "
            "resends in-flight sends itself; the client adds nothing",
}


class FailoverPair(Scenario):
    name = "failover-pair"
    description = "shared-store master SIGKILLed mid-burst, slave takes over"
    recovery = "kill -> first message received on a reconnected consumer"
    client = "openwire-jms"

    @classmethod
    def fault_words(cls, fault: dict) -> list[str]:
        f = fault
        if "slave_pid" not in f:
            return []
        return [f"master {f['master_pid']} -> slave {f['slave_pid']} in {f['failover_s']:.1f} s"]

    def play(self) -> None:
        spec = self.spec
        store = self.work / "shared-store"
        ms = self.broker_spec("master", data_dir=store, lock_acquire_ms=500)
        ss = self.broker_spec("slave", data_dir=store, lock_acquire_ms=500)
        self.progress("starting the master (kahadb, sync, shared store)")
        master = self.start_broker(ms, "master")
        slave = self._start_waiting(ss)
        self.progress("slave started: waiting for the store's lock")
        locked = self._wait_log(slave.child, ("locked", "slave"), 60)
        if not locked:
            self.result.notes.append("the slave's log never said it waits for the lock")
        # every client: the master's address and --failover the slave's (its library's own
        # failover; for OpenWire the client builds failover:(master,slave))
        proto = self.resolved.protocol
        url_m, url_s = ((master.openwire_url, slave.openwire_url) if proto == "openwire"
                        else (master.url_for(proto), slave.url_for(proto)))
        self.start_clients([url_m], [url_m], [spec.prefetch] * spec.consumers,
                           extra=["--failover", url_s])
        self.wait_mid_run()
        t_kill = time.time_ns()
        self.expected_broker_exit.add(id(master.child))
        self.sup.kill(master.child)
        self.progress(f"killed the master (pid {master.child.pid})")
        self.wait_until(lambda: id(slave.child) in self.broker_ready_ns, spec.ready_timeout,
                        "the slave to take over")
        deadline = time.monotonic() + 30
        while not all(brokers.port_accepts(ss.host, p) for p in slave.ports):
            if time.monotonic() > deadline:
                raise ChaosFailed(f"slave said ready but ports {slave.ports} do not accept")
            self.pump(0.05)
        t_ready = time.time_ns()
        self.progress(f"slave (pid {slave.child.pid}) took over in {(t_ready - t_kill) / NS:.1f} s")
        self.result.fault = {
            "master_pid": master.child.pid, "slave_pid": slave.child.pid, "kill_ns": t_kill,
            "slave_ready_ns": t_ready, "failover_s": round((t_ready - t_kill) / NS, 3),
            "slave_waited_for_lock": locked,
        }
        self.t_kill, self.t_ready = t_kill, t_ready
        self.finish()

    def _start_waiting(self, bs: brokers.BrokerSpec) -> brokers.Broker:
        """Launch a broker without waiting for it: a slave says ready only once it has the
        store's lock."""
        bs.data_dir.mkdir(parents=True, exist_ok=True)
        xml = self.work / f"activemq-{bs.name}.xml"
        xml.write_text(brokers.render(bs))
        child = self.sup.start(f"broker-{bs.name}",
                               brokers.java_argv(xml, bs.heap, ["--watch-stdin"]),
                               role="broker", cwd=bs.data_dir)
        self.broker_children[id(child)] = f"broker {bs.name}"
        return brokers.Broker(spec=bs, child=child, xml_path=xml)

    def _wait_log(self, child: Child, words: tuple[str, ...], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                text = child.log_path.read_text(errors="replace").lower()
            except OSError:
                text = ""
            if all(w in text for w in words):
                return True
            self.pump(0.2)
        return False

    def after(self) -> None:
        # the first message on a new connection: after the first consumer's reconnection
        # (the slave may accept clients before its launcher says ready), else after ready
        back_c = [min(ts) for ident, ts in self.reconnects.items()
                  if ts and ident.startswith("c")]
        first = self.first_received_after(min(back_c) if back_c else self.t_ready)
        if first is not None:
            self.result.recovery_s = round((first - self.t_kill) / NS, 3)
            self.result.fault["first_after_takeover_ns"] = first
        back = {ident: round((min(ts) - self.t_kill) / NS, 3)
                for ident, ts in sorted(self.reconnects.items()) if ts}
        self.result.fault["reconnected_s"] = back
        self.result.fault["beyond_documented_options"] = (
            self.resolved.client.language != "java")
        self.result.notes.append(
            f"{self.resolved.client.language}: {FAILOVER_HOW[self.resolved.client.language]}")
        gone = [life.ident for life in self.lives if life.exit_code not in (None, 0)]
        if gone:
            self.result.notes.append("exited instead of failing over: " + ", ".join(gone))
        self.unmarked_duplicates()
