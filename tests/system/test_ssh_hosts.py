"""Hosts beyond one machine: the inventory, the SSH launcher, clock offsets, and the proof on
network namespaces each running its own sshd (broker, producers and two consumer hosts apart;
all four languages; a store-and-forward pair on two hosts; SIGKILL of the harness)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from conftest import play_recap

from burstbench import paths
from burstbench.commands.run import summary
from burstbench.infra import clocks, inventory, netns, sshhosts, topology
from burstbench.infra.launch import Ssh
from burstbench.measure.measure import ConsumerRecord
from burstbench.measure.points import document
from burstbench.measure.runner import Runner
from burstbench.measure.spec import PointSpec

ROOT = Path(__file__).resolve().parents[2]


# -- the inventory (pure logic) -----------------------------------------------------------------
def write(tmp_path, text: str) -> Path:
    p = tmp_path / "hosts.yaml"
    p.write_text(text)
    return p


GOOD = """
ssh: {user: bench, identity: /keys/bench, known_hosts: kh}
hosts:
  brk: {ssh: "192.0.2.11", workdir: /opt/bb, roles: [broker]}
  gen1: {ssh: "ops@192.0.2.12:2222", address: 198.51.100.12, workdir: /opt/bb/, roles: producers}
  gen2: {ssh: "192.0.2.13", workdir: /opt/bb, roles: [consumers]}
  gen3: {ssh: "192.0.2.14", workdir: /opt/bb, roles: [consumers, producers]}
  pod0: {kubectl: {pod: loadgen-0}, workdir: /opt/burstbench, roles: [consumers]}
