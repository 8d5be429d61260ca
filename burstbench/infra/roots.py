"""Bare hosts for the provisioning proof: a Debian root of their own for namespace hosts.

A namespace host (``burstbench/infra/sshhosts.py``) normally shares this machine's files, so
it has every runtime this machine has. A *rooted* host has a root filesystem of its own, as a
freshly installed server has: Debian bookworm made by ``debootstrap --variant=minbase`` with
only what Ansible needs to reach and manage a host (``openssh-server``, ``python3``, ``sudo``,
``ca-certificates``) and an unprivileged user, ``bench``, who may ``sudo`` (Ansible's
``become``). No JDK, Maven, Node or Net::Stomp: ``./bench setup --hosts`` installs them
(``deploy/ansible/roles/runtimes``).

The base root is made once (about a minute) and kept in ``/var/lib/burstbench/roots``; each
host sees it through an overlay whose upper directory is the host's own (in the run's
directory), mounted inside a mount namespace that only that host's sshd and its sessions
live in: the mounts go when the sshd stops. Its apt sources name this machine's Debian mirror
over HTTPS, the only scheme the harness's CONNECT proxy carries.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path

SUITE = "bookworm"
INCLUDE = ("openssh-server", "python3", "sudo", "ca-certificates")
USER = "bench"
STATE = Path("/var/lib/burstbench/roots")
# inside a root: the sshd's own configuration, host key and authorized keys
SSH_DIR = "/etc/burstbench-ssh"


class RootUnavailable(RuntimeError):
    """No bare root can be made here (no debootstrap, not root, no Debian mirror)."""


def apt_mirror() -> str:
    """The Debian mirror this machine's apt uses (read from its sources, never written into
    the repository)."""
    sources = [Path("/etc/apt/sources.list"),
               *sorted(Path("/etc/apt/sources.list.d").glob("*"))]
    for f in sources:
        if not f.is_file() or f.name.endswith((".disabled", ".save")) or "disabled" in f.name:
            continue
        text = f.read_text()
        m = re.search(r"^URIs:\s*(\S+/debian)\s*$", text, re.MULTILINE) \
            or re.search(r"^deb\s+(?:\[[^]]*\]\s+)?(\S+/debian)\s+bookworm\b", text, re.MULTILINE)
        if m:
            return m.group(1)
    raise RootUnavailable("no Debian bookworm mirror in this machine's apt sources")


def base(log=print) -> Path:
    """The bare root, made now if it is not there yet; its path."""
    root = STATE / f"{SUITE}-bare"
    if (root / ".burstbench-bare").exists():
        return root
    if shutil.which("debootstrap") is None:
        raise RootUnavailable("debootstrap is not installed (./bench setup installs it)")
    mirror = re.sub(r"^http://", "https://", apt_mirror())
    tmp = root.with_name(root.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.parent.mkdir(parents=True, exist_ok=True)
    log(f"making a bare Debian {SUITE} root in {root} (debootstrap, about a minute)")
    r = subprocess.run(["debootstrap", "--variant=minbase", "--include=ca-certificates",
                        SUITE, str(tmp), mirror], capture_output=True, text=True, timeout=1800,
                       check=False)
    if r.returncode != 0:
        raise RootUnavailable(f"debootstrap failed: {(r.stderr or r.stdout).strip()[-500:]}")
    network_trust(tmp)
    # the rest with apt in the root, with every service start refused while installing (sshd's
    # would listen on this machine's port 22); the policy goes afterwards, as a fresh host
    # has none
    policy = tmp / "usr" / "sbin" / "policy-rc.d"
    policy.write_text("#!/bin/sh\nexit 101\n")
    policy.chmod(0o755)
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "DEBIAN_FRONTEND": "noninteractive"}
    r = subprocess.run(["chroot", str(tmp), "sh", "-c",
                        "apt-get update -q && apt-get install -y -q --no-install-recommends "
                        + " ".join(INCLUDE)], capture_output=True, text=True, timeout=1800,
                       check=False, env=env)
    policy.unlink()
    if r.returncode != 0:
        raise RootUnavailable(f"apt-get install in the root failed: "
                              f"{(r.stderr or r.stdout).strip()[-500:]}")
    chroot = ["chroot", str(tmp)]
    # no password, but not a locked account ("*", not useradd's "!"): sshd without PAM
    # refuses a locked account even its keys
    subprocess.run([*chroot, "useradd", "--create-home", "--shell", "/bin/bash", "--password",
                    "*", USER], check=True, capture_output=True, timeout=60)
    if (tmp / "etc" / "npmrc").exists():  # npm's global file is under its own prefix
        shutil.copyfile(tmp / "etc" / "npmrc", tmp / "home" / USER / ".npmrc")
        subprocess.run([*chroot, "chown", f"{USER}:{USER}", f"/home/{USER}/.npmrc"],
                       check=True, capture_output=True, timeout=60)
    (tmp / "etc" / "sudoers.d" / "bench").write_text(f"{USER} ALL=(ALL) NOPASSWD: ALL\n")
    (tmp / "etc" / "sudoers.d" / "bench").chmod(0o440)
    # the package's own host keys are not used (each run makes its own); the privilege
    # separation directory sshd checks for
    for key in (tmp / "etc" / "ssh").glob("ssh_host_*"):
        key.unlink()
    (tmp / "run" / "sshd").mkdir(parents=True, exist_ok=True)
    (tmp / "etc" / "hostname").write_text("bare\n")
    (tmp / ".burstbench-bare").write_text(f"{SUITE} minbase + {' '.join(INCLUDE)}\n")
    tmp.rename(root)
    return root


def network_trust(root: Path) -> None:
    """This machine's own certificate authorities (``/usr/local/share/ca-certificates``: a
    TLS-inspecting proxy's, for one) into the root's system store, and pip and npm told to use
    that store, as every host on this network needs: a host made here is on it."""
    local = sorted(Path("/usr/local/share/ca-certificates").glob("*.crt"))
    if not local:
        return
    into = root / "usr" / "local" / "share" / "ca-certificates"
    into.mkdir(parents=True, exist_ok=True)
    for crt in local:
        shutil.copyfile(crt, into / crt.name)
    subprocess.run(["chroot", str(root), "update-ca-certificates"], check=True,
                   capture_output=True, timeout=120)
    bundle = "/etc/ssl/certs/ca-certificates.crt"
    (root / "etc" / "pip.conf").write_text(f"[global]\ncert = {bundle}\n")
    (root / "etc" / "npmrc").write_text(f"cafile={bundle}\n")


def layers(host_dir: Path) -> tuple[Path, Path, Path]:
    """The host's overlay directories: upper (what the host changes), work, merged."""
    dirs = tuple(host_dir / d for d in ("upper", "work", "merged"))
    for d in dirs:
        d.mkdir(parents=True, exist_ok=True)
    return dirs  # type: ignore[return-value]


