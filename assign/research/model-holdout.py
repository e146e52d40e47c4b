#!/usr/bin/env python3
"""assign/research/model-holdout.py: does a model form predict placements it was not
fitted to, and how many calibration placements does it need?  Cross-
validation on the measurements of one stored `assign validate` run: the
placements (its random sample and its model top) are split at random into a
training set of N and a test set of the rest; calibrate's fit
(characterize/fit.py) is run on the training set's measured medians and
scored on the test set, for each form, over `--splits` splits and each N of
`--train` (default: halves).  Forms: `return_ns` fitted (an R task's cost
per buffer that comes back from another context, calibrate fits it since
2026-11-25), `transit_ns` beside it where Akaike's criterion keeps it
(what a buffer costs each side when it crosses the pool's common store),
`rx_crowding` too (an R task's cost per R task of another instance on its
context), `span_rt` too (the rate factor of an instance split with R and T
on one context and P on another; with all three, what calibrate writes),
and neither.

Nothing is measured and no calibration is replayed: every form sees the same
measurements.  A stored calibration fits its random placements (calibrate
--placements: 24 by default, 8 before 2026-11-25) and 3 contrasts;
`--train 8,16,24` shows what more of them buy, where a replayed
calibration (assign/research/refit-calibration.py) is too small to.

Usage (files from assign validate --json and the characterization calibrate read):
  .venv/bin/python assign/research/model-holdout.py --workload W --validation val-W.json \\
      --characterization char-W.json [--read raw|corrected] [--splits 4] [--train 8,16]

Printed per training size and form: the held-out placements' median absolute
error, 90th-percentile absolute error and Spearman's rank correlation
(medians over the splits; computed from stored measurements, modelled
against measured), the p90 of each split, and the fitted return_ns and
transit_ns, rx_crowding and span_rt of each split.
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
    sys.exit(f"assign/research/model-holdout.py: {e}; run it with the project's venv: .venv/bin/python "
             "assign/research/model-holdout.py")

# name, return_ns fitted, transit_ns, rx_crowding and span_rt fitted ("choose": where Akaike's
# criterion keeps it)
FORMS = (("return_ns", True, False, False, False), ("+ transit_ns by AIC", True, "choose", False, False),
         ("+ rx_crowding by AIC", True, "choose", "choose", False),
         ("+ span_rt by AIC", True, "choose", "choose", "choose"), ("neither", False, False, False, False))


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
    ap.add_argument("--splits", type=int, default=4, help="random splits per training size, seeds 0 .. N-1 "
                                                          "(default 4)")
    ap.add_argument("--train", metavar="N[,N...]", help="training set sizes (default: half the placements)")
    a = ap.parse_args()
    if a.splits < 1:
        ap.error(f"--splits {a.splits}: need at least 1")
    try:
        sizes = [int(x) for x in a.train.split(",")] if a.train else None
    except ValueError:
        ap.error(f"--train {a.train!r}: expected sizes like 8,12,16")
    try:
        val = json.load(open(a.validation))
        char = json.load(open(a.characterization))
    except (OSError, ValueError) as e:
        sys.exit(f"assign/research/model-holdout.py: {e}")
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
    sizes = sizes or [len(measured) // 2]
    for n in sizes:
        if not 3 <= n <= len(measured) - 5:
            sys.exit(f"--train {n}: {a.validation} has {len(measured)} placements; a training set needs at "
                     f"least 3 and the test set at least 5")
    print(f"{a.workload}: {len(measured)} placements of {a.validation} ({a.read} medians), {a.splits} random "
          f"splits per training size; each form fitted on the training set, scored on the rest (computed "
          "from stored measurements)")
    real = fit_mod.random_placements, fit_mod.contrast_placements
    print(f"{'train':>5} {'form':24} {'median %':>8} {'p90 %':>6} {'Spearman':>8}  p90 per split; "
          "return_ns / transit_ns / rx_crowding / span_rt (span_factor where left out) per split")
    try:
        fit_mod.contrast_placements = lambda t, m: []
        for n in sizes:
            out: dict[str, list[tuple[float, ...]]] = {name: [] for name, *_ in FORMS}
            for split in range(a.splits):
                order = np.random.default_rng(split).permutation(len(pls))
                train = [pls[i] for i in order[:n]]
                test = [pls[i] for i in order[n:]]
                fit_mod.random_placements = lambda *args, _t=train, **kw: list(_t)
                for name, ret, transit, crowding, span_rt in FORMS:
                    doc = fit_mod.fit(topo, a.workload, char, defaults["workloads"][a.workload],
                                      lambda k, c: measured[(k, tuple(c))], len(train), log=lambda s: None,
                                      fit_return=ret, fit_transit=transit, fit_crowding=crowding,
                                      fit_span_rt=span_rt)
                    p = doc["workloads"][a.workload]
                    f = compare(fit_mod.predict(topo, a.workload, p, test), [measured[x] for x in test])
                    out[name].append((f["median_abs_err_pct"], f["p90_abs_err_pct"], f["spearman"],
                                      p.get("return_ns", 0.0), p.get("transit_ns", 0.0),
                                      p.get("rx_crowding", 0.0), p.get("span_rt", p.get("span_factor", 1.0))))
            for name, *_ in FORMS:
                v = np.array(out[name])
                print(f"{n:5d} {name:24} {np.median(v[:, 0]):8.1f} {np.median(v[:, 1]):6.1f} "
                      f"{np.median(v[:, 2]):8.3f}  " + " ".join(f"{x:.1f}" for x in v[:, 1]) + "; "
                      + " ".join(f"{x:.1f}/{y:.1f}/{z:.2f}/{w:.2f}" for x, y, z, w in v[:, 3:7]), flush=True)
    finally:
        fit_mod.random_placements, fit_mod.contrast_placements = real
    return 0


if __name__ == "__main__":
    sys.exit(main())
