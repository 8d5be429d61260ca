"""A failed point names what the broker's log says about dropped connections."""

from burstbench.infra import brokerlog

# lines as Classic 6.1.7 and Artemis 2.x write them (the harness's log pattern: time first)
_WS = ("WARN  Transport - Transport Connection to: ws://127.0.0.1:{p} failed: Channel was "
       "inactive (no connection attempt made) for too (>30000) long: ws://127.0.0.1:{p}")
CLASSIC = "\n".join([
    "00:50:36.736 INFO  BrokerService - Apache ActiveMQ 6.1.7 (a, ID:vm-1-0:1) started",
    "00:51:42.500 " + _WS.format(p=60050),
    "00:51:42.512 " + _WS.format(p=60076),
    ("00:52:01.002 WARN  TransportConnector - Could not accept connection from "
     "tcp://127.0.0.1:1234: java.net.SocketException: Too many open files"),
    ("00:52:03.100 WARN  Transport - Transport Connection to: tcp://127.0.0.1:5 failed: "
     "org.apache.activemq.transport.InactivityIOException: Channel was inactive for too "
     "(>10000) long: tcp://127.0.0.1:5"),
    ("00:52:04.000 ERROR TransportConnector - Could not accept connection from null: "
     "java.lang.IllegalStateException: Exceeded the maximum number of allowed client "
     "connections. See the 'maximumConnections' property"),
]) + "\n"
ARTEMIS = ("2026-12-03 01:02:03,456 WARN  [org.apache.activemq.artemis.core.client] AMQ212037: "
           "Connection failure to /127.0.0.1:4 has been detected: AMQ229014: Did not receive "
           "data from /127.0.0.1:4 within the 60000ms connection TTL. The connection will now "
           "be closed.\n")


def test_each_kind_of_drop_is_counted_once_with_its_first_time():
    said = brokerlog.explain_lines(CLASSIC.splitlines())
    assert said[0].startswith("closed 2 connection(s) as never having sent CONNECT within 30000 ms "
                              "(first at 00:51:42.500)")
    assert ("closed 1 connection(s) it heard nothing from for 10000 ms "
            "(first at 00:52:03.100)") in said
    assert "ran out of file descriptors: 1 log line(s) (first at 00:52:01.002)" in said
    assert "refused 1 connection(s) above its maximum (first at 00:52:04.000)" in said
    assert len(said) == 4


def test_artemis_connection_ttl_and_a_quiet_log():
    said = brokerlog.explain_lines(ARTEMIS.splitlines())
    assert said == [("closed 1 connection(s) it heard nothing from within the 60000 ms "
                     "connection TTL (first at 01:02:03,456)")]
    assert brokerlog.explain_lines(CLASSIC.splitlines()[:1]) == []


def test_a_missing_log_says_nothing(tmp_path):
    assert brokerlog.explain(tmp_path / "absent.log") == []
    log = tmp_path / "broker-a.log"
    log.write_text(CLASSIC)
    assert len(brokerlog.explain(log)) == 4
