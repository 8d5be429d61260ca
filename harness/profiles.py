"""Sweep profiles (``profiles/*.yaml``): which there are, and one read as data.

The sweep expands a profile's axes into points (``harness/sweep.py``); the studies read
their own section of it (``studies.pi``, ``studies.reqreply``). Both come here for the file,
so neither imports the other.
"""

from __future__ import annotations

import yaml

from harness import paths


class ProfileError(ValueError):
    pass


def profile_names() -> list[str]:
    return sorted(p.stem for p in paths.PROFILES.glob("*.yaml"))


def load_profile(name: str) -> dict:
    path = paths.PROFILES / f"{name}.yaml"
    if not path.exists():
        raise ProfileError(f"unknown profile {name!r} (have: {', '.join(profile_names())})")
    doc = yaml.safe_load(path.read_text())
    if not isinstance(doc, dict) or not isinstance(doc.get("axes"), dict):
        raise ProfileError(f"{path}: expected a mapping with 'axes'")
    doc["name"] = name
    return doc
