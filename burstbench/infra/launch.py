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
``fetch`` brings a file the program wrote (its records) back to its local path.
"""

from __future__ import annotations

import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from burstbench import paths
from burstbench.infra.procs import _die_with_parent


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
        argv = [*self.via, "ssh", "-T", "-p", str(self.port), "-l", self.user]
        for k, v in opts.items():
            argv += ["-o", f"{k}={v}"]
        return argv + [self.address]

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
                               preexec_fn=_die_with_parent, check=False)
        except subprocess.TimeoutExpired as e:
            raise RemoteError(f"{self.name}: '{script[:60]}' timed out after {timeout:.0f} s") \
                from e
        if r.returncode != 0:
            err = r.stderr.decode(errors="replace").strip().splitlines()
            raise RemoteError(f"{self.name} ({self.user}@{self.address}:{self.port}): "
                              f"exit {r.returncode}: {err[-1] if err else 'no message'}")
        return r

    def put(self, local: Path) -> None:
        """Copy a file the harness wrote to its place on the host (paths inside rewritten)."""
        data = Path(local).read_bytes()
        try:
            data = self.map(data.decode()).encode()
        except UnicodeDecodeError:
            pass
        target = self.map(str(local))
        self.shell(f"mkdir -p {shlex.quote(str(Path(target).parent))} && "
                   f"cat > {shlex.quote(target)}", input=data)

    def fetch(self, local: Path) -> bool:
        """Bring a file a program wrote on the host back to ``local``; False if it has none."""
        target = self.map(str(local))
        r = subprocess.run(self.remote(["cat", target]), capture_output=True, timeout=300,
                           preexec_fn=_die_with_parent, check=False)
        if r.returncode != 0:
            return False
        Path(local).parent.mkdir(parents=True, exist_ok=True)
        Path(local).write_bytes(r.stdout)
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
