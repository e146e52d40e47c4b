"""`assign sample`: n iid random assignments, each measured by the backend and stored as it comes."""
from __future__ import annotations

import argparse
import sys

from ._args import nonneg_int, positive_int
from ._options import add_run_options
from ._runs import prepare_session


def register(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("sample", help="measure N iid random assignments, stored as they come",
                       description="Draw iid random assignments as the paper does (a uniform context per task, the "
                                   "draw discarded on a collision), measure each with the backend and store it in "
                                   "the database at once. Running again with the same options continues the same "
                                   "run up to the new --n; a killed run loses at most the batch in flight.")
    p.add_argument("--n", type=positive_int, required=True, help="successful measurements the run should hold")
    add_run_options(p)
    p.add_argument("--cluster", metavar="ADDRESS",
                   help="measure on dask.distributed workers: local:N (N worker processes here) or tcp://host:port "
                        "(a running scheduler; see assign/MACHINES.md). The store and its guarantees are the same")
    p.add_argument("--reference-every", type=nonneg_int, metavar="K", default=None,
                   help="with --cluster: the identical-machines check. Each worker measures the run's reference "
                        "placement (its draw 0) 10 times at start and once every K of its draws; a worker whose "
                        "reference median is off the others' by more than max(6 noise sds, 1%%) is stopped, named "
                        "and its values flagged (left out of the estimate, kept in the database). 0: no check "
                        "(default: 50, i.e. 2%% more measurements)")
    return p


def run(args: argparse.Namespace) -> int:
    if args.reference_every is not None and not args.cluster:
        raise ValueError(f"--reference-every {args.reference_every}: goes with --cluster (a run in one process "
                         f"has one machine)")
    if args.cluster:
        from ..cluster import check_address

        check_address(args.cluster)  # before the database is touched
    session, created = prepare_session(args)
    run = session.run
    nxt, ok, failed, _ = session.store.progress(run.id)
    print(f"{'new' if created else 'continuing'} {run.label()} in {args.db}"
          + ("" if created else f" ({ok} stored)"))
    try:
        if args.cluster:
            from ..cluster import sample_until, worker_spec
            from ..machine_check import DEFAULT_REFERENCE_EVERY

            every = DEFAULT_REFERENCE_EVERY if args.reference_every is None else args.reference_every
            if every == 0:
                print("--reference-every 0: the workers' machines are not checked; the sample is right only if "
                      "they are identical", file=sys.stderr)
            try:
                added, fails = sample_until(session, args.n, args.cluster, worker_spec(session, args),
                                            show_progress=not args.quiet, reference_every=every)
            finally:
                _print_workers(session)
        else:
            added, fails = session.sample_until(args.n, show_progress=not args.quiet)
    except KeyboardInterrupt:
        _, ok, failed, best = session.store.progress(run.id)
        print(f"interrupted: run {run.id} holds {ok} values ({failed} failed), all stored; "
              f"run the same command again to continue", file=sys.stderr)
        return 130
    _, ok, failed, best = session.store.progress(run.id)
    from ..units import value_unit

    best_text = "none" if best is None else f"{best:,.1f} {value_unit(run.workload, run.params)} ({run.kind})"
    excluded = session.store.excluded_count(run.id)
    print(f"run {run.id}: {ok} {run.kind} values stored ({added} new, {failed} failed), best single value "
          f"{best_text}" + (f"; {excluded} values of flagged workers kept but left out" if excluded else ""))
    from ..run_sample import describe_cost, measurement_cost

    print("cost: " + describe_cost(measurement_cost(session.store, run)))
    return 0


def _print_workers(session) -> None:
    """The per-worker table and the one-population test of a cluster run."""
    from ..machine_check import run_lines

    for line in run_lines(session.store, session.run):
        print(line)
