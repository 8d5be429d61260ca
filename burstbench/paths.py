"""Where things are in the repository, and what a missing build step is called."""

from __future__ import annotations

import os
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
