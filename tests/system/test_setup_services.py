"""``./bench setup`` never touches a server it did not install: a machine's own database and
SSH server are not stopped, disabled or started by a set-up that installs something else, and
a server unit the set-up's own install added is disabled (not started, not stopped).

The set-up is the project's own ``bench``, unchanged, run as root in a copy of itself. What
this machine cannot do for it is in front of it on PATH: ``dpkg-query`` says one package is
missing, ``apt-get`` records its calls (an install here would change the machine; the
install of ``openssh-server`` adds the package's two units), and ``systemctl`` lists the
machine's units and records every other call (no systemd runs here). Every other step of
the set-up finds its stamp and does nothing.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from conftest import ROOT

BENCH = ROOT / "bench"

# the machine's own servers, enabled, as on a user's host
THEIRS = ["mariadb.service", "postgresql.service", "postgresql@.service", "ssh.service",
          "ssh.socket"]


def _shims(d: Path, missing: str, units: list[str]) -> Path:
    shim = d / "shim"
    shim.mkdir()
    (d / "units").write_text("".join(f"{u} enabled enabled\n" for u in units))
    (d / "calls").write_text("")
    real = shutil.which("dpkg-query")
    scripts = {
        "dpkg-query": (
            f'for a in "$@"; do [ "$a" = {missing} ] && '
            '{ echo "dpkg-query: no packages found matching $a" >&2; exit 1; }; done\n'
            f'exec {real} "$@"\n'),
        "apt-get": (
            f'echo "apt-get $*" >> {d}/calls\n'
            'case " $* " in *" install "*" openssh-server "*)\n'
            f'  printf "ssh.service enabled enabled\\nssh.socket enabled enabled\\n" >> {d}/units'
            ';; esac\n'),
        "systemctl": (
            f'[ "$1" = list-unit-files ] && {{ cat {d}/units; exit 0; }}\n'
            f'echo "systemctl $*" >> {d}/calls\n'),
    }
    for name, body in scripts.items():
        (shim / name).write_text("#!/bin/sh\n" + body)
        (shim / name).chmod(0o755)
    return shim


def _copy_with_stamps(d: Path) -> None:
    """The project's ``bench`` in ``d``, every step but the packages' already done there: the
    steps' inputs are empty files, and each stamp holds the hash of nothing."""
    shutil.copy2(BENCH, d / "bench")
    for f in ("pyproject.toml", "requirements.lock", "pom.xml", "clients/node/package.json",
              "clients/node/package-lock.json"):
        (d / f).parent.mkdir(parents=True, exist_ok=True)
        (d / f).write_text("")
    for sub in ("clients/java", "akka-bridge", "pekko-bridge", "clients/node/node_modules",
                "broker/target/lib",
                ".venv/bin", ".setup"):
        (d / sub).mkdir(parents=True, exist_ok=True)
    empty = hashlib.sha256(b"").hexdigest()[:16]
    for step in ("venv", "node", "maven"):
        (d / ".setup" / step).write_text(empty)
    (d / ".venv" / "bin" / "burstbench").write_text("#!/bin/sh\n")
    (d / ".venv" / "bin" / "burstbench").chmod(0o755)


def _setup(missing: str, units: list[str]) -> tuple[subprocess.CompletedProcess, list[str]]:
    d = Path(tempfile.mkdtemp(prefix="bench-services-"))
    try:
        shim = _shims(d, missing, units)
        _copy_with_stamps(d)
        env = {"PATH": f"{shim}:{os.environ['PATH']}", "HOME": str(d), "LANG": "C.UTF-8"}
        r = subprocess.run([str(d / "bench"), "setup"], capture_output=True, text=True,
                           timeout=60, env=env, cwd=d, check=False)
        return r, (d / "calls").read_text().splitlines()
    finally:
        shutil.rmtree(d, ignore_errors=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="set-up installs packages only as root")
def test_a_setup_that_installs_something_else_leaves_the_machines_servers_alone():
    r, calls = _setup("libio-socket-ssl-perl", THEIRS)
    assert r.returncode == 0, r.stderr
    assert "installing system packages: libio-socket-ssl-perl" in r.stderr
    assert any(c.startswith("apt-get install") and "libio-socket-ssl-perl" in c
               for c in calls), calls
    # systemd was asked for nothing: no stop, disable, start or restart of any unit
    assert [c for c in calls if c.startswith("systemctl")] == [], calls


