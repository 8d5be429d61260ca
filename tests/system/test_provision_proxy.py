"""Hosts behind an HTTP proxy: the inventory's ``proxy``, what the playbook gives ``./bench
setup`` there (the proxy environment, and Maven's settings file, which Maven really reads),
and, opt-in (``-m provision``, root), ``./bench setup`` completed on a namespace host whose
only way out is the harness's CONNECT proxy, twice: the second run changes nothing."""

from __future__ import annotations

import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from burstbench.infra import inventory, netns, provision, sshhosts

ROOT = Path(__file__).resolve().parents[2]

PROXIED = """
proxy: http://192.0.2.1:3128
hosts:
  brk: {ssh: "192.0.2.11", workdir: /opt/bb, roles: [broker]}
  gen1: {ssh: "192.0.2.12", workdir: /opt/bb, roles: [producers], proxy: "http://[2001:db8::1]:8080/"}
  gen2: {ssh: "192.0.2.13", workdir: /opt/bb, roles: [consumers]}
  pod0: {kubectl: {pod: loadgen-0}, workdir: /opt/burstbench, roles: [consumers]}
"""


def write(tmp_path, text: str) -> Path:
    p = tmp_path / "hosts.yaml"
    p.write_text(text)
    return p


def test_a_proxy_is_the_inventorys_default_or_the_hosts_own(tmp_path):
    by = {h.name: h for h in inventory.load(write(tmp_path, PROXIED)).hosts}
    assert by["brk"].proxy == by["gen2"].proxy == "http://192.0.2.1:3128"
    assert by["gen1"].proxy == "http://[2001:db8::1]:8080"
    assert by["pod0"].proxy is None  # a pod is not provisioned by the playbook
    plain = inventory.load(write(tmp_path, "hosts: {a: {ssh: h, workdir: /w, roles: [broker, "
                                           "producers, consumers]}}"))
    assert plain.hosts[0].proxy is None


@pytest.mark.parametrize("text, says", [
    ("proxy: socks5://p:1080\nhosts: {a: {ssh: h, workdir: /w, roles: [broker]}}",
     "proxy must be http://HOST:PORT, not 'socks5://p:1080'"),
    ("hosts: {a: {ssh: h, workdir: /w, roles: [broker], proxy: 'http://p'}}",
     "host 'a': proxy must be http://HOST:PORT"),
    ("hosts: {a: {ssh: h, workdir: /w, roles: [broker], proxy: 'http://p:99999'}}",
     "proxy must be http://HOST:PORT"),
    ("proxy: http://p:3128\nhosts: {a: {ssh: h, workdir: /w w, roles: [broker]}}",
     "workdir must have no white space when a proxy is set"),
])
def test_a_bad_proxy_is_one_line_naming_it(tmp_path, text, says):
    with pytest.raises(ValueError) as e:
        inventory.load(write(tmp_path, text), need=())
    assert says in str(e.value) and "\n" not in str(e.value)


def test_a_proxied_host_gets_the_proxy_environment_and_maven_its_host_and_port(tmp_path):
    inv = inventory.load(write(tmp_path, PROXIED))
    hosts = provision.ansible_inventory(inv, tmp_path / "a.tar", "abc")["all"]["children"][
        "burstbench"]["hosts"]
    assert "pod0" not in hosts
    brk, gen1 = hosts["brk"], hosts["gen1"]
    assert brk["burstbench_proxy_env"]["https_proxy"] == "http://192.0.2.1:3128"
    assert {k for k, v in brk["burstbench_proxy_env"].items() if v == "http://192.0.2.1:3128"} \
        == {"http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"}
    assert (brk["burstbench_proxy_host"], brk["burstbench_proxy_port"]) == ("192.0.2.1", 3128)
    assert (gen1["burstbench_proxy_host"], gen1["burstbench_proxy_port"]) == ("2001:db8::1",
                                                                              8080)
    plain = provision.ansible_inventory(inventory.load(write(
        tmp_path, "hosts: {a: {ssh: h, workdir: /w, roles: [broker]}}"), need=()),
        tmp_path / "a.tar", "abc")["all"]["children"]["burstbench"]["hosts"]["a"]
    assert not any(k.startswith("burstbench_proxy") for k in plain)


