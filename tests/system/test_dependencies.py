"""What the code needs, derived from the code, against what ``./bench setup`` installs.

A machine that already has everything cannot fool these tests: nothing here asks whether a
module loads. Each check reads the sources (Perl ``use``/``require``, Python imports, Node
imports, Java imports, the executables the harness starts), and each dependency must be part
of its language (Perl's Module::CoreList, Python's stdlib, Node's built-ins, the JDK), the
project's own code, pinned in the project's own manifests (pyproject.toml, package.json with
its lockfile, the poms as Maven resolves them), or come from a Debian package that set-up
installs: one in ``bench``'s APT_PACKAGES or a Depends (never a Recommends: set-up passes
--no-install-recommends) of one, followed transitively.

The installed system is consulted only to *name* things: the Debian package a module or
program is in (``dpkg -S``), Debian's naming convention confirmed by ``apt-cache show``, and
package relations (``apt-cache depends``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT
from deps_debian import (
    BENCH,
    apt_packages,
    needs_debian,
    perl_problems,
    perl_requirements,
    run,
    setup_packages,
)
from deps_programs import (
    executable_problems,
    executables,
    java_import_count,
    java_problems,
    node_imports,
    node_problems,
)
from deps_python import (
    LOCK,
    PY_TEST_SOURCES,
    PYPROJECT,
    lock_closure_problems,
    lock_pins,
    lock_problems,
    python_declared,
    python_imports,
    python_problems,
    req_name,
)

from burstbench import clients


# -- all of it ---------------------------------------------------------------------------------
def problems(packages: list[str]) -> list[str]:
    """Everything the code needs that set-up with ``packages`` as APT_PACKAGES leaves out."""
    out = perl_problems(packages) + python_problems()
    if shutil.which("node"):
        out += node_problems()
    if shutil.which("mvn") and shutil.which("java"):
        out += java_problems()
    return out + executable_problems(packages)


# -- the tests -----------------------------------------------------------------------------------
def test_bench_declares_its_packages_on_one_line():
    pkgs = apt_packages()
    assert pkgs and len(pkgs) == len(set(pkgs))
    # Dockerfile.bench installs the same list with this sed, so it must stay one line
    r = run(["sed", "-n", r"s/^APT_PACKAGES=(\(.*\))$/\1/p", str(BENCH)])
    assert r.stdout.split() == pkgs


def test_the_scanners_see_every_language():
    """A scanner that finds nothing passes everything: each must see its client's library."""
    assert "Net::Stomp" in perl_requirements()
    assert {"stomp", "yaml", "jinja2", "matplotlib"} <= set(python_imports())
    assert {"@stomp/stompjs", "ws", "node:net"} <= set(node_imports())
    assert java_import_count() > 50
    found, _ = executables()
    assert {("openssl",), ("keytool",), ("ip",), ("tc",)} <= set(found)
    langs = {c.language for c in clients.REGISTRY}
    assert langs <= {"perl", "python", "node", "java", "akka", "pekko"}, "a language nobody scans"


@needs_debian
@pytest.mark.skipif(shutil.which("perl") is None, reason="no perl")
def test_perl_modules_are_core_or_installed_by_setup():
    assert perl_problems(apt_packages()) == []


def test_python_imports_are_stdlib_own_or_pinned():
    assert python_problems() == []


def test_the_tests_imports_are_stdlib_own_or_pinned_in_the_test_extra():
    """The tests may use the test extra (pytest, psutil, jsonschema...); the code that runs may
    not: the test above checks it against the runtime dependencies alone."""
    assert {"pytest", "psutil", "jsonschema"} <= set(python_imports(PY_TEST_SOURCES))
    # (tests of the Python client put clients/python on sys.path; the tests' own helpers,
    # conftest and distributions, live in tests/)
    assert python_problems(PY_TEST_SOURCES, extras=("test",),
                           own_dirs=(ROOT / "clients" / "python", ROOT / "tests")) == []


def test_the_lock_holds_pyprojects_pins_each_hashed():
    assert lock_problems() == []


def test_the_lock_is_the_whole_tree():
    assert lock_closure_problems() == []


