"""`assign iterate`: the paper's loop (N_init, N_delta, target gap X%)."""
from __future__ import annotations

import argparse

from ._args import number, positive_int
from ._options import add_run_options
from ._runs import prepare_session


def register(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("iterate", help="the paper's loop with searches: until the certified gap is within X%%",
                       description="Sample N_init assignments (with the planned noise repetitions), search from the "
                                   "leading placements and choose the placement to deploy as `assign best` does, "
                                   "certify the optimum of placement means against everything measured; stop when "
                                   "the interval holds (status ok) and the chosen placement's gap at the ends of "
                                   "both intervals (its certified gap) is within X% (the point estimates' gap is "
                                   "printed beside it). "
                                   "Otherwise the next round spends where the certified gap shrinks most: on a search with twice the budget while none "
                                   "converged, the interval is refuted or the search's resolution is the larger part "
                                   "of the gap; else on N_delta more draws and a longer selection. Stored in the "
                                   "database and resumable. Exit status 0 when the target is reached, 3 when "
                                   "--max-n or --max-measurements is hit first.")
    p.add_argument("--target-gap", type=number, required=True, metavar="X", help="target gap in percent")
    p.add_argument("--n-init", type=positive_int, default=1000, help="initial sample (default: 1000)")
    p.add_argument("--n-delta", type=positive_int, default=100, help="added per step (default: 100)")
    p.add_argument("--max-n", type=positive_int, default=20000, help="draws: give up beyond this (default: 20000)")
    p.add_argument("--max-measurements", type=positive_int, default=100000, metavar="N",
                   help="every measurement of the run (draws, repetitions, searches, selections): give up beyond "
                        "this (default: 100000)")
    p.add_argument("--confidence", type=number, default=0.95,
                   help="confidence level, and the selection's probability of correct selection (default: 0.95)")
    p.add_argument("--indifference", type=number, default=None, metavar="PCT",
                   help="the selection's indifference zone, percent (default: one noise sd, as `assign best`)")
    p.add_argument("--candidates", type=positive_int, default=None, metavar="M",
                   help="leading placements the selection chooses among (default: 10)")
    add_run_options(p)
    return p


def run(args: argparse.Namespace) -> int:
    from ..choice import Settings
    from ..evt.estimate import _fmt
    from ..iterate import iterate
    from ..run_sample import describe_cost, measurement_cost

    if args.target_gap <= 0:
        raise ValueError(f"--target-gap must be > 0 percent, got {args.target_gap}")
    if args.indifference is not None and not args.indifference > 0:
        raise ValueError(f"--indifference {args.indifference}: expected a percentage > 0")
    session, created = prepare_session(args)
    print(f"{'new' if created else 'continuing'} {session.run.label()} in {args.db}")
    kind = session.run.kind

    said: set[str] = set()

    def show(step) -> None:
        # a note is printed the first time it appears, not at every step
        note = f"\n    {step.note}" if step.note and step.note not in said else ""
        said.add(step.note)
        opt = step.optimum
        paper = f"; paper's UPB {_fmt(step.upb)}" if step.upb is not None else ""
        if opt is not None and opt.estimate is not None:
            hi = "inf" if opt.ci_high is None or opt.ci_high == float("inf") else _fmt(opt.ci_high)
            text = (f"n={step.n} ({step.spent:,} measurements): optimum of means {_fmt(opt.estimate)} "
                    f"[{_fmt(opt.ci_low)}, {hi}] (estimated, {opt.method})")
            c = (step.chosen or {}).get("chosen")
            if c is not None and step.gap_pct is not None:
                certified = ("no upper end" if step.gap_pct_high is None else
                             f"at most {max(step.gap_pct_high, 0.0):.2f}%")
                text += (f"; chosen placement {_fmt(c['mean'])} ({kind}), gap {step.gap_pct:.2f}% ({certified}, "
                         f"estimated)")
            print(text + f"{paper} [{step.status}]" + (f"; next: {step.next}" if step.next else "") + note)
        else:
            print(f"n={step.n}: no estimate of the optimum of means [{step.status}]{paper}{note}")

    settings = Settings(candidates=args.candidates, indifference_pct=args.indifference, confidence=args.confidence)
    reached, steps = iterate(session, args.target_gap, args.n_init, args.n_delta, args.max_n, args.confidence,
                             show_progress=not args.quiet, on_step=show, selection=settings,
                             max_measurements=args.max_measurements)
    last = steps[-1]
    print("cost: " + describe_cost(measurement_cost(session.store, session.run)))
    if reached:
        print(f"target reached: with n={last.n} the chosen placement's mean is within "
              f"{max(last.gap_pct_high, 0.0):.2f}% of the optimum of placement means at the ends of both intervals "
              f"(certified; point estimates {last.gap_pct:.2f}%; target {args.target_gap}%); `assign best` writes it")
        return 0
    print(f"target {args.target_gap}% not reached by n={last.n} and {last.spent:,} measurements (--max-n "
          f"{args.max_n}, --max-measurements {args.max_measurements})")
    return 3