def _play_locally(tmp_path, workdir: Path, proxy: str | None, run: int):
    """The playbook against this machine over Ansible's local connection, ./bench setup
    skipped: what it writes into ``workdir`` for a host with (or without) ``proxy``."""
    inv = inventory.Inventory(None, [inventory.Host("here", "127.0.0.1", "root", 22,
                                                    "127.0.0.1", str(workdir), ["broker"],
                                                    proxy=proxy)])
    work = tmp_path / f"ctl{run}"
    work.mkdir()
    tar = work / "burstbench.tar"
    commit = provision.archive(tar)
    doc = provision.ansible_inventory(inv, tar, commit)
    doc["all"]["children"]["burstbench"]["hosts"]["here"]["ansible_connection"] = "local"
    (work / "inv.yml").write_text(yaml.safe_dump(doc))
    r = subprocess.run(provision.playbook_argv(work / "inv.yml", ["--skip-tags", "setup"]),
                       capture_output=True, text=True, timeout=300, check=False,
                       env={**os.environ, "ANSIBLE_CONFIG": str(provision.CONFIG),
                            "ANSIBLE_LOCAL_TEMP": str(work / "tmp")})
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    return r


@pytest.mark.full  # provisioning: ./bench test --full
@pytest.mark.integration
def test_the_playbook_gives_maven_the_proxy_and_maven_reads_it(tmp_path):
    if not shutil.which("mvn"):
        pytest.skip("no mvn (./bench setup installs Maven's toolchain check)")
    workdir = tmp_path / "far" / "burstbench"
    _play_locally(tmp_path, workdir, "http://192.0.2.1:3128", 1)
    settings = workdir / ".mvn" / "burstbench-proxy-settings.xml"
    assert (workdir / ".mvn" / "maven.config").read_text() == \
        f"--global-settings={settings}\n"
    ns = {"m": "http://maven.apache.org/SETTINGS/1.0.0"}
    proxies = ET.parse(settings).getroot().findall("m:proxies/m:proxy", ns)
    assert sorted((p.findtext("m:protocol", namespaces=ns), p.findtext("m:host", namespaces=ns),
                   p.findtext("m:port", namespaces=ns)) for p in proxies) == [
        ("http", "192.0.2.1", "3128"), ("https", "192.0.2.1", "3128")]
    # Maven itself (offline, the aggregator only) reads the settings file from maven.config
    r = subprocess.run(["mvn", "-B", "-X", "-o", "-N", "validate"], cwd=workdir,
                       capture_output=True, text=True, timeout=180, check=False)
    assert r.returncode == 0, r.stdout[-3000:]
    assert f"Reading global settings from {settings}" in r.stdout
    # the same host without a proxy: the settings go, and nothing else changes
    again = _play_locally(tmp_path, workdir, None, 2)
    assert not (workdir / ".mvn" / "maven.config").exists() and not settings.exists()
    assert " changed=1 " in again.stdout  # the one removal task (the project was there)


def test_a_fixed_subnet_is_checked_and_used():
    net = netns.Network("t1", ["a", "b"], subnet=(253, 19))  # nothing is made until create
    assert (net.address("a"), net.address("b")) == ("10.253.19.1", "10.253.19.2")
    with pytest.raises(ValueError, match="subnet must be"):
        netns.Network("t2", ["a"], subnet=(0, 19))


need_root = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces and sshd need root")


