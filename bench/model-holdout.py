#!/usr/bin/env python3
"""bench/model-holdout.py: does a model form predict placements it was not
fitted to?  Split-half cross-validation on the measurements of one stored
`assign validate` run: the placements (its random sample and its model top)
are split at random into halves; calibrate's fit (characterize/fit.py) is run
on one half's measured medians and scored on the other's, for each form, over
`--splits` splits.  Forms: `return_ns` fitted (what calibrate writes since
2026-11-25: an R task's cost per buffer that comes back from another context)
and left out (the form before).

Nothing is measured and no calibration is replayed: every form sees the same
measurements.  A stored calibration fits 8 random placements and 3 contrasts;
a half of a validation run holds about 17, so this tells whether a form
generalises where a replayed calibration (bench/refit-calibration.py) is too
small to.

Usage (files from assign validate --json and the characterization calibrate read):
  .venv/bin/python bench/model-holdout.py --workload W --validation val-W.json \\
      --characterization char-W.json [--read raw|corrected] [--splits 4]

Printed per form: the held-out halves' median absolute error, 90th-percentile
absolute error and Spearman's rank correlation (medians over the splits;
computed from stored measurements, modelled against measured), the p90 of
each split, and the fitted return_ns of each split.
"""
from __future__ import annotations

import argparse
import json
import sys
from importlib import resources

try:
    import numpy as np

    import assign.characterize.fit as fit_mod
    from assign.commands.validate import compare
    from assign.topology import get_machine
except ImportError as e:
    sys.exit(f"bench/model-holdout.py: {e}; run it with the project's venv: .venv/bin/python "
             "bench/model-holdout.py")

FORMS = (("return_ns fitted", True), ("return_ns left out", False))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", required=True)
    ap.add_argument("--validation", required=True, metavar="FILE", help="assign validate --json file")
    ap.add_argument("--characterization", required=True, metavar="FILE",
                    help="the characterization its calibration used (assign characterize --json)")
    ap.add_argument("--read", choices=("raw", "corrected"), default="raw",
                    help="the measured medians to fit and score: raw, or drift-corrected where stored "
                         "(default raw)")
    ap.add_argument("--splits", type=int, default=4, help="random halvings, seeds 0 .. N-1 (default 4)")
    a = ap.parse_args()
    if a.splits < 1:
        ap.error(f"--splits {a.splits}: need at least 1")
    try:
        val = json.load(open(a.validation))
        char = json.load(open(a.characterization))
    except (OSError, ValueError) as e:
        sys.exit(f"bench/model-holdout.py: {e}")
    if val.get("workload") != a.workload:
        sys.exit(f"--workload {a.workload}: {a.validation} is a validation of {val.get('workload')}")
    if char.get("workload") != a.workload:
        sys.exit(f"--workload {a.workload}: {a.characterization} characterizes {char.get('workload')}")
    topo = get_machine("local")
    defaults = json.loads(resources.files("assign").joinpath("data", "model_params.json").read_text())
    rows = val["placements"] + val.get("model_top", {}).get("placements", [])
    key = "measured_reps_pps" if a.read == "raw" else "corrected_reps_pps"
    pls = [(q["instances"], tuple(q["contexts"])) for q in rows]
    measured = {p: float(np.median(q.get(key) or q["measured_reps_pps"])) for p, q in zip(pls, rows)}
    if len(measured) < 10:
        sys.exit(f"{a.validation}: {len(measured)} placements; halves of at least 5 are needed")
    print(f"{a.workload}: {len(measured)} placements of {a.validation} ({a.read} medians), {a.splits} random "
          "halvings; each form fitted on one half, scored on the other (computed from stored measurements)")
    real = fit_mod.random_placements, fit_mod.contrast_placements
    out: dict[str, list[tuple[float, float, float, float]]] = {name: [] for name, _ in FORMS}
    try:
        fit_mod.contrast_placements = lambda t, m: []
        for split in range(a.splits):
            order = np.random.default_rng(split).permutation(len(pls))
            train = [pls[i] for i in order[:len(pls) // 2]]
            test = [pls[i] for i in order[len(pls) // 2:]]
            fit_mod.random_placements = lambda *args, _t=train, **kw: list(_t)
            for name, ret in FORMS:
                doc = fit_mod.fit(topo, a.workload, char, defaults["workloads"][a.workload],
                                  lambda k, c: measured[(k, tuple(c))], len(train), log=lambda s: None,
                                  fit_return=ret)
                p = doc["workloads"][a.workload]
                f = compare(fit_mod.predict(topo, a.workload, p, test), [measured[x] for x in test])
                out[name].append((f["median_abs_err_pct"], f["p90_abs_err_pct"], f["spearman"],
                                  p.get("return_ns", 0.0)))
    finally:
        fit_mod.random_placements, fit_mod.contrast_placements = real
    print(f"{'form':20} {'median %':>8} {'p90 %':>6} {'Spearman':>8}  p90 per split; return_ns per split")
    for name, _ in FORMS:
        v = np.array(out[name])
        print(f"{name:20} {np.median(v[:, 0]):8.1f} {np.median(v[:, 1]):6.1f} {np.median(v[:, 2]):8.3f}  "
              + " ".join(f"{x:.1f}" for x in v[:, 1]) + "; " + " ".join(f"{x:.1f}" for x in v[:, 3]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
