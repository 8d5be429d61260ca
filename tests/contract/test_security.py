"""Authentication and TLS, with every client of the registry."""

from __future__ import annotations

import os
import secrets
import time

import pytest
from conftest import client_or_skip, need_broker_built, run_client
from test_contract import SPECS, connect_cases, pair_run

from burstbench.infra import brokers, tls
from burstbench.infra.procs import Supervisor

# on one worker (./bench test runs --dist loadgroup): its module brokers start once
pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("secure-broker")]
# begins with a dash: a value is handed over as --password=VALUE, as the harness does
# (burstbench/options.command), or a parser takes it for an option
PASSWORD = "-" + secrets.token_urlsafe(12)


@pytest.fixture(scope="module")
def secure_broker(tmp_path_factory):
    """A broker with TLS-only connectors and a required user."""
    need_broker_built()
    work = tmp_path_factory.mktemp("secure-broker")
    material = tls.make(work, ["127.0.0.1"])
    sup = Supervisor(work / "logs")
    try:
        b = brokers.start(sup, brokers.BrokerSpec(
            name="secure", tls=material, users=[{"name": "bench", "password": PASSWORD}]), work)
        yield b, material
    finally:
        sup.stop_all()


# every client takes the CA: the browser's goes into its throwaway Chromium profile's NSS
# database (certutil), the others' into their TLS library
TLS_SPECS = list(SPECS)


def _creds(material, password=PASSWORD):
    return ["--ca", str(material.ca_pem), "--user", "bench", f"--password={password}"]


@pytest.mark.parametrize("spec", TLS_SPECS)
def test_round_trip_over_tls_with_credentials(spec, secure_broker, tmp_path):
    """The password as the harness hands it over: in the environment (BB_PASSWORD), off the
    command line (--password=VALUE is the doctor's way, and the wrong-password test's)."""
    broker, material = secure_broker
    r = client_or_skip(spec)
    _sent, got, _done = pair_run(broker, r, r, 200, 64, tmp_path,
                                 extra=["--ca", str(material.ca_pem), "--user", "bench"],
                                 env={**os.environ, "BB_PASSWORD": PASSWORD})
    assert len(got) == 200 and all(x.body_ok for x in got)


@pytest.mark.parametrize("spec", connect_cases(TLS_SPECS))
def test_wrong_password_fails_fast_naming_the_broker(spec, secure_broker):
    broker, material = secure_broker
    r = client_or_skip(spec)
    url = broker.url_for(r.protocol)
    t0 = time.monotonic()
    out = run_client(r, "producer", ["--url", url, "--destinations", "sec.q", "--count", "1",
                                     *_creds(material, "wrong-" + PASSWORD)], timeout=60)
    assert out.returncode == 3, out.stderr
    assert time.monotonic() - t0 < 30  # refused, not left to the 60 s time-out
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), out.stderr
    assert url.split("://", 1)[1].rstrip("/") in lines[0]


@pytest.mark.parametrize("spec", connect_cases(TLS_SPECS))
def test_an_unknown_ca_is_refused(spec, secure_broker, tmp_path):
    """Verification is on: a certificate from another CA does not connect."""
    broker, _ = secure_broker
    other = tls.make(tmp_path, ["127.0.0.1"])
    r = client_or_skip(spec)
    out = run_client(r, "producer", ["--url", broker.url_for(r.protocol), "--destinations",
                                     "sec.q", "--count", "1", "--ca", str(other.ca_pem),
                                     "--user", "bench", f"--password={PASSWORD}",
                                     # a client that retries a failed handshake gives up soon
                                     "--connect-timeout", "2"], timeout=60)
    assert out.returncode == 3, out.stderr
