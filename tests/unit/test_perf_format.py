"""./bench perf's table (pure formatting): the CLI rows compare like with like."""

import math

import pytest

from burstbench.measure.perf import format_row


def _spread(m):
    return {"median": m, "min": m - 1, "max": m + 1}


def _vs(theirs, ours):
    return {"activemq_cli": _spread(theirs), "client_like_cli": _spread(ours),
            "ratio_to_cli": ours / theirs}


def test_the_cli_rows_show_our_rate_timed_like_the_cli_in_both_modes():
    row = {
        "client": "openwire-jms",
        "size": 6,
        "send": {"loop": _spread(1000), "client": _spread(1200), "ratio": 1.2,
                 "vs_cli": {"apart": _vs(900, 1250), "together": _vs(800, 1300)}},
        "recv": {"loop": _spread(10), "client": _spread(20), "ratio": 2.0,
                 "vs_cli": {"apart": _vs(10, 20), "together": _vs(8, 30)}},
    }
    lines = format_row(row).splitlines()
    assert len(lines) == 6  # send, its two CLI rows, recv, its two CLI rows
    apart, together = lines[1], lines[2]
    assert apart.lstrip().startswith("vs CLI (apart)*") and "1,250" in apart and "1.39" in apart
    assert "1,200" not in apart  # the confirmed-send rate is the row above, not this one
    assert together.lstrip().startswith("vs CLI (together)*") and "1.62" in together
    assert lines[4].lstrip().startswith("vs CLI (apart) ") and "2.00" in lines[4]
    assert lines[5].lstrip().startswith("vs CLI (together) ") and "3.75" in lines[5]


def test_a_client_without_cli_rows_prints_two_lines():
    row = {"client": "stomp-py", "size": 1024,
           "send": {"loop": _spread(1000), "client": _spread(900), "ratio": 0.9},
           "recv": {"loop": _spread(10), "client": _spread(20), "ratio": 2.0}}
    lines = format_row(row).splitlines()
    assert len(lines) == 2 and "0.90" in lines[0] and "2.00" in lines[1]


def test_a_ratio_taken_round_by_round_prints_its_spread():
    row = {"client": "net-stomp", "size": 6,
           "send": {"loop": _spread(1000), "client": _spread(990), "ratio": 0.97,
                    "ratio_spread": {"median": 0.97, "min": 0.91, "max": 1.04}},
           "recv": {"loop": _spread(10), "client": _spread(9), "ratio": 0.93,
                    "ratio_spread": {"median": 0.93, "min": 0.88, "max": 0.99}}}
    send, recv = format_row(row).splitlines()
    assert "0.97 (0.91-1.04)" in send and "0.93 (0.88-0.99)" in recv


def test_the_consumers_cpu_per_message_is_a_row_of_its_own():
    row = {"client": "stompjs", "size": 6,
           "send": {"loop": _spread(1000), "client": _spread(990), "ratio": 0.99},
           "recv": {"loop": _spread(10), "client": _spread(9), "ratio": 0.9,
                    "cpu_us_per_msg": {"loop": _spread(18.5), "client": _spread(19.25),
                                       "ratio": {"median": 0.96, "min": 0.9, "max": 0.99}}}}
    lines = format_row(row).splitlines()
    assert len(lines) == 3
    cpu = lines[2]
    assert cpu.lstrip().startswith("CPU us/msg") and "18.50" in cpu and "19.25" in cpu
    assert cpu.rstrip().endswith("0.96 (0.90-0.99)")


