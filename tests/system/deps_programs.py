"""The Node imports, the Java imports and the executables the harness starts, against
what set-up installs (tests/system/test_dependencies.py)."""

from __future__ import annotations

import ast
import functools
import json
import os
import re
import shutil
import zipfile
from pathlib import Path

from conftest import ROOT
from deps_debian import (
    base_system,
    closure,
    owner,
    rel,
    run,
)

from burstbench import clients

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
            found.setdefault(name, []).append(rel(f))
    return found


@functools.cache
def _node_builtins() -> frozenset[str]:
    r = run(["node", "-p", "JSON.stringify(require('module').builtinModules)"])
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
    r = run(["mvn", "-o", "-B", "package", "-DskipTests", "dependency:list", "-DincludeScope=test",
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
    r = run(["jimage", "list", str(image)] if shutil.which("jimage") else
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
                        problems.append(f"java: {name} ({rel(f)}) is in neither the JDK nor a "
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
                        found.setdefault(tuple(alts), []).append(rel(f))
                        continue
                target = node.args[0]
            else:
                continue
            where = f"{rel(f)}:{node.lineno}"
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
                found.setdefault(tuple(g), []).append(rel(f))
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
                pkg = owner(c)
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
    pkgs = {p for p in (owner(path), owner(os.path.realpath(path))) if p}
    if not pkgs:
        return f"{path} is not from a Debian package"
    if pkgs & allowed:
        return None
    return (f"{path} comes from {', '.join(sorted(pkgs))}, which neither ./bench setup "
            "installs, the base system has, nor a toolchain brings")


def executable_problems(packages: list[str]) -> list[str]:
    found, _ = executables()
    allowed = closure([*packages, *_toolchain_packages(), *base_system()])
    problems = []
    for alts, where in sorted(found.items()):
        verdicts = [_exe_verdict(a, allowed) for a in alts]
        if all(v is not None for v in verdicts):
            files = ", ".join(sorted(set(where)))
            why = "; ".join(f"{a}: {v}" for a, v in zip(alts, verdicts, strict=True))
            problems.append(f"executable: {' or '.join(alts)} ({files}): {why}")
    return problems
