"""`assign estimate`: the EVT analysis of a stored run or a value file."""
from __future__ import annotations

import argparse
import json

from ._args import number, positive_int
from ._runs import load_values


def register(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("estimate", help="EVT estimate of the optimum from a stored run or a value file",
                       description="Peaks-Over-Threshold: threshold u (automatic, at most 5% of the sample above "
                                   "it), GPD fit by maximum likelihood, the upper performance bound UPB and its "
                                   "profile-likelihood confidence interval, the gap of the best value to UPB.")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--db", metavar="FILE", help="SQLite results database")
    src.add_argument("--csv", metavar="FILE", help="text file, one value per line ('#' comments allowed)")
    p.add_argument("--run", type=positive_int, metavar="ID", help="run in the database")
    p.add_argument("--kind", choices=("measured", "modelled"), default="measured",
                   help="what the --csv values are, for the labels (default: measured)")
    p.add_argument("--threshold", type=number, help="threshold u (default: chosen automatically)")
    p.add_argument("--confidence", type=number, default=0.95, help="confidence level (default: 0.95)")
    p.add_argument("--cross-check", action="store_true",
                   help="also refit with scipy.stats.genpareto and say whether it agrees (imports scipy: about a "
                        "second more)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def run(args: argparse.Namespace) -> int:
    from ..evt import EstimateError, estimate

    values, label, where, excluded = load_values(args)
    try:
        est = estimate(values, threshold=args.threshold, confidence=args.confidence, cross_checks=args.cross_check)
    except EstimateError as e:
        raise EstimateError(f"cannot estimate from {where}: {e}") from None
    if args.json:
        d = est.to_dict()
        d["source"] = where
        d["value_kind"] = label
        d["excluded_flagged_values"] = excluded
        print(json.dumps(d, indent=2))
    else:
        left_out = f"; {excluded} values of cluster workers flagged as differing left out" if excluded else ""
        print(f"source: {where} ({len(values)} {label} values{left_out})")
        print(est.format_text(label))
    return 0
