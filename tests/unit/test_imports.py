"""The modules of ``burstbench`` import each other without a circle.

Every ``import`` counts, also those inside functions (a lazy import hides a circle from the
interpreter, not from a reader): the graph of module -> module it imports must be acyclic.
And every module imports on its own, in a fresh interpreter, in any order.
"""

from __future__ import annotations

import ast
import subprocess
import sys

from conftest import ROOT

PACKAGES = ("burstbench",)


def modules() -> dict[str, ast.Module]:
    return {".".join(p.relative_to(ROOT).with_suffix("").parts): ast.parse(p.read_text(), str(p))
            for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))
            # sub-packages too (burstbench/faults/, burstbench/studies/pi/)
            if p.stem != "__init__"}


def graph(mods: dict[str, ast.Module]) -> dict[str, set[str]]:
    """Module -> the project modules it imports, from anywhere in its source."""
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for name, tree in mods.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            else:
                continue
            edges[name] |= {t for t in targets if t in mods and t != name}
    return edges


def cycle(edges: dict[str, set[str]]) -> list[str]:
    """One import circle as a path (first module repeated at the end), or []."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(m: str) -> list[str]:
        state[m] = 1
        path.append(m)
        for n in sorted(edges[m]):
            if state.get(n) == 1:
                return path[path.index(n):] + [n]
            if n not in state and (found := visit(n)):
                return found
        path.pop()
        state[m] = 2
        return []

    for m in sorted(edges):
        if m not in state and (found := visit(m)):
            return found
    return []


def test_the_cycle_finder_finds_a_circle_and_accepts_a_tree():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []
    lazy = ast.parse("def f():\n    from harness import b\n")
    assert graph({"harness.a": lazy, "harness.b": ast.parse("")})["harness.a"] == {"harness.b"}


def test_no_module_of_burstbench_imports_itself_through_others():
    edges = graph(modules())
    assert sum(map(len, edges.values())) > 50  # the scan does see the imports
    found = cycle(edges)
    assert not found, "import circle: " + " -> ".join(found)


def test_every_module_imports_on_its_own():
    names = sorted(modules())
    code = ("import importlib, sys\n"
            "for name in sys.argv[1:]:\n"
            "    for m in [k for k in sys.modules if k.split('.')[0] == 'burstbench']:\n"
            "        del sys.modules[m]\n"
            "    importlib.import_module(name)\n")
    r = subprocess.run([sys.executable, "-c", code, *names], cwd=ROOT, capture_output=True,
                       text=True, timeout=120, check=False)
    assert r.returncode == 0, r.stderr[-2000:]


def test_plots_read_result_files_and_run_nothing():
    """The Architecture's promise: ``burstbench/plots/`` reads result files and imports nothing
    that brings up a point (brokers, databases, namespaces, a stack, the runner, a fault or a
    study), directly or through another module."""
    edges = graph(modules())
    seen: set[str] = set()
    todo = [m for m in edges if m.startswith("burstbench.plots.")]
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo.extend(edges[m])
    runs = ("burstbench.infra.brokers", "burstbench.infra.databases", "burstbench.infra.netns",
            "burstbench.infra.stack", "burstbench.infra.launch", "burstbench.measure.runner",
            "burstbench.measure.points", "burstbench.faults.", "burstbench.studies.")
    bad = sorted(m for m in seen if m.startswith(runs) and m != "burstbench.plots.reliability")
    assert "burstbench.plots.reliability" in seen  # the report's reliability table: pure
    assert not bad, f"burstbench.plots reaches {bad}"


# the layers, lowest first: a module imports from its own layer and those below it only.
# The base is what every layer reads (where things are, the option table, the client
# registry, the profiles, the errors, the statistics); plots reads result files (above
# measure, whose results module reads and writes them) and draws for the studies and faults
# above it.
LAYERS = (
    ("base", ("burstbench.paths", "burstbench.errors", "burstbench.options",
              "burstbench.clients", "burstbench.profiles", "burstbench.stats")),
    ("infra", ("burstbench.infra.",)),
    ("measure", ("burstbench.measure.",)),
    ("plots", ("burstbench.plots.",)),
    ("studies and faults", ("burstbench.studies.", "burstbench.faults.")),
)


def layer(module: str) -> int:
    """The index of ``module``'s layer in LAYERS; the top (commands, cli, sweep) above all."""
    for i, (_name, prefixes) in enumerate(LAYERS):
        if any(module == p or (p.endswith(".") and module.startswith(p)) for p in prefixes):
            return i
    return len(LAYERS)


