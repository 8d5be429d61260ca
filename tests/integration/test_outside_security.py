"""A secured broker the bench did not start: the official ActiveMQ 5.18.3 distribution with
TLS-only connectors (OpenWire ``ssl://``, ``stomp+ssl://``, ``wss://``; a keystore from a
throwaway CA) that ask for the client's certificate (``needClientAuth``, mutual TLS), and a
required login (its ``simpleAuthenticationPlugin``), as a production broker runs. Every stock
client reaches it with ``--user``, the password from a file or the environment, ``--ca``,
``--cert`` and ``--key``; the point records what its connections used, and the password is
nowhere in what the run printed or wrote. A wrong password, an unknown CA or a missing client
certificate is one line and exit 2 before anything starts; ``--tls`` with a plain URL and
``--auth`` without a user are refused."""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
import time

import psutil
import pytest
from conftest import ROOT, client_or_skip
from distributions import start_classic

from burstbench.infra import tls
from burstbench.infra.procs import Supervisor

# on one worker (./bench test runs --dist loadgroup): its module brokers start once
pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("outside-security")]

USER = "app"
PASSWORD = f"pw-{secrets.token_hex(8)}"
MIXED = ["--producer", "net-stomp,stomp-py", "--producers", "2",
         "--consumer", "stompjs,openwire-jms,stomp-py,net-stomp", "--consumers", "4"]


def _secure(material: tls.Material):
    """The shipped activemq.xml, its connectors made TLS-only (amqp and mqtt left out) with
    the keystore, asking for a client certificate the CA signed, and a required login."""
    def configure(conf):
        xml = conf / "activemq.xml"
        text = xml.read_text()
        text = re.sub(r'\s*<transportConnector name="(amqp|mqtt)"[^>]*/>', "", text)
        for plain, secure in (("tcp", "ssl"), ("stomp", "stomp+ssl"), ("ws", "wss")):
            text = re.sub(rf'uri="{plain}://(127\.0\.0\.1:\d+)\?',
                          rf'uri="{secure}://\1?needClientAuth=true&amp;', text)
        text = text.replace("<transportConnectors>", f"""<sslContext>
            <sslContext keyStore="file:{material.keystore}" keyStoreType="pkcs12"
                        keyStorePassword="{material.password}"
                        trustStore="file:{material.truststore}" trustStoreType="pkcs12"
                        trustStorePassword="{material.password}"/>
        </sslContext>
        <plugins>
            <simpleAuthenticationPlugin anonymousAccessAllowed="false">
                <users>
                    <authenticationUser username="{USER}" password="{PASSWORD}"
                                        groups="users,admins"/>
                </users>
            </simpleAuthenticationPlugin>
        </plugins>
        <transportConnectors>""", 1)
        xml.write_text(text)
    return configure


@pytest.fixture(scope="module")
def secured(tmp_path_factory):
    for c in ("net-stomp", "stomp-py", "stompjs", "openwire-jms"):
        client_or_skip(c)
    work = tmp_path_factory.mktemp("classic-secured")
    material = tls.make(work, ["127.0.0.1"], client=True)
    sup = Supervisor(work / "logs")
    try:
        d = start_classic(sup, work, configure=_secure(material))
        d.urls = {"openwire": f"ssl://127.0.0.1:{d.ports['openwire']}",
                  "stomp": f"stomp+ssl://127.0.0.1:{d.ports['stomp']}",
                  "ws": f"wss://127.0.0.1:{d.ports['ws']}/"}
        d.ca = material.ca_pem
        d.mine = ["--ca", str(material.ca_pem), "--cert", str(material.client_cert), "--key",
                  str(material.client_key)]
        yield d
    finally:
        sup.stop_all()


