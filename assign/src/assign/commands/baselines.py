"""`assign baselines`: naive, Linux-like (and, --measured, one-core)
assignments against the estimated optimum (assign/baselines.py).

Without --measured: Linux-like evaluated once by the run's backend (measured
or modelled), naive, best found, the placement `assign best` chose, the
optimum of placement means and the paper's UPB; every gap is to the optimum
of means (to the paper's UPB only while the run's noise is not measured).  With --measured (alias `assign
compare`): a dpdk run's Linux-like and one-core assignments measured --reps
times with the run's own protocol, each with its gap to the optimum, and the
paper's Figure 1 with --plot.
"""
from __future__ import annotations

import argparse
import json

from ._args import figure_file, number, positive_int
from ._options import RUNNERS, add_db
from ._save import save_figure

MEASURED_DESCRIPTION = """\
Baselines measured with a dpdk run's own protocol, each with its gap to the
optimum of placement means estimated from the run (the paper's Figure 1:
naive and Linux-like assignments against the optimal performance).

  naive (random)   the mean of the run's random assignments (measured)
  Linux-like       tasks spread evenly, cores first
  one core         the three stages of each instance kept on one core
                   (instance i on core i mod cores, one stage per context of
                   that core, sharing a context when the core has fewer)
  best found       the best single value of the sample (one measurement)
  chosen placement the placement `assign best` chose: its mean (measured)
  optimum of means the estimated optimum of placement means, its interval
  UPB              the paper's estimate from single values, for comparison

Linux-like and one-core are measured --reps times; their mean is stored in
the run's baselines (names "compare:...") with every value, and reused on
the next call, so nothing is measured twice or lost.
"""


def add_measured_options(p: argparse.ArgumentParser) -> None:
    """What --measured (and `compare`) take beyond --db/--run/--confidence."""
    p.add_argument("--reps", type=positive_int, default=None,
                   help="measurements of each baseline (default: 5)")
    p.add_argument("--plot", type=figure_file, metavar="FILE", help="bar chart like the paper's Figure 1 (.png or .svg)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    g = p.add_argument_group("dpdk backend (the window, warm-up and traffic are the run's)")
    g.add_argument("--build", metavar="DIR", help="Meson build with the apps (default: $PIPEPLACE_BUILD or build/)")
    g.add_argument("--runner", choices=RUNNERS, default=None, help="serve or process (default: auto)")
    g.add_argument("--timeout", type=float, metavar="S", help="per attempt (default: from the window)")


def register(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("baselines", help="naive and Linux-like assignments, scored by the run's backend "
                                         "(--measured: and one-core, measured --reps times, as the paper's Figure 1)",
                       description=__doc__.split("\n\n", 1)[1].strip() + "\n\n--measured:\n" + MEASURED_DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_db(p)
    p.add_argument("--confidence", type=number, default=0.95, help="confidence level (default: 0.95)")
    p.add_argument("--measured", action="store_true",
                   help="measure Linux-like and one-core --reps times with the run's dpdk protocol (alias: compare)")
    add_measured_options(p)
    return p


def run(args: argparse.Namespace) -> int:
    if getattr(args, "measured", False) or args.command == "compare":
        return run_measured(args)
    for opt in ("reps", "plot", "json", "build", "runner", "timeout"):
        if getattr(args, opt, None) not in (None, False):
            raise ValueError(f"--{opt} goes with --measured (baselines measured --reps times on a dpdk run)")
    from ..baselines import scored
    from ..evt import EstimateError, estimate
    from ..store import Store
    from ..units import value_unit
    from ._runs import run_values

    with Store(args.db) as store:
        run_, values = run_values(store, args)
        try:
            est = estimate(values, confidence=args.confidence)
        except EstimateError as e:
            est = None
            print(f"no EVT estimate ({e}); gaps to UPB not shown")
        print(run_.label())
        for b in scored(store, run_, values, est, args.confidence):
            v = "n/a" if b.value is None else f"{b.value:,.1f}"
            print(f"  {b.name:28s} {v:>16s} {value_unit(run_.workload, run_.params)} ({b.label})  {b.note}")
    return 0


def run_measured(args: argparse.Namespace) -> int:
    from ..baselines import measured
    from ..evt import EstimateError, estimate
    from ..store import Store

    with Store(args.db) as store:
        run_ = store.run(args.run)
        if run_.backend != "dpdk":
            raise ValueError(f"{args.db} {run_.label()}: compare measures baselines with the run's dpdk protocol; "
                             f"this run's backend is {run_.backend} (use `assign baselines`)")
        values = store.values(run_.id)
        if not values:
            raise ValueError(f"{args.db} run {run_.id} holds no successful measurements yet")
        try:
            est = estimate(values, confidence=args.confidence)
            est_note = None
        except EstimateError as e:
            est, est_note = None, str(e)
        bars = measured(store, run_, values, est, args.confidence, args.reps or 5, args.build,
                        args.runner or "auto", args.timeout)
    from ..baselines import OPTIMUM, gap_words
    from ..units import value_unit

    ref_bar = next((b for b in bars if b.name == OPTIMUM), None)
    ref_name = "the optimum of means" if ref_bar is not None else "the paper's UPB"
    # the figures first, the drawing after: a figure that cannot be written loses nothing measured
    if args.json:
        print(json.dumps({"run": run_.id, "bars": [b.to_dict() for b in bars],
                          "estimate": est.to_dict() if est is not None else None, "estimate_error": est_note},
                         indent=2, default=str))
    else:
        print(run_.label())
        if all(b.gap_pct is None for b in bars):
            print(f"no estimate of the optimum ({est_note or 'the noise is not measured'}); gaps not shown")
        for b in bars:
            v = "n/a" if b.value is None else f"{b.value:,.0f}"
            sd = f" +- {b.sd:,.0f}" if b.sd is not None and b.sd == b.sd else ""
            ci = ""
            if b.ci is not None and b.ci[0] is not None:
                ci = f" [{b.ci[0]:,.0f}, {'inf' if b.ci[1] is None or b.ci[1] == float('inf') else f'{b.ci[1]:,.0f}'}]"
            gap = gap_words(b.gap_pct, ref_name)
            print(f"  {b.name:28s} {v:>14s}{sd}{ci} {value_unit(run_.workload, run_.params)} ({b.label}): "
                  f"{b.note}{gap}")
    if args.plot:
        if not save_figure(lambda path: _plot(bars, path, f"{run_.workload} x{run_.instances} on {run_.machine}",
                                              est, value_unit(run_.workload, run_.params)), args.plot):
            return 1
        if not args.json:
            print(f"figure: {args.plot}")
    return 0


def _plot(bars, path: str, title: str, est, unit: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .. import figures

    fig, ax = plt.subplots(figsize=(7, 4))
    figures.baselines(ax, bars, title, est, unit)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
