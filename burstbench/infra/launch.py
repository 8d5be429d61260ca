"""The launcher seam: where a broker or client runs, and how its argv gets there.

A ``Launcher`` turns a local argv into the argv the Supervisor starts. ``Local`` leaves it as
it is. ``Ssh`` runs it on another host through OpenSSH (``ssh -T``, BatchMode, the run's own
known-hosts file and key): the contract's stdin and stdout travel over the session unchanged,
and ``burstbench/infra/remote_exec.py`` at the far end ties the program's life to the session (a
harness that stops, or dies by SIGKILL, leaves nothing running on the host). ``Kubectl`` does
the same in a Kubernetes pod through ``kubectl exec -i`` (no cluster here: its command lines
are tested, not run; see docs/kubernetes.md).

Paths: the project lives at ``project`` on the host (provisioned there by ``./bench setup
--hosts FILE``), and the point's files at ``remote_root``. Every argv element, and every file
``put`` there, has the harness's project root and point directory rewritten to those;
``fetch`` brings a file the program wrote (its records) back to its local path: over SFTP
(OpenSSH's ``sftp`` with the session's settings) for a host, through the exec session for a
pod.
"""

from __future__ import annotations

import shlex
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from burstbench import paths
from burstbench.infra.procs import die_with_parent


class RemoteError(RuntimeError):
    """A command over SSH failed (the host, the key or the command)."""


class Local:
    """Runs on the harness's own machine, as every process did before hosts existed."""

    name = "local"
    is_remote = False

    def command(self, argv: list[str], cwd: Path | None = None) -> list[str]:
        return list(argv)

    def put(self, local: Path) -> None:
        pass

    def fetch(self, local: Path) -> bool:
        return Path(local).exists()