"""


def test_an_inventory_is_read_with_users_ports_addresses_and_roles(tmp_path):
    inv = inventory.load(write(tmp_path, GOOD))
    by = {h.name: h for h in inv.hosts}
    assert (by["brk"].user, by["brk"].port, by["brk"].address) == ("bench", 22, "192.0.2.11")
    assert (by["gen1"].user, by["gen1"].port, by["gen1"].address) == ("ops", 2222,
                                                                         "198.51.100.12")
    assert by["gen1"].workdir == "/opt/bb" and by["gen1"].roles == ["producers"]
    assert [h.name for h in inv.with_role("consumers")] == ["gen2", "gen3", "pod0"]
    assert by["pod0"].kubectl == {"pod": "loadgen-0", "namespace": "burstbench",
                                  "container": "bench"}
    assert inv.options["UserKnownHostsFile"] == str(tmp_path / "kh")
    assert inv.options["IdentityFile"] == "/keys/bench"


@pytest.mark.parametrize("text, says", [
    ("hosts: []", "needs a 'hosts' mapping"),
    ("hosts: {a: {ssh: 'x y', workdir: /w, roles: [broker]}}", "ssh must be"),
    ("hosts: {a: {ssh: h, workdir: rel, roles: [broker]}}", "workdir must be an absolute"),
    ("hosts: {a: {ssh: h, workdir: /w, roles: [cook]}}", "roles must be"),
    ("hosts: {a: {ssh: h, workdir: /w, roles: [broker], colour: red}}", "unknown key(s) colour"),
    ("hosts: {a: {ssh: 'h:70000', workdir: /w, roles: [broker]}}", "out of range"),
    ("hosts: {a: {ssh: h, workdir: /w, roles: [broker, producers]}}", ("no host has the role "
                                                                       "consumers")),
    ("hosts: [unclosed", "not YAML"),
    ("hosts: {a: {kubectl: {pod: p, image: x}, workdir: /w, roles: [broker]}}", "kubectl takes"),
])
def test_a_bad_inventory_is_one_line_naming_what_is_wrong(tmp_path, text, says):
    with pytest.raises(ValueError) as e:
        inventory.load(write(tmp_path, text))
    assert says in str(e.value) and "\n" not in str(e.value)


def test_a_missing_inventory_and_an_unknown_hosts_value_are_refused():
    with pytest.raises(ValueError, match="cannot read it"):
        inventory.load("/nonexistent/hosts.yaml")
    with pytest.raises(ValueError, match="or an inventory FILE: burstbench.s .yaml or an Ansible"):
        topology.check("single", "static", "moon")
    topology.check("single", "static", "netns-ssh")
    topology.check("single", "static", "/some/hosts.yml")


def test_bench_run_with_a_bad_inventory_exits_non_zero_with_one_line(tmp_path):
    bad = write(tmp_path, "hosts: {a: {ssh: h, workdir: /w, roles: [broker]}}")
    r = subprocess.run([str(ROOT / "bench"), "run", "--hosts", str(bad)], capture_output=True,
                       text=True, timeout=120, check=False)
    assert r.returncode != 0
    err = [line for line in r.stderr.splitlines() if "error" in line]
    assert err and "no host has the role producers" in err[-1], r.stderr


def test_placement_takes_each_role_round_robin(tmp_path):
    inv = inventory.load(write(tmp_path, GOOD))
    pl = inventory.Placement(inv, {}, probe=None, brokers=["a", "b"])
    assert pl.broker_host("a") == pl.broker_host("b") == "brk"
    assert [pl.client_host("producer", i) for i in range(3)] == ["gen1", "gen3", "gen1"]
    assert [pl.client_host("consumer", i) for i in range(4)] == ["gen2", "gen3", "pod0", "gen2"]


# -- the launcher (pure logic) ------------------------------------------------------------------
def test_the_ssh_command_maps_paths_and_quotes_every_argument(tmp_path):
    point = tmp_path / "points" / "p"
    ssh = Ssh(name="h", address="192.0.2.5", user="bench", project="/opt/bb",
              local_root=point, remote_root="/opt/bb/.bb-points/p-1", port=2222,
              options={"UserKnownHostsFile": "/run/kh"})
    argv = ssh.command([str(paths.ROOT / ".venv/bin/python"), "--id", "it's; rm -rf /",
                        "--records", str(point / "records" / "c1.tsv")], cwd=point / "records")
    i = argv.index("192.0.2.5")
    head, far = argv[:i + 1], argv[i + 1:]
    assert head[:2] == ["ssh", "-T"] and "BatchMode=yes" in head
    assert "StrictHostKeyChecking=yes" in head and "UserKnownHostsFile=/run/kh" in head
    assert head[head.index("-p") + 1] == "2222" and head[head.index("-l") + 1] == "bench"
    assert len(far) == 1 and far[0].startswith("exec ")
    import shlex
    words = shlex.split(far[0])[1:]
    assert words[:3] == ["/opt/bb/.venv/bin/python", "/opt/bb/burstbench/infra/remote_exec.py",
                         "run"]
    assert words[3:5] == ["--cwd", "/opt/bb/.bb-points/p-1/records"]
    assert words[6:] == ["/opt/bb/.venv/bin/python", "--id", "it's; rm -rf /", "--records",
                         "/opt/bb/.bb-points/p-1/records/c1.tsv"]


# -- clocks (pure logic, hand-computed) -----------------------------------------------------------
def test_the_offset_is_ntps_from_the_minimum_round_trip():
    # host 500 ns ahead; the first probe waited 10,000 ns on the way out, the second is clean
    samples = [(1_000, 11_500, 11_600, 11_100), (20_000, 20_600, 20_700, 20_300)]
    r = clocks.offset(samples)
    assert r.rtt_ns == 200 and r.offset_ns == 500 and r.uncertainty_ns == 101
    assert r.probes == 2


def test_combine_takes_the_mean_and_widens_by_the_drift():
    a = clocks.Reading(1_000, 50, 100, 24, 0)
    b = clocks.Reading(1_400, 80, 160, 24, 1)
    c = clocks.combine(a, b)
    assert (c["offset_ns"], c["drift_ns"], c["uncertainty_ns"]) == (1_200, 400, 280)
    assert clocks.combine(None, None) == {"available": False}


def test_records_are_corrected_onto_the_harness_clock():
    hosts = {"g1": {"available": True, "offset_ns": 1_000, "uncertainty_ns": 10},
             "g2": {"available": True, "offset_ns": -2_000, "uncertainty_ns": 30}}
    host_of = {"p1-perl": "g1", "c1-java": "g2"}
    prods = [("p1-perl", 0, 0, 5_000)]
    rec = ConsumerRecord("p1-perl", 0, 0, 5_000, 9_000, 6, True, False, "q")
    clocks.correct(prods, {"c1-java": [rec]}, host_of, hosts)
    assert prods == [("p1-perl", 0, 0, 4_000)]
    assert (rec.sent_ns, rec.recv_ns) == (4_000, 11_000)  # 7 us of latency, not 4
    assert clocks.cross_host_uncertainty_ns(host_of, hosts, ["p1-perl"], ["c1-java"]) == 40
    assert clocks.cross_host_uncertainty_ns({"p": "g1", "c": "g1"}, hosts, ["p"], ["c"]) is None


# -- the proof: network namespaces each running its own sshd (root) ----------------------------
need_root = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces and sshd need root")


@pytest.fixture
def need_ssh_hosts():
    why = sshhosts.available()
    if why:
        pytest.skip(why)
    if not paths.BROKER_CLASSES.exists():
        pytest.skip("broker not built (./bench setup)")


LANGS = ["perl", "python", "node", "java"]


def measured(spec: PointSpec, tmp_path: Path) -> dict:
    """The point's result document (skipped when a client is missing); its status ok and the
    brokers' counters agreeing with the accounting."""
    for r in (*spec.slots()[0], *spec.slots()[1]):
        if r.client.missing():
            pytest.skip(r.client.missing())
    doc = document(Runner(spec, tmp_path / "point").run(), "now")
    doc["point"] = "p"
    assert doc["status"] == "ok", doc["errors"]
    assert doc["broker_witness"]["agrees"]
    return doc


