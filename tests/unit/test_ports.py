"""burstbench.infra.brokers.free_port: the ports of one broker (and of one process) are distinct."""

from __future__ import annotations

import socket

from burstbench.infra import brokers


def test_free_port_never_hands_out_a_port_twice_even_when_the_kernel_does(monkeypatch):
    """The kernel may answer two binds to port 0 with the same free port (it did: a broker's
    OpenWire and WebSocket connectors both got 42939 and the second failed to bind). A socket
    that answers 41000, 41000, 41001 stands in for the kernel."""
    answers = iter([41000, 41000, 41001])

    class Kernel(socket.socket):
        def getsockname(self):
            return ("127.0.0.1", next(answers))

    monkeypatch.setattr(brokers.socket, "socket", Kernel)
    monkeypatch.setattr(brokers, "_GIVEN", brokers.collections.deque(maxlen=256))
    assert [brokers.free_port(), brokers.free_port()] == [41000, 41001]


def test_free_ports_from_the_kernel_are_distinct_and_bindable():
    ports = [brokers.free_port() for _ in range(100)]
    assert len(set(ports)) == 100
    with socket.socket() as s:
        s.bind(("127.0.0.1", ports[-1]))
