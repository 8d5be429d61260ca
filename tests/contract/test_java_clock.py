"""The JMS client's epoch clock (clients/java Common.nowNs): the monotonic clock plus the
distance to the wall clock, taken at start and followed by the ticker (reanchor). It must read
what the wall clock reads, as the other languages' stamps do (latency is one process's
receive stamp minus another's send stamp), and never run backwards within a process."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from conftest import ROOT

JAVA = shutil.which("java")
CLASSES = ROOT / "clients/java/target/classes"
pytestmark = pytest.mark.skipif(JAVA is None or not CLASSES.exists(),
                                reason="java or the built Java client missing (./bench setup)")

# Reads Common's clocks through a private lookup (nowNs, wallNs and reanchor are the client's
# own, package-private): each nowNs between two wallNs, 20,000 times, and again after reanchor.
SOURCE = r"""
import java.lang.invoke.*;
public final class ClockCheck {
    public static void main(String[] a) throws Throwable {
        java.io.PrintStream out = System.out;   // Common sends System.out to stderr once loaded
        Class<?> c = Class.forName("burstbench.clients.Common");
        MethodHandles.Lookup l = MethodHandles.privateLookupIn(c, MethodHandles.lookup());
        MethodHandle now = l.findStatic(c, "nowNs", MethodType.methodType(long.class));
        MethodHandle wall = l.findStatic(c, "wallNs", MethodType.methodType(long.class));
        MethodHandle reanchor = l.findStatic(c, "reanchor", MethodType.methodType(boolean.class));
        long early = 0, late = 0, back = 0, last = 0;
        boolean stepped = false;
        for (int i = 0; i < 40_000; i++) {
            if (i == 20_000) stepped = (boolean) reanchor.invokeExact();
            long w1 = (long) wall.invokeExact(), n = (long) now.invokeExact();
            long w2 = (long) wall.invokeExact();
            early = Math.max(early, w1 - n);
            late = Math.max(late, n - w2);
            if (i > 0) back = Math.max(back, last - n);
            last = n;
        }
        out.println("{\"early_ns\":" + early + ",\"late_ns\":" + late
                    + ",\"back_ns\":" + back + ",\"stepped\":" + stepped + "}");
    }
}
"""


def test_the_jms_clients_clock_reads_the_wall_clock_and_never_goes_back(tmp_path):
    src = tmp_path / "ClockCheck.java"
    src.write_text(SOURCE)
    cp = f"{CLASSES}:{ROOT / 'clients/java/target/lib'}/*"
    p = subprocess.run([JAVA, "-cp", cp, str(src)], capture_output=True, text=True, timeout=120,
                       check=False)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout.strip().splitlines()[-1])
    # each stamp lies between the wall clock read before it and after it, to within the
    # offset's own reading error (the tightest of seven readings: well under a millisecond on
    # an idle machine, a preemption or two on a busy one; a wrong unit or a missing offset is
    # off by years)
    assert r["early_ns"] < 20_000_000 and r["late_ns"] < 20_000_000, r
    # within a process the stamps never run backwards: a reanchor keeps the offset unless the
    # wall clock moved by more than Common.STEP_NS (or the start's reading was that far off,
    # which the bounds above would show)
    assert r["back_ns"] <= (1_000_000 if r["stepped"] else 0), r