@pytest.mark.integration
@pytest.mark.root
@need_root
# the forward topology over SSH runs in the full tier (./bench test --full): brokers
# forwarding to each other are the default suite's in tests/integration/test_topology.py
@pytest.mark.parametrize("topo", ["single", pytest.param("forward", marks=pytest.mark.full)])
def test_four_languages_on_hosts_of_their_own_over_ssh(tmp_path, need_ssh_hosts, topo):
    doc = measured(PointSpec(producer=LANGS, consumer=LANGS, producers=4, consumers=4,
                             count=1000, bursts=2, topology=topo, hosts="netns-ssh"), tmp_path)
    acc = doc["accounting"]
    assert (acc["sent"], acc["received"], acc["lost"], acc["duplicates"], acc["corrupt"]) == \
        (8000, 8000, 0, 0, 0)
    where = {p["name"]: p["host"] for p in doc["resources"]["processes"]}
    brokers = topology.layout(topo).brokers
    assert {where[f"broker-{b}"] for b in brokers} == {f"b{i + 1}" for i in range(len(brokers))}
    assert {h for n, h in where.items() if n[0] == "p"} == {"p1"}
    assert {h for n, h in where.items() if n[0] == "c"} == {"c1", "c2"}
    assert all(p["exit_code"] == 0 and p["cpu_s"] > 0 for p in doc["resources"]["processes"])
    clk = doc["clocks"]
    assert set(clk["hosts"]) == set(where.values())
    for h in clk["hosts"].values():  # one kernel clock here: offsets within their uncertainty
        assert h["available"] and h["before"] and h["after"]
        assert abs(h["offset_ns"]) <= h["uncertainty_ns"] + 50_000
    assert 0 < clk["cross_host_uncertainty_ms"] < 50
    text = summary(doc)
    assert "across hosts (clock offsets)" in text and "clock c2: offset" in text
    print(text)
    assert not (tmp_path / "point" / "work").exists()


