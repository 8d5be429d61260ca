"""Every registered client speaks clients/contract.md, and every producer works with every
consumer — STOMP <-> OpenWire included. Pairs are parametrized at collection."""

from __future__ import annotations

import itertools
import json
import socket
import subprocess
import time
import uuid

import pytest
from conftest import client_or_skip, events, outside, run_client

from burstbench import clients, paths
from burstbench.infra import brokers
from burstbench.infra.procs import Supervisor
from burstbench.measure import measure
from burstbench.measure.outcome import metrics
from burstbench.measure.runner import Runner
from burstbench.measure.spec import PointSpec

pytestmark = pytest.mark.integration

# stock clients, the browser, the bridge, and every tuned entry: the tuned ones speak the same
# contract
TUNED = [c.name for c in clients.tuned_clients()]
SPECS = [*clients.LANGUAGE_CLIENTS, "stompjs:tcp", *clients.BROWSER_CLIENTS, *clients.BRIDGES,
         *TUNED, "stompjs-tuned:tcp"]
PAIRS = [*clients.LANGUAGE_CLIENTS, *clients.BROWSER_CLIENTS, *TUNED]
# every consumer, for the tests of what a consumer records: the pairs' and the bridge's
CONSUMERS = [*PAIRS, *clients.BRIDGES]


def _programs(specs, key) -> list[str]:
    """The first spec of each program: entries that run the same program (``stompjs`` and
    ``stompjs:tcp``; a tuned entry that preloads its speed-ups into the stock program, whose
    argument parser it keeps) are checked once, under the first name."""
    seen: dict = {}
    for spec in specs:
        r = clients.resolve(spec)
        seen.setdefault(tuple(key(r.client.argv(role)) for role in ("producer", "consumer")),
                        spec)
    return list(seen.values())


# what answers --version: each distinct command line (a tuned entry names itself)
VERSION_PROGRAMS = _programs(SPECS, tuple)
# what parses the arguments: each distinct program file or main class
PARSERS = _programs(SPECS, lambda argv: argv[-1])
# a tuned entry that preloads its speed-ups into the stock program and leaves its connecting
# alone connects with the stock program's code: the checks of connecting alone (an
# unreachable broker, a wrong password, an unknown CA) run it in the full tier
# (net-stomp-tuned's Tuned.pm replaces Net::Stomp's reconnect: checked in the default tier)
PRELOADED = {s for s in SPECS if clients.resolve(s).client.tuned_of and s not in PARSERS
             and s != "net-stomp-tuned"}


def connect_cases(specs) -> list:
    """``specs`` for a check of connecting alone: the preloaded tuned entries in the full tier."""
    return [pytest.param(s, marks=pytest.mark.full) if s in PRELOADED else s for s in specs]


@pytest.fixture(scope="module",
                params=["classic", pytest.param("artemis", marks=pytest.mark.full)])
def shared_broker(request, tmp_path_factory):
    """One non-persistent broker for the module, of each kind the bench starts: the tests on
    ActiveMQ Artemis (``[artemis-...]``) run in the full tier (``./bench test --full -k
    artemis tests/contract/test_contract.py``)."""
    kind = request.param
    built = paths.ARTEMIS_CLASSES if kind == "artemis" else paths.BROKER_CLASSES
    if not built.exists():
        pytest.skip(f"the {kind} broker is not built (./bench setup)")
    work = tmp_path_factory.mktemp(f"contract-{kind}")
    sup = Supervisor(work / "logs")
    try:
        yield brokers.start(sup, brokers.BrokerSpec(name=f"contract-{kind}", kind=kind), work)
    finally:
        sup.stop_all()


def _url(broker, r):
    return broker.url_for(r.protocol)


