"""Where things are: the repository, its commit, what a missing build step is called, and the
Chromium binary."""

from __future__ import annotations

import os
import shutil
import subprocess
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BROKER_DIR = ROOT / "broker"
BROKER_TEMPLATES = BROKER_DIR / "templates"
BROKER_CLASSES = BROKER_DIR / "target" / "classes"
BROKER_LIB = BROKER_DIR / "target" / "lib"
ARTEMIS_CLASSES = BROKER_DIR / "artemis" / "target" / "classes"
ARTEMIS_LIB = BROKER_DIR / "artemis" / "target" / "lib"
CLIENTS = ROOT / "clients"
PROFILES = ROOT / "profiles"
RESULTS = Path(os.environ.get("BURSTBENCH_RESULTS", ROOT / "results"))


class NotBuilt(RuntimeError):
    """A component has not been built; ``./bench setup`` builds it."""


def require_built(what: str, path: Path) -> None:
    if not Path(path).exists():
        raise NotBuilt(f"{what} is not built ({path} is missing): run ./bench setup")


@cache
def git_commit() -> str:
    """The checkout's commit (``-dirty`` with uncommitted changes); without git or a .git (an
    image, a copy made by the hosts' playbook) the commit its maker wrote in
    .burstbench-commit; else ``unknown``."""
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10, check=True,
        )
        commit = out.stdout.strip() or "unknown"
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10, check=True,
        ).stdout.strip()
        return commit + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        try:
            written = (ROOT / ".burstbench-commit").read_text().split()
        except OSError:
            written = []
        return written[0] if written else "unknown"


def chromium_path() -> str | None:
    """The Chromium binary the driver will run (same search): $BB_CHROMIUM, Debian's
    /usr/lib/chromium/chromium (what its /usr/bin/chromium wrapper runs), or ``chromium`` on
    PATH."""
    if os.environ.get("BB_CHROMIUM"):
        return os.environ["BB_CHROMIUM"]
    debian = Path("/usr/lib/chromium/chromium")
    if os.access(debian, os.X_OK):
        return str(debian)
    return shutil.which("chromium")