@pytest.mark.integration
@pytest.mark.root
@need_root
@pytest.mark.parametrize("store", ["jdbc-postgres",
                                   pytest.param("jdbc-mariadb", marks=pytest.mark.full)])
def test_a_jdbc_broker_on_an_ssh_host_has_its_database_there(tmp_path, need_ssh_hosts, store):
    """The database of a JDBC store starts on the broker's host (infra/dbserve.py), the broker
    keeps persistent messages in it, and it stops with the point."""
    doc = measured(PointSpec(producer=["python"], consumer=["java"], producers=1, consumers=2,
                             count=500, bursts=1, persistence=store, persistent=True,
                             hosts="netns-ssh"), tmp_path)
    acc = doc["accounting"]
    assert (acc["sent"], acc["received"], acc["lost"], acc["duplicates"]) == (500, 500, 0, 0)
    assert doc["parameters"]["persistence"] == store
    where = {p["name"]: p["host"] for p in doc["resources"]["processes"]}
    assert where["db-a"] == where["broker-a"] == "b1", where
    logs = tmp_path / "point" / "logs"
    assert f"{store.removeprefix('jdbc-')} ready on 127.0.0.1:" in (logs / "db-a.log").read_text()
    assert "Using Persistence Adapter: JDBCPersistenceAdapter" in \
        (logs / "broker-a.log").read_text()
    assert not (tmp_path / "point" / "work").exists()


HARNESS = """
import json, sys, time
sys.path.insert(0, {root!r})
from pathlib import Path
from burstbench.infra.procs import Supervisor
sup = Supervisor(Path({d!r}) / "harness-logs")
child = sup.start("prog", json.loads(sys.argv[1]), remote=True)
while True:  # the program's first line: it runs, and has for a while
    item = sup.wait_event(30)
    if item is None or item[1].get("text") == "up":
        break
print(child.pid, flush=True)
time.sleep(600)
"""


def marked(marker: str) -> list[int]:
    """Every process whose command line holds ``marker``: the program, its remote_exec, and
    the ssh client."""
    found = []
    for d in Path("/proc").iterdir():  # pgrep -f reads only the start of a long command line
        if d.name.isdigit() and int(d.name) != os.getpid():
            try:
                if marker.encode() in (d / "cmdline").read_bytes():
                    found.append(int(d.name))
            except OSError:
                pass
    return found


@pytest.mark.integration
@pytest.mark.root
@need_root
def test_sigkill_of_the_harness_ends_the_program_on_the_host(tmp_path, need_ssh_hosts):
    """The program dies because its SSH session did: the hosts (owned by this test) live on,
    so nothing else could have ended it."""
    net = sshhosts.SshNetns(f"k{uuid.uuid4().hex[:5]}", ["h1"], tmp_path / "keys",
                            tmp_path / "logs")
    net.start()
    try:
        marker = uuid.uuid4().hex
        argv = net.launcher("h1", tmp_path, str(tmp_path / "far")).command(
            [sys.executable, "-c", ("import time; time.sleep(1); print('up', flush=True); "
                                   "time.sleep(600)"), marker])
        proc = subprocess.Popen([sys.executable, "-c", HARNESS.format(root=str(ROOT),
                                                                      d=str(tmp_path)),
                                 json.dumps(argv)], stdout=subprocess.PIPE, text=True)
        try:
            int(proc.stdout.readline())
            deadline = time.monotonic() + 20
            inside: set[int] = set()
            while len(inside) < 2 and time.monotonic() < deadline:  # remote_exec and program
                time.sleep(0.05)
                inside = set(marked(marker)) & set(map(int, subprocess.run(
                    ["ip", "netns", "pids", net.net.namespace("h1")], capture_output=True,
                    text=True, check=True).stdout.split()))
            assert len(inside) == 2, "the program did not start on h1"
            far = sorted(inside)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            proc.stdout.close()
        t0 = time.monotonic()
        while marked(marker) and time.monotonic() - t0 < 15:
            time.sleep(0.02)
        took = time.monotonic() - t0
        assert not marked(marker), f"program {far} still runs {took:.1f} s after SIGKILL"
        assert set(net.net.names) <= _namespaces()  # the hosts are still there
        print(f"the program on h1 ended {took:.2f} s after SIGKILL of the harness")
    finally:
        net.stop()
    assert not set(net.net.names) & _namespaces()


