"""Points against official ActiveMQ distributions the bench did not start, configured as they
ship: every language's stock client, exact accounting, and a second witness when there is one
(Jolokia with the console's login), "no second witness" and a pass when there is none."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys

import pytest
from conftest import ROOT, client_or_skip
from distributions import start_artemis, start_classic

from burstbench.infra.procs import Supervisor

# on one worker (./bench test runs --dist loadgroup): its module brokers start once
pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("outside-brokers")]

MIXED = ["--producer", "net-stomp,stomp-py", "--producers", "2",
         "--consumer", "stompjs,openwire-jms,stomp-py,net-stomp", "--consumers", "4"]


# the console's password, changed from the shipped "admin" as its users do, so that a test
# can look for it in everything the run wrote
PASSWORD = f"pw-{secrets.token_hex(8)}"


def _console_password(conf):
    realm = conf / "jetty-realm.properties"
    realm.write_text(realm.read_text().replace("admin: admin, admin",
                                               f"admin: {PASSWORD}, admin"))


@pytest.fixture(scope="module")
def classic(tmp_path_factory):
    for c in ("net-stomp", "stomp-py", "stompjs", "openwire-jms"):
        client_or_skip(c)
    work = tmp_path_factory.mktemp("classic-dist")
    sup = Supervisor(work / "logs")
    try:
        yield start_classic(sup, work, configure=_console_password)
    finally:
        sup.stop_all()


@pytest.fixture(scope="module")
def artemis(tmp_path_factory):
    """Artemis 2.40.0 as ``artemis create`` makes it: its acceptors as they come (no
    /queue/ prefix mapped), anonymous clients, the console's admin with PASSWORD."""
    client_or_skip("openwire-jms")
    work = tmp_path_factory.mktemp("artemis-dist")
    sup = Supervisor(work / "logs")
    try:
        yield start_artemis(sup, work, PASSWORD)
    finally:
        sup.stop_all()


def _run(tmp_path, *args, env=None):
    env = {**{k: v for k, v in os.environ.items() if k != "BURSTBENCH_ADMIN_PASSWORD"},
           "BURSTBENCH_RESULTS": str(tmp_path), **(env or {})}
    return subprocess.run([sys.executable, "-m", "burstbench.cli", "run", *args], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=600, check=False)


def _point(tmp_path) -> dict:
    return json.loads((tmp_path / "latest" / "points" / "point.json").read_text())


def test_a_stock_classic_without_a_witness_passes_on_exact_accounting(classic, tmp_path):
    r = _run(tmp_path, "--broker-url", classic.broker_url(), *MIXED, "--count", "5000",
             "--bursts", "2")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    doc = _point(tmp_path)
    assert doc["status"] == "ok" and doc["accounting"]["lost"] == 0
    assert doc["accounting"]["received"] == 20000
    assert doc["versions"]["broker"]["version"] == "5.18.3"
    w = doc["broker_witness"]
    assert not w["available"] and w["sources"] == {"a": "none"}
    assert "no second witness" in r.stdout and "no second witness" in w["why"]
    assert doc["resources"]["external_brokers"]["a"]["witness"] == "none"


def test_jolokia_with_the_consoles_login_is_the_witness(classic, tmp_path):
    pw = tmp_path / "admin-password"
    pw.write_text(PASSWORD + "\n")
    r = _run(tmp_path, "--broker-url", classic.broker_url(), *MIXED, "--count", "5000",
             "--bursts", "2", "--broker-admin", classic.jolokia, "--admin-user", "admin",
             "--admin-password-file", str(pw))
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    doc = _point(tmp_path)
    w = doc["broker_witness"]
    assert w["available"] and w["agrees"], w.get("problems")
    assert w["sources"] == {"a": "jolokia"}
    assert w["total"]["enqueued"] == w["total"]["dequeued"] == 20000
    assert w["total"]["size"] == 0
    assert "brokers' counters (jolokia): enqueued 20,000" in r.stdout
    ext = doc["resources"]["external_brokers"]["a"]
    assert ext["product"] == "ActiveMQ Classic" and ext["admin"].startswith(classic.jolokia)
    # the password is nowhere in what the run printed or wrote
    assert PASSWORD not in r.stdout + r.stderr
    run_dir = (tmp_path / "latest").resolve()
    assert not [p for p in run_dir.rglob("*")
                if p.is_file() and PASSWORD.encode() in p.read_bytes()]


def test_the_password_may_come_from_the_environment(classic, tmp_path):
    r = _run(tmp_path, "--broker-url", classic.urls["stomp"], "--producer", "stomp-py",
             "--consumer", "stomp-py", "--count", "2000", "--bursts", "2",
             "--broker-admin", classic.jolokia, "--admin-user", "admin",
             env={"BURSTBENCH_ADMIN_PASSWORD": PASSWORD})
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    w = _point(tmp_path)["broker_witness"]
    assert w["available"] and w["agrees"] and w["total"]["enqueued"] == 4000


def test_a_refused_console_login_is_one_line_and_nothing_runs(classic, tmp_path):
    r = _run(tmp_path, "--broker-url", classic.broker_url(), "--count", "100",
             "--broker-admin", classic.jolokia, "--admin-user", "admin",
             env={"BURSTBENCH_ADMIN_PASSWORD": "wrong"})
    assert r.returncode == 2 and "HTTP 401: the login was refused" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert r.stdout == "" and not (tmp_path / "latest").exists()  # no run began


