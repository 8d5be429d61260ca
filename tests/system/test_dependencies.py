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

import ast
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
from conftest import ROOT

from burstbench import clients

BENCH = ROOT / "bench"
HAVE_DEBIAN_TOOLS = all(shutil.which(t) for t in ("dpkg", "dpkg-query", "apt-cache"))
needs_debian = pytest.mark.skipif(
    not HAVE_DEBIAN_TOOLS, reason="needs dpkg, dpkg-query and apt-cache (a Debian system)")


def _rel(p: Path) -> str:
    return str(p.relative_to(ROOT))


def _run(argv: list[str], timeout: float = 120) -> subprocess.CompletedProcess:
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
def _owner(path: str) -> str | None:
    """The package that installed ``path`` (merged /usr: also tried without the /usr prefix)."""
    candidates = [path]
    if path.startswith("/usr/"):
        candidates.append(path[4:])
    for c in candidates:
        r = _run(["dpkg", "-S", c])
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
    r = _run(["apt-cache", "depends", "--no-recommends", "--no-suggests", "--no-conflicts",
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


def _closure(roots) -> set[str]:
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
    r = _run(["apt-cache", "show", "--no-all-versions", pkg])
    return r.returncode == 0 and "Package:" in r.stdout


@functools.cache
def _base_system() -> frozenset[str]:
    """Packages every Debian system has, a minimal container included: Essential or Priority
    required (debootstrap's minbase; "important" ones such as iproute2 are often absent)."""
    r = _run(["dpkg-query", "-W", "-f", "${Package}\t${Essential}\t${Priority}\n"])
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
                found.setdefault(n, []).append(_rel(f))
        for pragma in re.findall(r"(?:^|[;{])\s*use\s+([a-z]\w*)\b", code, re.MULTILINE):
            found.setdefault(pragma, []).append(_rel(f))
    return found


@functools.cache
def _perl_core(modules: tuple[str, ...]) -> dict[str, bool]:
    r = _run(["perl", "-MModule::CoreList", "-e",
              ('print "$_\\t", (Module::CoreList::is_core($_, undef, $]) ? 1 : 0), "\\n" '
               "for @ARGV"), *modules])
    assert r.returncode == 0, r.stderr
    return {m: v == "1" for m, v in (ln.split("\t") for ln in r.stdout.splitlines())}


@functools.cache
def _perl_file(module: str) -> str | None:
    """The file ``require Module`` would load (searched in @INC, not loaded)."""
    rel = module.replace("::", "/") + ".pm"
    r = _run(["perl", "-e", 'for (@INC) { if (-f "$_/$ARGV[0]") { print "$_/$ARGV[0]"; last } }',
              rel])
    return r.stdout.strip() or None


def perl_package(module: str) -> tuple[str | None, str]:
    """The Debian package of ``module`` and how it was found."""
    path = _perl_file(module)
    if path:
        pkg = _owner(path)
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
    installed = _closure(packages)
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


# -- Python ----------------------------------------------------------------------------------
# what runs, checked against pyproject.toml's dependencies; the tests, against those and the
# test extra (./bench setup installs both, from requirements.lock)
PY_SOURCES = ("clients/python/*.py", "burstbench/**/*.py", "perf/loops/*.py")
PY_TEST_SOURCES = ("tests/*.py", "tests/*/*.py")
PYPROJECT = ROOT / "pyproject.toml"
LOCK = ROOT / "requirements.lock"


def _py_files(patterns=PY_SOURCES) -> list[Path]:
    return sorted({p for pattern in patterns for p in ROOT.glob(pattern)})


def python_imports(patterns=PY_SOURCES) -> dict[str, list[str]]:
    """Top-level module -> files importing it (absolute imports, and importlib on a literal)."""
    found: dict[str, list[str]] = {}
    for f in _py_files(patterns):
        tree = ast.parse(f.read_text(), str(f))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            elif (isinstance(node, ast.Call) and node.args
                  and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
                  and ast.unparse(node.func) in ("importlib.import_module", "__import__")):
                names = [node.args[0].value]
            for n in names:
                found.setdefault(n.split(".")[0], []).append(_rel(f))
    return found


def _canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _req_name(req: str) -> str:
    return _canon(re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", req).group(1))


def python_declared(extras: tuple[str, ...] = (), text: str | None = None) -> dict[str, str]:
    """Canonical distribution name -> its requirement line in pyproject.toml's dependencies
    and those of the named extras."""
    project = tomllib.loads(PYPROJECT.read_text() if text is None else text)["project"]
    reqs = list(project["dependencies"])
    for e in extras:
        reqs += project.get("optional-dependencies", {})[e]
    return {_req_name(r): r for r in reqs}


def _required_by(dists) -> set[str]:
    """``dists`` and what they require (extras left out), transitively, as installed."""
    seen: set[str] = set()
    todo = list(dists)
    while todo:
        d = todo.pop()
        if d in seen:
            continue
        seen.add(d)
        try:
            reqs = metadata.requires(d) or []
        except metadata.PackageNotFoundError:
            continue
        todo.extend(_req_name(r) for r in reqs if not re.search(r"\bextra\s*==", r))
    return seen


def python_problems(patterns=PY_SOURCES, extras: tuple[str, ...] = (),
                    own_dirs: tuple[Path, ...] = ()) -> list[str]:
    imports = python_imports(patterns)
    setup = tomllib.loads(PYPROJECT.read_text())
    own = set(setup.get("tool", {}).get("setuptools", {}).get("packages", []))
    declared = python_declared(extras)
    indirect = _required_by(declared)
    dist_of = metadata.packages_distributions()
    where_declared = "pyproject.toml" + (f" (dependencies, extra {', '.join(extras)})"
                                         if extras else "'s dependencies")
    problems = []
    for mod, where in sorted(imports.items()):
        if mod in sys.stdlib_module_names or mod in own:
            continue
        # a module beside the importing file (clients/python/common.py) is the project's own
        if all((ROOT / w).with_name(mod + ".py").exists() or (ROOT / w).with_name(mod).is_dir()
               for w in where):
            continue
        if any((d / (mod + ".py")).exists() for d in own_dirs):
            continue  # a folder of the project's own that the importing tests put on sys.path
        files = ", ".join(sorted(set(where)))
        dists = [_canon(d) for d in dist_of.get(mod, [])]
        if not dists:
            problems.append(f"python: {mod} ({files}) is neither stdlib, the project's own, nor "
                            "from an installed distribution (so not from pyproject.toml)")
            continue
        direct = [d for d in dists if d in declared]
        if direct:
            for d in direct:
                if "==" not in declared[d]:
                    problems.append(f"python: {mod} ({files}) comes from {declared[d]!r}, "
                                    "not pinned (==) in pyproject.toml")
        elif not any(d in indirect for d in dists):
            problems.append(f"python: {mod} ({files}) comes from {', '.join(dists)}, which "
                            f"{where_declared} neither name nor require")
    return problems


def python_indirect() -> list[str]:
    """Imported distributions reached only through a declared one's requirements."""
    declared = python_declared()
    dist_of = metadata.packages_distributions()
    out = []
    for mod in sorted(python_imports()):
        dists = [_canon(d) for d in dist_of.get(mod, [])]
        if dists and mod not in sys.stdlib_module_names and not any(d in declared
                                                                    for d in dists):
            out.append(f"{mod} ({', '.join(dists)})")
    return out


def lock_pins(text: str | None = None) -> tuple[dict[str, tuple[str, int]], list[str]]:
    """requirements.lock as {canonical name: (version, number of hashes)}, and its lines that
    are neither a pin, a hash nor a comment (an index, a find-links path: none belong there)."""
    text = LOCK.read_text() if text is None else text
    pins: dict[str, tuple[str, int]] = {}
    other: list[str] = []
    current = None
    for line in text.splitlines():
        s = line.strip().removesuffix("\\").strip()
        if not s or s.startswith("#"):
            continue
        m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;]+)", s)
        if m:
            current = _canon(m.group(1))
            pins[current] = (m.group(2), 0)
        elif s.startswith("--hash=sha256:") and current is not None:
            version, n = pins[current]
            pins[current] = (version, n + 1)
        else:
            other.append(s)
    return pins, other


def _extras() -> tuple[str, ...]:
    return tuple(tomllib.loads(PYPROJECT.read_text())["project"].get("optional-dependencies", {}))


def lock_problems(pyproject_text: str | None = None, lock_text: str | None = None) -> list[str]:
    """Where pyproject.toml (dependencies and every extra) and requirements.lock disagree: a
    pin the lock has at another version or not at all, a lock entry without a hash, an option
    line. ``./bench lock`` writes the lock from pyproject.toml."""
    text = PYPROJECT.read_text() if pyproject_text is None else pyproject_text
    extras = tuple(tomllib.loads(text)["project"].get("optional-dependencies", {}))
    pins, other = lock_pins(lock_text)
    problems = [f"lock: {line!r} is not a pin or a hash (./bench lock writes none)"
                for line in other]
    for name, req in sorted(python_declared(extras, text).items()):
        m = re.search(r"==\s*([^\s;,]+)", req)
        if not m:
            problems.append(f"pyproject.toml: {req!r} is not pinned (==)")
        elif name not in pins:
            problems.append(f"pyproject.toml pins {req!r}; requirements.lock has no {name} "
                            "(run ./bench lock)")
        elif pins[name][0] != m.group(1):
            problems.append(f"pyproject.toml pins {req!r}; requirements.lock has "
                            f"{name}=={pins[name][0]} (run ./bench lock)")
    problems += [f"lock: {name}=={v} has no --hash" for name, (v, n) in sorted(pins.items())
                 if n == 0]
    return problems


def lock_closure_problems() -> list[str]:
    """The lock is the whole tree: every locked distribution's requirements (as installed here,
    markers evaluated for this interpreter, extras followed where asked for) are locked too,
    and nothing is locked that pyproject.toml's requirements do not reach."""
    from packaging.requirements import Requirement

    pins, _ = lock_pins()
    declared = python_declared(_extras())
    reached: set[str] = set()
    todo = [(name, frozenset(Requirement(req).extras)) for name, req in declared.items()]
    problems = []
    while todo:
        name, extras = todo.pop()
        if (name, extras) in reached:
            continue
        reached.add((name, extras))
        if name not in pins:
            problems.append(f"lock: {name} is required but not locked (run ./bench lock)")
            continue
        try:
            reqs = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            problems.append(f"lock: {name} is locked but not installed (run ./bench setup)")
            continue
        for r in map(Requirement, reqs):
            envs = [{"extra": e} for e in extras] or [{"extra": ""}]
            if r.marker is None or any(r.marker.evaluate(env) for env in envs):
                todo.append((_canon(r.name), frozenset(r.extras)))
    strays = set(pins) - {name for name, _ in reached}
    problems += [f"lock: {name} is locked but nothing in pyproject.toml requires it"
                 for name in sorted(strays)]
    return problems


# -- Node --------------------------------------------------------------------------------------
NODE_SOURCES = ("clients/node/*.mjs", "clients/node/*.js", "clients/node/browser/*.mjs",
                "perf/loops/*.mjs")
_NODE_SPEC = re.compile(
    r"""(?:\bimport\s*(?:[\w*{}\s,]*?\sfrom\s*)?|\bexport\s[\w*{}\s,]*?\sfrom\s*|"""
    r"""\bimport\s*\(\s*|\bimport\.meta\.resolve\(\s*|\brequire\s*\(\s*)['"]([^'"]+)['"]""")


def node_imports() -> dict[str, list[str]]:
    """Package name (or ``node:x`` / built-in) -> files importing it."""
    found: dict[str, list[str]] = {}
    for f in sorted({p for pat in NODE_SOURCES for p in ROOT.glob(pat)}):
        text = re.sub(r"/\*.*?\*/|//[^\n]*", "", f.read_text(), flags=re.DOTALL)
        for spec in _NODE_SPEC.findall(text):
            if spec.startswith((".", "/")):
                m = re.search(r"node_modules/((?:@[^/]+/)?[^/]+)", spec)
                if not m:
                    continue  # the project's own file
                spec = m.group(1)
            parts = spec.split("/")
            name = "/".join(parts[:2]) if spec.startswith("@") else parts[0]
            found.setdefault(name, []).append(_rel(f))
    return found


@functools.cache
def _node_builtins() -> frozenset[str]:
    r = _run(["node", "-p", "JSON.stringify(require('module').builtinModules)"])
    assert r.returncode == 0, r.stderr
    return frozenset(json.loads(r.stdout))


def node_problems() -> list[str]:
    pkg = json.loads((ROOT / "clients" / "node" / "package.json").read_text())
    deps = pkg.get("dependencies", {})
    lock = json.loads((ROOT / "clients" / "node" / "package-lock.json").read_text())
    locked = lock.get("packages", {})
    problems = []
    for name, where in sorted(node_imports().items()):
        if name.startswith("node:") or name in _node_builtins():
            continue
        files = ", ".join(sorted(set(where)))
        if name not in deps:
            problems.append(f"node: {name} ({files}) is not a dependency in "
                            "clients/node/package.json")
            continue
        entry = locked.get(f"node_modules/{name}")
        if entry is None:
            problems.append(f"node: {name} ({files}) is missing from package-lock.json")
        elif re.fullmatch(r"\d+\.\d+\.\d+", deps[name]) and entry.get("version") != deps[name]:
            problems.append(f"node: {name} is {deps[name]} in package.json but "
                            f"{entry.get('version')} in package-lock.json")
    return problems


# -- Java --------------------------------------------------------------------------------------
def java_modules() -> dict[str, Path]:
    """artifactId -> module directory, for every module of the root pom."""
    ns = {"m": "http://maven.apache.org/POM/4.0.0"}
    import xml.etree.ElementTree as ET

    root = ET.parse(ROOT / "pom.xml").getroot()
    out = {}
    for mod in root.findall("m:modules/m:module", ns):
        d = ROOT / mod.text.strip()
        aid = ET.parse(d / "pom.xml").getroot().find("m:artifactId", ns).text.strip()
        out[aid] = d
    return out


@functools.cache
def maven_jars() -> dict[str, dict[str, list[Path]]]:
    """artifactId -> {"main": compile+runtime jars, "test": all} as Maven resolves the poms."""
    # package first: a module another depends on (broker/protocol) resolves from the reactor,
    # not from a local repository it was never installed in
    r = _run(["mvn", "-o", "-B", "package", "-DskipTests", "dependency:list", "-DincludeScope=test",
              "-DoutputAbsoluteArtifactFilename=true"], timeout=300)
    assert r.returncode == 0, "mvn dependency:list failed:\n" + r.stdout[-3000:]
    out: dict[str, dict[str, list[Path]]] = {}
    current = None
    for line in r.stdout.splitlines():
        m = re.search(r"maven-dependency-plugin:[^:]+:list \(default-cli\) @ (\S+) ---", line)
        if m:
            current = out.setdefault(m.group(1), {"main": [], "test": []})
            continue
        m = re.match(r"\[INFO\]\s+\S+:\S+:\S+:(?:\S+:)?\S+:(compile|runtime|provided|test|system)"
                     r":(/\S+\.jar)", line)
        if m and current is not None:
            jar = Path(m.group(2))
            current["test"].append(jar)
            if m.group(1) in ("compile", "runtime"):
                current["main"].append(jar)
    return out


@functools.cache
def _jar_classes(jar: Path) -> frozenset[str]:
    with zipfile.ZipFile(jar) as z:
        return frozenset(n[:-6] for n in z.namelist() if n.endswith(".class"))


@functools.cache
def _jdk_classes() -> frozenset[str]:
    java = Path(os.path.realpath(shutil.which("java")))
    image = java.parent.parent / "lib" / "modules"
    r = _run(["jimage", "list", str(image)] if shutil.which("jimage") else
             [str(java.parent / "jimage"), "list", str(image)])
    assert r.returncode == 0, r.stderr
    return frozenset(ln.strip()[:-6] for ln in r.stdout.splitlines()
                     if ln.strip().endswith(".class"))


_JAVA_IMPORT = re.compile(r"^\s*import\s+(static\s+)?([\w.]+(?:\.\*)?)\s*;", re.MULTILINE)


def _own_classes(src: Path) -> set[str]:
    out = set()
    for f in src.rglob("*.java"):
        m = re.search(r"^\s*package\s+([\w.]+)\s*;", f.read_text(), re.MULTILINE)
        out.add(((m.group(1).replace(".", "/") + "/") if m else "") + f.stem)
    return out


def _resolves(name: str, static: bool, classes, packages, own) -> bool:
    parts = name.split(".")
    if parts[-1] == "*":
        parts = parts[:-1]
        if not static:
            return "/".join(parts) in packages
    elif static:
        parts = parts[:-1]  # the member
    for i in range(len(parts), 0, -1):  # a.b.C.D is a/b/C$D
        outer = "/".join(parts[:i])
        if outer in own:
            return True
        if (outer + "".join("$" + p for p in parts[i:])) in classes:
            return True
    return False


def java_problems() -> list[str]:
    jdk = _jdk_classes()
    resolved = maven_jars()
    problems = []
    for aid, d in sorted(java_modules().items()):
        main_own = _own_classes(d / "src" / "main" / "java")
        for scope, src in (("main", d / "src" / "main" / "java"),
                           ("test", d / "src" / "test" / "java")):
            if not src.is_dir():
                continue
            jars = resolved.get(aid, {}).get(scope, [])
            classes = set(jdk)
            for j in jars:
                classes |= _jar_classes(j)
            packages = {c.rsplit("/", 1)[0] for c in classes if "/" in c}
            own = main_own | (_own_classes(src) if scope == "test" else set())
            for f in sorted(src.rglob("*.java")):
                for static, name in _JAVA_IMPORT.findall(f.read_text()):
                    if not _resolves(name, bool(static), classes, packages, own):
                        problems.append(f"java: {name} ({_rel(f)}) is in neither the JDK nor a "
                                        f"jar {aid}'s pom brings in ({scope} scope)")
    return problems


def java_import_count() -> int:
    return sum(len(_JAVA_IMPORT.findall(f.read_text()))
               for d in java_modules().values() for f in d.rglob("src/**/*.java"))


# -- executables the harness starts --------------------------------------------------------------
EXEC_SOURCES = ("burstbench/**/*.py", "tests/*.py", "tests/*/*.py")
_SUBPROCESS = {"run", "Popen", "call", "check_call", "check_output"}


def _loop_strings(name: str, node: ast.AST, parents: dict) -> list[list[str]] | None:
    """The string values ``name`` takes in the loops around ``node``, as groups of which one
    is needed: ``for tool in ("ip", "tc")`` needs both; ``for alt in alts``, with ``alts``
    unpacked from an outer loop over rows like ``("server", ("mariadbd", "mysqld"))``, needs
    one of each row's. None if the values are not literals."""
    p = parents.get(node)
    while p is not None:
        if isinstance(p, ast.For) and isinstance(p.target, ast.Name) and p.target.id == name:
            if isinstance(p.iter, (ast.Tuple, ast.List)):
                vals = [e.value for e in p.iter.elts if isinstance(e, ast.Constant)]
                return [[v] for v in vals] if len(vals) == len(p.iter.elts) else None
            if isinstance(p.iter, ast.Name):
                return _loop_member(p.iter.id, p, parents)
            return None
        p = parents.get(p)
    return None


def _loop_member(name: str, node: ast.AST, parents: dict) -> list[list[str]] | None:
    p = parents.get(node)
    while p is not None:
        if isinstance(p, ast.For) and isinstance(p.target, ast.Tuple):
            ids = [t.id if isinstance(t, ast.Name) else None for t in p.target.elts]
            if name in ids and isinstance(p.iter, (ast.Tuple, ast.List)):
                k = ids.index(name)
                out = []
                for row in p.iter.elts:
                    if not isinstance(row, ast.Tuple):
                        return None
                    out.append([leaf.value for leaf in ast.walk(row.elts[k])
                                if isinstance(leaf, ast.Constant) and isinstance(leaf.value, str)])
                return out
        p = parents.get(p)
    return None


def _argv0(node: ast.AST) -> ast.AST | None:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _argv0(node.left)
    if isinstance(node, (ast.List, ast.Tuple)) and node.elts:
        return node.elts[0]
    return None


def _names(node: ast.AST, parents: dict) -> list[list[str]] | None:
    """Alternatives groups for an executable expression: each inner list needs one present."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [[node.value]]
    if isinstance(node, ast.Name):
        return _loop_strings(node.id, node, parents) or None
    return None


def executables() -> tuple[dict[tuple[str, ...], list[str]], list[str]]:
    """({alternatives: files}, [unresolved call sites]) for programs the Python code starts or
    looks up: argv[0] literals of subprocess calls and Supervisor.start, shutil.which names."""
    found: dict[tuple[str, ...], list[str]] = {}
    unresolved: list[str] = []
    for f in sorted({p for pat in EXEC_SOURCES for p in ROOT.glob(pat)}):
        tree = ast.parse(f.read_text(), str(f))
        parents = {c: p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = ast.unparse(node.func)
            target = None
            if func in {f"subprocess.{n}" for n in _SUBPROCESS}:
                target = _argv0(node.args[0])
            elif func.endswith("sup.start") and len(node.args) >= 2:
                target = _argv0(node.args[1])
            elif func == "shutil.which":
                parent = parents.get(node)
                if isinstance(parent, ast.BoolOp) and isinstance(parent.op, ast.Or):
                    alts = [a.args[0].value for a in parent.values
                            if isinstance(a, ast.Call) and ast.unparse(a.func) == "shutil.which"
                            and a.args and isinstance(a.args[0], ast.Constant)]
                    if alts:
                        found.setdefault(tuple(alts), []).append(_rel(f))
                        continue
                target = node.args[0]
            else:
                continue
            where = f"{_rel(f)}:{node.lineno}"
            if target is None:
                unresolved.append(where)
                continue
            if isinstance(target, ast.Starred) or (
                    isinstance(target, ast.Attribute) and ast.unparse(target) == "sys.executable"):
                continue  # the running Python: a toolchain
            groups = _names(target, parents)
            if groups is None:
                unresolved.append(f"{where} ({ast.unparse(target)})")
                continue
            for g in groups:
                found.setdefault(tuple(g), []).append(_rel(f))
    return found, unresolved


# The toolchains README.md names (Python, a JDK 17 with Maven, Node, Perl): what a user brings
# and set-up does not install. javac stands for "a JDK" (the launcher alone is a JRE).
TOOLCHAINS = ("python3", "java", "javac", "mvn", "node", "npm", "perl")


def _which(name: str) -> str | None:
    path = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])
    return shutil.which(name, path=path)


@functools.cache
def _toolchain_packages() -> frozenset[str]:
    names = {*TOOLCHAINS, *(c.toolchain for c in clients.REGISTRY)}
    found = set()
    for n in names:
        p = _which(n)
        if p:
            for c in (p, os.path.realpath(p)):
                pkg = _owner(c)
                if pkg:
                    found.add(pkg)
    return frozenset(found)


@functools.cache
def _toolchain_dirs() -> frozenset[Path]:
    """Where the toolchains really live, unless that is a shared bin directory: a JDK's
    keytool and jcmd sit beside its java, whether it came from Debian or a tarball."""
    shared = {Path(d) for d in ("/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin")}
    dirs = set()
    for n in {*TOOLCHAINS, *(c.toolchain for c in clients.REGISTRY)}:
        p = _which(n)
        if p:
            d = Path(os.path.realpath(p)).parent
            if d not in shared:
                dirs.add(d)
    return frozenset(dirs)


def _exe_verdict(name: str, allowed: set[str]) -> str | None:
    """None if ``name`` is fine, else why not."""
    if name in TOOLCHAINS or os.path.basename(name) in TOOLCHAINS:
        return None
    path = _which(name)
    if path is None:
        return "not installed here, so its Debian package cannot be named"
    if Path(os.path.realpath(path)).parent in _toolchain_dirs():
        return None
    pkgs = {p for p in (_owner(path), _owner(os.path.realpath(path))) if p}
    if not pkgs:
        return f"{path} is not from a Debian package"
    if pkgs & allowed:
        return None
    return (f"{path} comes from {', '.join(sorted(pkgs))}, which neither ./bench setup "
            "installs, the base system has, nor a toolchain brings")


def executable_problems(packages: list[str]) -> list[str]:
    found, _ = executables()
    allowed = _closure([*packages, *_toolchain_packages(), *_base_system()])
    problems = []
    for alts, where in sorted(found.items()):
        verdicts = [_exe_verdict(a, allowed) for a in alts]
        if all(v is not None for v in verdicts):
            files = ", ".join(sorted(set(where)))
            why = "; ".join(f"{a}: {v}" for a, v in zip(alts, verdicts, strict=True))
            problems.append(f"executable: {' or '.join(alts)} ({files}): {why}")
    return problems


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
    r = _run(["sed", "-n", r"s/^APT_PACKAGES=(\(.*\))$/\1/p", str(BENCH)])
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
    pytest_pin = next(r for r in python_declared(("test",)).values() if _req_name(r) == "pytest")
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
