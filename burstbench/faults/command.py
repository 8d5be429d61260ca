"""``./bench chaos SCENARIO|all``: each scenario (or every scenario with every language) in
turn, its summary as it ends, the reliability table at the end."""

from __future__ import annotations

from burstbench import clients
from burstbench.faults import registry
from burstbench.faults.reckon import Result
from burstbench.faults.registry import SCENARIOS
from burstbench.faults.report import report, table, write
from burstbench.faults.spec import Skip
from burstbench.infra.procs import Interrupted


def matrix(client: str | None) -> list[tuple[str, str]]:
    """(scenario, client) pairs ``./bench chaos all`` runs: every scenario x every language."""
    names = [client] if client else list(clients.LANGUAGE_CLIENTS)
    return [(s, c) for s in SCENARIOS for c in names]


def main(args) -> int:
    """``./bench chaos SCENARIO|all [--client SPEC] ...``: exit 1 if anything was lost or
    a scenario failed."""
    import sys

    from burstbench.measure import results as res

    if args.scenario != "all":
        registry.get(args.scenario)  # an unknown name is a one-line error
    if args.client:
        clients.resolve(args.client)  # an unknown name is a one-line error, before anything runs
    pairs = (matrix(args.client) if args.scenario == "all"
             else [(args.scenario, args.client or "")])
    kw = {"count": args.count, "bursts": args.bursts, "cut_s": args.cut_seconds}
    for s, c in pairs:  # bad input is refused before anything starts
        try:
            SCENARIOS[s].check(SCENARIOS[s].make_spec(c, **kw))
        except Skip as e:
            if args.scenario != "all" and e.status == "n/a":
                raise ValueError(str(e)) from None
    run = res.Run(res.new_run_id("chaos"), sys.argv)
    print(f"chaos {run.id}: results in {run.dir}", flush=True)
    done: list[Result] = []
    status = "complete"
    try:
        for s, c in pairs:
            scenario = SCENARIOS[s]
            spec = scenario.make_spec(c, **kw)
            label = f"{s}-{spec.client.replace(':', '_')}"

            def progress(msg: str, label=label) -> None:
                print(f"  [{label}] {msg}", file=sys.stderr, flush=True)

            r = scenario(spec, run.dir / "chaos" / label, progress).run()
            done.append(r)
            print(report(r), flush=True)
            write(run.dir, done, sys.argv)
    except (Interrupted, KeyboardInterrupt):
        status = "incomplete"
        raise
    finally:
        if done:
            write(run.dir, done, sys.argv)
        bad = [r for r in done if not r.ok()]
        run.finish(status if status != "complete" or not bad else "failed")
        from burstbench.plots import (  # the reliability table in the run's page
            report as html_report,
        )

        html_report.render(run.dir)
    print()
    print(table(done))
    print(f"\nwritten: {run.dir / 'chaos.json'}, {run.dir / 'chaos.md'}, "
          f"{run.dir / 'report.html'}")
    return 1 if bad else 0
