"""What ``./bench setup`` installs (``bench``'s APT_PACKAGES), what Debian's packages ship
and pull in, and the Perl modules the clients use (tests/system/test_dependencies.py)."""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT

BENCH = ROOT / "bench"


HAVE_DEBIAN_TOOLS = all(shutil.which(t) for t in ("dpkg", "dpkg-query", "apt-cache"))


needs_debian = pytest.mark.skipif(
    not HAVE_DEBIAN_TOOLS, reason="needs dpkg, dpkg-query and apt-cache (a Debian system)")


def rel(p: Path) -> str:
    return str(p.relative_to(ROOT))


def run(argv: list[str], timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                          check=False)


# -- bench's list ------------------------------------------------------------------------------
def apt_packages(text: str | None = None) -> list[str]:
    """APT_PACKAGES as ``bench`` declares it (one line: Dockerfile.bench reads it with sed)."""
    text = BENCH.read_text() if text is None else text
    m = re.search(r"^APT_PACKAGES=\(([^)]*)\)", text, re.MULTILINE)
    assert m, "bench declares no APT_PACKAGES=(...)"
    return m.group(1).split()


def setup_packages() -> list[str]:
    """Every package ``./bench setup`` installs: APT_PACKAGES and CONTAINER_PACKAGES (the
    container tests' engine and base-image tool, which the bench image leaves out)."""
    m = re.search(r"^CONTAINER_PACKAGES=\(([^)]*)\)", BENCH.read_text(), re.MULTILINE)
    assert m, "bench declares no CONTAINER_PACKAGES=(...)"
    return apt_packages() + m.group(1).split()


# -- Debian: who ships a file, what a package pulls in -------------------------------------------
@functools.cache
def owner(path: str) -> str | None:
    """The package that installed ``path`` (merged /usr: also tried without the /usr prefix)."""
    candidates = [path]
    if path.startswith("/usr/"):
        candidates.append(path[4:])
    for c in candidates:
        r = run(["dpkg", "-S", c])
        for line in r.stdout.splitlines():
            if line.startswith("diversion by"):
                continue
            pkgs, _, _ = line.partition(": ")
            return pkgs.split(",")[0].strip().split(":")[0]
    return None


_DEPENDS: dict[str, tuple[str, ...]] = {}


def _depends(pkgs) -> None:
    """Learn (into _DEPENDS) what each package Depends or Pre-Depends on, as apt would install
    it on a machine that has none: of alternatives (a | b) the first that exists, of a virtual
    package its providers. One apt-cache call for the lot."""
    pkgs = sorted(set(pkgs) - set(_DEPENDS))
    if not pkgs:
        return
    r = run(["apt-cache", "depends", "--no-recommends", "--no-suggests", "--no-conflicts",
              "--no-breaks", "--no-replaces", "--no-enhances", *pkgs])
    for p in pkgs:
        _DEPENDS[p] = ()  # unknown to apt: depends on nothing we can name
    groups: list[list[tuple[str, list[str]]]] = []
    current = None
    open_group = False  # the previous line was "|Depends:": this one is its alternative

    def close() -> None:
        if current is None:
            return
        out: list[str] = []
        for group in groups:
            for name, providers in group:
                if name.startswith("<"):  # virtual: whoever provides it
                    if providers:
                        out.extend(providers)
                        break
                else:
                    out.append(name.split(":")[0])
                    break
        _DEPENDS[current] = tuple(out)

    for line in r.stdout.splitlines():
        if line and not line.startswith(" "):
            close()
            current, groups, open_group = line.strip().split(":")[0], [], False
            continue
        m = re.match(r"^  (\|?)(?:Pre)?Depends: (\S+)", line)
        if m:
            if not open_group:
                groups.append([])
            groups[-1].append((m.group(2), []))
            open_group = bool(m.group(1))
            continue
        m = re.match(r"^    (\S+)$", line)
        if m and groups:
            groups[-1][-1][1].append(m.group(1).split(":")[0])
    close()


def closure(roots) -> set[str]:
    """``roots`` and everything they Depend on, transitively (one apt-cache call per level)."""
    seen: set[str] = set()
    level = {r.split(":")[0] for r in roots}
    while level:
        seen |= level
        _depends(level)
        level = {d for p in level for d in _DEPENDS[p]} - seen
    return seen


@functools.cache
def _apt_knows(pkg: str) -> bool:
    r = run(["apt-cache", "show", "--no-all-versions", pkg])
    return r.returncode == 0 and "Package:" in r.stdout


