"""One round of each kind: a library's bare loop, the stock client (alone or as a pair), the one-
CPU rounds, the self-check, and ActiveMQ's own command-line clients."""

from __future__ import annotations

import math
import re
import uuid
from pathlib import Path

from burstbench import clients, options, paths
from burstbench.measure import measure
from burstbench.measure.perf.cpu import (
    CpuSampler,
    cpu_apart,
    cpu_us_per_msg,
    faults_per_msg,
    pin_threads,
)
from burstbench.measure.perf.programs import (
    PerfError,
    fill_then_drain,
    run_to_end,
    run_together,
)
from burstbench.measure.perf.windows import (
    OneCpu,
    Sample,
    common_span,
    common_window,
    loop_arrived,
    rate_of,
    recv_rate,
    send_common_window,
    send_rate,
    send_timed_from_mark,
)


def loop_once(sup, broker, r: clients.Resolved, count: int, size: int, tag: str,
              skip: int = 0) -> Sample:
    send_argv, recv_argv = r.client.loops
    url = broker.url_for(r.protocol)
    q = f"perf.{tag}.{uuid.uuid4().hex[:6]}"
    s = run_to_end(sup, f"loop-send-{tag}",
                    [*send_argv, url, q, str(count), str(size), str(skip)], 600)
    cpu: list[CpuSampler] = []
    rcv = run_to_end(sup, f"loop-recv-{tag}", [*recv_argv, url, q, str(count), str(skip)], 600,
                      cpu)
    return _loop_sample(r, count, skip, s[-1], rcv[-1], cpu[0])


def _loop_send_window(r: clients.Resolved, count: int, skip: int, s: dict) -> tuple[int, int, int]:
    """The loop's timed send: (from, to, messages), as send_rate times it."""
    if send_timed_from_mark(r):
        return int(s["mark_ns"]), int(s["last_ns"]), count - skip
    return int(s["first_ns"]), int(s["last_ns"]), count


def _loop_sample(r: clients.Resolved, count: int, skip: int, s: dict, rcv: dict,
                 cpu: CpuSampler) -> Sample:
    """A loop's sample from its producer's and its consumer's last lines."""
    if int(rcv["count"]) != count:
        raise PerfError(f"loop {r.label} received {rcv['count']} of {count}")
    first, mark, last = int(rcv["first_ns"]), int(rcv["mark_ns"]), int(rcv["last_ns"])
    s_first, s_last = int(s["first_ns"]), int(s["last_ns"])
    return Sample(
        send_rate(count, skip, s_first, int(s["mark_ns"]), s_last, send_timed_from_mark(r)),
        recv_rate(count, skip, mark, last),
        rate_of(count, s_first, s_last),
        cpu_us_per_msg(cpu, count - skip, mark, last),
        rate_of(count, first, last),
        faults_per_msg(cpu, count - skip, mark, last),
        cpu.jit_share(mark, last),
    )


def _client_argvs(broker, r: clients.Resolved, q: str, count: int, size: int, prec: Path,
                  crec: Path) -> tuple[list[str], list[str]]:
    # (the consumer sizes its record memory from --count and --size, as in a sweep's points)
    common = ["--url", broker.url_for(r.protocol), "--destinations", q, "--count", str(count),
              "--size", str(size)]
    return (options.command(r, "producer", common + ["--records", str(prec)]),
            options.command(r, "consumer", common + ["--records", str(crec)]))


def client_rates(r: clients.Resolved, count: int, times: tuple[list[int], int], crec: Path,
                  cpu: CpuSampler | None = None, skip: int = 0,
                  arrivals: list[int] | None = None) -> Sample:
    """The client's sample from its records (``times``: client_send_times of its producer's;
    the CPU only with ``cpu``). ActiveMQ's CLI
    producer times itself to its last send call (its asynchronous sends return before the
    broker has the message), hence ``send_like_cli``. Message SKIP is the SKIP-th of the
    records' times in order, as the loops count it (``arrivals``: those times sorted, when
    already read)."""
    calls, confirmed = times
    if arrivals is None:
        arrivals = sorted(x.recv_ns for x in measure.read_consumer_records(crec))
    if len(arrivals) != count:
        raise PerfError(f"client {r.label} received {len(arrivals)} of {count}")
    first, last_call = calls[0], calls[-1]
    r0, mark, r1 = arrivals[0], arrivals[skip], arrivals[-1]
    return Sample(
        send_rate(count, skip, first, calls[skip], confirmed, send_timed_from_mark(r)),
        recv_rate(count, skip, mark, r1),
        rate_of(count, first, last_call),
        cpu_us_per_msg(cpu, count - skip, mark, r1) if cpu is not None else math.nan,
        rate_of(count, r0, r1),
        faults_per_msg(cpu, count - skip, mark, r1) if cpu is not None else math.nan,
        cpu.jit_share(mark, r1) if cpu is not None else math.nan,
    )


