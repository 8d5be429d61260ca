"""``./bench setup --hosts FILE``: Ansible puts the project on every host and sets it up there.

burstbench's inventory (``burstbench/infra/inventory.py``) becomes an Ansible inventory of one
group, ``burstbench``, with each host's address, port, user and work directory, and the ssh options
the harness itself uses (BatchMode, the inventory's key and known-hosts file). The project
travels as ``git archive`` of the commit checked out here (uncommitted changes do not travel;
the archive is the same bytes for the same commit, so a second run copies nothing), and
``deploy/ansible/provision.yml`` installs the runtimes each host lacks (its ``runtimes``
role, with ``become`` where the SSH user is not root; the databases on hosts with the role
``databases``), unpacks the archive and builds it there (``./bench setup --project``).

A host with a ``proxy`` (``http://HOST:PORT``, the inventory's or its own) runs ``./bench
setup`` with ``http_proxy``/``https_proxy`` (and upper case) set, which pip and npm read;
Maven reads neither, so the playbook gives it the proxy in a settings file named by the
project's ``.mvn/maven.config`` there.

``./bench setup --hosts netns-ssh`` provisions a host made here (``NetnsHost``): a network
namespace running its own sshd, with no route out of its bridge, and the harness's CONNECT
proxy (``burstbench/infra/connect_proxy.py``) on the controller's side of that bridge as its proxy
for the duration of the provisioning.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Self
from urllib.parse import urlsplit

import yaml

from burstbench import paths
from burstbench.infra import inventory

PLAYBOOK = paths.ROOT / "deploy" / "ansible" / "provision.yml"
CONFIG = paths.ROOT / "deploy" / "ansible" / "ansible.cfg"


class ProvisionError(RuntimeError):
    """The project could not be archived, or Ansible could not be run."""


def ansible_inventory(inv: inventory.Inventory, archive: Path, commit: str,
                      extra_ssh: dict[str, str] | None = None) -> dict:
    """The Ansible inventory (as data) for burstbench's ``inv``. For a user's own Ansible
    inventory (``inv.ansible``), which the playbook reads first and as it is, only the group
    ``burstbench`` of its hosts, by name, with the project's variables: how to reach each host
    stays the user's."""
    opts = {"BatchMode": "yes", "StrictHostKeyChecking": "yes", **inv.options,
            **(extra_ssh or {})}
    key = opts.pop("IdentityFile", None)
    hosts = {}
    if inv.ansible:
        hosts = {h.name: {"burstbench_workdir": h.workdir, "burstbench_roles": list(h.roles),
                          **proxy_vars(h.proxy)}
                 for h in inv.hosts}
        return {"all": {"children": {"burstbench": {
            "hosts": hosts, "vars": {"burstbench_archive": str(archive),
                                     "burstbench_commit": commit}}}}}
    for h in inv.hosts:
        if h.kubectl:  # a pod runs the bench image, which holds the project already
            continue
        hosts[h.name] = {"ansible_host": h.ssh_address, "ansible_port": h.port,
                         "ansible_user": h.user, "burstbench_workdir": h.workdir,
                         "burstbench_roles": list(h.roles), **proxy_vars(h.proxy)}
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