def upward(edges: dict[str, set[str]]) -> list[tuple[str, str]]:
    return sorted((m, t) for m, ts in edges.items() for t in ts if layer(t) > layer(m))


def private_uses(mods: dict[str, ast.Module]) -> list[str]:
    """``from burstbench.x import _name`` and ``x._name`` on a module imported from burstbench,
    in another module than the one that defines it."""
    found = []
    for name, tree in mods.items():
        aliases = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("burstbench"):
                for a in node.names:
                    if a.name.startswith("_") and not a.name.startswith("__"):
                        found.append(f"{name}: from {node.module} import {a.name}")
                    if f"{node.module}.{a.name}" in mods:
                        aliases[a.asname or a.name] = f"{node.module}.{a.name}"
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name in mods and a.asname:
                        aliases[a.asname] = a.name
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in aliases and node.attr.startswith("_")
                    and not node.attr.startswith("__")):
                found.append(f"{name}: {aliases[node.value.id]}.{node.attr}")
    return sorted(set(found))


def test_the_layer_and_privacy_checks_find_what_they_look_for():
    assert layer("burstbench.infra.stack") < layer("burstbench.measure.runner") < \
        layer("burstbench.sweep")
    assert layer("burstbench.paths") == 0
    assert upward({"burstbench.infra.x": {"burstbench.measure.y"},
                   "burstbench.measure.y": {"burstbench.infra.x"}}) == \
        [("burstbench.infra.x", "burstbench.measure.y")]
    mods = {"burstbench.infra.a": ast.parse("def _h(): pass\n"),
            "burstbench.infra.b": ast.parse("from burstbench.infra import a\n"
                                            "from burstbench.infra.a import _h\na._h()\n")}
    assert private_uses(mods) == ["burstbench.infra.b: burstbench.infra.a._h",
                                  "burstbench.infra.b: from burstbench.infra.a import _h"]


def test_imports_go_down_the_layers_only():
    bad = upward(graph(modules()))
    assert not bad, "imports up the layers (infra < measure < plots < studies/faults < top): " \
        + "; ".join(f"{m} -> {t}" for m, t in bad)


def test_no_module_uses_another_modules_private_names():
    """Nor does a test: it reads a module as its users do."""
    tests = {".".join(p.relative_to(ROOT).with_suffix("").parts): ast.parse(p.read_text(), str(p))
             for p in sorted((ROOT / "tests").rglob("*.py"))}
    bad = private_uses({**modules(), **tests})
    assert not bad, "private names used from another module: " + "; ".join(bad)


def test_every_throwaway_password_is_drawn_in_one_place():
    """A password the harness makes goes on command lines (keytool takes ``-J...`` for its
    JVM), into XML and URLs: burstbench/infra/secret.py draws hex only, and no module draws a
    url-safe token (``-`` and ``_`` among its characters)."""
    import re

    from burstbench.infra import secret

    assert all(re.fullmatch(r"[0-9a-f]{36}", secret.throwaway()) for _ in range(200))
    own = [f"{name}:{node.lineno}" for name, tree in modules().items()
           for node in ast.walk(tree)
           if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
           and node.value.id == "secrets" and node.attr == "token_urlsafe"]
    assert own == [], own