def client_send_times(prec: Path, send_events: list[dict]) -> tuple[list[int], int]:
    """The producer's send calls in time order, and when the broker confirmed the last message
    (the producer's burst line; never before the last call)."""
    calls = sorted(t for *_, t in measure.read_producer_records(prec))
    confirmed = max((e["_rx_ns"] for e in send_events if e.get("event") == "burst"),
                    default=calls[-1])
    return calls, max(confirmed, calls[-1])


def _client_send_cpu_window(r: clients.Resolved, count: int, skip: int, calls: list[int],
                            confirmed: int) -> tuple[int, int, int]:
    """The span of the client's timed send whose CPU counts: (from, to, messages). A producer
    whose send calls write before they return (timed from a mark) has done its sending at its
    last call, and then waits for the receipt; the harness reads the burst line that confirms
    it a few ms later, while the producer already disconnects and writes its records (work a
    loop does not do, and not sending). A stompjs send, timed whole, runs to the confirmation.
    ``calls`` and ``confirmed``: client_send_times."""
    if send_timed_from_mark(r):
        return calls[skip], calls[-1], count - skip
    return calls[0], confirmed, count


def client_once(sup, broker, r: clients.Resolved, count: int, size: int, tag: str, work: Path,
                skip: int = 0):
    """Our producer sends the burst into an empty queue, then our consumer drains it."""
    prec, crec = work / f"{tag}-p.tsv", work / f"{tag}-c.tsv"
    send, recv = _client_argvs(broker, r, f"perf.{tag}.{uuid.uuid4().hex[:6]}", count, size,
                               prec, crec)
    sent_evs = run_to_end(sup, f"client-send-{tag}", send, 600)
    cpu: list[CpuSampler] = []
    run_to_end(sup, f"client-recv-{tag}", recv, 600, cpu)
    return client_rates(r, count, client_send_times(prec, sent_evs), crec, cpu[0], skip)


def client_pair_once(sup, broker, r: clients.Resolved, count: int, size: int, tag: str,
                     work: Path):
    """Our producer and consumer at the same time on one queue (the consumer subscribed
    first)."""
    prec, crec = work / f"{tag}-pair-p.tsv", work / f"{tag}-pair-c.tsv"
    send, recv = _client_argvs(broker, r, f"perf.pair.{tag}.{uuid.uuid4().hex[:6]}", count,
                               size, prec, crec)
    cname, pname = f"pair-recv-{tag}", f"pair-send-{tag}"
    evs = run_together(sup, (cname, recv), (pname, send),
                        lambda c, e: any(x.get("event") == "ready" for x in e), 600)
    return client_rates(r, count, client_send_times(prec, evs[pname]), crec)


def _arrivals_line(r: clients.Resolved, rcv: dict) -> dict:
    """A receive loop's last line, which must report when its messages arrived (at_ns)."""
    if "at_ns" not in rcv:
        raise PerfError(f"the receive loop of {r.label} reports no at_ns (its arrivals)")
    return rcv