def test_a_pin_the_lock_disagrees_with_fails():
    """The check above, fed a pyproject.toml whose pytest pin moved, an unpinned entry, and a
    lock that lost one package's hashes and gained an index line."""
    text = PYPROJECT.read_text()
    pytest_pin = next(r for r in python_declared(("test",)).values() if req_name(r) == "pytest")
    moved = text.replace(f'"{pytest_pin}"', '"pytest==0.0.1"')
    assert moved != text
    found = lock_problems(moved)
    assert any("'pytest==0.0.1'" in p and "run ./bench lock" in p for p in found), found
    unpinned = text.replace(f'"{pytest_pin}"', '"pytest>=8"')
    assert any("'pytest>=8' is not pinned" in p for p in lock_problems(unpinned))
    lock = LOCK.read_text()
    version = lock_pins()[0]["jsonschema"][0]
    stripped = re.sub(rf"(?m)^(jsonschema=={re.escape(version)}) \\\n(?:\s+--hash=\S+(?: \\)?\n)+",
                      r"\1\n", lock)
    assert stripped != lock
    found = lock_problems(None, "--index-url https://example.invalid/simple\n" + stripped)
    assert any(p == f"lock: jsonschema=={version} has no --hash" for p in found), found
    assert any("--index-url" in p for p in found), found


@pytest.mark.skipif(shutil.which("node") is None, reason="no node")
def test_node_imports_are_builtin_or_locked():
    assert node_problems() == []


@pytest.mark.skipif(not (shutil.which("mvn") and shutil.which("java")), reason="no JDK/Maven")
def test_java_imports_resolve_to_the_jdk_or_the_poms():
    assert java_problems() == []


@needs_debian
def test_executables_come_from_setup_the_base_system_or_a_toolchain():
    assert executable_problems(setup_packages()) == []


@needs_debian
@pytest.mark.skipif(shutil.which("perl") is None, reason="no perl")
def test_the_checker_fails_without_io_socket_ssl():
    """The fresh machine of issue 13: libnet-stomp-perl only Recommends IO::Socket::SSL."""
    pkgs = setup_packages()
    assert "libio-socket-ssl-perl" in pkgs
    found = problems([p for p in pkgs if p != "libio-socket-ssl-perl"])
    assert any("IO::Socket::SSL" in p and "libio-socket-ssl-perl" in p for p in found), found
    assert problems(pkgs) == []


@needs_debian
@pytest.mark.skipif(shutil.which("setpriv") is None and os.geteuid() == 0,
                    reason="needs setpriv to run set-up unprivileged")
def test_setup_without_root_names_the_missing_package_and_its_install_line(tmp_path):
    """``bench setup``'s own apt check, unprivileged, on a machine where dpkg does not have
    libio-socket-ssl-perl: a copy of ``bench`` (itself, unchanged) runs with a dpkg-query in
    front of the real one that answers "not installed" for that package and passes everything
    else through. It must stop before installing anything and print the apt-get line."""
    import tempfile

    d = Path(tempfile.mkdtemp(prefix="bench-setup-"))  # readable by nobody, unlike tmp_path
    try:
        shim = d / "shim"
        shim.mkdir()
        real = shutil.which("dpkg-query")
        (shim / "dpkg-query").write_text(
            "#!/bin/sh\n"
            'for a in "$@"; do [ "$a" = libio-socket-ssl-perl ] && '
            '{ echo "dpkg-query: no packages found matching $a" >&2; exit 1; }; done\n'
            f'exec {real} "$@"\n')
        (shim / "dpkg-query").chmod(0o755)
        shutil.copy2(BENCH, d / "bench")
        os.chmod(d, 0o755)
        env = {"PATH": f"{shim}:{os.environ['PATH']}", "HOME": str(d), "LANG": "C.UTF-8"}
        argv = [str(d / "bench"), "setup"]
        if os.geteuid() == 0:
            argv = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", *argv]
        r = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env, cwd=d,
                           check=False)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    assert r.returncode == 1, r.stderr
    assert ("bench setup: error: missing system packages: libio-socket-ssl-perl; install them "
            "with: sudo apt-get install libio-socket-ssl-perl") in r.stderr, r.stderr
    assert "creating .venv" not in r.stderr  # it stopped at the first missing piece


@needs_debian
def test_setup_on_an_installed_machine_does_nothing_and_exits_zero():
    """``./bench setup`` a second time (this suite runs after it): every stamp matches, nothing
    is installed, and the exit status is 0. CI runs it under ``set -e``; a status of 1 from its
    last line (``[ $# -eq 2 ] && exec ...`` without ``--hosts``) once failed CI after an install
    that had worked."""
    r = subprocess.run([str(BENCH), "setup"], capture_output=True, text=True, timeout=300,
                       check=False)
    assert r.returncode == 0, r.stderr
    assert "bench setup: everything is installed" in r.stderr, r.stderr
    for step in ("installing system packages", "creating .venv", "npm ci", "mvn package"):
        assert step not in r.stderr, r.stderr
