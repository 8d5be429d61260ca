"""Hosts for the proof here: network namespaces, each running its own OpenSSH server.

A ``SshNetns`` makes a ``netns.Network`` of the hosts plus ``ctl``, the harness's side: the
harness's own namespace has no link to the hosts, so its ssh clients run inside ``ctl``
(``ip netns exec``), as a coordinator on the same network would. Every run makes throwaway
keys: one host key per host (the run's known-hosts file lists exactly those) and one user key
(the hosts' authorized-keys file holds only it, with ``restrict``). Each sshd listens on its
host's address inside its namespace and nowhere else; password, keyboard-interactive, agent
and forwarding are off. The sshd processes are children of this object's own Supervisor, so
they outlive the point's processes long enough to hand back the records, and stop (or die
with the harness) like any other child; the namespaces go with the Network, whose watchdog
removes them even after a SIGKILL.
"""

from __future__ import annotations

import getpass
import os
import shutil
import subprocess
import time
from pathlib import Path

from burstbench import paths
from burstbench.infra import netns, roots
from burstbench.infra.launch import Ssh
from burstbench.infra.procs import Supervisor

SSHD = "/usr/sbin/sshd"
CTL = "ctl"


def available() -> str | None:
    """Why namespace hosts with sshd cannot run here, or None."""
    why = netns.available()
    if why:
        return why
    for tool, pkg in ((SSHD, "openssh-server"), ("ssh", "openssh-client"),
                      ("ssh-keygen", "openssh-client")):
        if shutil.which(tool) is None:
            return f"{tool} not found (Debian package {pkg}: ./bench setup installs it)"
    return None


