"""Hosts that start bare: Ansible installs the runtimes, then a four-language point runs there.

Full tier (``./bench test --full -k bare_hosts``; root; the first run also makes the bare
root, about a minute, kept in /var/lib/burstbench/roots). Three namespace hosts, each with a
root filesystem of its own (``burstbench/infra/roots.py``: Debian bookworm with only sshd,
Python, sudo and the CA certificates, and an unprivileged user who may sudo), reach the
package registries only through the harness's CONNECT proxy. ``./bench setup --hosts FILE``
installs JDK 17, Maven, Node.js 20, Python's venv and Net::Stomp there (with ``become``), puts
the harness's commit there and builds it; then ``./bench run --hosts FILE`` places the broker
on one host and the four languages' producers and consumers on the two others. The broker's
host has the role ``databases`` too: only there are MariaDB and PostgreSQL installed, and a
second point keeps persistent messages in a PostgreSQL started there. The commands run
inside the hosts' network (the ``ctl`` namespace), as a coordinator on the same network
would.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
import uuid
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, play_recap

from burstbench.infra import connect_proxy, netns, roots, sshhosts

pytestmark = [pytest.mark.full, pytest.mark.provision, pytest.mark.integration,
              pytest.mark.root, pytest.mark.slow, pytest.mark.timeout(5400)]

HOSTS = {"b1": ["broker", "databases"], "p1": ["producers"], "c1": ["consumers"]}
WORKDIR = "/home/bench/burstbench"
LANGS = "perl,python,node,java"
PY = str(ROOT / ".venv" / "bin" / "python")


def _ssh(net: sshhosts.SshNetns, host: str, command: str, timeout: float = 120):
    ssh = net.launcher(host, Path("/"), "/")
    return subprocess.run([*ssh.ssh_argv(), command], capture_output=True, text=True,
                          timeout=timeout, check=False)


def _inventory(net: sshhosts.SshNetns, proxy: str, path: Path) -> Path:
    path.write_text(yaml.safe_dump({
        "ssh": {"user": net.user, "identity": str(net.user_key),
                "known_hosts": str(net.known_hosts)},
        "proxy": proxy,
        "hosts": {h: {"ssh": net.address(h), "workdir": WORKDIR, "roles": r}
                  for h, r in HOSTS.items()}}))
    return path


@pytest.fixture
def bare_hosts(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("not root: namespaces, chroot and mounts need root")
    why = sshhosts.available()
    if why:
        pytest.fail(why)
    base = roots.base()
    net = sshhosts.SshNetns(f"r{uuid.uuid4().hex[:5]}", list(HOSTS), tmp_path / "keys",
                            tmp_path / "logs", root=base)
    net.start()
    try:
        child, proxy = net.start_proxy()
        yield net, proxy, child
    finally:
        names = list(net.net.names)
        net.stop()
        assert not any(netns.ns_exists(n) for n in names), names


def test_bare_hosts_are_provisioned_and_carry_a_four_language_point(tmp_path, bare_hosts):
    net, proxy, proxy_child = bare_hosts
    ctl = net.net.wrap(sshhosts.CTL)
    # bare: the user is not root, and none of the runtimes is there
    for h in HOSTS:
        r = _ssh(net, h, "id -u; command -v java mvn node npm; "
                         "perl -MNet::Stomp -e 1 2>/dev/null && echo net-stomp; true")
        assert r.returncode == 0, r.stderr
        assert r.stdout.split() == [r.stdout.split()[0]] and r.stdout.split()[0] != "0", \
            f"{h} is not bare: {r.stdout!r}"
    inv = _inventory(net, proxy, tmp_path / "hosts.yaml")
    env = {**os.environ, "ANSIBLE_FORKS": "3"}
    took = []
    runs = []
    for i in range(2):
        t0 = time.monotonic()
        runs.append(subprocess.run([*ctl, PY, "-m", "burstbench.infra.provision", str(inv)],
                                   capture_output=True, text=True, timeout=4200, env=env,
                                   cwd=ROOT, check=False))
        took.append(time.monotonic() - t0)
        assert runs[-1].returncode == 0, runs[-1].stdout[-6000:] + runs[-1].stderr[-3000:]
    first, second = (play_recap(r.stdout) for r in runs)
    print(f"provisioning: {took[0]:.0f} s, then {took[1]:.0f} s; recaps {first} {second}")
    assert set(first) == set(HOSTS) and all(v["failed"] == 0 for v in first.values())
    assert all(first[h]["changed"] >= 5 for h in HOSTS)  # packages, node, copy, unpack, build
    assert all(v["changed"] == 0 and v["failed"] == 0 for v in second.values()), \
        runs[1].stdout[-4000:]
    # what was installed, through the proxy only (the hosts have no other way out)
    for h in HOSTS:
        r = _ssh(net, h, "java -version 2>&1 | head -n1; mvn -B -v 2>/dev/null | head -n1; "
                         "node --version; "
                         "perl -MNet::Stomp -e 'print \"$Net::Stomp::VERSION\\n\"'; "
                         f"cat {WORKDIR}/.burstbench-commit")
        assert r.returncode == 0, r.stderr
        # (Maven colours its version line even in batch mode)
        java, mvn, node, stomp, commit = re.sub(r"\x1b\[[0-9;]*m", "", r.stdout).splitlines()
        print(f"{h}: {java} | {mvn} | node {node} | Net::Stomp {stomp} | commit {commit}")
        assert '"17.' in java and mvn.startswith("Apache Maven 3.")
        assert node.startswith("v20.") and stomp == "0.61"
    for h, roles in HOSTS.items():  # the database servers only where the role asks for them
        r = _ssh(net, h, "dpkg-query -W -f='${Status}\\n' postgresql mariadb-server 2>&1 "
                         "| grep -c 'install ok installed'; true")
        assert r.stdout.split() == ["2" if "databases" in roles else "0"], (h, r.stdout)
    tunnels = connect_proxy.connects(proxy_child.log_path)
    assert tunnels and all(t.endswith(":443") for t in tunnels)
    # the point: the broker on b1, four languages' producers on p1 and consumers on c1
    res = tmp_path / "res"
    r = subprocess.run([*ctl, str(ROOT / ".venv" / "bin" / "burstbench"), "run", "--hosts",
                        str(inv), "--producer", LANGS, "--consumer", LANGS, "--producers", "4",
                        "--consumers", "4", "--count", "1000", "--bursts", "2",
                        "--output", str(res)], capture_output=True, text=True, timeout=900,
                       cwd=ROOT, check=False)
    print(r.stdout[-3000:])
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    doc = json.loads(next(res.glob("*/points/*.json")).read_text())
    acc = doc["accounting"]
    assert doc["status"] == "ok", doc.get("errors")
    assert (acc["sent"], acc["received"], acc["lost"], acc["duplicates"], acc["corrupt"]) == \
        (8000, 8000, 0, 0, 0)
    where = {p["name"]: p["host"] for p in doc["resources"]["processes"]}
    assert {h for n, h in where.items() if n.startswith("broker")} == {"b1"}
    assert {h for n, h in where.items() if n[0] == "p"} == {"p1"}
    assert {h for n, h in where.items() if n[0] == "c"} == {"c1"}
    for role in "pc":  # each language on both sides (process names end in it: p1-perl)
        assert {n.split("-", 1)[1] for n in where if n[0] == role} == set(LANGS.split(","))
    clk = doc["clocks"]
    assert set(clk["hosts"]) == set(HOSTS)
    for h in clk["hosts"].values():  # one kernel clock: offsets within their uncertainty
        assert h["available"] and h["before"] and h["after"]
        assert abs(h["offset_ns"]) <= h["uncertainty_ns"] + 50_000
    # a JDBC store on the broker's host: its PostgreSQL runs there, as the user bench
    res = tmp_path / "res-jdbc"
    r = subprocess.run([*ctl, str(ROOT / ".venv" / "bin" / "burstbench"), "run", "--hosts",
                        str(inv), "--persistence", "jdbc-postgres", "--persistent",
                        "--producer", "python", "--consumer", "java", "--consumers", "2",
                        "--count", "500", "--bursts", "1", "--output", str(res)],
                       capture_output=True, text=True, timeout=900, cwd=ROOT, check=False)
    print(r.stdout[-1500:])
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    doc = json.loads(next(res.glob("*/points/*.json")).read_text())
    acc = doc["accounting"]
    assert doc["status"] == "ok" and (acc["sent"], acc["received"], acc["lost"]) == (500, 500, 0)
    where = {p["name"]: p["host"] for p in doc["resources"]["processes"]}
    assert where["db-a"] == where["broker-a"] == "b1", where
