"""`assign compare`: an alias of `assign baselines --measured` (baselines
measured with a dpdk run's own protocol against the estimated optimum, the
paper's Figure 1)."""
from __future__ import annotations

import argparse

from ._args import number, positive_int
from .baselines import MEASURED_DESCRIPTION, add_measured_options, run_measured


def register(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("compare", help="naive, Linux-like and one-core baselines vs the estimated optimum "
                                       "(dpdk run, as the paper's Figure 1; alias of baselines --measured)",
                       description=MEASURED_DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--db", required=True, metavar="FILE", help="SQLite results database of a dpdk run")
    p.add_argument("--run", type=positive_int, metavar="ID", help="run in the database (needed when it holds several)")
    p.add_argument("--confidence", type=number, default=0.95, help="confidence level (default: 0.95)")
    add_measured_options(p)
    return p


def run(args: argparse.Namespace) -> int:
    return run_measured(args)
