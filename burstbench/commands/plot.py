"""``./bench plot``: a run's charts and report drawn again from its result files."""

from __future__ import annotations

from burstbench.measure import results

NAME = "plot"
HELP = ("re-render a run's charts and report from its result files "
        "(a footer says 'drawn at COMMIT' when the code is not the run's, "
        "'-dirty' and a warning when the work tree has uncommitted changes)")


def add_arguments(p) -> None:
    p.add_argument("run", nargs="?", default="latest", help="run id, 'latest' or a path")


def run(args) -> int:
    from burstbench.plots import charts, style

    run_dir = results.resolve_run(args.run)
    style.warn_if_dirty()  # the footers say '-dirty' only when the tree is
    written = charts.render_run(run_dir)
    for w in written:
        print(w)
    return 0
