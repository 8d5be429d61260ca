"""``--broker``: which brokers the bench can start, and what each version has."""

from __future__ import annotations

from pathlib import Path

import pytest

from burstbench.infra import brokers
from burstbench.measure.spec import PointSpec


@pytest.mark.parametrize("text,want", [
    ("classic", ("classic", "6.1.7")), ("classic:6.1.7", ("classic", "6.1.7")),
    ("classic:5.18.6", ("classic", "5.18.6")), ("classic:6.3.1", ("classic", "6.3.1")),
    ("artemis", ("artemis", "2.44.0")), ("artemis:2.44.0", ("artemis", "2.44.0")),
])
def test_a_broker_is_a_kind_and_a_version(text, want):
    assert brokers.parse_broker(text) == want


@pytest.mark.parametrize("text", ["classic:5.18.7", "artemis:2.57.0", "rabbitmq", ""])
def test_an_unknown_broker_names_the_ones_there_are(text):
    with pytest.raises(brokers.BrokerError, match=r"have: classic, artemis, classic:6\.1\.7"):
        brokers.parse_broker(text)


def test_each_classic_version_runs_its_own_launcher():
    assert brokers.launcher_dirs("classic", "6.1.7")[0] == brokers.paths.BROKER_CLASSES
    classes = brokers.launcher_dirs("classic", "5.18.6")[0]
    assert classes.parts[-4:] == ("broker", "classic-5.18", "target", "classes")
    argv = brokers.java_argv(Path("x.xml"), kind="classic", version="6.3.1")
    assert "classic-6.3/target/classes" in argv[argv.index("-cp") + 1]


def test_a_version_without_websocket_renders_no_ws_connector_nor_waits_for_its_port():
    spec = brokers.BrokerSpec(version="6.3.1", data_dir=Path("/d"), openwire_port=1,
                              stomp_port=2, ws_port=3)
    xml = brokers.render(spec)
    assert 'name="openwire"' in xml and 'name="stomp"' in xml and 'name="ws"' not in xml
    b = brokers.Broker(spec=spec, child=None, xml_path=Path("x"))
    assert b.ports == [1, 2] and b.version == "6.3.1"
    with pytest.raises(brokers.BrokerError, match="ActiveMQ Classic 6.3.1 has no ws transport"):
        b.url_for("ws")
    assert 'name="ws"' in brokers.render(brokers.BrokerSpec(
        version="5.18.6", data_dir=Path("/d"), openwire_port=1, stomp_port=2, ws_port=3))


def test_a_client_over_websocket_on_a_broker_without_it_is_one_line():
    with pytest.raises(ValueError, match="client stompjs speaks ws, which ActiveMQ Classic "
                                         "6.3.1 has not here"):
        PointSpec(broker="classic:6.3.1", producer=["stompjs"], consumer=["stomp-py"]).validate()
    spec = PointSpec(broker="classic:6.3.1", producer=["stompjs:tcp"], consumer=["stomp-py"])
    spec._check_broker()  # STOMP over TCP it has