def _network_tag(owner: int) -> str:
    """The tag of the one netns Network process ``owner`` made (its state file says)."""
    tags = set()
    for f in (f for d in netns.STATE_DIRS for f in Path(d).glob("*.json")):
        with contextlib.suppress(OSError, ValueError):
            state = json.loads(f.read_text())
            if state.get("owner") == owner:
                tags.add(state["tag"])
    assert len(tags) == 1, (owner, tags)
    return tags.pop()


def _namespaces() -> set[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


# -- provisioning with Ansible -------------------------------------------------------------------
def test_the_ansible_inventory_carries_every_host_and_the_ssh_settings(tmp_path):
    from burstbench.infra import provision
    inv = inventory.load(write(tmp_path, GOOD))
    doc = provision.ansible_inventory(inv, tmp_path / "a.tar", "abc123")
    group = doc["all"]["children"]["burstbench"]
    assert group["hosts"]["gen1"] == {"ansible_host": "192.0.2.12", "ansible_port": 2222,
                                      "ansible_user": "ops", "burstbench_workdir": "/opt/bb",
                                      "burstbench_roles": ["producers"]}  # databases by role
    v = group["vars"]
    assert v["ansible_ssh_private_key_file"] == "/keys/bench"
    assert "-o BatchMode=yes" in v["ansible_ssh_common_args"]
    assert f"-o UserKnownHostsFile={tmp_path / 'kh'}" in v["ansible_ssh_common_args"]
    assert (v["burstbench_archive"], v["burstbench_commit"]) == (str(tmp_path / "a.tar"),
                                                                 "abc123")


def test_the_playbook_passes_ansibles_syntax_check(tmp_path):
    from burstbench.infra import provision
    inv = tmp_path / "i.yml"
    inv.write_text("all: {children: {burstbench: {hosts: {h: {burstbench_workdir: /w}}}}}\n")
    r = subprocess.run(provision.playbook_argv(inv, ["--syntax-check"]), capture_output=True,
                       text=True, timeout=120, env={**os.environ,
                                                    "ANSIBLE_CONFIG": str(provision.CONFIG),
                                                    "ANSIBLE_LOCAL_TEMP": str(tmp_path)},
                       check=False)
    assert r.returncode == 0, r.stdout + r.stderr


def ssh_netns_inventory(net: sshhosts.SshNetns, host: str, workdir: Path):
    launcher = net.launcher(host, Path("/"), "/")
    return inventory.Inventory(None, [inventory.Host(host, net.address(host), net.user,
                                                     net.port, net.address(host),
                                                     str(workdir), ["broker"])],
                               {k: v for k, v in launcher.options.items()})


@pytest.mark.full  # provisioning: ./bench test --full
@pytest.mark.integration
@pytest.mark.root
@need_root
def test_the_playbook_copies_the_project_to_a_host_once(tmp_path, need_ssh_hosts):
    """Against a namespace host with its own sshd: the first run puts the committed project
    there, the second changes nothing (./bench setup there, through a proxy, is the opt-in
    test in tests/system/test_provision_proxy.py)."""
    from burstbench.infra import provision
    net = sshhosts.SshNetns(f"a{uuid.uuid4().hex[:5]}", ["h1"], tmp_path / "keys",
                            tmp_path / "logs")
    net.start()
    try:
        inv = ssh_netns_inventory(net, "h1", tmp_path / "far" / "burstbench")
        runs = [provision.provision(inv, tmp_path / f"ctl{i}", via=net.net.wrap(sshhosts.CTL),
                                    extra_args=["--skip-tags", "setup"], capture=True)
                for i in range(2)]
    finally:
        net.stop()
    for r in runs:
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    first, second = (play_recap(r.stdout)["h1"] for r in runs)
    assert first["changed"] >= 2 and first["failed"] == 0  # copied and unpacked
    assert second["changed"] == 0 and second["failed"] == 0, runs[1].stdout[-3000:]
    far = tmp_path / "far" / "burstbench"
    tracked = subprocess.run(["git", "-C", str(ROOT), "ls-files"], capture_output=True,
                             text=True, check=True).stdout.split()
    assert all((far / f).exists() for f in tracked if (ROOT / f).exists())
    assert (far / "bench").read_bytes() == subprocess.run(
        ["git", "-C", str(ROOT), "show", "HEAD:bench"], capture_output=True, check=True).stdout
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"],
                          capture_output=True, text=True, check=True).stdout.strip()
    assert (far / ".burstbench-commit").read_text() == head + "\n"