def test_cpu_between_interpolates_and_refuses_an_uncovered_span():
    from burstbench.measure.perf import CpuSampler

    s = CpuSampler(1)
    s.samples = [(0, 0.0, 7.0), (10, 100.0, 17.0), (20, 300.0, 57.0)]
    assert s.cpu_between(5, 15) == 200.0 - 50.0
    assert s.cpu_between(0, 20) == 300.0
    assert s.cpu_between(-1, 10) != s.cpu_between(-1, 10)  # nan: starts before the first sample
    # the faults column, read the same way
    assert s.faults_between(5, 15) == 37.0 - 12.0
    assert s.faults_between(0, 20) == 50.0
    # and the system CPU and the read calls
    s.samples = [(0, 0.0, 7.0, 0.0, 10.0, 100.0), (10, 100.0, 17.0, 0.0, 30.0, 140.0)]
    assert s.sys_between(0, 10) == 20.0 and s.reads_between(5, 10) == 20.0


def test_a_sampler_reads_the_system_cpu_and_read_calls_of_a_process():
    """A live process's own figures from /proc: its system CPU and its read system calls grow
    as it reads (here: a child reading /dev/zero in 1-byte reads)."""
    import os
    import subprocess
    import sys
    import time

    from burstbench.measure.perf import CpuSampler

    reader = "import os\nf = os.open('/dev/zero', os.O_RDONLY)\nwhile True: os.read(f, 1)"
    p = subprocess.Popen([sys.executable, "-c", reader])
    try:
        s = CpuSampler(p.pid, every=0.01, reads=True)
        s.start()
        time.sleep(0.6)
        s.halt.set()
        s.join()
    finally:
        p.kill()
        p.wait()
    (t0, *_), (t1, *_) = s.samples[0], s.samples[-1]
    assert s.reads_between(t0, t1) > 1000
    assert 0 < s.sys_between(t0, t1) <= s.cpu_between(t0, t1)
    # once it is gone (reaped above), the last count stands: a loop exits inside its window
    assert not os.path.exists(s.io) and s._reads() == s.samples[-1][5]


def test_the_consumers_page_faults_per_message_are_printed_under_its_cpu():
    row = {"client": "net-stomp", "size": 1024,
           "send": {"loop": _spread(1000), "client": _spread(990), "ratio": 0.99},
           "recv": {"loop": _spread(10), "client": _spread(9), "ratio": 0.9,
                    "cpu_us_per_msg": {"loop": _spread(18.5), "client": _spread(19.25),
                                       "ratio": {"median": 0.96, "min": 0.9, "max": 0.99}},
                    "faults_per_msg": {"loop": _spread(0.0021), "client": _spread(0.2634)}}}
    lines = format_row(row).splitlines()
    assert len(lines) == 4
    assert lines[3].lstrip().startswith("page faults/msg")
    assert "0.002" in lines[3] and "0.263" in lines[3]


def test_a_one_cpu_receive_prints_where_its_cpu_went():
    from burstbench.measure.perf import OneCpu, format_row, one_cpu_summary

    def side(recv, sys_us, reads):
        return OneCpu(10.0, recv, 1, 1, 0.0, recv_cpu_us_own=recv, recv_common=0.8,
                      recv_sys_us=sys_us, recv_reads=reads)

    one = [(side(14.0, 0.8, 0.166), side(14.8, 0.85 + 0.01 * i, 0.164)) for i in range(9)]
    recv = one_cpu_summary(one, "recv")
    assert recv["sys_us_per_msg"]["client"]["median"] == pytest.approx(0.89)
    assert recv["reads_per_msg"]["loop"]["median"] == pytest.approx(0.166)
    # a side that could not be read (nan) leaves the figure out rather than print a nan
    gap = [(side(14.0, 0.8, math.nan), side(14.8, 0.9, 0.164))] + one[1:]
    assert "reads_per_msg" not in one_cpu_summary(gap, "recv")
    assert "sys_us_per_msg" not in one_cpu_summary(one, "send")
    # every round is kept whole, in order, each role with its own fields only
    each = recv["each"]
    assert [x["recv_sys_us"] for x in each["client"]] == [0.85 + 0.01 * i for i in range(9)]
    assert sorted(each["loop"][0]) == [
        "recv", "recv_common", "recv_cpu_us", "recv_cpu_us_own", "recv_faults", "recv_held_ms",
        "recv_jit", "recv_reads", "recv_sys_us"]
    assert (each["loop"][0]["recv_cpu_us"], each["client"][8]["recv_reads"]) == (14.0, 0.164)
    assert sorted(one_cpu_summary(one, "send")["each"]["loop"][0]) == [
        "send", "send_common", "send_cpu_us", "send_cpu_us_common", "send_jit"]
    spread = {"median": 1.0, "min": 1.0, "max": 1.0}
    row = {"client": "net-stomp", "size": 1024,
           "send": {"loop": spread, "client": spread, "ratio": 1.0},
           "recv": {"loop": spread, "client": spread, "ratio": 1.0, "one_cpu": recv}}
    text = format_row(row)
    kernel = next(x for x in text.splitlines() if "sys us/msg" in x)
    assert "0.80 (0.80-0.80)" in kernel and "0.89 (0.85-0.93)" in kernel
    reads = next(x for x in text.splitlines() if "reads/msg" in x)
    assert "0.166" in reads and "0.164" in reads


