"""Headless Chromium for the ``stompjs:browser`` client: where it is, and one shared browser
whose tabs are a point's browser consumers (``--browser tabs``).

The client's own program (clients/node/browser/driver.mjs) starts a Chromium of its own per
process unless ``BB_BROWSER_WS`` names a shared one; the shared one is a child of the harness
like any other (its own process group, stopped by its PID on every exit path).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from harness.paths import CLIENTS

DRIVER = CLIENTS / "node" / "browser" / "driver.mjs"
# how a point's browser consumers run: each its own Chromium, or tabs of one
MODES = ("browsers", "tabs")


def chromium_path() -> str | None:
    """The Chromium binary the driver will run (same search): $BB_CHROMIUM, Debian's
    /usr/lib/chromium/chromium, or the usual names on PATH."""
    if os.environ.get("BB_CHROMIUM"):
        return os.environ["BB_CHROMIUM"]
    debian = Path("/usr/lib/chromium/chromium")
    if os.access(debian, os.X_OK):
        return str(debian)
    for name in ("chromium", "chromium-browser", "google-chrome-stable", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None
