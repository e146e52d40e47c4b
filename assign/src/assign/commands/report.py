"""`assign report`: figures (PNG and SVG) and a one-page HTML summary of a run."""
from __future__ import annotations

import argparse
import json
import os

from ._args import number, output_dir
from ._options import add_db
from ._runs import run_values


def register(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("report", help="figures (PNG and SVG) and a one-page HTML summary of a run")
    add_db(p)
    p.add_argument("--out", required=True, type=output_dir, metavar="DIR", help="directory for the files")
    p.add_argument("--threshold", type=number, help="threshold u (default: chosen automatically)")
    p.add_argument("--confidence", type=number, default=0.95, help="confidence level (default: 0.95)")
    return p


def run(args: argparse.Namespace) -> int:
    from ..baselines import scored
    from ..evt import EstimateError, estimate
    from ..machine_check import run_lines
    from ..report import ReportInput, build
    from ..store import Store
    from ..units import value_unit

    from .estimate import optimum_section

    with Store(args.db) as store:
        run, values = run_values(store, args)
        try:
            est = estimate(values, threshold=args.threshold, confidence=args.confidence)
        except EstimateError:
            est = None
        baselines = scored(store, run, values, est, args.confidence)
        failures = store.failures(run.id)
        excluded = store.excluded_count(run.id)
        workers = run_lines(store, run)
    facts = [
        ("sample", run.label()),
        ("database", os.path.abspath(args.db)),
        ("machine", f"{run.machine}"),
        ("backend", f"{run.backend} ({run.kind}) {json.dumps(run.params)}"),
        ("values", f"{len(values)} {run.kind}, {len(failures)} failed measurements (not counted)"
                   + (f", {excluded} values of cluster workers flagged as differing (left out)" if excluded
                      else "")),
    ]
    args.sitting = None
    optimum = optimum_section(args, values)
    out = build(ReportInput(f"assign report: {run.workload} x{run.instances} on {run.machine} ({run.kind})",
                            run.kind, values, args.confidence, args.threshold, baselines, facts, workers,
                            optimum["text"], optimum, value_unit(run.workload, run.params)),
                args.out)
    for line in optimum["text"]:
        print(line)
    for line in workers:
        print(line)
    if est is None:
        print(out.estimate_text)
    print(f"report: {os.path.abspath(out.html)}")
    print(f"figures ({len(out.figures)}, PNG and SVG) in {os.path.abspath(args.out)}:")
    for p in out.figures:
        print(f"  {os.path.basename(p)}")
    for s in out.skipped:
        print(f"  not drawn: {s}")
    return 0