def test_a_burst_too_large_for_the_brokers_queue_memory_is_refused_before_anything_starts(
        tmp_path, monkeypatch):
    """400,000 1 KiB messages stalled a Java loop under flow control until its 10-minute
    timeout; such counts are refused up front, naming the most that fits."""
    import pytest

    from burstbench.measure import perf

    monkeypatch.setattr(perf.results.paths, "RESULTS", tmp_path)
    with pytest.raises(perf.PerfError, match=r"at most 965,595 at 1024 B"):
        perf.run(["openwire-jms"], [1024], {1024: 1000}, 1, counts_jvm={1024: 1_000_000})
    # a JVM's one-CPU rounds run longer: their count is checked too, and only with them
    with pytest.raises(perf.PerfError, match=r"^1,000,000 messages of 1024 B"):
        perf.run(["openwire-jms"], [1024], {1024: 1000}, 1, counts_jvm={1024: 1000},
                 one_cpu_rounds=1, counts_jvm_one_cpu={1024: 1_000_000})
    assert not list(tmp_path.iterdir())  # no run was started


def test_a_jvms_one_cpu_rounds_add_warm_up_and_keep_the_timed_messages():
    """Two JVMs and their compilers share the one CPU: a JVM's one-CPU rounds run
    --count-jvm-one-cpu messages, the extra all warm-up; other clients' are the two-CPU ones."""
    from burstbench import clients
    from burstbench.measure.perf import one_cpu_count

    jms, perl = clients.resolve("openwire-jms"), clients.resolve("net-stomp")
    assert one_cpu_count(jms, 6, 400_000, 200_000, {6: 800_000}) == (800_000, 600_000)
    assert one_cpu_count(jms, 6, 400_000, 200_000, None) == (400_000, 200_000)
    assert one_cpu_count(jms, 6, 400_000, 200_000, {6: 1000}) == (400_000, 200_000)  # never less
    assert one_cpu_count(perl, 6, 100_000, 50_000, {6: 800_000}) == (100_000, 50_000)


def test_a_jvms_one_cpu_warm_up_is_as_long_at_1_kib_as_at_6_b():
    """Halving a one-CPU round at 1 KiB left its compiler in the window (R57): the warm-up is
    the same at every size, the timed messages each size's own."""
    from burstbench.measure.perf import one_cpu_counts

    # the defaults: --count-jvm 400,000 (200,000 at 1 KiB), one-CPU rounds twice that at 6 B
    assert one_cpu_counts(800_000, {6: 400_000, 1024: 200_000}, 0.5) == {6: 800_000,
                                                                         1024: 700_000}
    assert one_cpu_counts(400_000, {6: 200_000, 1024: 100_000}, 0.5) == {6: 400_000,
                                                                         1024: 350_000}
    # a warm-up of a quarter: 6 B times 300,000 after 500,000, 1 KiB 150,000 after the same
    assert one_cpu_counts(800_000, {6: 400_000, 1024: 200_000}, 0.25) == {6: 800_000,
                                                                          1024: 650_000}
    # never fewer than the two-CPU rounds' messages
    assert one_cpu_counts(1000, {6: 400_000, 1024: 200_000}, 0.5) == {6: 400_000,
                                                                      1024: 200_000}


