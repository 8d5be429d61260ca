"""``./bench perf clients``: each client against a minimal loop of the same library.

Both are measured the same way on the same broker, alternating within each round so that
the machine's noise falls on both: the producer sends COUNT messages into an empty queue
(send rate = COUNT / (broker's confirmation of the last message − first send); the loops
time their sends the same way), then the consumer drains that backlog
(receive rate = COUNT / (last receive − first receive)). One warm-up round is discarded;
the table shows the median of the measured rounds with min and max, and the ratio
client / loop (the bench's overhead).
"""

from __future__ import annotations

import json
import math
import re
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

from harness import brokers, clients, measure, paths, results
from harness.procs import Supervisor


class PerfError(RuntimeError):
    pass


def _run_to_end(sup: Supervisor, name: str, argv: list[str], timeout: float) -> list[dict]:
    child = sup.start(name, argv, role="perf")
    evs: list[dict] = []
    deadline = time.monotonic() + timeout
    while True:
        item = sup.wait_event(max(0.0, deadline - time.monotonic()))
        if item is None:
            sup.stop(child)
            raise PerfError(f"{name} did not finish within {timeout:.0f} s (log: {child.log_path})")
        who, ev = item
        if who is not child:
            continue
        if ev.get("event") == "exit":
            if ev["code"] != 0:
                raise PerfError(f"{name} exited with {ev['code']}: {child.last_error()}")
            return evs
        evs.append(ev)


def _rate(n: int, first: int, last: int) -> float:
    return n / ((last - first) / 1e9) if last > first else float("nan")


def loop_once(sup, broker, r: clients.Resolved, count: int, size: int, tag: str):
    send_argv, recv_argv = r.client.loops
    url = broker.url_for(r.protocol)
    q = f"perf.{tag}.{uuid.uuid4().hex[:6]}"
    s = _run_to_end(sup, f"loop-send-{tag}", [*send_argv, url, q, str(count), str(size)], 600)
    rcv = _run_to_end(sup, f"loop-recv-{tag}", [*recv_argv, url, q, str(count)], 600)
    s, rcv = s[-1], rcv[-1]
    if int(rcv["count"]) != count:
        raise PerfError(f"loop {r.label} received {rcv['count']} of {count}")
    return (
        _rate(count, int(s["first_ns"]), int(s["last_ns"])),
        _rate(count, int(rcv["first_ns"]), int(rcv["last_ns"])),
    )


def client_once(sup, broker, r: clients.Resolved, count: int, size: int, tag: str, work: Path):
    url = broker.url_for(r.protocol)
    q = f"perf.{tag}.{uuid.uuid4().hex[:6]}"
    prec, crec = work / f"{tag}-p.tsv", work / f"{tag}-c.tsv"
    common = ["--url", url, "--destinations", q, "--count", str(count)]
    sent_evs = _run_to_end(
        sup,
        f"client-send-{tag}",
        r.client.argv("producer") + common + ["--size", str(size), "--records", str(prec)],
        600,
    )
    _run_to_end(
        sup,
        f"client-recv-{tag}",
        r.client.argv("consumer") + common + ["--records", str(crec)],
        600,
    )
    sent = measure.read_producer_records(prec)
    got = measure.read_consumer_records(crec)
    if len(got) != count:
        raise PerfError(f"client {r.label} received {len(got)} of {count}")
    # the send ends when the broker confirmed the last message (the producer's burst line)
    confirmed = max((e["_rx_ns"] for e in sent_evs if e.get("event") == "burst"),
                    default=max(t for *_, t in sent))
    first, last_call = min(t for *_, t in sent), max(t for *_, t in sent)
    return (
        _rate(count, first, max(confirmed, last_call)),
        _rate(count, min(x.recv_ns for x in got), max(x.recv_ns for x in got)),
        # as ActiveMQ's CLI producer times itself: to its last send call (asynchronous sends
        # return before the broker has the message)
        _rate(count, first, last_call),
    )


_CONSOLE = paths.CLIENTS / "java" / "target" / "console-lib"
_TIME = re.compile(r"^(\d\d):(\d\d):(\d\d)\.(\d{3}) .* Received ")


def cli_once(sup, broker, count: int, size: int, tag: str):
    """ActiveMQ's own command-line producer and consumer (activemq-console), as users run
    them: the producer reports its elapsed time; the consumer logs a line per message, whose
    first and last timestamps give its rate."""
    if not _CONSOLE.exists():
        raise PerfError(f"{_CONSOLE} missing: run ./bench setup")
    q = f"perf.cli.{tag}.{uuid.uuid4().hex[:6]}"
    base = ["java", *clients.JAVA_OPTS, "-Dorg.slf4j.simpleLogger.showDateTime=true",
            "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS", "-cp", f"{_CONSOLE}/*",
            "org.apache.activemq.console.command.ShellCommand"]
    url = broker.openwire_url
    _run_to_end(sup, f"cli-send-{tag}", base + [
        "producer", "--brokerUrl", url, "--destination", f"queue://{q}", "--messageCount",
        str(count), "--messageSize", str(size), "--persistent", "false"], 600)
    send_log = (sup.log_dir / f"cli-send-{tag}.log").read_text()
    ms = re.findall(r"Elapsed time in milli second : (\d+)", send_log)
    if not ms:
        raise PerfError("ActiveMQ's CLI producer printed no elapsed time")
    _run_to_end(sup, f"cli-recv-{tag}", base + [
        "consumer", "--brokerUrl", url, "--destination", f"queue://{q}", "--messageCount",
        str(count)], 600)
    stamps = []
    for line in (sup.log_dir / f"cli-recv-{tag}.log").read_text().splitlines():
        m = _TIME.match(line)
        if m:
            h, mi, sec, milli = map(int, m.groups())
            stamps.append(((h * 60 + mi) * 60 + sec) * 1000 + milli)
    if len(stamps) != count:
        raise PerfError(f"ActiveMQ's CLI consumer logged {len(stamps)} of {count} messages")
    span_ms = (stamps[-1] - stamps[0]) % 86_400_000
    return count / (int(ms[-1]) / 1000), (count - 1) / (span_ms / 1000) if span_ms else math.nan


