"""Many connections in one client process (clients/contract.md, ``--connections N``): every
stock client holds N connections of its own, and each is a slot with its own id, lines and
records, accounted exactly like N processes."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import uuid

import pytest
from conftest import client_or_skip, run_client

from burstbench import clients
from burstbench.measure import measure

pytestmark = pytest.mark.integration

STOCK = list(clients.LANGUAGE_CLIENTS)


class _Lines:
    """A client process's stdout events, read in a thread so a test can wait with a time-out."""

    def __init__(self, proc: subprocess.Popen):
        self.proc, self.q = proc, queue.Queue()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.q.put(json.loads(line))
        self.q.put(None)

    def close(self) -> None:
        """Kills the process if it still runs; its pipes closed once read to the end."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.thread.join(timeout=10)
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if f is not None:
                f.close()

    def until(self, event: str, n: int, timeout: float = 60) -> list[dict]:
        """The next ``n`` lines saying ``event`` (others are passed over)."""
        got: list[dict] = []
        while len(got) < n:
            try:
                e = self.q.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"{len(got)} of {n} '{event}' lines in {timeout} s") from None
            if e is None:
                raise AssertionError(f"ended after {len(got)} of {n} '{event}' lines: "
                                     f"{self.proc.stderr.read()}")
            if e.get("event") == event:
                got.append(e)
        return got


def _start(r, role, url, queue_name, records, n, *extra):
    return subprocess.Popen(
        r.client.argv(role) + ["--url", url, "--destinations", queue_name,
                               "--records", str(records), "--connections", str(n), "--gate",
                               *extra],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _connections_of(pid: int, port: int) -> int:
    """Established TCP connections process ``pid`` holds to the broker's ``port``."""
    out = subprocess.run(["ss", "-Htnp", "state", "established", f"dport = :{port}"],
                         capture_output=True, text=True, check=True).stdout
    return sum(f"pid={pid}," in line for line in out.splitlines())


def _send(p: subprocess.Popen, line: str) -> None:
    p.stdin.write(line + "\n")
    p.stdin.flush()


@pytest.mark.parametrize("spec", STOCK)
def test_slots_of_one_process_are_connections_each_accounted(spec, shared_broker, tmp_path):
    """A consumer process of 4 slots and a producer process of 3, gated, two bursts: 7 ready
    lines with the slot ids, 7 connections to the broker, each producer slot's burst confirmed
    on its own, each consumer slot's records in a file of its own; the union is exact."""
    r = client_or_skip(spec)
    url = shared_broker.url_for(r.protocol)
    port = int(url.rsplit(":", 1)[1].strip("/"))
    q, count = f"contract.conn.{uuid.uuid4().hex[:8]}", 500
    rec = tmp_path / "{id}.tsv"
    cons = _start(r, "consumer", url, q, rec, 4, "--id", "c", "--prefetch", "10",
                  "--count", str(count), "--bursts", "2")
    c_lines = _Lines(cons)
    p_lines = None
    try:
        ready = c_lines.until("ready", 4)
        assert sorted(e["id"] for e in ready) == ["c.1", "c.2", "c.3", "c.4"]
        assert _connections_of(cons.pid, port) == 4
        prod = _start(r, "producer", url, q, rec, 3, "--id", "p", "--count", str(count),
                      "--bursts", "2", "--nonce", "n1")
        p_lines = _Lines(prod)
        assert sorted(e["id"] for e in p_lines.until("ready", 3)) == ["p.1", "p.2", "p.3"]
        assert _connections_of(prod.pid, port) == 3
        for b in range(2):
            _send(prod, "go")
            bursts = p_lines.until("burst", 3)
            assert sorted((e["id"], e["burst"], e["sent"]) for e in bursts) == [
                (f"p.{i}", b, count) for i in (1, 2, 3)]
        _send(prod, "stop")
        p_done = p_lines.until("done", 3)
        assert prod.wait(timeout=60) == 0, prod.stderr.read()
        assert sorted((e["id"], e["sent"]) for e in p_done) == [
            (f"p.{i}", 2 * count) for i in (1, 2, 3)]
        # every message in before the consumers stop: their ticks say so
        total, per_slot = 3 * 2 * count, {}
        while sum(per_slot.values()) < total:
            e = c_lines.until("tick", 1)[0]
            per_slot[e["id"]] = e["received"]
        _send(cons, "stop")
        c_done = c_lines.until("done", 4)
        assert cons.wait(timeout=60) == 0, cons.stderr.read()
    finally:
        for lines in (c_lines, p_lines):
            if lines is not None:
                lines.close()
    sent = [x for i in (1, 2, 3) for x in measure.read_producer_records(tmp_path / f"p.{i}.tsv")]
    got = {f"c.{i}": measure.read_consumer_records(tmp_path / f"c.{i}.tsv") for i in (1, 2, 3, 4)}
    a = measure.account(sent, got, sum(e["foreign"] for e in c_done), size=6)
    assert (a.sent, a.received, a.lost, a.duplicates, a.body_errors) == (total, total, 0, 0, 0)
    assert {x[0] for x in sent} == {"p.1", "p.2", "p.3"}  # (producer, seq, burst, sent_ns)
    done = {e["id"]: e["received"] for e in c_done}
    assert done == {k: len(v) for k, v in got.items()}, "each slot's done counts its records"
    assert all(done.values()), f"a prefetch of 10 shares the queue among the slots: {done}"


