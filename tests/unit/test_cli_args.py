"""Bad input to ./bench and to the Python clients: one clear line, exit 2, nothing started."""

import re
import subprocess
import sys

import pytest
from conftest import ROOT

BENCH = [sys.executable, "-m", "burstbench.cli"]


def bench(*args):
    return subprocess.run(BENCH + list(args), capture_output=True, text=True, cwd=ROOT, timeout=60,
                          check=False)


@pytest.mark.parametrize(
    "args, needle",
    [
        (["run", "--count", "0"], "--count"),
        (["run", "--count", "ten"], "not an integer"),
        (["run", "--size", "-1"], "--size"),
        (["run", "--consumers", "0"], "--consumers"),
        (["run", "--rate", "nan"], "--rate"),
        (["run", "--ack", "maybe"], "--ack"),
        (["run", "--producer", "cobol"], "unknown client 'cobol'"),
        (["run", "--consumer", "stompjs:carrier-pigeon"], "no transport"),
        (["run", "--persistence", "floppy"], "unknown persistence"),
        (["run", "--topology", "ring"], "unknown topology"),
        (["run", "--size", "99999999999"], "size must be"),
        (["run", "--bogus"], "unrecognized arguments"),
        (["run", "--cpus-broker", "one"], "must be a CPU list"),
        (["run", "--cpus-clients", "4096"], "are not available"),
        (["sweep", "--profile", "nope"], "unknown profile"),
        (["sweep", "nosuchaxis"], "no axis"),
        (["plot", "no-such-run"], "no run"),
        (["frobnicate"], "invalid choice"),
        (["bridge", "--runtime", "quasar"], "invalid choice"),
        (["run", "--transport", "udp"], "invalid choice"),
        (["run", "--transport", "nio", "--broker", "artemis"], "Artemis's acceptors are Netty"),
        (["bridge", "--port", "70000"], "--port"),
        (["bridge", "--set", "no-equals-sign"], "--set: expected KEY=VALUE"),
        (["runtimes", "--rounds", "0"], "--rounds"),
        (["runtimes", "--profile", "quick"], "no studies.runtimes section"),
    ],
)
def test_bench_bad_input_is_one_line_and_exit_2(args, needle):
    r = bench(*args)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert needle in lines[0]
    assert r.stdout == ""


def test_bench_help_lists_every_registered_client():
    from burstbench import clients

    r = bench("run", "--help")
    assert r.returncode == 0
    text = re.sub(r"-\n\s+", "-", r.stdout).replace("\n", " ")  # argparse wraps at hyphens
    for name in clients.names():
        assert name in text


@pytest.mark.parametrize("role", ["producer", "consumer"])
@pytest.mark.parametrize(
    "args, needle",
    [
        ([], "required"),
        (["--url", "http://x:1", "--destinations", "q"], "--url"),
        (["--url", "stomp://127.0.0.1:1", "--destinations", "q", "--count", "-5"], "--count"),
        (["--url", "stomp://127.0.0.1:1", "--destinations", "q", "--size", "0"], "--size"),
        (["--url", "stomp://127.0.0.1:1", "--destinations", "q", "--id", "a b"], "--id"),
        (["--url", "stomp://127.0.0.1:1", "--destinations", "q", "--whatever"], "unrecognized"),
    ],
)
def test_python_client_bad_args(role, args, needle):
    r = subprocess.run(
        [sys.executable, str(ROOT / "clients" / "python" / f"{role}.py"), *args],
        capture_output=True,
        text=True,
        timeout=30, check=False,
    )
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and needle in lines[0], r.stderr


def test_find_max_help_gives_the_probe_defaults_the_code_uses():
    from burstbench.measure import findmax

    r = bench("run", "--help")
    text = " ".join(r.stdout.split())
    assert (f"default {findmax.DEFAULT_DURATION:g}s/{findmax.DEFAULT_WARMUP:g}s"
            in text.replace("s/ ", "s/")), text


def test_results_names_where_runs_are_read(tmp_path):
    r = bench("plot", "--results", str(tmp_path / "elsewhere"), "no-such-run")
    assert r.returncode == 2
    assert f"looked for {tmp_path}/elsewhere/no-such-run/run.json" in r.stderr


def test_output_names_where_runs_are_read(tmp_path):
    r = bench("plot", "--output", str(tmp_path / "out"), "no-such-run")
    assert r.returncode == 2
    assert f"looked for {tmp_path}/out/no-such-run/run.json" in r.stderr


def test_one_meaning_per_option_name():
    """--warmup is seconds in run; perf's share and reqreply's count have names of their own,
    and the old spelling still parses with a line saying so."""
    from burstbench.cli import build_parser

    ap = build_parser()
    sub = next(a for a in ap._actions if isinstance(getattr(a, "choices", None), dict))
    perf, rr, run = sub.choices["perf"], sub.choices["reqreply"], sub.choices["run"]
    assert "--warmup-share" in perf.format_help() and "--warmup-requests" in rr.format_help()
    assert "--warmup-share" not in run.format_help() and "SECONDS" in run.format_help()
    code = ("from burstbench.cli import build_parser as b; "
            "print(b().parse_args(['reqreply', '--warmup', '7']).warmup)")
    r = subprocess.run([sys.executable, "-c", code],
                       capture_output=True, text=True, cwd=ROOT, check=True, timeout=60)
    assert r.stdout.strip() == "7"
    assert "--warmup is now --warmup-requests" in r.stderr
    for cmd in sub.choices.values():  # the option that could never work is gone
        assert "--link-delay" not in cmd.format_help()


def test_every_option_help_lists_all_its_values():
    from burstbench.cli import build_parser
    from burstbench.infra import brokers, topology

    ap = build_parser()
    sub = next(a for a in ap._actions if isinstance(getattr(a, "choices", None), dict))
    for name, p in sub.choices.items():
        helps = {o: " ".join((a.help or "").split()) for a in p._actions
                 for o in a.option_strings}
        if "--persistence" in helps:
            for v in brokers.PERSISTENCE:
                assert v in helps["--persistence"], (name, v)
        if "--topology" in helps and name in ("run", "chaos"):
            for v in topology.TOPOLOGIES:
                assert v in helps["--topology"], (name, v)
        if "--broker" in helps:
            for v in brokers.BROKERS:
                assert v in helps["--broker"] or v in p.format_help(), (name, v)
