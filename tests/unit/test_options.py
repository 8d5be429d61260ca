"""The contract's option table (clients/options.yaml): well formed, the harness checks every
client command line against it before it starts anything, and every client's --help lists
exactly the table's options for its role."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from conftest import ROOT, client_or_skip, run_client

from burstbench import clients, options
from burstbench.measure.spec import PointSpec

TABLE = options.options()


# -- the table ----------------------------------------------------------------------------------
def test_table_rows_are_complete():
    names = {c.name for c in clients.REGISTRY}
    for o in TABLE.values():
        assert o.type in options.TYPES, o
        assert o.help and "\n" not in o.help, o
        assert set(o.roles) <= set(options.ROLES), o
        assert set(o.only) <= names and set(o.except_) <= names, o
        assert set(o.limits or {}) <= names, o
        if o.type in ("int", "number"):
            for role in o.roles:
                lo, hi = o.bounds("stomp-py", role)
                assert hi is not None and (lo is not None or o.above is not None), o
        if o.pattern:
            re.compile(o.pattern)
        if o.type in ("string", "queues") and o.pattern is None:
            assert o.choices or o.name in ("user", "password"), o
    assert TABLE["url"].required and TABLE["destinations"].required


@pytest.mark.parametrize("name", [o.name for o in TABLE.values() if o.default is not None])
def test_every_default_passes_its_own_check(name):
    o = TABLE[name]
    for role in o.roles:
        d = o.default[role] if isinstance(o.default, dict) else o.default
        for c in clients.REGISTRY:
            if o.applies(c.name, role):
                options.check(_resolved(c.name), role, [f"--{name}", str(d)], complete=False)


def test_the_clients_table_is_the_yaml_resolved():
    """clients/options.tsv, what the clients read, is options.yaml as it is now (regenerate it
    with `python -m burstbench.options`), one row per client, role and option."""
    assert options.CLIENT_TABLE.read_text() == options.render_for_clients(), (
        "clients/options.tsv is stale: run `python -m burstbench.options`")
    rows = [line.split("\t") for line in options.CLIENT_TABLE.read_text().splitlines()[2:]]
    for c in {c.name for c in clients.REGISTRY}:
        for role in options.ROLES:
            assert [r[2] for r in rows if r[:2] == [c, role]] == options.for_client(c, role)


@pytest.mark.parametrize("address, good", [
    ("stomp://127.0.0.1:61613", True), ("stomp+ssl://[::1]:61613", True),
    ("stomp://host:1/x?y=1", True), ("gopher://127.0.0.1:1", False), ("stomp://host", False),
    ("stomp://a:1,stomp://b:2", False), ("tcp://127.0.0.1:61616", False)])
def test_the_clients_address_pattern_is_the_harness_s_check(address, good):
    """The pattern a STOMP client checks --url with agrees with the harness's own check."""
    row = next(line.split("\t") for line in options.CLIENT_TABLE.read_text().splitlines()
               if line.startswith("stomp-py\tproducer\turl\t"))
    assert bool(re.fullmatch(row[9], address)) is good
    try:
        options.check(_resolved("stomp-py"), "producer", ["--url", address], complete=False)
        harness = True
    except options.BadOption:
        harness = False
    assert harness is good


def test_timed_bursts_is_the_table_s_duration():
    """The registry's ``timed_bursts`` (sustained mode) and the table agree."""
    for c in clients.REGISTRY:
        assert c.timed_bursts == ("duration" in options.for_client(c.name, "producer")), c.name


# -- the harness's check ------------------------------------------------------------------------
def _resolved(spec: str) -> clients.Resolved:
    return clients.resolve(spec)


OK = ["--url", "stomp://127.0.0.1:61613", "--destinations", "bb.x.q0,bb.x.q1"]
BAD = [  # (client, role, arguments, what the one line names)
    ("stomp-py", "producer", ["--destinations", "q"], "missing required option --url"),
    ("stomp-py", "producer", [*OK, "--size", "0"], "--size must be 1..67108864"),
    ("stomp-py", "producer", [*OK, "--size", "67108865"], "--size must be 1..67108864"),
    ("stomp-py", "producer", [*OK, "--count", "0"], "--count must be 1..2147483647"),
    ("stomp-py", "producer", [*OK, "--rate", "nan"], "--rate must be a finite number"),
    ("stomp-py", "producer", [*OK, "--rate", "-1"], "--rate must be 0..1000000000"),
    ("stomp-py", "producer", [*OK, "--duration", "86401"], "--duration must be 0..86400"),
    ("stomp-py", "producer", [*OK, "--nonce", "a-b"], "--nonce must match"),
    ("stomp-py", "producer", [*OK, "--connect-timeout", "0"], "--connect-timeout must be > 0"),
    ("stomp-py", "producer", [*OK, "--id", "a b"], "--id must match"),
    ("stomp-py", "producer", [*OK, "--ack", "auto"], "not an option of stomp-py's producer"),
    ("stomp-py", "producer", [*OK, "--whatever"], "unknown option --whatever"),
    ("stomp-py", "producer", [*OK, "--count", "5", "--count", "6"], "given twice"),
    ("stomp-py", "producer", [*OK, "--persistent=yes"], "takes no value"),
    ("stomp-py", "producer", [*OK, "--records"], "needs a value"),
    ("stomp-py", "producer", [*OK, "--user", "a\nb"], "--user must match"),
    ("stomp-py", "consumer", [*OK, "--prefetch", "0"], "--prefetch must be 1..2147483647"),
    ("stomp-py", "consumer", [*OK, "--ack", "sometimes"], "--ack must be one of"),
    ("stomp-py", "consumer", ["--url", "ws://127.0.0.1:1/", "--destinations", "q"],
     "--url must use stomp:// or stomp+ssl://"),
    ("stomp-py", "consumer", [*OK, "--failover", "ws://127.0.0.1:2/"], "--failover has a bad"),
    ("stomp-py", "consumer", [*OK, "--failover", "stomp+ssl://127.0.0.1:2"],
     "--failover addresses must use --url's scheme"),
    ("openwire-jms", "consumer", ["--url", "tcp://127.0.0.1:61616", "--destinations", "q",
                                  "--prefetch", "32768"], "--prefetch must be 1..32767"),
    ("akka-bridge", "producer", ["--url", "tcp://127.0.0.1:61616", "--destinations", "q",
                                 "--duration", "5"], "not an option of akka-bridge's producer"),
    ("stompjs", "consumer", ["--url", "ws://127.0.0.1:1/", "--destinations", "q",
                             "--workers", "2"], "not an option of stompjs's consumer"),
    ("openwire-jms", "producer", ["--url", "tcp://127.0.0.1:61616", "--destinations", "q",
                                  "--flush-each"], "not an option of openwire-jms's producer"),
    ("stompjs", "producer", ["--url", "ws://127.0.0.1:1/x", "--destinations", "q", "--size",
                             "x"], "--size must be an integer"),
] + [  # the queue-name rule: plain names only, the same for every client
    ("stomp-py", "consumer", ["--url", "stomp://127.0.0.1:1", "--destinations", q],
     "bad queue name") for q in ("a*", "a.>", "a,,b", "/queue/a", "a b", "a$b", "x" * 201)
]


