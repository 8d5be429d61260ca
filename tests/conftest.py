"""Shared fixtures: real brokers in throwaway directories, client processes, and a check that
no test leaves a process of ours behind."""

from __future__ import annotations

import functools
import gc
import json
import os
import re
import subprocess
import sys
import uuid
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# The client JVMs the tests start live a few seconds: C1 alone (no C2 compiler threads) takes
# a third less CPU than the default tiers (an Akka bridge pair of 1,050 messages 7.3 CPU-s
# against 11.6, a JMS pair 3.0 against 4.2). Behaviour is the same; a sweep's figures are
# measured with the default (the sweep marker's fixture below takes it away). It reaches
# the brokers the tests start as well.
os.environ.setdefault("BURSTBENCH_JAVA_OPTS", "-XX:TieredStopAtLevel=1")

from burstbench import clients, paths  # noqa: E402
from burstbench.infra import brokers  # noqa: E402
from burstbench.infra.procs import Supervisor  # noqa: E402


def need_broker_built():
    if not paths.BROKER_CLASSES.exists():
        pytest.skip("broker not built (./bench setup)")


@pytest.fixture
def sup(tmp_path):
    s = Supervisor(tmp_path / "logs")
    yield s
    s.stop_all()


@pytest.fixture
def broker(sup, tmp_path):
    """A fresh non-persistent broker on free loopback ports."""
    need_broker_built()
    return brokers.start(sup, brokers.BrokerSpec(name="t"), tmp_path)


@pytest.fixture(scope="module")
def shared_broker(tmp_path_factory, request):
    """One non-persistent broker for a whole test module (each test uses its own queues)."""
    need_broker_built()
    name = request.module.__name__.rsplit(".", 1)[-1].removeprefix("test_")
    work = tmp_path_factory.mktemp(f"{name}-broker")
    sup = Supervisor(work / "logs")
    try:
        yield brokers.start(sup, brokers.BrokerSpec(name=name.replace("_", "-")), work)
    finally:
        sup.stop_all()


def outside(broker) -> list[str]:
    """``PointSpec(broker_urls=...)`` for a point on ``broker`` (a module's shared one) as on a
    broker the harness did not start: no broker of its own to boot, its counters read through
    the launcher's statistics plugin."""
    return [f"{broker.openwire_url},{broker.stomp_url},{broker.ws_url}"]


@pytest.fixture
def queue_name():
    return f"test.{uuid.uuid4().hex[:10]}"


def client_or_skip(name: str) -> clients.Resolved:
    r = clients.resolve(name)
    why = r.client.missing()
    if why:
        pytest.skip(why)
    return r


def run_client(
    r: clients.Resolved, role: str, args: list[str], timeout: float = 120, **kw
) -> subprocess.CompletedProcess:
    return subprocess.run(
        r.client.argv(role) + args, capture_output=True, text=True, timeout=timeout, **kw,
        check=False
    )