@pytest.mark.full  # (the gated slots above are counted per slot in the default tier)
@pytest.mark.parametrize("spec", STOCK)
def test_ungated_slots_stop_together_at_count_times_bursts(spec, shared_broker, tmp_path):
    """Without --gate: a producer of 2 slots sends its bursts back to back and exits; a consumer
    of 3 slots stops once they have together received count x bursts x 2."""
    r = client_or_skip(spec)
    url = shared_broker.url_for(r.protocol)
    q = f"contract.conn.{uuid.uuid4().hex[:8]}"
    common = ["--url", url, "--destinations", q, "--records", str(tmp_path / "{id}.tsv")]
    cons = subprocess.Popen(
        r.client.argv("consumer") + common + ["--count", "1200", "--connections", "3",
                                              "--prefetch", "10"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = _Lines(cons)
    try:
        lines.until("ready", 3)
        p = run_client(r, "producer", common + ["--count", "300", "--bursts", "2",
                                                "--connections", "2", "--id", "p"])
        assert p.returncode == 0, p.stderr
        assert len(lines.until("done", 3)) == 3
        assert cons.wait(timeout=60) == 0
    finally:
        lines.close()
    sent = [x for i in (1, 2) for x in measure.read_producer_records(tmp_path / f"p.{i}.tsv")]
    got = {f"c1.{i}": measure.read_consumer_records(tmp_path / f"c1.{i}.tsv") for i in (1, 2, 3)}
    a = measure.account(sent, got, 0, size=6)
    assert (a.sent, a.received, a.lost, a.duplicates) == (1200, 1200, 0, 0)


@pytest.mark.parametrize("spec", STOCK)
def test_several_connections_need_a_records_path_per_slot(spec, tmp_path):
    """--connections 2 with a --records path without {id} would write two slots to one file:
    one `error:` line and exit 2, before any connection."""
    r = client_or_skip(spec)
    for role in ("producer", "consumer"):
        out = run_client(r, role, ["--url", "tcp://127.0.0.1:1" if r.protocol == "openwire"
                                   else "stomp://127.0.0.1:1" if r.protocol == "stomp"
                                   else "ws://127.0.0.1:1/", "--destinations", "q",
                                   "--connections", "2", "--records", str(tmp_path / "x.tsv")],
                         timeout=60)
        assert out.returncode == 2, (role, out.stderr)
        lines = out.stderr.strip().splitlines()
        assert lines[-1].startswith("error:") and "{id}" in lines[-1], lines


@pytest.mark.parametrize("spec", STOCK)
def test_paced_slots_spread_over_each_interval(spec, shared_broker, tmp_path):
    """--rate 10 on 4 slots: slot k's message s is due at start + (s + k/4)/10 s, so the
    intended times (bb_sent_ns, recorded as sent_ns) of one message number are 25 ms apart
    from slot to slot, and each slot's 100 ms apart from message to message."""
    r = client_or_skip(spec)
    p = run_client(r, "producer", ["--url", shared_broker.url_for(r.protocol), "--destinations",
                                   f"contract.conn.{uuid.uuid4().hex[:8]}", "--count", "3",
                                   "--rate", "10", "--connections", "4", "--id", "p",
                                   "--records", str(tmp_path / "{id}.tsv")])
    assert p.returncode == 0, p.stderr
    due = {k: sorted(x[3] for x in measure.read_producer_records(tmp_path / f"p.{k}.tsv"))
           for k in (1, 2, 3, 4)}
    start = due[1][0]
    for k, times in due.items():
        want = [start + round((s + (k - 1) / 4) * 100e6) for s in range(3)]
        assert all(abs(a - b) <= 1000 for a, b in zip(times, want)), (k, times, want)
