"""Hosts beyond this machine: the inventory file, and where a point's processes run.

``--hosts FILE`` names a YAML inventory::

    ssh:                        # optional, for every host
      user: bench               # default: the user running the harness
      identity: ~/.ssh/bench    # optional: ssh -i
      known_hosts: known_hosts  # optional: the hosts' keys (relative to this file)
    proxy: http://192.0.2.1:3128  # optional, for every host: how hosts reach the registries
    hosts:
      broker1:
        ssh: bench@192.0.2.11   # [user@]address[:port] sshd listens on
        address: 192.0.2.11     # where the others reach it (a broker binds it); default: ssh's
        workdir: /opt/burstbench  # the project there (./bench setup --hosts FILE puts it)
        roles: [broker]         # broker, producers, consumers, databases
        proxy: http://192.0.2.1:8080  # optional: this host's own proxy (overrides the above)
      gen1: {ssh: 192.0.2.12, workdir: /opt/burstbench, roles: [producers]}
      gen2: {ssh: 192.0.2.13, workdir: /opt/burstbench, roles: [consumers]}
      pod0:                     # a Kubernetes pod instead, through kubectl exec -i
        kubectl: {pod: loadgen-0, namespace: burstbench, container: bench}
        workdir: /opt/burstbench
        roles: [consumers]

``proxy`` (``http://HOST:PORT``) is an HTTP proxy the host reaches the package registries
through: ``./bench setup --hosts FILE`` runs ``./bench setup`` there with ``http_proxy``,
``https_proxy`` (and upper case) set, and gives Maven, which does not read them, a settings
file with the proxy (``deploy/ansible/provision.yml``).

``--hosts netns-ssh`` is the same thing made here: network namespaces each running its own
sshd (``burstbench/infra/sshhosts.py``), one host per broker of the topology, one for the producers
and two for the consumers.

A point places the topology's brokers on the ``broker`` hosts and its producers and
consumers on the ``producers`` and ``consumers`` hosts, each list taken round robin, and
records where each process ran. Every process starts through the host's ``launch.Ssh``.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from burstbench.infra import clocks
from burstbench.infra.launch import Ssh

ROLES = ("broker", "producers", "consumers", "databases")
NETNS_SSH = "netns-ssh"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
_PROXY = re.compile(r"^http://(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(?P<port>\d{1,5})/?$")
_SSH = re.compile(r"^(?:(?P<user>[A-Za-z0-9_.-]+)@)?(?P<addr>\[[0-9A-Fa-f:.]+\]|[^@:\s/]+)"
                  r"(?::(?P<port>\d{1,5}))?$")


@dataclass
class Host:
    name: str
    ssh_address: str
    user: str
    port: int
    address: str
    workdir: str
    roles: list[str]
    kubectl: dict | None = None  # {pod, namespace, container}: reached by kubectl exec -i
    proxy: str | None = None  # http://HOST:PORT: how the host reaches the package registries


@dataclass
class Inventory:
    path: Path | None
    hosts: list[Host]
    options: dict[str, str] = field(default_factory=dict)
    ansible: bool = False  # the user's own Ansible inventory (provisioning passes it as it is)

    def with_role(self, role: str) -> list[Host]:
        return [h for h in self.hosts if role in h.roles]


def is_remote(hosts: str) -> bool:
    """Whether ``--hosts`` names SSH hosts (an inventory file, or ``netns-ssh``)."""
    return hosts not in ("loopback", "netns")


def load(path: str | Path, need: tuple[str, ...] = ("broker", "producers", "consumers")
         ) -> Inventory:
    """Read and check an inventory; ValueError with one line naming what is wrong. ``need``:
    the roles some host must have (no broker hosts when the brokers are ``--broker-url``)."""
    p = Path(path)
    if p.is_dir() or (p.is_file() and os.access(p, os.X_OK)):
        return _check_roles(from_ansible(p), need)  # a directory or a dynamic inventory
    try:
        doc = yaml.safe_load(p.read_text())
    except OSError as e:
        raise ValueError(f"--hosts {path}: cannot read it ({e.strerror})") from e
    except yaml.YAMLError as e:
        if p.suffix in (".yaml", ".yml"):
            raise ValueError(f"--hosts {path}: not YAML ({str(e).splitlines()[0]})") from e
        doc = None  # INI: Ansible's own format
    if _ansible_shaped(doc):
        return _check_roles(from_ansible(p), need)
    if not isinstance(doc, dict) or not isinstance(doc.get("hosts"), dict) or not doc["hosts"]:
        raise ValueError(f"--hosts {path}: needs a 'hosts' mapping of host name to settings "
                         f"(or an Ansible inventory)")
    common = doc.get("ssh") or {}
    if not isinstance(common, dict) or set(common) - {"user", "identity", "known_hosts"}:
        raise ValueError(f"--hosts {path}: 'ssh' takes user, identity, known_hosts")
    options: dict[str, str] = {}
    if common.get("identity"):
        options["IdentityFile"] = os.path.expanduser(str(common["identity"]))
        options["IdentitiesOnly"] = "yes"
    if common.get("known_hosts"):
        kh = Path(os.path.expanduser(str(common["known_hosts"])))
        options["UserKnownHostsFile"] = str(kh if kh.is_absolute() else p.parent / kh)
    default_user = str(common.get("user") or _whoami())
    default_proxy = _proxy(doc.get("proxy"), f"--hosts {path}")
    hosts = []
    for name, h in doc["hosts"].items():
        where = f"--hosts {path}: host {name!r}"
        if not isinstance(name, str) or not _NAME.match(name):
            raise ValueError(f"{where}: a host name is [A-Za-z0-9_.-], up to 63 characters")
        if not isinstance(h, dict):
            raise ValueError(f"{where}: needs ssh, workdir and roles")  # noqa: TRY004 - bad input
        unknown = set(h) - {"ssh", "kubectl", "address", "workdir", "roles", "proxy"}
        if unknown:
            raise ValueError(f"{where}: unknown key(s) {', '.join(sorted(map(str, unknown)))}")
        kube = h.get("kubectl")
        if kube is not None:
            if "ssh" in h or not isinstance(kube, dict) or not isinstance(kube.get("pod"), str) \
                    or set(kube) - {"pod", "namespace", "container"}:
                raise ValueError(f"{where}: kubectl takes pod, namespace, container (and no ssh)")
            kube = {"namespace": "burstbench", "container": "bench", **kube}
        m = _SSH.match(str(h.get("ssh", "")) if kube is None else kube["pod"])
        if not m:
            raise ValueError(f"{where}: ssh must be [user@]address[:port], not "
                             f"{h.get('ssh')!r}")
        port = _port(m["port"], where)
        workdir = h.get("workdir")
        if not isinstance(workdir, str) or not workdir.startswith("/"):
            raise ValueError(f"{where}: workdir must be an absolute path")
        roles = h.get("roles")
        if isinstance(roles, str):
            roles = [roles]
        if not roles or not isinstance(roles, list) or set(roles) - set(ROLES):
            raise ValueError(f"{where}: roles must be a list of {', '.join(ROLES)}")
        proxy = _proxy(h["proxy"], where) if "proxy" in h else default_proxy
        if proxy and re.search(r"\s", workdir):
            # Maven gets the proxy's settings file by its path in .mvn/maven.config, which
            # Maven splits at white space
            raise ValueError(f"{where}: workdir must have no white space when a proxy is set")
        addr = m["addr"].strip("[]")
        hosts.append(Host(name, addr, m["user"] or default_user, port,
                          str(h.get("address") or addr), workdir.rstrip("/") or "/",
                          list(roles), kube, None if kube else proxy))
    return _check_roles(Inventory(p, hosts, options), need)


def _check_roles(inv: Inventory, need: tuple[str, ...]) -> Inventory:
    for role in need:
        if not inv.with_role(role):
            raise ValueError(f"--hosts {inv.path}: no host has the role {role}")
    return inv


# -- a user's own Ansible inventory ------------------------------------------------------------
# Its groups give the roles (GROUP_ROLES), or a host's (or group's) variable burstbench_roles
# does; its connection variables the ssh settings; burstbench_workdir, burstbench_address and
# burstbench_proxy the rest.
GROUP_ROLES = {"brokers": "broker", "broker": "broker", "producers": "producers",
               "consumers": "consumers", "databases": "databases"}
DEFAULT_WORKDIR = "/opt/burstbench"


def _ansible_shaped(doc) -> bool:
    """Whether parsed YAML is an Ansible inventory (``all:`` or groups of ``hosts``/
    ``children``/``vars``), not burstbench's (``hosts:`` of host settings); None (not YAML:
    INI) is Ansible's too."""
    if doc is None:
        return True
    if not isinstance(doc, dict):
        return False
    if "all" in doc:
        return True
    return bool(doc) and "hosts" not in doc and all(
        isinstance(v, dict) and set(v) <= {"hosts", "children", "vars"} for v in doc.values())


