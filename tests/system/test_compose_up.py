"""``docker compose up`` as docs/compose.md types it, run to the end on a Docker engine.

Full tier (``./bench test --full -k compose_up``; root; 20-40 minutes the first time, the
image layers and the Maven, npm and pip caches kept for the next run). The engine is Debian's
``docker.io``, started here by hand (there is no systemd) with a socket, data and state of
its own and no firewall rules (``--iptables=false``: the engine leaves the host's iptables,
and so the bench's own namespace bridge, alone; the builds' steps use the host's network),
and stopped by its PID at the end. With no image registry reachable, the images build
``FROM`` a Debian bookworm base made by ``debootstrap --variant=minbase`` and imported
(``BASE_IMAGE``); everything else comes from Debian's packages and the package registries,
whose TLS is checked against this host's CA bundle (``deploy/certs``). ``docker compose`` is
Compose v2, the Docker CLI plugin that ``./bench setup --compose`` builds from the Go module
proxy, into a DOCKER_CONFIG kept with the engine's state (Debian has only Compose v1).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from conftest import ROOT

from burstbench.infra.roots import apt_mirror
from burstbench.paths import git_commit

pytestmark = [pytest.mark.full, pytest.mark.root, pytest.mark.slow, pytest.mark.timeout(4800)]

STATE = Path("/var/lib/burstbench/docker")  # kept between runs: layers and build caches
BASE = "burstbench-base:bookworm"
PROJECT = "burstbench-compose-test"
DOCKER = "/usr/bin/docker"  # Debian's client, the engine's own version
CONFIG = STATE / "config"  # its cli-plugins/docker-compose
# the README's command
UP = ["up", "--build", "--abort-on-container-exit", "--exit-code-from", "bench"]


def split_bundle(bundle: Path, into: Path) -> int:
    """The host's CA bundle as one certificate a file (update-ca-certificates and Java's
    keystore take the first certificate of a file)."""
    certs = re.findall(r"-----BEGIN CERTIFICATE-----.+?-----END CERTIFICATE-----",
                       bundle.read_text(), re.DOTALL)
    for i, pem in enumerate(certs):
        (into / f"host-{i:03d}.crt").write_text(pem + "\n")
    return len(certs)


@contextlib.contextmanager
def engine(tmp: Path):
    """dockerd with its own socket, data and state; stopped by PID, with what it started."""
    for tool in ("dockerd", "debootstrap"):
        if not shutil.which(tool):
            pytest.fail(f"{tool} is not installed: ./bench setup installs it")
    STATE.mkdir(parents=True, exist_ok=True)
    sock = tmp / "docker.sock"
    # containerd's sockets live under the exec root: a short path (a socket's is at most 107
    # bytes, and pytest's tmp_path under xdist is longer than that leaves)
    exec_root = Path(tempfile.mkdtemp(prefix="bb-docker-"))
    log = (tmp / "dockerd.log").open("w")
    proc = subprocess.Popen(
        ["dockerd", "--host", f"unix://{sock}", "--data-root", str(STATE / "data"),
         "--exec-root", str(exec_root), "--pidfile", str(tmp / "dockerd.pid"),
         "--iptables=false", "--ip-forward=false", "--bridge=none",
         "--containerd-namespace", "burstbench", "--containerd-plugins-namespace",
         "burstbench-plugins"],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    env = {**os.environ, "DOCKER_HOST": f"unix://{sock}", "DOCKER_CONFIG": str(CONFIG),
           "PATH": "/usr/bin:/bin:/usr/sbin:/sbin:" + os.environ.get("PATH", "")}
    try:
        deadline = time.monotonic() + 60
        while subprocess.run([DOCKER, "info"], env=env, capture_output=True,
                             check=False).returncode:
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail("dockerd did not start: " + (tmp / "dockerd.log").read_text()[-2000:])
            time.sleep(0.5)
        yield env
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()
        shutil.rmtree(exec_root, ignore_errors=True)


def base_image(env: dict, tmp: Path) -> None:
    """A Debian bookworm base from debootstrap, imported once and kept in the engine."""
    if subprocess.run([DOCKER, "image", "inspect", BASE], env=env, check=False,
                      capture_output=True).returncode == 0:
        return
    root = tmp / "rootfs"
    subprocess.run(["debootstrap", "--variant=minbase", "bookworm", str(root), apt_mirror()],
                   check=True, capture_output=True, timeout=900)
    with subprocess.Popen(["tar", "-C", str(root), "-c", "."], stdout=subprocess.PIPE) as tar:
        subprocess.run([DOCKER, "import", "-", BASE], stdin=tar.stdout, env=env, check=True,
                       capture_output=True, timeout=600)
    assert tar.returncode == 0
    shutil.rmtree(root)


def project_copy(tmp: Path) -> Path:
    """The repository's committed files, as a user's clone has them, plus this host's CAs."""
    work = tmp / "burstbench"
    files = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True,
                           check=True).stdout.decode().split("\0")
    for f in filter(None, files):
        src = ROOT / f
        if src.is_file():
            (work / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, work / f)
    assert split_bundle(Path("/etc/ssl/certs/ca-certificates.crt"), work / "deploy" / "certs")
    return work


def compose(env: dict, work: Path, *args: str, timeout: float = 600):
    return subprocess.run([DOCKER, "compose", "-p", PROJECT, *args], cwd=work, env=env,
                          check=False, capture_output=True, text=True, timeout=timeout)


def plugins(env: dict) -> str:
    """``./bench setup --compose`` into the engine's DOCKER_CONFIG (built once, then kept)."""
    r = subprocess.run([str(ROOT / "bench"), "setup", "--compose"], env=env, check=False,
                       capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stderr[-3000:]
    version = compose(env, ROOT, "version")
    assert version.returncode == 0, version.stderr
    return version.stdout.strip()


def test_docker_compose_up_runs_the_compose_sweep_to_the_end(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("not root: dockerd needs root")
    work = project_copy(tmp_path)
    with engine(tmp_path) as env:
        base_image(env, tmp_path)
        version = plugins(env)
        # BuildKit: Debian's engine (20.10) builds with the classic builder unless asked
        env = {**env, "BASE_IMAGE": BASE, "BUILD_NETWORK": "host", "DOCKER_BUILDKIT": "1",
               "BURSTBENCH_COMMIT": git_commit()}
        start = time.monotonic()
        try:
            up = compose(env, work, *UP, timeout=4200)
            took = time.monotonic() - start
            (tmp_path / "compose-up.log").write_text(up.stdout + up.stderr)
            assert up.returncode == 0, (up.stdout + up.stderr)[-6000:]
            # every container stopped when the bench finished
            left = subprocess.run([DOCKER, "ps", "-q", "--filter",
                                   f"label=com.docker.compose.project={PROJECT}"],
                                  env=env, capture_output=True, text=True, check=True)
            assert left.stdout.strip() == ""
        finally:
            compose(env, work, "down", "-v", "--remove-orphans")
        runs = [d for d in (work / "results").iterdir() if d.is_dir() and d.name != "latest"]
        [run] = runs
        manifest = json.loads((run / "run.json").read_text())
        assert manifest["status"] == "complete" and manifest["profile"] == "compose"
        assert manifest["git_commit"] == git_commit()
        charts = sorted(p.name for p in (run / "charts").glob("*.png"))
        assert "throughput-by-consumers.png" in charts
        print(f"{version}: docker compose {' '.join(UP)}: exit 0 in {took:.0f} s, "
              f"run {run.name} at {manifest['git_commit']}, {len(charts)} charts")
