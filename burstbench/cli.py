"""``./bench`` commands: the parser built from burstbench/commands/ (a module per command,
with its own arguments and run) and the dispatch, with the errors every command shares: bad
input is one line and exit 2, Ctrl-C exit 130 after every started process is stopped. Set-up
lives in the ``bench`` script itself, before Python exists."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from burstbench.commands import COMMANDS
from burstbench.infra.procs import Interrupted, install_signal_handlers
from burstbench.paths import NotBuilt


class Parser(argparse.ArgumentParser):
    """Bad arguments: one line, exit 2."""

    def error(self, message):
        sys.stderr.write(f"bench {self.prog.split()[-1]}: error: {message}\n")
        sys.exit(2)


def build_parser() -> argparse.ArgumentParser:
    ap = Parser(
        prog="bench",
        description="burstbench: real brokers, real clients, every message accounted for.",
    )
    sub = ap.add_subparsers(dest="command", required=True, parser_class=Parser)
    for command in COMMANDS:
        p = sub.add_parser(command.NAME, help=command.HELP)
        command.add_arguments(p)
        p.set_defaults(func=command.run)
        if getattr(command, "WRITES_RUNS", True):
            p.add_argument("--output", "--results", dest="results", metavar="DIR",
                           help="where runs are written and read (default: results/ in the "
                           "repository, or the environment's BURSTBENCH_RESULTS)")
    return ap


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "results", None):
        import os

        from burstbench import paths
        paths.RESULTS = Path(args.results).resolve()
        os.environ["BURSTBENCH_RESULTS"] = str(paths.RESULTS)  # for the processes it starts
    install_signal_handlers()
    try:
        return args.func(args)
    except (ValueError, FileNotFoundError, FileExistsError, NotBuilt) as e:
        print(f"bench {args.command}: error: {e}", file=sys.stderr)
        return 2
    except (Interrupted, KeyboardInterrupt) as e:
        print(
            f"bench {args.command}: {e or 'interrupted'}; every process it started was "
            "stopped, partial results kept",
            file=sys.stderr,
        )
        return 130


if __name__ == "__main__":
    sys.exit(main())