def sshd_argv(base_root: Path, host_dir: Path, config: str) -> list[str]:
    """The host's sshd in a mount namespace of its own, chrooted into the overlay of the base
    (``config``: its configuration's path inside the root)."""
    upper, work, merged = layers(host_dir)
    m = shlex.quote(str(merged))
    script = "; ".join([
        "set -e",
        (f"mount -t overlay overlay -o lowerdir={shlex.quote(str(base_root))},"
         f"upperdir={shlex.quote(str(upper))},workdir={shlex.quote(str(work))} {m}"),
        f"mount -t proc proc {m}/proc",
        f"mount --rbind /dev {m}/dev",
        f"mount -t sysfs sysfs {m}/sys",
        f"mount -t tmpfs -o mode=1777 tmpfs {m}/tmp",
        f"mkdir -p {m}/run/sshd",
        f"exec chroot {m} /usr/sbin/sshd -D -e -f {shlex.quote(config)}",
    ])
    return ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", script]


def host_files(host_dir: Path) -> None:
    """Files a host gets at each start: /etc/hosts naming this machine's host name, which the
    namespaces share (sudo looks it up)."""
    import socket
    p = upper_path(host_dir, "/etc/hosts")
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(f"127.0.0.1 localhost\n127.0.1.1 {socket.gethostname()}\n")


def upper_path(host_dir: Path, inside: str) -> Path:
    """Where a file at ``inside`` (an absolute path in the host's root) is written before the
    host starts: its overlay's upper directory."""
    return host_dir / "upper" / inside.lstrip("/")