def events(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


# -- result files against schema/*.schema.json ---------------------------------------------------
SCHEMA_DIR = ROOT / "schema"


@functools.cache
def schema_validator(kind: str):
    """The validator of ``schema/<kind>.schema.json`` (kind: ``point`` or ``run``)."""
    from jsonschema import Draft202012Validator

    schema = json.loads((SCHEMA_DIR / f"{kind}.schema.json").read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def schema_errors(kind: str, doc) -> list[str]:
    """Where ``doc`` breaks the schema, one line each (empty: it matches)."""
    errors = sorted(schema_validator(kind).iter_errors(doc), key=lambda e: e.json_path)
    return [f"{e.json_path}: {e.message}" for e in errors]


def check_result_file(path: Path) -> None:
    """Fail unless ``path`` (a run's ``run.json`` or a ``points/*.json``) matches its schema."""
    kind = "run" if path.name == "run.json" else "point"
    errors = schema_errors(kind, json.loads(path.read_text()))
    assert not errors, (f"{path} does not match schema/{kind}.schema.json:\n  "
                        + "\n  ".join(errors[:20]))


def result_files(root: Path) -> list[Path]:
    """Every run manifest and point file in the run directories under ``root``."""
    out = []
    for manifest in sorted(Path(root).rglob("run.json")):
        if (manifest.parent / "points").is_dir():
            out += [manifest, *sorted((manifest.parent / "points").glob("*.json"))]
    return out


@pytest.fixture(autouse=True)
def _sweeps_measure_with_the_default_jvm(request, monkeypatch):
    """A sweep point's figures come from client JVMs with the bench's own options alone."""
    if request.node.get_closest_marker("sweep"):
        monkeypatch.delenv("BURSTBENCH_JAVA_OPTS", raising=False)


@pytest.fixture(autouse=True)
def _result_files_match_the_schema(request):
    """Every run and point file a test leaves in its ``tmp_path`` (the harness writes there
    whenever a test sets BURSTBENCH_RESULTS or a Run's root) matches schema/, checked when
    the test ends. Tests that write hand-made partial files on purpose say so with
    ``@pytest.mark.hand_made_results``."""
    tmp = request.getfixturevalue("tmp_path") if "tmp_path" in request.fixturenames else None
    yield
    if tmp is None or request.node.get_closest_marker("hand_made_results"):
        return
    for path in result_files(tmp):
        check_result_file(path)


@pytest.fixture(autouse=True)
def _resources_left_to_the_collector(request):
    """Collect garbage after each test, so that a pipe or file a test left open is finalized
    here and named with that test, not inside whichever later test happens to trigger the
    collector (the 60 s soak did: pytest turned 8 pipes some earlier test had left behind
    into its failure). Named on the terminal, not failed: the later test's verdict is about
    what it tests."""
    yield
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        gc.collect()
    # what outlived the test (modules, a module's fixtures) is set aside from later
    # collections: each test's collection then scans only what tests made since, not the
    # whole heap again (80 ms a test, a minute and a half a suite); at each module's end the
    # set-aside objects are scanned once more (_module_leftovers_to_the_collector)
    gc.freeze()
    leaks = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    if leaks:
        print(f"\nresources left open by or before {request.node.nodeid}: {len(leaks)}: "
              + "; ".join(leaks[:4]), file=sys.__stderr__)


@pytest.fixture(autouse=True, scope="module")
def _module_leftovers_to_the_collector():
    """After a module's last test (its module-scoped fixtures gone), the objects set aside by
    the tests' collections go back to the collector: the next test's collection scans them."""
    yield
    gc.unfreeze()


# -- tiers and skips ---------------------------------------------------------------------------
# A test's kind is its folder: unit/ (pure logic, no process of the bench's), contract/ (client
# programs against clients/contract.md), integration/ (real brokers through the harness),
# system/ (set-up, hosts, containers, deployment files). ./bench test --quick runs unit/ and
# the contract's smoke tests (@pytest.mark.smoke), the default the rest but the `full` tier.
KINDS = ("unit", "contract", "integration", "system")

# The only reasons a test may skip and the run still pass: facts of the machine that set-up
# cannot change. Anything else (a client set-up should have built, a package it should have
# installed) fails the run.
DECLARED_SKIPS = {
    "not root": re.compile(r"\broot\b"),
    "netem on this kernel": re.compile(r"\bnetem\b"),
    "fewer than two CPUs": re.compile(r"needs two CPUs"),
}


# Entries built from another entry's sources (pekko-bridge/pom.xml filters akka-bridge's):
# a behaviour is checked once, on the source's entry; the twin runs in the default tier only
# the tests that prove its own build and runtime work (a burst, TLS with a login, the HTTP
# route), and every other case in the full tier.
SOURCE_TWINS = {"pekko-bridge": "akka-bridge"}
TWIN_DEFAULT_TESTS = {"test_ten_thousand_burst_exact_accounting",
                      "test_round_trip_over_tls_with_credentials",
                      "test_bursts_through_the_broker_route"}


def _twin_case(item) -> bool:
    params = getattr(getattr(item, "callspec", None), "params", {}) or {}
    return (any(isinstance(v, str) and v in SOURCE_TWINS for v in params.values())
            and getattr(item, "originalname", item.name) not in TWIN_DEFAULT_TESTS)


def pytest_collection_modifyitems(config, items):
    for item in items:
        kind = Path(str(item.fspath)).parent.name
        if kind in KINDS:
            item.add_marker(getattr(pytest.mark, kind))
        if kind in ("contract", "integration") and _twin_case(item):
            item.add_marker(pytest.mark.full)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if not rep.skipped or hasattr(rep, "wasxfail"):
        return
    reason = str(rep.longrepr[2] if isinstance(rep.longrepr, tuple) else rep.longrepr)
    if any(p.search(reason) for p in DECLARED_SKIPS.values()):
        return
    rep.outcome = "failed"
    rep.longrepr = (f"skipped for a reason not on the declared list "
                    f"({', '.join(DECLARED_SKIPS)}): {reason}")


def play_recap(out: str) -> dict[str, dict[str, int]]:
    """ansible-playbook's PLAY RECAP counts per host: {host: {"ok": n, "changed": n, ...}}."""
    got = {}
    for line in out.splitlines():
        if " : ok=" in line:
            host, _, rest = line.partition(" : ")
            got[host.strip()] = {k: int(v) for k, v in (p.split("=") for p in rest.split())}
    return got
