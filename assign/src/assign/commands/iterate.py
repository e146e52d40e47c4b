"""`assign iterate`: the paper's loop (N_init, N_delta, target gap X%)."""
from __future__ import annotations

import argparse

from ._args import number, positive_int
from ._options import add_run_options
from ._runs import prepare_session


def register(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("iterate", help="the paper's loop: sample until the best is within X%% of the estimate",
                       description="Sample N_init assignments (with the planned noise repetitions), estimate the "
                                   "optimum of placement means; when the leading placement's mean is within X% of "
                                   "it, choose the placement to deploy as `assign best` does (KN over the leading "
                                   "placements, measured again); stop when the chosen placement's mean is within X% "
                                   "of the optimum of means (point estimates), else add N_delta and repeat. Stored "
                                   "in the database and resumable. Exit status 0 when the target is reached, 3 "
                                   "when --max-n is hit first.")
    p.add_argument("--target-gap", type=number, required=True, metavar="X", help="target gap in percent")
    p.add_argument("--n-init", type=positive_int, default=1000, help="initial sample (default: 1000)")
    p.add_argument("--n-delta", type=positive_int, default=100, help="added per step (default: 100)")
    p.add_argument("--max-n", type=positive_int, default=20000, help="give up beyond this (default: 20000)")
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
            text = (f"n={step.n}: optimum of means {_fmt(opt.estimate)} [{_fmt(opt.ci_low)}, {hi}] (estimated, "
                    f"noise CV {100 * opt.noise.cv:.2g}%)")
            if step.chosen is not None:
                c = step.chosen["chosen"]
                text += (f"; chosen placement {_fmt(c['mean'])} ({kind}, selection "
                         f"{step.chosen.get('selection')}), gap {step.gap_pct:.2f}% (estimated)")
            elif step.leading_mean is not None:
                text += f"; leading placement {_fmt(step.leading_mean)} ({kind}), gap {step.gap_pct:.2f}% (estimated)"
            print(text + f"{paper} [{step.status}]{note}")
        else:
            print(f"n={step.n}: no estimate of the optimum of means [{step.status}]{paper}{note}")

    settings = Settings(candidates=args.candidates, indifference_pct=args.indifference, confidence=args.confidence)
    reached, steps = iterate(session, args.target_gap, args.n_init, args.n_delta, args.max_n, args.confidence,
                             show_progress=not args.quiet, on_step=show, selection=settings)
    last = steps[-1]
    print("cost: " + describe_cost(measurement_cost(session.store, session.run)))
    if reached:
        within = (f"within {last.gap_pct:.2f}% of" if last.gap_pct >= 0 else
                  f"at ({last.gap_pct:.2f}%: within the noise)")
        print(f"target reached: with n={last.n} the chosen placement's mean is {within} the optimum of placement "
              f"means (point estimates, target {args.target_gap}%); `assign best` writes it")
        return 0
    print(f"target {args.target_gap}% not reached by n={last.n} (--max-n {args.max_n})")
    return 3
