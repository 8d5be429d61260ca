"""The Pi study: Leibniz's series computed by competing workers over the broker, and by actors.

Over the broker (as in the Pi paper): a creator sends M work messages of E terms each to a
fresh work queue; W workers — any mix of the four client languages, ``pi-worker.*`` of
clients/contract.md "Pi workers" — compete for them and send each chunk's partial sum to a
results queue; the collector (in the harness process) adds the sums up. The time runs from
the creator's first send to the collector's last result: creator -> work queue -> workers ->
results queue -> collector, with every process already started and connected (process
start-up is reported beside it, not in it). Over actors: ``burstbench.bridge.pi.PiActors`` with
the same W, M, E. Both results must equal the same partial sum computed directly here to
1e-9, or the point fails.

One module per job:

- ``config``: the grid and its options (``PiConfig``), the shared constants;
- ``maths``: the exact partial sum both backends must equal (``ExactSums``);
- ``point``: what both point drivers share (``PointError``, the wait for child events);
- ``activemq``: the broker point: worker processes, the creator (the client program
  ``clients/python/pi-creator.py``, stomp.py, beside the Python Pi worker) and the
  collector;
- ``akka``: the actors point (akka-bridge's ``PiActors``);
- ``study``: the grid into one result file, tables and chart; ``./bench pi``.
"""

from burstbench.studies.pi.activemq import plan, worker_argv
from burstbench.studies.pi.config import (
    BRIDGE,
    LANGUAGES,
    TOLERANCE,
    PiConfig,
    StudyError,
    config_from_args,
)
from burstbench.studies.pi.maths import ExactSums
from burstbench.studies.pi.study import main, run_study

__all__ = [
    "BRIDGE", "LANGUAGES", "TOLERANCE", "ExactSums", "PiConfig", "StudyError",
    "config_from_args", "main", "plan", "run_study", "worker_argv",
]
