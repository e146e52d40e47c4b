"""`assign iterate`: the paper's loop (N_init, N_delta, target gap X%)."""
from __future__ import annotations

import argparse

from ._args import number, positive_int
from ._options import add_run_options
from ._runs import prepare_session


def register(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("iterate", help="the paper's loop: sample until the best is within X%% of the estimate",
                       description="Sample N_init assignments, estimate the optimum, stop when the best is within "
                                   "X% of it (point estimate), else add N_delta and repeat. Stored in the database "
                                   "and resumable. Exit status 0 when the target is reached, 3 when --max-n is hit "
                                   "first.")
    p.add_argument("--target-gap", type=number, required=True, metavar="X", help="target gap in percent")
    p.add_argument("--n-init", type=positive_int, default=1000, help="initial sample (default: 1000)")
    p.add_argument("--n-delta", type=positive_int, default=100, help="added per step (default: 100)")
    p.add_argument("--max-n", type=positive_int, default=20000, help="give up beyond this (default: 20000)")
    p.add_argument("--confidence", type=number, default=0.95, help="confidence level (default: 0.95)")
    add_run_options(p)
    return p


def run(args: argparse.Namespace) -> int:
    from ..iterate import iterate

    if args.target_gap <= 0:
        raise ValueError(f"--target-gap must be > 0 percent, got {args.target_gap}")
    session, created = prepare_session(args)
    print(f"{'new' if created else 'continuing'} {session.run.label()} in {args.db}")

    said: set[str] = set()

    def show(step) -> None:
        # a note is printed the first time it appears, not at every step
        note = f"\n    {step.note}" if step.note and step.note not in said else ""
        said.add(step.note)
        if step.upb is not None and step.gap_pct is not None:
            print(f"n={step.n}: best {step.best:,.1f} ({session.run.kind}), UPB {step.upb:,.1f} (estimated), "
                  f"gap {step.gap_pct:.2f}% (estimated) [{step.status}]{note}")
        else:
            print(f"n={step.n}: best {step.best:,.1f} ({session.run.kind}), no usable estimate "
                  f"[{step.status}]{note}")

    reached, steps = iterate(session, args.target_gap, args.n_init, args.n_delta, args.max_n, args.confidence,
                             show_progress=not args.quiet, on_step=show)
    last = steps[-1]
    if reached:
        print(f"target reached: with n={last.n} the best is within {last.gap_pct:.2f}% of the estimated optimum "
              f"(target {args.target_gap}%)")
        return 0
    print(f"target {args.target_gap}% not reached by n={last.n} (--max-n {args.max_n})")
    return 3
