"""The point's failure, shared by the modules that measure a point (run, sustained) and those
that drive points (sweep, find-max, calibration): here so that none of them imports another
only for it."""

from __future__ import annotations


class PointFailed(RuntimeError):
    """A point could not be measured (a process failed, timed out, or lost messages)."""