def _window(broker, cons: clients.Resolved, args, size: int) -> list[str]:
    """``--window-bytes`` for a STOMP consumer on ActiveMQ Artemis, as the harness gives it
    (``brokers.stomp_window``): its ack mode and prefetch read from ``args``."""
    if cons.protocol not in ("stomp", "ws"):
        return []
    args = list(args)
    opt = {k: args[i + 1] for i, k in enumerate(args[:-1]) if k in ("--ack", "--prefetch")}
    w = brokers.stomp_window(broker.product, opt.get("--ack", "auto"),
                             int(opt.get("--prefetch", 1000)), size,
                             transacted="--tx-batch" in args)
    return [] if w is None else ["--window-bytes", str(w)]


def pair_run(
    broker,
    prod: clients.Resolved,
    cons: clients.Resolved,
    count: int,
    size: int,
    tmp,
    queue: str | None = None,
    prod_id: str = "px",
    extra: tuple = (),
    cons_extra: tuple = (),
    ready: list | None = None,
    env: dict | None = None,
):
    """Consumer waits for count messages; producer sends them (both with ``env`` as their
    environment, if given). Returns both records (and adds the consumer's and the producer's
    ready events to ``ready``)."""
    queue = queue or f"contract.{uuid.uuid4().hex[:8]}"
    crec, prec = tmp / f"c-{uuid.uuid4().hex[:6]}.tsv", tmp / f"p-{uuid.uuid4().hex[:6]}.tsv"
    consumer = subprocess.Popen(
        cons.client.argv("consumer")
        + [
            "--url",
            _url(broker, cons),
            "--destinations",
            queue,
            "--count",
            str(count),
            "--records",
            str(crec),
            *extra,
            *cons_extra,
            *_window(broker, cons, [*extra, *cons_extra], size),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        first = consumer.stdout.readline()
        assert json.loads(first)["event"] == "ready", first + consumer.stderr.read()
        p = run_client(
            prod,
            "producer",
            [
                "--url",
                _url(broker, prod),
                "--destinations",
                queue,
                "--count",
                str(count),
                "--size",
                str(size),
                "--id",
                prod_id,
                "--records",
                str(prec),
                *extra,
            ],
            env=env,
        )
        assert p.returncode == 0, p.stderr
        if ready is not None:
            ready += [e for e in events(first + p.stdout) if e.get("event") == "ready"]
        out, err = consumer.communicate(timeout=120)
        assert consumer.returncode == 0, err
    finally:
        if consumer.poll() is None:
            consumer.kill()
        # closed on every path: a consumer that failed early must not leave its pipes to the
        # garbage collector, whose ResourceWarning would fail a later test
        for f in (consumer.stdout, consumer.stderr):
            f.close()
        consumer.wait()
    done = events(first + out)[-1]
    return (measure.read_producer_records(prec), measure.read_consumer_records(crec), done)


def send_raw(broker, queue: str, messages) -> None:
    """(body, headers) pairs sent to ``queue`` with stomp.py, as a producer outside the
    contract would: the headers exactly as given, nothing added."""
    import stomp

    conn = stomp.Connection11([("127.0.0.1", broker.spec.stomp_port)], auto_decode=False)
    conn.connect(wait=True)
    for body, headers in messages:
        conn.send("/queue/" + queue, body, headers=headers)
    conn.disconnect(receipt="bye")


def consume(broker, r: clients.Resolved, queue: str, count: int, size: int, tmp) -> list:
    """The client's consumer takes ``count`` messages of ``queue``: its records, by seq."""
    crec = tmp / f"c-{uuid.uuid4().hex[:6]}.tsv"
    c = run_client(r, "consumer", ["--url", _url(broker, r), "--destinations", queue,
                                   "--count", str(count), "--size", str(size),
                                   "--records", str(crec), *_window(broker, r, [], size)])
    assert c.returncode == 0, c.stderr
    return sorted(measure.read_consumer_records(crec), key=lambda x: x.seq)


# -- each client on its own ----------------------------------------------------------------
@pytest.mark.parametrize("spec", VERSION_PROGRAMS)
def test_version_answers(spec):
    r = client_or_skip(spec)
    for role in ("producer", "consumer"):
        out = run_client(r, role, ["--version"], timeout=60)
        assert out.returncode == 0, out.stderr
        v = json.loads(out.stdout.strip().splitlines()[-1])
        assert v["client"] == r.client.name and v["library"] and v["runtime"]


@pytest.mark.parametrize("spec", PARSERS)
def test_help_answers(spec):
    r = client_or_skip(spec)
    for role in ("producer", "consumer"):
        out = run_client(r, role, ["--help"], timeout=60)
        assert out.returncode == 0, out.stderr
        assert "--destinations" in out.stdout


BAD = [
    ["--destinations", "q"],  # no --url
    ["--url", "URL", "--destinations", "q", "--no-such-option"],
    ["--url", "URL", "--destinations", "q", "--count", "-5"],
    ["--url", "URL", "--destinations", "q", "--size", "zero"],
    ["--url", "URL", "--destinations", "q", "--id", "has space"],
    ["--url", "gopher://127.0.0.1:1", "--destinations", "q"],
    ["--url", "URL", "--destinations", "q", "--failover", "gopher://127.0.0.1:2"],
]


@pytest.mark.parametrize("spec", PARSERS)
@pytest.mark.parametrize("bad", range(len(BAD)))
def test_bad_argument_exits_2_with_one_line(spec, bad):
    r = client_or_skip(spec)
    url = (
        "stomp://127.0.0.1:1"
        if r.protocol == "stomp"
        else ("ws://127.0.0.1:1/" if r.protocol == "ws" else "tcp://127.0.0.1:1")
    )
    args = [url if a == "URL" else a for a in BAD[bad]]
    for role in ("producer", "consumer"):
        out = run_client(r, role, args, timeout=60)
        lines = out.stderr.strip().splitlines()
        assert out.returncode == 2, (role, args, out.stderr)
        assert len(lines) == 1 and lines[0].startswith("error:"), (role, args, out.stderr)


@pytest.mark.parametrize("spec", connect_cases(SPECS))
def test_unreachable_broker_exits_3_naming_the_address(spec):
    r = client_or_skip(spec)
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    scheme = {"stomp": "stomp", "ws": "ws", "openwire": "tcp"}[r.protocol]
    url = f"{scheme}://127.0.0.1:{port}" + ("/" if scheme == "ws" else "")
    t0 = time.monotonic()
    out = run_client(
        r, "consumer", ["--url", url, "--destinations", "q", "--connect-timeout", "1"], timeout=60
    )
    assert out.returncode == 3, out.stderr
    assert time.monotonic() - t0 < 45  # its own 1 s time-out, not the test's 60 s
    assert f"127.0.0.1:{port}" in out.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize("spec", [pytest.param(s, marks=pytest.mark.smoke)
                                  if s in clients.LANGUAGE_CLIENTS else s for s in SPECS])
def test_ten_thousand_burst_exact_accounting(spec, shared_broker, tmp_path):
    """A burst of 10,000 each way, every record whole and in order; both ready lines carry the
    contract's socket facts: TCP_NODELAY on the client's socket and how the client knows it
    (the Akka bridge once said neither)."""
    r = client_or_skip(spec)
    ready: list = []
    sent, got, done = pair_run(shared_broker, r, r, 10000, 6, tmp_path, ready=ready)
    a = measure.account(sent, {"c": got}, done.get("foreign", 0), size=6)
    assert (a.sent, a.received, a.lost, a.duplicates, a.body_errors) == (10000, 10000, 0, 0, 0)
    assert a.out_of_order == 0 and done["received"] == 10000
    assert {(g.producer, g.nbytes, g.body_ok) for g in got} == {("px", 6, True)}
    assert sorted(g.seq for g in got) == list(range(10000))
    assert sorted(e["role"] for e in ready) == ["consumer", "producer"], ready
    for e in ready:
        assert isinstance(e["tcp_nodelay"], bool), e
        assert e["tcp_nodelay_how"] in ("getsockopt", "library"), e


@pytest.mark.parametrize("spec", SPECS)
def test_each_record_names_the_queue_it_came_from(spec, shared_broker, tmp_path):
    """A producer sends its message s to queue s mod n: a consumer of one queue and a consumer
    of two write each record's dest as the queue its message came from (the Perl consumer
    leaves the destination header out of its per-message line when it has one queue)."""
    r = client_or_skip(spec)
    base = f"contract.dest.{uuid.uuid4().hex[:8]}"
    for queues in ([base + ".a"], [base + ".b", base + ".c"]):
        sent, got, done = pair_run(shared_broker, r, r, 100, 6, tmp_path, queue=",".join(queues))
        a = measure.account(sent, {"c": got}, done.get("foreign", 0), size=6)
        assert (a.sent, a.received, a.lost, a.duplicates, a.foreign) == (100, 100, 0, 0, 0)
        assert [g.dest for g in sorted(got, key=lambda g: g.seq)] == [
            queues[s % len(queues)] for s in range(100)]


# every mode for every stock consumer and for the tuned JMS consumer (it holds auto and dups-ok
# acknowledgements in the socket buffer: code of its own); the other tuned consumers, whose
# acknowledgements are their stock twin's code, with one mode in the default suite and the
# rest in the full tier
OWN_ACKS = {"openwire-jms-tuned"}
ACK_CASES = [pytest.param(spec, mode, id=f"{spec}-{mode}",
                          marks=[pytest.mark.full] if spec in TUNED and spec not in OWN_ACKS
                          and mode != "client" else [])
             for spec in CONSUMERS
             for mode in [*sorted(clients.resolve(spec).client.ack_modes), "tx"]]


@pytest.mark.parametrize(("spec", "mode"), ACK_CASES)
def test_every_ack_mode_and_transacted_batches_account_exactly(spec, mode, shared_broker,
                                                               tmp_path):
    """Each acknowledgement mode the registry lists for a client (with a small prefetch, so
    acks pace the broker: 1,050 messages refill the window of 50 twenty-one times), and
    transacted batches of 100 on both sides (1,050 is not a multiple of 100: the last batch is
    a partial one committed at the end)."""
    r = client_or_skip(spec)
    n = 1050
    if mode == "tx":
        sent, got, done = pair_run(shared_broker, r, r, n, 64, tmp_path,
                                   extra=("--tx-batch", "100"))
    else:
        sent, got, done = pair_run(shared_broker, r, r, n, 64, tmp_path,
                                   cons_extra=("--ack", mode, "--prefetch", "50"))
    a = measure.account(sent, {"c": got}, done.get("foreign", 0), size=64)
    assert (a.sent, a.received, a.lost, a.duplicates, a.body_errors) == (n, n, 0, 0, 0)


@pytest.mark.parametrize("size", [1, 65536])
@pytest.mark.parametrize("spec", SPECS)
def test_edge_sizes_survive(spec, size, shared_broker, tmp_path):
    """1-byte bodies are all "0" (a falsy string in Perl and JavaScript); 64 KiB bodies span
    many socket reads. Both arrive exact, with their length."""
    r = client_or_skip(spec)
    sent, got, done = pair_run(shared_broker, r, r, 300, size, tmp_path)
    a = measure.account(sent, {"c": got}, done.get("foreign", 0), size=size)
    assert (a.sent, a.received, a.lost, a.duplicates, a.foreign, a.body_errors) == (
        300, 300, 0, 0, 0, 0)
    assert {g.nbytes for g in got} == {size}


@pytest.mark.parametrize("spec", SPECS)
def test_foreign_messages_are_counted_not_fatal(spec, shared_broker, tmp_path):
    """A message without the bench headers is foreign: counted, acknowledged, no crash."""
    r = client_or_skip(spec)
    q = f"contract.foreign.{uuid.uuid4().hex[:8]}"
    send_raw(shared_broker, q, [("not a bench message", {"bb_seq": "not-a-number"}),
                                (b"\x00\xffbinary junk", {})])
    py = clients.resolve("stomp-py")
    # 2 foreign + 3 bench messages; the consumer stops after 5 of any kind? No: after 3 bench
    # messages it may stop, so use --gate and stop it once the producer is done.
    crec = tmp_path / "c.tsv"
    consumer = subprocess.Popen(
        r.client.argv("consumer")
        + ["--url", _url(shared_broker, r), "--destinations", q, "--gate", "--records", str(crec),
           *_window(shared_broker, r, [], 6)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert json.loads(consumer.stdout.readline())["event"] == "ready"
        p = run_client(
            py, "producer", ["--url", shared_broker.stomp_url, "--destinations", q, "--count", "3"]
        )
        assert p.returncode == 0, p.stderr
        deadline = time.monotonic() + 30
        lines = []
        while time.monotonic() < deadline:
            line = consumer.stdout.readline()
            lines.append(line)
            ev = json.loads(line)
            if ev["event"] == "tick" and ev["received"] >= 3:
                break
        consumer.stdin.write("stop\n")
        consumer.stdin.flush()
        out, err = consumer.communicate(timeout=60)
    finally:
        if consumer.poll() is None:
            consumer.kill()
            consumer.communicate()
    assert consumer.returncode == 0, err
    done = events(out)[-1]
    assert done["event"] == "done" and done["received"] == 3 and done["foreign"] == 2


@pytest.mark.parametrize("spec", CONSUMERS)
def test_a_body_changed_anywhere_is_caught_by_its_crc(spec, shared_broker, tmp_path):
    """Three 1 KiB bench messages as a producer would send them, two of them changed on the
    way: one byte in the middle, the last byte. A consumer that kept or checked only part of
    a body (its first bytes, its length) would report the changed ones as sound; the CRC-32 in
    its records must be that of the bytes it received."""
    import zlib

    r = client_or_skip(spec)
    q = f"contract.changed.{uuid.uuid4().hex[:8]}"
    want = measure.BodyCrc(1024)
    sound = [b"%06d" % i + b"x" * 1018 for i in range(3)]
    got_bodies = [sound[0], sound[1][:500] + b"y" + sound[1][501:], sound[2][:-1] + b"z"]
    send_raw(shared_broker, q, [(body, {
        "bb_producer": "p1", "bb_seq": str(i), "bb_burst": "0", "bb_sent_ns": "1",
        "bb_nonce": "0", "bb_crc32": f"{want(i):08x}"}) for i, body in enumerate(got_bodies)])
    recs = consume(shared_broker, r, q, 3, 1024, tmp_path)
    assert [x.seq for x in recs] == [0, 1, 2] and all(x.nbytes == 1024 for x in recs)
    assert [x.crc_body for x in recs] == [f"{zlib.crc32(b):08x}" for b in got_bodies]
    assert recs[0].crc_body == f"{want(0):08x}" and recs[1].crc_body != f"{want(1):08x}"


@pytest.mark.parametrize("spec", CONSUMERS)
def test_nonce_and_crc_headers_are_recorded_as_received(spec, shared_broker, tmp_path):
    """bb_crc32 in canonical form (8 lowercase hex digits), in another form (upper case, not
    hex) and absent, and bb_nonce present and absent: each record keeps both as received, '-'
    when absent. Consumers keep a canonical CRC as a number and another form apart (the JMS
    consumer in a map, the rare path of its record), so every form is checked."""
    r = client_or_skip(spec)
    q = f"contract.asreceived.{uuid.uuid4().hex[:8]}"
    crc = measure.BodyCrc(6)
    heads = [("n1", f"{crc(0):08x}"), ("n1", f"{crc(1):08X}"), (None, "not-hex"), ("n1", None)]
    send_raw(shared_broker, q, [
        (b"%06d" % i, {"bb_producer": "p1", "bb_seq": str(i), "bb_burst": "0", "bb_sent_ns": "1",
                       **{k: v for k, v in (("bb_nonce", nonce), ("bb_crc32", c)) if v}})
        for i, (nonce, c) in enumerate(heads)])
    recs = consume(shared_broker, r, q, len(heads), 6, tmp_path)
    assert [(x.nonce, x.crc_header) for x in recs] == [
        (n or "-", v or "-") for n, v in heads]


# -- producers with consumers --------------------------------------------------------------
# The default suite: each stock client (the four languages and the browser) as producer to the
# next two in the ring and as consumer of the two before it, and each tuned entry with its
# stock twin both ways. Every other pair of the N x N matrix is in the full tier.
STOCK = [*clients.LANGUAGE_CLIENTS, *clients.BROWSER_CLIENTS]
DEFAULT_PAIRS = {(p, STOCK[(i + k) % len(STOCK)]) for i, p in enumerate(STOCK) for k in (1, 2)}
DEFAULT_PAIRS |= {pair for t in TUNED for pair in ((t, clients.get(t).tuned_of),
                                                   (clients.get(t).tuned_of, t))}


def _pair(p: str, c: str):
    """Pairs beyond the default's are in the full tier; the browser with a tuned entry is
    opt-in besides (browser_full): a Chromium per side costs seconds."""
    tuned = {p, c} & set(TUNED)
    browser = {p, c} & set(clients.BROWSER_CLIENTS)
    marks = [pytest.mark.browser_full] if tuned and browser else []
    if (p, c) not in DEFAULT_PAIRS:
        marks.append(pytest.mark.full)
    return pytest.param(p, c, id=f"{p}->{c}", marks=marks)


@pytest.mark.parametrize("prod_spec, cons_spec",
                         [_pair(p, c) for p, c in itertools.product(PAIRS, PAIRS)])
def test_pair_headers_and_bodies_survive(prod_spec, cons_spec, shared_broker, tmp_path):
    prod, cons = client_or_skip(prod_spec), client_or_skip(cons_spec)
    sent, got, done = pair_run(
        shared_broker, prod, cons, 1000, 100, tmp_path, prod_id=f"p-{prod.client.language}"
    )
    a = measure.account(sent, {"c": got}, done.get("foreign", 0), size=100)
    assert (a.sent, a.received, a.lost, a.duplicates, a.foreign, a.body_errors) == (
        1000,
        1000,
        0,
        0,
        0,
        0,
    )
    sent_ns = {s: t for _p, s, _b, t in sent}
    for rec in got:
        assert rec.producer == f"p-{prod.client.language}" and rec.burst == 0
        assert rec.nbytes == 100 and rec.body_ok
        # the header carries the producer's own stamp, to the nanosecond
        assert rec.sent_ns == sent_ns[rec.seq]
        # two processes' epoch clocks; Node and the browser align a monotonic clock on Date.now()
        # millisecond edges (within microseconds when the machine is idle, a preemption more
        # when it is busy), the rest read the wall clock itself: a receive before its send by
        # more than 50 ms is a clock that is wrong, not one that is busy
        assert rec.recv_ns >= rec.sent_ns - 50_000_000


def test_four_languages_compete_on_one_queue(shared_broker, tmp_path):
    specs = [client_or_skip(s).label for s in clients.LANGUAGE_CLIENTS]
    spec = PointSpec(
        producer=["net-stomp"] if "net-stomp" in specs else [specs[0]],
        consumer=specs,
        consumers=4,
        count=8000,
        bursts=1,
        broker_urls=outside(shared_broker),
    )
    out = Runner(spec, tmp_path / "point").run()
    sets = [{(r.producer, r.seq) for r in recs} for recs in out.consumer_records.values()]
    sent = {(p, s) for p, s, _b, _t in out.producer_records}
    assert len(sets) == 4 and all(sets), "each language should receive a share"
    assert sum(len(s) for s in sets) == len(sent) == 8000
    assert set.union(*sets) == sent
    assert metrics(out)["accounting"]["lost"] == 0


@pytest.mark.parametrize("prod_spec, cons_spec", [("net-stomp", "akka-bridge"),
                                                  ("akka-bridge", "stompjs"),
                                                  ("stomp-py", "pekko-bridge"),
                                                  ("pekko-bridge", "openwire-jms")],
                         ids=["perl->akka", "akka->node", "python->pekko", "pekko->java"])
def test_relay_between_actors_and_other_languages(prod_spec, cons_spec, shared_broker,
                                                  tmp_path):
    """A Perl burst flows broker -> actors; an actor burst flows broker -> Node consumers."""
    prod, cons = client_or_skip(prod_spec), client_or_skip(cons_spec)
    sent, got, done = pair_run(shared_broker, prod, cons, 2000, 64, tmp_path)
    a = measure.account(sent, {"c": got}, done.get("foreign", 0), size=64)
    assert (a.sent, a.received, a.lost, a.duplicates, a.body_errors) == (2000, 2000, 0, 0, 0)


@pytest.mark.parametrize("shape", [
    pytest.param((1, 500, 2, 1024), id="1KiB"),
    # two producers send a consumer twice what it sized its memory for (--count x --bursts
    # bodies of --size bytes): the stomp.py consumer's store fills halfway and it summarises
    # the rest on arrival; the Perl one's strings grow past their size
    pytest.param((2, 100, 1, 70000), id="twice-what-it-sized-for"),
])
@pytest.mark.parametrize("spec", PAIRS)
def test_bodies_are_checked_against_the_harness_own_crc(spec, shape, shared_broker, tmp_path):
    """However a consumer keeps a body (whole, in memory sized before it was ready, as its
    first bytes after comparing the rest, or summarised on arrival as its length, CRC-32 and
    first bytes), each record's CRC is the one the harness computes from the message's
    counter: a consumer that kept or summarised the wrong bytes, or none, is caught."""
    producers, count, bursts, size = shape
    r = client_or_skip(spec)
    out = Runner(PointSpec(producer=[r.label], consumer=[r.label], producers=producers,
                           count=count, bursts=bursts, size=size,
                           broker_urls=outside(shared_broker)), tmp_path / "point").run()
    n = producers * count * bursts
    a = metrics(out)["accounting"]
    assert (a["sent"], a["received"], a["lost"], a["corrupt"]) == (n, n, 0, 0), a
    want = measure.BodyCrc(size)
    recs = [x for recs in out.consumer_records.values() for x in recs]
    assert len(recs) == n
    assert all(x.nbytes == size and x.crc_body == f"{want(x.seq):08x}" for x in recs)


@pytest.mark.parametrize("spec", PAIRS)
def test_a_paced_point_accounts_exactly(spec, shared_broker, tmp_path):
    """Under --rate a message carries its intended send time; the producer's records carry
    the same stamp, so the harness's check of every bb_sent_ns holds (it caught stomp.py's
    producer recording the actual time instead)."""
    r = client_or_skip(spec)
    out = Runner(PointSpec(producer=[r.label], consumer=[r.label], count=600, bursts=2,
                           rate=3000.0, broker_urls=outside(shared_broker)),
                 tmp_path / "point").run()
    m = metrics(out)
    a = m["accounting"]
    assert (a["sent"], a["received"], a["lost"], a["corrupt"]) == (1200, 1200, 0, 0), a
    assert m["latency_ms"]["samples"] == 600 and m["time_in_queue_ms"] is None