def _spread(vals: list[float]) -> dict:
    return {"median": statistics.median(vals), "min": min(vals), "max": max(vals)}


def run(
    specs: list[str], sizes: list[int], counts: dict[int, int], rounds: int, out=sys.stdout
) -> dict:
    resolved = [clients.resolve(s) for s in specs]
    for r in resolved:
        why = r.client.missing()
        if why:
            raise PerfError(why)
        if not r.client.loops:
            raise PerfError(f"{r.client.name} has no minimal loop to compare with")
    run_dir = results.Run(results.new_run_id("perf-clients"), sys.argv)
    table = []
    with tempfile.TemporaryDirectory(prefix="burstbench-perf-") as tmp:
        work = Path(tmp)
        with Supervisor(run_dir.dir / "logs") as sup:
            broker = brokers.start(
                sup,
                brokers.BrokerSpec(
                    name="perf", heap="2g", queue_memory_limit="512mb", memory_limit="1gb"
                ),
                work,
            )
            for r in resolved:
                for size in sizes:
                    count = counts.get(size, 50000)
                    samples = {"loop": [], "client": [], "cli": []}
                    with_cli = r.client.name == "openwire-jms"
                    for i in range(rounds + 1):
                        tag = f"{r.client.language}-{size}-{i}"
                        lp = loop_once(sup, broker, r, count, size, tag)
                        cl = client_once(sup, broker, r, count, size, tag, work)
                        cli = cli_once(sup, broker, count, size, tag) if with_cli else None
                        if i == 0:
                            continue  # warm-up round: broker and JIT settle
                        samples["loop"].append(lp)
                        samples["client"].append(cl)
                        if cli:
                            samples["cli"].append(cli)
                    row = {"client": r.label, "size": size, "count": count}
                    for role, idx in (("send", 0), ("recv", 1)):
                        lo = _spread([s[idx] for s in samples["loop"]])
                        cl = _spread([s[idx] for s in samples["client"]])
                        row[role] = {"loop": lo, "client": cl, "ratio": cl["median"] / lo["median"]}
                        if samples["cli"]:
                            ac = _spread([s[idx] for s in samples["cli"]])
                            row[role]["activemq_cli"] = ac
                            # like with like: the CLI's send time ends at its last send call
                            mine = (_spread([s[2] for s in samples["client"]])
                                    if role == "send" else cl)
                            row[role]["client_like_cli"] = mine
                            row[role]["ratio_to_cli"] = mine["median"] / ac["median"]
                    table.append(row)
                    print(format_row(row), file=out, flush=True)
    doc = {
        "kind": "perf-clients",
        "rounds": rounds,
        "table": table,
        "broker_version": brokers.ACTIVEMQ_VERSION,
    }
    (run_dir.dir / "perf.json").write_text(json.dumps(results.json_safe(doc), indent=2))
    run_dir.finish("complete")
    return doc


HEADER = (
    f"{'client':<14}{'size':>6}  {'role':<5}{'loop msg/s (min-max)':>28}"
    f"{'client msg/s (min-max)':>30}{'ratio':>8}"
)


def format_row(row: dict) -> str:
    lines = []
    for role in ("send", "recv"):
        d = row[role]
        lo, cl = d["loop"], d["client"]
        lines.append(
            f"{row['client']:<14}{row['size']:>6}  {role:<5}"
            f"{lo['median']:>10,.0f} ({lo['min']:,.0f}-{lo['max']:,.0f})".ljust(58)
            + f"{cl['median']:>10,.0f} ({cl['min']:,.0f}-{cl['max']:,.0f})".ljust(30)
            + f"{d['ratio']:>7.2f}"
        )
        if "activemq_cli" in d:
            ac, mine = d["activemq_cli"], d["client_like_cli"]
            label = "  vs ActiveMQ CLI" + ("*" if role == "send" else "")
            lines.append(f"{label:<22}{role:<5}"
                         f"{ac['median']:>10,.0f} ({ac['min']:,.0f}-{ac['max']:,.0f})".ljust(58)
                         + f"{mine['median']:>10,.0f} "
                           f"({mine['min']:,.0f}-{mine['max']:,.0f})".ljust(30)
                         + f"{d['ratio_to_cli']:>7.2f}")
    return "\n".join(lines)


def main(args) -> int:
    specs = args.clients.split(",") if args.clients else list(clients.LANGUAGE_CLIENTS)
    sizes = [int(s) for s in args.sizes.split(",")]
    counts = {6: args.count, 1024: max(1000, args.count // 2)}
    print(HEADER)
    try:
        doc = run(specs, sizes, counts, args.rounds)
        if any("activemq_cli" in row["send"] for row in doc["table"]):
            print("* ActiveMQ's CLI producer times itself to its last send call (sends are "
                  "asynchronous), so its row compares ours timed the same way; the rows above "
                  "time every send to the broker's confirmation of the last message.")
    except PerfError as e:
        print(f"bench perf: error: {e}", file=sys.stderr)
        return 1
    return 0