@pytest.mark.integration
@pytest.mark.root
@need_root
def test_files_travel_over_sftp_with_paths_rewritten(tmp_path, need_ssh_hosts):
    """put and fetch over SFTP on a namespace host (its sshd's internal-sftp): a file put
    there has the point directory rewritten inside; fetch brings one back whole, and says
    False for one the host does not have (leaving nothing behind here)."""
    net = sshhosts.SshNetns(f"f{uuid.uuid4().hex[:5]}", ["h1"], tmp_path / "keys",
                            tmp_path / "logs")
    net.start()
    try:
        here, there = tmp_path / "point", tmp_path / "far"
        ssh = net.launcher("h1", here, str(there))
        (here / "cfg").mkdir(parents=True)
        (here / "cfg" / "a.conf").write_text(f"records {here}/records/c.tsv\n")
        ssh.put(here / "cfg" / "a.conf")
        assert (there / "cfg" / "a.conf").read_text() == f"records {there}/records/c.tsv\n"
        (there / "records").mkdir()
        body = bytes(range(256)) * 4000
        (there / "records" / "c.tsv").write_bytes(body)
        assert ssh.fetch(here / "records" / "c.tsv")
        assert (here / "records" / "c.tsv").read_bytes() == body
        assert not ssh.fetch(here / "records" / "none.tsv")
        assert sorted(p.name for p in (here / "records").iterdir()) == ["c.tsv"]
    finally:
        net.stop()


@pytest.mark.integration
@pytest.mark.root
@need_root
def test_a_host_at_another_commit_is_refused_naming_both(tmp_path, need_ssh_hosts):
    """Over SSH to a namespace host: a copy stamped with another commit is refused with both
    commits named, one stamped with the harness's passes, and a git checkout (this machine's
    files, as the namespace hosts see them) is read by its HEAD."""
    import dataclasses
    net = sshhosts.SshNetns(f"c{uuid.uuid4().hex[:5]}", ["h1"], tmp_path / "keys",
                            tmp_path / "logs")
    net.start()
    try:
        base = net.launcher("h1", tmp_path, str(tmp_path))
        copy = tmp_path / "copy"
        copy.mkdir()
        at = {"h1": dataclasses.replace(base, project=str(copy))}
        (copy / ".burstbench-commit").write_text("0123456789ab\n")
        with pytest.raises(ValueError) as e:
            inventory.check_commits(at, "fedcba987654-dirty")
        msg = str(e.value)
        assert "h1" in msg and "0123456789ab" in msg and "fedcba987654" in msg, msg
        assert "dirty" not in msg and "./bench setup --hosts" in msg, msg
        inventory.check_commits(at, "0123456789ab-dirty")  # uncommitted changes do not travel
        (copy / ".burstbench-commit").unlink()
        with pytest.raises(ValueError, match="at no known commit"):
            inventory.check_commits(at, "0123456789ab")
        inventory.check_commits({"h1": base})  # this checkout, at the harness's own commit
    finally:
        net.stop()