def one_cpu_once(sup, broker, r: clients.Resolved, count: int, size: int, tag: str, work: Path,
                 skip: int, cpus: set[int], loop_first: bool) -> tuple[OneCpu, OneCpu]:
    """The loop's producer and the client's at the same time, both pinned to ``cpus``, each
    into its own queue; then their consumers, the same way, each draining its own backlog.
    On one CPU the two share the machine's state (the host's speed flips within seconds here,
    28955a4:docs/perf.md) as closely as two processes can, so their CPU per message compares what
    their code costs. A consumer's is taken in the common window (common_window), when both
    were running. The broker holds both queues until both consumers have subscribed (Hold):
    each process boots in turn on the one CPU, and the JMS consumer started first drained
    alone for the 1.0-1.5 s the other JVM took to subscribe (28955a4:docs/perf.md). Returns (loop,
    client)."""
    send_argv, recv_argv = r.client.loops
    url = broker.url_for(r.protocol)
    ql, qc = (f"perf.1cpu.{tag}.{w}.{uuid.uuid4().hex[:6]}" for w in ("loop", "client"))
    prec, crec = work / f"{tag}-1cpu-p.tsv", work / f"{tag}-1cpu-c.tsv"
    c_send, c_recv = _client_argvs(broker, r, qc, count, size, prec, crec)
    ls, cs, lr, cr = (f"1cpu-{w}-{tag}" for w in ("loop-send", "client-send", "loop-recv",
                                                   "client-recv"))

    sent, s_cpu, got, r_cpu, held_ms = fill_then_drain(
        sup, broker, [ql, qc],
        [(ls, [*send_argv, url, ql, str(count), str(size), str(skip)]), (cs, c_send)],
        [(lr, [*recv_argv, url, ql, str(count), str(skip)]), (cr, c_recv)],
        cpus, loop_first, reads=True)
    rcv = _arrivals_line(r, got[lr][-1])
    loop = _loop_sample(r, count, skip, sent[ls][-1], rcv, r_cpu[lr])
    times = client_send_times(prec, sent[cs])
    arrivals = sorted(x.recv_ns for x in measure.read_consumer_records(crec))
    client = client_rates(r, count, times, crec, r_cpu[cr], skip, arrivals)
    common = common_window(rcv, arrivals, count, skip)
    share = min(common[2:]) / (count - skip) if common is not None else math.nan
    s_common = send_common_window(r, sent[ls][-1], times[0], count, skip)
    s_share = min(s_common[2:]) / (count - skip) if s_common is not None else math.nan
    out = []
    for i, (smp, s_side, r_side, send_window, own) in enumerate((
            (loop, s_cpu[ls], r_cpu[lr], _loop_send_window(r, count, skip, sent[ls][-1]),
             (int(rcv["mark_ns"]), int(rcv["last_ns"]))),
            (client, s_cpu[cs], r_cpu[cr], _client_send_cpu_window(r, count, skip, *times),
             (arrivals[skip], arrivals[-1])))):
        send_us, send_jit = cpu_apart(s_side, *send_window)
        send_common_us = (math.nan if s_common is None
                          else cpu_apart(s_side, s_common[0], s_common[1], s_common[2 + i])[0])
        own_us = cpu_apart(r_side, *own, max(1, count - skip - 1))[0]  # as cpu_us_per_msg counts
        recv_us = recv_jit = faults = sys_us = reads = math.nan
        if common is not None:
            a, b, n = common[0], common[1], common[2 + i]
            recv_us, recv_jit = cpu_apart(r_side, a, b, n)
            faults = r_side.faults_between(a, b) / n
            sys_us, reads = r_side.sys_between(a, b) / 1000 / n, r_side.reads_between(a, b) / n
        out.append(OneCpu(send_us, recv_us, smp.send, smp.recv, faults, send_jit, recv_jit,
                          own_us, share, held_ms, sys_us, reads, send_common_us, s_share))
    return out[0], out[1]


def self_check_once(sup, broker, r: clients.Resolved, count: int, size: int, tag: str,
                    work: Path, skip: int, cpus: set[int],
                    loop_first: bool) -> tuple[float, float, float]:
    """A one-CPU receive round with the loop on both sides (A/A): two of the loop's producers
    fill a queue each at the same time, then two of its receive loops drain them together, each
    its own, pinned and held as one_cpu_once runs loop and client (``work`` unused: the loops
    keep no records). Two copies of one code cost the same a message, so their ratio shows how
    far the comparison leans on its own: toward a queue, or the side started first (loop a
    when ``loop_first``, else loop b). Returns loop a's and loop b's CPU µs a message in their
    common window, and its share of the timed messages; three nan when the round had no
    common window."""
    send_argv, recv_argv = r.client.loops
    url = broker.url_for(r.protocol)
    qs = [f"perf.aa.{tag}.{w}.{uuid.uuid4().hex[:6]}" for w in ("a", "b")]
    names = [f"aa-recv-{w}-{tag}" for w in "ab"]
    _, _, got, cpu, _ = fill_then_drain(
        sup, broker, qs,
        [(f"aa-send-{w}-{tag}", [*send_argv, url, q, str(count), str(size), str(skip)])
         for w, q in zip("ab", qs)],
        [(n, [*recv_argv, url, q, str(count), str(skip)]) for n, q in zip(names, qs)],
        cpus, loop_first)
    rcv = [_arrivals_line(r, got[n][-1]) for n in names]
    for n, x in zip(names, rcv):
        if int(x["count"]) != count:
            raise PerfError(f"{n} ({r.label}'s receive loop) received {x['count']} of {count}")
    w = common_span([(int(x["mark_ns"]), int(x["last_ns"])) for x in rcv],
                     [lambda t, x=x: loop_arrived(x, t) for x in rcv], count, skip)
    if w is None:
        return math.nan, math.nan, math.nan
    a, b, n = w
    return (cpu_apart(cpu[names[0]], a, b, n[0])[0], cpu_apart(cpu[names[1]], a, b, n[1])[0],
            min(n) / (count - skip))