def test_admin_options_are_checked_before_anything_starts(tmp_path):
    for args, why in (
        (["--broker-admin", "http://127.0.0.1:1/api/jolokia"], "--broker-admin is for brokers"),
        (["--broker-url", "stomp://127.0.0.1:1", "--broker-admin",
          "http://admin:admin@127.0.0.1:1/api/jolokia"], "not in the URL"),
        (["--broker-url", "stomp://127.0.0.1:1", "--broker-admin", "ftp://h/x"],
         "not an http:// or https:// URL"),
    ):
        r = _run(tmp_path, *args)
        assert r.returncode == 2 and why in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1
        assert "admin:admin" not in r.stderr


def test_a_stock_artemis_over_openwire_is_witnessed_through_its_jolokia(artemis, tmp_path):
    r = _run(tmp_path, "--broker-url", artemis.broker_url(), "--producer", "openwire-jms",
             "--consumer", "openwire-jms", "--consumers", "2", "--count", "5000",
             "--bursts", "2", "--broker-admin", artemis.jolokia, "--admin-user", "admin",
             env={"BURSTBENCH_ADMIN_PASSWORD": PASSWORD})
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    doc = _point(tmp_path)
    assert doc["accounting"]["received"] == 10000 and doc["accounting"]["lost"] == 0
    w = doc["broker_witness"]
    assert w["available"] and w["agrees"] and w["sources"] == {"a": "jolokia"}
    assert w["total"]["enqueued"] == w["total"]["dequeued"] == 10000
    ext = doc["resources"]["external_brokers"]["a"]
    assert ext["product"] == "ActiveMQ Artemis" and ext["version"] == "2.40.0"


@pytest.mark.full
def test_a_stock_artemis_says_where_stomp_queue_names_went(artemis, tmp_path):
    """Artemis as it ships keeps STOMP's ``/queue/x`` as a multicast address of that name: a
    subscription is a queue of its own. The point fails and says so, naming the address."""
    client_or_skip("stomp-py")
    r = _run(tmp_path, "--broker-url", artemis.broker_url(), "--producer", "stomp-py",
             "--consumer", "stomp-py", "--count", "1000", "--bursts", "2",
             "--broker-admin", artemis.jolokia, "--admin-user", "admin",
             env={"BURSTBENCH_ADMIN_PASSWORD": PASSWORD})
    assert r.returncode == 1
    errors = " ".join(_point(tmp_path)["errors"])
    assert "message(s) sent to address /queue/bb." in errors
    assert "(multicast) into a queue per subscription" in errors


def _stomp_prefixes(etc):
    """What an Artemis user serving Classic-style STOMP clients adds to the shipped acceptors:
    /queue/NAME and /topic/NAME mapped to anycast and multicast addresses NAME."""
    xml = etc / "broker.xml"
    text = xml.read_text()
    for name in ("artemis", "stomp"):
        start = text.index(f'<acceptor name="{name}">')
        end = text.index("</acceptor>", start)
        text = (text[:end] + ";anycastPrefix=/queue/;multicastPrefix=/topic/" + text[end:])
    xml.write_text(text)


@pytest.fixture(scope="module")
def artemis_mapped(tmp_path_factory):
    for c in ("net-stomp", "stomp-py", "stompjs", "openwire-jms"):
        client_or_skip(c)
    work = tmp_path_factory.mktemp("artemis-mapped")
    sup = Supervisor(work / "logs")
    try:
        yield start_artemis(sup, work, PASSWORD, configure=_stomp_prefixes)
    finally:
        sup.stop_all()


def test_four_languages_compete_on_one_queue_of_an_artemis_distribution(artemis_mapped,
                                                                        tmp_path):
    """Artemis 2.40.0 from its distribution, /queue/ mapped to anycast: STOMP, STOMP over
    WebSocket and OpenWire consumers share one queue; the STOMP consumers are given Artemis's
    own window header (no limit in auto mode), the witness (Jolokia) agrees."""
    r = _run(tmp_path, "--broker-url", artemis_mapped.broker_url(), *MIXED, "--count", "3000",
             "--bursts", "1", "--broker-admin", artemis_mapped.jolokia, "--admin-user",
             "admin", env={"BURSTBENCH_ADMIN_PASSWORD": PASSWORD})
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    doc = _point(tmp_path)
    a, w = doc["accounting"], doc["broker_witness"]
    assert a["sent"] == a["received"] == 6000 and a["lost"] == a["duplicates"] == 0
    assert w["agrees"] and w["sources"] == {"a": "jolokia"}, w["problems"]
    assert w["total"]["enqueued"] == w["total"]["dequeued"] == 6000
    assert doc["versions"]["broker"] == {"name": "ActiveMQ Artemis", "version": "2.40.0"}
    assert doc["flow_control"]["stomp-py"] == "consumer-window-size -1 (no limit)"
    records = tmp_path / "latest" / "points" / "point" / "records"
    got = {f.stem: len(f.read_text().splitlines()) - 1 for f in records.glob("c*.tsv")}
    assert len(got) == 4 and all(n > 0 for n in got.values()), got
