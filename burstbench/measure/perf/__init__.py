"""``./bench perf clients``: each client against a minimal loop of the same library.

Both are measured the same way on the same broker, alternating within each round so that
the machine's noise falls on both (loop then client in even rounds, client then loop in odd
ones): the producer sends COUNT messages into an empty queue (send rate = the messages from
SKIP on / (broker's confirmation of the last message − hand-over of message SKIP); the loops
time their sends the same way), then the consumer drains that backlog (receive rate = the
arrivals after message SKIP's / (last arrival − message SKIP's)). Within each process the
first share of its messages (``--warmup-share``, half by default) is its warm-up and is not timed:
rates and CPU run from message SKIP (counted from 0) to the last, for loop and client alike,
the same message indices on both sides (a fresh JVM compiles for its first few hundred
thousand messages, and loop and client compile different amounts of code, so a drain timed
from its first message measures the compiler). A stompjs send is timed
whole: its publish() only queues, so when message SKIP was handed over says nothing about when
it left. One warm-up round is discarded; the table shows the median of the measured rounds
with min and max, and the ratio client / loop: the bench's own cost, which must stay within
5% (ratio >= 0.95). A ratio is taken round by round (client / loop measured next to each
other), and the table shows the median of those with their min and max: the machine's slow
drift falls on both sides of each. The target is judged once, by a rule the run prints and
records before it measures (``rule``): a ratio *holds* 0.95 when every measured round's ratio
is at or above it, *misses* it when every round's is below, and is *within noise* when the
rounds straddle it; fewer than 5 rounds are not judged. A run repeated is a run of its own,
reported beside the first, never pooled into it. The median's distribution-free confidence
interval (order statistics of the rounds' ratios) is printed beside as information: the
rounds of one run share one broker, and the spread between runs is wider than it. A stock
client with a tuned entry (``stomp-py-tuned``...) has it measured in the same rounds, and
tuned / stock is printed as the headroom the library leaves.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

from burstbench import clients
from burstbench.infra import brokers
from burstbench.infra.procs import Supervisor
from burstbench.infra.stack import Stack
from burstbench.measure import results
from burstbench.measure.perf.cpu import CpuSampler, pin_threads, process_cpu_clock  # noqa: F401
from burstbench.measure.perf.programs import (  # noqa: F401
    Hold,
    PerfError,
    run_to_end,
)
from burstbench.measure.perf.rounds import (  # noqa: F401
    cli_once,
    cli_pair_once,
    client_once,
    client_pair_once,
    client_rates,
    client_send_times,
    loop_once,
    run_one_cpu_rounds,
    self_check_once,
)
from burstbench.measure.perf.sizing import (
    BROKER_BYTES_PER_MSG,
    QUEUE_MEMORY_MOST,
    broker_memory,
    messages_for,
    one_cpu_count,
    one_cpu_counts,
)
from burstbench.measure.perf.stats import (  # noqa: F401
    TARGET,
    lean,
    median_ci,
    one_cpu_summary,
    paired_ratios,
    rule,
    self_check_summary,
    spread_of,
    verdict,
)
from burstbench.measure.perf.table import (
    CI_FOOTNOTE,
    CLI_FOOTNOTE,
    CPU_FOOTNOTE,
    HEADER,
    ONE_CPU_FOOTNOTE,
    SELF_CHECK_FOOTNOTE,
    TUNED_FOOTNOTE,
    format_row,
    warmup_footnote,
)
from burstbench.measure.perf.windows import (  # noqa: F401
    MIN_COMMON,
    OneCpu,
    common_span,
    common_window,
    loop_arrived,
    recv_rate,
    send_common_window,
    send_rate,
    send_timed_from_mark,
    skip_of,
)
from burstbench.measure.spec import PointSpec


def tuned_of(r: clients.Resolved) -> clients.Resolved | None:
    """The tuned entry of a stock client, on the same transport; None if it has none."""
    for c in clients.tuned_clients():
        if c.tuned_of == r.client.name and r.transport in c.transports:
            return clients.Resolved(c, r.transport)
    return None


def run(
    specs: list[str], sizes: list[int], counts: dict[int, int], rounds: int, out=sys.stdout,
    optimized_dispatch: bool = False, counts_jvm: dict[int, int] | None = None,
    with_cli: bool = True, warmup: float = 0.5, with_tuned: bool = True,
    one_cpu_rounds: int = 0, counts_jvm_one_cpu: dict[int, int] | None = None,
    self_check_rounds: int = 0,
) -> dict:
    resolved = [clients.resolve(s) for s in specs]
    cpus = sorted(os.sched_getaffinity(0))
    if (one_cpu_rounds or self_check_rounds) and len(cpus) < 2:
        raise PerfError(f"one-CPU rounds need two CPUs (one for the broker, one shared by the "
                        f"two consumers); this process may run on {len(cpus)}: "
                        f"--one-cpu-rounds 0 --self-check 0")
    most_bytes = 0    # the fullest queue's
    for r in resolved:
        why = r.client.missing()
        if why:
            raise PerfError(why)
        if r.client.tuned:
            raise PerfError(f"{r.client.name} is a tuned entry: name its stock client "
                            f"({r.client.tuned_of}); the tuned one is measured beside it")
        if not r.client.loops:
            raise PerfError(f"{r.client.name} has no minimal loop to compare with")
        tuned = tuned_of(r) if with_tuned else None
        if tuned is not None and tuned.client.missing():
            raise PerfError(tuned.client.missing())
        for size in sizes:
            count = messages_for(r, size, counts, counts_jvm)
            if one_cpu_rounds:
                count = max(count, one_cpu_count(r, size, count, 0, counts_jvm_one_cpu)[0])
            per_msg = size + BROKER_BYTES_PER_MSG   # a message's bytes in the broker
            need = count * per_msg                   # this queue's
            most_bytes = max(most_bytes, need)
            if need > QUEUE_MEMORY_MOST:
                most = QUEUE_MEMORY_MOST // per_msg
                raise PerfError(
                    f"{count:,} messages of {size} B do not fit in the perf broker's queue memory "
                    f"({QUEUE_MEMORY_MOST >> 20} MB at most, at about {BROKER_BYTES_PER_MSG} B "
                    f"a message beside its body): flow control would hold the producer until the "
                    f"sample timed out; at most {most:,} at {size} B (--count, or --count-jvm "
                    f"and --count-jvm-one-cpu for Java)")
    queue_memory, heap = broker_memory(most_bytes)
    run_dir = results.Run(results.new_run_id("perf-clients"), sys.argv)
    table = []
    with tempfile.TemporaryDirectory(prefix="burstbench-perf-") as tmp:
        work = Path(tmp)
        # the broker as every point has it (Stack: started, watched, stopped by PID), its
        # heap and memory sized to the largest backlog
        limits = {"heap": heap, "queue_memory_limit": f"{queue_memory >> 20}mb",
                  "memory_limit": f"{(2 * queue_memory + (512 << 20)) >> 20}mb"}
        with Supervisor(run_dir.dir / "logs") as sup, Stack(
                PointSpec(optimized_dispatch=optimized_dispatch), run_dir.dir, sup,
                broker_limits=limits) as stack:
            broker = stack.brokers["a"]
            for r in resolved:
                tuned = tuned_of(r) if with_tuned else None
                for size in sizes:
                    count = messages_for(r, size, counts, counts_jvm)
                    skip = skip_of(count, warmup)
                    samples = {k: [] for k in ("loop", "client", "tuned", "cli", "pair",
                                               "cli_pair")}
                    cli = with_cli and r.client.name == "openwire-jms"
                    for i in range(rounds + 1):
                        tag = f"{r.client.name}-{size}-{i}"
                        measures = {
                            # (each called in this iteration, below: B023 does not apply)
                            "loop": lambda: loop_once(sup, broker, r, count, size, tag,  # noqa: B023
                                                      skip),  # noqa: B023
                            "client": lambda: client_once(sup, broker, r, count, size, tag,  # noqa: B023
                                                          work, skip),  # noqa: B023
                        }
                        if tuned is not None:
                            measures["tuned"] = lambda: client_once(
                                sup, broker, tuned, count, size, f"{tag}-tuned", work,  # noqa: B023
                                skip)  # noqa: B023
                        order = list(measures) if i % 2 == 0 else list(measures)[::-1]
                        got = {k: measures[k]() for k in order}
                        if cli:
                            # apart: send a backlog, then drain it; together: the consumer
                            # listens while the producer sends (the pair as users run it)
                            got["cli"] = cli_once(sup, broker, count, size, tag)
                            got["pair"] = client_pair_once(sup, broker, r, count, size, tag, work)
                            got["cli_pair"] = cli_pair_once(sup, broker, count, size, tag)
                        if i == 0:
                            continue  # warm-up round: broker and JIT settle
                        for k, v in got.items():
                            samples[k].append(v)
                    one_count, one_skip = one_cpu_count(r, size, count, skip,
                                                        counts_jvm_one_cpu)
                    one = run_one_cpu_rounds(sup, broker, r, one_count, size, work, one_skip,
                                          one_cpu_rounds, cpus)
                    aa = run_one_cpu_rounds(sup, broker, r, one_count, size, work, one_skip,
                                         self_check_rounds, cpus, once=self_check_once)
                    row = {"client": r.label, "size": size, "count": count, "skip": skip,
                           "send_timed_from_mark": send_timed_from_mark(r)}
                    if one or aa:
                        row["one_cpu_count"], row["one_cpu_skip"] = one_count, one_skip
                    for role, idx in (("send", 0), ("recv", 1)):
                        lo = spread_of([s[idx] for s in samples["loop"]])
                        cl = spread_of([s[idx] for s in samples["client"]])
                        # each round's client against the loop measured beside it: the machine's
                        # slow drift falls on both, so the ratio's spread is the rounds' own
                        paired = paired_ratios(samples["client"], samples["loop"], idx)
                        row[role] = {"loop": lo, "client": cl, "ratio": paired["median"],
                                     "ratio_spread": paired,
                                     "ratio_of_medians": cl["median"] / lo["median"],
                                     "rounds": {"loop": [s[idx] for s in samples["loop"]],
                                                "client": [s[idx] for s in samples["client"]]}}
                        if role == "recv":
                            # the whole drain, warm-up included, for the record
                            row[role]["whole_drain"] = {
                                "loop": spread_of([s.recv_whole for s in samples["loop"]]),
                                "client": spread_of([s.recv_whole for s in samples["client"]]),
                                "ratio": paired_ratios(samples["client"], samples["loop"], 4)}
                            # the consumer's own CPU per message: its work, less moved by the
                            # machine's scheduling than its rate (loop / client: >= 0.95 too)
                            row[role]["cpu_us_per_msg"] = {
                                "loop": spread_of([s.cpu_us for s in samples["loop"]]),
                                "client": spread_of([s.cpu_us for s in samples["client"]]),
                                "ratio": paired_ratios(samples["loop"], samples["client"], 3)}
                            # fresh memory it touched: kept bodies show here first
                            row[role]["faults_per_msg"] = {
                                "loop": spread_of([s.faults for s in samples["loop"]]),
                                "client": spread_of([s.faults for s in samples["client"]])}
                        if samples["tuned"]:
                            tu = spread_of([s[idx] for s in samples["tuned"]])
                            tp = paired_ratios(samples["tuned"], samples["client"], idx)
                            row[role]["tuned"] = {"client": tuned.label, "rates": tu,
                                                  "ratio_to_stock": tp["median"],
                                                  "ratio_spread": tp,
                                                  "rounds": [s[idx] for s in samples["tuned"]]}
                        if one:
                            row[role]["one_cpu"] = one_cpu_summary(one, role)
                        if aa and role == "recv":
                            row[role]["self_check"] = self_check_summary(aa)
                        for mode, ours, theirs in (("apart", "client", "cli"),
                                                   ("together", "pair", "cli_pair")):
                            if not samples[theirs]:
                                continue
                            ac = spread_of([s[idx] for s in samples[theirs]])
                            # like with like: the CLI's send time ends at its last send call
                            # (and the whole drain: the CLI's consumer times all of it)
                            mine = spread_of([s.send_like_cli if role == "send" else s.recv_whole
                                            for s in samples[ours]])
                            row[role].setdefault("vs_cli", {})[mode] = {
                                "activemq_cli": ac, "client_like_cli": mine,
                                "ratio_to_cli": mine["median"] / ac["median"]}
                    table.append(row)
                    print(format_row(row), file=out, flush=True)
    doc = {
        "kind": "perf-clients",
        "rule": rule(rounds, one_cpu_rounds),
        "target": TARGET,
        "rounds": rounds,
        "warmup": warmup,
        "tuned": with_tuned,
        "counts": {str(k): v for k, v in counts.items()},
        "counts_jvm": {str(k): v for k, v in (counts_jvm or counts).items()},
        "counts_jvm_one_cpu": ({str(k): v for k, v in counts_jvm_one_cpu.items()}
                               if counts_jvm_one_cpu and one_cpu_rounds else None),
        "table": table,
        "broker_version": brokers.ACTIVEMQ_VERSION,
        "broker_memory": {"queue_mb": queue_memory >> 20, "heap": heap},
        "optimized_dispatch": optimized_dispatch,
        "one_cpu": {"rounds": one_cpu_rounds, "clients_cpu": cpus[0],
                    "broker_cpu": cpus[-1]} if one_cpu_rounds else None,
        "self_check": {"rounds": self_check_rounds, "clients_cpu": cpus[0],
                       "broker_cpu": cpus[-1]} if self_check_rounds else None,
    }
    (run_dir.dir / "perf.json").write_text(json.dumps(results.json_safe(doc), indent=2))
    run_dir.finish("complete")
    return doc


def main(args) -> int:
    specs = args.clients.split(",") if args.clients else list(clients.LANGUAGE_CLIENTS)
    sizes = [int(s) for s in args.sizes.split(",")]
    jvm = args.count_jvm or args.count
    counts = {6: args.count, 1024: max(1000, args.count // 2)}
    counts_jvm = {6: jvm, 1024: max(1000, jvm // 2)}
    counts_jvm_one_cpu = one_cpu_counts(args.count_jvm_one_cpu or 2 * jvm, counts_jvm,
                                        args.warmup)
    one_cpu = args.rounds if args.one_cpu_rounds is None else args.one_cpu_rounds
    print(rule(args.rounds, one_cpu))
    print(HEADER)
    try:
        doc = run(specs, sizes, counts, args.rounds, optimized_dispatch=args.optimized_dispatch,
                  counts_jvm=counts_jvm, with_cli=args.cli, warmup=args.warmup,
                  with_tuned=args.tuned,
                  one_cpu_rounds=one_cpu, counts_jvm_one_cpu=counts_jvm_one_cpu,
                  self_check_rounds=args.self_check)
        print(warmup_footnote(args.warmup))
        print(CI_FOOTNOTE)
        print(CPU_FOOTNOTE)
        if doc["one_cpu"]:
            print(ONE_CPU_FOOTNOTE.format(**doc["one_cpu"]))
        if doc["self_check"]:
            print(SELF_CHECK_FOOTNOTE.format(**doc["self_check"]))
        if any("tuned" in row["send"] for row in doc["table"]):
            print(TUNED_FOOTNOTE)
        if any("vs_cli" in row["send"] for row in doc["table"]):
            print(CLI_FOOTNOTE)
    except PerfError as e:
        print(f"bench perf: error: {e}", file=sys.stderr)
        return 1
    return 0