def ansible_tool(name: str) -> str:
    """An ansible-core command: the one set-up installed beside this Python, else PATH's."""
    exe = Path(sys.executable).parent / name
    return str(exe) if exe.exists() else name


def ansible_list(path: Path) -> dict:
    """``ansible-inventory -i PATH --list``: every host, group and variable, as Ansible itself
    reads the inventory (INI, YAML, a directory, a script or a plugin's file)."""
    try:
        r = subprocess.run([ansible_tool("ansible-inventory"), "-i", str(path), "--list"],
                           capture_output=True, text=True, timeout=120, check=False,
                           env={**os.environ, "ANSIBLE_NOCOLOR": "1",
                                "ANSIBLE_INVENTORY_UNPARSED_FAILED": "1"})
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ValueError(f"--hosts {path}: ansible-inventory could not read it ({e})") from e
    if r.returncode != 0:
        last = [ln for ln in r.stderr.splitlines() if ln.strip()]
        raise ValueError(f"--hosts {path}: neither burstbench's inventory nor one Ansible reads "
                         f"({last[-1].strip() if last else f'exit {r.returncode}'})")
    return json.loads(r.stdout)


def from_ansible(path: Path) -> Inventory:
    """burstbench's view of an Ansible inventory: the hosts in a group of GROUP_ROLES (nested
    groups count) or with ``burstbench_roles``; ValueError with one line naming what is wrong."""
    data = ansible_list(path)
    hostvars = data.get("_meta", {}).get("hostvars", {})

    def members(group: str, seen: set) -> list[str]:
        if group in seen or group not in data:
            return []
        seen.add(group)
        out = list(data[group].get("hosts", []))
        for child in data[group].get("children", []):
            out += members(child, seen)
        return out

    roles: dict[str, list[str]] = {}
    for group, role in GROUP_ROLES.items():
        for name in members(group, set()):
            roles.setdefault(name, [])
            if role not in roles[name]:
                roles[name].append(role)
    for name, hv in hostvars.items():
        given = hv.get("burstbench_roles")
        if given:
            roles[name] = [r.strip() for r in given.split(",")] if isinstance(given, str) \
                else [str(r) for r in given]
    hosts, keys, ssh_args = [], set(), set()
    order = [*hostvars, *(n for n in roles if n not in hostvars)]
    for name in (n for n in order if n in roles):
        hv = hostvars.get(name, {})
        where = f"--hosts {path}: host {name!r}"
        if set(roles[name]) - set(ROLES):
            raise ValueError(f"{where}: burstbench_roles must be of {', '.join(ROLES)}")
        workdir = str(hv.get("burstbench_workdir") or DEFAULT_WORKDIR)
        if not workdir.startswith("/"):
            raise ValueError(f"{where}: burstbench_workdir must be an absolute path")
        addr = str(hv.get("ansible_host") or name)
        port = _port(hv.get("ansible_port"), where)
        if hv.get("ansible_ssh_private_key_file"):
            keys.add(os.path.expanduser(str(hv["ansible_ssh_private_key_file"])))
        ssh_args.add(" ".join(str(hv.get(k) or "") for k in ("ansible_ssh_common_args",
                                                             "ansible_ssh_extra_args")))
        proxy = _proxy(hv.get("burstbench_proxy"), where)
        hosts.append(Host(name, addr, str(hv.get("ansible_user") or _whoami()), port,
                          str(hv.get("burstbench_address") or addr),
                          workdir.rstrip("/") or "/", roles[name], None, proxy))
    if not hosts:
        raise ValueError(f"--hosts {path}: no host in a group {', '.join(GROUP_ROLES)} or "
                         f"with burstbench_roles")
    if len(keys) > 1:
        raise ValueError(f"--hosts {path}: one ansible_ssh_private_key_file for every host, "
                         f"not {len(keys)}")
    if len(ssh_args) > 1:
        raise ValueError(f"--hosts {path}: the same ansible_ssh_common_args and "
                         f"ansible_ssh_extra_args for every host, not {len(ssh_args)} kinds")
    options = _ssh_options(ssh_args.pop(), f"--hosts {path}")
    if keys:
        options.update({"IdentityFile": keys.pop(), "IdentitiesOnly": "yes"})
    return Inventory(Path(path), hosts, options, ansible=True)


