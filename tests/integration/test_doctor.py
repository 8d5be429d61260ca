"""``./bench doctor``: every registered client and feature gets a verdict, a missing piece is
named, and nothing it started outlives it."""

from __future__ import annotations

import dataclasses
import re
import signal
import subprocess
import sys
import time

import psutil
import pytest
from conftest import ROOT, need_broker_built

from burstbench import clients, doctor

pytestmark = pytest.mark.integration


def _leftovers(pids: set[int]) -> list[str]:
    out = []
    for pid in pids:
        try:
            p = psutil.Process(pid)
            if p.status() != psutil.STATUS_ZOMBIE:
                out.append(f"{pid} {' '.join(p.cmdline())[:120]}")
        except psutil.NoSuchProcess:
            pass
    return out


def _watch_children(proc: subprocess.Popen, until) -> set[int]:
    """PIDs of ``proc``'s descendants, sampled until ``until(pids so far)`` says stop."""
    seen: set[int] = set()
    parent = psutil.Process(proc.pid)
    while True:
        try:
            seen |= {c.pid for c in parent.children(recursive=True)}
        except psutil.NoSuchProcess:
            break
        if until(seen):
            break
        time.sleep(0.2)
    return seen


def test_the_table_lists_every_client_transport_and_feature_with_a_verdict():
    need_broker_built()
    proc = subprocess.Popen([sys.executable, "-m", "burstbench.cli", "doctor"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    started = _watch_children(proc, lambda _: proc.poll() is not None)
    out, err = proc.communicate(timeout=300)
    assert started, "the doctor started no process"
    assert _leftovers(started) == []

    rows = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 + len(doctor.FEATURES) and parts[0] in clients.names():
            rows[(parts[0], parts[1])] = parts[2:]
    want = {(c.name, t) for c in clients.REGISTRY for t in c.transports}
    assert set(rows) == want, out
    assert all(v in ("ok", "FAIL", "missing") for cells in rows.values() for v in cells), out
    header = next(ln for ln in out.splitlines() if ln.startswith("client"))
    assert header.split() == ["client", "transport", *doctor.FEATURES]

    # a progress line per check, and the exit code follows the verdicts
    n = len(want) * len(doctor.FEATURES)
    assert len(re.findall(rf"^\s+\[\s*\d+/{n}\] ", err, re.MULTILINE)) == n, err
    bad = sum(v != "ok" for cells in rows.values() for v in cells)
    assert f"bench doctor: {n - bad} of {n} features work" in out
    assert proc.returncode == (1 if bad else 0), err
    # each verdict that is not ok names why, under "what does not work"
    for (c, t), cells in rows.items():
        for f, v in zip(doctor.FEATURES, cells, strict=True):
            if v == "FAIL":
                assert re.search(rf"^  {re.escape(c)} {t} {f}: \S", out, re.MULTILINE), out
            elif v == "missing":
                assert re.search(rf"^  {re.escape(c)}: \S", out, re.MULTILINE), out


def test_a_missing_perl_module_and_a_missing_program_are_named(tmp_path, monkeypatch):
    """The fresh machine of issue 13 (Net::Stomp without IO::Socket::SSL), reproduced by an
    @INC entry in front whose IO/Socket/SSL.pm fails as an absent one does; and a registered
    client whose program file is not there (a tuned entry being written)."""
    need_broker_built()
    hide = tmp_path / "inc"
    (hide / "IO" / "Socket").mkdir(parents=True)
    (hide / "IO" / "Socket" / "SSL.pm").write_text(
        'die "Can\'t locate IO/Socket/SSL.pm in \\@INC\\n";\n')
    perl = clients.get("net-stomp")
    nossl = dataclasses.replace(
        perl, name="net-stomp-nossl", aliases=(),
        producer=("perl", "-I", str(hide), *perl.producer[1:]),
        consumer=("perl", "-I", str(hide), *perl.consumer[1:]))
    ghost = dataclasses.replace(
        clients.get("stomp-py"), name="stomp-py-ghost", aliases=(),
        producer=(sys.executable, str(tmp_path / "ghost.py"), "producer.py"),
        consumer=(sys.executable, str(tmp_path / "ghost.py"), "consumer.py"))
    monkeypatch.setattr(clients, "REGISTRY", (*clients.REGISTRY, nossl, ghost))
    if nossl.missing():
        pytest.skip(nossl.missing())

    checks = doctor.plan(["net-stomp-nossl", "stomp-py-ghost"])
    assert [(c.client, c.feature) for c in checks] == [
        (n, f) for n in ("net-stomp-nossl", "stomp-py-ghost") for f in doctor.FEATURES]
    lines: list[str] = []
    doctor.run_checks(checks, count=5, progress=lines.append, work=tmp_path / "work")
    by = {(c.client, c.feature): c for c in checks}
    assert by[("net-stomp-nossl", "plain")].verdict == "ok", by
    assert by[("net-stomp-nossl", "auth")].verdict == "ok", by
    tls = by[("net-stomp-nossl", "tls")]
    assert tls.verdict == "FAIL" and "IO::Socket::SSL" in tls.detail, tls
    assert "libio-socket-ssl-perl" in tls.detail
    for f in doctor.FEATURES:
        g = by[("stomp-py-ghost", f)]
        assert g.verdict == "missing" and "ghost.py" in g.detail, g
    text = doctor.table(checks)
    assert re.search(r"^net-stomp-nossl\s+tcp\s+ok\s+FAIL\s+ok$", text, re.MULTILINE), text
    assert re.search(r"^stomp-py-ghost\s+tcp\s+missing\s+missing\s+missing$", text,
                     re.MULTILINE), text
    assert "net-stomp-nossl tcp tls: error: stomp+ssl:// needs the Perl module IO::Socket::SSL" \
        in text
    assert sum(ln.startswith("[") for ln in lines) == len(checks), lines


def test_ctrl_c_stops_every_process_it_started():
    need_broker_built()
    proc = subprocess.Popen([sys.executable, "-m", "burstbench.cli", "doctor", "--clients",
                             "openwire-jms,akka-bridge"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    t0 = time.monotonic()
    err: list[str] = []
    # wait until a check is under way (brokers up), then interrupt it
    for line in proc.stderr:
        err.append(line)
        if "broker auth: ready" in line or time.monotonic() - t0 > 120:
            break
    # three brokers and a client's process at least, or give up waiting
    seen = _watch_children(proc, lambda pids: len(pids) >= 4 or proc.poll() is not None
                           or time.monotonic() - t0 > 150)
    proc.send_signal(signal.SIGINT)
    _, rest = proc.communicate(timeout=60)
    assert proc.returncode == 130, "".join(err) + rest
    assert "every process it started was stopped" in rest
    assert len(seen) >= 4, seen  # three brokers and a client at least
    assert _leftovers(seen) == []
