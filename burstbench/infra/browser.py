"""Headless Chromium for the ``stompjs:browser`` client: where it is, and one shared browser
whose tabs are a point's browser consumers (``--browser tabs``).

The client's own program (clients/node/browser/driver.mjs) starts a Chromium of its own per
process unless ``BB_BROWSER_WS`` names a shared one; the shared one is a child of the harness
like any other (its own process group, stopped by its PID on every exit path).
"""

from __future__ import annotations

import os

from burstbench.paths import CLIENTS, chromium_path  # noqa: F401 (the driver's search)

DRIVER = CLIENTS / "node" / "browser" / "driver.mjs"
# how a point's browser consumers run: each its own Chromium, or tabs of one
MODES = ("browsers", "tabs")


def shares(mode: str, consumers) -> bool:
    """Whether a point runs a shared Chromium: ``tabs`` mode and a browser consumer."""
    return mode == "tabs" and any(r.client.language == "browser" for r in consumers)


def shared_argv(ca=None) -> list[str]:
    """The program that runs the shared Chromium (prints its DevTools address in ``ready``),
    trusting the PEM ``ca`` for wss:// (put in its throwaway profile's NSS database)."""
    return ["node", str(DRIVER), "browser", *(["--ca", str(ca)] if ca else [])]


def env_for(r, role: str, shared_ws: str | None) -> dict | None:
    """The environment of a client process: a browser consumer opens its tab in the shared
    Chromium when there is one; everything else inherits the harness's."""
    if shared_ws and role == "consumer" and r.client.language == "browser":
        return {**os.environ, "BB_BROWSER_WS": shared_ws}
    return None


def reported(done: dict) -> dict:
    """What a browser process's ``done`` line says of Chromium, for the result's process
    table: whose Chromium the page ran in (``own`` or ``shared``), the tab's main-thread task
    and script seconds and JS heap (Performance.getMetrics), and Chromium's processes with their
    CPU seconds (SystemInfo.getProcessInfo) where the process owned the browser."""
    out = {}
    if "browser" in done:
        out["browser"] = done["browser"]
    if isinstance(done.get("tab"), dict):
        out["tab"] = done["tab"]
    if isinstance(done.get("chromium"), list):
        out["chromium"] = done["chromium"]
    return out