def _ssh_options(args: str, where: str) -> dict[str, str]:
    """The ``-o KEY=VALUE`` settings of Ansible's extra ssh arguments, which the harness's
    own sessions then use too (a known-hosts file, a jump host); any other word is refused:
    the harness would not pass it on."""
    words, out = shlex.split(args), {}
    i = 0
    while i < len(words):
        w = words[i]
        if w == "-o" and i + 1 < len(words):
            w, i = words[i + 1], i + 2
        elif w.startswith("-o"):
            w, i = w[2:], i + 1
        else:
            raise ValueError(f"{where}: ansible_ssh_common_args takes -o KEY=VALUE settings "
                             f"only, not {w!r}")
        key, sep, value = w.partition("=")
        if not sep or not key:
            raise ValueError(f"{where}: ansible_ssh_common_args: -o {w!r} is not KEY=VALUE")
        out[key] = value
    return out


def _port(value, where: str) -> int:
    """An ssh port checked (22 when not given)."""
    try:
        port = int(value or 22)
    except ValueError:
        raise ValueError(f"{where}: the ssh port must be a number, not {value!r}") from None
    if not 1 <= port <= 65535:
        raise ValueError(f"{where}: port {port} is out of range")
    return port


def _proxy(value, where: str) -> str | None:
    """An inventory's ``proxy`` checked: ``http://HOST:PORT`` (None for none)."""
    if value is None:
        return None
    m = _PROXY.match(str(value))
    if not m or not 1 <= int(m["port"]) <= 65535:
        raise ValueError(f"{where}: proxy must be http://HOST:PORT, not {value!r}")
    return str(value).rstrip("/")