def _run(tmp_path, *args, env=None):
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("BURSTBENCH_")},
           "BURSTBENCH_RESULTS": str(tmp_path), **(env or {})}
    return subprocess.Popen([sys.executable, "-m", "burstbench.cli", "run", *args], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def _finish(proc) -> tuple[int, str, str, set[int]]:
    """Its exit code and output, and every process it started (sampled while it ran)."""
    seen: set[int] = set()
    parent = psutil.Process(proc.pid)
    while proc.poll() is None:
        try:
            seen |= {c.pid for c in parent.children(recursive=True)}
        except psutil.NoSuchProcess:
            break
        time.sleep(0.1)
    out, err = proc.communicate(timeout=600)
    return proc.returncode, out, err, seen


def test_every_stock_client_runs_a_point_over_tls_with_the_brokers_login(secured, tmp_path):
    pw = tmp_path / "password"
    pw.write_text(PASSWORD + "\n")
    code, out, err, _ = _finish(_run(
        tmp_path, "--broker-url", secured.broker_url(), "--user", USER, "--password-file",
        str(pw), *secured.mine, "--tls", "--auth", *MIXED, "--count", "2000", "--bursts", "1"))
    assert code == 0, out[-2000:] + err[-3000:]
    doc = json.loads((tmp_path / "latest" / "points" / "point.json").read_text())
    assert doc["status"] == "ok" and doc["accounting"]["received"] == 4000
    assert doc["accounting"]["lost"] == 0 and doc["accounting"]["duplicates"] == 0
    assert doc["connections"] == {"schemes": ["ssl", "stomp+ssl", "wss"], "tls": True,
                                  "login": True, "trust": "the --ca bundle",
                                  "client_certificate": True, "tls_versions": ["TLSv1.3"],
                                  "tls_unreported": []}
    assert doc["parameters"]["tls"] and doc["parameters"]["auth"]
    # the password is nowhere in what the run printed or wrote, nor on a command line
    assert PASSWORD not in out + err
    run_dir = (tmp_path / "latest").resolve()
    assert not [p for p in run_dir.rglob("*")
                if p.is_file() and PASSWORD.encode() in p.read_bytes()]


def test_the_password_from_the_environment_stays_off_the_process_list(secured, tmp_path):
    proc = _run(tmp_path, "--broker-url", secured.urls["stomp"], "--user", USER,
                *secured.mine, "--producer", "stomp-py", "--consumer", "net-stomp",
                "--count", "20000", "--bursts", "2", env={"BURSTBENCH_PASSWORD": PASSWORD})
    lines: list[str] = []
    parent = psutil.Process(proc.pid)
    while proc.poll() is None:
        for c in parent.children(recursive=True):
            try:
                lines.append(" ".join(c.cmdline()))
            except psutil.Error:
                pass
        time.sleep(0.1)
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, out[-2000:] + err[-3000:]
    assert any("--user" in ln for ln in lines), lines  # the clients were seen running
    assert not [ln for ln in lines if PASSWORD in ln]


def test_a_wrong_password_is_one_line_and_nothing_runs(secured, tmp_path):
    code, out, err, seen = _finish(_run(
        tmp_path, "--broker-url", secured.broker_url(), "--user", USER, *secured.mine,
        "--count", "100", env={"BURSTBENCH_PASSWORD": "wrong"}))
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1, err
    assert f"the broker refused the login of user '{USER}'" in err
    assert out == "" and not (tmp_path / "latest").exists()  # no run began
    assert not [p for p in seen if psutil.pid_exists(p)
                and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]


def test_an_unknown_ca_is_one_line_that_names_ca(secured, tmp_path):
    code, _out, err, _ = _finish(_run(
        tmp_path, "--broker-url", secured.urls["stomp"], "--user", USER, *secured.mine[2:],
        "--count", "100", env={"BURSTBENCH_PASSWORD": PASSWORD}))
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "certificate verify failed" in err and "--ca" in err


def test_no_client_certificate_is_one_line_that_names_cert(secured, tmp_path):
    code, _out, err, _ = _finish(_run(
        tmp_path, "--broker-url", secured.urls["stomp"], "--user", USER, *secured.mine[:2],
        "--count", "100", env={"BURSTBENCH_PASSWORD": PASSWORD}))
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "--cert" in err


@pytest.mark.parametrize(("args", "says"), [
    (["--broker-url", "stomp://127.0.0.1:1", "--tls"], "is not a TLS URL"),
    (["--broker-url", "stomp+ssl://127.0.0.1:1,tcp://127.0.0.1:2", "--tls"],
     "tcp://127.0.0.1:2 is not a TLS URL"),
    (["--broker-url", "stomp://127.0.0.1:1", "--auth"], "cannot make up a login"),
    (["--broker-url", "stomp://127.0.0.1:1", "--user", "u"], "no password"),
    (["--user", "u"], "are for a broker given with --broker-url"),
    (["--broker-url", "stomp+ssl://127.0.0.1:1", "--cert", "/etc/hostname"],
     "--cert and --key must be given together"),
    (["--broker-url", "stomp://127.0.0.1:1", "--ca", "/nonexistent.pem"], "no such file"),
])
def test_flags_that_the_connections_would_not_make_true_are_refused(tmp_path, args, says):
    code, out, err, _ = _finish(_run(tmp_path, *args, "--count", "10"))
    assert code == 2 and says in err, err
    assert len(err.strip().splitlines()) == 1 and out == ""