@pytest.mark.parametrize("client, role, args, needle", BAD,
                         ids=[f"{c}-{r}-{i}" for i, (c, r, _, _) in enumerate(BAD)])
def test_the_harness_refuses_a_bad_value_in_one_line(client, role, args, needle):
    with pytest.raises(options.BadOption) as e:
        options.check(_resolved(client), role, args)
    assert needle in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_good_command_lines_pass():
    options.check(_resolved("stomp-py"), "producer",
                  [*OK, "--count=5", "--rate", "1e+06", "--persistent", "--nonce", "ab12",
                   "--failover", "stomp://127.0.0.1:2,stomp://127.0.0.1:3", "--id", "p1-python"])
    options.check(_resolved("openwire-jms-tuned"), "consumer",
                  ["--url", "failover:(tcp://127.0.0.1:1,tcp://[::1]:2)?randomize=false",
                   "--destinations", "q", "--ack", "dups-ok", "--prefetch", "32767",
                   "--flush-each"])
    options.check(_resolved("akka-bridge"), "consumer",
                  ["--url", "tcp://127.0.0.1:1", "--destinations", "q", "--workers", "8"])
    cmd = options.command(_resolved("stompjs:tcp"), "consumer",
                          ["--url", "stomp://127.0.0.1:1", "--destinations=q", "--gate",
                           "--password", "-starts-with-a-dash"])
    assert cmd == ["node", str(ROOT / "clients" / "node" / "consumer.mjs"),
                   "--url=stomp://127.0.0.1:1", "--destinations=q", "--gate",
                   "--password=-starts-with-a-dash"]


@pytest.mark.parametrize("spec", [c.name for c in clients.REGISTRY])
def test_a_point_s_own_options_pass_for_every_client(spec):
    """What the runner gives every client of a default point (plus what the point adds)."""
    point = PointSpec(producer=[spec], consumer=[spec], rate=100.0, tx_batch=10,
                      persistent=True)
    for role in options.ROLES:
        options.check(_resolved(spec), role, point.client_args(role), complete=False)


def test_a_bad_point_value_is_one_line_exit_2_and_starts_nothing(tmp_path):
    """A value only the table refuses (the Java client's prefetch limit) stops ./bench run
    before any broker or client starts."""
    r = subprocess.run([sys.executable, "-m", "burstbench.cli", "run", "--consumer", "java",
                        "--prefetch", "40000"], capture_output=True, text=True, cwd=ROOT,
                       timeout=60, check=False,
                       env={**os.environ, "BURSTBENCH_RESULTS": str(tmp_path / "out")})
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert "openwire-jms consumer: --prefetch must be 1..32767" in lines[0], lines
    assert not (tmp_path / "out").exists()


# -- every client's --help ----------------------------------------------------------------------
# an option line: up to 8 spaces (continuation lines are indented further), then --name (argparse
# prefixes "-h, ")
_OPTION_LINE = re.compile(r"^ {1,8}(?:-\w, )?--([a-z][a-z0-9-]*)")
HELP_SPECS = [c.name for c in clients.REGISTRY] + ["stompjs:browser"]


@pytest.mark.parametrize("role", options.ROLES)
@pytest.mark.parametrize("spec", HELP_SPECS)
def test_help_lists_exactly_the_table_s_options(spec, role):
    r = client_or_skip(spec)
    out = run_client(r, role, ["--help"], timeout=60)
    assert out.returncode == 0, out.stderr
    listed = [m.group(1) for line in out.stdout.splitlines()
              if (m := _OPTION_LINE.match(line))]
    want = options.for_client(r.client.name, role)
    assert len(listed) == len(set(listed)), f"listed twice: {listed}"
    assert sorted(listed) == sorted(want), (
        f"{spec} {role}: --help lists {sorted(set(listed) - set(want))} beyond the table and "
        f"misses {sorted(set(want) - set(listed))}")
