"""The login and trust options of a broker the bench did not start (burstbench/infra/outside.py):
which URLs are TLS, which flags the connections make true, and what a point records."""

from __future__ import annotations

import pytest

from burstbench.infra import outside
from burstbench.measure.spec import PointSpec


@pytest.mark.parametrize(("url", "tls"), [
    ("ssl://h:61617", True), ("stomp+ssl://h:61612", True), ("wss://h:61619/", True),
    ("tcp://h:61616", False), ("stomp://h:61613", False), ("ws://h:61614/", False),
    ("failover:(ssl://a:1,ssl://b:2)?randomize=false", True),
    ("failover:(ssl://a:1,tcp://b:2)", False),
])
def test_a_url_is_tls_when_every_address_in_it_is(url, tls):
    assert outside.is_tls(url) is tls


def test_tls_urls_make_a_tls_point_and_a_user_one_with_a_login(tmp_path, monkeypatch):
    monkeypatch.setenv("BURSTBENCH_PASSWORD", "s3cret")
    spec = PointSpec(broker_urls=["ssl://h:1,stomp+ssl://h:2"], user="app")
    outside.check_login(spec)
    assert spec.tls and spec.auth
    assert outside.login_password(spec) == "s3cret"
    f = tmp_path / "pw"
    f.write_text("from-file\n")
    spec.password_file = str(f)
    assert outside.login_password(spec) == "from-file"  # the file before the environment
    plain = PointSpec(broker_urls=["tcp://h:1"])
    outside.check_login(plain)
    assert not plain.tls and not plain.auth


def test_what_the_connections_used_is_read_from_the_urls():
    assert outside.connections(["ssl://h:1", "stomp+ssl://h:2"], "app", "the --ca bundle") == {
        "schemes": ["ssl", "stomp+ssl"], "tls": True, "login": True,
        "trust": "the --ca bundle", "client_certificate": False}
    assert outside.connections(["ssl://h:1"], None, "x", "/c.pem")["client_certificate"]
    assert outside.connections(["tcp://h:1", "wss://h:3/"], None,
                               "the system's trust store") == {
        "schemes": ["tcp", "wss"], "tls": False, "login": False,
        "trust": "the system's trust store", "client_certificate": False}
    assert outside.connections(["stomp://h:2"], None, "x")["trust"] is None


def test_the_tls_versions_are_what_the_clients_said_their_connections_negotiated():
    said = {"c1-perl": "TLSv1_3", "c2-java": "TLSv1.3", "p1-python": "TLSv1.2",
            "c3-stompjs-browser": None}
    got = outside.connections(["ssl://h:1", "stomp+ssl://h:2"], None, "x", None, said)
    assert got["tls_versions"] == ["TLSv1.2", "TLSv1.3"]
    assert got["tls_unreported"] == ["c3-stompjs-browser"]
    assert "tls_versions" not in outside.connections(["stomp://h:2"], None, "x", None, said)
