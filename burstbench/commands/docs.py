"""``./bench docs``: the figures README.md and docs/ quote, checked, rendered or published."""

from __future__ import annotations

import sys

NAME = "docs"
HELP = ("the figures README.md and docs/ quote: check them against "
        "docs/data/, render them from it, or publish a run's summary there")


def add_arguments(p) -> None:
    p.add_argument("action", choices=["check", "render", "publish"],
                   help="check: exit 1 when a quoted figure differs from its source; render: "
                   "rewrite them; publish RUN: copy a complete run's summary.csv and manifest "
                   "to docs/data/")
    p.add_argument("run", nargs="?", help="publish: run id, 'latest' or a path")
    p.add_argument("--partial", action="store_true",
                   help="publish: also a run some of whose points failed or were skipped (a "
                   "page may say so; a figure of such a point stays an error)")


def run(args) -> int:
    from burstbench.measure import results
    from burstbench.plots import quoted

    try:
        if args.action == "publish":
            if not args.run:
                raise quoted.QuoteError("docs publish needs a run id, 'latest' or a path")
            for f in quoted.publish(results.resolve_run(args.run), partial=args.partial):
                print(f"bench docs: wrote {f.relative_to(quoted.paths.ROOT)}")
            return 0
        n, diffs = quoted.check(write=args.action == "render")
    except (quoted.QuoteError, FileNotFoundError) as e:
        print(f"bench docs: error: {e}", file=sys.stderr)
        return 2
    for d in diffs:
        print(f"bench docs: {'rewrote' if args.action == 'render' else 'differs'}: {d}",
              file=sys.stderr if args.action == "check" else sys.stdout)
    print(f"bench docs: {n} quoted figures, {len(diffs)} "
          f"{'rewritten' if args.action == 'render' else 'differ from their source'}")
    return 1 if diffs and args.action == "check" else 0