_CONSOLE = paths.CLIENTS / "java" / "target" / "console-lib"


_TIME = re.compile(r"^(\d\d):(\d\d):(\d\d)\.(\d{3}) .* Received ")


def _cli_argv(role: str, url: str, q: str, count: int, size: int) -> list[str]:
    if not _CONSOLE.exists():
        raise PerfError(f"{_CONSOLE} missing: run ./bench setup")
    argv = ["java", *clients.JAVA_OPTS, "-Dorg.slf4j.simpleLogger.showDateTime=true",
            "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS", "-cp", f"{_CONSOLE}/*",
            "org.apache.activemq.console.command.ShellCommand", role, "--brokerUrl", url,
            "--destination", f"queue://{q}", "--messageCount", str(count)]
    if role == "producer":
        argv += ["--messageSize", str(size), "--persistent", "false"]
    return argv


def _cli_send_rate(log: Path, count: int) -> float:
    ms = re.findall(r"Elapsed time in milli second : (\d+)", log.read_text())
    if not ms:
        raise PerfError(f"ActiveMQ's CLI producer printed no elapsed time ({log})")
    return count / (int(ms[-1]) / 1000)


def _cli_recv_rate(log: Path, count: int) -> float:
    stamps = []
    for line in log.read_text().splitlines():
        m = _TIME.match(line)
        if m:
            h, mi, sec, milli = map(int, m.groups())
            stamps.append(((h * 60 + mi) * 60 + sec) * 1000 + milli)
    if len(stamps) != count:
        raise PerfError(f"ActiveMQ's CLI consumer logged {len(stamps)} of {count} messages")
    span_ms = (stamps[-1] - stamps[0]) % 86_400_000
    return (count - 1) / (span_ms / 1000) if span_ms else math.nan


def cli_once(sup, broker, count: int, size: int, tag: str):
    """ActiveMQ's own command-line producer and consumer (activemq-console), as users run
    them, one after the other: the producer reports its elapsed time; the consumer logs a line
    per message, whose first and last timestamps give its rate."""
    q = f"perf.cli.{tag}.{uuid.uuid4().hex[:6]}"
    url = broker.openwire_url
    run_to_end(sup, f"cli-send-{tag}", _cli_argv("producer", url, q, count, size), 600)
    run_to_end(sup, f"cli-recv-{tag}", _cli_argv("consumer", url, q, count, size), 600)
    return (_cli_send_rate(sup.log_dir / f"cli-send-{tag}.log", count),
            _cli_recv_rate(sup.log_dir / f"cli-recv-{tag}.log", count))


def cli_pair_once(sup, broker, count: int, size: int, tag: str):
    """The CLI consumer, then the CLI producer once the consumer says it waits for messages."""
    q = f"perf.cli-pair.{tag}.{uuid.uuid4().hex[:6]}"
    url = broker.openwire_url
    cname, pname = f"cli-pair-recv-{tag}", f"cli-pair-send-{tag}"
    clog = sup.log_dir / f"{cname}.log"

    def waiting(_child, _evs) -> bool:
        return clog.exists() and " wait until " in clog.read_text()

    run_together(sup, (cname, _cli_argv("consumer", url, q, count, size)),
                  (pname, _cli_argv("producer", url, q, count, size)), waiting, 600)
    return (_cli_send_rate(sup.log_dir / f"{pname}.log", count), _cli_recv_rate(clog, count))


def run_one_cpu_rounds(sup, broker, r: clients.Resolved, count: int, size: int, work: Path,
                    skip: int, rounds: int, cpus: list[int], once=one_cpu_once) -> list[tuple]:
    """``rounds`` one-CPU rounds after one discarded (loop started first in even rounds, the
    client in odd ones), the broker kept on the last CPU meanwhile and then let go again.
    ``once`` runs a round: one_cpu_once (loop and client), or self_check_once (A/A)."""
    if not rounds:
        return []
    got = []
    pin_threads([broker.child.pid], {cpus[-1]})
    try:
        for i in range(rounds + 1):
            tag = f"{r.client.name}-{size}-{i}"
            pair = once(sup, broker, r, count, size, tag, work, skip, {cpus[0]},
                        loop_first=i % 2 == 0)
            if i:
                got.append(pair)
    finally:
        pin_threads([broker.child.pid], set(cpus))
    return got