@pytest.mark.skipif(os.geteuid() != 0, reason="set-up installs packages only as root")
def test_a_server_the_setup_installed_is_disabled_and_nothing_else_is_touched():
    r, calls = _setup("openssh-server", ["postgresql.service", "mariadb.service"])
    assert r.returncode == 0, r.stderr
    assert sorted(c for c in calls if c.startswith("systemctl")) == [
        "systemctl disable ssh.service", "systemctl disable ssh.socket"], calls
    assert "disabling ssh.service: installed just now" in r.stderr


# what a user of the Python clients may not have: Node (the stompjs clients), Chromium (the
# browser client), the database servers (the JDBC stores)
ABSENT_COMMANDS = ("node", "npm", "npx", "chromium", "mariadbd", "mysqld", "postgres", "pg_ctl",
                   "initdb")
ABSENT_PACKAGES = ("chromium", "mariadb-server", "postgresql-15")


def _path_without(d: Path, names: tuple[str, ...]) -> str:
    """A PATH of one folder holding a link to every command of this PATH but ``names``."""
    farm = d / "farm"
    farm.mkdir()
    for folder in os.environ["PATH"].split(os.pathsep):
        if not os.path.isdir(folder):
            continue
        for entry in os.scandir(folder):
            if entry.name not in names and not (farm / entry.name).exists():
                (farm / entry.name).symlink_to(entry.path)
    return str(farm)


def test_a_run_of_python_clients_needs_no_node_chromium_or_database(tmp_path):
    """``./bench run`` with stomp.py on a machine without Node, Chromium, MariaDB and
    PostgreSQL: the bench names what is missing in one line, installs nothing and measures the
    point (a real broker and clients); only ``./bench setup`` installs packages."""
    shim = tmp_path / "shim"
    shim.mkdir()
    calls = tmp_path / "calls"
    calls.write_text("")
    real = shutil.which("dpkg-query")
    scripts = {
        "dpkg-query": ('for a in "$@"; do case " ' + " ".join(ABSENT_PACKAGES) + ' " in '
                       '*" $a "*) echo "dpkg-query: no packages found matching $a" >&2; '
                       f'exit 1;; esac; done\nexec {real} "$@"\n'),
        "apt-get": f'echo "apt-get $*" >> {calls}\nexit 1\n',
        "systemctl": f'echo "systemctl $*" >> {calls}\n',
    }
    for name, body in scripts.items():
        (shim / name).write_text("#!/bin/sh\n" + body)
        (shim / name).chmod(0o755)
    path = f"{shim}:{_path_without(tmp_path, ABSENT_COMMANDS)}"
    env = {**os.environ, "PATH": path}
    assert subprocess.run(["sh", "-c", "command -v node chromium"], env=env,
                          capture_output=True, check=False).returncode != 0
    r = subprocess.run([str(BENCH), "run", "--producer", "stomp-py", "--consumer", "stomp-py",
                        "--count", "500", "--bursts", "2", "--output", str(tmp_path / "res")],
                       capture_output=True, text=True, timeout=300, env=env, cwd=ROOT,
                       check=False)
    assert r.returncode == 0, r.stderr[-3000:]
    (line,) = [x for x in r.stderr.splitlines() if x.startswith("bench setup: not installed:")]
    assert sorted(line.split(": ")[2].split(" (")[0].split()) == sorted(ABSENT_PACKAGES)
    assert "(./bench setup installs them)" in line
    assert calls.read_text() == ""  # nothing installed, no service touched
    assert "lost 0" in r.stdout or '"lost": 0' in r.stdout, r.stdout[-2000:]
    # a point that needs what is missing says so in one line, and starts nothing
    r = subprocess.run([str(BENCH), "run", "--producer", "stompjs", "--consumer", "stomp-py",
                        "--output", str(tmp_path / "res")], capture_output=True, text=True,
                       timeout=120, env=env, cwd=ROOT, check=False)
    assert r.returncode == 2, r.stderr[-2000:]
    (err,) = [x for x in r.stderr.splitlines() if x.startswith("bench run: error:")]
    assert "stompjs" in err and "node" in err, err
