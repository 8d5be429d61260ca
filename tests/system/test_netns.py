"""Network namespaces as broker hosts: reachability, a real broker and clients across the
bridge, tbf rate limits, multicast, cut links, and nothing left behind (even after SIGKILL)."""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest
from conftest import ROOT, events, need_broker_built

from burstbench.infra import brokers, netns

pytestmark = [pytest.mark.integration, pytest.mark.root]


@pytest.fixture(autouse=True)
def _need_netns():
    why = netns.available()
    if why:
        pytest.skip(why)


def new_tag() -> str:
    return f"t{secrets.token_hex(3)}"


def namespaces() -> set[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@pytest.fixture
def make_net():
    """Networks made by a test, removed (and checked to be gone) after it. Ask for this
    fixture before ``sup`` so the Supervisor stops what runs inside before the removal."""
    made: list[netns.Network] = []

    def make(hosts=("a", "b"), **kw) -> netns.Network:
        net = netns.Network(new_tag(), list(hosts), **kw)
        made.append(net)
        net.create()
        return net

    yield make
    for net in made:
        net.remove()
        assert not set(net.names) & namespaces()


def listen(net: netns.Network, host: str) -> tuple[socket.socket, int]:
    srv = net.socket(host)
    srv.bind((net.address(host), 0))
    srv.listen()
    return srv, srv.getsockname()[1]


def test_hosts_reach_each_other_across_the_bridge_but_not_from_the_harness(make_net):
    links_before = set(os.listdir("/sys/class/net"))
    net = make_net(["a", "b", "c"])
    assert set(net.names) <= namespaces()
    assert len({net.address(h).rsplit(".", 1)[0] for h in net.hosts}) == 1  # one /24
    for server, client in [("a", "b"), ("b", "a"), ("c", "a")]:
        srv, port = listen(net, server)
        with srv, net.socket(client) as c:
            c.settimeout(2)
            c.connect((net.address(server), port))
            conn, peer = srv.accept()
            with conn:
                assert peer[0] == net.address(client)
                c.sendall(b"ping")
                assert conn.recv(4) == b"ping"

    # the harness's own namespace has none of it: no new interface, no address, no route in
    assert set(os.listdir("/sys/class/net")) == links_before
    local = subprocess.run(["ip", "-o", "addr"], capture_output=True, text=True, check=True).stdout
    for h in net.hosts:
        addr = net.address(h)
        assert addr not in local
        route = subprocess.run(["ip", "route", "get", addr], capture_output=True, text=True,
                               check=False)
        if route.returncode != 0:  # no route at all: a connect fails without sending
            with pytest.raises(OSError), socket.create_connection((addr, 9), timeout=1):
                pass
        else:
            # a route that leaves this machine (so nothing is sent to test it), not to us
            assert not route.stdout.startswith("local")
            assert not any(f"dev {d}" in route.stdout for d in ("br0", "vh1", "vh2", "vh3"))


def test_cut_link_drops_packets_until_restored(make_net):
    net = make_net()
    srv, port = listen(net, "a")
    with srv, net.socket("b") as c:
        assert net.probe("b", port, to="a")
        srv.accept()[0].close()
        c.settimeout(2)
        c.connect((net.address("a"), port))
        conn, _ = srv.accept()
        with conn:
            net.cut("a")
            assert not net.probe("b", port, to="a", timeout=0.5)
            assert net.probe("a", port)  # a itself still reaches its own address
            srv.accept()[0].close()
            c.sendall(b"during the cut")
            conn.settimeout(0.7)
            with pytest.raises(socket.timeout):
                conn.recv(100)
            net.restore("a")
            conn.settimeout(10)  # arrives with TCP's next retransmission
            assert conn.recv(100) == b"during the cut"
        assert net.probe("b", port, to=net.address("a"))


@pytest.mark.slow
def test_broker_in_one_namespace_serves_clients_in_others(make_net, sup, tmp_path, queue_name):
    need_broker_built()
    net = make_net(["a", "b", "c"])
    spec = brokers.BrokerSpec(name="ns", host=net.address("a"), heap="256m")
    b = brokers.start(sup, spec, tmp_path, wrap=net.wrap("a"), probe=net.probe)
    ns_inode = os.stat(Path("/run/netns") / net.namespace("a")).st_ino
    assert os.readlink(f"/proc/{b.child.pid}/ns/net") == f"net:[{ns_inode}]"
    url = f"stomp://{net.address('a')}:{spec.stomp_port}"
    common = ["--url", url, "--destinations", queue_name, "--count", "500"]
    py = [sys.executable]
    prod = subprocess.run(
        net.wrap("b") + py + ["clients/python/producer.py", *common, "--size", "200"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert prod.returncode == 0, prod.stderr
    records = tmp_path / "c.tsv"
    cons = subprocess.run(
        net.wrap("c") + py + ["clients/python/consumer.py", *common, "--records", str(records)],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert cons.returncode == 0, cons.stderr
    assert events(cons.stdout)[-1]["received"] == 500
    seqs = sorted(int(line.split("\t")[1]) for line in records.read_text().splitlines()[1:])
    assert seqs == list(range(500))
    sup.stop(b.child)
    assert b.child.returncode in (0, 143)


@pytest.mark.slow
def test_tbf_link_rate_limits_a_transfer(make_net):
    limit_bps = 4e6 / 8  # 4mbit in bytes per second
    size = 1_500_000  # ~3 s at the limit
    net = make_net(link_rate="4mbit")
    srv, port = listen(net, "b")
    got: dict = {}

    def receive():
        conn, _ = srv.accept()
        with conn:
            n, first = 0, None
            while chunk := conn.recv(65536):
                first = first or time.monotonic()
                n += len(chunk)
            got.update(n=n, seconds=time.monotonic() - first)

    t = threading.Thread(target=receive)
    t.start()
    with srv, net.socket("a") as c:
        c.settimeout(30)
        c.connect((net.address("b"), port))
        c.sendall(b"x" * size)
        c.shutdown(socket.SHUT_WR)
        t.join(30)
    assert got["n"] == size
    rate = size / got["seconds"]
    print(f"tbf 4mbit: {size} bytes in {got['seconds']:.2f} s = {rate * 8 / 1e6:.2f} mbit/s")
    assert 0.6 * limit_bps < rate < 1.1 * limit_bps


def test_remove_leaves_no_namespace_and_kills_what_ran_inside(make_net):
    net = make_net()
    state = Path(net._state_path)
    wd = net._watchdog.pid
    inside = subprocess.Popen(net.wrap("a") + ["sleep", "300"])
    time.sleep(0.2)  # let `ip netns exec` enter the namespace
    net.remove()
    assert inside.wait(timeout=5) == -signal.SIGKILL
    assert not set(net.names) & namespaces()
    assert not state.exists() and gone(wd)
    net.remove()  # idempotent


OWNER = """
import json, subprocess, sys, time
sys.path.insert(0, {root!r})
from burstbench.infra.netns import Network
net = Network({tag!r}, ["a", "b"])
net.create()
inside = subprocess.Popen(net.wrap("a") + ["sleep", "300"])
time.sleep(0.2)
print(json.dumps({{"names": net.names, "watchdog": net._watchdog.pid, "inside": inside.pid,
                  "state": str(net._state_path)}}), flush=True)
time.sleep(300)
"""


def start_owner() -> tuple[subprocess.Popen, dict]:
    tag = new_tag()
    proc = subprocess.Popen(
        [sys.executable, "-c", OWNER.format(root=str(ROOT), tag=tag)],
        stdout=subprocess.PIPE,
        text=True,
    )
    info = json.loads(proc.stdout.readline())
    assert set(info["names"]) <= namespaces()
    return proc, info


def test_sigkill_of_the_owner_leaves_nothing_after_the_watchdog_acts():
    proc, info = start_owner()
    proc.kill()
    proc.wait()
    t0 = time.monotonic()
    while set(info["names"]) & namespaces() and time.monotonic() - t0 < 5:
        time.sleep(0.05)
    took = time.monotonic() - t0
    assert not set(info["names"]) & namespaces(), "the watchdog did not remove them in 5 s"
    print(f"watchdog removed {len(info['names'])} namespaces {took:.2f} s after SIGKILL")
    deadline = time.monotonic() + 5
    while not (gone(info["watchdog"]) and gone(info["inside"])) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert gone(info["inside"]) and gone(info["watchdog"])
    assert not Path(info["state"]).exists()
    proc.stdout.close()


def test_cleanup_removes_only_what_dead_owners_left(make_net):
    live = make_net()  # its owner (this process) is alive: left alone
    foreign = f"bb{secrets.token_hex(3)}zz"  # a bb* namespace with no state file: not ours
    subprocess.run(["ip", "netns", "add", foreign], check=True)
    try:
        proc, info = start_owner()
        os.kill(info["watchdog"], signal.SIGKILL)  # both gone: only cleanup can help now
        proc.kill()
        proc.wait()
        proc.stdout.close()
        assert set(info["names"]) <= namespaces()
        r = subprocess.run(
            [sys.executable, "-m", "burstbench.infra.netns", "cleanup"],
            cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert r.returncode == 0, r.stderr
        left = namespaces()
        assert not set(info["names"]) & left
        assert set(live.names) <= left and foreign in left
        assert not Path(info["state"]).exists()
        deadline = time.monotonic() + 5
        while not gone(info["inside"]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert gone(info["inside"])
    finally:
        subprocess.run(["ip", "netns", "del", foreign], check=True)


RECEIVER = """
import socket, struct, sys
group, port = sys.argv[1], int(sys.argv[2])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("", port))
s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
             struct.pack("4s4s", socket.inet_aton(group), socket.inet_aton("0.0.0.0")))
print("ready", flush=True)
s.settimeout(5)
data, peer = s.recvfrom(100)
print(data.decode(), peer[0], flush=True)
"""

SENDER = """
import socket, sys, time
group, port = sys.argv[1], int(sys.argv[2])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
for _ in range(3):
    s.sendto(b"hello from a", (group, port))
    time.sleep(0.1)
"""


def test_multicast_between_namespaces_when_asked(make_net):
    net = make_net(multicast=True)
    group, port = "239.255.42.7", "45678"
    recv = subprocess.Popen(
        net.wrap("b") + [sys.executable, "-c", RECEIVER, group, port],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert recv.stdout.readline().strip() == "ready", recv.stderr.read()
        send = subprocess.run(
            net.wrap("a") + [sys.executable, "-c", SENDER, group, port],
            capture_output=True, text=True, timeout=30, check=False,
        )  # fmt: skip
        assert send.returncode == 0, send.stderr
        out, err = recv.communicate(timeout=10)
        assert out.strip() == f"hello from a {net.address('a')}", err
    finally:
        if recv.poll() is None:
            recv.kill()
            recv.communicate()

    plain = make_net()  # without multicast=True there is no route for it
    send = subprocess.run(
        plain.wrap("a") + [sys.executable, "-c", SENDER, group, port],
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert send.returncode != 0 and "unreachable" in send.stderr


def test_delay_is_refused_with_the_kernel_reason():
    why = netns.netem_missing()
    if why is None:
        pytest.skip("this kernel has netem")
    before = namespaces()
    with pytest.raises(ValueError, match="this kernel has no netem") as e:
        netns.Network(new_tag(), ["a"], delay="20ms")
    assert isinstance(e.value, netns.NetnsUnavailable)
    assert namespaces() == before


def test_bad_arguments_are_refused_before_anything_is_made():
    with pytest.raises(ValueError, match="link rate"):
        netns.Network(new_tag(), ["a"], link_rate="fast")
    with pytest.raises(ValueError, match="host name"):
        netns.Network(new_tag(), ["a-very-long-host-name"])
    with pytest.raises(ValueError, match="tag"):
        netns.Network("Bad Tag", ["a"])
    assert netns.parse_rate("10mbit") == 1.25e6 and netns.parse_rate("2mbps") == 2e6