class SshNetns:
    """``hosts`` (names as netns.Network takes them) each with an sshd; see the module text."""

    def __init__(self, tag: str, hosts: list[str], keydir: Path, log_dir: Path,
                 link_rate: str | None = None, subnet: tuple[int, int] | None = None,
                 root: Path | None = None):
        """``root``: a bare root (``burstbench/infra/roots.py``) every host gets an overlay of,
        logged into as its unprivileged user; without it the hosts share this machine's files
        and its user."""
        if CTL in hosts:
            raise ValueError(f"host name {CTL!r} is the harness's own")
        self.hosts = list(hosts)
        self.net = netns.Network(tag, [CTL, *self.hosts], link_rate=link_rate, subnet=subnet)
        self.keydir = Path(keydir)
        self.sup = Supervisor(log_dir)
        self.root = Path(root) if root else None
        self.user = roots.USER if root else getpass.getuser()
        self.port = 22

    @property
    def known_hosts(self) -> Path:
        return self.keydir / "known_hosts"

    @property
    def user_key(self) -> Path:
        return self.keydir / "user_key"

    def start(self, timeout: float = 20.0) -> None:
        """Namespaces, keys, one sshd per host; returns once every sshd accepts."""
        why = available()
        if why:
            raise netns.NetnsUnavailable(why)
        self.net.create()
        try:
            self._start(timeout)
        except BaseException:
            self.stop()
            raise

    def _start(self, timeout: float) -> None:
        self.keydir.mkdir(parents=True, exist_ok=True)
        os.chmod(self.keydir, 0o700)
        _keygen(self.user_key, "burstbench run user")
        pub = self.user_key.with_suffix(".pub").read_text().strip()
        (self.keydir / "authorized_keys").write_text(f"restrict {pub}\n")
        # sshd checks its privilege-separation directory exists (Debian: /run/sshd)
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
        known = []
        for host in self.hosts:
            key = self.keydir / f"host_{host}"
            _keygen(key, f"burstbench host {host}")
            addr = self.net.address(host)
            kind, blob = key.with_suffix(".pub").read_text().split()[:2]
            # ssh looks a host on port 22 up by its bare address, any other as [addr]:port
            known.append(f"{addr if self.port == 22 else f'[{addr}]:{self.port}'} {kind} {blob}")
            if self.root:
                argv = self._rooted(host, key)
            else:
                cfg = self.keydir / f"sshd_{host}.conf"
                cfg.write_text(_sshd_config(self.net.address(host), self.port, key,
                                            self.keydir / "authorized_keys", self.user))
                # -D: in the foreground, a child like any other; -e: its log to the log file
                argv = [SSHD, "-D", "-e", "-f", str(cfg)]
            self.sup.start(f"sshd-{host}", self.net.wrap(host) + argv, role="sshd")
        self.known_hosts.write_text("\n".join(known) + "\n")
        deadline = time.monotonic() + timeout
        for host in self.hosts:
            while not self.net.probe(CTL, self.port, to=host):
                child = next(c for c in self.sup.children if c.name == f"sshd-{host}")
                if not child.alive() or time.monotonic() > deadline:
                    raise netns.NetnsUnavailable(
                        f"sshd on {host} did not listen: {child.last_error() or 'no message'} "
                        f"(log: {child.log_path})")
                time.sleep(0.05)

    def host_dir(self, host: str) -> Path:
        """A rooted host's overlay directories (its changes to the base root)."""
        return self.keydir.parent / "roots" / host

    def _rooted(self, host: str, key: Path) -> list[str]:
        """The sshd of a host with a root of its own: its key, authorized keys and
        configuration written into the host's overlay, the sshd chrooted there."""
        d = self.host_dir(host)
        shutil.rmtree(d, ignore_errors=True)
        inside = roots.upper_path(d, roots.SSH_DIR)
        inside.mkdir(parents=True)
        roots.host_files(d)
        shutil.copy2(key, inside / "host_key")
        shutil.copy2(self.keydir / "authorized_keys", inside / "authorized_keys")
        cfg = f"{roots.SSH_DIR}/sshd.conf"
        roots.upper_path(d, cfg).write_text(_sshd_config(
            self.net.address(host), self.port, Path(roots.SSH_DIR) / "host_key",
            Path(roots.SSH_DIR) / "authorized_keys", self.user))
        return roots.sshd_argv(self.root, d, cfg)

    def launcher(self, host: str, local_root: Path, remote_root: str) -> Ssh:
        """How the harness reaches ``host``: ssh from ``ctl``, with the run's key and
        known-hosts file; the project is where it is here (the namespaces share this
        machine's files, as a provisioned host has its own copy)."""
        return Ssh(
            name=host, address=self.net.address(host), user=self.user,
            project=str(paths.ROOT), local_root=Path(local_root), remote_root=remote_root,
            port=self.port, via=self.net.wrap(CTL),
            options={"UserKnownHostsFile": str(self.known_hosts),
                     "GlobalKnownHostsFile": "/dev/null", "IdentityFile": str(self.user_key),
                     "IdentitiesOnly": "yes", "UpdateHostKeys": "no"})

    def address(self, host: str) -> str:
        return self.net.address(host)

    def start_proxy(self, port: int = 0):
        """The CONNECT proxy (``burstbench/infra/connect_proxy.py``) listening on ``ctl``'s address,
        its connections out leaving from this machine: how the hosts reach the package
        registries. A child of this object's Supervisor, so ``stop`` stops it by its PID (and
        it dies with the harness). Returns ``(child, "http://ADDRESS:PORT")``."""
        from burstbench.infra import connect_proxy
        return connect_proxy.start(self.sup, self.net.namespace(CTL), self.net.address(CTL),
                                   port=port)

    def probe(self, host: str, port: int) -> bool:
        """Whether ``port`` on ``host`` accepts a connection from the harness's side."""
        return self.net.probe(CTL, port, to=host)

    def stop(self) -> None:
        """Stop every sshd, remove the namespaces and the keys."""
        try:
            self.sup.stop_all()
        finally:
            self.net.remove()
            shutil.rmtree(self.keydir, ignore_errors=True)
            if self.root:  # the hosts' changes to the base root: gigabytes once provisioned
                shutil.rmtree(self.keydir.parent / "roots", ignore_errors=True)


def _keygen(path: Path, comment: str) -> None:
    for p in (path, path.with_suffix(".pub")):
        p.unlink(missing_ok=True)
    r = subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f",
                        str(path)], capture_output=True, text=True, timeout=30, check=False)
    if r.returncode != 0:
        raise netns.NetnsUnavailable(f"ssh-keygen: {r.stderr.strip() or r.returncode}")


def _sshd_config(address: str, port: int, host_key: Path, authorized: Path, user: str) -> str:
    return "\n".join([
        f"ListenAddress {address}:{port}",
        f"HostKey {host_key}",
        f"AuthorizedKeysFile {authorized}",
        f"AllowUsers {user}",
        "PidFile none",
        "UsePAM no",
        "PermitRootLogin prohibit-password",
        "PubkeyAuthentication yes",
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "HostbasedAuthentication no",
        "AllowAgentForwarding no",
        "AllowTcpForwarding no",
        "AllowStreamLocalForwarding no",
        "X11Forwarding no",
        "PermitTunnel no",
        "PermitUserEnvironment no",
        "PrintMotd no",
        "PrintLastLog no",
        # the keys live in the run's directory, not a home directory sshd would inspect
        "StrictModes no",
        # a harness that vanished without closing its connections ends its sessions too
        "ClientAliveInterval 5",
        "ClientAliveCountMax 3",
        "MaxStartups 100:30:200",
        "MaxSessions 100",
        "LogLevel ERROR",
        # file transfer as on an ordinary host (Ansible copies with it), inside sshd itself
        "Subsystem sftp internal-sftp",
        "",
    ])
