"""Whether a point's connections fit this machine, checked before anything starts.

A point of thousands of connections (``--consumers 5000 --connections-per-process 500``) meets
the machine's limits before the broker's: file descriptors (one per connection on each side),
local ports (a client connection to one broker port takes one), and threads (ActiveMQ
Classic's ``tcp`` connectors run a thread per connection; a JMS connection runs one or two;
every thread takes a process id). Each refusal names the limit, its value and how to raise it.
"""

from __future__ import annotations

import os
from pathlib import Path

from burstbench.infra import procs

# descriptors and threads a broker or client process holds besides its connections
BASE_FILES = 500
BASE_THREADS = 200
# threads a client library runs per connection: activemq-client the transport's reader and
# a consumer's session executor, stomp.py its receiver; Net::Stomp and stompjs none (one
# loop polls every connection)
THREADS_PER_CONNECTION = {"openwire-jms": 2, "stomp-py": 1}


def threads_running() -> int:
    """Threads on this machine now (each takes a process id)."""
    try:
        return sum(len(os.listdir(f"/proc/{pid}/task")) for pid in os.listdir("/proc")
                   if pid.isdigit() and Path(f"/proc/{pid}/task").is_dir())
    except OSError:
        return 0


def check(spec) -> None:
    """ValueError, one line, when ``spec`` (a PointSpec on this machine's loopback) would open
    more than the machine allows."""
    slots = spec.producers + spec.consumers
    if slots < 100:
        return  # far below any limit: no need to read /proc
    lim = procs.limits()
    own_broker = not spec.broker_urls
    per_process = spec.connections_per_process
    need_files = (slots if own_broker else per_process) + BASE_FILES
    if need_files > lim["nofile"]:
        who = "the broker" if own_broker else "a client process"
        raise ValueError(
            f"{slots:,} connections need about {need_files:,} open files in {who}; processes "
            f"the harness starts may open {lim['nofile']:,} (raise the hard limit: nofile "
            "in /etc/security/limits.conf or LimitNOFILE of the service; root with "
            "CAP_SYS_RESOURCE has the harness raise it to fs.nr_open)")
    ports = lim.get("local_ports")
    if ports and slots > ports:
        raise ValueError(
            f"{slots:,} connections from this host to one broker port, but it has {ports:,} "
            "local ports (widen net.ipv4.ip_local_port_range)")
    _check_threads(spec, slots, lim)


def _check_threads(spec, slots: int, lim: dict) -> None:
    prods, cons = spec.slots()
    clients = sum(THREADS_PER_CONNECTION.get(r.client.tuned_of or r.client.name, 0)
                  for r in (*prods, *cons))
    classic_tcp = (not spec.broker_urls and spec.broker_kind == "classic"
                   and spec.transport == "tcp")
    broker = slots if classic_tcp else 0
    need = broker + clients + BASE_THREADS + threads_running()
    ceiling = min(lim.get("pid_max", need), lim.get("threads_max", need))
    if need > ceiling:
        why = []
        if broker:
            why.append(f"{broker:,} in the broker, a thread per connection on Classic's tcp "
                       "connectors (--transport nio holds them with a selector)")
        if clients:
            why.append(f"{clients:,} in the clients (a thread or two per connection in "
                       "stomp.py and activemq-client)")
        raise ValueError(
            f"{slots:,} connections need about {need:,} threads on this machine "
            f"({'; '.join(why)}), above its ceiling of {ceiling:,} (kernel.pid_max, "
            "kernel.threads-max)")
