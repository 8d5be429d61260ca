"""The Python imports of the harness, clients and tests against pyproject.toml and
requirements.lock (tests/system/test_dependencies.py)."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

from conftest import ROOT
from deps_debian import (
    rel,
)

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
                found.setdefault(n.split(".")[0], []).append(rel(f))
    return found


def _canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def req_name(req: str) -> str:
    return _canon(re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", req).group(1))


def python_declared(extras: tuple[str, ...] = (), text: str | None = None) -> dict[str, str]:
    """Canonical distribution name -> its requirement line in pyproject.toml's dependencies
    and those of the named extras."""
    project = tomllib.loads(PYPROJECT.read_text() if text is None else text)["project"]
    reqs = list(project["dependencies"])
    for e in extras:
        reqs += project.get("optional-dependencies", {})[e]
    return {req_name(r): r for r in reqs}


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
        todo.extend(req_name(r) for r in reqs if not re.search(r"\bextra\s*==", r))
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