def check_point(spec) -> None:
    """What a point over SSH hosts cannot do yet, refused with one line (ValueError)."""
    if spec.hosts == NETNS_SSH:
        from burstbench.infra import sshhosts
        why = sshhosts.available()
        if why:
            raise ValueError(f"--hosts {NETNS_SSH}: {why}")
    else:
        load(spec.hosts, ("producers", "consumers") if spec.broker_urls else
             ("broker", "producers", "consumers"))
    if set(spec.placement) - {"broker", "producers", "consumers"} or not all(
            isinstance(v, dict if k == "broker" else list) for k, v in spec.placement.items()):
        raise ValueError("placement takes broker: {NAME: HOST}, producers: [HOST...], "
                         "consumers: [HOST...]")
    if spec.discovery != "static":
        raise ValueError("SSH hosts connect their brokers with --discovery static")
    if spec.tls:
        raise ValueError("--tls is not carried to SSH hosts yet (the CA and keystores would "
                         "have to be copied there)")


def _whoami() -> str:
    import getpass
    return getpass.getuser()


class Placement:
    """Where a point's brokers and clients run, and the SSH launcher of each host.

    ``open`` makes it for ``--hosts netns-ssh`` (starting the namespace hosts) or for an
    inventory file. ``close`` removes the point's files from the hosts and stops what
    ``open`` started.
    """

    def __init__(self, inventory: Inventory, launchers: dict[str, Ssh], probe, brokers: list,
                 owner=None, placement: dict | None = None):
        self.inventory = inventory
        self.launchers = launchers
        self._probe = probe
        self._owner = owner  # an SshNetns, when the hosts are ours
        by_role = {r: inventory.with_role(r) for r in ROLES}
        self.broker_hosts = {b: by_role["broker"][i % len(by_role["broker"])].name
                             for i, b in enumerate(brokers)}
        self._producers = [h.name for h in by_role["producers"]]
        self._consumers = [h.name for h in by_role["consumers"]]
        self._place(placement or {}, brokers)
        self.readings: dict[str, dict[str, clocks.Reading | None]] = {}

    def _place(self, placement: dict, brokers: list) -> None:
        """The profile's placement over the round robin; ValueError naming an unknown host."""
        known = {h.name for h in self.inventory.hosts}

        def check(names, what):
            bad = [n for n in names if n not in known]
            if bad:
                raise ValueError(f"placement: {what} on unknown host(s) {', '.join(bad)} "
                                 f"(have: {', '.join(sorted(known))})")
        for b, host in (placement.get("broker") or {}).items():
            if b not in brokers:
                raise ValueError(f"placement: no broker {b!r} in this topology "
                                 f"(have: {', '.join(brokers)})")
            check([host], f"broker {b}")
            self.broker_hosts[b] = host
        for role, attr in (("producers", "_producers"), ("consumers", "_consumers")):
            if placement.get(role):
                check(placement[role], role)
                setattr(self, attr, list(placement[role]))

    @classmethod
    def open(cls, hosts: str, point_dir: Path, brokers: list, log_dir: Path,
             link_rate: str | None = None, placement: dict | None = None) -> Placement:
        tag = uuid.uuid4().hex[:6]
        if hosts == NETNS_SSH:
            from burstbench.infra import sshhosts
            names = [f"b{i + 1}" for i in range(len(brokers))] + ["p1", "c1", "c2"]
            roles = {**{n: ["broker"] for n in names[:len(brokers)]}, "p1": ["producers"],
                     "c1": ["consumers"], "c2": ["consumers"]}
            net = sshhosts.SshNetns(tag, names, point_dir / "work" / "ssh", log_dir,
                                    link_rate=link_rate)
            net.start()
            inv = Inventory(None, [Host(n, net.address(n), net.user, net.port, net.address(n),
                                        "", roles[n]) for n in names])
            launchers = {n: net.launcher(n, point_dir, str(point_dir / "work" / "hosts" / n))
                         for n in names}
            try:
                return cls(inv, launchers, net.probe, brokers, owner=net, placement=placement)
            except BaseException:
                net.stop()
                raise
        inv = load(hosts)
        launchers = {}
        for h in inv.hosts:
            common = {"name": h.name, "address": h.ssh_address, "user": h.user,
                      "project": h.workdir, "local_root": point_dir,
                      "remote_root": f"{h.workdir}/.bb-points/{point_dir.name}-{tag}"}
            if h.kubectl:
                from burstbench.infra.launch import Kubectl
                launchers[h.name] = Kubectl(**common, namespace=h.kubectl["namespace"],
                                            container=h.kubectl["container"])
            else:
                launchers[h.name] = Ssh(**common, port=h.port, options=dict(inv.options))
        check_commits(launchers)
        from burstbench.infra.brokers import port_accepts

        def probe(host: str, port: int) -> bool:
            return port_accepts(next(h.address for h in inv.hosts if h.name == host), port)

        return cls(inv, launchers, probe, brokers, placement=placement)

    @property
    def namespaces(self) -> list[str]:
        return list(self._owner.net.names) if self._owner else []

    def address(self, host: str) -> str:
        return next(h.address for h in self.inventory.hosts if h.name == host)

    def broker_host(self, broker: str) -> str:
        return self.broker_hosts[broker]

    def client_host(self, role: str, i: int) -> str:
        hosts = self._producers if role == "producer" else self._consumers
        return hosts[i % len(hosts)]

    def probe(self, host: str, port: int) -> bool:
        return self._probe(host, port)

    def measure_clocks(self, at: str, hosts: list[str]) -> None:
        """Each host's clock offset, NTP-style over SSH (``at``: ``before`` or ``after``)."""
        for h in hosts:
            self.readings.setdefault(h, {"before": None, "after": None})[at] = \
                clocks.measure(self.launchers[h].clock_argv())

    def clock_summary(self) -> dict[str, dict]:
        return {h: clocks.combine(r["before"], r["after"]) for h, r in self.readings.items()}

    def fetch(self, host: str, local: Path) -> bool:
        return self.launchers[host].fetch(local)

    def describe(self) -> dict:
        return {"inventory": str(self.inventory.path) if self.inventory.path else NETNS_SSH,
                "hosts": {h.name: {"ssh": f"{h.user}@{h.ssh_address}:{h.port}",
                                   "address": h.address, "roles": h.roles}
                          for h in self.inventory.hosts}}

    def close(self) -> None:
        try:
            if self._owner is None:
                for launcher in self.launchers.values():
                    try:
                        launcher.clean()
                    except Exception:  # noqa: BLE001, S110 - a host we cannot reach keeps its files
                        pass
        finally:
            if self._owner is not None:
                self._owner.stop()


def check_commits(launchers: dict, commit: str | None = None) -> None:
    """Refuse a point on a host whose copy of the project is not at the harness's commit,
    naming both: ``.burstbench-commit`` in its project directory (written by
    ``./bench setup --hosts``: deploy/ansible/provision.yml), or that directory's git HEAD (a
    checkout of its own, or this machine's files seen from the host). A pod (kubectl) runs
    the bench image and is not asked. Uncommitted changes here do not travel: the harness's
    commit is compared without its ``-dirty``."""
    from burstbench.infra.launch import Kubectl
    from burstbench.paths import git_commit

    ours = (commit or git_commit()).removesuffix("-dirty")
    for name, launcher in launchers.items():
        if isinstance(launcher, Kubectl):
            continue
        q = shlex.quote(launcher.project)
        r = launcher.shell(f"cat {q}/.burstbench-commit 2>/dev/null"
                           f" || git -C {q} rev-parse --short=12 HEAD 2>/dev/null || true")
        theirs = r.stdout.decode(errors="replace").strip()
        if theirs != ours:
            raise ValueError(
                f"host {name} holds burstbench at {theirs or 'no known commit'} in "
                f"{launcher.project}, the harness is at {ours}: ./bench setup --hosts FILE "
                f"puts this commit there")