def test_the_perf_broker_holds_two_of_the_fullest_queues():
    """A queue's memory is 1 GiB and the heap 6 GB where that holds the fullest queue, else
    the queue's bytes rounded up to 256 MiB and the heap two of them and 4 GB more."""
    from burstbench.measure.perf import BROKER_BYTES_PER_MSG, broker_memory

    assert broker_memory(800_000 * (6 + BROKER_BYTES_PER_MSG)) == (1 << 30, "6g")
    assert broker_memory(0) == (1 << 30, "6g")
    # 700,000 messages of 1 KiB: 1.56 GB, so 1.5 GiB a queue and a heap of 7 GB
    assert broker_memory(700_000 * (1024 + BROKER_BYTES_PER_MSG)) == (3 << 29, "7168m")
    assert broker_memory(2 << 30) == (2 << 30, "8g")


def test_the_jit_share_is_the_cpu_of_threads_named_as_hotspots_compilers():
    """A real process with a thread named as HotSpot names a C2 compiler thread, spinning, and
    its main thread spinning as long: the sampler gives the compiler about half of the CPU;
    a process without such threads gets 0."""
    import subprocess
    import sys

    from burstbench.measure.perf import CpuSampler

    code = ("import ctypes, threading, time\n"
            "libc = ctypes.CDLL(None)\n"
            "def spin(name):\n"
            "    if name: libc.prctl(15, name, 0, 0, 0)\n"  # PR_SET_NAME
            "    end = time.thread_time() + 0.4\n"
            "    while time.thread_time() < end: pass\n"
            "t = threading.Thread(target=spin, args=(b'C2 CompilerThread0',)); t.start()\n"
            "t.join(); spin(None)\n")
    for named in (True, False):
        p = subprocess.Popen([sys.executable, "-c",
                              code if named else code.replace("C2 Compiler", "Worker")])
        s = CpuSampler(p.pid, every=0.002)
        s.start()
        try:
            assert p.wait(timeout=30) == 0
        finally:
            s.halt.set()
            s.join()
        t0, t1 = s.samples[0][0], s.samples[-1][0]
        share = s.jit_share(t0, t1)
        assert (0.3 < share < 0.7) if named else share == 0, (named, share)