# -- remote_exec's relay mode (kubectl exec) and the kubectl launcher (no cluster here) --------
ECHO = ("import sys\nfor line in sys.stdin:\n    print('got', line.strip(), flush=True)\n"
        "print('done')")


def _relay(*argv: str, grace: str = "1") -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(ROOT / "burstbench" / "infra" / "remote_exec.py"),
                             "run",
                             "--relay", "--grace", grace, "--", *argv],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def test_relay_carries_stdin_and_the_end_of_the_session_is_the_programs_stop():
    p = _relay(sys.executable, "-c", ECHO)
    p.stdin.write("go\n")
    p.stdin.flush()
    assert p.stdout.readline() == "got go\n"
    p.stdin.close()
    assert p.stdout.readline() == "done\n"
    last = json.loads(p.stdout.readline())
    assert last["event"] == "remote_exit" and last["code"] == 0 and last["cpu_s"] > 0
    assert p.wait(timeout=10) == 0
    p.stdout.close()


def test_relay_ends_a_program_that_ignores_the_end_of_its_session():
    marker = uuid.uuid4().hex
    p = _relay(sys.executable, "-c", "import time; time.sleep(600)", marker, grace="0.5")
    deadline = time.monotonic() + 10
    while not marked(marker) and time.monotonic() < deadline:
        time.sleep(0.02)
    t0 = time.monotonic()
    p.stdin.close()
    code = p.wait(timeout=20)
    took = time.monotonic() - t0
    assert code != 0 and not marked(marker), f"still running {took:.1f} s after the session"
    assert took < 15  # its 0.5 s grace, then the kill: not the wait's 20 s
    p.stdout.close()


def test_the_kubectl_launcher_runs_remote_exec_in_relay_mode_in_its_pod(tmp_path):
    from burstbench.infra.launch import Kubectl
    k = Kubectl(name="gen0", address="loadgen-0", user="", project="/opt/burstbench",
                local_root=tmp_path, remote_root="/opt/burstbench/.bb-points/p",
                namespace="bb", container="bench")
    argv = k.command(["perl", str(paths.ROOT / "clients/perl/consumer.pl"), "--records",
                      str(tmp_path / "records" / "c1.tsv")], cwd=tmp_path / "records")
    assert argv[:10] == ["kubectl", "exec", "-i", "-n", "bb", "loadgen-0", "-c", "bench", "--",
                         "/opt/burstbench/.venv/bin/python"]
    assert argv[10:16] == ["/opt/burstbench/burstbench/infra/remote_exec.py", "run", "--relay",
                           "--cwd",
                           "/opt/burstbench/.bb-points/p/records", "--"]
    assert argv[16:] == ["perl", "/opt/burstbench/clients/perl/consumer.pl", "--records",
                         "/opt/burstbench/.bb-points/p/records/c1.tsv"]
    assert k.clock_argv()[-1] == "clock"