def proxy_vars(proxy: str | None) -> dict:
    """A host's Ansible variables for its proxy (none without one): the URL, its host and
    port for Maven's settings, and the environment of ``./bench setup`` there."""
    if not proxy:
        return {}
    u = urlsplit(proxy)
    env = {k: proxy for k in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY")}
    env.update({k: "localhost,127.0.0.1,::1" for k in ("no_proxy", "NO_PROXY")})
    return {"burstbench_proxy": proxy, "burstbench_proxy_host": u.hostname,
            "burstbench_proxy_port": u.port, "burstbench_proxy_env": env}


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


def playbook_argv(inv_path: Path, extra: list[str] | None = None,
                  user_inventory: Path | None = None) -> list[str]:
    """ansible-playbook on the generated inventory, after the user's own if there is one."""
    first = ["-i", str(user_inventory)] if user_inventory else []
    return [inventory.ansible_tool("ansible-playbook"), *first, "-i", str(inv_path),
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
    from burstbench.infra.procs import die_with_parent
    argv = playbook_argv(inv_path, extra_args, inv.path if inv.ansible else None)
    return subprocess.run([*(via or []), *argv], env=env,
                          capture_output=capture, text=True, preexec_fn=die_with_parent,
                          check=False)


class NetnsHost:
    """One host made here for provisioning: a namespace with its own sshd (``sshhosts``),
    reached from ``ctl``, and the CONNECT proxy on ``ctl`` as its proxy. A context manager:
    leaving it stops the proxy and the sshd by their PIDs and removes the namespaces.

    The subnet and the proxy's port are fixed, so the host's inventory (and with it what the
    playbook writes there, Maven's proxy settings) is the same from one run to the next:
    a second run changes nothing. The addresses exist only inside this object's namespaces.
    """

    SUBNET = (253, 19)
    PROXY_PORT = 3128
    NAME = "h1"

    def __init__(self, work: Path, workdir: Path):
        from burstbench.infra import sshhosts
        self.work = Path(work)
        self.workdir = Path(workdir)
        self.net = sshhosts.SshNetns(f"v{uuid.uuid4().hex[:5]}", [self.NAME],
                                     self.work / "keys", self.work / "logs", subnet=self.SUBNET)
        self.proxy_url = ""
        self.proxy_pid: int | None = None
        self.proxy_log: Path | None = None
        self._runs = 0

    def __enter__(self) -> Self:
        from burstbench.infra import sshhosts
        self.net.start()
        try:
            child, self.proxy_url = self.net.start_proxy(self.PROXY_PORT)
        except BaseException:
            self.net.stop()
            raise
        self.proxy_pid, self.proxy_log = child.pid, child.log_path
        self.via = self.net.net.wrap(sshhosts.CTL)
        return self

    def __exit__(self, *exc) -> None:
        self.net.stop()

    @property
    def namespaces(self) -> list[str]:
        return list(self.net.net.names)

    def inventory(self) -> inventory.Inventory:
        n = self.NAME
        launcher = self.net.launcher(n, Path("/"), "/")
        addr = self.net.address(n)
        return inventory.Inventory(None, [inventory.Host(
            n, addr, self.net.user, self.net.port, addr, str(self.workdir),
            ["broker", "producers", "consumers"], proxy=self.proxy_url)],
            dict(launcher.options))

    def provision(self, *, extra_args: list[str] | None = None,
                  capture: bool = False) -> subprocess.CompletedProcess:
        self._runs += 1
        return provision(self.inventory(), self.work / f"ctl{self._runs}", via=self.via,
                         extra_args=extra_args, capture=capture)

    def run(self, command: str, timeout: float = 600) -> subprocess.CompletedProcess:
        """``command`` (a shell line) on the host over its ssh, as the playbook's are run."""
        ssh = self.net.launcher(self.NAME, Path("/"), "/")
        return subprocess.run([*ssh.ssh_argv(), command], capture_output=True, text=True,
                              timeout=timeout, check=False)

    def connects(self) -> list[str]:
        """What the proxy tunnelled to so far (``host:port``, in order)."""
        from burstbench.infra import connect_proxy
        return connect_proxy.connects(self.proxy_log) if self.proxy_log else []


def netns_workdir() -> Path:
    """Where ``--hosts netns-ssh`` keeps its host's copy of the project between runs (one per
    checkout here, outside it, so no tool of the project's mistakes it for its own files)."""
    key = hashlib.sha256(str(paths.ROOT).encode()).hexdigest()[:10]
    return Path("/var/tmp/burstbench-netns-ssh") / key / "burstbench"


def main_netns_ssh(workdir: Path | None = None) -> int:
    """``./bench setup --hosts netns-ssh``: provision a namespace host through the proxy."""
    from burstbench.infra import netns, procs, sshhosts
    why = sshhosts.available()
    if why:
        print(f"bench setup: error: --hosts netns-ssh: {why}", file=sys.stderr)
        return 2
    workdir = Path(workdir or netns_workdir()).absolute()
    work = workdir.parent / "last-run"
    shutil.rmtree(work, ignore_errors=True)
    procs.install_signal_handlers()  # Ctrl-C and SIGTERM leave through the with below
    t0 = time.monotonic()
    try:
        with NetnsHost(work, workdir) as host:
            print(f"bench setup: namespace host {host.NAME} ({workdir}), proxy "
                  f"{host.proxy_url} (PID {host.proxy_pid}), namespaces "
                  f"{' '.join(host.namespaces)}", file=sys.stderr, flush=True)
            r = host.provision()
            targets = host.connects()
    except procs.Interrupted as e:
        print(f"bench setup: {e}; the proxy, the host's sshd and its namespaces are stopped",
              file=sys.stderr)
        return 128 + e.signum
    except (netns.NetnsUnavailable, ProvisionError, RuntimeError) as e:
        print(f"bench setup: error: --hosts netns-ssh: {e}", file=sys.stderr)
        return 1
    print(f"bench setup: the proxy tunnelled {len(targets)} connection(s) in "
          f"{time.monotonic() - t0:.0f} s ({', '.join(sorted(set(targets))) or 'none'}; "
          f"log: {host.proxy_log})", file=sys.stderr)
    if r.returncode != 0:
        print(f"bench setup: error: ansible-playbook exited with {r.returncode} (see above)",
              file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="./bench setup --hosts",
                                 description="put burstbench on every host of FILE and run "
                                             "./bench setup there (Ansible)")
    ap.add_argument("file",
                    help="the inventory (see burstbench/infra/inventory.py), or netns-ssh: a "
                                 "namespace host made here, provisioned through the harness's "
                                 "CONNECT proxy (root)")
    ap.add_argument("--workdir", type=Path,
                    help="netns-ssh only: where the host's copy of the project lives (default: "
                         f"{netns_workdir().parent.parent}/<hash of this checkout>/burstbench)")
    args = ap.parse_args(argv)
    if args.file == inventory.NETNS_SSH:
        return main_netns_ssh(args.workdir)
    if args.workdir:
        ap.error("--workdir is for netns-ssh (an inventory names each host's workdir)")
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