@functools.cache
def base_system() -> frozenset[str]:
    """Packages every Debian system has, a minimal container included: Essential or Priority
    required (debootstrap's minbase; "important" ones such as iproute2 are often absent)."""
    r = run(["dpkg-query", "-W", "-f", "${Package}\t${Essential}\t${Priority}\n"])
    return frozenset(p for p, ess, prio in (ln.split("\t") for ln in r.stdout.splitlines())
                     if ess == "yes" or prio == "required")


# -- Perl --------------------------------------------------------------------------------------
PERL_DIRS = (ROOT / "clients" / "perl", ROOT / "perf" / "loops")


_PERL_STMT = re.compile(
    r"(?:^|[;{])\s*(?:use|require)\s+([A-Za-z_]\w*(?:::\w+)*)(?:\s+([^;]*))?", re.MULTILINE)


def _perl_code(text: str) -> str:
    """The text without POD, here-documents and comments (crudely: a '#' outside quotes)."""
    text = re.sub(r"^=[a-zA-Z].*?^=cut\b.*?$", "", text, flags=re.MULTILINE | re.DOTALL)
    lines, heredoc = [], None
    for line in text.splitlines():
        if heredoc is not None:
            if line.strip() == heredoc:
                heredoc = None
            lines.append("")
            continue
        m = re.search(r"<<~?\s*[\"']?(\w+)[\"']?", line)
        if m:
            heredoc = m.group(1)
        lines.append(re.sub(r"(^|\s)#.*$", r"\1", line))
    return "\n".join(lines)


def perl_requirements() -> dict[str, list[str]]:
    """Module -> the files that load it (pragmas and the project's own modules left out)."""
    files = sorted(p for d in PERL_DIRS for p in [*d.glob("*.pl"), *d.glob("*.pm")])
    own = {p.stem for p in files if p.suffix == ".pm"}  # Common, Tuned, ...: found beside them
    found: dict[str, list[str]] = {}
    for f in files:
        code = _perl_code(f.read_text())
        for m in _PERL_STMT.finditer(code):
            mod, rest = m.group(1), m.group(2) or ""
            names = [mod]
            if mod in ("parent", "base"):  # use parent qw(A B) / 'A': they load A and B
                names += [n for n in re.findall(r"[A-Za-z_]\w*(?:::\w+)+|[A-Z]\w*", rest)
                          if n != "norequire"]
            for n in names:
                if n.islower() and n not in ("parent", "base") or n in own:
                    continue  # pragma (strict, warnings, lib...): the core check below covers
                found.setdefault(n, []).append(rel(f))
        for pragma in re.findall(r"(?:^|[;{])\s*use\s+([a-z]\w*)\b", code, re.MULTILINE):
            found.setdefault(pragma, []).append(rel(f))
    return found


@functools.cache
def _perl_core(modules: tuple[str, ...]) -> dict[str, bool]:
    r = run(["perl", "-MModule::CoreList", "-e",
              ('print "$_\\t", (Module::CoreList::is_core($_, undef, $]) ? 1 : 0), "\\n" '
               "for @ARGV"), *modules])
    assert r.returncode == 0, r.stderr
    return {m: v == "1" for m, v in (ln.split("\t") for ln in r.stdout.splitlines())}


@functools.cache
def _perl_file(module: str) -> str | None:
    """The file ``require Module`` would load (searched in @INC, not loaded)."""
    rel = module.replace("::", "/") + ".pm"
    r = run(["perl", "-e", 'for (@INC) { if (-f "$_/$ARGV[0]") { print "$_/$ARGV[0]"; last } }',
              rel])
    return r.stdout.strip() or None


def perl_package(module: str) -> tuple[str | None, str]:
    """The Debian package of ``module`` and how it was found."""
    path = _perl_file(module)
    if path:
        pkg = owner(path)
        if pkg:
            return pkg, f"dpkg -S {path}"
        return None, f"{path} is not from a Debian package"
    guess = "lib" + module.lower().replace("::", "-") + "-perl"
    if _apt_knows(guess):
        return guess, f"not installed; Debian's name for it is {guess}"
    return None, f"not installed, and apt knows no {guess}"


def perl_problems(packages: list[str]) -> list[str]:
    reqs = perl_requirements()
    core = _perl_core(tuple(sorted(reqs)))
    installed = closure(packages)
    problems = []
    for mod, where in sorted(reqs.items()):
        if core[mod]:
            continue
        pkg, how = perl_package(mod)
        files = ", ".join(sorted(set(where)))
        if pkg is None:
            problems.append(f"perl: {mod} ({files}) is not core and has no Debian package: {how}")
        elif pkg not in installed:
            problems.append(f"perl: {mod} ({files}) comes from {pkg} ({how}), which ./bench setup "
                            "does not install (neither in APT_PACKAGES nor a Depends of one)")
    return problems
