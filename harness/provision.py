"""``./bench setup --hosts FILE``: Ansible puts the project on every host and sets it up there.

burstbench's inventory (``harness/inventory.py``) becomes an Ansible inventory of one group,
``burstbench``, with each host's address, port, user and work directory, and the ssh options
the harness itself uses (BatchMode, the inventory's key and known-hosts file). The project
travels as ``git archive`` of the commit checked out here (uncommitted changes do not travel;
the archive is the same bytes for the same commit, so a second run copies nothing), and
``deploy/ansible/provision.yml`` unpacks it and runs ``./bench setup`` on each host.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from harness import inventory, paths

PLAYBOOK = paths.ROOT / "deploy" / "ansible" / "provision.yml"
CONFIG = paths.ROOT / "deploy" / "ansible" / "ansible.cfg"


class ProvisionError(RuntimeError):
    """The project could not be archived, or Ansible could not be run."""


def ansible_inventory(inv: inventory.Inventory, archive: Path, commit: str,
                      extra_ssh: dict[str, str] | None = None) -> dict:
    """The Ansible inventory (as data) for burstbench's ``inv``."""
    opts = {"BatchMode": "yes", "StrictHostKeyChecking": "yes", **inv.options,
            **(extra_ssh or {})}
    key = opts.pop("IdentityFile", None)
    hosts = {}
    for h in inv.hosts:
        if h.kubectl:  # a pod runs the bench image, which holds the project already
            continue
        hosts[h.name] = {"ansible_host": h.ssh_address, "ansible_port": h.port,
                         "ansible_user": h.user, "burstbench_workdir": h.workdir}
    group_vars = {
        "ansible_connection": "ssh",
        "ansible_ssh_common_args": " ".join(f"-o {shlex.quote(f'{k}={v}')}"
                                            for k, v in opts.items()),
        "ansible_python_interpreter": "/usr/bin/python3",
        "burstbench_archive": str(archive),
        "burstbench_commit": commit,
    }
    if key:
        group_vars["ansible_ssh_private_key_file"] = key
    return {"all": {"children": {"burstbench": {"hosts": hosts, "vars": group_vars}}}}


def archive(dest: Path) -> str:
    """``git archive`` of HEAD into ``dest``; returns the commit."""
    try:
        commit = subprocess.run(["git", "-C", str(paths.ROOT), "rev-parse", "--short=12", "HEAD"],
                                capture_output=True, text=True, check=True,
                                timeout=30).stdout.strip()
        subprocess.run(["git", "-C", str(paths.ROOT), "archive", "--format=tar", "-o", str(dest),
                        "HEAD"], capture_output=True, check=True, timeout=120)
    except (OSError, subprocess.CalledProcessError) as e:
        raise ProvisionError(f"cannot archive the project with git: {e}") from e
    return commit


def playbook_argv(inv_path: Path, extra: list[str] | None = None) -> list[str]:
    exe = Path(sys.executable).parent / "ansible-playbook"
    return [str(exe) if exe.exists() else "ansible-playbook", "-i", str(inv_path),
            str(PLAYBOOK), *(extra or [])]


def provision(inv: inventory.Inventory, work: Path, *, extra_ssh: dict | None = None,
              via: list[str] | None = None, extra_args: list[str] | None = None,
              capture: bool = False) -> subprocess.CompletedProcess:
    """Run the playbook against ``inv``; ``via`` prefixes ansible-playbook (``ip netns exec
    NS`` when the controller's side of the network is a namespace)."""
    work.mkdir(parents=True, exist_ok=True)
    tar = work / "burstbench.tar"
    commit = archive(tar)
    inv_path = work / "ansible-inventory.yml"
    inv_path.write_text(yaml.safe_dump(ansible_inventory(inv, tar, commit, extra_ssh)))
    env = {**os.environ, "ANSIBLE_CONFIG": str(CONFIG), "ANSIBLE_NOCOLOR": "1",
           "ANSIBLE_LOCAL_TEMP": str(work / "ansible-tmp")}
    from harness.procs import _die_with_parent
    return subprocess.run([*(via or []), *playbook_argv(inv_path, extra_args)], env=env,
                          capture_output=capture, text=True, preexec_fn=_die_with_parent,
                          check=False)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="./bench setup --hosts",
                                 description="put burstbench on every host of FILE and run "
                                             "./bench setup there (Ansible)")
    ap.add_argument("file", help="the inventory (see harness/inventory.py)")
    args = ap.parse_args(argv)
    try:
        inv = inventory.load(args.file, need=())
    except ValueError as e:
        print(f"bench setup: error: {e}", file=sys.stderr)
        return 2
    if all(h.kubectl for h in inv.hosts):
        print("bench setup: error: no SSH host in the inventory to provision (pods run the "
              "bench image)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="bb-provision-") as d:
        try:
            r = provision(inv, Path(d))
        except ProvisionError as e:
            print(f"bench setup: error: {e}", file=sys.stderr)
            return 1
    if r.returncode != 0:
        print(f"bench setup: error: ansible-playbook exited with {r.returncode} (see above)",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