def test_hostspeed_prints_a_median_per_second_per_cpu_and_refuses_bad_input():
    """perf/hostspeed.py: the probe behind docs/perf.md's account of the host's fast and slow
    states; one second on CPU 0 gives one row and a summary, bad input exits 2."""
    import subprocess
    import sys

    from burstbench.paths import ROOT

    tool = str(ROOT / "perf" / "hostspeed.py")
    r = subprocess.run([sys.executable, tool, "1", "0"], capture_output=True, text=True,
                       check=False, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["second", "cpu0", "µs"]
    assert lines[1].split()[0] == "0" and float(lines[1].split()[1]) > 0
    assert lines[-1].startswith("cpu0: median ")
    bad = subprocess.run([sys.executable, tool, "-3"], capture_output=True, text=True, check=False,
                         timeout=60)
    assert bad.returncode == 2 and bad.stderr.startswith("usage:")


def test_the_process_cpu_clock_counts_every_thread_in_ns():
    import os
    import time

    from burstbench.measure.perf import process_cpu_clock

    clock = process_cpu_clock(os.getpid())
    assert clock is not None
    a, own = time.clock_gettime_ns(clock), time.process_time_ns()
    sum(i * i for i in range(200_000))
    b = time.clock_gettime_ns(clock)
    assert b > a and abs(a - own) < 5_000_000  # the same clock as the process's own
    assert process_cpu_clock(2**22 + 12345) is None  # no such process


def test_pinning_moves_every_thread_of_a_process_and_later_ones_follow_then_all_go_back():
    """Threads that exist, and threads started after (they start with their creator's CPUs),
    then all moved back."""
    import os
    import subprocess
    import sys
    import time

    from burstbench.measure.perf import pin_threads

    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("needs two CPUs")
    code = ("import threading, time\n"
            "def spin():\n    time.sleep(5)\n"
            "threading.Thread(target=spin, daemon=True).start()\n"
            "time.sleep(0.3)\n"
            "for _ in range(3):\n    threading.Thread(target=spin, daemon=True).start()\n"
            "print('ok', flush=True)\ntime.sleep(5)\n")
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        time.sleep(0.1)
        pin_threads([p.pid], {cpus[0]})
        assert p.stdout.readline().strip() == "ok"
        time.sleep(0.2)
        tids = os.listdir(f"/proc/{p.pid}/task")
        assert len(tids) == 5
        assert all(os.sched_getaffinity(int(t)) == {cpus[0]} for t in tids)
        pin_threads([p.pid], set(cpus))
        assert all(os.sched_getaffinity(int(t)) == set(cpus) for t in tids)
    finally:
        p.kill()
        p.wait()
        p.stdout.close()


def test_a_one_cpu_row_prints_cpu_per_message_and_its_verdict():
    from burstbench.measure.perf import OneCpu, format_row, one_cpu_summary

    def side(send, recv, faults=0.0, own=22.0):
        return OneCpu(send, recv, 1, 1, faults, recv_cpu_us_own=own, recv_common=0.8)

    one = [(side(10.0, 20.0, own=20.0), side(10.2, 20.5, 0.01 * i)) for i in range(9)]
    one[0] = (side(10.0, 20.0, own=20.0), side(11.0, 25.0))
    send, recv = one_cpu_summary(one, "send"), one_cpu_summary(one, "recv")
    assert send["ratio"]["median"] == pytest.approx(10.0 / 10.2)
    assert recv["ratio"]["min"] == pytest.approx(0.8) and recv["ratio"]["ci"]["lo"] > 0.95
    assert "faults_per_msg" in recv and "faults_per_msg" not in send
    # the receive's figures over each side's own timed messages are kept beside
    assert recv["own_windows"]["ratio"]["median"] == pytest.approx(20.0 / 22.0)
    assert recv["common"] == {"rounds": 9, "of": 9,
                              "share": {"median": 0.8, "min": 0.8, "max": 0.8, "n": 9}}
    assert "common" not in send and "own_windows" not in send
    spread = {"median": 1.0, "min": 1.0, "max": 1.0}
    row = {"client": "net-stomp", "size": 6}
    for role, o in (("send", send), ("recv", recv)):
        row[role] = {"loop": spread, "client": spread, "ratio": 1.0, "one_cpu": o}
    lines = format_row(row).splitlines()
    assert len(lines) == 5  # no JIT line: a process without compiler threads
    assert lines[1].lstrip().startswith("1 CPU, CPU us/msg") and "send" in lines[1]
    assert "10.00" in lines[1] and "10.20" in lines[1]
    assert "target: within noise (96% CI" in lines[1]
    assert "20.50" in lines[3] and "0.98 (0.80-0.98)" in lines[3]
    assert lines[4].lstrip().startswith("common window") and "9 of 9 rounds, 80% (80%-80%)" \
        in lines[4] and lines[4].endswith("messages; own windows: loop / client 0.91 (0.91-0.91)")


def test_a_jvms_one_cpu_row_prints_the_share_of_its_jit():
    from burstbench.measure.perf import OneCpu, format_row, one_cpu_summary

    one = [(OneCpu(5.0, 8.0, 1, 1, 0.0, 0.0, 0.01, 8.0, 0.5),
            OneCpu(5.1, 8.2, 1, 1, 0.0, 0.0, 0.25, 8.4, 0.5)) for _ in range(5)]
    spread = {"median": 1.0, "min": 1.0, "max": 1.0}
    row = {"client": "openwire-jms", "size": 6}
    for role in ("send", "recv"):
        row[role] = {"loop": spread, "client": spread, "ratio": 1.0,
                     "one_cpu": one_cpu_summary(one, role)}
    lines = format_row(row).splitlines()
    assert len(lines) == 6  # the send has no JIT line (0 on both sides), the receive has one
    jit = lines[5]
    assert jit.lstrip().startswith("1 CPU, JIT share") and "recv" in jit
    assert "1.0%" in jit and "25.0%" in jit


def _loop_line(times: list[int], every: int = 1000) -> dict:
    """A receive loop's last line for messages arriving at ``times`` (epoch ns)."""
    return {"count": len(times), "first_ns": times[0], "mark_ns": times[len(times) // 2],
            "last_ns": times[-1], "every": every, "at_ns": times[::every]}


def test_a_loops_arrivals_are_counted_from_its_checkpoints():
    from burstbench.measure.perf import loop_arrived

    rcv = _loop_line([1000 * i for i in range(10_000)])  # one message a µs from t = 0
    assert loop_arrived(rcv, -1) == 0
    assert loop_arrived(rcv, 0) == 1  # message 0 arrived at 0
    assert loop_arrived(rcv, 6_300_000) == pytest.approx(6301)  # between checkpoints
    assert loop_arrived(rcv, 9_999_000) == 10_000 and loop_arrived(rcv, 10**12) == 10_000


def test_a_receive_is_compared_only_where_both_consumers_ran():
    """Loop and client drain side by side; the later one ends alone. The common window runs
    from the later message SKIP to the earlier last message, and each side's messages in it
    are counted from its own arrivals."""
    from burstbench.measure.perf import common_window

    count, skip = 10_000, 5_000
    rcv = _loop_line([1000 * i for i in range(count)])            # ends at 9.999 ms
    client = [300_000 + 1200 * i for i in range(count)]           # slower, ends at 12.3 ms
    a, b, n_loop, n_client = common_window(rcv, client, count, skip)
    assert (a, b) == (client[skip], rcv["last_ns"]) == (6_300_000, 9_999_000)
    assert n_loop == pytest.approx(sum(a < 1000 * i <= b for i in range(count)))  # 3,699
    assert n_client == sum(a < t <= b for t in client) == 3_082
    # the client's whole timed half after the loop's end: nothing in common
    late = [20_000_000 + 1000 * i for i in range(count)]
    assert common_window(rcv, late, count, skip) is None
    # a common span shorter than a quarter of the timed messages on either side is none either
    lagging = [4_000_000 + 1000 * i for i in range(count)]        # mark at 9 ms: 999 in common
    assert common_window(rcv, lagging, count, skip) is None
    lagging = [3_500_000 + 1000 * i for i in range(count)]        # mark at 8.5 ms: 1,499
    assert common_window(rcv, lagging, count, skip)[3] == 1_499


def test_a_receive_without_a_common_window_counts_but_compares_nothing():
    from burstbench.measure.perf import OneCpu, format_row, one_cpu_summary

    nan = float("nan")
    had = (OneCpu(5.0, 8.0, 1, 1, 0.0, 0.0, 0.0, 8.0, 0.6),
           OneCpu(5.0, 8.5, 1, 1, 0.0, 0.0, 0.0, 9.0, 0.6))
    none = (OneCpu(5.0, nan, 1, 1, nan, 0.0, nan, 7.0, nan),
            OneCpu(5.0, nan, 1, 1, nan, 0.0, nan, 10.0, nan))
    recv = one_cpu_summary([had, none, had], "recv")
    assert recv["common"]["rounds"] == 2 and recv["common"]["of"] == 3
    assert recv["ratio"]["median"] == pytest.approx(8.0 / 8.5)  # the round without is left out
    assert recv["own_windows"]["ratio"]["min"] == pytest.approx(0.7)  # but kept here
    spread = {"median": 1.0, "min": 1.0, "max": 1.0}
    row = {"client": "openwire-jms", "size": 6, "send": {"loop": spread, "client": spread,
                                                         "ratio": 1.0}}
    row["recv"] = {"loop": spread, "client": spread, "ratio": 1.0,
                   "one_cpu": one_cpu_summary([none, none], "recv")}
    assert "ratio" not in row["recv"]["one_cpu"]
    last = format_row(row).splitlines()[-1]
    assert "no common window in any of its 2 rounds" in last and "loop / client 0.70" in last


def test_a_send_is_compared_where_both_producers_sent_too_beside_its_own_windows():
    """The loop's producer reports when every 1,000th message was handed to send (at_ns), so
    the span in which both producers sent warm counts each side's messages, as a receive's
    does; a send timed whole (stompjs) has none. The judged figure stays the own windows'."""
    from burstbench import clients
    from burstbench.measure.perf import OneCpu, format_row, one_cpu_summary, send_common_window

    count, skip = 10_000, 5_000
    jms = clients.resolve("openwire-jms")
    sent = _loop_line([1000 * i for i in range(count)])           # hands over one a µs
    sent["mark_ns"], sent["last_ns"] = 5_000_000, 10_050_000      # ... confirmed 51 µs after
    calls = [2_300_000 + 1000 * i for i in range(count)]          # started later, ends later
    a, b, n_loop, n_client = send_common_window(jms, sent, calls, count, skip)
    assert (a, b) == (calls[skip], sent["last_ns"]) == (7_300_000, 10_050_000)
    assert n_client == sum(a < t <= b for t in calls) == 2_750
    assert n_loop == pytest.approx(count - 7_301, abs=1)  # messages 7,301.. (the last at 9.999 ms)
    assert send_common_window(clients.resolve("stompjs"), sent, calls, count, skip) is None
    assert send_common_window(jms, {k: v for k, v in sent.items() if k != "at_ns"}, calls,
                              count, skip) is None
    late = [20_000_000 + 1000 * i for i in range(count)]
    assert send_common_window(jms, sent, late, count, skip) is None

    def side(own, common):
        return OneCpu(own, 8.0, 1, 1, 0.0, 0.0, 0.0, 8.0, 0.6, send_cpu_us_common=common,
                      send_common=float("nan") if math.isnan(common) else 0.5)
    nan = float("nan")
    rounds = [(side(5.0, 5.0), side(5.5, 5.1)), (side(5.0, 5.0), side(5.4, 5.2)),
              (side(5.0, nan), side(5.0, nan))]
    send = one_cpu_summary(rounds, "send")
    assert send["ratio"]["min"] == pytest.approx(5.0 / 5.5)         # judged: all three rounds
    cw = send["common_window"]
    assert cw["rounds"] == 2 and cw["of"] == 3 and cw["share"]["median"] == 0.5
    assert cw["ratio"]["max"] == pytest.approx(5.0 / 5.1)
    spread = {"median": 1.0, "min": 1.0, "max": 1.0}
    row = {"client": "openwire-jms", "size": 6,
           "send": {"loop": spread, "client": spread, "ratio": 1.0, "one_cpu": send},
           "recv": {"loop": spread, "client": spread, "ratio": 1.0}}
    lines = format_row(row).splitlines()
    i = next(k for k, x in enumerate(lines) if x.startswith("  1 CPU, CPU us/msg"))
    assert lines[i + 1].startswith("    common window") and "(2 of 3 rounds, 50% of" in lines[i + 1]
    assert "0.97 (0.96-0.98)" in lines[i + 1] and "0.91" in lines[i]
    assert "common_window" not in one_cpu_summary(rounds[2:], "send")