@dataclass
class Ssh:
    """One host reached over OpenSSH.

    ``address`` and ``port`` are where its sshd listens, ``user`` the account; ``options`` are
    extra ``ssh -o`` settings (the run's ``UserKnownHostsFile``, an ``IdentityFile``);
    ``via`` prefixes the ssh client itself (``ip netns exec NS`` when the harness's
    side of the network is a namespace too). ``local_root`` (the point's directory here) maps
    to ``remote_root`` there; the project root maps to ``project``.
    """

    name: str
    address: str
    user: str
    project: str
    local_root: Path
    remote_root: str
    port: int = 22
    options: dict[str, str] = field(default_factory=dict)
    via: list[str] = field(default_factory=list)
    is_remote = True

    def ssh_argv(self) -> list[str]:
        """The ssh client's argv up to (and including) the destination."""
        return [*self.via, "ssh", "-T", "-p", str(self.port), "-l", self.user,
                *self._options(), self.address]

    def sftp_argv(self) -> list[str]:
        """OpenSSH's sftp client, commands from stdin (``-b -``: a failed one ends it with a
        non-zero exit), with the same settings as ``ssh_argv``."""
        dest = f"[{self.address}]" if ":" in self.address else self.address
        return [*self.via, "sftp", "-q", "-b", "-", "-P", str(self.port),
                "-o", f"User={self.user}", *self._options(), dest]

    def _options(self) -> list[str]:
        opts = {
            "BatchMode": "yes",  # never a password prompt: a key or nothing
            "StrictHostKeyChecking": "yes",  # only host keys the run's known-hosts file has
            "ConnectTimeout": "10",
            # a vanished peer ends the session (and with it the far end's program)
            "ServerAliveInterval": "5",
            "ServerAliveCountMax": "3",
            "LogLevel": "ERROR",
            "ForwardAgent": "no",
            "ForwardX11": "no",
            "ClearAllForwardings": "yes",
            **self.options,
        }
        return [w for k, v in opts.items() for w in ("-o", f"{k}={v}")]

    # -- paths -------------------------------------------------------------------------------
    def map(self, text: str) -> str:
        """``text`` with the point directory and the project root as they are on the host."""
        text = text.replace(str(self.local_root), self.remote_root)
        return text.replace(str(paths.ROOT), self.project)

    # -- processes ---------------------------------------------------------------------------
    def remote(self, words: list[str]) -> list[str]:
        """The local argv that runs ``words`` (an argv there) on the host."""
        return self.ssh_argv() + ["exec " + shlex.join(words)]

    def _exec_mode(self) -> list[str]:
        return ["run"]

    def command(self, argv: list[str], cwd: Path | None = None) -> list[str]:
        """The local argv that runs ``argv`` on the host, tied to the session."""
        far = [f"{self.project}/.venv/bin/python",
               f"{self.project}/burstbench/infra/remote_exec.py",
               *self._exec_mode()]
        if cwd is not None:
            far += ["--cwd", self.map(str(cwd))]
        far += ["--", *(self.map(a) for a in argv)]
        return self.remote(far)

    def shell(self, script: str, input: bytes | None = None,
              timeout: float = 60.0) -> subprocess.CompletedProcess:
        """Run a short shell command on the host; RemoteError on failure."""
        try:
            r = subprocess.run(self.remote(["sh", "-c", script]), input=input,
                               capture_output=True, timeout=timeout,
                               preexec_fn=die_with_parent, check=False)
        except subprocess.TimeoutExpired as e:
            raise RemoteError(f"{self.name}: '{script[:60]}' timed out after {timeout:.0f} s") \
                from e
        if r.returncode != 0:
            err = r.stderr.decode(errors="replace").strip().splitlines()
            raise RemoteError(f"{self.name} ({self.user}@{self.address}:{self.port}): "
                              f"exit {r.returncode}: {err[-1] if err else 'no message'}")
        return r

    def _mapped(self, local: Path) -> bytes:
        data = Path(local).read_bytes()
        try:
            return self.map(data.decode()).encode()
        except UnicodeDecodeError:
            return data

    def _sftp(self, commands: str, timeout: float = 300.0) -> subprocess.CompletedProcess:
        try:
            return subprocess.run(self.sftp_argv(), input=commands.encode(),
                                  capture_output=True, timeout=timeout,
                                  preexec_fn=die_with_parent, check=False)
        except subprocess.TimeoutExpired as e:
            raise RemoteError(f"{self.name}: sftp timed out after {timeout:.0f} s") from e

    def put(self, local: Path) -> None:
        """Copy a file the harness wrote to its place on the host (paths inside rewritten),
        over SFTP."""
        target = self.map(str(local))
        self.shell(f"mkdir -p {shlex.quote(str(Path(target).parent))}")
        with tempfile.NamedTemporaryFile(prefix="bb-put-") as f:
            f.write(self._mapped(local))
            f.flush()
            r = self._sftp(f"put {_sftp_path(f.name)} {_sftp_path(target)}\n")
        if r.returncode != 0:
            err = r.stderr.decode(errors="replace").strip().splitlines()
            raise RemoteError(f"{self.name} ({self.user}@{self.address}:{self.port}): sftp put "
                              f"{target}: {err[-1] if err else f'exit {r.returncode}'}")

    def fetch(self, local: Path) -> bool:
        """Bring a file a program wrote on the host back to ``local`` over SFTP; False if it
        has none."""
        Path(local).parent.mkdir(parents=True, exist_ok=True)
        part = Path(local).with_name(f".{Path(local).name}.part")
        r = self._sftp(f"get {_sftp_path(self.map(str(local)))} {_sftp_path(str(part))}\n")
        if r.returncode != 0 or not part.exists():
            part.unlink(missing_ok=True)
            return False
        part.replace(local)
        return True

    def clean(self) -> None:
        """Remove the point's directory on the host (its stores and records)."""
        if self.remote_root.rstrip("/") in ("", "/"):
            return
        self.shell(f"rm -rf {shlex.quote(self.remote_root)}")

    def clock_argv(self) -> list[str]:
        return self.remote([f"{self.project}/.venv/bin/python",
                            f"{self.project}/burstbench/infra/remote_exec.py", "clock"])


@dataclass
class Kubectl(Ssh):
    """A Kubernetes pod as a host, through ``kubectl exec -i`` (``address`` is the pod's name,
    ``user`` unused). An exec session's end does not end the process's parent (the container
    runtime stays), so ``remote_exec`` runs in ``relay`` mode there: it carries stdin to the
    program itself and ends the program when the session's stdin ends."""

    namespace: str = "burstbench"
    container: str = "bench"
    kubectl: str = "kubectl"

    def remote(self, words: list[str]) -> list[str]:
        return [*self.via, self.kubectl, "exec", "-i", "-n", self.namespace, self.address,
                "-c", self.container, "--", *words]

    def _exec_mode(self) -> list[str]:
        return ["run", "--relay"]

    def put(self, local: Path) -> None:
        """Copy a file to the pod through the exec session's stdin (no SFTP server there)."""
        target = self.map(str(local))
        self.shell(f"mkdir -p {shlex.quote(str(Path(target).parent))} && "
                   f"cat > {shlex.quote(target)}", input=self._mapped(local))

    def fetch(self, local: Path) -> bool:
        """Bring a file from the pod back through the exec session's stdout."""
        r = subprocess.run(self.remote(["cat", self.map(str(local))]), capture_output=True,
                           timeout=300, preexec_fn=die_with_parent, check=False)
        if r.returncode != 0:
            return False
        Path(local).parent.mkdir(parents=True, exist_ok=True)
        Path(local).write_bytes(r.stdout)
        return True


def _sftp_path(path: str) -> str:
    """A path as one word of an sftp batch command (double quotes; a quote or backslash
    escaped)."""
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'
