"""burstbench.infra.brokers.free_port: the ports of one broker (and of one process) are distinct."""

from __future__ import annotations

import socket

from burstbench.infra import brokers


def test_free_port_never_hands_out_a_port_twice_even_when_the_kernel_does(monkeypatch, tmp_path):
    """The kernel may answer two binds to port 0 with the same free port (it did: a broker's
    OpenWire and WebSocket connectors both got 42939 and the second failed to bind). A socket
    that answers 41000, 41000, 41001 stands in for the kernel; the machine-wide list of ports
    other harness processes gave out is a file of this test's own (another pytest worker may
    have been given 41000 by the real kernel a moment ago)."""
    answers = iter([41000, 41000, 41001])
    monkeypatch.setattr(brokers, "_kernel_port", lambda host: next(answers))
    monkeypatch.setattr(brokers, "_GIVEN", brokers.collections.deque(maxlen=256))
    monkeypatch.setattr(brokers, "_GIVEN_FILE", tmp_path / "ports-given")
    assert [brokers.free_port(), brokers.free_port()] == [41000, 41001]


def test_free_ports_from_the_kernel_are_distinct_and_bindable():
    ports = [brokers.free_port() for _ in range(100)]
    assert len(set(ports)) == 100
    with socket.socket() as s:
        s.bind(("127.0.0.1", ports[-1]))


def test_free_port_skips_a_port_another_harness_process_was_given_within_the_minute(
    monkeypatch, tmp_path
):
    given = tmp_path / "ports-given"
    given.write_text(f"41000 {brokers.time.time()}\n41001 {brokers.time.time() - 120}\n")
    answers = iter([41000, 41001])
    monkeypatch.setattr(brokers, "_kernel_port", lambda host: next(answers))
    monkeypatch.setattr(brokers, "_GIVEN", brokers.collections.deque(maxlen=256))
    monkeypatch.setattr(brokers, "_GIVEN_FILE", given)
    assert brokers.free_port() == 41001
    assert {int(line.split()[0]) for line in given.read_text().splitlines()} == {41000, 41001}
