"""The Artemis broker the bench starts, as configuration: its broker.xml, its JAAS files, the
flow-control window its STOMP consumers are given, and what a point on it refuses."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from burstbench.infra import brokers
from burstbench.measure.spec import PointSpec

NS = {"c": "urn:activemq:core"}


def _spec(**kw) -> brokers.BrokerSpec:
    return brokers.BrokerSpec(kind="artemis", name="a", data_dir=Path("/data/a"),
                              openwire_port=1001, stomp_port=1002, ws_port=1003, **kw)


def _core(spec) -> ET.Element:
    return ET.fromstring(brokers.render(spec)).find("c:core", NS)


def test_each_protocol_has_its_acceptor_and_stomp_names_map_to_anycast_and_multicast():
    core = _core(_spec())
    acceptors = {a.get("name"): a.text for a in core.iterfind("c:acceptors/c:acceptor", NS)}
    assert set(acceptors) == {"openwire", "stomp", "ws"}
    assert acceptors["openwire"].startswith("tcp://127.0.0.1:1001?protocols=OPENWIRE;")
    for name, port in (("stomp", 1002), ("ws", 1003)):
        uri = acceptors[name]
        assert uri.startswith(f"tcp://127.0.0.1:{port}?protocols=STOMP;")
        assert "anycastPrefix=/queue/" in uri and "multicastPrefix=/topic/" in uri
    assert "sslEnabled" not in "".join(acceptors.values())
    assert core.findtext("c:persistence-enabled", namespaces=NS) == "false"
    assert core.findtext("c:security-enabled", namespaces=NS) == "false"
    # the run's queues outlive their consumers, so their counters can be read at the end
    setting = core.find("c:address-settings/c:address-setting", NS)
    assert setting.findtext("c:auto-delete-queues", namespaces=NS) == "false"


@pytest.mark.parametrize("store,sync", [("journal", "true"), ("journal-nosync", "false")])
def test_the_journal_syncs_or_not_as_asked(store, sync):
    core = _core(_spec(persistence=store))
    assert core.findtext("c:persistence-enabled", namespaces=NS) == "true"
    assert core.findtext("c:journal-directory", namespaces=NS) == "/data/a/journal"
    for tag in ("journal-sync-transactional", "journal-sync-non-transactional",
                "journal-datasync"):
        assert core.findtext(f"c:{tag}", namespaces=NS) == sync
    assert core.find("c:store", NS) is None


def test_a_jdbc_store_names_its_driver_and_database():
    jdbc = {"driver": "org.postgresql.Driver", "url": "jdbc:postgresql://127.0.0.1:5/bb?a=1&b=2",
            "user": "u", "password": "p<w"}
    core = _core(_spec(persistence="jdbc-postgres", jdbc=jdbc))
    db = core.find("c:store/c:database-store", NS)
    assert db.findtext("c:jdbc-driver-class-name", namespaces=NS) == "org.postgresql.Driver"
    assert db.findtext("c:jdbc-connection-url", namespaces=NS) == jdbc["url"]
    assert db.findtext("c:jdbc-password", namespaces=NS) == "p<w"


def test_tls_and_users_secure_every_acceptor_with_jaas_files_beside_them(tmp_path):
    class Material:
        keystore, password = Path("/tls/broker.p12"), "kspw"
        truststore = Path("/tls/trust.p12")

    spec = _spec(tls=Material(), users=[{"name": "bench", "password": "s3cret"}])
    core = _core(spec)
    assert core.findtext("c:security-enabled", namespaces=NS) == "true"
    for a in core.iterfind("c:acceptors/c:acceptor", NS):
        assert "sslEnabled=true;keyStorePath=/tls/broker.p12;keyStoreType=PKCS12" in a.text
    perms = {p.get("type"): p.get("roles")
             for p in core.iterfind("c:security-settings/c:security-setting/c:permission", NS)}
    assert perms["send"] == perms["consume"] == perms["createAddress"] == "bench"
    login = brokers.write_login(spec, tmp_path)
    assert "PropertiesLoginModule required" in login.read_text()
    assert (login.parent / "artemis-users.properties").read_text() == "bench = s3cret\n"
    assert (login.parent / "artemis-roles.properties").read_text() == "bench = bench\n"
    assert brokers.write_login(_spec(), tmp_path) is None


def test_stomp_consumers_get_a_window_in_bytes_on_artemis_only():
    artemis, classic = brokers.PRODUCTS["artemis"], brokers.PRODUCTS["classic"]
    assert brokers.stomp_window(classic, "client", 1000, 6) is None
    assert brokers.stomp_window(artemis, "auto", 1000, 6) == -1
    assert brokers.stomp_window(artemis, "client", 1000, 6) == 1000 * (6 + 512)
    assert brokers.stomp_window(artemis, "client-individual", 10, 1024) == 10 * (1024 + 512)
    assert brokers.stomp_window(artemis, "client", 1000, 6, transacted=True) == -1


def test_the_point_gives_the_window_to_stomp_consumers_and_records_it():
    spec = PointSpec(broker="artemis", producer=["stomp-py"],
                     consumer=["stomp-py", "openwire-jms"], consumers=2, ack="client")
    assert spec.flow_control(brokers.PRODUCTS["artemis"]) == {
        "stomp-py": "consumer-window-size 518000 bytes",
        "openwire-jms": "prefetch 1000 messages"}
    cons = spec.slots()[1]
    assert spec.client_args("consumer", cons[0])[-2:] == ["--window-bytes", "518000"]
    assert "--window-bytes" not in spec.client_args("consumer", cons[1])
    classic = PointSpec(producer=["stomp-py"], consumer=["stomp-py"])
    assert "--window-bytes" not in classic.client_args("consumer", classic.slots()[1][0])


@pytest.mark.parametrize("kw,says", [
    ({"persistence": "kahadb"}, "Artemis's own store is journal"),
    ({"topology": "chain3"}, "there is no chain of hops"),
    ({"optimized_dispatch": True}, "Classic's queue policy"),
    ({"producer_flow_control": False}, "pages a full address to disk"),
])
def test_what_artemis_cannot_do_is_one_line(kw, says):
    with pytest.raises(ValueError, match=says) as e:
        PointSpec(broker="artemis", **kw).validate()
    assert "\n" not in str(e.value)


def test_classic_has_no_journal_and_an_outside_broker_is_not_started():
    with pytest.raises(ValueError, match="the journal is Artemis's store"):
        PointSpec(persistence="journal").validate()
    with pytest.raises(ValueError, match="with --broker-url the broker is the one"):
        PointSpec(broker="artemis", broker_urls=["stomp://127.0.0.1:1"]).validate()


def test_a_node_of_a_cluster_names_its_peers_and_takes_core_on_its_openwire_acceptor():
    spec = _spec(cluster_peers=[{"name": "b", "uri": "tcp://127.0.0.1:2001"}],
                 cluster_password="cpw")
    core = _core(spec)
    acceptors = {a.get("name"): a.text for a in core.iterfind("c:acceptors/c:acceptor", NS)}
    assert "protocols=CORE,OPENWIRE;" in acceptors["openwire"]
    connectors = {c.get("name"): c.text for c in core.iterfind("c:connectors/c:connector", NS)}
    assert connectors == {"self": "tcp://127.0.0.1:1001", "b": "tcp://127.0.0.1:2001"}
    cc = core.find("c:cluster-connections/c:cluster-connection", NS)
    assert cc.findtext("c:message-load-balancing", namespaces=NS) == "ON_DEMAND"
    assert [r.text for r in cc.iterfind("c:static-connectors/c:connector-ref", NS)] == ["b"]
    assert core.findtext("c:cluster-password", namespaces=NS) == "cpw"
    setting = core.find("c:address-settings/c:address-setting", NS)
    assert setting.findtext("c:redistribution-delay", namespaces=NS) == "0"
    assert _core(_spec()).find("c:cluster-connections", NS) is None
