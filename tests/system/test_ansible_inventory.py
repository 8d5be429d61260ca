"""A user's own Ansible inventory, accepted as it is: read by Ansible itself
(``ansible-inventory --list``), its groups giving the roles, its connection variables the ssh
settings; and provisioning runs the playbook on it unchanged, with burstbench's variables
beside it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from burstbench.infra import inventory, provision

INI = """\
[mq_eu]
mq1 ansible_host=192.0.2.11 ansible_user=ops

[brokers:children]
mq_eu

[producers]
gen1 ansible_host=192.0.2.12 ansible_port=2222 burstbench_address=198.51.100.12

[consumers]
gen2 ansible_host=192.0.2.13
gen1

[loadgen:children]
producers
consumers

[all:vars]
burstbench_workdir=/opt/bb
ansible_ssh_common_args='-o UserKnownHostsFile=/etc/bb/known_hosts -oConnectTimeout=7'
"""


def _write(tmp_path: Path, name: str, text: str, mode: int = 0o644) -> Path:
    p = tmp_path / name
    p.write_text(text)
    p.chmod(mode)
    return p


def test_an_ini_inventory_gives_roles_by_group_and_ssh_by_its_variables(tmp_path):
    inv = inventory.load(_write(tmp_path, "hosts.ini", INI))
    by = {h.name: h for h in inv.hosts}
    assert inv.ansible and set(by) == {"mq1", "gen1", "gen2"}
    assert by["mq1"].roles == ["broker"]  # through the nested group mq_eu
    assert (by["mq1"].ssh_address, by["mq1"].user, by["mq1"].port) == ("192.0.2.11", "ops", 22)
    assert sorted(by["gen1"].roles) == ["consumers", "producers"]
    assert (by["gen1"].port, by["gen1"].address) == (2222, "198.51.100.12")
    assert by["gen2"].workdir == "/opt/bb" and by["gen2"].address == "192.0.2.13"
    assert inv.options == {"UserKnownHostsFile": "/etc/bb/known_hosts", "ConnectTimeout": "7"}


def test_a_dynamic_inventory_maps_its_own_groups_with_burstbench_roles(tmp_path):
    """A script (executable: Ansible runs it with --list) whose groups are not named for
    burstbench: ``burstbench_roles`` in its group variables is the mapping."""
    data = {"mq": {"hosts": ["m1"], "vars": {"burstbench_roles": "broker"}},
            "gens": {"hosts": ["g1", "g2"], "vars": {"burstbench_roles": ["producers",
                                                                          "consumers"]}},
            "_meta": {"hostvars": {"m1": {"ansible_host": "10.0.0.1"},
                                   "g1": {"ansible_host": "10.0.0.2",
                                          "ansible_ssh_private_key_file": "/k/bench"},
                                   "g2": {"ansible_host": "10.0.0.3",
                                          "ansible_ssh_private_key_file": "/k/bench"}}}}
    script = _write(tmp_path, "inventory.py",
                    f"#!{sys.executable}\nimport json, sys\n"
                    f"print(json.dumps({data!r}) if '--list' in sys.argv else '{{}}')\n", 0o755)
    inv = inventory.load(script)
    by = {h.name: h for h in inv.hosts}
    assert by["m1"].roles == ["broker"] and by["g2"].roles == ["producers", "consumers"]
    assert by["g1"].workdir == inventory.DEFAULT_WORKDIR
    assert inv.options == {"IdentityFile": "/k/bench", "IdentitiesOnly": "yes"}


def test_an_ansible_yaml_inventory_is_told_from_burstbenchs_own(tmp_path):
    doc = {"all": {"children": {"brokers": {"hosts": {"b1": {"ansible_host": "192.0.2.1"}}},
                                "producers": {"hosts": {"p1": None}},
                                "consumers": {"hosts": {"p1": None}}}}}
    inv = inventory.load(_write(tmp_path, "inv.yml", yaml.safe_dump(doc)))
    assert inv.ansible and {h.name: h.roles for h in inv.hosts} == {
        "b1": ["broker"], "p1": ["producers", "consumers"]}
    own = _write(tmp_path, "own.yaml", "hosts:\n  b1: {ssh: 192.0.2.1, workdir: /w, "
                 "roles: [broker, producers, consumers]}\n")
    assert not inventory.load(own).ansible


@pytest.mark.parametrize(("text", "says"), [
    ("[web]\nw1\n", "no host in a group brokers"),
    ("[brokers]\nb1 burstbench_roles=cook\n", "burstbench_roles must be of"),
    ("[brokers]\nb1 burstbench_workdir=rel\n", "burstbench_workdir must be an absolute"),
    ("[brokers]\nb1 ansible_ssh_common_args='-J jump'\n", "-o KEY=VALUE settings only"),
    ("[brokers]\nb1 ansible_ssh_private_key_file=/a\nb2 ansible_ssh_private_key_file=/b\n",
     "one ansible_ssh_private_key_file"),
    ("[brokers]\nb1\n", "no host has the role producers"),
])
def test_a_bad_ansible_inventory_is_one_line_naming_what_is_wrong(tmp_path, text, says):
    with pytest.raises(ValueError, match=says) as e:
        inventory.load(_write(tmp_path, "bad.ini", text))
    assert "\n" not in str(e.value) and "bad.ini" in str(e.value)


def test_text_neither_format_reads_is_refused_in_one_line(tmp_path):
    bad = _write(tmp_path, "bad.txt", "hosts: [b1, ]]]\n[[[\n")  # not YAML, not INI
    r = subprocess.run([str(Path(__file__).parents[2] / "bench"), "run", "--hosts", str(bad)],
                       capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 2, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if not ln.startswith("bench setup: ")]
    assert len(lines) == 1 and "bad.txt: neither burstbench's inventory nor one Ansible reads" \
        in lines[0], r.stderr


def test_provisioning_runs_the_playbook_on_the_users_inventory_unchanged(tmp_path):
    """ansible-playbook reads the user's inventory first, then burstbench's group of the same
    hosts carrying only the project's variables: each host keeps the user's connection
    settings (ansible_user ops stays ops; no ssh arguments of burstbench's)."""
    user = _write(tmp_path, "hosts.ini", INI)
    inv = inventory.load(user, need=())
    gen = tmp_path / "gen.yml"
    gen.write_text(yaml.safe_dump(provision.ansible_inventory(inv, tmp_path / "p.tar", "c0ffee")))
    argv = provision.playbook_argv(gen, ["--list-hosts"], user)
    assert argv[1:5] == ["-i", str(user), "-i", str(gen)]
    env = {"ANSIBLE_CONFIG": str(provision.CONFIG), "PATH": "/usr/bin:/bin",
           "HOME": str(tmp_path)}
    r = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, check=False)
    assert r.returncode == 0, r.stderr
    listed = r.stdout.split("hosts (3):")[1].split()
    assert sorted(listed) == ["gen1", "gen2", "mq1"]
    exe = Path(argv[0]).with_name("ansible-inventory")
    r = subprocess.run([str(exe), "-i", str(user), "-i", str(gen), "--host", "mq1"],
                       capture_output=True, text=True, env=env, timeout=120, check=True)
    hv = json.loads(r.stdout)
    assert hv["ansible_user"] == "ops" and hv["burstbench_commit"] == "c0ffee"
    assert hv["ansible_ssh_common_args"].startswith("-o UserKnownHostsFile=/etc/bb/")
    assert hv["burstbench_workdir"] == "/opt/bb"
