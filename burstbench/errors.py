"""The errors several layers raise: a point's failure, shared by the modules that measure a
point (runner, sustained) and those that drive points (sweep, find-max, calibration), and an
outside broker that cannot be used as given: here so that none imports another only for it."""

from __future__ import annotations


class PointFailed(RuntimeError):
    """A point could not be measured (a process failed, timed out, or lost messages)."""


class OutsideError(ValueError):
    """An outside broker or its admin URL cannot be used as given (one line; before a run
    starts, bad input: exit 2)."""