@pytest.mark.integration
@pytest.mark.root
@need_root
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_netns_provisioning_leaves_nothing_running(tmp_path, sig):
    """Ctrl-C or SIGTERM while the playbook runs: the proxy's PID, the host's sshd and the
    namespaces are gone when the command has exited."""
    why = sshhosts.available()
    if why:
        pytest.skip(why)
    workdir = tmp_path / "far" / "burstbench"
    p = subprocess.Popen([sys.executable, "-m", "burstbench.infra.provision", "netns-ssh",
                          "--workdir",
                          str(workdir)], cwd=ROOT, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    try:
        line = ""
        ready, _, _ = select.select([p.stderr], [], [], 60)
        if ready:
            line = p.stderr.readline()
        m = re.search(r"\(PID (\d+)\), namespaces (.+)$", line)
        assert m, f"no start line: {line!r}"
        pid, names = int(m[1]), m[2].split()
        assert not _gone(pid) and all(netns.ns_exists(n) for n in names)
        deadline = time.monotonic() + 60
        while not workdir.exists() and time.monotonic() < deadline:  # the playbook is at work
            time.sleep(0.05)
        assert workdir.exists(), "the playbook never reached the host"
        p.send_signal(sig)
        code = p.wait(timeout=60)
        rest = p.stderr.read()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        p.stderr.close()
    assert code == 128 + sig, rest
    assert "stopped" in rest
    assert _gone(pid), f"the proxy (PID {pid}) outlived the command"
    assert not any(netns.ns_exists(n) for n in names)


# -- opt-in: ./bench setup completed on a namespace host through the harness's proxy ---------
def _recap(out: str, host: str) -> dict:
    for line in out.splitlines():
        if line.startswith(host) and " : ok=" in line:
            return {k: int(v) for k, v in (p.split("=") for p in line.partition(" : ")[2]
                                           .split())}
    raise AssertionError(f"no PLAY RECAP line for {host}:\n{out[-3000:]}")


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


PROBE_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <parent><groupId>org.sonatype.oss</groupId><artifactId>oss-parent</artifactId>
    <version>9</version></parent>
  <groupId>burstbench</groupId><artifactId>maven-proxy-probe</artifactId><version>1</version>
  <packaging>pom</packaging>
</project>
"""


def _maven_through_the_proxy(host, workdir: Path, repo: Path):
    """Maven on the host, in the project there (so its .mvn/maven.config applies), with an
    empty local repository: resolving a remote parent POM must go through the proxy.
    Returns (result, the tunnels it made)."""
    probe = workdir / ".bb-maven-probe"
    probe.mkdir()
    (probe / "pom.xml").write_text(PROBE_POM)
    before = len(host.connects())
    try:
        r = host.run(f"cd {probe} && mvn -B -q -Dmaven.repo.local={repo} validate")
    finally:
        shutil.rmtree(probe)
        shutil.rmtree(repo, ignore_errors=True)
    return r, host.connects()[before:]


@pytest.mark.provision
@pytest.mark.integration
@pytest.mark.root
@need_root
def test_bench_setup_completes_on_a_namespace_host_through_the_proxy_twice(tmp_path):
    why = sshhosts.available()
    if why:
        pytest.skip(why)
    workdir = tmp_path / "far" / "burstbench"
    runs = []
    for i in range(2):
        t0 = time.monotonic()
        with provision.NetnsHost(tmp_path / f"run{i}", workdir) as host:
            # the host has no way out but the proxy: a direct connection fails at once
            direct = host.run("python3 -c 'import socket; socket.create_connection("
                              "(\"192.0.2.1\", 443), timeout=5)'")
            assert direct.returncode != 0 and "unreachable" in direct.stderr.lower()
            r = host.provision(capture=True)
            targets = host.connects()
            took = time.monotonic() - t0
            probe = maven = None
            if i == 0 and r.returncode == 0:
                probe = host.run(f"cd {workdir} && .venv/bin/python -c 'import burstbench, sys; "
                                 f"print(burstbench.__file__, sys.prefix)'")
                maven = _maven_through_the_proxy(host, workdir, tmp_path / "m2")
            names, pid, log = host.namespaces, host.proxy_pid, host.proxy_log
        runs.append((r, targets, took))
        print(f"run {i + 1}: {took:.0f} s, {len(targets)} CONNECT(s) through the proxy to "
              f"{len(set(targets))} target(s), proxy log {log}")
        assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
        # nothing left running: the proxy's PID is gone, and the namespaces with the host
        assert _gone(pid), f"the proxy (PID {pid}) outlived its provisioning"
        assert not any(netns.ns_exists(n) for n in names), names
        if maven is not None:
            # Maven on the host, with the settings the playbook wrote, went through the
            # proxy (the build itself needed nothing: the shared ~/.m2 has it all)
            result, tunnels = maven
            print(f"maven probe: {len(tunnels)} CONNECT(s) through the proxy")
            assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
            assert tunnels and all(t.endswith(":443") for t in tunnels)
        if probe is not None:
            assert probe.returncode == 0, probe.stderr
            mod, prefix = probe.stdout.split()
            assert mod == str(workdir / "burstbench" / "__init__.py")
            assert prefix == str(workdir / ".venv")
    (first, first_targets, _), (second, _, _) = runs
    recap1, recap2 = _recap(first.stdout, "h1"), _recap(second.stdout, "h1")
    assert recap1["failed"] == 0 and recap1["changed"] >= 3  # copy, unpack, ./bench setup...
    assert recap2["changed"] == 0 and recap2["failed"] == 0, second.stdout[-4000:]
    assert first_targets, "./bench setup on the host made no connection through the proxy"
    assert all(t.endswith(":443") for t in first_targets)
    # the host's own copy is set up: its own .venv, node_modules and Maven build
    assert (workdir / ".venv" / "bin" / "python").exists()
    assert (workdir / "clients" / "node" / "node_modules").is_dir()
    assert any((workdir / "broker" / "target" / "lib").iterdir())
    assert (workdir / ".mvn" / "burstbench-proxy-settings.xml").exists()
    shutil.rmtree(workdir)  # half a gigabyte: kept only when the test fails
