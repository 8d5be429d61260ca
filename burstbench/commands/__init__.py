"""The ``./bench`` commands, one module each (asv's shape): ``NAME``, ``HELP``,
``add_arguments(p)`` and ``run(args) -> int``, and ``WRITES_RUNS = False`` for a command that
neither writes nor reads runs (it gets no ``--output``). ``burstbench/cli.py`` builds the
parser from ``COMMANDS``, in this order, and dispatches; a new command is a module and a line
here. Each module imports what its run needs inside ``run``, so ``./bench --help`` stays fast.
"""

from burstbench.commands import (
    bridge,
    chaos,
    compare,
    docs,
    doctor,
    perf,
    pi,
    plot,
    reqreply,
    run,
    runtimes,
    sweep,
)

COMMANDS = (run, sweep, perf, compare, chaos, bridge, pi, reqreply, runtimes, plot, docs, doctor)
