#!/usr/bin/env python3
"""assign/research/refit-calibration.py: does a calibration choice help, on the same
measurements?  Refits a stored `assign calibrate --drift-reference` run with
and without its contrast placements (characterize/fit.py,
contrast_placements), and with each form of the modelled throughput (the
model's "throughput": equal-packets, what calibrate writes, instances x the
slowest instance's rate as a --packets window measures it; or sum, the
instances' rates added, the form before), with and without return_ns (what
an R task pays per buffer that comes back from another context: calibrate
fits it since 2026-11-25; the row "e-p + return_ns, transit, crowding,
span_rt AIC" is what it writes now: transit_ns, a buffer's cost each side of
the pool's common store (or on R's side only, "transit_sides": "gets", since
2026-11-26), rx_crowding, an R task's cost per R task of another instance on
its context, and span_rt, the rate factor of an instance split with R and T
on one context and P on another (since 2026-11-27), each where Akaike's
criterion keeps it),
with its context shares (calibrate --context-shares: one for every context,
the default since 2026-11-25; one per context; or Akaike's choice, the rule
before), and scores every fit on the same stored `assign validate --top K`
measurements.  The machine is the calibration file's own: a calibration made
on a test bed replays here.  Runs calibrated with `--drift-reference both` are replayed
with both references.  Nothing is measured: the machine's drift between two
calibrations (tens of percent over minutes on a shared box) would swamp the
difference a fitting choice makes.

The calibration is replayed exactly: its placements' values and the drift
reference's, in the order they were measured; without the contrasts, their
values and the references taken right after them are left out, as if they had
never been measured.  The fit with them, in the form the stored file names,
reproduces the stored calibration.

Usage (files from assign calibrate --out, assign validate --json, and the
characterization calibrate read):
  .venv/bin/python assign/research/refit-calibration.py --workload W --calibration params-W.json \\
      --validation val-W.json --characterization char-W.json

Printed per fit: the calibration placements' median error (estimated), and on
the validation's random sample the median and 90th-percentile absolute error
and Spearman's rank correlation, and the median error on its model-top
placements (computed from the stored measurements, drift-corrected).  The
top placements were chosen by the stored calibration's model, so that column
favours the fit that chose them.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from importlib import resources

try:
    import numpy as np

    import assign.characterize.fit as fit_mod
    from assign.commands.validate import compare
    from assign.topology import Node, Topology
except ImportError as e:
    sys.exit(f"assign/research/refit-calibration.py: {e}; run it with the project's venv: .venv/bin/python "
             "assign/research/refit-calibration.py")

CONTRASTS = ("fused", "crossing", "stacked")
THROUGHPUTS = ("sum", "equal-packets")


def replay(cal: dict, drop: set[str], path: str) -> tuple[Callable[[int, tuple], float], int]:
    """A measure() that returns the stored values in the order calibrate measured them,
    placements of the kinds in `drop` (and the reference right after each) left out."""
    pl = cal["placements"]
    refs = cal.get("drift", {}).get("reference", {}).get("measured_pps")
    if not refs:
        sys.exit(f"{path}: no drift reference values; replaying needs a calibration run with --drift-reference")
    # --drift-reference both: the crossing reference was measured after the fused one each time
    xrefs = cal["drift"].get("crossing_reference", {}).get("measured_pps")
    reps = len(pl[0]["measured_reps_pps"])
    n = len(pl)
    if (len(refs) != reps * (n + 1) or (xrefs is not None and len(xrefs) != len(refs))
            or any(len(q["measured_reps_pps"]) != reps for q in pl)):
        sys.exit(f"{path}: {len(refs)} reference values for {n} placements in {reps} rounds (expected "
                 f"{reps * (n + 1)}): a placement failed in some round; not replayable")
    seq: list[float] = []
    for r in range(reps):
        ref_r = refs[r * (n + 1):(r + 1) * (n + 1)]
        x_r = xrefs[r * (n + 1):(r + 1) * (n + 1)] if xrefs is not None else None
        seq += [ref_r[0]] + ([x_r[0]] if x_r else [])
        for j, q in enumerate(pl):
            if q.get("kind", "random") not in drop:
                seq += [q["measured_reps_pps"][r], ref_r[j + 1]] + ([x_r[j + 1]] if x_r else [])
    it = iter(seq)
    return (lambda k, ctx: next(it)), reps


def score(topo, workload: str, params: dict, placements: list[dict]) -> tuple[float, float, float]:
    """validate's figures (its compare()) for the stored placements, drift-corrected where stored."""
    pls = [(q["instances"], tuple(q["contexts"])) for q in placements]
    meas = [float(np.median(q.get("corrected_reps_pps") or q["measured_reps_pps"])) for q in placements]
    f = compare(fit_mod.predict(topo, workload, params, pls), meas)
    return f["median_abs_err_pct"], f["p90_abs_err_pct"], f["spearman"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", required=True)
    ap.add_argument("--calibration", required=True, metavar="FILE", help="assign calibrate --out file")
    ap.add_argument("--validation", required=True, metavar="FILE", help="assign validate --json file")
    ap.add_argument("--characterization", required=True, metavar="FILE",
                    help="the characterization the calibration used (assign characterize --json)")
    a = ap.parse_args()
    try:
        doc = json.load(open(a.calibration))
        val = json.load(open(a.validation))
        char = json.load(open(a.characterization))
    except (OSError, ValueError) as e:
        sys.exit(f"assign/research/refit-calibration.py: {e}")
    cal = doc["calibration"]
    # the machine the calibration measured, whichever runs this
    topo = Topology("local", "the calibration's machine (hwloc)", Node.from_json(doc["calibrated_for"]["machine"]))
    max_instances = int(cal.get("max_instances", 4))
    if doc["calibrated_for"]["workload"] != a.workload or val.get("workload") != a.workload:
        sys.exit(f"--workload {a.workload}: the calibration is for {doc['calibrated_for']['workload']}, "
                 f"the validation for {val.get('workload')}")
    if char.get("workload") != a.workload:
        sys.exit(f"--workload {a.workload}: {a.characterization} characterizes {char.get('workload')}")
    drift = "both" if "crossing_reference" in cal.get("drift", {}) else True
    kinds = {q.get("kind", "random") for q in cal["placements"]}
    n_random = sum(q.get("kind", "random") == "random" for q in cal["placements"])
    defaults = json.loads(resources.files("assign").joinpath("data", "model_params.json").read_text())
    top = val.get("model_top", {}).get("placements", [])
    stored = doc["workloads"][a.workload].get("throughput", "sum")
    fits = [(f"random only, {tp}", set(CONTRASTS), tp, False, "one", False, False, False) for tp in THROUGHPUTS]
    if kinds & set(CONTRASTS):
        fits += [(f"+ contrasts, {tp}", set(), tp, False, "one", False, False, False) for tp in THROUGHPUTS]
    # equal packets and return_ns, with the contrasts where measured, one share for every context;
    # then its context shares per context, and as Akaike's criterion chose; then one share with
    # transit_ns where Akaike's criterion keeps it, then rx_crowding too, and last, what calibrate
    # writes now: span_rt too
    last = fits[-1][1]
    now = f"{'random only' if last else '+ contrasts'}, e-p + return_ns"
    fits += [(f"{now}{tail}", last, "equal-packets", True, shares, transit, crowding, span_rt)
             for tail, shares, transit, crowding, span_rt in (
                 ("", "one", False, False, False), (", shares/ctx", "per-context", False, False, False),
                 (", shares AIC", "choose", False, False, False), (", transit AIC", "one", "choose", False, False),
                 (", transit, crowding AIC", "one", "choose", "choose", False),
                 (", transit, crowding, span_rt AIC", "one", "choose", "choose", "choose"))]
    print(f"{a.workload}: {n_random} random calibration placements, contrasts: "
          f"{', '.join(sorted(kinds & set(CONTRASTS))) or 'none'}; validation n {len(val['placements'])}, "
          f"model top {len(top)} (refitted from stored measurements; errors computed, drift-corrected); "
          f"the stored calibration's throughput: {stored}")
    print(f"{'fit':60} {'cal err %':>9} {'val median %':>12} {'val p90 %':>9} {'Spearman':>8} {'top median %':>12}")
    real = fit_mod.contrast_placements
    try:
        for label, drop, tp, ret, shares, transit, crowding, span_rt in fits:
            fit_mod.contrast_placements = (lambda t, m: []) if drop else real
            measure, reps = replay(cal, drop, a.calibration)
            out = fit_mod.fit(topo, a.workload, char, defaults["workloads"][a.workload], measure, n_random,
                              log=lambda s: None, reps=reps, drift_reference=drift, throughput=tp,
                              fit_return=ret, max_instances=max_instances, context_shares=shares,
                              fit_transit=transit, fit_crowding=crowding, fit_span_rt=span_rt)
            got = [(q["instances"], tuple(q["contexts"])) for q in out["calibration"]["placements"]]
            want = [(q["instances"], tuple(q["contexts"])) for q in cal["placements"]
                    if q.get("kind", "random") not in drop]
            if got != want:
                sys.exit(f"{a.calibration}: its placements are not the ones calibrate draws on this machine "
                         "(another machine, seed or version): not replayable")
            p = out["workloads"][a.workload]
            med, p90, rho = score(topo, a.workload, p, val["placements"])
            tmed = score(topo, a.workload, p, top)[0] if top else float("nan")
            print(f"{label:60} {out['calibration']['median_abs_err_pct']:9.1f} {med:12.1f} {p90:9.1f} "
                  f"{rho:8.3f} {tmed:12.1f}")
    finally:
        fit_mod.contrast_placements = real
    return 0


if __name__ == "__main__":
    sys.exit(main())