@pytest.mark.integration
@pytest.mark.root
@need_root
def test_sigkill_of_bench_run_mid_burst_leaves_nothing_on_any_host(tmp_path, need_ssh_hosts):
    """The whole harness, SIGKILLed while its clients and broker run on namespace hosts: no
    process of the point, no namespace and no state file is left."""
    results = tmp_path / "results"
    env = {**os.environ, "BURSTBENCH_RESULTS": str(results)}
    proc = subprocess.Popen([str(ROOT / ".venv/bin/python"), "-m", "burstbench.cli", "run",
                             "--hosts", "netns-ssh", "--producer", "python", "--consumer",
                             "python", "--consumers", "2", "--count", "200000", "--bursts",
                             "3"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    seen = []
    try:
        deadline = time.monotonic() + 120
        for line in proc.stdout:  # until the first burst is under way
            seen.append(line)
            if "starting 2 consumer(s)" in line or time.monotonic() > deadline:
                break
        time.sleep(3)
        point = next(results.glob("*/points/point")).resolve()
        running = marked(str(point))
        # the broker, 2 consumers, 1 producer: each its ssh client, remote_exec and program
        assert len(running) >= 9, "".join(seen)
        # this run's namespaces: its network's (other tests make theirs meanwhile, elsewhere)
        ours = {n for n in _namespaces() if n.startswith("bb" + _network_tag(proc.pid))}
        assert len(ours) >= 6, ours  # ctl, b1, p1, c1, c2 and the bridge
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()
    deadline = time.monotonic() + 20
    while (marked(str(point)) or _namespaces() & ours) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not marked(str(point)), "processes of the point survive the harness"
    assert not _namespaces() & ours, "namespaces survive the harness"


def test_a_point_whose_clock_uncertainty_exceeds_its_p50_says_so():
    from burstbench.measure.points import clock_verdict
    clk = {"hosts": {"g1": {"available": True, "offset_ns": 0, "uncertainty_ns": 400_000,
                            "drift_ns": 0}},
           "cross_host_uncertainty_ns": 800_000}
    doc = {"point": "p", "status": "ok", "errors": [],
           "parameters": {"producer": ["perl"], "producers": 1, "consumer": ["java"],
                          "consumers": 1, "count": 10, "bursts": 2, "size": 6, "queues": 1,
                          "persistence": "none", "persistent": False, "ack": "auto"},
           "throughput": {"warmup_excluded": True, "send_msgs_per_s": 1.0, "send_min": 1.0,
                          "send_max": 1.0, "recv_msgs_per_s": 1.0, "recv_min": 1.0,
                          "recv_max": 1.0, "measured_bursts": 1},
           "bursts": [], "latency_ms": {"p50": 0.5, "samples": 100}, "time_in_queue_ms": None,
           "accounting": {k: 0 for k in ("sent", "received", "lost", "duplicates",
                                         "out_of_order", "foreign", "redelivered")}}
    doc["clocks"] = clock_verdict(clk, doc)
    assert doc["clocks"]["exceeds_p50"] and doc["clocks"]["cross_host_uncertainty_ms"] == 0.8
    text = summary(doc)
    assert "±0.800 ms across hosts" in text
    assert "uncertainty across hosts exceeds p50" in text
    doc["latency_ms"]["p50"] = 0.9
    assert not clock_verdict(clk, doc)["exceeds_p50"]


def test_a_profile_places_brokers_and_clients_over_the_round_robin(tmp_path):
    inv = inventory.load(write(tmp_path, GOOD))
    pl = inventory.Placement(inv, {}, probe=None, brokers=["a", "b"],
                             placement={"broker": {"b": "gen3"}, "consumers": ["gen1"]})
    assert (pl.broker_host("a"), pl.broker_host("b")) == ("brk", "gen3")
    assert [pl.client_host("consumer", i) for i in range(2)] == ["gen1", "gen1"]
    assert [pl.client_host("producer", i) for i in range(2)] == ["gen1", "gen3"]
    with pytest.raises(ValueError, match="unknown host.*moon"):
        inventory.Placement(inv, {}, None, ["a"], placement={"producers": ["moon"]})
    with pytest.raises(ValueError, match="no broker 'c'"):
        inventory.Placement(inv, {}, None, ["a"], placement={"broker": {"c": "brk"}})
    with pytest.raises(ValueError, match="needs SSH hosts"):
        PointSpec(placement={"producers": ["x"]}).validate()
    with pytest.raises(ValueError, match="placement takes"):
        inventory.check_point(PointSpec(hosts=str(write(tmp_path, GOOD)),
                                        placement={"producers": "gen1"}))
